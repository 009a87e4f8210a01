//! Helpers shared by the integration tests: run the binary, read fixtures, check schemas.
#![allow(
    dead_code,
    reason = "each test binary uses a different part of the helpers"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn fixture(rel: &str) -> PathBuf {
    repo_root().join("tests/fixtures").join(rel)
}

pub fn grade_bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_grade"));
    cmd.env_remove("GRADE_RUBRIC_PATH")
        .env_remove("GRADE_ALLOW_PLUGINS")
        .env("NO_COLOR", "1");
    cmd
}

/// Runs `grade` with `args` in `dir` and returns its output.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    grade_bin()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the grade binary runs")
}

/// Writes `one.jsonl` into `dir`: a CLEO audit log of one session (`s`) with one entry.
pub fn write_one_entry_log(dir: &Path) {
    std::fs::write(
        dir.join("one.jsonl"),
        r#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"tasks","operation":"add","params":{"title":"x"},"result":{"success":true}}"#,
    )
    .expect("the one-entry log is written");
}

pub fn run(args: &[&str]) -> Output {
    run_in(&repo_root(), args)
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

/// A human report with the time it was graded (` · graded 2026-…`) as `[TIME]`, to snapshot.
pub fn without_grading_time(report: &str) -> String {
    report
        .lines()
        .map(|l| match l.find(" · graded ") {
            Some(at) => format!("{} · graded [TIME]", &l[..at]),
            None => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

/// The validator of `schemas/grade.schema.json`.
pub fn grade_schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(repo_root().join("schemas/grade.schema.json"))
        .expect("schemas/grade.schema.json exists");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("the schema is a valid JSON Schema")
}

/// Panics with every violation when `result` does not validate against the grade schema.
pub fn assert_valid_grade(validator: &jsonschema::Validator, result: &Value) {
    let errors: Vec<String> = validator
        .iter_errors(result)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "result for {} violates schemas/grade.schema.json: {errors:#?}",
        result["sessionId"]
    );
}

/// Compares per session as the reference `compare_grades.py` does; returns the mismatches.
pub fn compare_with_expected(expected: &[Value], actual: &[Value]) -> Vec<String> {
    let by_id: std::collections::HashMap<&str, &Value> = actual
        .iter()
        .map(|r| (r["sessionId"].as_str().unwrap_or_default(), r))
        .collect();
    let mut problems = Vec::new();
    for exp in expected {
        let id = exp["sessionId"].as_str().unwrap_or_default();
        let Some(act) = by_id.get(id) else {
            problems.push(format!("{id}: no result"));
            continue;
        };
        for key in ["totalScore", "maxScore", "entryCount", "flags"] {
            if !same_number_or_value(&exp[key], &act[key]) {
                problems.push(format!(
                    "{id}: {key}: expected {}, got {}",
                    exp[key], act[key]
                ));
            }
        }
        if let Some(dims) = exp["dimensions"].as_object() {
            for (name, e) in dims {
                let a = &act["dimensions"][name];
                for key in ["score", "max", "evidence"] {
                    if !same_number_or_value(&e[key], &a[key]) {
                        problems.push(format!(
                            "{id}: {name}.{key}: expected {}, got {}",
                            e[key], a[key]
                        ));
                    }
                }
            }
        }
    }
    problems
}

fn same_number_or_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Writes the corpus into a CLEO-layout `tasks.db` the way CLEO's audit middleware does
/// (and as `jsonl_to_cleo_db.py` does): no exit code, no role, success as 0/1.
pub fn write_cleo_db(jsonl: &Path, db: &Path) {
    let conn = rusqlite::Connection::open(db).expect("create db");
    conn.execute_batch(
        "CREATE TABLE audit_log (
          id text PRIMARY KEY, timestamp text DEFAULT (datetime('now')) NOT NULL, action text NOT NULL,
          task_id text NOT NULL, actor text DEFAULT 'system' NOT NULL, details_json text DEFAULT '{}',
          before_json text, after_json text, domain text, operation text, session_id text, request_id text,
          duration_ms integer, success integer, source text, gateway text, error_message text);",
    )
    .expect("create table");
    let text = std::fs::read_to_string(jsonl).expect("read corpus");
    let tx = conn.unchecked_transaction().expect("begin");
    {
        let mut insert = tx
            .prepare("INSERT INTO audit_log VALUES (?,?,?,?,?,?,NULL,NULL,?,?,?,NULL,?,?,?,?,?)")
            .expect("prepare");
        for (n, line) in text.lines().enumerate() {
            let e: Value = serde_json::from_str(line).expect("corpus line is JSON");
            let m = &e["metadata"];
            let r = &e["result"];
            insert
                .execute(rusqlite::params![
                    format!("{:032x}", n + 1),
                    e["timestamp"].as_str(),
                    e["operation"].as_str(),
                    m["taskId"].as_str().unwrap_or("system"),
                    m["userId"].as_str().unwrap_or("agent"),
                    e["params"].to_string(),
                    e["domain"].as_str(),
                    e["operation"].as_str(),
                    e["sessionId"].as_str(),
                    r["duration"].as_i64(),
                    i64::from(r["success"].as_bool().unwrap_or(false)),
                    m["source"].as_str(),
                    m["gateway"].as_str(),
                    e["error"].as_str(),
                ])
                .expect("insert");
        }
    }
    tx.commit().expect("commit");
}

/// Panics when an HTML page of `grade` loads anything (a script, style, image or frame from
/// anywhere): the pages are one file that works offline.
pub fn assert_self_contained(html: &str) {
    let lower = html.to_lowercase();
    for banned in [
        "<script src",
        "<link",
        "@import",
        "url(",
        "<img",
        "<iframe",
        "fetch(",
        "xmlhttprequest",
    ] {
        assert!(
            !lower.contains(banned),
            "the page loads something: `{banned}`"
        );
    }
    // The only address is SVG's namespace name, which is never fetched.
    for (i, _) in lower.match_indices("http") {
        assert!(
            lower[i..].starts_with("http://www.w3.org/2000/svg"),
            "an address in the page: {}",
            &html[i..(i + 60).min(html.len())]
        );
    }
}

/// The JSON a page embeds in its `<script type="application/json" id="ID">`.
pub fn embedded_json(html: &str, id: &str) -> Value {
    let start = html
        .find(&format!(r#"<script type="application/json" id="{id}">"#))
        .expect("embedded data");
    let rest = &html[start..];
    let body = &rest[rest.find('>').map_or(0, |i| i + 1)..rest.find("</script>").expect("closed")];
    serde_json::from_str(body).expect("the embedded data is JSON")
}

/// Headless Chromium, as CI installs it (`.ci/run`); `CHROMIUM` names another.
pub fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(path);
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
            let path = dir.join(name);
            if path.is_file() {
                return path;
            }
        }
    }
    panic!("no Chromium to open the page in: install it (`apt-get install chromium`, as .ci/run does) or name it in CHROMIUM");
}

/// The page's DOM after its scripts ran, and what its console said.
pub fn open_in_chromium(page: &Path, hash: &str) -> (String, Vec<String>) {
    let profile = tempfile::tempdir().expect("a profile dir");
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1400,1000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}#{hash}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let console = stderr(&out)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect();
    (stdout(&out), console)
}

/// `text` with the lists the source registry makes put as `[TRIED FORMATS]` (what detection
/// tried: every built-in format's noun, in detection order) and `[FORMAT NAMES]` (every
/// built-in name in backticks): a snapshot of a message naming every format is the same
/// when a format is added, and the registry stays the one place the formats are listed.
pub fn registry_lists(text: &str) -> String {
    let registry = grade_engine::source::Registry::builtin();
    let nouns: Vec<&str> = registry.formats().map(|f| f.noun()).collect();
    let tried = match nouns.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => nouns.concat(),
    };
    let names: Vec<String> = registry.names().map(|n| format!("`{n}`")).collect();
    text.replace(&format!("(tried {tried})"), "(tried [TRIED FORMATS])")
        .replace(&names.join(", "), "[FORMAT NAMES]")
}
