//! The delivery: what it writes is what the engine's sinks write, a write that fails is the
//! run's error (never swallowed), and a session that could not be graded is counted.

use std::path::{Path, PathBuf};

use grade_engine::sink::{self, JsonDocument, JsonLines, Rows};
use grade_engine::{EvalError, GradeResult, Session};

use super::{Delivery, FailureNotes};
use crate::error::CliError;
use crate::plan::{GradePlan, GradeRequest};

/// The plan of a run over the conformance log with `extra` flags, recording nothing.
fn plan(names: &[&str], extra: impl FnOnce(&mut GradeRequest)) -> GradePlan {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut ask = GradeRequest {
        rubric: Some("cleo-v1".to_owned()),
        search_path: vec![repo.join("rubrics")],
        source: vec![repo.join("tests/fixtures/conformance/audit.jsonl")],
        sessions: names.iter().map(|&n| n.to_owned()).collect(),
        no_record: true,
        ..GradeRequest::default()
    };
    extra(&mut ask);
    GradePlan::new(&ask).expect("plans")
}

/// The results of sessions without entries, as the plan grades them.
fn results(plan: &GradePlan) -> Vec<GradeResult> {
    plan.selection
        .named
        .iter()
        .map(|id| {
            let session = Session {
                id: id.clone(),
                entries: Vec::new(),
                skipped_lines: 0,
            };
            let mut result = plan
                .pack
                .grade_owned(session, None, &plan.options)
                .expect("grades");
            result.timestamp = "2026-01-01T00:00:00.000Z".to_owned();
            result
        })
        .collect()
}

/// What the delivery of `plan` writes to the file `--output` names, with `results`.
fn delivered(plan: &GradePlan, results: Vec<GradeResult>) -> Vec<u8> {
    let mut delivery = Delivery::new(plan, FailureNotes::AtOnce);
    let renders = delivery.renders();
    for result in results {
        delivery.take(renders.render(result).expect("renders"));
    }
    delivery.finish().expect("delivers");
    std::fs::read(plan.output.to.as_deref().expect("an output file")).expect("written")
}

fn output_in(dir: &tempfile::TempDir) -> impl FnOnce(&mut GradeRequest) + '_ {
    move |ask| ask.output = Some(dir.path().join("out"))
}

#[test]
fn the_delivery_writes_what_the_engine_sinks_write() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for format in ["json", "jsonl", "csv"] {
        let plan = plan(&["a", "b"], |ask| {
            ask.format = clap::ValueEnum::from_str(format, false).expect("a format");
            output_in(&dir)(ask);
        });
        let mut expected = Vec::new();
        let results = results(&plan);
        match format {
            "json" => sink::write_all(&mut JsonDocument::new(&mut expected), &results),
            "jsonl" => sink::write_all(&mut JsonLines::new(&mut expected), &results),
            _ => {
                let rows = plan.rows.as_deref().expect("a row format");
                sink::write_all(&mut Rows::new(&mut expected, rows), &results)
            }
        }
        .expect("the sink writes");
        assert_eq!(
            String::from_utf8_lossy(&delivered(&plan, results)),
            String::from_utf8_lossy(&expected),
            "{format}"
        );
    }
}

#[test]
fn human_reports_are_apart_by_a_blank_line_and_followed_by_no_summary_for_named_sessions() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let plan = plan(&["a", "b"], output_in(&dir));
    let results = results(&plan);
    let reports: Vec<String> = results
        .iter()
        .map(|r| crate::render::report(r, &plan.pack, false))
        .collect();
    assert_eq!(
        String::from_utf8_lossy(&delivered(&plan, results)),
        reports.join("\n")
    );
}

#[test]
fn output_that_cannot_be_written_is_the_runs_error() {
    // A full disk: what was graded is not lost in silence, and no grade is recorded.
    let full = PathBuf::from("/dev/full");
    if !full.exists() {
        return;
    }
    let plan = plan(&["a"], |ask| ask.output = Some(full.clone()));
    let mut delivery = Delivery::new(&plan, FailureNotes::AtOnce);
    let renders = delivery.renders();
    for result in results(&plan) {
        delivery.take(renders.render(result).expect("renders"));
    }
    match delivery.finish() {
        Err(err @ CliError::Output { .. }) => {
            assert_eq!(err.exit_code(), 2);
            assert!(err
                .to_string()
                .starts_with("cannot write output file `/dev/full`: "));
        }
        Err(other) => panic!("not an output error: {other}"),
        Ok(_) => panic!("a write to a full disk was taken for a success"),
    }
}

#[test]
fn a_session_that_could_not_be_graded_is_counted_and_fails_the_run() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let plan = plan(&["a", "b"], |ask| {
        ask.format = crate::args::GradeFormat::Jsonl;
        output_in(&dir)(ask);
    });
    let mut delivery = Delivery::new(&plan, FailureNotes::BetweenLines);
    let renders = delivery.renders();
    let mut results = results(&plan).into_iter();
    delivery.take(renders.render(results.next().expect("a")).expect("renders"));
    delivery.failed(Box::new(EvalError::NoJudgment {
        pack: "cleo-v1".to_owned(),
        session: "b".to_owned(),
        dimensions: "`x`".to_owned(),
    }));
    let done = delivery.finish().expect("delivers");
    assert_eq!((done.failed, done.total), (1, 2));
    let written = std::fs::read_to_string(dir.path().join("out")).expect("written");
    assert_eq!(written.lines().count(), 1, "only the graded session's line");
}
