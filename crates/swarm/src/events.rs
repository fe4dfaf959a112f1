//! What a swarm reports as it runs and what the front end answers: protocol types, since
//! every front end and the stream-json wire speak them.

pub use atto_protocol::swarm::{SwarmEvent, SwarmInput};
