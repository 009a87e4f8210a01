//! A new user's walk through `grade`: what the tutorial and the reference show is what the
//! commands print, help and explanations promise only what the binary does, and plausible
//! mistakes (the wrong file given, a file that is not there) get a message in words.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use common::*;

const EXAMPLE: &str = "examples/cleo-audit.jsonl";

/// The first fenced block of kind `kind` after `marker` in a page of `docs/`.
fn doc_block(page: &str, marker: &str, kind: &str) -> String {
    let doc = std::fs::read_to_string(repo_root().join("docs").join(page)).expect("the page");
    let after = &doc[doc
        .find(marker)
        .unwrap_or_else(|| panic!("{page} has `{marker}`"))..];
    let fence = format!("```{kind}\n");
    let start = after.find(&fence).expect("a block follows") + fence.len();
    let body = &after[start..];
    body[..body.find("```").expect("the block ends")].to_owned()
}

#[test]
fn the_tutorials_validate_output_and_expected_line_are_what_grade_writes() {
    let out = run(&["rubric", "validate", "tests/packs/tutorial"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        doc_block(
            "tutorial.md",
            "```sh\ngrade rubric validate tutorial\n```",
            "text"
        )
    );

    // The line is shown as `--update` writes it, so a reader can find it in the file.
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("tutorial");
    std::fs::create_dir_all(pack.join("tests")).unwrap();
    for file in ["rubric.yaml", "failure_streak.rhai", "tests/sessions.jsonl"] {
        std::fs::copy(
            repo_root().join("tests/packs/tutorial").join(file),
            pack.join(file),
        )
        .unwrap();
    }
    let out = run(&["rubric", "test", pack.to_str().unwrap(), "--update"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let written = std::fs::read_to_string(pack.join("tests/sessions.expected.jsonl")).unwrap();
    let sloppy = written
        .lines()
        .find(|l| l.contains("\"tut-sloppy\""))
        .expect("a line for tut-sloppy");
    assert_eq!(
        doc_block("tutorial.md", "The line of `tut-sloppy`", "json").trim_end(),
        sloppy
    );
}

/// An audit log given to `--list --grades` has a `sessionId` on every line; it was listed as
/// one grade per entry, each with no rubric and no score.
#[test]
fn list_refuses_an_audit_log_given_as_the_grades_file() {
    let out = run(&["--list", "--grades", EXAMPLE]);
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "error[E206]: examples/cleo-audit.jsonl:1: not a grade result: missing fields `totalScore`, `maxScore`\n"
    );

    let dir = tempfile::tempdir().unwrap();
    let grades = dir.path().join("GRADES.jsonl");
    std::fs::write(
        &grades,
        "{\"sessionId\":\"s1\",\"totalScore\":5,\"maxScore\":10}\n{\"sessionId\":\"s2\",\"maxScore\":10}\n",
    )
    .unwrap();
    let out = run(&["--list", "--grades", grades.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        format!(
            "error[E206]: {}:2: not a grade result: missing field `totalScore`\n",
            grades.display()
        )
    );
}

/// A judgment, a config-ids file or a file of score bodies that is not there said
/// `entity not found` or `no such file or directory`, where a missing `--source` is named
/// in words.
#[test]
fn a_missing_judgment_config_ids_or_score_bodies_file_is_named_as_not_existing() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &["--rubric", "langfuse-v1", "--judgment", "nope.json", "s1"],
    );
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error[E201]: judgment `nope.json` does not exist\n"
    );

    let out = run_in(dir.path(), &["push", "--langfuse", "nope.jsonl"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error[E201]: file of score bodies `nope.jsonl` does not exist\n"
    );

    // Standard input is named as a grading run names it, not by the `-` typed for it.
    let out = run_in(dir.path(), &["push", "--langfuse", "-"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "warning: `<stdin>` holds no score bodies: nothing was pushed\n"
    );

    let judgments: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            repo_root().join("rubrics/langfuse-v1/tests/category-edges.judgments.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let (session, judgment) = judgments.as_object().unwrap().iter().next().unwrap();
    std::fs::write(dir.path().join("j.json"), judgment.to_string()).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "langfuse-v1",
            "--judgment",
            "j.json",
            "--emit",
            "langfuse",
            "--config-ids",
            "nope.json",
            session,
        ],
    );
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error[E201]: config ids file `nope.json` does not exist\n"
    );
}

/// `rubric explain E022` listed the placeholders without `{percent.NAME}` and the fallback
/// form, so a pack author reading it would think them unknown.
#[test]
fn the_placeholder_explanation_names_every_placeholder_of_the_reference() {
    let out = run(&["rubric", "explain", "E022"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let explained = stdout(&out).replace('\n', " ");
    let doc = std::fs::read_to_string(repo_root().join("docs/rubric-packs.md")).unwrap();
    let table = &doc[doc.find("| Placeholder | Prints |").expect("the table")..];
    let rows: Vec<&str> = table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert_eq!(rows.len(), 7, "{rows:?}");
    for row in rows {
        let placeholder = row.split('`').nth(1).expect("a placeholder");
        // `{entry.PATH}` is `{entry.FIELD}` in the explanation: the kind is what must match.
        let kind = match placeholder.find('.') {
            Some(dot) if !placeholder.ends_with(".position}") => &placeholder[..=dot],
            _ => placeholder,
        };
        assert!(explained.contains(kind), "{kind} missing from: {explained}");
        if placeholder.contains("\\|fallback") {
            assert!(explained.contains("|fallback}"), "{explained}");
        }
    }
}

/// `rubric pin` and `rubric judgment-schema` took `--format` and printed the same text
/// whatever it said.
#[test]
fn pin_and_judgment_schema_take_no_format_they_would_ignore() {
    for args in [
        ["rubric", "pin", "cleo-v1", "--format", "json"],
        [
            "rubric",
            "judgment-schema",
            "langfuse-v1",
            "--format",
            "jsonl",
        ],
    ] {
        let out = run(&args);
        assert_eq!(code(&out), 2, "{args:?}");
        assert!(
            stderr(&out).starts_with("error: unexpected argument '--format' found"),
            "{}",
            stderr(&out)
        );
    }
    let out = run(&["rubric", "judgment-schema", "langfuse-v1"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let schema: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
}

/// `--output` naming the grades file truncated the recorded history and wrote the report
/// there, then appended this run's grades after it: in human form the file no longer
/// listed. Refused before anything is written, also when neither file exists yet.
#[test]
fn output_into_the_grades_file_is_refused_before_the_history_is_touched() {
    let dir = tempfile::tempdir().unwrap();
    let source = repo_root().join(EXAMPLE);
    let grade_to = |extra: &[&str]| {
        let mut args = vec![
            "--rubric",
            "cleo-v1",
            "--source",
            source.to_str().unwrap(),
            "--all",
            "--grades",
            "G.jsonl",
        ];
        args.extend_from_slice(extra);
        run_in(dir.path(), &args)
    };
    let out = grade_to(&["--format", "jsonl"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let history = std::fs::read_to_string(dir.path().join("G.jsonl")).unwrap();

    for output in ["G.jsonl", "./G.jsonl"] {
        let out = grade_to(&["--output", output]);
        assert_eq!(code(&out), 2);
        assert_eq!(stdout(&out), "");
        assert_eq!(
            stderr(&out),
            format!("error[E201]: `--output {output}` is the grades file this run records to: results written there would replace its history (write them elsewhere, or give `--no-record`)\n")
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("G.jsonl")).unwrap(),
            history
        );
    }

    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            source.to_str().unwrap(),
            "--all",
            "--grades",
            "new.jsonl",
            "-o",
            "new.jsonl",
        ],
    );
    assert_eq!(code(&out), 2);
    assert!(!dir.path().join("new.jsonl").exists());

    // Elsewhere, the two are written as asked.
    let out = grade_to(&["--output", "report.txt"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(std::fs::read_to_string(dir.path().join("report.txt"))
        .unwrap()
        .starts_with("session-demo-good  100/100 (100%)"));
}

/// `--source -` (and an arm's `NAME=-`) reads standard input, `-o -` writes standard output
/// and `--list --grades -` reads standard input, and a device's error tells the user to give
/// `-`, but no help text or page said that `-` works.
#[test]
fn help_says_where_dash_means_standard_input_or_output() {
    // An option's help: its line and those after it, up to the next option's.
    let option = |help: &str, name: &str| -> String {
        let mut lines = help.lines().skip_while(|l| {
            !l.trim_start()
                .split(", ")
                .any(|part| part.starts_with(&format!("{name} <")))
        });
        let first = lines
            .next()
            .unwrap_or_else(|| panic!("{name} in {help}"))
            .to_owned();
        let rest: Vec<&str> = lines
            .take_while(|l| !l.trim_start().starts_with('-'))
            .collect();
        format!("{first}\n{}", rest.join("\n"))
    };
    let grade_help = stdout(&run(&["--help"]));
    assert!(
        option(&grade_help, "--source").contains("`-` for standard input"),
        "{grade_help}"
    );
    let compare_help = stdout(&run(&["compare", "--help"]));
    for name in ["--source", "--arm"] {
        assert!(
            option(&compare_help, name).contains("`-` for standard input"),
            "{name}: {compare_help}"
        );
    }
    assert!(
        option(&grade_help, "--output").contains("(`-` is standard output)"),
        "{grade_help}"
    );
    assert!(
        option(&grade_help, "--grades").contains("`-`: standard input, for `--list` only"),
        "{grade_help}"
    );
    let sources = std::fs::read_to_string(repo_root().join("docs/sources.md")).unwrap();
    assert!(sources.contains("`--source -` reads standard input"));

    let out = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        "/dev/null",
        "--all",
        "--no-record",
    ]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).ends_with("give `-` to read standard input\n"),
        "{}",
        stderr(&out)
    );
}

/// A judge command that failed was reported as `it exited with exit status: 1; it said ``` (the
/// standard library's words and an empty quote), and an empty `--judge-cmd` (an unset
/// variable) ran `sh -c ''` and blamed the judge's reply.
#[test]
fn a_failing_or_empty_judge_command_is_reported_in_words() {
    let judged = |cmd: &str| {
        run(&[
            "--rubric",
            "langfuse-v1",
            "--source",
            EXAMPLE,
            "--no-record",
            "--judge-cmd",
            cmd,
            "session-demo-good",
        ])
    };
    let out = judged("exit 7");
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error[E210]: judge `exit 7` for session `session-demo-good`, chunk 1 of 1: it exited with code 7; it printed nothing\n"
    );
    let out = judged("echo overloaded >&2; exit 3");
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).ends_with(": it exited with code 3; it said `overloaded`\n"),
        "{}",
        stderr(&out)
    );
    let out = judged("kill -9 $$");
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).ends_with(": it was killed by signal 9; it printed nothing\n"),
        "{}",
        stderr(&out)
    );

    for empty in ["", "  "] {
        let out = judged(empty);
        assert_eq!(code(&out), 2);
        assert!(
            stderr(&out).starts_with(&format!(
                "error: invalid value '{empty}' for '--judge-cmd <CMD>': the command is empty: give the program that prints a judgment\n"
            )),
            "{}",
            stderr(&out)
        );
    }
}

/// The README asked for Rust 1.82 while the workspace declares (and its code needs) a later
/// one: a user on 1.82 met a build error the setup said they would not.
#[test]
fn the_readme_asks_for_the_rust_version_the_workspace_declares() {
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    let declared = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("the workspace declares a rust-version");
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("a Rust toolchain ({declared} or newer)")),
        "README does not ask for Rust {declared}"
    );
}

/// `--grades -` recorded into a new file named `-` (as `-o -` once wrote one), while
/// `--list --grades -` reads standard input.
#[test]
fn recording_to_grades_dash_is_refused_and_makes_no_file_named_dash() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            repo_root().join(EXAMPLE).to_str().unwrap(),
            "--all",
            "--grades",
            "-",
        ],
    );
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "error[E201]: `--grades -` would record to a file named `-`: grades are appended to a file (`--format jsonl` prints the results, `--no-record` records none)\n"
    );
    assert!(!dir.path().join("-").exists());

    // Listing from standard input still works: nothing on it is no grades.
    let out = run_in(dir.path(), &["--list", "--grades", "-"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "no grades recorded on standard input\n");
}

/// `compare --html -` and `--agreement -` wrote a file named `-`.
#[test]
fn html_and_agreement_to_dash_are_refused_and_make_no_file_named_dash() {
    let dir = tempfile::tempdir().unwrap();
    let source = repo_root().join(EXAMPLE);
    let source = source.to_str().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "compare", "--rubric", "cleo-v1", "--rubric", "cleo-v2", "--source", source, "--all",
            "--html", "-",
        ],
    );
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "error[E201]: `--html -` would write a file named `-`: give the page a file name (the report on standard output is `--format`'s)\n"
    );

    let judge = repo_root().join("tests/fixtures/judge/judge.sh");
    let out = run_in(
        dir.path(),
        &[
            "--rubric",
            "langfuse-v1",
            "--source",
            source,
            "--all",
            "--no-record",
            "--judge-cmd",
            &format!("sh {}", judge.display()),
            "--judge-runs",
            "2",
            "--agreement",
            "-",
        ],
    );
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "error[E201]: `--agreement -` would write a file named `-`: give the report a file name (the agreement is printed on standard error anyway)\n"
    );
    assert!(!dir.path().join("-").exists());
}

/// `--output` and `--agreement` into a folder that is not there failed only at the end of
/// the run, after every judge call was made and paid for; the agreement's error said
/// `cannot access`, of a file it was writing.
#[test]
fn output_and_agreement_into_a_missing_folder_are_refused_before_any_judge_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let asked = dir.path().join("asked");
    // A judge that leaves a mark when asked, and then fails.
    let judge = format!("touch {}; exit 1", asked.display());
    let source = repo_root().join(EXAMPLE);
    for (flag, what) in [
        ("--output", "output file"),
        ("--agreement", "agreement file"),
    ] {
        let out = run_in(
            dir.path(),
            &[
                "--rubric",
                "langfuse-v1",
                "--source",
                source.to_str().unwrap(),
                "--all",
                "--no-record",
                "--judge-cmd",
                &judge,
                "--judge-runs",
                "2",
                flag,
                "nodir/file.json",
            ],
        );
        assert_eq!(code(&out), 2);
        assert_eq!(
            stderr(&out),
            format!("error[E201]: cannot write {what} `nodir/file.json`: there is no folder `nodir` to write it in\n")
        );
        assert!(!asked.exists(), "{flag}: the judge was asked");
    }
}

/// `--list` said it takes only `--rubric`, `--session`, `--grades` and `--format`, yet ran
/// with any grading flag beside them and dropped it: `--list --output FILE` printed the
/// list and wrote no file, `--list --fail-under 50` gated nothing.
#[test]
fn list_refuses_grading_flags_it_would_drop() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--list",
            "--output",
            "list.txt",
            "--fail-under",
            "50",
            "--explain",
        ],
    );
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "error[E201]: `--list` shows recorded grades; it takes only `--rubric`, `--session`, `--grades` and `--format`: drop `--fail-under`, `--output`, `--explain`\n"
    );
    assert!(!dir.path().join("list.txt").exists());

    let out = run_in(dir.path(), &["--list", "--source", EXAMPLE, "--no-record"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).ends_with(": drop `--source`, `--no-record`\n"),
        "{}",
        stderr(&out)
    );

    // What it takes still lists.
    let out = run_in(
        dir.path(),
        &[
            "--list",
            "--rubric",
            "cleo-v1",
            "--session",
            "s",
            "--format",
            "json",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "[]\n");
}

/// `--list` loads no pack (its `--rubric` names the recorded grades' pack by id), yet took
/// `--rubric-path` and `--allow-plugins` and ignored them, as commands that load no pack did
/// before they refused them. Set in the environment, they stay harmless.
#[test]
fn list_refuses_the_pack_flags_of_commands_that_load_a_pack() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().to_str().unwrap();
    for (flags, dropped) in [
        (&["--rubric-path", folder][..], "`--rubric-path`"),
        (&["--allow-plugins"][..], "`--allow-plugins`"),
        (
            &["--allow-plugins", "--rubric-path", folder, "--explain"][..],
            "`--explain`, `--rubric-path`, `--allow-plugins`",
        ),
    ] {
        let out = run_in(dir.path(), &[&["--list"][..], flags].concat());
        assert_eq!(code(&out), 2, "{flags:?}");
        assert_eq!(stdout(&out), "", "{flags:?}");
        assert_eq!(
            stderr(&out),
            format!("error[E201]: `--list` shows recorded grades; it takes only `--rubric`, `--session`, `--grades` and `--format`: drop {dropped}\n"),
            "{flags:?}"
        );
    }
    let out = grade_bin()
        .current_dir(dir.path())
        .env("GRADE_RUBRIC_PATH", folder)
        .env("GRADE_ALLOW_PLUGINS", "1")
        .args(["--list", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "[]\n");
}

/// Flags about a model judge's requests, a judge's timeout, or sessions without entries
/// were taken and dropped where nothing could use them, while `--judge-runs` and
/// `--judge-jobs` were refused there.
#[test]
fn judge_and_allow_empty_flags_with_nothing_to_act_on_are_refused() {
    let graded = |extra: &[&str]| {
        let mut args = vec![
            "--rubric",
            "cleo-v1",
            "--source",
            EXAMPLE,
            "--all",
            "--no-record",
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    let out = graded(&["--judge-timeout", "5", "--no-judge-cache"]);
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "error[E201]: `--judge-timeout` is about asking a judge, and no judge is asked: give `--judge PROVIDER:MODEL` or `--judge-cmd CMD`\n\
         error[E201]: `--no-judge-cache` is about asking a judge, and no judge is asked: give `--judge PROVIDER:MODEL` or `--judge-cmd CMD`\n"
    );
    let out = graded(&["--allow-empty"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error[E201]: `--allow-empty` grades a named session the source has no entries for, and `--all` names none: drop `--allow-empty`\n"
    );

    let out = run(&[
        "--rubric",
        "langfuse-v1",
        "--source",
        EXAMPLE,
        "--all",
        "--no-record",
        "--judge-cmd",
        "true",
        "--judge-attempts",
        "5",
    ]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error[E201]: `--judge-attempts` is about the requests of `--judge PROVIDER:MODEL`; a `--judge-cmd` is run once per chunk, and its replies are never cached\n"
    );
}

/// A folder in the current directory is found by its bare name, but one without a
/// `rubric.yaml` was reported as `unknown rubric`, as though the folder were not there.
#[test]
fn a_folder_named_as_a_rubric_that_is_no_pack_says_it_has_no_rubric_yaml() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("notapack")).unwrap();
    for args in [
        vec!["rubric", "validate", "notapack"],
        vec!["--rubric", "notapack", "--all", "--no-record"],
    ] {
        let out = run_in(dir.path(), &args);
        assert_eq!(code(&out), 2, "{args:?}");
        assert_eq!(
            stderr(&out),
            "error[E005]: `notapack` has no `rubric.yaml`, so it is not a rubric pack\n",
            "{args:?}"
        );
    }
    let out = run_in(dir.path(), &["rubric", "validate", "nothing-here"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with("error[E007]: unknown rubric `nothing-here`"),
        "{}",
        stderr(&out)
    );
}

/// `GRADE_HELD_OUTPUT_BUDGET=64M` was ignored without a word: the run held the default 64 MiB
/// in memory while its user believed they had set the limit.
#[test]
fn a_held_output_budget_that_is_no_number_of_bytes_is_refused() {
    let source = repo_root().join(EXAMPLE);
    let source = source.to_str().unwrap();
    for bad in ["64M", "abc", "-1"] {
        let out = grade_bin()
            .env("GRADE_HELD_OUTPUT_BUDGET", bad)
            .args([
                "--rubric",
                "cleo-v1",
                "--source",
                source,
                "--all",
                "--no-record",
            ])
            .output()
            .unwrap();
        assert_eq!(code(&out), 2, "{bad}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "error[E201]: `GRADE_HELD_OUTPUT_BUDGET` must be a number of bytes, not `{bad}`\n"
            )
        );
        assert!(stdout(&out).is_empty());
    }
    let out = grade_bin()
        .env("GRADE_HELD_OUTPUT_BUDGET", "0")
        .args([
            "--rubric",
            "cleo-v1",
            "--source",
            source,
            "--all",
            "--no-record",
            "--format",
            "jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!stdout(&out).is_empty());
}
