//! The comparison's verdicts, reasons and warnings, over recorded results.

use super::recorded::{read_result, standing, RecordedSide};
use super::*;

/// Recorded results of one dimension out of 100, without traces, for the sessions given
/// with their scores.
fn side(label: &str, scores: &[(&str, f64)]) -> RecordedSide<'static> {
    let lines = scores.iter().enumerate().map(|(i, (id, score))| {
        let value = serde_json::json!({
            "sessionId": id, "totalScore": score, "maxScore": 100, "flags": [],
            "dimensions": {"d": {"score": score, "max": 100, "evidence": []}},
        });
        let (bare, read) = read_result(value, "p");
        (i + 1, bare, read)
    });
    RecordedSide {
        label: label.to_owned(),
        results: standing(label, lines).unwrap().results,
        pack: None,
    }
}

fn compared(base: &[(&str, f64)], cand: &[(&str, f64)]) -> Comparison {
    let options = CompareOptions {
        pass_at: Some(60.0),
        ..CompareOptions::default()
    };
    recorded::compare_recorded(
        side("a", base),
        side("b", cand),
        &options,
        recorded::Hints::BINARY,
        &mut |_| {},
    )
    .unwrap()
}

#[test]
fn fail_rules_read_as_written_and_nothing_else() {
    assert_eq!(FailOn::parse("regression"), Some(FailOn::Regression));
    assert_eq!(FailOn::parse("flips"), Some(FailOn::Flips));
    assert_eq!(FailOn::parse("drop=2.5"), Some(FailOn::Drop(2.5)));
    for bad in [
        "drop=-1", "drop=inf", "drop=NaN", "drop=", "Flips", "drop 2",
    ] {
        assert_eq!(FailOn::parse(bad), None, "{bad}");
    }
}

#[test]
fn a_regression_fails_every_rule_that_asks_for_it() {
    let c = compared(
        &[("s1", 80.0), ("s2", 70.0), ("s3", 90.0)],
        &[("s1", 50.0), ("s2", 40.0), ("s3", 60.0)],
    );
    let rules = [
        FailOn::Regression,
        FailOn::Flips,
        FailOn::Drop(29.0),
        FailOn::Drop(30.0),
    ];
    assert_eq!(
        c.verdict(&rules),
        Verdict {
            unjudged: None,
            failures: vec![
                "regression: the 95% interval of the mean change, [-30, -30], lies below 0"
                    .to_owned(),
                "2 sessions went from pass to fail at 60%".to_owned(),
                "the mean change, -30, is below -29".to_owned(),
            ],
        }
    );
    assert_eq!(c.verdict(&[]), Verdict::default());
}

#[test]
fn a_regression_without_an_interval_is_said_unjudged_not_passed() {
    let c = compared(&[("s1", 80.0)], &[("s1", 50.0)]);
    let v = c.verdict(&[FailOn::Regression, FailOn::Flips]);
    assert_eq!(
        v.unjudged.as_deref(),
        Some("`--fail-on regression` is not judged: the mean change has no 95% interval with 1 paired session (it needs 2 or more)")
    );
    assert_eq!(v.failures, ["1 session went from pass to fail at 60%"]);
    assert_eq!(c.verdict(&[FailOn::Flips]).unjudged, None);
}

#[test]
fn sessions_of_one_side_only_are_left_out_with_a_preview_of_their_ids() {
    let base: Vec<(String, f64)> = (1..=7).map(|i| (format!("b{i}"), 50.0)).collect();
    let base: Vec<(&str, f64)> = base.iter().map(|(id, s)| (id.as_str(), *s)).collect();
    let c = compared(
        &[&[("s1", 80.0), ("s2", 60.0)], &base[..]].concat(),
        &[("s1", 70.0), ("s2", 60.0), ("c\u{1b}1", 10.0)],
    );
    let left = c.left_out();
    assert_eq!(left.len(), 2);
    assert_eq!(
        left[0].to_string(),
        "7 sessions only in the baseline (`b1`, `b2`, `b3`, `b4`, `b5`, …): listed under `unmatched`, not compared"
    );
    assert_eq!(
        left[1].warning(|id| Cow::Owned(id.escape_default().to_string())),
        "1 session only in the candidate (`c\\u{1b}1`): listed under `unmatched`, not compared"
    );
    assert_eq!(c.summary.n, 2);
    assert!(compared(&[("s1", 80.0)], &[("s1", 80.0)])
        .left_out()
        .is_empty());
}

#[test]
fn sides_without_a_session_in_common_have_nothing_to_compare() {
    let c = compared(&[("s1", 80.0)], &[("s2", 50.0)]);
    assert_eq!(
        c.nothing_to_compare(),
        Some("the two sides have no session id in common")
    );
    let c = compared(&[("s1", 80.0)], &[("s1", 80.0)]);
    assert_eq!(c.nothing_to_compare(), None);
}
