//! Native plugins: the example packs grade their fixtures with `--allow-plugins` and are
//! refused without it; every loading error is one line naming the pack file and the line
//! that declares the plugin, with exit 2; a failing plugin function fails only its session.
//!
//! The plugin libraries are dev-dependencies of this package, so `cargo test` builds them
//! into the target folder, where these tests find them. Their bytes differ from build to
//! build, so each test copies the pack it needs to a temporary folder, points it at the
//! built library and pins that library's hash, as an author does with `grade rubric pin`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use std::path::{Path, PathBuf};

use common::{code, json_lines, repo_root, run, run_in, stderr, stdout};

/// The folder the test binary was built in (`target/debug`), where cargo also puts the
/// plugin libraries (in `deps/` when they were built only as dependencies).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary has a path");
    exe.parent()
        .and_then(Path::parent)
        .expect("the test binary is in target/<profile>/deps")
        .to_owned()
}

/// A built plugin library, by crate name (`grade_shell_plugin`).
pub(crate) fn built(name: &str) -> PathBuf {
    let file = format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let dir = target_dir();
    // `cargo build` leaves a copy in the target folder that `cargo test` does not refresh
    // (it builds into `deps/`): the newer of the two is the current source's.
    [dir.join(&file), dir.join("deps").join(&file)]
        .into_iter()
        .filter(|p| p.is_file())
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
        .unwrap_or_else(|| {
            panic!(
                "`{file}` is built by `cargo test` (a dev-dependency) in {}",
                dir.display()
            )
        })
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for item in std::fs::read_dir(from).unwrap() {
        let item = item.unwrap();
        let target = to.join(item.file_name());
        if item.file_type().unwrap().is_dir() {
            copy_dir(&item.path(), &target);
        } else {
            std::fs::copy(item.path(), &target).unwrap();
        }
    }
}

/// An example pack copied to a temporary folder, its plugin pointed at the built library
/// and pinned.
fn installed_example(example: &str, library: &str) -> tempfile::TempDir {
    installed(
        &repo_root()
            .join("plugins/examples")
            .join(example)
            .join("pack"),
        library,
    )
}

/// A pack of the repository copied to a temporary folder, its plugin (declared with a path
/// into `target/`) pointed at the built library and pinned.
fn installed(pack: &Path, library: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(pack, dir.path());
    let manifest = dir.path().join("rubric.yaml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let lib = built(library);
    let text: String = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("path: ") && l.contains("target/") {
                format!("    path: {}\n", lib.display())
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(&manifest, text).unwrap();
    let out = run(&["rubric", "pin", dir.path().to_str().unwrap()]);
    assert_eq!(code(&out), 0, "pin: {}", stderr(&out));
    dir
}

/// `bench/run.sh` times a plugin against its declarative twin with the packs of
/// `bench/packs/plugin-twin` (docs/performance.md); if they graded differently, the figure
/// would compare different work.
#[test]
fn the_plugin_twin_packs_grade_every_session_as_the_declarative_pack_does() {
    let source = repo_root().join("tests/fixtures/conformance/audit.jsonl");
    let scores = |pack: &Path| -> Vec<(String, f64, String)> {
        let out = run(&[
            "--rubric",
            pack.to_str().unwrap(),
            "--source",
            source.to_str().unwrap(),
            "--all",
            "--format",
            "jsonl",
            "--no-record",
            "--allow-plugins",
        ]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        json_lines(&stdout(&out))
            .iter()
            .map(|r| {
                (
                    r["sessionId"].as_str().unwrap().to_owned(),
                    r["totalScore"].as_f64().unwrap(),
                    r["grade"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let twins = repo_root().join("bench/packs/plugin-twin");
    let declarative = scores(&twins.join("declarative"));
    assert!(declarative.len() > 100, "{} sessions", declarative.len());
    assert!(
        declarative.iter().any(|(_, score, _)| *score < 20.0),
        "some session repeats a title, or the twins are not put to the test"
    );
    for twin in ["native-metric", "native-rule"] {
        let pack = installed(&twins.join(twin), "grade_test_faulty");
        let native = scores(pack.path());
        let differ: Vec<_> = declarative
            .iter()
            .zip(&native)
            .filter(|(d, n)| d != n)
            .collect();
        assert!(
            differ.is_empty() && native.len() == declarative.len(),
            "{twin} grades {} sessions differently (declarative, native): {differ:?}",
            differ.len()
        );
    }
}

#[test]
fn the_shell_example_pack_passes_its_tests_with_plugins_allowed() {
    let pack = installed_example("shell", "grade_shell_plugin");
    let path = pack.path().to_str().unwrap();
    let out = run(&["rubric", "test", "--allow-plugins", path]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    // The environment variable allows it too.
    let out = common::grade_bin()
        .env("GRADE_ALLOW_PLUGINS", "1")
        .args(["rubric", "test", path])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn the_aider_example_pack_passes_its_tests_with_plugins_allowed() {
    let pack = installed_example("aider", "grade_aider_plugin");
    let out = run(&[
        "rubric",
        "test",
        "--allow-plugins",
        pack.path().to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}

/// `grade rubric new --from PACK` of a pack with plugins wrote a copy and then refused it:
/// it loaded the copy without the plugins it took no `--allow-plugins` for, and the copy's
/// relative `path` named no library from its new folder. It now takes `--allow-plugins` and
/// the copy declares the same library, pinned alike; without the flag, nothing is written.
#[test]
fn a_copy_of_a_pack_with_plugins_loads_its_plugins_with_allow_plugins() {
    let pack = installed_example("aider", "grade_aider_plugin");
    // The library beside the pack, named by a relative path as an author keeps it.
    let library = built("grade_aider_plugin");
    std::fs::create_dir(pack.path().join("lib")).unwrap();
    std::fs::copy(
        &library,
        pack.path().join("lib").join(library.file_name().unwrap()),
    )
    .unwrap();
    let manifest = pack.path().join("rubric.yaml");
    let yaml = std::fs::read_to_string(&manifest).unwrap();
    let declared = format!("    path: {}\n", library.display());
    assert!(yaml.contains(&declared), "{yaml}");
    std::fs::write(
        &manifest,
        yaml.replace(&declared, "    path: lib/grade_aider_plugin\n"),
    )
    .unwrap();
    let original = pack.path().to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let new = |extra: &[&str]| {
        let mut args = vec![
            "rubric",
            "new",
            "copy",
            "--from",
            original,
            "--dir",
            dir.path().to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        common::grade_bin()
            .env("GRADE_ALLOW_PLUGINS", "0")
            .args(&args)
            .output()
            .unwrap()
    };

    let out = new(&[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {}:17:5: `plugins[0]`: plugin `aider`: the pack loads native code from `{}`, which runs with your rights: allow it with `--allow-plugins` (or `GRADE_ALLOW_PLUGINS=1`) [E033]\n",
            manifest.display(),
            pack.path().join("lib").join(library.file_name().unwrap()).display()
        )
    );
    assert!(!dir.path().join("copy").exists(), "nothing is written");

    let out = new(&["--allow-plugins"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let copy = dir.path().join("copy");
    assert_eq!(
        stdout(&out),
        format!(
            "created pack `copy` in `{0}`\nnext: grade rubric validate --allow-plugins {0} && grade rubric test --allow-plugins {0} --coverage\n",
            copy.display()
        )
    );
    let copied = std::fs::read_to_string(copy.join("rubric.yaml")).unwrap();
    let absolute = std::fs::canonicalize(pack.path().join("lib"))
        .unwrap()
        .join("grade_aider_plugin");
    assert!(
        copied.contains(&format!("    path: \"{}\"\n", absolute.display())),
        "{copied}"
    );
    assert!(
        copied.contains(&format!("    sha256: \"{}\"", sha256_of(&library))),
        "{copied}"
    );
    let tested = run(&["rubric", "test", "--allow-plugins", copy.to_str().unwrap()]);
    assert_eq!(code(&tested), 0, "{}{}", stdout(&tested), stderr(&tested));
    assert!(stdout(&tested).contains(" 0 failed"), "{}", stdout(&tested));
}

#[test]
fn example_packs_are_refused_without_allow_plugins() {
    for (example, library) in [
        ("shell", "grade_shell_plugin"),
        ("aider", "grade_aider_plugin"),
    ] {
        let pack = installed_example(example, library);
        let path = pack.path().to_str().unwrap();
        let out = common::grade_bin()
            .env("GRADE_ALLOW_PLUGINS", "0")
            .args(["rubric", "test", path])
            .output()
            .unwrap();
        assert_eq!(code(&out), 2, "{example}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("rubric.yaml:"), "{err}");
        assert!(err.contains("`--allow-plugins`"), "{err}");
        assert!(err.contains("GRADE_ALLOW_PLUGINS=1"), "{err}");
    }
}

#[test]
fn the_shell_pack_grades_transcripts_through_rules_conditions_metrics_and_scripts() {
    let pack = installed_example("shell", "grade_shell_plugin");
    let source = pack.path().join("tests/sessions.jsonl");
    let out = run(&[
        "--allow-plugins",
        "--rubric",
        pack.path().to_str().unwrap(),
        "--source",
        source.to_str().unwrap(),
        "--all",
        "--no-record",
        "--format",
        "jsonl",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let results = json_lines(&stdout(&out));
    let sloppy = results
        .iter()
        .find(|r| r["sessionId"] == "sloppy")
        .expect("session `sloppy` is graded");
    // Two near-identical retries (the native rule), two shell writes (the native condition
    // in a `for_each` rule), and the script's flag from calling the plugin itself.
    assert_eq!(sloppy["dimensions"]["diagnosis"]["score"], 8.0);
    assert_eq!(sloppy["dimensions"]["file_work"]["score"], 4.0);
    assert_eq!(
        sloppy["flags"][0],
        "1 of 2 shell writes came right after a failed command"
    );
    let careful = results
        .iter()
        .find(|r| r["sessionId"] == "careful")
        .unwrap();
    assert_eq!(careful["totalScore"], 16.0);
    assert_eq!(
        careful["dimensions"]["file_work"]["evidence"][0],
        "every shell command only read"
    );
}

#[test]
fn a_source_plugin_adds_its_format_to_detection_and_source_format() {
    let pack = installed_example("aider", "grade_aider_plugin");
    let dir = pack.path().to_str().unwrap();
    let source = pack.path().join("tests/aider-chat-history");
    let source = source.to_str().unwrap();
    let detected = run(&[
        "--allow-plugins",
        "--rubric",
        dir,
        "--source",
        source,
        "--all",
        "--no-record",
        "--format",
        "jsonl",
    ]);
    assert_eq!(code(&detected), 0, "{}", stderr(&detected));
    let named = run(&[
        "--allow-plugins",
        "--rubric",
        dir,
        "--source",
        source,
        "--source-format",
        "aider-history",
        "--all",
        "--no-record",
        "--format",
        "jsonl",
    ]);
    assert_eq!(code(&named), 0, "{}", stderr(&named));
    assert_eq!(
        json_lines(&stdout(&detected))[0]["totalScore"],
        json_lines(&stdout(&named))[0]["totalScore"]
    );
    let unknown = run(&[
        "--allow-plugins",
        "--rubric",
        dir,
        "--source",
        source,
        "--source-format",
        "no-such-format",
        "--all",
        "--no-record",
    ]);
    // A name nothing reads shows that the plugin's format is listed among the known ones.
    assert_eq!(code(&unknown), 2);
    assert!(
        stderr(&unknown).contains("`aider-history` (plugin `aider`)"),
        "{}",
        stderr(&unknown)
    );
    // The pack grades only its plugin's format (`sources: [aider-history]`): a CLEO log is
    // refused, not graded as a chat history without edits.
    let cleo_log = repo_root().join("examples/cleo-audit.jsonl");
    let cleo_log = cleo_log.to_str().unwrap();
    let refused = run(&[
        "--allow-plugins",
        "--rubric",
        dir,
        "--source",
        cleo_log,
        "--all",
        "--no-record",
    ]);
    assert_eq!(code(&refused), 2, "{}", stderr(&refused));
    assert_eq!(
        stderr(&refused),
        format!("error[E117]: `{cleo_log}` reads as a CLEO audit log (`cleo-jsonl`), and rubric `aider-discipline` grades only `aider-history` sources (the built-in rubrics `cleo-v1` and `cleo-v2` grade it)\n")
    );
}

#[test]
fn rubric_show_lists_plugins_with_their_functions() {
    let pack = installed_example("shell", "grade_shell_plugin");
    let out = run(&[
        "rubric",
        "show",
        "--allow-plugins",
        pack.path().to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("plugin `shell`: shell 0.1.0 from"), "{text}");
    for function in [
        "shell.writes_files (condition)",
        "shell.file_writes (metric)",
        "shell.near_repeats (metric)",
        "shell.near_repeat (rule)",
    ] {
        assert!(text.contains(function), "{function} in {text}");
    }
    let out = run(&[
        "rubric",
        "show",
        "--allow-plugins",
        "--format",
        "json",
        pack.path().to_str().unwrap(),
    ]);
    let body: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        body["plugins"][0]["functions"][0]["reads"][0],
        "params.command"
    );
}

/// `rubric score-configs` and `rubric judgment-schema` load the pack, so they take
/// `--allow-plugins` as the other `rubric` commands do: they loaded packs with plugins
/// refused whatever the command line said.
#[test]
fn score_configs_and_judgment_schema_load_plugins_when_allowed() {
    let pack = installed_example("shell", "grade_shell_plugin");
    let dir = pack.path().to_str().unwrap();
    let out = run(&["rubric", "judgment-schema", "--allow-plugins", dir]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error[E201]: rubric `shell-discipline` has no judged dimensions, so it takes no judgment\n"
    );
    let out = run(&["rubric", "--allow-plugins", "score-configs", dir]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with("error[E201]: rubric `shell-discipline` is not a weighted pack;"),
        "{}",
        stderr(&out)
    );
    for command in ["judgment-schema", "score-configs"] {
        let out = run(&["rubric", command, dir]);
        assert_eq!(code(&out), 2);
        assert!(
            stderr(&out).contains("which runs with your rights: allow it with `--allow-plugins`"),
            "{command}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn the_rubric_digest_covers_the_plugin_bytes() {
    let pack = installed_example("shell", "grade_shell_plugin");
    let files = grade_engine::PackFiles::read_folder(pack.path()).unwrap();
    let compiled = grade_engine::pack::compile_pack_with(
        &files,
        grade_engine::plugin::PluginPolicy {
            allow: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_ne!(
        compiled.digest,
        files.digest(),
        "the library is part of the digest"
    );
    assert_eq!(
        compiled.digest,
        files.digest_with_plugins(&compiled.plugins)
    );
    // A pack without plugins keeps the digest it always had.
    let plain = grade_engine::builtin_pack("cleo-v1").unwrap();
    assert_eq!(
        grade_engine::compile_pack(&plain).unwrap().digest,
        plain.digest()
    );
}

/// A pack of its own in a temporary folder: one plugin declared on line 5, used by a rule.
fn pack_with(path: &str, sha256: &str, rule: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        r#"id: plugin-errors
version: "1"
name: Plugin errors
plugins:
  - name: faulty
    path: {path}
    sha256: "{sha256}"
dimensions:
  - id: d
    max: 10
    start: 5
    rules:
{rule}
"#
    );
    std::fs::write(dir.path().join("rubric.yaml"), yaml).unwrap();
    dir
}

fn sha256_of(path: &Path) -> String {
    grade_engine::plugin::sha256_hex(&std::fs::read(path).unwrap())
}

const NATIVE_RULE: &str =
    "      - id: r\n        doc: the plugin decides\n        native: faulty.panics\n";

/// Grades a two-session CLEO log with a pack; returns the output.
fn grade_with(pack: &Path, extra: &[&str]) -> std::process::Output {
    let source = pack.join("audit.jsonl");
    let line = |session: &str| {
        format!(
            r#"{{"timestamp": "2026-03-01T09:00:00.000Z", "sessionId": "{session}", "domain": "tasks", "operation": "add", "params": {{"title": "a"}}, "result": {{"success": true, "exitCode": 0, "duration": 20}}, "metadata": {{"source": "mcp"}}}}"#
        )
    };
    std::fs::write(
        &source,
        format!(
            "{}\n{}\n{}\n",
            line("ok-1"),
            line("panic-1"),
            line("fail-1")
        ),
    )
    .unwrap();
    let mut args = vec![
        "--rubric",
        pack.to_str().unwrap(),
        "--source",
        source.to_str().unwrap(),
        "--all",
        "--no-record",
        "--format",
        "jsonl",
    ];
    args.extend_from_slice(extra);
    run_in(pack, &args)
}

/// The one line of a refused pack: exit 2, naming `rubric.yaml:5` (the declaration).
fn refused(out: &std::process::Output, phrase: &str) {
    let err = stderr(out);
    assert_eq!(code(out), 2, "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("rubric.yaml:5:"),
        "names the declaration's line: {err}"
    );
    assert!(err.contains(phrase), "`{phrase}` in: {err}");
}

#[test]
fn every_loading_error_is_one_line_at_the_declaration_with_exit_2() {
    let faulty = built("grade_test_faulty");
    let faulty_sha = sha256_of(&faulty);
    let cases: Vec<(String, String, &str, &str)> = vec![
        // A missing file.
        (
            "lib/nothing-here".into(),
            "0".repeat(64),
            "does not exist",
            "missing",
        ),
        // A hash that does not match: refused before loading.
        (
            faulty.display().to_string(),
            "1".repeat(64),
            "refused before loading",
            "hash",
        ),
    ];
    for (path, sha, phrase, what) in cases {
        let pack = pack_with(&path, &sha, NATIVE_RULE);
        let out = grade_with(pack.path(), &["--allow-plugins"]);
        refused(&out, phrase);
        assert!(!stderr(&out).is_empty(), "{what}");
    }

    // Not allowed: the hash matches, the flag is missing.
    let pack = pack_with(&faulty.display().to_string(), &faulty_sha, NATIVE_RULE);
    refused(
        &grade_with(pack.path(), &[]),
        "allow it with `--allow-plugins`",
    );

    // Not a loadable library: the right name, but text inside.
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("libfake.so");
    std::fs::write(&fake, "not a library\n").unwrap();
    let pack = pack_with(&fake.display().to_string(), &sha256_of(&fake), NATIVE_RULE);
    refused(
        &grade_with(pack.path(), &["--allow-plugins"]),
        "is not a library this platform",
    );

    // A library without `grade_plugin_abi_version`.
    let no_abi = built("grade_test_no_abi");
    let pack = pack_with(
        &no_abi.display().to_string(),
        &sha256_of(&no_abi),
        NATIVE_RULE,
    );
    refused(
        &grade_with(pack.path(), &["--allow-plugins"]),
        "does not export `grade_plugin_abi_version`",
    );

    // The wrong ABI version: both versions named.
    let wrong = built("grade_test_wrong_abi");
    let pack = pack_with(
        &wrong.display().to_string(),
        &sha256_of(&wrong),
        NATIVE_RULE,
    );
    refused(
        &grade_with(pack.path(), &["--allow-plugins"]),
        &format!(
            "built for plugin ABI version 999, and this grade loads version {}",
            grade_engine::plugin::ABI_VERSION
        ),
    );

    // A function the plugin does not provide.
    let pack = pack_with(
        &faulty.display().to_string(),
        &faulty_sha,
        "      - id: r\n        doc: the plugin decides\n        native: faulty.nope\n",
    );
    let out = grade_with(pack.path(), &["--allow-plugins"]);
    refused(&out, "has no function `nope`");
    assert!(stderr(&out).contains("`panics` (rule)"), "{}", stderr(&out));
}

#[test]
fn rubric_validate_checks_plugins_the_same_way() {
    let wrong = built("grade_test_wrong_abi");
    let pack = pack_with(
        &wrong.display().to_string(),
        &sha256_of(&wrong),
        NATIVE_RULE,
    );
    let dir = pack.path().to_str().unwrap();
    // Beside JSON, grading's one-line errors on standard error.
    let out = run(&[
        "rubric",
        "validate",
        "--allow-plugins",
        "--format",
        "json",
        dir,
    ]);
    refused(&out, "built for plugin ABI version 999");
    let out = run(&["rubric", "validate", "--format", "json", dir]);
    refused(&out, "allow it with `--allow-plugins`");
    // In the human report each problem is shown once, at its place; standard error sums up.
    let out = run(&["rubric", "validate", dir]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(
        stdout(&out)
            .matches("allow it with `--allow-plugins`")
            .count(),
        1
    );
    assert_eq!(
        stderr(&out),
        format!("error: rubric pack `{dir}` cannot be used: a plugin it declares cannot be loaded (1 error above)\n")
    );

    let faulty = built("grade_test_faulty");
    let pack = pack_with(
        &faulty.display().to_string(),
        &sha256_of(&faulty),
        NATIVE_RULE,
    );
    let out = run(&[
        "rubric",
        "validate",
        "--allow-plugins",
        pack.path().to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn a_native_function_of_the_wrong_kind_is_a_pack_error_at_its_use() {
    let faulty = built("grade_test_faulty");
    let pack = pack_with(
        &faulty.display().to_string(),
        &sha256_of(&faulty),
        "      - id: r\n        doc: a metric is not a rule\n        native: faulty.duplicate_titles\n",
    );
    let out = run(&[
        "rubric",
        "validate",
        "--allow-plugins",
        pack.path().to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out)
            .contains("`faulty.duplicate_titles` is a metric function, and a rule is needed here"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_panicking_plugin_function_fails_only_its_session() {
    let faulty = built("grade_test_faulty");
    let pack = pack_with(
        &faulty.display().to_string(),
        &sha256_of(&faulty),
        NATIVE_RULE,
    );
    let out = grade_with(pack.path(), &["--allow-plugins"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let graded: Vec<String> = json_lines(&stdout(&out))
        .iter()
        .map(|r| r["sessionId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(graded, ["ok-1", "fail-1"]);
    let err = stderr(&out);
    assert!(
        err.contains("rubric `plugin-errors`, rule `r`, session `panic-1`: plugin function `faulty.panics` failed: panicked at"),
        "{err}"
    );
    assert!(err.contains("boom in session panic-1"), "{err}");
    assert!(err.contains("1 of 3 sessions could not be graded"), "{err}");
}

#[test]
fn a_failing_native_condition_fails_its_session_instead_of_reading_false() {
    let faulty = built("grade_test_faulty");
    let pack = pack_with(
        &faulty.display().to_string(),
        &sha256_of(&faulty),
        "      - id: c\n        doc: the condition may fail\n        when: { native: faulty.fails }\n        points: 1\n",
    );
    let out = grade_with(pack.path(), &["--allow-plugins"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let results = json_lines(&stdout(&out));
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r["totalScore"] == 6.0));
    assert!(
        stderr(&out).contains("session `fail-1`: plugin function `faulty.fails` failed: cannot judge session `fail-1`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn reading_an_undeclared_field_is_an_error_naming_it() {
    let faulty = built("grade_test_faulty");
    let pack = pack_with(
        &faulty.display().to_string(),
        &sha256_of(&faulty),
        "      - id: m\n        doc: metric\n        when: { metric: undeclared, at_least: 1 }\n        points: 1\n",
    );
    let manifest = pack.path().join("rubric.yaml");
    let text = std::fs::read_to_string(&manifest).unwrap().replace(
        "dimensions:\n",
        "metrics:\n  undeclared: { native: faulty.undeclared }\ndimensions:\n",
    );
    std::fs::write(&manifest, text).unwrap();
    let out = grade_with(pack.path(), &["--allow-plugins"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("metric `undeclared`, session `ok-1`: plugin function `faulty.undeclared` failed: panicked at")
            && stderr(&out).contains("field `params.title` is not declared in the function's `reads`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_example_packs_satisfy_the_rubric_schema() {
    let text = std::fs::read_to_string(repo_root().join("schemas/rubric.schema.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for example in ["shell", "aider"] {
        let yaml = std::fs::read_to_string(
            repo_root()
                .join("plugins/examples")
                .join(example)
                .join("pack/rubric.yaml"),
        )
        .unwrap();
        let value: serde_json::Value = serde_yaml::from_str(&yaml).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| format!("{e} at `{}`", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{example}: {errors:#?}");
    }
}

/// The C ABI from C: `plugins/examples/c/failures.c`, compiled against `grade_plugin.h`,
/// grades as a metric and as a per-entry condition. Needs a C compiler (`cc`), which the
/// Rust toolchain needs for linking on the platforms CI runs; without one the test says so.
#[test]
fn a_plugin_written_in_c_against_the_header_grades() {
    if std::process::Command::new("cc")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("no C compiler (`cc`) found: the C plugin was not built");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join(format!(
        "{}failures{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let built = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-Wall", "-Werror", "-I"])
        .arg(repo_root().join("plugins"))
        .arg("-o")
        .arg(&lib)
        .arg(repo_root().join("plugins/examples/c/failures.c"))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let yaml = format!(
        r#"id: c-plugin
version: "1"
name: A plugin in C
plugins:
  - {{ name: c, path: failures, sha256: "{}" }}
metrics:
  failed: {{ native: c.failures }}
dimensions:
  - id: d
    max: 10
    start: 10
    rules:
      - id: failures
        doc: one point off per failed entry
        points: {{ metric: failed, times: -1 }}
      - id: slow
        doc: two points off per slow entry
        for_each: {{ domain: tasks }}
        when: {{ native: c.slow }}
        points: -2
        evidence: "entry {{entry.position}} was slow"
"#,
        sha256_of(&lib)
    );
    std::fs::write(dir.path().join("rubric.yaml"), yaml).unwrap();
    let line = |op: &str, success: bool, duration: u32, limit: &str| {
        format!(
            r#"{{"timestamp": "2026-03-01T09:00:00.000Z", "sessionId": "s", "domain": "tasks", "operation": "{op}", "params": {{{limit}}}, "result": {{"success": {success}, "exitCode": {}, "duration": {duration}}}, "metadata": {{"source": "mcp"}}}}"#,
            if success { 0 } else { 4 }
        )
    };
    let source = dir.path().join("audit.jsonl");
    std::fs::write(
        &source,
        [
            line("add", false, 20, ""),
            line("show", true, 1500, ""),
            line("find", true, 300, r#""limit_ms": 100"#),
            line("list", false, 50, ""),
        ]
        .join("\n"),
    )
    .unwrap();
    let out = run(&[
        "--allow-plugins",
        "--rubric",
        dir.path().to_str().unwrap(),
        "--source",
        source.to_str().unwrap(),
        "--all",
        "--no-record",
        "--format",
        "jsonl",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let result = &json_lines(&stdout(&out))[0];
    // 10 − 2 failures − 2 × 2 slow entries (1500 ms > 1000 by default, 300 ms > its own 100).
    assert_eq!(result["dimensions"]["d"]["score"], 4.0, "{result}");
    assert_eq!(result["dimensions"]["d"]["evidence"][0], "entry 2 was slow");
    assert_eq!(result["dimensions"]["d"]["evidence"][1], "entry 3 was slow");
}

/// `grade compare` loads packs as `grade` does: with `--allow-plugins` a pack's plugins
/// grade (two plugin packs compared, alike to the declarative twin), and without it both
/// refused packs are named in one run (compare refused every plugin pack, allowed or not).
#[test]
fn compare_loads_the_plugins_of_both_packs_when_plugins_are_allowed() {
    let source = repo_root().join("tests/fixtures/conformance/audit.jsonl");
    let twins = repo_root().join("bench/packs/plugin-twin");
    let metric = installed(&twins.join("native-metric"), "grade_test_faulty");
    let rule = installed(&twins.join("native-rule"), "grade_test_faulty");
    let args = |allow: bool| {
        let mut a = vec![
            "compare".to_owned(),
            "--rubric".to_owned(),
            metric.path().display().to_string(),
            "--rubric".to_owned(),
            rule.path().display().to_string(),
            "--source".to_owned(),
            source.display().to_string(),
            "--all".to_owned(),
            "--format".to_owned(),
            "json".to_owned(),
        ];
        if allow {
            a.push("--allow-plugins".to_owned());
        }
        a
    };
    let allowed: Vec<String> = args(true);
    let out = run(&allowed.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(report["summary"]["n"].as_u64().unwrap_or(0) > 100);
    assert_eq!(report["summary"]["meanDelta"], 0.0, "the twins grade alike");

    let refused: Vec<String> = args(false);
    let out = run(&refused.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert_eq!(
        err.matches("--allow-plugins").count(),
        2,
        "both packs are refused in one run: {err}"
    );
}

/// A pack in a temporary folder loading the `odd` test plugin (declared on line 5 as
/// `plugins[0]`), with `rest` after `plugins:` (more plugins, metrics, dimensions).
fn odd_pack(rest: &str) -> tempfile::TempDir {
    let odd = built("grade_test_odd");
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "id: odd-values\nversion: \"1\"\nname: Odd values\nplugins:\n  - {{ name: odd, path: {}, sha256: \"{}\" }}\n{rest}",
        odd.display(),
        sha256_of(&odd)
    );
    std::fs::write(dir.path().join("rubric.yaml"), yaml).unwrap();
    dir
}

/// One dimension of `max` points with `rules`, written as YAML list items.
fn dimension(max: &str, rules: &str) -> String {
    format!("dimensions:\n  - id: d\n    max: {max}\n    rules:\n{rules}")
}

const ONE_POINT: &str = "      - { id: one, doc: a point, native: odd.one_point }\n";

/// Every line of standard error of a run that graded none of its three sessions, which must
/// all fail alike: the first session's error is `expected`.
fn fails_every_session(out: &std::process::Output, expected: &str) {
    let err = stderr(out);
    assert_eq!(code(out), 1, "{err}");
    assert_eq!(stdout(out), "", "nothing graded");
    assert_eq!(
        err.lines().next(),
        Some(format!("error[E044]: {expected}").as_str()),
        "{err}"
    );
    assert!(err.contains("3 of 3 sessions could not be graded"), "{err}");
}

#[test]
fn a_plugin_value_that_is_nan_or_infinite_fails_the_session_naming_the_function_and_the_place() {
    // A metric read by a condition.
    let pack = odd_pack(&format!(
        "metrics:\n  m: {{ native: odd.nan_metric }}\n{}",
        dimension(
            "10",
            &format!("{ONE_POINT}      - {{ id: r, doc: d, when: {{ metric: m, at_least: 1 }}, points: 1 }}\n")
        )
    ));
    fails_every_session(
        &grade_with(pack.path(), &["--allow-plugins"]),
        "rubric `odd-values`, metric `m`, session `ok-1`: plugin function `odd.nan_metric` failed: it gave NaN at `metrics.m`, and a grade cannot hold it",
    );
    // A rule's points.
    let pack = odd_pack(&dimension(
        "10",
        &format!("{ONE_POINT}      - {{ id: r, doc: d, native: odd.infinite_rule }}\n"),
    ));
    fails_every_session(
        &grade_with(pack.path(), &["--allow-plugins"]),
        "rubric `odd-values`, rule `r`, session `ok-1`: plugin function `odd.infinite_rule` failed: it gave -Infinity at `dimensions[0].rules[1]`, and a grade cannot hold it",
    );
    // A condition in a rule, which would otherwise read as false.
    let pack = odd_pack(&dimension(
        "10",
        &format!("{ONE_POINT}      - {{ id: r, doc: d, when: {{ native: odd.nan_condition }}, points: 1 }}\n"),
    ));
    fails_every_session(
        &grade_with(pack.path(), &["--allow-plugins"]),
        "rubric `odd-values`, rule `r`, session `ok-1`: plugin function `odd.nan_condition` failed: it gave NaN at `dimensions[0].rules[1]`, and a grade cannot hold it",
    );
    // A condition in `applies_when`, which would otherwise leave the dimension out.
    let pack = odd_pack(&format!(
        "dimensions:\n  - id: d\n    max: 10\n    applies_when: {{ native: odd.nan_condition }}\n    rules:\n{ONE_POINT}"
    ));
    fails_every_session(
        &grade_with(pack.path(), &["--allow-plugins"]),
        "rubric `odd-values`, dimension `d`, session `ok-1`: plugin function `odd.nan_condition` failed: it gave NaN at `dimensions[0].applies_when`, and a grade cannot hold it",
    );
    // Called from a script.
    let pack = odd_pack(&dimension(
        "10",
        "      - { id: s, doc: d, script: s.rhai }\n",
    ));
    std::fs::write(
        pack.path().join("s.rhai"),
        "let m = odd::nan_metric(session);\n#{ points: 1 }\n",
    )
    .unwrap();
    let out = grade_with(pack.path(), &["--allow-plugins"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "plugin function `odd.nan_metric` failed: it gave NaN, and a grade cannot hold it"
        ),
        "{}",
        stderr(&out)
    );
    // Finite values grade as before.
    let pack = odd_pack(&dimension("10", ONE_POINT));
    let out = grade_with(pack.path(), &["--allow-plugins"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(json_lines(&stdout(&out))
        .iter()
        .all(|r| r["totalScore"] == 1));
}

#[test]
fn a_native_rule_giving_half_a_point_fails_a_pack_of_whole_scores_only() {
    let rules = format!("{ONE_POINT}      - {{ id: half, doc: d, native: odd.half_value }}\n");
    let pack = odd_pack(&dimension("10", &rules));
    fails_every_session(
        &grade_with(pack.path(), &["--allow-plugins"]),
        "rubric `odd-values`, rule `half`, session `ok-1`: plugin function `odd.half_value` failed: it gave 0.5 points at `dimensions[0].rules[1]`, and every score of this pack is a whole number",
    );
    // A pack whose own scores are fractional takes half points.
    let pack = odd_pack(&dimension("7.5", &rules));
    let out = grade_with(pack.path(), &["--allow-plugins"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        json_lines(&stdout(&out))
            .iter()
            .all(|r| r["totalScore"] == 1.5),
        "{}",
        stdout(&out)
    );
}

/// A plugin rule handing back 4 × 256 MiB of evidence took 3.3 GB and wrote 1 GiB of
/// results; one call's texts are now capped in count and bytes, and the call fails its
/// session naming the cap. A text of a kind the ABI does not define was dropped in silence;
/// it now fails the call naming the kind.
#[test]
fn a_plugin_call_returning_more_evidence_than_the_cap_or_an_unknown_kind_fails_its_session() {
    for (function, reason) in [
        (
            "huge_evidence",
            "it gave more than 4 MiB of evidence, flags and reasons (the most one plugin call may return)",
        ),
        (
            "many_evidence",
            "it gave more than 10000 evidence texts and flags (the most one plugin call may return)",
        ),
        (
            "many_entries",
            "it named more than 10001 entries (the session's entries and 10000 more, the most one plugin call may name)",
        ),
        (
            "unknown_text_kind",
            "it gave a text of kind 7, which plugin ABI version 1 does not define (1 is evidence, 2 a flag, 3 the reason it failed)",
        ),
    ] {
        let pack = odd_pack(&dimension(
            "10",
            &format!("      - {{ id: r, doc: d, native: odd.{function} }}\n"),
        ));
        fails_every_session(
            &grade_with(pack.path(), &["--allow-plugins"]),
            &format!("rubric `odd-values`, rule `r`, session `ok-1`: plugin function `odd.{function}` failed: {reason}"),
        );
    }
}

#[test]
fn plugin_text_that_is_not_utf8_is_refused_naming_the_function_or_the_format() {
    let pack = odd_pack(&dimension(
        "10",
        "      - { id: r, doc: d, native: odd.bad_evidence }\n",
    ));
    fails_every_session(
        &grade_with(pack.path(), &["--allow-plugins"]),
        "rubric `odd-values`, rule `r`, session `ok-1`: plugin function `odd.bad_evidence` failed: it gave evidence that is not UTF-8 text (the plugin ABI passes UTF-8 only)",
    );
    // An entry a source plugin read.
    let pack = odd_pack(&dimension("10", ONE_POINT));
    let source = pack.path().join("odd.log");
    std::fs::write(&source, "anything\n").unwrap();
    let out = run(&[
        "--allow-plugins",
        "--rubric",
        pack.path().to_str().unwrap(),
        "--source",
        source.to_str().unwrap(),
        "--source-format",
        "odd-bytes",
        "--all",
        "--no-record",
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "error[E118]: {}:1: format `odd-bytes` (plugin `odd`): the entry's `operation` is not UTF-8 text (the plugin ABI passes UTF-8 only)\n",
            source.display()
        )
    );
}

/// Grades `durations` (one per line) read by the `odd` plugin's `odd-durations` source with
/// a pack of the `odd` plugin whose one rule is `script`, a script summing durations.
fn grade_durations(script: &str, durations: &str) -> (tempfile::TempDir, std::process::Output) {
    let pack = odd_pack(&dimension(
        "10",
        "      - { id: fast, doc: d, script: s.rhai }\n",
    ));
    std::fs::write(pack.path().join("s.rhai"), script).unwrap();
    let source = pack.path().join("durations.log");
    std::fs::write(&source, durations).unwrap();
    let out = run(&[
        "--allow-plugins",
        "--rubric",
        pack.path().to_str().unwrap(),
        "--source",
        source.to_str().unwrap(),
        "--source-format",
        "odd-durations",
        "--all",
        "--no-record",
        "--format",
        "jsonl",
    ]);
    (pack, out)
}

/// A plugin source's durations were taken unchecked: two of `1e308` added up to infinity, and
/// a script summing them compared it false with its budget and gave full marks, without a
/// word. They are held to a CLEO log's bound, refused (naming the line, the format and the
/// plugin) when the pack reads durations.
#[test]
fn a_plugin_source_duration_no_session_can_have_is_refused_when_the_pack_reads_durations() {
    const SUM: &str = "let total = 0.0;\nfor e in session.entries { total += e.duration; }\nif total > 1000.0 { #{ points: 0, evidence: `slow: ${total} ms` } } else { #{ points: 10, evidence: `fast: ${total} ms` } }\n";
    for (line, shown) in [
        ("NaN", "NaN"),
        ("inf", "Infinity"),
        ("-inf", "-Infinity"),
        ("1e308", "1e+308"),
        ("9007199254740992", "9007199254740992"),
        ("-9007199254740992", "-9007199254740992"),
    ] {
        let (pack, out) = grade_durations(SUM, &format!("12\n{line}\n{line}\n"));
        assert_eq!(code(&out), 2, "{line}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "error[E118]: {}:2: format `odd-durations` (plugin `odd`): the entry's `duration_ms` is {shown}, not a number of milliseconds from -9007199254740991 to 9007199254740991\n",
                pack.path().join("durations.log").display()
            ),
            "{line}"
        );
        assert_eq!(stdout(&out), "", "{line}");
    }
    // Within the bound, negative ones too (as in a CLEO log), durations are read as given.
    let (_pack, out) = grade_durations(SUM, "12\n-5\n9007199254740991\n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let results = json_lines(&stdout(&out));
    assert_eq!(
        results[0]["dimensions"]["d"]["evidence"],
        serde_json::json!(["slow: 9.007199254740998e15 ms"])
    );
    // A pack with plugins reads every field (its plugin functions are handed durations), so
    // the branch for a pack that reads none is tested in the engine (`native::tests`).
}

#[test]
fn a_name_given_twice_is_refused_at_load_naming_both() {
    let pack = odd_pack(&dimension("10", ONE_POINT));
    let load = |twice: &str| {
        common::grade_bin()
            .env("GRADE_TEST_ODD_TWICE", twice)
            .args(["rubric", "validate", "--allow-plugins", "--format", "json"])
            .arg(pack.path())
            .output()
            .unwrap()
    };
    let odd = built("grade_test_odd");
    let out = load("function");
    refused(
        &out,
        &format!("plugin `odd`: `{}` provides two functions named `one_point` (number 1, a rule, and number 3, a metric), and a pack could not tell which it calls", odd.display()),
    );
    let out = load("source");
    refused(
        &out,
        &format!("plugin `odd`: `{}` provides two source formats named `odd-bytes` (number 1 and number 2), and a source could not tell which reads it", odd.display()),
    );
    // Two plugins of one pack reading formats of one name: the second is refused.
    let pack = odd_pack(&format!(
        "  - {{ name: again, path: {}, sha256: \"{}\" }}\n{}",
        odd.display(),
        sha256_of(&odd),
        dimension("10", ONE_POINT)
    ));
    let out = run(&[
        "rubric",
        "validate",
        "--allow-plugins",
        "--format",
        "json",
        pack.path().to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert_eq!(code(&out), 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("rubric.yaml:6:")
            && err.contains("plugin `again`: its source format `odd-bytes` is read by plugin `odd` (`plugins[0]`) too, and a source can be read one way only"),
        "{err}"
    );
}

/// The pin check and the load were two opens of the library's path: a library renamed over
/// the pinned one between them was loaded unpinned (its initialisers ran, within ~15 runs).
/// A renamer swaps a library without the ABI over the pinned one as fast as it can while
/// `grade` loads the pack: every run must load the pinned library or refuse the other by its
/// hash, never load the other (whose refusal names the missing ABI symbol).
#[test]
fn a_library_swapped_in_after_the_pin_check_is_never_loaded() {
    let faulty = built("grade_test_faulty");
    let no_abi = built("grade_test_no_abi");
    let dir = tempfile::tempdir().unwrap();
    let (pinned, other) = (dir.path().join("pinned.so"), dir.path().join("other.so"));
    std::fs::copy(&faulty, &pinned).unwrap();
    std::fs::copy(&no_abi, &other).unwrap();
    let library = dir.path().join("libswap.so");
    std::fs::copy(&pinned, &library).unwrap();
    let pack = pack_with(
        &library.display().to_string(),
        &sha256_of(&faulty),
        NATIVE_RULE,
    );
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let renamer = {
        let stop = std::sync::Arc::clone(&stop);
        let (dir, library) = (dir.path().to_owned(), library.clone());
        std::thread::spawn(move || {
            let staged = dir.join("staged.so");
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for from in [&other, &pinned] {
                    let _ = std::fs::remove_file(&staged);
                    std::fs::hard_link(from, &staged).unwrap();
                    std::fs::rename(&staged, &library).unwrap();
                }
            }
        })
    };
    let (mut loaded, mut refused_by_hash, mut unpinned) = (0, 0, Vec::new());
    // Bounded: until both sides of the race were seen often enough to have raced.
    for _ in 0..200 {
        let out = grade_with(pack.path(), &["--allow-plugins"]);
        let err = stderr(&out);
        if err.contains("refused before loading") {
            refused_by_hash += 1;
        } else if err.contains("grade_plugin_abi_version") || err.contains("not a library") {
            unpinned.push(err);
        } else {
            assert!(code(&out) < 2, "{err}");
            loaded += 1;
        }
        if loaded >= 10 && refused_by_hash >= 10 {
            break;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    renamer.join().unwrap();
    assert!(
        unpinned.is_empty(),
        "{} of {} runs loaded the library swapped in after the pin check: {}",
        unpinned.len(),
        loaded + refused_by_hash + unpinned.len(),
        unpinned[0]
    );
    assert!(loaded > 0 && refused_by_hash > 0, "the race was run");
}
