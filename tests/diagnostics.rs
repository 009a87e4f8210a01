//! Diagnostics with stable codes: `grade explain`, codes in `validate`'s human and JSON
//! reports, and `allow` silencing a warning by its code.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use common::*;
use serde_json::Value;

/// A copy of the `suspicious` fixture pack (four warnings) with `extra` appended to its
/// `rubric.yaml`.
fn suspicious_with(extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let text = std::fs::read_to_string(fixture("packs/suspicious/rubric.yaml"))
        .expect("the suspicious pack");
    std::fs::write(dir.path().join("rubric.yaml"), format!("{text}{extra}"))
        .expect("rubric.yaml written");
    dir
}

fn codes_of(report: &Value) -> Vec<String> {
    report["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| {
            p["code"]
                .as_str()
                .expect("every problem has a code")
                .to_owned()
        })
        .collect()
}

#[test]
fn explain_prints_what_a_code_means() {
    let out = run(&["rubric", "explain", "E012"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    insta::assert_snapshot!("explain_e012", stdout(&out));
    // By name, and in any case.
    let by_name = run(&["rubric", "explain", "unknown-selector"]);
    assert_eq!(stdout(&by_name), stdout(&out));
    // `grade explain` is the command; `grade rubric explain`, its first spelling, still works.
    let short = run(&["explain", "E012"]);
    assert_eq!(code(&short), 0, "{}", stderr(&short));
    assert_eq!(stdout(&short), stdout(&out));
    let lower = run(&["rubric", "explain", "w103"]);
    assert!(
        stdout(&lower).starts_with("W103 no-outcome (warning)"),
        "{}",
        stdout(&lower)
    );
}

#[test]
fn explain_of_a_session_error_says_the_pack_stays_valid() {
    let out = run(&["rubric", "explain", "not-text"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with(
            "E040 not-text (error): a session where a test of text meets a value that is not text, or a message prints one JavaScript cannot print\n"
        ),
        "{text}"
    );
    assert!(
        text.ends_with(
            "It is an error of one session, not of the pack: the pack stays valid, and the other\n\
             sessions of a run are graded.\n"
        ),
        "{text}"
    );
    assert!(!text.contains("makes the pack invalid"), "{text}");
}

/// The codes of a source and of the command are explained like a pack's, with what the
/// error does to the run.
#[test]
fn explain_covers_source_and_command_codes() {
    let source = run(&["explain", "E104"]);
    assert_eq!(code(&source), 0, "{}", stderr(&source));
    let text = stdout(&source);
    assert!(
        text.starts_with("E104 malformed-line (error): a malformed line of a CLEO audit log\n"),
        "{text}"
    );
    assert!(text.contains("`--skip-bad-lines`"), "{text}");
    assert!(
        text.ends_with("nothing is graded from it, and `grade` exits 2.\n"),
        "{text}"
    );
    let command = run(&["explain", "stdout-write"]);
    assert!(
        stdout(&command).ends_with("It is an error of the command: `grade` stops and exits 2.\n"),
        "{}",
        stdout(&command)
    );
    let check = run(&["explain", "E202"]);
    assert!(
        stdout(&check).ends_with("`grade` exits 1.\n"),
        "{}",
        stdout(&check)
    );
    // Every code of the registry is listed, one a line.
    let all = stdout(&run(&["explain"]));
    assert_eq!(all.lines().count(), grade_engine::pack::codes::ALL.len());
}

#[test]
fn explain_without_a_code_lists_every_code() {
    let out = run(&["rubric", "explain"]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 36, "{lines:?}");
    assert!(lines[0].starts_with("E001 yaml"), "{}", lines[0]);
    assert!(lines
        .iter()
        .any(|l| l.starts_with("W107 never-reaches-max")));
}

#[test]
fn explain_an_unknown_code_is_a_usage_error_with_close_matches() {
    let out = run(&["rubric", "explain", "E12"]);
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "");
    insta::assert_snapshot!("explain_unknown_code", stderr(&out));
    let far = run(&["rubric", "explain", "nothing-like-it"]);
    assert_eq!(code(&far), 2);
    assert!(
        stderr(&far).contains("`grade explain` lists every code"),
        "{}",
        stderr(&far)
    );
}

#[test]
fn validate_json_carries_each_problems_code() {
    let out = run(&[
        "rubric",
        "validate",
        "tests/fixtures/packs/broken-references",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 1);
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(
        codes_of(&report),
        ["E015", "E012", "E012", "E022", "E022", "E022", "E022", "E019", "E013", "E020"]
    );
    let warnings = run(&[
        "rubric",
        "validate",
        "tests/fixtures/packs/suspicious",
        "--format",
        "json",
    ]);
    let report: Value = serde_json::from_str(&stdout(&warnings)).expect("JSON");
    assert_eq!(codes_of(&report), ["W106", "W102", "W104", "W107"]);
}

#[test]
fn allow_silences_a_warning_by_its_code() {
    let pack = suspicious_with("allow: [W104, w107]\n");
    let out = run(&[
        "rubric",
        "validate",
        pack.path().to_str().expect("utf-8"),
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(codes_of(&report), ["W106", "W102"]);
    assert_eq!(report["warnings"], 2);
}

#[test]
fn allow_refuses_errors_and_unknown_codes() {
    let pack = suspicious_with("allow: [E012, W130, W999]\n");
    let out = run(&["rubric", "validate", pack.path().to_str().expect("utf-8")]);
    assert_eq!(code(&out), 1);
    let text = stdout(&out).replace(pack.path().to_str().expect("utf-8"), "PACK");
    insta::assert_snapshot!("allow_refuses_errors_and_unknown_codes", text);
}

/// An empty `rubric.yaml` (or one of comments only) said "missing field `id`", sending its
/// author after one key: it is its own problem, naming what a pack needs.
#[test]
fn an_empty_manifest_is_named_empty_not_missing_its_id() {
    for text in ["", "# a pack to come\n\n---\n"] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("rubric.yaml"), text).unwrap();
        let out = run(&[
            "rubric",
            "validate",
            dir.path().to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!(code(&out), 1, "{}", stderr(&out));
        let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(codes_of(&report), ["E006"], "{text:?}");
        let message = report["problems"][0]["message"].as_str().unwrap();
        assert!(
            message.starts_with("`rubric.yaml` is empty: a pack needs at least `id`, `version`, `name` and `dimensions`"),
            "{message}"
        );
    }
}

/// Every code of the registry has a fixture under `tests/fixtures/codes/<CODE>/` that raises
/// it, and a snapshot of what the user reads there, as ruff keeps one per rule: a new code
/// comes with both, and a changed message is seen in review. How a folder raises its code is
/// in `tests/fixtures/codes/README.md`: a pack validated, a session graded, or a command run
/// in a copy of the folder. A folder no code owns is an error too.
#[test]
fn every_code_has_a_fixture_that_raises_it() {
    let root = fixture("codes");
    let ids: Vec<&str> = grade_engine::pack::codes::ALL
        .iter()
        .map(|c| c.info().id)
        .collect();
    let mut folders: Vec<String> = std::fs::read_dir(&root)
        .expect("tests/fixtures/codes")
        .map(|e| e.expect("a folder entry"))
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let owned: Vec<&String> = folders
        .iter()
        .filter(|f| !ids.contains(&f.as_str()))
        .collect();
    assert!(owned.is_empty(), "fixtures of no code: {owned:?}");
    for id in ids {
        let rel = format!("tests/fixtures/codes/{id}");
        assert!(root.join(id).is_dir(), "{id} has no fixture folder `{rel}`");
        if NOT_RAISED.iter().any(|(code, _)| *code == id) {
            let note = std::fs::read_to_string(root.join(id).join("README.md")).unwrap_or_default();
            assert!(
                note.contains("cannot be raised"),
                "{id}: a code no fixture raises says why in its README.md"
            );
            continue;
        }
        let session = format!("{rel}/session.jsonl");
        let (out, seen) = if root.join(id).join("args").is_file() {
            let out = run_command_fixture(&root.join(id));
            let seen = format!("{}{}", stdout(&out), stderr(&out));
            (out, seen)
        } else if repo_root().join(&session).is_file() {
            let out = run(&[
                "--rubric",
                &rel,
                "--source",
                &session,
                "--all",
                "--no-record",
            ]);
            assert_eq!(code(&out), 1, "{id}: a session not graded fails the run");
            let seen = stderr(&out);
            (out, seen)
        } else {
            let json = run(&["rubric", "validate", &rel, "--format", "json"]);
            let codes = match serde_json::from_str::<Value>(&stdout(&json)) {
                Ok(report) => codes_of(&report),
                // A folder that is no pack is refused before it is validated.
                Err(_) => vec![],
            };
            let out = run(&["rubric", "validate", &rel]);
            let text = format!("{}{}", stdout(&out), stderr(&out));
            assert!(
                codes.iter().any(|c| c == id) || text.contains(&format!("[{id}]")),
                "{id} is not raised by its fixture: {codes:?}\n{text}"
            );
            (out, text)
        };
        // An error refuses the pack or fails the run; a warning lets it work.
        assert_eq!(
            code(&out) != 0,
            id.starts_with('E'),
            "{id}: exit {}",
            code(&out)
        );
        // The code the fixture is for and no other, but the verdict a failed check ends with
        // (`error[E202]: 1 of 1 session could not be graded`).
        let shown = codes_shown(&seen);
        assert!(shown.contains(id), "{id} is not shown to the user:\n{seen}");
        let others: Vec<&String> = shown
            .iter()
            .filter(|c| *c != id && !(c.as_str() == "E202" && code(&out) == 1))
            .collect();
        assert!(
            others.is_empty(),
            "{id}'s fixture raises {others:?} too:\n{seen}"
        );
        // A link's target is shown resolved (E009), and a report with the time it was graded.
        let root = std::fs::canonicalize(repo_root()).expect("the repository's path");
        let seen = without_grading_time(&seen).replace(&format!("{}/", root.display()), "[REPO]/");
        let seen = common::registry_lists(&seen);
        insta::assert_snapshot!(format!("code_{id}"), seen);
    }
}

/// The codes no fixture can raise through the binary, and why: each folder's README.md says
/// it too.
const NOT_RAISED: &[(&str, &str)] = &[
    (
        "E041",
        "the binary refuses a judged pack without a judge before reading (E201), and `rubric test` a fixture without a judgment (E203)",
    ),
    (
        "E108",
        "a damaged database is refused when it is opened (E105); E108 is a query failing after that",
    ),
    (
        "E112",
        "the binary reads a folder as the files of its formats, and one with none is E115",
    ),
    (
        "E114",
        "the binary reads a folder as the files of its formats, and an empty one is E115",
    ),
    (
        "E212",
        "the MCP server answers malformed input with JSON-RPC errors and ends cleanly when its client leaves",
    ),
    (
        "E217",
        "serde_json fails only on a map with keys that are not text, and no output of grade has one",
    ),
];

/// The codes shown in `text`: `error[E101]: …`, `warning[W103]: …`, and `… [E033]` at the end
/// of an error's line (not a quoted `allow: [E012]` of a pack).
fn codes_shown(text: &str) -> std::collections::BTreeSet<String> {
    let is_code = |c: &str| {
        c.len() == 4
            && (c.starts_with('E') || c.starts_with('W'))
            && c[1..].bytes().all(|b| b.is_ascii_digit())
    };
    let mut codes = std::collections::BTreeSet::new();
    for line in text.lines() {
        let head = ["error[", "warning["]
            .iter()
            .find_map(|p| line.strip_prefix(p))
            .and_then(|rest| rest.split_once("]:"))
            .map(|(code, _)| code);
        let tail = Some(line)
            .filter(|l| l.starts_with("error") || l.starts_with("warning"))
            .and_then(|l| l.strip_suffix(']'))
            .and_then(|rest| rest.rsplit_once(" ["))
            .map(|(_, code)| code);
        codes.extend(
            head.into_iter()
                .chain(tail)
                .filter(|c| is_code(c))
                .map(str::to_owned),
        );
    }
    codes
}

/// Runs a command fixture (a folder with `args`) in a temporary copy of its folder, as its
/// README describes, and returns the output with the copy's path as `[DIR]`.
fn run_command_fixture(folder: &std::path::Path) -> std::process::Output {
    let copy = tempfile::tempdir().expect("a temporary folder");
    copy_folder(folder, copy.path());
    let dir = copy.path();
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    let args: Vec<String> = read("args")
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    let mut cmd = grade_bin();
    cmd.current_dir(dir).args(&args);
    for line in read("env").lines().filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once('=').expect("`NAME=VALUE` in env");
        cmd.env(name, value);
    }
    // Kept alive until the command has run: a lock held by another process.
    let mut held = Vec::new();
    for line in read("setup").lines().filter(|l| !l.is_empty()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["cleo-db", log, db] => write_cleo_db(&dir.join(log), &dir.join(db)),
            ["sql", db, ..] => {
                let statements = line.splitn(3, ' ').nth(2).unwrap_or_default();
                rusqlite::Connection::open(dir.join(db))
                    .unwrap()
                    .execute_batch(statements)
                    .unwrap();
            }
            ["lock", db] => {
                let writer = rusqlite::Connection::open(dir.join(db)).unwrap();
                writer
                    .execute_batch("BEGIN EXCLUSIVE; UPDATE audit_log SET action = action;")
                    .unwrap();
                held.push(writer);
            }
            ["hot-journal", db] => {
                // A write caught half-way, as `a_hot_journal_is_reported_as_one_not_as_foreign`
                // makes one: the copy of a database and its journal mid-transaction.
                let live = dir.join("live.db");
                std::fs::copy(dir.join(db), &live).unwrap();
                let writer = rusqlite::Connection::open(&live).unwrap();
                writer
                    .execute_batch("PRAGMA cache_size=1; BEGIN; UPDATE audit_log SET details_json = hex(randomblob(2000));")
                    .unwrap();
                std::fs::copy(&live, dir.join(db)).unwrap();
                std::fs::copy(
                    dir.join("live.db-journal"),
                    dir.join(format!("{db}-journal")),
                )
                .unwrap();
                writer.execute_batch("ROLLBACK").unwrap();
                drop(writer);
                std::fs::remove_file(&live).unwrap();
            }
            ["plugin", krate, file] => {
                let library = crate::plugins::built(krate);
                std::fs::copy(&library, dir.join(file)).unwrap();
                let sha = grade_engine::plugin::sha256_hex(&std::fs::read(&library).unwrap());
                let manifest = dir.join("rubric.yaml");
                let text = std::fs::read_to_string(&manifest).unwrap();
                std::fs::write(&manifest, text.replace("{sha256}", &sha)).unwrap();
            }
            other => panic!("unknown setup `{}`", other.join(" ")),
        }
    }
    if dir.join("stdin").is_file() {
        cmd.stdin(std::fs::File::open(dir.join("stdin")).unwrap());
    } else {
        cmd.stdin(std::process::Stdio::null());
    }
    if let Some(path) = read("stdout").lines().next() {
        let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        cmd.stdout(file);
    }
    let mut out = cmd.output().expect("the grade binary runs");
    drop(held);
    let shown = dir.display().to_string();
    for stream in [&mut out.stdout, &mut out.stderr] {
        *stream = String::from_utf8_lossy(stream)
            .replace(&shown, "[DIR]")
            .into_bytes();
    }
    out
}

/// Copies a fixture folder, links as links.
fn copy_folder(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for item in std::fs::read_dir(from).unwrap() {
        let item = item.unwrap();
        let target = to.join(item.file_name());
        let kind = item.file_type().unwrap();
        if kind.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(std::fs::read_link(item.path()).unwrap(), &target).unwrap();
        } else if kind.is_dir() {
            copy_folder(&item.path(), &target);
        } else {
            std::fs::copy(item.path(), &target).unwrap();
        }
    }
}
