//! Unit tests of result lines: read, mapped and written as serde_json writes them.

use super::*;
use crate::judgment::{JudgeUsage, Spread};
use proptest::prelude::*;

/// Lines are parsed on every core; the error is still the first bad line's, whichever
/// thread met a bad line first.
#[test]
fn the_first_line_that_is_not_json_is_the_one_named() {
    let mut lines: Vec<String> = (0..5000).map(|i| format!("{{\"n\": {i}}}")).collect();
    lines[4321] = "{torn".to_owned();
    lines[1234] = "not json".to_owned();
    lines[7] = "   ".to_owned();
    let text = lines.join("\n");
    assert_eq!(parse_json_lines(&text).unwrap_err().0, 1235);
    lines[1234] = "{\"n\": 1234}".to_owned();
    let parsed = parse_json_lines(&lines.join("\n")).map_err(|(n, _)| n);
    assert_eq!(parsed.unwrap_err(), 4322);
    lines[4321] = "{}".to_owned();
    let parsed = parse_json_lines(&lines.join("\n")).unwrap();
    assert_eq!(parsed.len(), 4999, "the blank line is skipped");
    assert_eq!(parsed[7].0, 9, "lines keep their numbers");
}

/// A line `keep` refuses and a line that is no JSON: the error is the earlier line's,
/// whichever kind it is, and a line `keep` drops is not in the result.
#[test]
fn mapped_lines_keep_what_keep_keeps_and_fail_at_the_first_bad_line_of_either_kind() {
    let keep = |n: usize, v: serde_json::Value, _| match v.get("n").and_then(|n| n.as_u64()) {
        Some(k) if k % 2 == 0 => Ok(Some(n)),
        Some(_) => Ok(None),
        None => Err(format!("line {n} has no n")),
    };
    let not_json = |n: usize, _| format!("line {n} is no JSON");
    let mut lines: Vec<String> = (0..3000).map(|i| format!("{{\"n\": {i}}}")).collect();
    let kept = map_json_lines(&lines.join("\n"), keep, not_json).unwrap();
    assert_eq!(kept.len(), 1500);
    assert_eq!(
        kept[..3],
        [1, 3, 5],
        "the even n, by their 1-based line numbers"
    );
    lines[2500] = "{torn".to_owned();
    lines[700] = "{}".to_owned();
    let failed = map_json_lines(&lines.join("\n"), keep, not_json);
    assert_eq!(failed.unwrap_err(), "line 701 has no n");
    lines[700] = "{\"n\": 0}".to_owned();
    lines[100] = "x".to_owned();
    let failed = map_json_lines(&lines.join("\n"), keep, not_json);
    assert_eq!(failed.unwrap_err(), "line 101 is no JSON");
}

/// Recorded grades with a lone surrogate are read (with U+FFFD, and the caller told);
/// expectations are not, so that a pack test cannot pass on a text that only reads equal.
#[test]
fn a_lone_surrogate_is_read_where_lines_are_mapped_and_refused_in_expectations() {
    let text = "{\"a\": \"x\"}\n{\"a\": \"cut \\ud83d\"}\n{\"a\": \"\\udc00\"}";
    let read = map_json_lines(
        text,
        |n, v, lone| Ok::<_, String>(Some((n, v["a"].as_str().unwrap().to_owned(), lone))),
        |n, e| format!("{n}: {e}"),
    )
    .unwrap();
    assert_eq!(
        read,
        [
            (1, "x".to_owned(), false),
            (2, "cut \u{fffd}".to_owned(), true),
            (3, "\u{fffd}".to_owned(), true)
        ]
    );
    let (line, error) = parse_json_lines(text).unwrap_err();
    assert_eq!(line, 2);
    assert!(error.to_string().contains("hex escape"), "{error}");
}

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just('"'),
            Just('\\'),
            Just('é'),
            proptest::char::range('\0', ' '),
            proptest::char::range('a', 'z'),
            any::<char>(),
        ],
        0..12,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-40i64..200).prop_map(|n| n as f64),
        any::<f64>(),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(-0.0),
        Just(8.9e15),
        Just(9.0e15),
        Just(1e21),
        (-4000i64..4000).prop_map(|n| n as f64 / 100.0),
    ]
}

fn dimension() -> impl Strategy<Value = DimensionScore> {
    (
        (number(), number(), proptest::collection::vec(text(), 0..3)),
        proptest::option::of(text()),
        proptest::option::of(number()),
        proptest::option::of(number()),
        proptest::option::of(text()),
        proptest::option::of((number(), number(), number())),
        any::<bool>(),
        proptest::collection::vec((text(), number(), text(), any::<bool>()), 0..3),
    )
        .prop_map(
            |((score, max, evidence), label, normalized, weight, rationale, spread, na, panel)| {
                DimensionScore {
                    score: Score(score),
                    max: Score(max),
                    evidence,
                    label,
                    normalized,
                    weight,
                    rationale,
                    spread: spread.map(|(min, max, sd)| Spread { min, max, sd }),
                    panel: panel
                        .into_iter()
                        .map(|(judge, score, rationale, ran)| PanelMember {
                            judge,
                            score: Score(score),
                            evidence: vec![rationale.clone()],
                            rationale,
                            spread: ran.then_some(Spread {
                                min: score,
                                max: 1.5,
                                sd: 0.25,
                            }),
                        })
                        .collect(),
                    not_applicable: na,
                    // Which flags are the dimension's is not in the line.
                    flags: 1..3,
                }
            },
        )
}

fn result() -> impl Strategy<Value = GradeResult> {
    (
        (text(), proptest::option::of(text()), number(), number()),
        proptest::collection::vec((text(), dimension()), 0..4),
        (
            proptest::collection::vec(text(), 0..3),
            text(),
            any::<usize>(),
        ),
        (
            prop_oneof![Just(0u64), any::<u64>()],
            text(),
            text(),
            number(),
        ),
        (
            proptest::option::of(text()),
            any::<bool>(),
            any::<bool>(),
            proptest::option::of(text()),
        ),
    )
        .prop_map(
            |(
                (session_id, task_id, total, max),
                dimensions,
                (flags, timestamp, entry_count),
                (skipped_lines, evaluator, digest, percent),
                (grade, judged, explained, source),
            )| GradeResult {
                session_id,
                task_id,
                total_score: Score(total),
                max_score: Score(max),
                dimensions: dimensions.into_iter().collect(),
                flags,
                timestamp,
                entry_count,
                skipped_lines,
                source,
                evaluator,
                rubric: RubricRef {
                    id: "cleo-v1".to_owned(),
                    version: "1.0.0".to_owned(),
                    digest,
                },
                percent: (max != 0.0).then_some(Score(percent)),
                grade,
                judge: judged.then(|| JudgeUsage {
                    model: "cmd:judge \"x\"".to_owned(),
                    runs: 3,
                    replies: 6,
                    input_tokens: 1200,
                    output_tokens: 80,
                    cached: 1,
                }),
                panel: judged.then(|| crate::judgment::PanelUsage {
                    combine: crate::pack::PanelCombine::Median,
                    judges: vec![JudgeUsage {
                        model: "openai:m\u{7f}".to_owned(),
                        runs: 1,
                        replies: 2,
                        input_tokens: 10,
                        output_tokens: 5,
                        cached: 0,
                    }],
                }),
                explain: explained.then(|| {
                    IndexMap::from([(
                        "d".to_owned(),
                        vec![RuleTrace {
                            rule: "r".to_owned(),
                            points: Score(-2.5),
                            evidence: vec!["e\n".to_owned()],
                            flags: Vec::new(),
                            entries: Vec::new(),
                            trajectories: Vec::new(),
                        }],
                    )])
                }),
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// The line written by hand is the line serde_json writes, whatever the result holds.
    #[test]
    fn a_result_line_is_the_line_serde_json_writes(result in result()) {
        let mut ours = Vec::new();
        result.write_json_line(&mut ours).unwrap();
        let mut theirs = serde_json::to_vec(&result).unwrap();
        theirs.push(b'\n');
        prop_assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&theirs));

        let mut unexplained = Vec::new();
        result.write_json_line_unexplained(&mut unexplained).unwrap();
        let mut without = result.clone();
        without.explain = None;
        let mut theirs = serde_json::to_vec(&without).unwrap();
        theirs.push(b'\n');
        prop_assert_eq!(unexplained, theirs);
    }
}
