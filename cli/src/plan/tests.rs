//! Flags → plan: what a command line plans, and the command lines refused before anything
//! is read.

use std::path::{Path, PathBuf};

use clap::Parser;

use super::{GradePlan, GradeRequest};
use crate::args::{Cli, Format, GradeFormat};
use crate::error::CliError;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The conformance corpus's audit log, a CLEO source.
fn audit_log() -> String {
    repo()
        .join("tests/fixtures/conformance/audit.jsonl")
        .display()
        .to_string()
}

/// The request of `grade ARGS…`, given as one line split at spaces (`{log}` for the
/// conformance log), packs looked up in the repository's `rubrics/`.
fn request(line: &str) -> GradeRequest {
    let line = line.replace("{log}", &audit_log());
    let cli = Cli::try_parse_from(std::iter::once("grade").chain(line.split_whitespace()))
        .unwrap_or_else(|e| panic!("`{line}` parses: {e}"));
    GradeRequest {
        search_path: vec![repo().join("rubrics")],
        ..GradeRequest::from_cli(&cli)
    }
}

fn plan(line: &str) -> GradePlan {
    GradePlan::new(&request(line)).unwrap_or_else(|e| panic!("`{line}` plans: {e}"))
}

/// The usage error `grade ARGS…` is refused with.
fn refusal(line: &str) -> String {
    match GradePlan::new(&request(line)) {
        Err(CliError::Usage(message)) => message,
        Err(other) => panic!("`{line}`: not a usage error: {other}"),
        Ok(_) => panic!("`{line}` was planned"),
    }
}

#[test]
fn default_request_is_the_command_line_of_grade_alone() {
    // `grade mcp` builds its requests over `GradeRequest::default()`: a default that
    // drifted from clap's would grade a tool call unlike the same command line.
    let cli = Cli::try_parse_from(["grade"]).expect("`grade` alone parses");
    let parsed = GradeRequest {
        // The pack flags read the environment; the request's default reads none.
        search_path: Vec::new(),
        policy: GradeRequest::default().policy,
        ..GradeRequest::from_cli(&cli)
    };
    assert_eq!(parsed, GradeRequest::default());
}

#[test]
fn all_of_a_log_as_lines_is_streamed_and_only_printed() {
    let plan = plan("--rubric cleo-v1 --source {log} --all --format jsonl --no-record");
    assert_eq!(plan.pack.id, "cleo-v1");
    assert!(
        plan.stream_as.is_some(),
        "a whole log graded by rules streams"
    );
    assert!(plan.stream_named.is_none());
    assert!(plan.lines_only, "nothing but lines go out");
    assert_eq!(plan.record_to, None);
    assert!(plan.selection.all && plan.selection.named.is_empty());
    assert_eq!(plan.output.format, GradeFormat::Jsonl);
    assert!(plan.rows.is_none());
    assert_eq!(plan.source_path(), Path::new(&audit_log()));
}

#[test]
fn a_cleo_source_records_to_the_history_unless_told_otherwise() {
    let plan = plan("--rubric cleo-v1 --source {log} --all");
    assert_eq!(
        plan.record_to.as_deref(),
        Some(Path::new(crate::DEFAULT_GRADES))
    );
    assert!(plan.default_grades);
    assert!(!plan.lines_only, "a recorded run holds its output");
    let plan = self::plan("--rubric cleo-v1 --source {log} --all --grades g.jsonl");
    assert_eq!(plan.record_to.as_deref(), Some(Path::new("g.jsonl")));
    assert!(!plan.default_grades);
}

#[test]
fn named_sessions_keep_their_order_and_output_flags_resolve() {
    let plan = plan("--rubric cleo-v1 --source {log} b a b --allow-empty --format csv --fail-under 70 --color always --explain --no-record");
    assert_eq!(plan.selection.named, ["b", "a", "b"]);
    assert!(!plan.selection.all && plan.selection.allow_empty);
    assert!(
        plan.stream_as.is_none(),
        "a few named sessions are read whole"
    );
    assert!(plan.stream_named.is_none());
    assert!(plan.rows.as_ref().is_some_and(|r| r.pass_at() == 70.0));
    assert!(plan.output.color && plan.output.explain && plan.options.explain);
    assert_eq!(plan.output.fail_under, Some(70.0));
    assert_eq!(plan.output.print_prompt, None);
}

#[test]
fn judge_settings_reach_the_plan() {
    let plan = plan("--rubric cleo-v1 --source {log} s1 --judge-cmd cat --judge-timeout 7 --judge-max-output 2 --judge-runs 3 --no-record");
    let judging = &plan.judging;
    assert_eq!(judging.judge_cmd, ["cat"]);
    assert_eq!(judging.timeout, std::time::Duration::from_secs(7));
    assert_eq!(judging.max_output, 2 << 20);
    assert_eq!(judging.runs, 3);
    assert!(judging.cache);
}

#[test]
fn print_prompt_takes_the_plain_formats_only() {
    let plan = plan("--rubric cleo-v1 --source {log} s1 --print-prompt --format json");
    assert_eq!(plan.output.print_prompt, Some(Format::Json));
    assert_eq!(
        refusal("--rubric cleo-v1 --source {log} s1 --print-prompt --format junit"),
        "`--print-prompt` prints prompts as `human`, `json` or `jsonl`, not `junit`"
    );
}

#[test]
fn conflicting_selections_are_refused() {
    assert_eq!(
        refusal("--rubric cleo-v1 --all s1"),
        "give session ids or `--all`, not both"
    );
    assert_eq!(
        refusal("--rubric cleo-v1"),
        "name the sessions to grade, or pass `--all` to grade every session of the source"
    );
    assert_eq!(
        refusal("s1"),
        "`--rubric ID|PATH` is required to grade (or use `--list` to show recorded grades)"
    );
    assert_eq!(
        refusal("--rubric cleo-v1 --session s1 s1"),
        "`--session` filters `--list`; to grade a session, name it as an argument"
    );
    assert_eq!(
        refusal("--rubric cleo-v1 --judgment j.json a b"),
        "a `--judgment` judges one session: name exactly one"
    );
}

#[test]
fn flags_that_would_do_nothing_are_refused_together() {
    let message = refusal("--rubric cleo-v1 --all --allow-empty --config-ids ids.json");
    let lines: Vec<&str> = message.split("\nerror: ").collect();
    assert_eq!(lines.len(), 2, "{message}");
    assert!(lines[0].starts_with("`--config-ids` names the score configs"));
    assert!(lines[1].starts_with("`--allow-empty` grades a named session"));
}

#[test]
fn outputs_that_would_destroy_the_source_or_history_are_refused() {
    assert_eq!(
        refusal("--rubric cleo-v1 --source {log} --all --grades -"),
        "`--grades -` would record to a file named `-`: grades are appended to a file (`--format jsonl` prints the results, `--no-record` records none)"
    );
    assert_eq!(
        refusal("--rubric cleo-v1 --source {log} --all --output {log}"),
        format!(
            "`--output {}` is the source being graded: results written there would destroy it",
            audit_log()
        )
    );
    assert_eq!(
        refusal("--rubric cleo-v1 --source {log} --all --grades g.jsonl --output g.jsonl"),
        "`--output g.jsonl` is the grades file this run records to: results written there would replace its history (write them elsewhere, or give `--no-record`)"
    );
    assert_eq!(
        refusal("--rubric cleo-v1 --source {log} --all --html -"),
        "`--html -` would mix the page with the results on standard output: name a file for the page"
    );
}

#[test]
fn a_request_built_without_a_command_line_plans_as_grade_does() {
    // What `grade mcp`'s `grade` tool does: a request over the defaults.
    let ask = GradeRequest {
        rubric: Some("cleo-v1".to_owned()),
        search_path: vec![repo().join("rubrics")],
        source: vec![PathBuf::from(audit_log())],
        sessions: vec!["s1".to_owned()],
        no_record: true,
        ..GradeRequest::default()
    };
    let plan = GradePlan::new(&ask).expect("plans");
    assert_eq!(plan.selection.named, ["s1"]);
    assert_eq!(plan.output.format, GradeFormat::Human);
    assert!(plan.judging.judge.is_empty() && plan.judging.cache);
    assert_eq!(plan.record_to, None);
}

/// The plan of `grade compare ARGS…`, given as one line split at spaces (`{log}` for the
/// conformance log).
fn compare_plan(line: &str) -> Result<super::ComparePlan, CliError> {
    let line = line.replace("{log}", &audit_log());
    let words = ["grade", "compare"]
        .into_iter()
        .chain(line.split_whitespace());
    match Cli::try_parse_from(words).map(|cli| cli.command) {
        Ok(Some(crate::args::Command::Compare(args))) => super::ComparePlan::new(&args),
        Ok(_) => panic!("`{line}` is not a comparison"),
        Err(e) => panic!("`{line}` parses: {e}"),
    }
}

fn compare_refusal(line: &str) -> String {
    match compare_plan(line) {
        Err(CliError::Usage(message)) => message,
        Err(other) => panic!("`{line}`: not a usage error: {other}"),
        Ok(_) => panic!("`{line}` was planned"),
    }
}

#[test]
fn compare_flags_become_the_comparisons_form_and_settings() {
    let plan = compare_plan(
        "--rubric cleo-v1 --rubric cleo-v2 --source {log} --all --fail-on regression --fail-on drop=2 --top 3 --color never --format json --seed 7",
    )
    .expect("plans");
    match &plan.form {
        super::Form::Rubrics {
            base, cand, all, ..
        } => {
            assert_eq!((base.as_str(), cand.as_str()), ("cleo-v1", "cleo-v2"));
            assert!(*all);
        }
        _ => panic!("not two rubrics"),
    }
    assert_eq!(plan.rules.len(), 2);
    assert_eq!(plan.options.seed, 7);
    assert_eq!(plan.output.top, 3);
    assert!(!plan.output.color);
    assert_eq!(plan.output.format, crate::args::CompareFormat::Json);
    let plan = compare_plan("base.jsonl cand.jsonl").expect("plans");
    assert!(
        matches!(&plan.form, super::Form::Recorded { base, cand } if base == Path::new("base.jsonl") && cand == Path::new("cand.jsonl"))
    );
}

#[test]
fn compare_flags_that_do_not_fit_together_are_refused_in_order() {
    assert_eq!(
        compare_refusal("--rubric cleo-v1 --rubric cleo-v2 --source {log} --all s1"),
        "give session ids or `--all`, not both"
    );
    assert_eq!(
        compare_refusal("--rubric cleo-v1 base.jsonl cand.jsonl"),
        "one rubric compares two arms (`--arm NAME=SOURCE` twice); to compare rubric versions give `--rubric` twice"
    );
    assert_eq!(
        compare_refusal("base.jsonl cand.jsonl --pair-by metadata.task"),
        "`--pair-by` pairs the sessions of two arms (`--arm NAME=SOURCE`); rubric versions and recorded results pair by session id"
    );
    // The form is checked before the page, the page before the rules.
    assert_eq!(
        compare_refusal("base.jsonl cand.jsonl --html - --fail-on nonsense"),
        "`--html -` would write a file named `-`: give the page a file name (the report on standard output is `--format`'s)"
    );
    assert_eq!(
        compare_refusal("base.jsonl cand.jsonl --fail-on nonsense"),
        "`--fail-on nonsense`: expected `regression`, `flips` or `drop=X` with X a number of points ≥ 0"
    );
    assert_eq!(
        compare_refusal("base.jsonl cand.jsonl --html base.jsonl"),
        "`--html base.jsonl` would be written over `base.jsonl`, which the comparison reads: choose another file"
    );
}

#[test]
fn every_row_format_of_the_engine_is_a_format_value() {
    // `--format` takes its row formats from the engine's registry: a new one needs no line
    // in the binary, and none may take a name of the binary's own forms.
    let kinds = grade_engine::sink::ROW_FORMATS;
    assert!(!kinds.is_empty());
    for kind in kinds {
        assert!(
            !["human", "json", "jsonl"].contains(&kind.name),
            "`{}` is a form of the binary's own",
            kind.name
        );
        let plan = plan(&format!(
            "--rubric cleo-v1 --source {{log}} --all --no-record --format {}",
            kind.name
        ));
        assert_eq!(plan.output.format, GradeFormat::Rows(kind));
        assert_eq!(plan.output.format.name(), kind.name);
        let rows = plan.rows.as_ref().expect("a row format plans its rows");
        assert!(!plan.lines_only);
        // Made at the pack's pass mark (C = 60 for CLEO), as the registry's maker says.
        assert_eq!(rows.pass_at(), 60.0, "{}", kind.name);
    }
    let mut names: Vec<&str> = kinds.iter().map(|k| k.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(
        names.len(),
        kinds.len(),
        "a row format's name is taken twice"
    );
}
