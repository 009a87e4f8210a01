//! The verdicts of the shipped packs that grade coding agents, pinned: `coding-agent-v1` over
//! every agent fixture (`tests/fixtures/agents`) and its own pack tests, and `claude-code-v1`
//! over the same files (it grades the Claude Code ones and refuses the rest). Work on speed
//! (the pack's scripts, native rule kinds, the readers) must leave every line here as it is;
//! a deliberate change of a verdict shows in the snapshot's diff.

use std::path::{Path, PathBuf};

use crate::common;

use common::*;

/// Every session file under `dir`, sorted: the fixtures' licences, notes, counting scripts,
/// counts and the pack tests' expected results are no sessions.
fn session_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut items: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|item| item.expect("a folder entry").path())
        .collect();
    items.sort();
    for path in items {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            session_files(&path, out);
        } else if !(name.starts_with("LICENSE")
            || name.ends_with(".md")
            || name.ends_with(".py")
            || name == "counts.json"
            || name.ends_with(".expected.jsonl"))
        {
            out.push(path);
        }
    }
}

/// The files both packs are graded over, relative to the repository's root.
fn fixtures() -> Vec<String> {
    let root = repo_root();
    let mut files = Vec::new();
    session_files(&root.join("tests/fixtures/agents"), &mut files);
    session_files(&root.join("rubrics/coding-agent-v1/tests"), &mut files);
    files
        .iter()
        .map(|f| {
            f.strip_prefix(&root)
                .expect("under the repository")
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect()
}

/// `pack` over each fixture: its exit code, then each result line with the time it was graded
/// left out, and the first line of what it said on standard error. A file of a format the
/// pack does not grade is counted, not listed; the pack's digest is said once, last.
fn verdicts(pack: &str) -> String {
    let mut text = String::new();
    let mut refused = 0;
    let mut digest = None;
    for file in fixtures() {
        let out = run(&[
            "--rubric",
            pack,
            "--source",
            &file,
            "--all",
            "--format",
            "jsonl",
            "--no-record",
        ]);
        if code(&out) == 2 && stderr(&out).contains(&format!("and rubric `{pack}` grades only")) {
            refused += 1;
            continue;
        }
        text.push_str(&format!("== {file} (exit {})\n", code(&out)));
        for mut result in json_lines(&stdout(&out)) {
            let object = result.as_object_mut().expect("a result is an object");
            assert!(
                object.remove("timestamp").is_some(),
                "{file}: a result names when it was graded"
            );
            // The pack's digest once, at the end: a change to a script that keeps every
            // verdict shows as that one line.
            let rubric = object
                .get_mut("rubric")
                .and_then(|r| r.as_object_mut())
                .expect("a result names its rubric");
            let this = rubric.remove("digest").expect("the rubric's digest");
            assert!(digest.as_ref().is_none_or(|d| *d == this), "{file}: {this}");
            digest = Some(this);
            text.push_str(&serde_json::to_string(&result).expect("JSON"));
            text.push('\n');
        }
        if let Some(first) = stderr(&out).lines().next() {
            text.push_str(&format!("stderr: {first}\n"));
        }
    }
    text.push_str(&format!(
        "-- {refused} files of formats `{pack}` does not grade\n"
    ));
    text.push_str(&format!(
        "-- digest {}\n",
        digest.expect("a file graded").as_str().expect("text")
    ));
    text
}

#[test]
fn coding_agent_v1_verdicts_on_every_agent_fixture_stay_as_pinned() {
    let text = verdicts("coding-agent-v1");
    // Every file is a session the pack grades: none refused, none unread.
    for head in text.lines().filter(|l| l.starts_with("== ")) {
        assert!(head.ends_with("(exit 0)"), "{head}");
    }
    assert!(text.contains("\n-- 0 files of formats `coding-agent-v1` does not grade\n"));
    insta::assert_snapshot!("coding_agent_v1", text);
}

#[test]
fn claude_code_v1_verdicts_on_the_agent_fixtures_stay_as_pinned() {
    let text = verdicts("claude-code-v1");
    // It grades the Claude Code sessions among them.
    assert!(text.contains("\"id\":\"claude-code-v1\""), "{text}");
    insta::assert_snapshot!("claude_code_v1", text);
}
