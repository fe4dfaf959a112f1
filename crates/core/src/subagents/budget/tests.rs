//! The tree budget's rules, each as a test: shares, allowances handed out and back, caps,
//! reservations, and what failed and retried calls cost.

use super::*;

#[test]
fn a_child_gets_fifteen_percent_clamped_to_50k_200k_and_never_more_than_is_left() {
    let share = Share::default();
    assert_eq!(share.of(Some(1_000_000)), 150_000);
    assert_eq!(
        share.of(Some(100_000)),
        50_000,
        "15K is raised to the 50K floor"
    );
    assert_eq!(
        share.of(Some(10_000_000)),
        200_000,
        "1.5M is cut to the 200K ceiling"
    );
    assert_eq!(share.of(Some(30_000)), 30_000, "never more than is left");
    assert_eq!(
        share.of(None),
        200_000,
        "an unbounded parent gives the ceiling"
    );
}

#[test]
fn the_parent_hands_out_the_allowance_and_gets_the_unspent_rest_back() {
    let tree = Tree::new(
        Caps {
            tokens: Some(1_000_000),
            usd: None,
        },
        "root",
    );
    let given = tree.allot("root", "kid", None, &Share::default()).unwrap();
    assert_eq!(given, 150_000);
    assert_eq!(tree.remaining("root"), Some(850_000));
    // The child spends 10K of its 150K.
    let r = tree.reserve("kid", 3_000, 8_192, "m").unwrap();
    let used = Usage {
        input_tokens: 9_000,
        output_tokens: 1_000,
        ..Usage::default()
    };
    r.settle(Spent::Reported(&used, None));
    let spend = tree.finish("root", "kid");
    assert_eq!(spend.tokens, 10_000);
    assert_eq!(tree.remaining("root"), Some(990_000));
    assert!(
        tree.allot("root", "big", Some(2_000_000), &Share::default())
            .unwrap_err()
            .contains("only 990000 are left")
    );
}

#[test]
fn a_call_is_refused_before_it_could_cross_a_cap_and_its_output_is_bounded() {
    let tree = Tree::new(
        Caps {
            tokens: Some(10_000),
            usd: None,
        },
        "root",
    );
    // 9,000 bytes ≈ 3,000 tokens in: 7,000 left for output, under the 8,192 asked.
    let r = tree.reserve("root", 9_000, 8_192, "m").unwrap();
    assert_eq!(r.output, 7_000);
    let used = Usage {
        input_tokens: 3_000,
        output_tokens: 6_000,
        ..Usage::default()
    };
    r.settle(Spent::Reported(&used, None));
    // The next input is at least the last one's: 3,000 of the 1,000 left.
    let refused = tree.reserve("root", 9_000, 8_192, "m").err().unwrap();
    assert!(
        refused.contains("would cross the session's token cap"),
        "{refused}"
    );
    assert_eq!(tree.used_tokens(), 9_000);
}

#[test]
fn calls_in_flight_hold_their_reservations_so_parallel_calls_cannot_overspend() {
    let tree = Tree::new(
        Caps {
            tokens: Some(5_000),
            usd: None,
        },
        "root",
    );
    let first = tree.reserve("root", 3_000, 3_000, "m").unwrap();
    assert_eq!(first.tokens, 4_000);
    assert!(tree.reserve("root", 3_000, 3_000, "m").is_err());
    drop(first);
    // A dropped (cancelled) call counts its input as spent.
    assert_eq!(tree.used_tokens(), 1_000);
}

#[test]
fn a_dollar_cap_on_a_model_without_a_price_refuses_rather_than_guesses() {
    let tree = Tree::new(
        Caps {
            tokens: None,
            usd: Some(1.0),
        },
        "root",
    );
    let err = tree
        .reserve("root", 300, 100, "local-model-x")
        .err()
        .unwrap();
    assert!(
        err.contains("price of model local-model-x is unknown"),
        "{err}"
    );
}

#[test]
fn a_failed_or_cancelled_call_costs_its_input_at_the_model_price_not_nothing() {
    let tree = Tree::new(
        Caps {
            tokens: None,
            usd: Some(1.0),
        },
        "root",
    );
    // 30,000 bytes ≈ 10,000 tokens in; gpt-4o's input is $2.50 a million.
    let r = tree.reserve("root", 30_000, 100, "gpt-4o").unwrap();
    drop(r);
    let spent = tree.lock().used_usd;
    assert!((spent - 0.025).abs() < 1e-9, "{spent}");
    assert_eq!(tree.children_spend("root").1, Some(0.0));
    let own = tree.lock().nodes.get("root").and_then(|n| n.own_cost);
    assert!(own.is_some_and(|c| (c - 0.025).abs() < 1e-9), "{own:?}");
}
