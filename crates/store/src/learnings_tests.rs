use super::*;

#[test]
fn the_lifecycle_allows_only_the_seeds_moves() {
    use LearningStatus::{Archived, Proposed, Rejected, Validated};
    let allowed = [
        (Proposed, Validated),
        (Proposed, Rejected),
        (Validated, Archived),
        (Rejected, Archived),
    ];
    for from in LearningStatus::ALL {
        for to in LearningStatus::ALL {
            let ok = transition(7, from, to).is_ok();
            assert_eq!(ok, allowed.contains(&(from, to)), "{from:?} -> {to:?}");
            if let Err(err) = transition(7, from, to) {
                let text = err.to_string();
                assert!(text.contains("learning #7 is"), "{text}");
                assert!(text.contains("nothing was stored"), "{text}");
            }
        }
    }
}
