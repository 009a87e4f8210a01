//! Terminal escapes a judge writes (issue 12, defect 12): a rationale or evidence holding
//! control characters is shown escaped in human output, even with `--color never`, so a
//! judgment cannot retitle the terminal or clear it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use common::*;

#[test]
fn a_judges_rationale_and_evidence_are_shown_escaped_in_human_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut judgment = serde_json::Map::new();
    for name in [
        "goal_achievement",
        "tool_efficiency",
        "process_adherence",
        "context_efficiency",
        "error_handling",
        "output_quality",
    ] {
        judgment.insert(
            name.to_owned(),
            serde_json::json!({"score": 1,
                "evidence": ["seen\u{1b}]0;pwned\u{7}"],
                "rationale": "fine\u{1b}[2J\u{1b}[31mred"}),
        );
    }
    let path = dir.path().join("judgment.json");
    std::fs::write(&path, serde_json::Value::Object(judgment).to_string()).unwrap();
    let out = run(&[
        "--rubric",
        "langfuse-v1",
        "--judgment",
        path.to_str().unwrap(),
        "--color",
        "never",
        "--explain",
        "--no-record",
        "s1",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    assert!(text.contains("fine\\u{1b}[2J\\u{1b}[31mred"), "{text}");
    assert!(text.contains("seen\\u{1b}]0;pwned\\u{7}"), "{text}");
}

/// Invisible and direction characters (LRM, RLM, ALM, the line and paragraph separators, a
/// zero-width space, a byte order mark, tag characters) printed raw in session ids, so two
/// ids that differ only by one looked the same. Human output shows them escaped, as it shows
/// control characters: grading, the summary and `compare`.
#[test]
fn invisible_and_direction_characters_are_shown_escaped_in_human_output() {
    let hidden = [
        '\u{200e}',
        '\u{200f}',
        '\u{61c}',
        '\u{2028}',
        '\u{2029}',
        '\u{200b}',
        '\u{feff}',
        '\u{e0041}',
        '\u{2060}',
    ];
    let dir = tempfile::tempdir().unwrap();
    let log: String = hidden
        .iter()
        .map(|c| {
            let line = serde_json::json!({
                "timestamp": "2026-03-01T00:00:00Z",
                "sessionId": format!("s{c}1"),
                "domain": "tasks",
                "operation": "add",
                "params": {"title": format!("t{c}itle")},
                "result": {"success": true}
            });
            format!("{line}\n")
        })
        .collect();
    let source = dir.path().join("audit.jsonl");
    std::fs::write(&source, log).unwrap();
    let check = |what: &str, text: &str| {
        for c in hidden {
            assert!(!text.contains(c), "{what}: raw {c:?} in {text:?}");
            let escaped = c.escape_unicode().to_string();
            assert!(text.contains(&escaped), "{what}: no {escaped} in {text}");
        }
    };
    let mut recorded = Vec::new();
    for (i, pack) in ["cleo-v1", "cleo-v2"].iter().enumerate() {
        let grades = dir.path().join(format!("grades{i}.jsonl"));
        let out = run(&[
            "--rubric",
            pack,
            "--source",
            source.to_str().unwrap(),
            "--all",
            "--color",
            "never",
            "--grades",
            grades.to_str().unwrap(),
        ]);
        assert!(code(&out) < 2, "{}", stderr(&out));
        check("grading", &stdout(&out));
        recorded.push(grades);
    }
    let out = run(&[
        "compare",
        recorded[0].to_str().unwrap(),
        recorded[1].to_str().unwrap(),
        "--color",
        "never",
    ]);
    assert!(code(&out) < 2, "{}", stderr(&out));
    let text = stdout(&out);
    for c in hidden {
        assert!(!text.contains(c), "compare: raw {c:?} in {text:?}");
    }
}
