//! `grade`: grade AI coding-agent sessions against rubric packs.
//!
//! Only this binary turns errors into exit codes: 0 graded, 1 a check failed (an invalid
//! pack), 2 a usage or input error.

mod args;
mod error;
mod grades;
mod pack_tests;
mod render;
mod rubric_cmd;
mod scaffold;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use grade_engine::{GradeOptions, GradeResult, Session, SessionFilter};
use rayon::prelude::*;

use args::{Cli, Command, Format};
use error::CliError;

/// Where CLEO keeps its database, relative to the project folder.
const DEFAULT_SOURCE: &str = ".cleo/tasks.db";
/// Where CLEO appends grades, relative to the project folder.
const DEFAULT_GRADES: &str = ".cleo/metrics/GRADES.jsonl";

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help and version to stdout with success; everything else is usage.
            let code = if err.use_stderr() { 2 } else { 0 };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}

fn run(cli: Cli) -> Result<(), CliError> {
    let search_path = cli.rubric_search_path();
    if let Some(Command::Rubric(cmd)) = &cli.command {
        return rubric_cmd::run(cmd, &search_path);
    }
    if cli.list {
        return list_grades(&cli);
    }
    let Some(spec) = cli.rubric.as_deref() else {
        return Err(CliError::Usage(
            "`--rubric ID|PATH` is required to grade (or use `--list` to show recorded grades)".to_owned(),
        ));
    };
    if cli.session.is_some() {
        return Err(CliError::Usage("`--session` filters `--list`; to grade a session, name it as an argument".to_owned()));
    }
    if cli.all && !cli.sessions.is_empty() {
        return Err(CliError::Usage("give session ids or `--all`, not both".to_owned()));
    }
    if !cli.all && cli.sessions.is_empty() {
        return Err(CliError::Usage(
            "name the sessions to grade, or pass `--all` to grade every session of the source".to_owned(),
        ));
    }
    let pack = grade_engine::load_pack(spec, &search_path)?;
    let source = source_path(cli.source.as_deref())?;
    let filter = if cli.all {
        SessionFilter::All
    } else {
        SessionFilter::only(cli.sessions.iter().cloned())
    };
    let read = grade_engine::read_source(&source, cli.source_format.format(), &filter)?;
    for warning in &read.warnings {
        eprintln!("warning: {warning}");
    }
    let mut sessions = read.sessions;

    // Results come out in the order asked; a session without entries still gets a grade.
    let ordered: Vec<Session> = if cli.all {
        sessions
    } else {
        cli.sessions
            .iter()
            .map(|id| match sessions.iter().position(|s| &s.id == id) {
                Some(i) => sessions.swap_remove(i),
                None => Session {
                    id: id.clone(),
                    entries: Vec::new(),
                },
            })
            .collect()
    };
    for s in ordered.iter().filter(|s| s.entries.is_empty()) {
        eprintln!(
            "warning: session `{}` has no entries in `{}`; it gets the empty-session grade",
            s.id,
            source.display()
        );
    }
    let options = GradeOptions {
        explain: cli.explain,
        ..GradeOptions::default()
    };
    // A rule that fails on one session (a runaway script) must not cost the others their
    // grade: report it, grade the rest, and fail the run at the end.
    let outcomes: Vec<Result<GradeResult, grade_engine::EvalError>> =
        ordered.par_iter().map(|s| pack.grade(s, &options)).collect();
    let mut results = Vec::with_capacity(outcomes.len());
    let mut failed = 0;
    for outcome in outcomes {
        match outcome {
            Ok(r) => results.push(r),
            Err(err) => {
                failed += 1;
                eprintln!("error: {err}");
            }
        }
    }

    if !cli.no_record {
        let path = cli.grades.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_GRADES));
        grades::append(&path, &results)?;
    }
    let mut out = Vec::new();
    match cli.format {
        Format::Jsonl => {
            for r in &results {
                serde_json::to_writer(&mut out, r).map_err(CliError::Json)?;
                out.push(b'\n');
            }
        }
        Format::Json => {
            if let [one] = results.as_slice() {
                serde_json::to_writer_pretty(&mut out, one).map_err(CliError::Json)?;
            } else {
                serde_json::to_writer_pretty(&mut out, &results).map_err(CliError::Json)?;
            }
            out.push(b'\n');
        }
        Format::Human => {
            let color = render::use_color(cli.color);
            for (i, r) in results.iter().enumerate() {
                if i > 0 {
                    out.push(b'\n');
                }
                out.extend_from_slice(render::report(r, &pack, color).as_bytes());
            }
        }
    }
    write_stdout(&out)?;
    if failed > 0 {
        return Err(CliError::CheckFailed(format!(
            "{failed} of {} session{} could not be graded",
            ordered.len(),
            if ordered.len() == 1 { "" } else { "s" }
        )));
    }
    Ok(())
}

fn source_path(given: Option<&Path>) -> Result<PathBuf, CliError> {
    match given {
        Some(path) => {
            if !path.exists() {
                return Err(CliError::Usage(format!("source `{}` does not exist", path.display())));
            }
            Ok(path.to_owned())
        }
        None => {
            let default = PathBuf::from(DEFAULT_SOURCE);
            if default.is_file() {
                Ok(default)
            } else {
                Err(CliError::Usage(format!(
                    "no `--source` given and there is no `{DEFAULT_SOURCE}` in this folder (CLEO keeps its audit log there)"
                )))
            }
        }
    }
}

fn list_grades(cli: &Cli) -> Result<(), CliError> {
    if cli.rubric.is_some() || !cli.sessions.is_empty() || cli.all {
        return Err(CliError::Usage(
            "`--list` shows recorded grades; it takes only `--session`, `--grades` and `--format`".to_owned(),
        ));
    }
    let path = cli.grades.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_GRADES));
    let mut recorded = grades::read(&path)?;
    if let Some(id) = &cli.session {
        recorded.retain(|g| g.get("sessionId").and_then(|v| v.as_str()) == Some(id.as_str()));
    }
    let out = match cli.format {
        Format::Human => render::grade_table(&recorded),
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&recorded).map_err(CliError::Json)?;
            text.push('\n');
            text
        }
        Format::Jsonl => {
            let mut text = String::new();
            for g in &recorded {
                text.push_str(&serde_json::to_string(g).map_err(CliError::Json)?);
                text.push('\n');
            }
            text
        }
    };
    write_stdout(out.as_bytes())
}

pub(crate) fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(CliError::Stdout)
}
