//! `grade compare` end to end: the three forms, the JSON against its schema, the CI gate's
//! exit codes, and the HTML report's self-containment.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;

use common::{assert_self_contained, code, embedded_json, run, stderr, stdout};
use serde_json::Value;

const CORPUS: &str = "tests/fixtures/conformance/audit.jsonl";

fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(common::repo_root().join("schemas/compare.schema.json"))
        .expect("schemas/compare.schema.json exists");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("the schema is a valid JSON Schema")
}

fn assert_valid(report: &Value) {
    let v = schema();
    let errors: Vec<String> = v
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

fn json(args: &[&str]) -> Value {
    let out = run(args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("JSON output")
}

fn assert_sums(report: &Value) {
    for s in report["sessions"].as_array().expect("sessions") {
        let sum: f64 = s["rules"]
            .as_array()
            .expect("rules")
            .iter()
            .map(|r| r["delta"].as_f64().unwrap_or(f64::NAN))
            .sum();
        let delta = s["delta"].as_f64().unwrap_or(f64::NAN);
        assert!(
            (sum - delta).abs() < 1e-6,
            "{}: {sum} vs {delta}",
            s["sessionId"]
        );
    }
}

fn rubric_form() -> Value {
    json(&[
        "compare", "--rubric", "cleo-v1", "--rubric", "cleo-v2", "--source", CORPUS, "--all",
        "--format", "json",
    ])
}

#[test]
fn rubric_versions_on_the_conformance_corpus() {
    let r = rubric_form();
    assert_valid(&r);
    assert_sums(&r);
    assert_eq!(r["pairBy"], "sessionId");
    let changed: Vec<&Value> = r["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .filter(|s| s["delta"].as_f64() != Some(0.0))
        .collect();
    assert!(!changed.is_empty());
    assert!(changed
        .iter()
        .all(|s| !s["rules"].as_array().expect("rules").is_empty()));
    let rules = r["rules"].as_array().expect("rules");
    let mcp = rules
        .iter()
        .find(|x| x["rule"] == "mcp-query")
        .expect("mcp-query moved points");
    assert_eq!(mcp["status"], "removed");
    assert!(mcp["pointsMoved"].as_f64().unwrap_or(0.0) < 0.0);
    assert_eq!(
        r["rubricDiff"]["dimensions"][0]["dimension"],
        "disclosureUse"
    );
}

#[test]
fn human_report_lists_the_changed_sessions_with_their_rules() {
    let out = run(&[
        "compare", "--rubric", "cleo-v1", "--rubric", "cleo-v2", "--source", CORPUS, "--all",
        "--top", "3", "--color", "never",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn named_sessions_are_compared_and_unknown_ones_refused() {
    let r = json(&[
        "compare",
        "--rubric",
        "cleo-v1",
        "--rubric",
        "cleo-v2",
        "--source",
        CORPUS,
        "session-7-00115",
        "--format",
        "json",
    ]);
    assert_eq!(r["summary"]["n"], 1);
    let out = run(&[
        "compare", "--rubric", "cleo-v1", "--rubric", "cleo-v2", "--source", CORPUS, "nope",
    ]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("`nope`"), "{}", stderr(&out));
}

#[test]
fn recorded_results_pair_by_session_and_list_the_rest() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let base = dir.path().join("v1.jsonl");
    let cand = dir.path().join("v2.jsonl");
    for (pack, path) in [("cleo-v1", &base), ("cleo-v2", &cand)] {
        let out = run(&[
            "--rubric",
            pack,
            "--source",
            CORPUS,
            "--all",
            "--format",
            "jsonl",
            "--no-record",
            "--explain",
        ]);
        assert_eq!(code(&out), 0);
        let mut text = stdout(&out);
        if pack == "cleo-v2" {
            // One session fewer on the candidate side.
            text = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
        }
        std::fs::write(path, text).expect("written");
    }
    let (b, c) = (base.to_string_lossy(), cand.to_string_lossy());
    let r = json(&["compare", &b, &c, "--format", "json"]);
    assert_valid(&r);
    assert_sums(&r);
    assert_eq!(r["unmatched"]["baseline"].as_array().map(Vec::len), Some(1));
    let full = rubric_form();
    assert_eq!(
        r["summary"]["n"].as_u64().map(|n| n + 1),
        full["summary"]["n"].as_u64()
    );
    // The packs are found by id and digest: the rubric diff and rule statuses are known.
    assert!(r["rubricDiff"].is_object());
}

#[test]
fn results_written_by_cleos_own_grader_compare_without_a_rubric() {
    // CLEO's grader writes no `rubric`, `evaluator`, `percent` or (in these copies)
    // `timestamp`: the files still compare, each side named after its file.
    let out = run(&[
        "compare",
        "tests/fixtures/conformance/cleo-v1.expected.jsonl",
        "tests/fixtures/conformance/cleo-v2.expected.jsonl",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("name no rubric"),
        "the missing rubric is said: {}",
        stderr(&out)
    );
    let r: Value = serde_json::from_str(&stdout(&out)).expect("JSON output");
    assert_valid(&r);
    assert_sums(&r);
    assert_eq!(r["summary"]["n"], 301);
    assert_eq!(r["baseline"]["rubric"]["id"], "cleo-v1.expected");
    assert_eq!(r["candidate"]["rubric"]["id"], "cleo-v2.expected");
    // Same totals as re-grading both packs on the corpus gives for the 282 sessions with entries.
    let regraded = rubric_form();
    assert_eq!(r["summary"]["regressed"], regraded["summary"]["regressed"]);
    assert_eq!(r["summary"]["improved"], regraded["summary"]["improved"]);
}

/// The page `compare --html` writes in `dir` for two unpaired arms, the corpus's halves.
fn unpaired_arms_page(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let (a, b) = corpus_halves(dir);
    let page = dir.join(name);
    let out = run(&[
        "compare",
        "--rubric",
        "cleo-v1",
        "--arm",
        &format!("old={}", a.display()),
        "--arm",
        &format!("new={}", b.display()),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    page
}

/// Two arms made of the corpus's first 3000 lines and the rest, as `a.jsonl` and `b.jsonl`
/// in `dir` (sessions split across the halves appear in both).
fn corpus_halves(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let text = std::fs::read_to_string(common::repo_root().join(CORPUS)).expect("corpus");
    let lines: Vec<&str> = text.lines().collect();
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    std::fs::write(&a, lines[..3000].join("\n")).expect("written");
    std::fs::write(&b, lines[3000..].join("\n")).expect("written");
    (a, b)
}

#[test]
fn arms_are_unpaired_unless_paired_by_a_key() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (a, b) = corpus_halves(dir.path());
    let (arm_a, arm_b) = (
        format!("old={}", a.display()),
        format!("new={}", b.display()),
    );
    let r = json(&[
        "compare", "--rubric", "cleo-v1", "--arm", &arm_a, "--arm", &arm_b, "--format", "json",
    ]);
    assert_valid(&r);
    assert_eq!(r["paired"], false);
    assert!(r["summary"]["mannWhitneyP"].is_number());
    assert!(r["summary"]["cliffsDelta"].is_number());
    // Sessions split across the two halves pair by their own id as the key.
    let r = json(&[
        "compare",
        "--rubric",
        "cleo-v1",
        "--arm",
        &arm_a,
        "--arm",
        &arm_b,
        "--pair-by",
        "sessionId",
        "--format",
        "json",
    ]);
    assert_valid(&r);
    assert_eq!(r["paired"], true);
    assert_eq!(r["pairBy"], "sessionId");
    assert!(r["summary"]["n"].as_u64().unwrap_or(0) > 0);
    assert_sums(&r);
}

#[test]
fn fail_on_gates_exit_one_and_bad_flags_exit_two() {
    let base = [
        "compare", "--rubric", "cleo-v1", "--rubric", "cleo-v2", "--source", CORPUS, "--all",
    ];
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        code(&run(&args))
    };
    // cleo-v2 scores the corpus lower: its whole interval is below 0, and sessions flip.
    assert_eq!(with(&["--fail-on", "regression"]), 1);
    assert_eq!(with(&["--fail-on", "flips"]), 1);
    assert_eq!(with(&["--fail-on", "drop=1"]), 1);
    assert_eq!(with(&["--fail-on", "drop=50"]), 0);
    assert_eq!(with(&["--fail-on", "drop=-1"]), 2);
    assert_eq!(with(&["--fail-on", "sometimes"]), 2);
    let same = [
        "compare",
        "--rubric",
        "cleo-v1",
        "--rubric",
        "cleo-v1",
        "--source",
        CORPUS,
        "--all",
        "--fail-on",
        "regression",
        "--fail-on",
        "flips",
    ];
    assert_eq!(code(&run(&same)), 0);
    assert_eq!(
        code(&run(&[
            "compare", "--rubric", "cleo-v1", "--source", CORPUS, "--all"
        ])),
        2
    );
    assert_eq!(code(&run(&["compare", "only-one.jsonl"])), 2);
    assert_eq!(
        code(&run(&["compare", "missing-a.jsonl", "missing-b.jsonl"])),
        2
    );
}

#[test]
fn self_compare_reports_no_change() {
    let r = json(&[
        "compare", "--rubric", "cleo-v1", "--rubric", "cleo-v1", "--source", CORPUS, "--all",
        "--format", "json",
    ]);
    assert_eq!(r["summary"]["meanDelta"], 0.0);
    assert_eq!(r["summary"]["wilcoxonP"], 1.0);
    assert_eq!(r["summary"]["flips"]["passToFail"], 0);
    assert_eq!(r["rubricDiff"]["rules"].as_array().map(Vec::len), Some(0));
}

#[test]
fn html_report_is_self_contained_and_carries_the_data() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let page = dir.path().join("report.html");
    let out = run(&[
        "compare",
        "--rubric",
        "cleo-v1",
        "--rubric",
        "cleo-v2",
        "--source",
        CORPUS,
        "--all",
        "--format",
        "json",
        "--html",
        &page.to_string_lossy(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).expect("the page was written");
    assert_self_contained(&html);
    let embedded = embedded_json(&html, "page-data");
    let printed: Value = serde_json::from_str(&stdout(&out)).expect("JSON output");
    assert_eq!(embedded, printed);
    assert!(html.contains("Intervals: paired bootstrap of the mean change, 10000 resamples"));
}

const TRANSCRIPTS: &str = "rubrics/claude-code-v1/tests/real/claude_code_transcripts";

/// A folder of three transcripts: one where every dimension applies, one where planning
/// and error recovery do not (no plan was needed, no call failed), one with nothing to grade.
fn transcripts_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = common::repo_root().join(TRANSCRIPTS);
    for file in [
        "real/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
        "synthetic/daaain__test_data/session_b.jsonl",
        "synthetic/simonw__tests/sample_session.jsonl",
    ] {
        let from = root.join(file);
        std::fs::copy(&from, dir.path().join(from.file_name().unwrap())).unwrap();
    }
    dir
}

/// A dimension that did not apply is left out of the session's total, so it is left out of
/// the dimension's figures and the attribution too: counted as 0% it pulled every mean down
/// (read-before-edit showed 66.67% where every session that edited read first). A session
/// with nothing to grade has no score, and is listed rather than counted as 0%.
#[test]
fn dimensions_that_did_not_apply_and_sessions_with_nothing_to_grade_are_left_out_of_the_figures() {
    let dir = transcripts_folder();
    let folder = dir.path().to_str().unwrap();
    let report = json(&[
        "compare",
        "--rubric",
        "claude-code-v1",
        "--rubric",
        "claude-code-v1",
        "--source",
        folder,
        "--all",
        "--format",
        "json",
    ]);
    assert_valid(&report);
    assert_eq!(report["summary"]["n"], 2, "{:#}", report["summary"]);
    assert_eq!(
        report["unmatched"]["nothingToGrade"],
        serde_json::json!(["session_b"])
    );
    let dimension = |id: &str| {
        report["dimensions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["dimension"] == id)
            .cloned()
            .unwrap()
    };
    assert_eq!(dimension("readBeforeEdit")["meanBaseline"], 100.0);
    assert_eq!(dimension("planning")["meanBaseline"], 100.0);
    // Error recovery applied to one session of the two.
    assert_eq!(dimension("errorRecovery")["n"], 1);
    assert!(
        report["rules"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["rule"] != "(clamp)" || r["meanDelta"] == 0.0),
        "no term of a dimension that did not apply: {:#}",
        report["rules"]
    );
}

/// An arm without a graded session (an empty log) made a mean change up out of a missing
/// mean, and zero paired sessions passed every gate: nothing to compare is an input error.
#[test]
fn a_comparison_with_nothing_to_compare_is_an_error_not_a_made_up_change() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let some = common::repo_root().join(CORPUS);
    let arm = |name: &str, path: &std::path::Path| format!("{name}={}", path.display());
    let out = run(&[
        "compare",
        "--rubric",
        "cleo-v2",
        "--arm",
        &arm("old", &some),
        "--arm",
        &arm("new", &empty),
        "--fail-on",
        "drop=5",
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing to compare: the candidate has no graded session"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "");
}

/// Session ids are the source's text: a compare report shows them escaped, as `grade` does,
/// so an id cannot move the cursor, retitle the terminal or forge a line.
#[test]
fn compare_shows_session_ids_with_their_control_characters_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = std::fs::read_to_string(common::repo_root().join(CORPUS)).unwrap();
    let first: Value = serde_json::from_str(corpus.lines().next().unwrap()).unwrap();
    let id = first["sessionId"].as_str().unwrap().to_owned();
    let evil = "evil\u{1b}]0;pwned\u{7}\nFAKE LINE";
    let text: String = corpus
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if v["sessionId"] == id.as_str() {
                v["sessionId"] = Value::from(evil);
            }
            v.to_string() + "\n"
        })
        .collect();
    let source = dir.path().join("audit.jsonl");
    std::fs::write(&source, text).unwrap();
    // Recorded results of every session, and the same without the evil one: the report and
    // its warning list it as only in the baseline.
    let graded = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        source.to_str().unwrap(),
        "--all",
        "--format",
        "jsonl",
        "--no-record",
    ]);
    assert_eq!(code(&graded), 0, "{}", stderr(&graded));
    let all = stdout(&graded);
    let others: String = all
        .lines()
        .filter(|l| !l.contains("evil"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (before, after) = (
        dir.path().join("before.jsonl"),
        dir.path().join("after.jsonl"),
    );
    std::fs::write(&before, &all).unwrap();
    std::fs::write(&after, others).unwrap();
    let out = run(&[
        "compare",
        before.to_str().unwrap(),
        after.to_str().unwrap(),
        "--color",
        "never",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    for shown in [stdout(&out), stderr(&out)] {
        assert!(
            shown.contains("evil\\u{1b}]0;pwned"),
            "listed, escaped: {shown}"
        );
        assert!(!shown.contains('\u{1b}'), "{shown}");
        assert!(
            !shown.lines().any(|l| l.starts_with("FAKE LINE")),
            "{shown}"
        );
    }
}

/// Results of the corpus graded by `rubric`, as JSON lines (`--explain` when asked).
fn graded_lines(rubric: &str, explain: bool) -> String {
    let mut args = vec![
        "--rubric",
        rubric,
        "--source",
        CORPUS,
        "--all",
        "--format",
        "jsonl",
        "--no-record",
    ];
    if explain {
        args.push("--explain");
    }
    let out = run(&args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    stdout(&out)
}

/// Each line's JSON changed by `edit`.
fn edited(lines: &str, mut edit: impl FnMut(&mut Value)) -> String {
    lines
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("a JSON line");
            edit(&mut v);
            v.to_string() + "\n"
        })
        .collect()
}

/// Results whose pack is not at hand still name their letters: the letters are placed by
/// the percents they were given, so a move from `A` to `B` shows (it was all `- -> -`).
#[test]
fn letters_of_results_whose_pack_is_not_at_hand_still_show_which_way_they_moved() {
    let dir = tempfile::tempdir().unwrap();
    let rename = |id: &'static str| move |v: &mut Value| v["rubric"]["id"] = Value::from(id);
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(
        &a,
        edited(&graded_lines("cleo-v1", false), rename("gone-v1")),
    )
    .unwrap();
    std::fs::write(
        &b,
        edited(&graded_lines("cleo-v2", false), rename("gone-v2")),
    )
    .unwrap();
    let r = json(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_valid(&r);
    let grades = r["summary"]["grades"].as_object().expect("letter moves");
    assert!(
        grades.keys().all(|k| !k.contains('-') || k.contains("->")),
        "{grades:?}"
    );
    assert!(
        grades
            .keys()
            .all(|k| !k.starts_with("-") && !k.ends_with(">-")),
        "every session has its letter: {grades:?}"
    );
    assert!(grades.contains_key("A->B"), "{grades:?}");
    let order: Vec<&String> = r["summary"]["gradeCounts"]["baseline"]
        .as_object()
        .expect("grade counts")
        .keys()
        .collect();
    assert_eq!(order, ["A", "B", "C", "D", "F"]);
}

/// `grade compare` of two recorded files whose results carry no letter said `letters changed:
/// none` when hundreds of sessions moved: the letters come from the bands of the pack the
/// files name when it is found with their digest, and where no bands are known that is said.
#[test]
fn letters_of_results_that_carry_none_come_from_their_pack_or_are_said_to_be_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let no_letter = |v: &mut Value| {
        v.as_object_mut().unwrap().remove("grade");
    };
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&a, edited(&graded_lines("cleo-v1", false), no_letter)).unwrap();
    std::fs::write(&b, edited(&graded_lines("cleo-v2", false), no_letter)).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let r = json(&["compare", a, b, "--format", "json"]);
    assert_valid(&r);
    let grades = r["summary"]["grades"].as_object().expect("letter moves");
    assert_eq!(grades["A->B"], 37, "{grades:?}");
    assert!(r["summary"].get("lettersUnknown").is_none(), "{r:#}");
    let out = run(&["compare", a, b]);
    assert!(
        stdout(&out).contains("letters changed: A->B 37, B->C 14"),
        "{}",
        stdout(&out)
    );
    // CLEO's own results name no pack: no bands give them letters, and that is said.
    let out = run(&[
        "compare",
        "tests/fixtures/conformance/cleo-v1.expected.jsonl",
        "tests/fixtures/conformance/cleo-v2.expected.jsonl",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("letters: not known (both sides: the results carry no letter and name no pack whose bands would give one)"),
        "{}",
        stdout(&out)
    );
    assert!(
        !stdout(&out).contains("letters changed"),
        "{}",
        stdout(&out)
    );
    // A pack that is not found with the results' digest gives no bands either.
    let moved = |v: &mut Value| {
        v.as_object_mut().unwrap().remove("grade");
        v["rubric"]["digest"] = Value::from("sha256:0000000000000000");
    };
    let c = dir.path().join("c.jsonl");
    std::fs::write(&c, edited(&graded_lines("cleo-v2", false), moved)).unwrap();
    let out = run(&["compare", a, c.to_str().unwrap()]);
    assert!(
        stdout(&out).contains("c.jsonl`: the results carry no letter, and their pack `cleo-v2` is not found with their digest `sha256:000000000000…`)"),
        "{}",
        stdout(&out)
    );
}

/// A grades file that outlived a change of its pack holds the last grades of its sessions by
/// different versions: their mean would compare nothing in particular, so it is refused.
#[test]
fn standing_results_of_two_versions_of_a_pack_are_refused_with_how_to_take_one() {
    let dir = tempfile::tempdir().unwrap();
    let lines = graded_lines("cleo-v1", false);
    let mut half = 0;
    let mixed = edited(&lines, |v| {
        half += 1;
        if half % 2 == 0 {
            v["rubric"]["version"] = Value::from("1.1.0");
            v["rubric"]["digest"] = Value::from("sha256:other");
        }
    });
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&a, mixed).unwrap();
    std::fs::write(&b, &lines).unwrap();
    let out = run(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("were made by different versions of `cleo-v1`")
            && err.contains("by `cleo-v1@1.0.0`")
            && err.contains("by `cleo-v1@1.1.0`")
            && err.contains("--rubric cleo-v1@VERSION"),
        "{err}"
    );
    assert_eq!(stdout(&out), "");
}

/// The page is written after the inputs are read: over an input, the run would end by
/// destroying what it compared.
#[test]
fn an_html_page_over_a_file_the_comparison_reads_is_refused_and_the_file_kept() {
    let dir = tempfile::tempdir().unwrap();
    let lines = graded_lines("cleo-v1", false);
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&a, &lines).unwrap();
    std::fs::write(&b, &lines).unwrap();
    let out = run(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--html",
        b.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("which the comparison reads: choose another file"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&b).unwrap(), lines);
    let out = run(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--html",
        dir.path().join("no/such/dir/page.html").to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("cannot write output file"),
        "{}",
        stderr(&out)
    );
}

/// Recorded without `--explain`, one side's results say nothing of rules: the other side's
/// pack rules are not "removed" for that (they were listed as removed, moving nothing).
#[test]
fn rules_are_not_called_removed_when_the_other_side_recorded_no_rule_traces() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    std::fs::write(&a, graded_lines("cleo-v1", true)).unwrap();
    let out = run(&[
        "compare",
        a.to_str().unwrap(),
        "tests/fixtures/conformance/cleo-v2.expected.jsonl",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("warning: `tests/fixtures/conformance/cleo-v2.expected.jsonl` holds results without rule traces")
            && err.contains("a grades file never keeps traces"),
        "the warning names the file without traces: {err}"
    );
    let r: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let rules = r["rules"].as_array().expect("rules");
    assert!(!rules.is_empty());
    assert!(rules.iter().all(|r| r["status"] == "same"), "{rules:#?}");
}

/// A results file is read as it was saved: a byte-order mark, every missing field at once,
/// and a `percent` that its scores do not give.
#[test]
fn a_results_file_with_a_bom_compares_and_a_broken_result_is_named_whole() {
    let dir = tempfile::tempdir().unwrap();
    let lines = graded_lines("cleo-v1", false);
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&a, format!("\u{feff}{lines}")).unwrap();
    std::fs::write(&b, &lines).unwrap();
    let r = json(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(r["summary"]["meanDelta"], 0.0);

    let first = lines.lines().next().unwrap();
    let mut v: Value = serde_json::from_str(first).unwrap();
    let obj = v.as_object_mut().unwrap();
    obj.remove("totalScore");
    obj.remove("flags");
    std::fs::write(&a, format!("{v}\n")).unwrap();
    let out = run(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains(":1: not a grade result: missing fields `totalScore`, `flags`"),
        "{}",
        stderr(&out)
    );

    let mut v: Value = serde_json::from_str(first).unwrap();
    let percent = v["percent"].as_f64().unwrap();
    v["percent"] = Value::from(if percent > 50.0 { 10.0 } else { 90.0 });
    std::fs::write(&a, format!("{v}\n")).unwrap();
    let out = run(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains(":1: not a grade result: its `percent`"),
        "{}",
        stderr(&out)
    );
    let out = run(&[
        "compare",
        b.to_str().unwrap(),
        b.to_str().unwrap(),
        "--pass-at",
        "NaN",
    ]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("`NaN` is not a percentage from 0 to 100"),
        "{}",
        stderr(&out)
    );
}

/// Arms paired by a key two sessions of an arm share pair neither: the run says so, and when
/// nothing could be paired it says why rather than "graded on both sides".
#[test]
fn arms_whose_sessions_share_a_key_are_warned_of_and_nothing_paired_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(common::repo_root().join(CORPUS)).unwrap();
    // Every entry of the arm names the same task: each session shares its key with the rest.
    let one_task = edited(&text, |v| {
        if let Some(entry) = v.as_object_mut() {
            entry.insert("metadata".to_owned(), serde_json::json!({"taskId": "T1"}));
        }
    });
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&a, &one_task).unwrap();
    std::fs::write(&b, &one_task).unwrap();
    let out = run(&[
        "compare",
        "--rubric",
        "cleo-v1",
        "--arm",
        &format!("old={}", a.display()),
        "--arm",
        &format!("new={}", b.display()),
        "--pair-by",
        "metadata.taskId",
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("share a `metadata.taskId` with another session of the arm (`T1` first) and cannot be paired"),
        "{err}"
    );
    assert!(
        err.contains("nothing to compare: no session could be paired"),
        "{err}"
    );
}

/// Unpaired arms are resampled each on its own: the page's footer does not call it paired.
#[test]
fn the_html_footer_names_the_bootstrap_that_made_the_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let page = unpaired_arms_page(dir.path(), "page.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("Intervals: bootstrap of the difference of the means, each arm resampled on its own, 10000 resamples, seed 0."),
        "unpaired footer"
    );
    assert!(!html.contains("__INTERVALS__"));
}

/// Issue 48, friction 11: the page named Wilcoxon, McNemar and the interval without saying
/// what they mean, its interval axis had no 0 mark, and "Rubric changes" came after a table
/// of 100 rows. Opened in Chromium, paired and unpaired: each figure is put in words with its
/// own numbers, 0 is marked on the axis, and the rubric's changes come before the tables.
#[test]
fn the_compare_page_says_what_its_tests_mean_marks_zero_and_puts_rubric_changes_first() {
    let dir = tempfile::tempdir().unwrap();
    let paired = dir.path().join("paired.html");
    let out = run(&[
        "compare",
        "--rubric",
        "cleo-v1",
        "--rubric",
        "cleo-v2",
        "--source",
        CORPUS,
        "--all",
        "--html",
        paired.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let (dom, console) = common::open_in_chromium(&paired, "");
    assert!(console.is_empty(), "the console spoke: {console:#?}");
    let read = &dom[dom.find("id=\"read\"").expect("the reading guide")..];
    let read = &read[..read.find("</ul>").expect("its end")];
    for words in [
        "<b>Mean change ",
        "<b>95% interval [",
        "the range the mean change stays in when the sessions are drawn again at random",
        "<b>Wilcoxon p ",
        "if the two packs graded alike and the differences were chance",
        "<b>McNemar p ",
        "went from pass to fail and",
        "not how large it is",
    ] {
        assert!(read.contains(words), "`{words}` is not said:\n{read}");
    }
    let dims = &dom[dom.find("id=\"dims\"").expect("the dimensions chart")..];
    let dims = &dims[..dims.find("</svg>").expect("its end")];
    assert!(
        dims.contains(">0</text>"),
        "no 0 on the interval axis:\n{dims}"
    );
    let at = |id: &str| {
        dom.find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("no `{id}`"))
    };
    assert!(at("diffCard") < at("sessionsCard"));
    assert!(at("diffCard") < at("rules"));
    assert!(at("readCard") < at("dist"));

    let unpaired = unpaired_arms_page(dir.path(), "unpaired.html");
    let (dom, console) = common::open_in_chromium(&unpaired, "");
    assert!(console.is_empty(), "the console spoke: {console:#?}");
    // The page's own script holds every sentence: only what it drew counts.
    let read = &dom[dom.find("id=\"read\"").expect("the reading guide")..];
    let read = &read[..read.find("</ul>").expect("its end")];
    assert!(
        read.contains("<b>Mann–Whitney p "),
        "unpaired test not said:\n{read}"
    );
    assert!(read.contains("<b>Cliff's delta</b>: the chance that a candidate session scores above"));
    assert!(!read.contains("Wilcoxon"), "{read}");
}

/// The sessions of the example log, one file each.
fn one_session_files(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let log = std::fs::read_to_string(common::repo_root().join("examples/cleo-audit.jsonl"))
        .expect("the example log");
    let of = |id: &str| -> String {
        log.lines()
            .filter(|l| l.contains(&format!("\"sessionId\": \"{id}\"")))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    let (good, sloppy) = (dir.join("good.jsonl"), dir.join("sloppy.jsonl"));
    std::fs::write(&good, of("session-demo-good")).unwrap();
    std::fs::write(&sloppy, of("session-demo-sloppy")).unwrap();
    (good, sloppy)
}

/// One session an arm made a 95% interval of width 0 ([-80, -80]): a certainty one session
/// cannot give, on which `--fail-on regression` failed the run.
#[test]
fn one_session_a_side_gives_no_interval_and_the_regression_gate_says_it_is_not_judged() {
    let dir = tempfile::tempdir().unwrap();
    let (good, sloppy) = one_session_files(dir.path());
    let (a, b) = (
        format!("good={}", good.display()),
        format!("sloppy={}", sloppy.display()),
    );
    let args = [
        "compare",
        "--rubric",
        "cleo-v1",
        "--arm",
        &a,
        "--arm",
        &b,
        "--fail-on",
        "regression",
    ];
    let report = json(&[&args[..], &["--format", "json"]].concat());
    assert_valid(&report);
    assert_eq!(report["summary"]["meanDelta"], -80.0);
    assert_eq!(report["summary"]["ci95"], Value::Null);
    for d in report["dimensions"].as_array().expect("dimensions") {
        assert_eq!(d["ci95"], Value::Null, "{d}");
    }
    let out = run(&args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("change -80.00  95% CI -\n"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        stderr(&out),
        "warning: `--fail-on regression` is not judged: the mean change has no 95% interval with 1 and 1 sessions in the arms (it needs 2 or more in each)\n"
    );

    // Paired, one session: the same.
    let same = format!("again={}", good.display());
    let out = run(&[
        "compare",
        "--rubric",
        "cleo-v1",
        "--arm",
        &a,
        "--arm",
        &same,
        "--pair-by",
        "sessionId",
        "--fail-on",
        "regression",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "warning: `--fail-on regression` is not judged: the mean change has no 95% interval with 1 paired session (it needs 2 or more)\n"
    );
}

/// Two files of results with no session in common were said to have "no session graded on
/// both sides", as if grading had failed.
#[test]
fn recorded_results_with_no_session_in_common_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let lines = graded_lines("cleo-v1", false);
    let mut halves = lines.lines();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&a, format!("{}\n", halves.next().expect("a result"))).unwrap();
    std::fs::write(&b, format!("{}\n", halves.next().expect("another result"))).unwrap();
    let out = run(&[
        "compare",
        a.to_str().expect("utf-8"),
        b.to_str().expect("utf-8"),
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).ends_with(
            "error[E201]: nothing to compare: the two sides have no session id in common\n"
        ),
        "{}",
        stderr(&out)
    );
}

/// The same file as both sides was named twice in the warning ("`a` and `a` hold"), as if
/// two files lacked traces.
#[test]
fn the_same_results_file_as_both_sides_is_named_once_and_compares_as_no_change() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.jsonl");
    std::fs::write(&file, graded_lines("cleo-v1", false)).unwrap();
    let path = file.to_str().expect("utf-8");
    let out = run(&["compare", path, path, "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "warning: `{path}` holds results without rule traces: changes are put down to dimensions, not rules (a grades file never keeps traces; write results with `grade … --all --explain --format jsonl -o FILE`)\n"
        )
    );
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_valid(&report);
    assert_eq!(report["summary"]["meanDelta"], 0.0);
    assert_eq!(report["summary"]["improved"], 0);
    assert_eq!(report["summary"]["regressed"], 0);
    // The human report said "most changed sessions (0 of 0 changed)" over nothing.
    let out = run(&["compare", path, path]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let human = stdout(&out);
    assert!(human.contains("\nno session changed\n"), "{human}");
    assert!(!human.contains("most changed sessions"), "{human}");
}

/// The lines of the example CLEO audit log.
fn example_lines() -> Vec<String> {
    std::fs::read_to_string(common::repo_root().join("examples/cleo-audit.jsonl"))
        .expect("example")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Writes `lines` as `dir/name`, returning its path as text.
fn write_lines(dir: &std::path::Path, name: &str, lines: &[String]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    path.to_str().expect("utf-8 path").to_owned()
}

/// A comparison reads its source as grading with each pack reads it: a field neither pack
/// reads is not type-checked (it refused `"error": 42`, which both cleo packs grade past),
/// and `--skip-bad-lines` skips a malformed line with a warning, as the hint says.
#[test]
fn compare_reads_the_source_as_grading_with_each_pack_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut lines = example_lines();
    lines[1] = lines[1].replacen("\"params\"", "\"error\": 42, \"params\"", 1);
    let odd = &write_lines(dir.path(), "odd.jsonl", &lines);
    for pack in ["cleo-v1", "cleo-v2"] {
        let out = run(&["--rubric", pack, "--source", odd, "--all", "--no-record"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let compare = ["compare", "--rubric", "cleo-v1", "--rubric", "cleo-v2"];
    let out = run(&[&compare[..], &["--source", odd, "--all"]].concat());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "");

    lines.insert(2, "{\"timestamp\": oops".to_owned());
    let bad = &write_lines(dir.path(), "bad.jsonl", &lines);
    let out = run(&[&compare[..], &["--source", bad, "--all"]].concat());
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        format!("error[E104]: {bad}:3: not valid JSON: expected value (column 15) (pass `--skip-bad-lines` to skip malformed lines with a warning)\n")
    );
    let out = run(&[
        &compare[..],
        &["--source", bad, "--all", "--skip-bad-lines"],
    ]
    .concat());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!("warning: {bad}:3: skipped a malformed line: not valid JSON: expected value (column 15)\n\
                 warning: skipped 1 malformed line of `{bad}`; the results of their sessions say how many each lost\n")
    );
}

/// `grade --skip-bad-lines` ends by saying how many lines it skipped; `grade compare` printed
/// each skipped line but not that count, which a long run's warnings scroll away. It ends
/// with the same words, once per source read, after the report.
#[test]
fn compare_ends_with_how_many_lines_each_source_skipped_as_grading_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut lines = example_lines();
    lines.insert(2, "{\"timestamp\": oops".to_owned());
    lines.insert(5, "not json".to_owned());
    let bad = &write_lines(dir.path(), "bad.jsonl", &lines);
    let expected = format!(
        "warning: {bad}:3: skipped a malformed line: not valid JSON: expected value (column 15)\n\
         warning: {bad}:6: skipped a malformed line: not valid JSON: expected ident (column 2)\n\
         warning: skipped 2 malformed lines of `{bad}`; the results of their sessions say how many each lost\n"
    );
    let graded = run(&[
        "--rubric",
        "cleo-v1",
        "--source",
        bad,
        "--all",
        "--skip-bad-lines",
        "--no-record",
    ]);
    assert_eq!(code(&graded), 0, "{}", stderr(&graded));
    assert_eq!(stderr(&graded), expected);
    let compared = run(&[
        "compare",
        "--rubric",
        "cleo-v1",
        "--rubric",
        "cleo-v2",
        "--source",
        bad,
        "--all",
        "--skip-bad-lines",
    ]);
    assert_eq!(code(&compared), 0, "{}", stderr(&compared));
    assert_eq!(stderr(&compared), expected);

    // Two arms: each source's lines as it is read, then each source's count, in arm order.
    let mut lines = example_lines();
    lines.insert(1, "{oops".to_owned());
    let other = &write_lines(dir.path(), "other.jsonl", &lines);
    let arms = run(&[
        "compare",
        "--rubric",
        "cleo-v1",
        "--arm",
        &format!("a={bad}"),
        "--arm",
        &format!("b={other}"),
        "--skip-bad-lines",
    ]);
    assert_eq!(code(&arms), 0, "{}", stderr(&arms));
    assert_eq!(
        stderr(&arms),
        format!(
            "warning: {bad}:3: skipped a malformed line: not valid JSON: expected value (column 15)\n\
             warning: {bad}:6: skipped a malformed line: not valid JSON: expected ident (column 2)\n\
             warning: {other}:2: skipped a malformed line: not valid JSON: key must be a string (column 2)\n\
             warning: skipped 2 malformed lines of `{bad}`; the results of their sessions say how many each lost\n\
             warning: skipped 1 malformed line of `{other}`; the results of their sessions say how many each lost\n"
        )
    );
}

/// The warnings of a read (records a transcript reader skipped) were dropped by compare,
/// which graded what was left without a word.
#[test]
fn compare_prints_what_the_read_skipped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let transcript = dir.path().join("t.jsonl");
    std::fs::write(
        &transcript,
        concat!(
            r#"{"type":"user","sessionId":"s1","uuid":"u1","timestamp":"2025-09-03T00:00:00Z","message":{"role":"user","content":"fix the bug"}}"#,
            "\n",
            r#"{"type":"assistant","sessionId":"s1","uuid":"a1","timestamp":"2025-09-03T00:00:01Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/a.rs"}}]}}"#,
            "\n",
            r#"{"type":"assistant","sessionId":"s1","uuid":"a2","timestamp":"2025-09-03T00:00:02Z","message":7}"#,
            "\n",
        ),
    )
    .expect("write");
    let path = transcript.to_str().expect("utf-8 path");
    let graded = run(&[
        "--rubric",
        "claude-code-v1",
        "--source",
        path,
        "--all",
        "--no-record",
    ]);
    let warning = format!("warning: {path}:3: skipped: `message` is a JSON number, not an object");
    assert!(stderr(&graded).contains(&warning), "{}", stderr(&graded));
    let compared = run(&[
        "compare",
        "--rubric",
        "claude-code-v1",
        "--rubric",
        "claude-code-v1",
        "--source",
        path,
        "--all",
    ]);
    assert_eq!(code(&compared), 0, "{}", stderr(&compared));
    assert!(
        stderr(&compared).contains(&warning),
        "{}",
        stderr(&compared)
    );
    let arms = run(&[
        "compare",
        "--rubric",
        "claude-code-v1",
        "--arm",
        &format!("a={path}"),
        "--arm",
        &format!("b={path}"),
    ]);
    assert_eq!(code(&arms), 0, "{}", stderr(&arms));
    assert_eq!(
        stderr(&arms).matches(&warning).count(),
        2,
        "{}",
        stderr(&arms)
    );
}
