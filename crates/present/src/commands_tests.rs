//! The slash-command parser, table by table: each command line and the op or error it
//! gives.

use super::*;
use atto_protocol::ReasoningEffort;

#[test]
fn planner_commands_parse() {
    let state = State::default();
    assert_eq!(
        parse("/auto \"Build a REST API\"", &state),
        Ok(Command::Op(Op::AutoPlan {
            task: "Build a REST API".into()
        }))
    );
    assert!(parse("/auto", &state).is_err());
    assert_eq!(
        parse("/auto-rollback off", &state),
        Ok(Command::Op(Op::PlannerSettings {
            auto_rollback_on_failure: Some(false),
            detect: None,
            threshold: None,
            parallel: None
        }))
    );
    assert_eq!(
        parse("/auto-parallel on", &state),
        Ok(Command::Op(Op::PlannerSettings {
            auto_rollback_on_failure: None,
            detect: None,
            threshold: None,
            parallel: Some(true)
        }))
    );
    assert_eq!(
        parse("/auto-parallel off", &state),
        Ok(Command::Op(Op::PlannerSettings {
            auto_rollback_on_failure: None,
            detect: None,
            threshold: None,
            parallel: Some(false)
        }))
    );
    assert!(parse("/auto-parallel", &state).is_err());
    assert!(parse("/auto-parallel on now", &state).is_err());
    assert_eq!(
        parse("/auto-plan on 2", &state),
        Ok(Command::Op(Op::PlannerSettings {
            auto_rollback_on_failure: None,
            detect: Some(true),
            threshold: Some(2.0),
            parallel: None
        }))
    );
    assert!(parse("/auto-plan on x", &state).is_err());
    assert!(parse("/auto-rollback maybe", &state).is_err());
}

#[test]
fn commands_parse_into_ops() {
    assert_eq!(
        parse("/grants", &State::default()),
        Ok(Command::Op(Op::ListGrants))
    );
    assert_eq!(
        parse("/grants revoke 3", &State::default()),
        Ok(Command::Op(Op::RevokeGrant { number: 3 }))
    );
    assert_eq!(
        parse("/trust", &State::default()),
        Ok(Command::Op(Op::SetTrust { on: true }))
    );
    assert_eq!(
        parse(
            "/trust off",
            &State {
                trust: true,
                ..State::default()
            }
        ),
        Ok(Command::Op(Op::SetTrust { on: false }))
    );
    assert_eq!(parse("/quit", &State::default()), Ok(Command::Exit));
    assert_eq!(
        parse("/fork \"Try React\"", &State::default()),
        Ok(Command::Op(Op::Fork {
            label: Some("Try React".into())
        }))
    );
    assert_eq!(
        parse("/switch fork-a1", &State::default()),
        Ok(Command::Op(Op::SwitchThread {
            id: "fork-a1".into()
        }))
    );
    assert!(parse("/switch", &State::default()).is_err());
    assert_eq!(
        parse("/switch \"Try React approach\"", &State::default()),
        Ok(Command::Op(Op::SwitchThread {
            id: "Try React approach".into()
        }))
    );
}

#[test]
fn bad_input_is_one_line_and_suggests() {
    let err = parse("/grnts", &State::default()).unwrap_err();
    assert!(err.contains("did you mean /grants"), "{err}");
    assert!(
        parse("/grants revoke x", &State::default())
            .unwrap_err()
            .contains("'x'")
    );
    assert!(parse("/grants revoke 0", &State::default()).is_err());
    assert!(
        parse("/zzzzzz", &State::default())
            .unwrap_err()
            .contains("/help")
    );
    assert!(help().contains("/grants revoke N"));
}

#[test]
fn modes_and_plan_commands() {
    let build = State::default();
    let plan = State {
        mode: AgentMode::Plan,
        ..State::default()
    };
    let set = |mode, permission| Ok(Command::Op(Op::SetMode { mode, permission }));
    assert_eq!(parse("/mode plan", &build), set(AgentMode::Plan, None));
    assert_eq!(parse("/mode agent", &build), set(AgentMode::Build, None));
    assert_eq!(parse("/mode 1", &build), set(AgentMode::Plan, None));
    assert_eq!(
        parse("/mode yolo", &build),
        set(AgentMode::Build, Some(PermissionMode::Yolo))
    );
    assert_eq!(parse("/plan", &build), set(AgentMode::Plan, None));
    assert_eq!(parse("/plan", &plan), set(AgentMode::Build, None));
    assert!(
        parse("/mode nonsense", &build)
            .unwrap_err()
            .contains("unknown mode 'nonsense'")
    );
    assert_eq!(parse("/show-plan", &plan), Ok(Command::Op(Op::ShowPlan)));
    let approve = |selection| Ok(Command::Op(Op::ApprovePlan { selection }));
    assert_eq!(parse("/approve", &plan), approve(PlanSelection::All));
    assert_eq!(
        parse("/approve 2", &plan),
        approve(PlanSelection::First { n: 2 })
    );
    assert_eq!(
        parse("/approve 2,4", &plan),
        approve(PlanSelection::Picks { orders: vec![2, 4] })
    );
    assert_eq!(
        parse("/approve 1,3-5", &plan),
        approve(PlanSelection::Picks {
            orders: vec![1, 3, 4, 5]
        })
    );
    assert!(parse("/approve x", &plan).unwrap_err().contains("'x'"));
    assert!(parse("/approve 0", &plan).is_err());
    assert!(parse("/approve 5-3", &plan).is_err());
    let reject = |selection, reason: Option<&str>| {
        Ok(Command::Op(Op::RejectPlan {
            selection,
            reason: reason.map(str::to_owned),
        }))
    };
    assert_eq!(parse("/reject", &plan), reject(PlanSelection::All, None));
    assert_eq!(
        parse("/reject 3", &plan),
        reject(PlanSelection::Picks { orders: vec![3] }, None)
    );
    assert_eq!(
        parse("/reject 2,4 use the helper instead", &plan),
        reject(
            PlanSelection::Picks { orders: vec![2, 4] },
            Some("use the helper instead")
        )
    );
    assert_eq!(
        parse("/reject keep the old API", &plan),
        reject(PlanSelection::All, Some("keep the old API"))
    );
    assert!(parse("/reject 3x", &plan).is_err());
    assert!(
        parse("/aprove", &plan)
            .unwrap_err()
            .contains("did you mean /approve")
    );
    assert_eq!(
        parse("/restore list 5", &plan),
        Ok(Command::Op(Op::ListCheckpoints {
            limit: Some(5),
            all: false
        }))
    );
    assert_eq!(
        parse("/restore 3", &plan),
        Ok(Command::Op(Op::RestoreCheckpoint { id: 3 }))
    );
    assert!(parse("/restore x", &plan).is_err());
    assert_eq!(parse("/undo", &plan), Ok(Command::Op(Op::Undo)));
    assert_eq!(
        parse("/goal ship the parser --budget 50000", &plan),
        Ok(goal(GoalCommand::Set {
            objective: "ship the parser".into(),
            budget: Some(50_000)
        }))
    );
    assert_eq!(parse("/goal pause", &plan), Ok(goal(GoalCommand::Pause)));
    assert_eq!(
        parse("/goal budget 80_000", &plan),
        Ok(goal(GoalCommand::Budget {
            tokens: Some(80_000)
        }))
    );
    assert_eq!(
        parse("/goal budget none", &plan),
        Ok(goal(GoalCommand::Budget { tokens: None }))
    );
    assert!(parse("/goal budget lots", &plan).is_err());
    assert_eq!(parse("/goal", &plan), Ok(goal(GoalCommand::List)));
    assert_eq!(
        parse("/goals add \"write docs\"", &plan),
        Ok(goal(GoalCommand::Add {
            objective: "write docs".into()
        }))
    );
    assert_eq!(
        parse("/goals done 2", &plan),
        Ok(goal(GoalCommand::Done { number: 2 }))
    );
    assert!(parse("/goals done x", &plan).is_err());
    assert!(parse("/goal x --budget lots", &plan).is_err());
    for name in [
        "/mode",
        "/plan",
        "/show-plan",
        "/approve",
        "/reject",
        "/restore",
        "/undo",
    ] {
        assert!(help().contains(name), "{name}");
    }
}

#[test]
fn effort_commands_parse() {
    let state = State::default();
    let table = [
        ("/effort low", Some(ReasoningEffort::Low)),
        ("/effort medium", Some(ReasoningEffort::Medium)),
        ("/effort high", Some(ReasoningEffort::High)),
        ("/effort default", None),
    ];
    for (line, effort) in table {
        assert_eq!(
            parse(line, &state),
            Ok(Command::Op(Op::SetEffort { effort })),
            "{line}"
        );
    }
    for bad in ["/effort", "/effort max", "/effort low high"] {
        let err = parse(bad, &state).unwrap_err();
        assert!(err.contains("low"), "{bad}: {err}");
    }
    assert!(help().contains("/effort low|medium|high|default"));
}

#[test]
fn spawn_takes_its_options_then_the_task() {
    let state = State::default();
    let Ok(Command::Op(Op::Spawn { request })) = parse(
        "/spawn --model gpt-5-mini --role implement --files a.rs,b.rs \"Fix the handlers\"",
        &state,
    ) else {
        panic!("not a spawn");
    };
    assert_eq!(request.task, "Fix the handlers");
    assert_eq!(request.model.as_deref(), Some("gpt-5-mini"));
    assert_eq!(request.role, Some(atto_protocol::SubagentRole::Implement));
    assert_eq!(request.files, vec!["a.rs".to_owned(), "b.rs".to_owned()]);
    assert!(parse("/spawn", &state).is_err());
    assert!(
        parse("/spawn --role boss \"x\"", &state)
            .unwrap_err()
            .contains("unknown role")
    );
    assert_eq!(parse("/agents", &state), Ok(Command::Op(Op::ListAgents)));
}

#[test]
fn rewind_lists_or_takes_a_prompt_and_what_goes_back() {
    let state = State::default();
    let rewind = |prompt, scope| Ok(Command::Op(Op::Rewind { prompt, scope }));
    let table = [
        ("/rewind", Ok(Command::Op(Op::ListPrompts))),
        ("/rewind 3", rewind(3, RewindScope::Conversation)),
        (
            "/rewind 3 conversation",
            rewind(3, RewindScope::Conversation),
        ),
        ("/rewind 2 code", rewind(2, RewindScope::Code)),
        ("/rewind 1 both", rewind(1, RewindScope::Both)),
    ];
    for (line, want) in table {
        assert_eq!(parse(line, &state), want, "{line}");
    }
    for bad in [
        "/rewind 0",
        "/rewind two",
        "/rewind 2 files",
        "/rewind 2 both now",
    ] {
        let err = parse(bad, &state).unwrap_err();
        assert!(err.contains("/rewind"), "{bad}: {err}");
    }
}
