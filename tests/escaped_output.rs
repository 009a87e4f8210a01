//! Terminal escapes a judge writes (issue 12, defect 12): a rationale or evidence holding
//! control characters is shown escaped in human output, even with `--color never`, so a
//! judgment cannot retitle the terminal or clear it.

mod common;

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
