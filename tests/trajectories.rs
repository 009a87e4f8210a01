//! Reference trajectories through the binary: `--reference` on `grade`, pack tests with a
//! fixture's reference beside it, `rubric validate` on a broken trajectory metric, and the
//! commands of docs/trajectories.md, run as written.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use common::*;

/// Every ```console block of docs/trajectories.md: its `$ grade …` command and the output
/// the page shows.
fn documented_commands() -> Vec<(Vec<String>, String)> {
    let doc = std::fs::read_to_string(repo_root().join("docs/trajectories.md")).expect("the page");
    let mut out = Vec::new();
    let mut rest = doc.as_str();
    while let Some(start) = rest.find("```console\n") {
        let body = &rest[start + "```console\n".len()..];
        let end = body.find("```").expect("the block ends");
        let block = &body[..end];
        let (command, shown) = block.split_once('\n').expect("a command and its output");
        let words = command
            .strip_prefix("$ grade ")
            .expect("a block starts with `$ grade`")
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        out.push((words, shown.to_owned()));
        rest = &body[end..];
    }
    out
}

#[test]
fn the_commands_of_the_trajectories_page_print_what_it_shows() {
    let commands = documented_commands();
    assert_eq!(commands.len(), 4);
    for (words, shown) in commands {
        let args: Vec<&str> = words.iter().map(String::as_str).collect();
        let out = run(&args);
        assert_eq!(code(&out), 0, "grade {}: {}", words.join(" "), stderr(&out));
        let printed = without_grade_time(&stdout(&out));
        let shown = without_grade_time(&shown);
        // A block that ends with `…` shows the start of the output.
        match shown.strip_suffix("…\n") {
            Some(start) => assert!(
                printed.starts_with(start),
                "grade {}:\n{printed}",
                words.join(" ")
            ),
            None => assert_eq!(printed, shown, "grade {}", words.join(" ")),
        }
    }
}

/// The output with the instant of the grade (`graded 2026-…Z`), which differs each run, cut.
fn without_grade_time(text: &str) -> String {
    text.lines()
        .map(|line| match line.find(" · graded ") {
            Some(at) => format!("{} · graded …\n", &line[..at]),
            None => format!("{line}\n"),
        })
        .collect()
}

#[test]
fn a_reference_file_with_bad_lines_is_refused_naming_each() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let refs = dir.path().join("refs.jsonl");
    std::fs::write(
        &refs,
        "{\"sessionId\":\"a\",\"toolCalls\":[{\"name\":\"Read\"}]}\n{\"sessionId\":\"b\"}\nnot json\n",
    )
    .expect("written");
    let out = run(&[
        "--rubric",
        "examples/trajectory/pack",
        "--source",
        "examples/trajectory/session.jsonl",
        "--all",
        "--reference",
        refs.to_str().expect("a path"),
    ]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.contains("is invalid: line 2: a line needs `toolCalls`"),
        "{err}"
    );
    assert!(err.contains("; line 3: not JSON ("), "{err}");
}

#[test]
fn validate_names_an_unknown_mode_matcher_and_key_test_with_line_and_code() {
    let out = run(&[
        "rubric",
        "validate",
        "tests/fixtures/packs/broken-trajectory",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let found: Vec<(String, u64, String)> = report["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| {
            (
                p["code"].as_str().unwrap_or_default().to_owned(),
                p["line"].as_u64().unwrap_or_default(),
                p["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("E037".to_owned(), 6, "unknown trajectory mode `sorted` (expected `strict`, `unordered`, `subset` or `superset`)".to_owned()),
            ("E037".to_owned(), 9, "unknown argument matcher `superset` (expected `exact`, `ignore` or `contains`) (agentevals' `superset` of arguments is `contains`)".to_owned()),
            ("E037".to_owned(), 11, "unknown key matcher `glob` (expected `equal`, `{ regex: … }` or `{ within: N }`)".to_owned()),
        ]
    );
    let human = run(&[
        "rubric",
        "validate",
        "tests/fixtures/packs/broken-trajectory",
    ]);
    insta::assert_snapshot!("validate_broken_trajectory", stdout(&human));
    let explained = run(&["rubric", "explain", "E037"]);
    assert_eq!(code(&explained), 0);
    assert!(stdout(&explained)
        .starts_with("E037 trajectory-metric (error): a trajectory metric with an unknown mode"));
}

#[test]
fn compare_takes_the_reference_too() {
    let out = run(&[
        "compare",
        "--rubric",
        "examples/trajectory/pack",
        "--rubric",
        "examples/trajectory/pack",
        "--source",
        "examples/trajectory/session.jsonl",
        "--all",
        "--reference",
        "examples/trajectory/reference.jsonl",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let with: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let out = run(&[
        "compare",
        "--rubric",
        "examples/trajectory/pack",
        "--rubric",
        "examples/trajectory/pack",
        "--source",
        "examples/trajectory/session.jsonl",
        "--all",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let without: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    // The reference counts: the same session is graded otherwise without it.
    assert_ne!(with, without);
}
