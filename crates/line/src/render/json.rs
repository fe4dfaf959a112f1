//! What a program reads: one stream-json line per event and the final `result` object,
//! each with the schema tags first.

use atto_protocol::{EVENT_SCHEMA, EVENT_SCHEMA_VERSION, Event, FinalResult};
use serde_json::Value;

/// One stream-json line for an event: the event's own fields plus the schema tags.
pub fn event_json(event: &Event) -> String {
    let value = serde_json::to_value(event).unwrap_or(Value::Null);
    tagged(value)
}

/// The final `result` object of a headless run.
pub fn result_json(session_id: &str, turns: u32, result: &FinalResult) -> String {
    let mut value = serde_json::to_value(result).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.insert("type".into(), Value::from("result"));
        map.insert("session_id".into(), Value::from(session_id));
        map.insert("turns".into(), Value::from(turns));
    }
    tagged(value)
}

/// `{"type":…,"schema":…,"schema_version":…, <the other fields>}`: the tags first, so a
/// reader can dispatch on the start of the line.
pub fn tagged(value: Value) -> String {
    let Value::Object(mut map) = value else {
        return Value::Null.to_string();
    };
    let kind = map.remove("type").unwrap_or(Value::Null);
    let mut line = format!(
        "{{\"type\":{kind},\"schema\":{},\"schema_version\":{EVENT_SCHEMA_VERSION}",
        Value::from(EVENT_SCHEMA)
    );
    for (key, value) in map {
        line.push(',');
        line.push_str(&Value::from(key).to_string());
        line.push(':');
        line.push_str(&value.to_string());
    }
    line.push('}');
    line
}
