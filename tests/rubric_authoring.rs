//! Writing packs: validation with exact places, pack tests with coverage, scaffolding,
//! and the Rhai sandbox.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use common::*;
use serde_json::Value;

fn pack_fixture(name: &str) -> String {
    format!("tests/fixtures/packs/{name}")
}

/// The packs the binary ships.
const SHIPPED: [&str; 5] = [
    "cleo-v1",
    "cleo-v2",
    "claude-code-v1",
    "coding-agent-v1",
    "langfuse-v1",
];

#[test]
fn every_shipped_pack_validates_without_warnings() {
    for pack in SHIPPED {
        let out = run(&["rubric", "validate", pack]);
        assert_eq!(code(&out), 0, "{pack}: {}", stdout(&out));
        assert!(
            stdout(&out).ends_with("is valid: 0 errors, 0 warnings\n"),
            "{pack}: {}",
            stdout(&out)
        );
    }
}

/// Each class of problem is reported with its file, line and column and a snippet, all of a
/// pack's problems in one run, and the run exits 1.
#[test]
fn validate_reports_each_problem_class_with_its_place() {
    let mut report = String::new();
    for name in [
        "broken-yaml",
        "broken-top-level",
        "broken-structure",
        "broken-references",
        "broken-script",
        "broken-script-names",
    ] {
        let out = run(&["rubric", "validate", &pack_fixture(name)]);
        assert_eq!(code(&out), 1, "{name}: {}", stdout(&out));
        // The verdict is the report's last line, said once (issue 48, friction 15).
        assert_eq!(stderr(&out), "", "{name}");
        assert!(
            stdout(&out).contains(" is invalid: "),
            "{name}: {}",
            stdout(&out)
        );
        report.push_str(&format!("=== {name}\n{}", stdout(&out)));
    }
    insta::assert_snapshot!("validate_broken_packs", report);
}

#[test]
fn validate_json_lists_every_problem_with_its_place_for_editors() {
    let out = run(&[
        "rubric",
        "validate",
        &pack_fixture("broken-references"),
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 1);
    let report: Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(report["valid"], false);
    let problems = report["problems"].as_array().expect("problems");
    assert_eq!(problems.len(), report["errors"].as_u64().unwrap() as usize);
    for p in problems {
        assert_eq!(p["severity"], "error");
        assert!(
            p["file"]
                .as_str()
                .unwrap()
                .ends_with("broken-references/rubric.yaml"),
            "{p}"
        );
        assert!(
            p["line"].as_u64().is_some() && p["column"].as_u64().is_some(),
            "no place: {p}"
        );
    }
    let selector = problems
        .iter()
        .find(|p| p["message"].as_str().unwrap().contains("`tsk_op`"))
        .expect("typo reported");
    assert_eq!(
        (selector["line"].as_u64(), selector["column"].as_u64()),
        (Some(16), Some(19))
    );
    assert_eq!(selector["path"], "dimensions[0].rules[0].for_each");
}

#[test]
fn static_checks_warn_but_the_pack_stays_valid() {
    let out = run(&["rubric", "validate", &pack_fixture("suspicious")]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    insta::assert_snapshot!("validate_suspicious_pack", stdout(&out));
}

#[test]
fn shipped_packs_pass_their_tests_with_every_rule_firing() {
    let elsewhere = tempfile::tempdir().unwrap();
    for pack in SHIPPED {
        // From any folder: the fixtures travel inside the binary.
        let out = run_in(
            elsewhere.path(),
            &[
                "rubric",
                "test",
                pack,
                "--coverage",
                "--min-coverage",
                "100",
            ],
        );
        assert_eq!(code(&out), 0, "{pack}: {}{}", stdout(&out), stderr(&out));
        let text = stdout(&out);
        assert!(
            text.contains("(100%)") && text.ends_with(" passed, 0 failed\n"),
            "{pack}: {text}"
        );
    }
}

#[test]
fn the_tutorial_pack_works_as_written() {
    let out = run(&["rubric", "validate", "tests/packs/tutorial"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let out = run(&[
        "rubric",
        "test",
        "tests/packs/tutorial",
        "--coverage",
        "--min-coverage",
        "100",
    ]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn a_failing_pack_test_prints_a_readable_diff_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("cleo-copy");
    copy_dir(&repo_root().join("rubrics/cleo-v1"), &pack);
    // The author "changes" the rubric: a description-less add now costs 4 points, not 5.
    let yaml = std::fs::read_to_string(pack.join("rubric.yaml")).unwrap();
    let changed = yaml.replacen(
        "        points: -5\n        flag: \"tasks.add without",
        "        points: -4\n        flag: \"tasks.add missing",
        1,
    );
    assert_ne!(yaml, changed);
    std::fs::write(pack.join("rubric.yaml"), changed).unwrap();

    let out = run_in(dir.path(), &["rubric", "test", "./cleo-copy"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.ends_with("8 passed, 2 failed\n"), "{text}");
    insta::assert_snapshot!("pack_test_failure_diff", text);

    let out = run_in(dir.path(), &["rubric", "test", "./cleo-copy", "--update"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let out = run_in(dir.path(), &["rubric", "test", "./cleo-copy"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(stdout(&out).ends_with("10 passed, 0 failed\n"));
}

/// A copy of cleo-v1 with only its `not-text` fixture: a graded session and two that
/// CLEO's grader throws on, whose E040 errors the expectation gives.
fn pack_expecting_errors(dir: &std::path::Path) -> std::path::PathBuf {
    let pack = dir.join("refusing");
    copy_dir(&repo_root().join("rubrics/cleo-v1"), &pack);
    for name in ["corpus-sample", "example", "unprintable"] {
        for suffix in [".jsonl", ".expected.jsonl"] {
            std::fs::remove_file(pack.join("tests").join(format!("{name}{suffix}"))).unwrap();
        }
    }
    pack
}

#[test]
fn a_pack_test_passes_when_a_session_fails_with_the_expected_error() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack_expecting_errors(dir.path());
    let out = run_in(dir.path(), &["rubric", "test", "./refusing"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(stdout(&out), "3 passed, 0 failed\n");

    // Updating writes the errors again, and says how many sessions are expected to fail.
    let expected = pack.join("tests/not-text.expected.jsonl");
    let before = std::fs::read_to_string(&expected).unwrap();
    let out = run_in(dir.path(), &["rubric", "test", "./refusing", "--update"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "updated the expectations of 3 sessions in 1 fixture (2 not graded: their errors are expected)\n"
    );
    assert_eq!(std::fs::read_to_string(&expected).unwrap(), before);
}

#[test]
fn a_pack_test_fails_when_a_session_fails_otherwise_than_expected() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack_expecting_errors(dir.path());
    let expected = pack.join("tests/not-text.expected.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(&expected)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    // The graded session is expected to fail, the title's error is expected with another
    // message, and the description's session is expected to be graded.
    let wrong = [
        r#"{"sessionId":"graded","error":{"code":"E040"}}"#.to_owned(),
        lines[0].replace(r#""graded""#, r#""description-number""#),
        lines[2].replace("(`3`)", "(`4`)"),
    ];
    std::fs::write(&expected, wrong.join("\n") + "\n").unwrap();
    let out = run_in(dir.path(), &["rubric", "test", "./refusing"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "FAIL tests/not-text.jsonl session `graded`\n  \
         expected error: code E040, any message\n  \
         got a result: totalScore 80, maxScore 100\n\n\
         FAIL tests/not-text.jsonl session `description-number`\n  \
         expected a result, got error: rubric `cleo-v1` cannot grade session `description-number`: `blank` of selector `task_added_without_description` tests text, and `params.description` of the entry at `not-text.jsonl:5` is a number (`7`) [E040]\n\n\
         FAIL tests/not-text.jsonl session `title-number`\n  \
         error.message:\n    \
         - rubric `cleo-v1` cannot grade session `title-number`: `normalize` of metric `duplicate_titles` reads text, and `params.title` of the entry at `not-text.jsonl:6` is a number (`4`) [E040]\n    \
         + rubric `cleo-v1` cannot grade session `title-number`: `normalize` of metric `duplicate_titles` reads text, and `params.title` of the entry at `not-text.jsonl:6` is a number (`3`) [E040]\n\n\
         0 passed, 3 failed\n"
    );
    assert_eq!(stderr(&out), "error[E202]: 3 pack tests failed\n");
}

#[test]
fn coverage_below_the_minimum_fails_and_names_the_rules() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("narrow");
    copy_dir(&repo_root().join("rubrics/cleo-v1"), &pack);
    // Only the small example is left: its two sessions leave some rules unfired.
    for name in ["corpus-sample", "not-text"] {
        for suffix in [".jsonl", ".expected.jsonl"] {
            std::fs::remove_file(pack.join("tests").join(format!("{name}{suffix}"))).unwrap();
        }
    }
    let out = run(&[
        "rubric",
        "test",
        pack.to_str().unwrap(),
        "--min-coverage",
        "100",
    ]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("is below the required 100%"), "{err}");
    assert!(
        err.contains("`taskHygiene/subtask-parent-check`") || err.contains("never fired"),
        "{err}"
    );
}

#[test]
fn a_scaffolded_pack_validates_and_passes_its_own_test() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &["rubric", "new", "team-rubric"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    for file in [
        "rubric.yaml",
        "failed_calls.rhai",
        "README.md",
        "tests/basic.jsonl",
        "tests/basic.expected.jsonl",
    ] {
        assert!(
            dir.path().join("team-rubric").join(file).is_file(),
            "{file} missing"
        );
    }
    let out = run_in(dir.path(), &["rubric", "validate", "./team-rubric"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("0 errors, 0 warnings"),
        "{}",
        stdout(&out)
    );
    let out = run_in(
        dir.path(),
        &["rubric", "test", "./team-rubric", "--min-coverage", "100"],
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));

    let out = run_in(
        dir.path(),
        &["rubric", "new", "my-cleo", "--from", "cleo-v2"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let yaml = std::fs::read_to_string(dir.path().join("my-cleo/rubric.yaml")).unwrap();
    assert!(
        yaml.contains("\nid: \"my-cleo\"\nversion: 0.1.0\n"),
        "{yaml}"
    );
    let out = run_in(
        dir.path(),
        &["rubric", "test", "./my-cleo", "--min-coverage", "100"],
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));

    let again = run_in(dir.path(), &["rubric", "new", "team-rubric"]);
    assert_eq!(code(&again), 2, "an existing folder is never overwritten");
}

#[test]
fn a_runaway_script_fails_its_session_cleanly_and_the_others_still_grade() {
    let out = run(&[
        "--rubric",
        &pack_fixture("runaway"),
        "--source",
        "examples/cleo-audit.jsonl",
        "--all",
        "--no-record",
        "--format",
        "jsonl",
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let graded = json_lines(&stdout(&out));
    assert_eq!(graded.len(), 1);
    assert_eq!(graded[0]["sessionId"], "session-demo-good");
    let err = stderr(&out);
    assert!(
        err.contains("rubric `runaway`, rule `spin`, session `session-demo-sloppy`: the script failed: spin.rhai:3: too many operations"),
        "{err}"
    );
    assert!(err.contains("1 of 2 sessions could not be graded"), "{err}");
}

#[test]
fn scripts_cannot_load_modules_or_read_the_clock() {
    let out = run(&[
        "--rubric",
        &pack_fixture("sandbox"),
        "--source",
        "examples/cleo-audit.jsonl",
        "--all",
        "--no-record",
        "--format",
        "jsonl",
    ]);
    assert_eq!(code(&out), 1);
    assert!(
        stdout(&out).is_empty(),
        "a session escaped: {}",
        stdout(&out)
    );
    let err = stderr(&out);
    assert!(
        err.contains(
            "session `session-demo-good`: the script failed: escape.rhai:3: module not found: os"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "session `session-demo-sloppy`: the script failed: escape.rhai:6: function not found: timestamp"
        ),
        "{err}"
    );
}

#[test]
fn a_shipped_pack_and_its_folder_have_the_same_digest() {
    let digest = |rubric: &str| -> Value {
        let out = run(&[
            "--rubric",
            rubric,
            "--source",
            "examples/cleo-audit.jsonl",
            "--no-record",
            "--format",
            "json",
            "session-demo-good",
        ]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        serde_json::from_str::<Value>(&stdout(&out)).unwrap()["rubric"]["digest"].clone()
    };
    assert_eq!(digest("cleo-v1"), digest("./rubrics/cleo-v1"));
    assert_ne!(digest("cleo-v1"), digest("cleo-v2"));
}

#[test]
fn rubric_path_folders_are_listed_and_found_by_id() {
    let out = run(&["rubric", "list", "--rubric-path", "tests/packs"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let tutorial = text
        .lines()
        .find(|l| l.starts_with("tutorial "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(tutorial.contains("tests/packs/tutorial"), "{tutorial}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("cleo-v1 ") && l.ends_with("shipped")),
        "{text}"
    );

    let out = run(&["rubric", "show", "tutorial", "--rubric-path", "tests/packs"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let by_env = common::grade_bin()
        .current_dir(repo_root())
        .env("GRADE_RUBRIC_PATH", "tests/packs")
        .args([
            "--rubric",
            "tutorial",
            "--source",
            "examples/cleo-audit.jsonl",
            "--all",
            "--no-record",
            "--format",
            "jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&by_env), 0, "{}", stderr(&by_env));
    assert_eq!(json_lines(&stdout(&by_env))[0]["rubric"]["id"], "tutorial");
}

/// `rubric list` names a pack by the id its `rubric.yaml` declares; a folder named otherwise
/// was listed as `other-id` and then "unknown rubric `other-id`" to `--rubric other-id`.
#[test]
fn a_pack_is_found_by_the_id_rubric_list_shows_whatever_its_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("my-folder");
    std::fs::create_dir(&folder).unwrap();
    let text = std::fs::read_to_string(repo_root().join("tests/packs/tutorial/rubric.yaml"))
        .unwrap()
        .replacen("id: tutorial", "id: other-id", 1);
    assert!(text.contains("id: other-id"));
    std::fs::write(folder.join("rubric.yaml"), text).unwrap();
    for entry in std::fs::read_dir(repo_root().join("tests/packs/tutorial")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() && path.file_name().is_some_and(|n| n != "rubric.yaml") {
            std::fs::copy(&path, folder.join(path.file_name().unwrap())).unwrap();
        }
    }
    let path = dir.path().to_str().unwrap();
    let listed = stdout(&run(&["rubric", "list", "--rubric-path", path]));
    assert!(
        listed.lines().any(|l| l.starts_with("other-id ")),
        "{listed}"
    );
    for spec in ["other-id", "my-folder"] {
        let out = run(&[
            "--rubric-path",
            path,
            "--rubric",
            spec,
            "--source",
            "examples/cleo-audit.jsonl",
            "--all",
            "--no-record",
            "--format",
            "jsonl",
        ]);
        assert_eq!(code(&out), 0, "{spec}: {}", stderr(&out));
        assert_eq!(json_lines(&stdout(&out))[0]["rubric"]["id"], "other-id");
    }
}

/// The `text` block that follows `marker` in the tutorial.
fn tutorial_block(marker: &str) -> String {
    let doc =
        std::fs::read_to_string(repo_root().join("docs/tutorial.md")).expect("docs/tutorial.md");
    let after = &doc[doc
        .find(marker)
        .unwrap_or_else(|| panic!("the tutorial has `{marker}`"))..];
    let start = after.find("```text\n").expect("a text block follows") + "```text\n".len();
    let body = &after[start..];
    body[..body.find("```").expect("the block ends")].to_owned()
}

fn without_graded_time(text: &str) -> String {
    text.lines()
        .map(|l| match l.find(" · graded ") {
            Some(at) => format!("{} · graded [TIME]", &l[..at]),
            None => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_tutorials_printed_outputs_are_what_grade_prints() {
    let out = run(&["rubric", "test", "tests/packs/tutorial", "--coverage"]);
    assert_eq!(stdout(&out), tutorial_block("in how many it fired at all:"));

    let out = run(&[
        "--rubric",
        "tests/packs/tutorial",
        "--source",
        "tests/packs/tutorial/tests/sessions.jsonl",
        "--no-record",
        "--explain",
        "tut-sloppy",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        without_graded_time(&stdout(&out)),
        without_graded_time(&tutorial_block(
            "prints (the `graded` time is when you run it):"
        ))
    );
}

/// Issue 48, friction 14: the tutorial wrote into `tests/packs/tutorial/`, which holds the
/// finished pack, and never used `grade rubric new`. Its commands are run here as written, in
/// order, in a fresh folder: `rubric new`, the `rm` of the sample files, then (once the files
/// the page shows are written) every `grade` command, each succeeding; the files the page
/// shows are the finished pack's, piece by piece.
#[test]
fn the_tutorial_runs_as_written_in_a_folder_of_its_own() {
    let doc =
        std::fs::read_to_string(repo_root().join("docs/tutorial.md")).expect("docs/tutorial.md");
    let finished = repo_root().join("tests/packs/tutorial");
    let read = |rel: &str| std::fs::read_to_string(finished.join(rel)).expect("a pack file");
    let blocks = |kind: &str| -> Vec<String> {
        let fence = format!("```{kind}\n");
        doc.split(&fence)
            .skip(1)
            .map(|b| b[..b.find("```").expect("the block ends")].to_owned())
            .collect()
    };
    // The pieces the page shows make up the finished pack.
    let yaml = read("rubric.yaml");
    for block in blocks("yaml") {
        assert!(yaml.contains(&block), "not in the finished pack:\n{block}");
    }
    assert_eq!(blocks("rhai"), [read("failure_streak.rhai")]);
    assert!(blocks("json").contains(&read("tests/sessions.jsonl")));

    let dir = tempfile::tempdir().expect("a temp dir");
    let mut written = false;
    let mut ran = Vec::new();
    for line in blocks("sh")
        .iter()
        .flat_map(|b| b.lines().map(str::to_owned).collect::<Vec<_>>())
    {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first() {
            Some(&"rm") => {
                for file in &words[1..] {
                    let path = dir.path().join(file);
                    assert!(path.is_file(), "`rubric new` made no `{file}`");
                    std::fs::remove_file(path).expect("removed");
                }
            }
            Some(&"grade") => {
                if !written && words.get(1..3) != Some(&["rubric", "new"]) {
                    // What the page has the reader write, between `rubric new` and `validate`.
                    let pack = dir.path().join("tutorial");
                    std::fs::write(pack.join("rubric.yaml"), &yaml).expect("written");
                    for file in ["failure_streak.rhai", "tests/sessions.jsonl"] {
                        std::fs::write(pack.join(file), read(file)).expect("written");
                    }
                    written = true;
                }
                let out = run_in(dir.path(), &words[1..]);
                assert_eq!(code(&out), 0, "`{line}`: {}", stderr(&out));
                ran.push((line.clone(), stdout(&out)));
            }
            other => panic!("the tutorial runs `{other:?}`, which this test does not mirror"),
        }
    }
    let printed = |command: &str| -> &str {
        ran.iter()
            .find(|(line, _)| line == command)
            .map(|(_, out)| out.as_str())
            .unwrap_or_else(|| panic!("the tutorial does not run `{command}`"))
    };
    assert_eq!(
        printed("grade rubric new tutorial"),
        tutorial_block("```sh\ngrade rubric new tutorial\n```")
    );
    assert_eq!(
        printed("grade rubric validate tutorial"),
        "tutorial 1.0.0 is valid: 0 errors, 0 warnings\n"
    );
    assert!(printed("grade rubric test tutorial").ends_with("4 passed, 0 failed\n"));
    assert_eq!(
        printed("grade rubric test tutorial --coverage"),
        tutorial_block("in how many it fired at all:")
    );
    assert_eq!(
        without_graded_time(printed(
            "grade --rubric tutorial --source tutorial/tests/sessions.jsonl --no-record --explain tut-sloppy"
        )),
        without_graded_time(&tutorial_block(
            "prints (the `graded` time is when you run it):"
        ))
    );
    // The expectations `--update` wrote are the finished pack's.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("tutorial/tests/sessions.expected.jsonl"))
            .expect("written by --update"),
        read("tests/sessions.expected.jsonl")
    );
}

/// `rubric new` promises a pack that validates and passes its own test: a name of digits or
/// a YAML word was written unquoted (an integer id: invalid), a copy of a pack with fixtures
/// in subfolders or with judgments failed its tests, and a pack that could not be made was
/// left behind half made (so the same name was then refused as existing).
#[test]
fn a_new_pack_passes_its_own_test_whatever_its_name_and_origin_or_is_not_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    for (name, from) in [
        ("123", None),
        ("true", None),
        ("cc", Some("claude-code-v1")),
        ("lf", Some("langfuse-v1")),
    ] {
        let mut args = vec!["rubric", "new", name];
        args.extend(from.map(|f| ["--from", f]).into_iter().flatten());
        let made = run_in(dir.path(), &args);
        assert_eq!(code(&made), 0, "{name}: {}", stderr(&made));
        let tested = run_in(dir.path(), &["rubric", "test", name]);
        assert_eq!(
            code(&tested),
            0,
            "{name}: {}{}",
            stdout(&tested),
            stderr(&tested)
        );
        assert!(
            stdout(&tested).contains(" 0 failed"),
            "{name}: {}",
            stdout(&tested)
        );
    }
    // A pack whose fixture cannot be read cannot be copied whole: nothing is left behind.
    std::fs::write(dir.path().join("123/tests/broken.jsonl"), "{not json\n").unwrap();
    let copied = run_in(dir.path(), &["rubric", "new", "copy", "--from", "./123"]);
    assert_ne!(code(&copied), 0, "{}", stdout(&copied));
    assert!(
        !dir.path().join("copy").exists(),
        "a half-made pack was left behind"
    );
}

/// `--format jsonl` means one JSON value a line everywhere: `rubric list`, `show` and
/// `validate` printed pretty, multi-line JSON for it.
#[test]
fn rubric_list_show_and_validate_print_json_lines_in_jsonl() {
    for args in [
        &["rubric", "list", "--format", "jsonl"][..],
        &["rubric", "show", "cleo-v1", "--format", "jsonl"],
        &["rubric", "validate", "cleo-v1", "--format", "jsonl"],
    ] {
        let out = run(args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(!text.is_empty(), "{args:?}");
        for line in text.lines() {
            serde_json::from_str::<Value>(line)
                .unwrap_or_else(|e| panic!("{args:?}: not a JSON line: {e}: {line}"));
        }
    }
}

/// Editors on Windows save UTF-8 with a byte order mark, which YAML allows: it made
/// `rubric.yaml` "more than one document" (E001) and a script an unexpected invisible
/// character.
#[test]
fn a_byte_order_mark_at_the_start_of_a_pack_file_is_not_content() {
    let dir = tempfile::tempdir().unwrap();
    let made = run_in(dir.path(), &["rubric", "new", "marked"]);
    assert_eq!(code(&made), 0, "{}", stderr(&made));
    for file in ["rubric.yaml", "failed_calls.rhai"] {
        let path = dir.path().join("marked").join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("\u{FEFF}{text}")).unwrap();
    }
    let out = run_in(dir.path(), &["rubric", "validate", "marked"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let tested = run_in(dir.path(), &["rubric", "test", "marked"]);
    assert_eq!(code(&tested), 0, "{}{}", stdout(&tested), stderr(&tested));
}
