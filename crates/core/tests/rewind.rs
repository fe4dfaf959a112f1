//! Backtracking to just before a prompt: the conversation as a new thread version that
//! `/rollback` leaves again, the files through the checked restore only when asked, and
//! an edit made by hand kept in the restore's safety snapshot.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use atto_core::{AgentHandle, Limits};
use atto_protocol::{Event, Op, PromptInfo, RewindScope};
use atto_tools::ToolRegistry;
use common::*;
use serde_json::json;

/// A session with a store and checkpoints, after two turns: the first writes `a.txt`
/// "one", the second "two" and creates `b.txt`.
struct Two {
    f: Fixture,
    _data: tempfile::TempDir,
    handle: AgentHandle,
}

async fn two_turns() -> Two {
    let write = |path: &str, content: &str| {
        calls(vec![call(
            "write_file",
            json!({"path": path, "content": content}),
        )])
    };
    let f = fixture(vec![
        write("a.txt", "one\n"),
        text("wrote one"),
        calls(vec![
            call("write_file", json!({"path": "a.txt", "content": "two\n"})),
            call("write_file", json!({"path": "b.txt", "content": "new\n"})),
        ]),
        text("wrote two"),
    ])
    .await;
    let data = tempfile::tempdir().unwrap();
    let store = atto_store::Store::open(&data.path().join("atto.db")).unwrap();
    let checkpoints = atto_checkpoint::Checkpoints::open(
        data.path(),
        &f.workspace,
        atto_checkpoint::Limits::default(),
    )
    .unwrap()
    .for_session("test");
    let yolo = atto_policy::gate::PermissionSetting {
        mode: atto_protocol::PermissionMode::Yolo,
        deny_asks: false,
    };
    let mut options = options(
        &f,
        ToolRegistry::builtin(),
        Limits::default(),
        yolo,
        Vec::new(),
    );
    options.store = Some(store);
    options.checkpoints = Some(Arc::new(checkpoints));
    let mut handle = atto_core::spawn_session(options);
    for prompt in ["first", "second"] {
        handle
            .submit(Op::UserInput {
                text: prompt.into(),
            })
            .unwrap();
        turn_events(&mut handle).await;
    }
    Two {
        f,
        _data: data,
        handle,
    }
}

/// Events up to the first `pick` returns something for.
async fn until<T>(handle: &mut AgentHandle, pick: impl Fn(&Event) -> Option<T>) -> T {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), handle.next_event())
            .await
            .expect("no event within 30 s")
            .expect("session ended early");
        assert!(
            !matches!(event, Event::Error { .. }),
            "unexpected error: {event:?}"
        );
        if let Some(found) = pick(&event) {
            return found;
        }
    }
}

async fn prompts(handle: &mut AgentHandle) -> Vec<PromptInfo> {
    handle.submit(Op::ListPrompts).unwrap();
    until(handle, |e| match e {
        Event::PromptList { prompts } => Some(prompts.clone()),
        _ => None,
    })
    .await
}

async fn rewind(handle: &mut AgentHandle, prompt: u32, scope: RewindScope) -> (String, Vec<Event>) {
    handle.submit(Op::Rewind { prompt, scope }).unwrap();
    let mut seen = Vec::new();
    loop {
        let event = until(handle, |e| Some(e.clone())).await;
        if let Event::Rewound { text, .. } = &event {
            return (text.clone(), seen);
        }
        seen.push(event);
    }
}

fn read(f: &Fixture, path: &str) -> Option<String> {
    std::fs::read_to_string(f.workspace.join(path)).ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conversation_goes_back_as_a_new_version_and_rollback_returns_to_the_old() {
    // The data directory lives as long as the test.
    let Two {
        f,
        _data: _kept,
        mut handle,
    } = two_turns().await;
    let listed = prompts(&mut handle).await;
    let texts: Vec<&str> = listed.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(texts, ["first", "second"]);
    assert!(listed.iter().all(|p| p.checkpoint.is_some()), "{listed:?}");

    let (text, seen) = rewind(&mut handle, 2, RewindScope::Conversation).await;
    assert_eq!(text, "second");
    let switched = seen.iter().find_map(|e| match e {
        Event::ThreadSwitched { thread } => Some(thread.clone()),
        _ => None,
    });
    let thread = switched.expect("the rewind switches to a new thread version");
    assert_eq!(thread.parent.as_deref(), Some("main"));
    // The first prompt, the call, its result and the answer.
    assert_eq!(thread.messages, 4, "the first prompt's exchange stays");
    assert!(
        !seen.iter().any(|e| matches!(e, Event::Restored { .. })),
        "the conversation alone leaves the files: {seen:?}"
    );
    assert_eq!(read(&f, "a.txt").as_deref(), Some("two\n"));
    assert_eq!(read(&f, "b.txt").as_deref(), Some("new\n"));
    let texts: Vec<String> = prompts(&mut handle)
        .await
        .into_iter()
        .map(|p| p.text)
        .collect();
    assert_eq!(texts, ["first"]);

    handle.submit(Op::Rollback).unwrap();
    let back = until(&mut handle, |e| match e {
        Event::ThreadSwitched { thread } => Some(thread.clone()),
        _ => None,
    })
    .await;
    assert_eq!(
        back.id, "main",
        "rollback returns to the conversation rewound from"
    );
    let texts: Vec<String> = prompts(&mut handle)
        .await
        .into_iter()
        .map(|p| p.text)
        .collect();
    assert_eq!(texts, ["first", "second"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_puts_the_files_back_and_a_hand_edit_stays_in_the_safety_snapshot() {
    // The data directory lives as long as the test.
    let Two {
        f,
        _data: _kept,
        mut handle,
    } = two_turns().await;
    // Edits made by hand after the second turn, not by atto.
    std::fs::write(f.workspace.join("a.txt"), "two, then mine\n").unwrap();
    std::fs::write(f.workspace.join("notes.txt"), "mine\n").unwrap();

    let (text, seen) = rewind(&mut handle, 2, RewindScope::Both).await;
    assert_eq!(text, "second");
    assert_eq!(read(&f, "a.txt").as_deref(), Some("one\n"));
    assert_eq!(read(&f, "b.txt"), None, "created by the second prompt");
    let safety = seen
        .iter()
        .find_map(|e| match e {
            Event::Restored {
                safety_checkpoint, ..
            } => Some(*safety_checkpoint),
            _ => None,
        })
        .expect("the files are restored");
    assert!(
        seen.iter()
            .any(|e| matches!(e, Event::ThreadSwitched { .. }))
    );
    assert_eq!(prompts(&mut handle).await.len(), 1);

    handle.submit(Op::RestoreCheckpoint { id: safety }).unwrap();
    until(&mut handle, |e| {
        matches!(e, Event::Restored { .. }).then_some(())
    })
    .await;
    assert_eq!(read(&f, "a.txt").as_deref(), Some("two, then mine\n"));
    assert_eq!(read(&f, "notes.txt").as_deref(), Some("mine\n"));
    assert_eq!(read(&f, "b.txt").as_deref(), Some("new\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_puts_the_files_back_and_keeps_the_conversation() {
    // The data directory lives as long as the test.
    let Two {
        f,
        _data: _kept,
        mut handle,
    } = two_turns().await;
    let (_, seen) = rewind(&mut handle, 2, RewindScope::Code).await;
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e, Event::ThreadSwitched { .. })),
        "{seen:?}"
    );
    assert_eq!(read(&f, "a.txt").as_deref(), Some("one\n"));
    assert_eq!(read(&f, "b.txt"), None);
    assert_eq!(prompts(&mut handle).await.len(), 2);

    // Back to before the first prompt: a.txt did not exist yet.
    rewind(&mut handle, 1, RewindScope::Code).await;
    assert_eq!(read(&f, "a.txt"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_that_is_not_there_changes_nothing() {
    // The data directory lives as long as the test.
    let Two {
        f,
        _data: _kept,
        mut handle,
    } = two_turns().await;
    handle
        .submit(Op::Rewind {
            prompt: 3,
            scope: RewindScope::Both,
        })
        .unwrap();
    let message = loop {
        let event = tokio::time::timeout(Duration::from_secs(30), handle.next_event())
            .await
            .expect("no event within 30 s")
            .expect("session ended early");
        if let Event::Error { message } = event {
            break message;
        }
    };
    assert!(message.contains("no prompt 3"), "{message}");
    assert_eq!(read(&f, "a.txt").as_deref(), Some("two\n"));
    assert_eq!(prompts(&mut handle).await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_compaction_code_still_goes_back_to_before_the_prompt() {
    // The data directory lives as long as the test.
    let Two {
        f,
        _data: _kept,
        mut handle,
    } = two_turns().await;
    // The compaction copies the prompts it keeps into a new thread version later than
    // every checkpoint of the two turns.
    tokio::time::sleep(Duration::from_millis(20)).await;
    handle.submit(Op::Compact { focus: None }).unwrap();
    until(&mut handle, |e| {
        matches!(e, Event::ContextCompacted(_)).then_some(())
    })
    .await;
    let listed = prompts(&mut handle).await;
    let texts: Vec<&str> = listed.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(
        texts,
        ["first", "second"],
        "the compaction kept both prompts"
    );

    rewind(&mut handle, 2, RewindScope::Code).await;
    assert_eq!(
        read(&f, "a.txt").as_deref(),
        Some("one\n"),
        "the files as they were before the second prompt, not at the compaction"
    );
    assert_eq!(read(&f, "b.txt"), None);
}
