//! The metric kind in packs, and the reference values of agentevals and SciPy.

use serde_json::Value;

use super::matching::{score, ArgsMode, Matcher, Measure, Mode};
use crate::pack::testing::errors;
use crate::reference::{read_line, ToolCall};

/// Every case of `tests/fixtures/trajectory/reference.jsonl` (made by `make_reference.py`
/// beside it): the four modes with `exact` and `ignore` arguments agree with agentevals, and
/// precision, recall, F1 (exact, ignore, contains) with SciPy's maximum bipartite matching,
/// `tool_sequence` with the textbook LCS.
#[test]
fn every_reference_case_agrees_with_agentevals_and_scipy() {
    let text = include_str!("../../../../tests/fixtures/trajectory/reference.jsonl");
    let mut checked = 0;
    let mut cases = 0;
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).expect("a case is JSON");
        let agent: Vec<ToolCall> = case["agent"]
            .as_array()
            .expect("agent calls")
            .iter()
            .map(|c| ToolCall {
                name: c["name"].as_str().expect("a name").to_owned(),
                args: c["args"].as_object().cloned().expect("args"),
            })
            .collect();
        let (_, reference) = read_line(&case["reference"]).expect("a reference line");
        let reference = reference.calls;
        let n = &case["case"];
        for (key, expected) in case["agentevals"].as_object().expect("agentevals") {
            let (mode, args) = key.split_once('/').expect("mode/args");
            let mode = match mode {
                "strict" => Mode::Strict,
                "unordered" => Mode::Unordered,
                "subset" => Mode::Subset,
                _ => Mode::Superset,
            };
            let m = Matcher::new(if args == "exact" {
                ArgsMode::Exact
            } else {
                ArgsMode::Ignore
            });
            let got = score(Measure::Match(mode), &agent, &reference, &m).value;
            let want = if expected.as_bool().expect("a boolean") {
                1.0
            } else {
                0.0
            };
            assert_eq!(got, want, "case {n}, {key}");
            checked += 1;
        }
        for (args, mode) in [
            ("exact", ArgsMode::Exact),
            ("ignore", ArgsMode::Ignore),
            ("contains", ArgsMode::Contains),
        ] {
            let m = Matcher::new(mode);
            let want = &case["scipy"][args];
            let f1 = score(Measure::F1, &agent, &reference, &m);
            assert_eq!(
                f1.pairs.len() as u64,
                want["matched"].as_u64().expect("matched"),
                "case {n}, {args}"
            );
            for (measure, key) in [
                (Measure::Precision, "precision"),
                (Measure::Recall, "recall"),
                (Measure::F1, "f1"),
            ] {
                let got = score(measure, &agent, &reference, &m).value;
                let want = want[key].as_f64().expect("a number");
                // SciPy's side computes 2PR/(P+R) from rounded quotients.
                assert!(
                    (got - want).abs() < 1e-12,
                    "case {n}, {args} {key}: {got} vs {want}"
                );
                checked += 1;
            }
            let lcs = case["lcs"][args].as_u64().expect("lcs");
            let sequence = score(Measure::Sequence, &agent, &reference, &m);
            assert_eq!(sequence.pairs.len() as u64, lcs, "case {n}, {args} lcs");
            let longer = agent.len().max(reference.len());
            let want = if longer == 0 {
                1.0
            } else {
                lcs as f64 / longer as f64
            };
            assert_eq!(sequence.value, want, "case {n}, {args} sequence");
            checked += 2;
            // The modes with `contains`, from SciPy's matching size.
            let matched = want_matched(&case, args);
            let (a, r) = (agent.len(), reference.len());
            for (mode, holds) in [
                (Mode::Subset, matched == a),
                (Mode::Superset, matched == r),
                (Mode::Unordered, a == r && matched == a),
            ] {
                let got = score(Measure::Match(mode), &agent, &reference, &m).value;
                assert_eq!(
                    got,
                    if holds { 1.0 } else { 0.0 },
                    "case {n}, {args} {mode:?}"
                );
                checked += 1;
            }
        }
        cases += 1;
    }
    assert_eq!(cases, 3000);
    assert_eq!(checked, 3000 * (8 + 3 * 3 + 3 * 2 + 3 * 3));
}

fn want_matched(case: &Value, args: &str) -> usize {
    case["scipy"][args]["matched"].as_u64().expect("matched") as usize
}

/// Where agentevals and the definitions of docs/trajectories.md part, each case with
/// agentevals' answer (run by hand with agentevals 0.0.9) and ours.
#[test]
fn disagreements_with_agentevals_are_the_documented_ones() {
    use serde_json::json;
    let call = super::matching::tests::call;
    // 1. Greedy first-fit with `contains` (agentevals' `superset` of arguments): agentevals
    //    answers False, though pairing each call with the other one matches both.
    let reference = [
        call("f", json!({"a": 1})),
        call("f", json!({"a": 1, "b": 2})),
    ];
    let agent = [
        call("f", json!({"a": 1, "b": 2})),
        call("f", json!({"a": 1})),
    ];
    let m = Matcher::new(ArgsMode::Contains);
    assert_eq!(
        score(Measure::Match(Mode::Superset), &agent, &reference, &m).value,
        1.0
    );
    // 2. Python's `True == 1`: agentevals matches `{"n": true}` with `{"n": 1}` exactly.
    let m = Matcher::new(ArgsMode::Exact);
    let (a, r) = (
        [call("f", json!({"n": true}))],
        [call("f", json!({"n": 1}))],
    );
    assert_eq!(score(Measure::Match(Mode::Strict), &a, &r, &m).value, 0.0);
    // 3. agentevals' strict mode compares the calls of one message as a multiset: the same
    //    two calls in one message, in the other order, pass there; here order is the point.
    let (a, r) = (
        [call("f", json!({})), call("g", json!({}))],
        [call("g", json!({})), call("f", json!({}))],
    );
    assert_eq!(score(Measure::Match(Mode::Strict), &a, &r, &m).value, 0.0);
}

fn with_metric(metric: &str) -> String {
    format!("id: t\nversion: '1'\nname: T\nmetrics:\n  m: {metric}\ndimensions:\n  - id: d\n    max: 10\n    rules:\n      - id: r\n        doc: d\n        points: {{ metric: m, times: 10 }}\n")
}

#[test]
fn an_unknown_mode_matcher_or_key_test_is_refused_with_its_place() {
    assert_eq!(
        errors(&with_metric("{ trajectory_match: { mode: sorted, args: superset } }")),
        [
            "metrics.m.trajectory_match.mode: unknown trajectory mode `sorted` (expected `strict`, `unordered`, `subset` or `superset`)",
            "metrics.m.trajectory_match.args: unknown argument matcher `superset` (expected `exact`, `ignore` or `contains`) (agentevals' `superset` of arguments is `contains`)",
        ]
    );
    assert_eq!(
        errors(&with_metric("{ tool_f1: { mode: strict, tools: { Bash: { keys: { command: { regex: '(' }, n: { within: -1 }, p: { glob: x } } }, Read: { args: contains, keys: [a] }, Edit: { keys: [] } } } }")),
        [
            "metrics.m.tool_f1.mode: `mode` belongs to `trajectory_match`; `tool_f1` counts matched calls whatever their order",
            "metrics.m.tool_f1.tools.Bash.keys.command.regex: `(` is not a regular expression (error: unclosed group)",
            "metrics.m.tool_f1.tools.Bash.keys.n.within: `within` is a number, 0 or more: how far apart two numbers may be",
            "metrics.m.tool_f1.tools.Bash.keys.p: unknown key matcher `glob` (expected `equal`, `{ regex: … }` or `{ within: N }`)",
            "metrics.m.tool_f1.tools.Read: a tool's override is `args: MATCHER` or `keys: […]`, one of them",
            "metrics.m.tool_f1.tools.Edit.keys: `keys` lists no key, so every call of the tool would match (write `args: ignore` for that)",
        ]
    );
    assert_eq!(
        errors(&with_metric("{ tool_f1: {}, tool_recall: {} }")),
        ["metrics.m: a metric is exactly one of `ratio`, `duplicates`, `distinct`, `native` or a trajectory metric (`trajectory_match`, `tool_precision`, `tool_recall`, `tool_f1`, `tool_sequence`)"]
    );
    assert_eq!(
        errors(&with_metric(
            "{ tool_sequence: { args: ignore, of: { domain: tool, operation: [Read, Edit] } } }"
        )),
        Vec::<String>::new()
    );
}

mod grading {
    use std::sync::Arc;

    use serde_json::json;

    use crate::entry::Session;
    use crate::eval::GradeOptions;
    use crate::pack::testing::{entry, pack};
    use crate::reference::{References, Trajectory};
    use crate::result::GradeResult;

    const PACK: &str = "id: t
version: '1'
name: T
metrics:
  f1: { tool_f1: { args: contains } }
  same: { trajectory_match: { mode: unordered, args: ignore } }
dimensions:
  - id: calls
    max: 10
    rules:
      - id: f1
        doc: matched calls
        points: { metric: f1, times: 10 }
        evidence: 'F1 {metric.f1}'
      - id: same
        doc: the same tools
        when: { metric: same, at_least: 1 }
        flag: same tools
  - id: other
    max: 5
    rules:
      - { id: r, doc: d, points: 5 }
";

    /// A session of tool calls `(name, args)`, with a message entry first.
    fn session(calls: &[(&str, serde_json::Value)]) -> Session {
        let mut entries = vec![entry(0, "message", "user")];
        for (i, (name, args)) in calls.iter().enumerate() {
            let mut e = entry(i + 1, "tool", name);
            for (k, v) in args.as_object().into_iter().flatten() {
                e.params.insert(k.as_str(), v.clone());
            }
            entries.push(e);
        }
        Session {
            id: "s1".to_owned(),
            entries,
            skipped_lines: 0,
        }
    }

    fn graded(reference: Option<Trajectory>, explain: bool) -> GradeResult {
        let references =
            reference.map(|r| Arc::new(References::from_sessions([("s1".to_owned(), r)])));
        let options = GradeOptions {
            now: 0,
            explain,
            references,
        };
        let calls = [
            ("Read", json!({"file_path": "a.rs", "limit": 10})),
            ("Bash", json!({"command": "ls"})),
            ("Read", json!({"file_path": "b.rs"})),
        ];
        pack(PACK)
            .grade(&session(&calls), &options)
            .expect("graded")
    }

    fn reference() -> Trajectory {
        let line = json!({"toolCalls": [
            {"name": "Read", "args": {"file_path": "b.rs"}},
            {"name": "Read", "args": {"file_path": "a.rs"}},
            {"name": "Edit", "args": {"file_path": "a.rs"}},
        ]});
        crate::reference::read_line(&line).expect("valid").1
    }

    #[test]
    fn a_session_without_a_reference_is_not_graded_on_it_and_not_given_zero() {
        let result = graded(None, false);
        let calls = &result.dimensions["calls"];
        assert!(calls.not_applicable);
        assert_eq!(calls.evidence, ["no reference trajectory for this session: metric `f1` compares the session's tool calls with one (give it with `--reference`)"]);
        assert_eq!(
            (
                result.total_score.0,
                result.max_score.0,
                result.percent.map(|p| p.0)
            ),
            (5.0, 5.0, Some(100.0))
        );
    }

    #[test]
    fn the_metrics_score_points_evidence_and_conditions() {
        let result = graded(Some(reference()), false);
        // Two of three agent calls match two of three reference calls: F1 = 4/6.
        let calls = &result.dimensions["calls"];
        assert!(!calls.not_applicable);
        assert_eq!(calls.score.0, 7.0);
        assert_eq!(calls.evidence, ["F1 0.6666666666666666"]);
        assert!(result.flags.is_empty());
        assert_eq!(result.max_score.0, 15.0);
    }

    #[test]
    fn explain_names_the_pairs_the_missed_and_the_extra_calls() {
        let result = graded(Some(reference()), true);
        let traces = &result.explain.as_ref().expect("explained")["calls"];
        let f1 = &traces[0].trajectories[0];
        assert_eq!(f1.metric, "f1");
        let pairs: Vec<(usize, usize)> = f1
            .matched
            .iter()
            .map(|m| (m.agent.position, m.reference.position))
            .collect();
        // Entry #2 (Read a.rs) ↔ reference 2, entry #4 (Read b.rs) ↔ reference 1.
        assert_eq!(pairs, [(2, 2), (4, 1)]);
        assert_eq!(f1.missed.len(), 1);
        assert_eq!(
            (f1.missed[0].position, f1.missed[0].name.as_str()),
            (3, "Edit")
        );
        assert_eq!(f1.extra.iter().map(|e| e.position).collect::<Vec<_>>(), [3]);
        let same = &traces[1].trajectories[0];
        assert_eq!((same.metric.as_str(), same.value.0), ("same", 0.0));
    }

    #[test]
    fn an_empty_reference_is_a_reference() {
        let result = graded(Some(Trajectory::default()), false);
        assert!(!result.dimensions["calls"].not_applicable);
        assert_eq!(result.dimensions["calls"].score.0, 0.0);
    }
}
