//! Unit tests of judgments: finding the judgment in a reply, malformed replies, panels
//! combining judges, and their spread.

use super::*;

#[test]
fn a_judgment_is_found_bare_fenced_or_alone_in_prose() {
    assert_eq!(find_judgment_json("  {\"a\": 1}\n"), Ok("{\"a\": 1}"));
    assert_eq!(find_judgment_json("[{\"a\": 1}]"), Ok("[{\"a\": 1}]"));
    let fenced = "Sure.\n```json\n{\"a\": 1}\n```\nAnd {\"b\": 2} too.";
    assert_eq!(find_judgment_json(fenced), Ok("{\"a\": 1}"));
    let bare_fence = "```\n{\"a\": 1}\n```";
    assert_eq!(find_judgment_json(bare_fence), Ok("{\"a\": 1}"));
    // A fenced block in another language is not the judgment.
    let other = "```python\nx = {}\n```\nResult: {\"a\": 1}";
    assert_eq!(find_judgment_json(other), Ok("{\"a\": 1}"));
    let prose = "My judgment is {\"a\": {\"b\": \"a } in a string\"}} as asked.";
    assert_eq!(
        find_judgment_json(prose),
        Ok("{\"a\": {\"b\": \"a } in a string\"}}")
    );
    assert_eq!(
        find_judgment_json("first {\"a\": 1} then {\"a\": 2}"),
        Err(ReplyError::Ambiguous(2))
    );
    assert_eq!(find_judgment_json("no idea"), Err(ReplyError::NoJson));
}

#[test]
fn a_reply_whose_json_is_cut_short_or_malformed_says_which() {
    for cut in [
        "{\"a\": {\"score\": 3, \"evid",
        "Here: {\"a\": {\"b\": 1}",
        "```json\n{\"a\": {\"b\": 1},\n",
    ] {
        assert_eq!(find_judgment_json(cut), Err(ReplyError::CutShort), "{cut}");
    }
    assert_eq!(
        find_judgment_json("{\"a\": 1,}"),
        Err(ReplyError::Malformed(
            "trailing comma at line 1 column 9".to_owned()
        ))
    );
    assert!(matches!(
        find_judgment_json("{ broken"),
        Err(ReplyError::Malformed(_))
    ));
    assert_eq!(
        find_judgment_json("The score is {good}."),
        Err(ReplyError::Malformed(
            "key must be a string at line 1 column 2".to_owned()
        ))
    );
    // A stray brace in prose before a whole object leaves the object readable.
    assert_eq!(
        find_judgment_json("The score is {good}. Here: {\"a\": 1}"),
        Ok("{\"a\": 1}")
    );
    assert_eq!(
        find_judgment_json("I think {maybe. Anyway: {\"a\": 1}"),
        Ok("{\"a\": 1}")
    );
    assert!(ReplyError::CutShort
        .to_string()
        .contains("raise `max_tokens`"));
}

/// A judgment missing one comma was read as its one well-formed dimension, and the
/// pack's schema then complained of missing dimensions instead of the malformed reply.
#[test]
fn a_malformed_judgment_is_not_read_as_the_one_dimension_inside_it_that_parses() {
    let reply = "{\"accuracy\": {\"score\": 3, \"evidence\": \"x\"}, \"clarity\": {\"score\": 4 \"evidence\": \"y\"}}";
    assert!(
        matches!(find_judgment_json(reply), Err(ReplyError::Malformed(m)) if m.contains("expected `,` or `}`")),
        "{:?}",
        find_judgment_json(reply)
    );
    let prose = format!("Here is my judgment:\n{reply}\nThanks.");
    assert!(matches!(
        find_judgment_json(&prose),
        Err(ReplyError::Malformed(_))
    ));
}

#[test]
fn a_panel_combines_numbers_by_its_rule_and_always_lands_categories_on_a_category() {
    let number = DimensionKind::Numeric { min: 0.0 };
    let category = DimensionKind::Categorical {
        categories: vec![
            ("a".to_owned(), 0.0),
            ("b".to_owned(), 1.0),
            ("c".to_owned(), 3.0),
        ],
    };
    let cases = [
        (&number, PanelCombine::Mean, &[0.2, 0.5, 0.9][..], 1.6 / 3.0),
        (&number, PanelCombine::Median, &[0.9, 0.2, 0.5], 0.5),
        (&number, PanelCombine::Median, &[0.9, 0.2, 0.5, 0.4], 0.45),
        (&number, PanelCombine::Min, &[0.9, 0.2, 0.5], 0.2),
        (&number, PanelCombine::Max, &[0.9, 0.2, 0.5], 0.9),
        // A category has no mean: the median category, the lower middle for a tie.
        (&category, PanelCombine::Mean, &[0.0, 3.0], 0.0),
        (&category, PanelCombine::Mean, &[3.0, 1.0, 3.0], 3.0),
        (&category, PanelCombine::Median, &[3.0, 1.0, 0.0, 3.0], 1.0),
        (&category, PanelCombine::Min, &[3.0, 1.0], 1.0),
        (&category, PanelCombine::Max, &[3.0, 1.0], 3.0),
    ];
    for (kind, how, scores, want) in cases {
        let got = combine_scores(scores, kind, how);
        assert!((got - want).abs() < 1e-12, "{how:?} of {scores:?}: {got}");
    }
}

#[test]
fn spread_is_min_max_and_population_sd() {
    let s = Spread::of(&[0.2, 0.4, 0.9]).unwrap();
    assert_eq!((s.min, s.max), (0.2, 0.9));
    let mean = 0.5;
    let sd = (((0.2f64 - mean).powi(2) + (0.4f64 - mean).powi(2) + (0.9f64 - mean).powi(2)) / 3.0)
        .sqrt();
    assert!((s.sd - sd).abs() < 1e-12);
    assert_eq!(Spread::of(&[0.5]), None);
}
