//! `grade --rubric …`: the grading command, staged as the engine's pipeline is. The
//! command line becomes a checked [`GradePlan`] (pack, source, streaming choice, where
//! results go); the engine grades (`grade_engine::run`); this module renders the outcomes,
//! records them through the engine's sinks and turns failures into the binary's errors.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use grade_engine::run::{Outcome, SourceRun};
use grade_engine::sink::langfuse::{LangfuseScores, ScoreBody};
use grade_engine::{EvalError, GradeResult, Session, SessionFilter, SourceFormat};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::delivery::{json_line, Delivered, Delivery, FailureNotes, Rendered, Renders};
use crate::error::CliError;
use crate::plan::GradePlan;
use crate::{http, judge, langfuse, render, summary};

/// Grades as planned, then delivers the results (rendered, recorded, sent) and reports.
pub fn run(plan: &GradePlan) -> Result<(), CliError> {
    let (delivered, skipped) = match &plan.stream_as {
        Some(format) => stream(plan, format.as_ref())?,
        None => match plan.output.print_prompt {
            Some(format) => {
                let mut warn = |warning: String| crate::warn(&warning);
                let (sessions, _) =
                    crate::sessions::named_sessions(&plan.selection, &plan.source, &mut warn)?;
                return judge::print_prompts(&plan.pack, &sessions, format);
            }
            None => whole(plan)?,
        },
    };
    report_skipped(skipped, &plan.source.path);
    report_nothing_graded(plan, delivered.total)?;
    write_page(plan, delivered.page)?;
    finish(delivered.failed, delivered.total)?;
    delivered.floor.map_or(Ok(()), summary::Floor::check)
}

/// Grades the sessions named (or all of a source that does not stream), read whole or
/// streamed by name, and delivers their results as a streamed run does; then sends their
/// scores to Langfuse (`--push`). Also the number of malformed lines skipped.
fn whole(plan: &GradePlan) -> Result<(Delivered, u64), CliError> {
    let mut warn = |warning: String| crate::warn(&warning);
    let mut delivery = Delivery::new(plan, FailureNotes::AtOnce);
    let renders = delivery.renders();
    let streamed = match &plan.stream_named {
        Some(format) => stream_named(plan, format.as_ref(), &renders, &mut warn)?,
        None => None,
    };
    // Only `--emit` and `--push` read the sessions again, and they are not streamed.
    if let Some((ready, skipped)) = streamed {
        let mut rendered = Vec::with_capacity(ready.len());
        for r in ready {
            match r {
                Ready::Rendered(r) => rendered.push(r),
                Ready::Failed(err) => delivery.failed(err),
            }
        }
        for r in rendered {
            delivery.take(r);
        }
        return Ok((delivery.finish()?, skipped));
    }
    let graded = grade_named(plan, &mut warn)?;
    let (outcomes, sessions, skipped) = (graded.outcomes, graded.sessions, graded.skipped);
    // A rule that failed on one session (a runaway script) is reported, and the others
    // keep their grade.
    let mut results = Vec::with_capacity(outcomes.len());
    for outcome in outcomes {
        match outcome {
            Ok(result) => results.push(result),
            Err(err) => delivery.failed(Box::new(err)),
        }
    }
    let scores = if plan.output.emit || plan.output.push {
        score_bodies(plan, &results, &sessions)?
    } else {
        Vec::new()
    };
    for result in results {
        delivery.take(renders.render(result)?);
    }
    if plan.output.emit {
        delivery.take_scores(&scores)?;
    }
    let delivered = delivery.finish()?;
    if plan.output.push {
        push_scores(&scores)?;
    }
    Ok((delivered, skipped))
}

/// `--all` over a source without sessions (an empty log, the wrong file) prints no result:
/// said on stderr, so that nobody takes the silence for a clean run, and a `--fail-under`
/// gate that checked nothing fails (a CI job pointed at the wrong file must not pass).
fn report_nothing_graded(plan: &GradePlan, total: usize) -> Result<(), CliError> {
    if !(plan.selection.all && total == 0) {
        return Ok(());
    }
    let nothing = grade_engine::run::no_sessions(plan.source_path());
    if plan.output.fail_under.is_some() {
        return Err(CliError::CheckFailed(format!(
            "`--fail-under` checked no session: {nothing}"
        )));
    }
    crate::warn(&format!("{nothing}: nothing was graded"));
    Ok(())
}

/// The sessions a run names (or all of them), graded.
pub struct GradedSessions {
    /// The sessions, in the order asked.
    pub sessions: Vec<Session>,
    /// Their outcomes, in the same order.
    pub outcomes: Vec<Outcome>,
    /// Malformed lines of the source that were skipped.
    pub skipped: u64,
}

/// Reads the sessions the command line names from the planned source and grades them
/// (with their judgments): what `grade` and `grade mcp`'s `grade` tool both do.
pub fn grade_named(
    plan: &GradePlan,
    warn: &mut dyn FnMut(String),
) -> Result<GradedSessions, CliError> {
    let (sessions, skipped, files) =
        crate::sessions::named_sessions_files(&plan.selection, &plan.source, warn)?;
    let mut outcomes = grade_sessions(plan, &sessions, warn)?;
    // A run of several files names each result's.
    if !files.is_empty() {
        for result in outcomes.iter_mut().flatten() {
            result.source = files
                .get(&result.session_id)
                .map(|f| f.display().to_string());
        }
    }
    Ok(GradedSessions {
        sessions,
        outcomes,
        skipped,
    })
}

/// A session's outcome made ready for delivery: rendered (on the thread that graded it, as
/// `--all` renders), or the failure of its rules.
enum Ready {
    Rendered(Rendered),
    Failed(Box<EvalError>),
}

impl Ready {
    fn of(renders: &Renders<'_>, outcome: Outcome) -> Result<Ready, CliError> {
        match outcome {
            Ok(result) => renders.render(result).map(Ready::Rendered),
            Err(err) => Ok(Ready::Failed(Box::new(err))),
        }
    }
}

/// What a session read by [`stream_named`] left: its outcome ready for delivery (taken by
/// its first mention), the session again when it is named more than once (each mention is
/// graded, as the whole read grades each), and whether it has entries.
struct NamedGraded {
    ready: Option<Result<Ready, CliError>>,
    again: Option<Session>,
    empty: bool,
    held: bool,
}

/// The sessions the command line names, read as `--all` reads a source (streamed, the
/// first pass finding which lines are theirs, graded in parallel the moment each is read
/// whole, and rendered there) and put in the order asked: the outcomes [`grade_named`]
/// gives, ready for delivery, without reading the whole source into memory first nor
/// rendering 50,000 results on one thread after it. `None` when lines were skipped: which
/// sessions they were may be unknown, and only the whole read counts those (it is then done
/// instead).
fn stream_named(
    plan: &GradePlan,
    format: &dyn SourceFormat,
    renders: &Renders<'_>,
    warn: &mut dyn FnMut(String),
) -> Result<Option<(Vec<Ready>, u64)>, CliError> {
    let mut mentions: HashMap<&str, usize> = HashMap::new();
    for id in &plan.selection.named {
        *mentions.entry(id).or_default() += 1;
    }
    let (pack, options) = (&plan.pack, &plan.options);
    let mapped = grade_engine::run::map_source(
        &plan.source.registry,
        &plan.source.path,
        Some(format),
        &SessionFilter::only(plan.selection.named.iter().cloned()),
        &plan.source.read,
        None,
        |session| {
            let again = (mentions.get(session.id.as_str()) > Some(&1)).then(|| session.clone());
            let graded = NamedGraded {
                empty: session.entries.is_empty(),
                held: !session.entries.is_empty() || session.skipped_lines > 0,
                again,
                ready: None,
            };
            let id = session.id.clone();
            let outcome = pack.grade_owned(session, None, options);
            (
                id,
                NamedGraded {
                    ready: Some(Ready::of(renders, outcome)),
                    ..graded
                },
            )
        },
    )?;
    if mapped.skipped_lines > 0 {
        return Ok(None);
    }
    for warning in &mapped.warnings {
        warn(warning.to_string());
    }
    let mut graded: HashMap<String, NamedGraded> = mapped.results.into_iter().collect();
    crate::sessions::refuse_missing(
        &plan.selection,
        &plan.source,
        graded
            .iter()
            .filter(|(_, g)| g.held)
            .map(|(id, _)| id.as_str()),
        0,
    )?;
    let mut warned = HashSet::new();
    let mut outcomes = Vec::with_capacity(plan.selection.named.len());
    for id in &plan.selection.named {
        let slot = graded.get_mut(id);
        if slot.as_ref().is_none_or(|g| g.empty) && warned.insert(id) {
            warn(grade_engine::named::empty_session_warning(
                &render::escape_controls(id),
                &plan.source.path,
            ));
        }
        let ready = match slot {
            Some(g) => match (g.ready.take(), &g.again) {
                (Some(ready), _) => ready?,
                (None, again) => {
                    let session = again
                        .as_ref()
                        .map_or_else(|| empty_session(id), Clone::clone);
                    Ready::of(renders, pack.grade_owned(session, None, options))?
                }
            },
            None => Ready::of(renders, pack.grade_owned(empty_session(id), None, options))?,
        };
        outcomes.push(ready);
    }
    Ok(Some((outcomes, 0)))
}

/// A named session the source has no entries for: CLEO's empty-session grade.
fn empty_session(id: &str) -> Session {
    Session {
        id: id.to_owned(),
        entries: Vec::new(),
        skipped_lines: 0,
    }
}

/// Sends score bodies to the Langfuse server of the environment.
fn push_scores(scores: &[ScoreBody]) -> Result<(), CliError> {
    let server = langfuse::server::Server::from_env(
        "`--push langfuse`",
        std::time::Duration::from_secs(30),
        http::Retry {
            attempts: 4,
            backoff: std::time::Duration::from_millis(500),
            max_wait: std::time::Duration::from_secs(60),
        },
    )?;
    let values: Vec<serde_json::Value> = scores
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()
        .map_err(CliError::Json)?;
    eprint!("{}", langfuse::send(&server, &values)?);
    Ok(())
}

/// The Langfuse score bodies of graded sessions, in order (the engine's sink).
fn score_bodies(
    plan: &GradePlan,
    results: &[GradeResult],
    sessions: &[Session],
) -> Result<Vec<ScoreBody>, CliError> {
    let pack = &plan.pack;
    let config_ids = match &plan.output.config_ids {
        Some(path) => langfuse::read_config_ids(path)?,
        None => Default::default(),
    };
    let environment = std::env::var("LANGFUSE_TRACING_ENVIRONMENT")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let mut scores = LangfuseScores::new(pack, sessions, environment.as_deref(), &config_ids);
    grade_engine::sink::write_all(&mut scores, results)?;
    Ok(scores.into_bodies())
}

/// Writes the page of `--html`, once the results are out (a failed gate still gets its page).
fn write_page(
    plan: &GradePlan,
    page: Option<crate::report::ReportBuilder>,
) -> Result<(), CliError> {
    match (page, &plan.output.html) {
        (Some(page), Some(path)) => crate::report::write_page(page, path),
        _ => Ok(()),
    }
}

/// The end of a grading run: it fails when a session could not be graded.
fn finish(failed: usize, total: usize) -> Result<(), CliError> {
    if failed == 0 {
        return Ok(());
    }
    Err(CliError::CheckFailed(grade_engine::run::could_not_grade(
        failed, total,
    )))
}

/// The run's last word on skipped lines: how many, so a long run's warnings are not lost.
/// `grade compare` ends with it too, once per source it read.
pub fn report_skipped(skipped: u64, source: &Path) {
    if let Some(warning) = skipped_warning(skipped, source) {
        crate::warn(&warning);
    }
}

/// How many malformed lines of `source` were skipped, when any were.
pub fn skipped_warning(skipped: u64, source: &Path) -> Option<String> {
    grade_engine::run::skipped_warning(skipped, source)
}

/// A session graded by a streamed run, as the thread that graded it left it: its JSON line
/// (when lines are all the run prints), the result rendered for every place it goes, or why
/// it failed. Boxed, so that the results waiting for an earlier session
/// cost little beside them, and a line its length (not serde_json's doubled buffer).
enum Graded {
    Line(Box<[u8]>),
    Rendered(Box<Rendered>),
    Failed(Box<grade_engine::EvalError>),
}

/// Grades the whole source streamed (the engine's [`grade_engine::run::grade_source_into`]),
/// delivering each result as soon as the sessions before it are graded; the output goes
/// out, and is recorded, only once the source has read cleanly (a late bad line prints
/// nothing). Also the number of malformed lines skipped.
fn stream(plan: &GradePlan, format: &dyn SourceFormat) -> Result<(Delivered, u64), CliError> {
    let bar = progress_bar();
    let report = |done: u64, total: u64| {
        if let Some(bar) = &bar {
            bar.set_length(total);
            bar.set_position(done);
        }
    };
    // The format asked for (or detected once) is the one read: `--source-format` is not
    // second-guessed by detecting again.
    let run = SourceRun {
        format: Some(format),
        filter: Some(SessionFilter::All),
        read: plan.source.read.clone(),
        grade: plan.options.clone(),
    };
    let progress = bar
        .is_some()
        .then_some(&report as grade_engine::source::Progress<'_>);
    let lines_only = plan.lines_only;
    // Printed lines carry each failure's message between the lines around it; a report or
    // a document is preceded by all of them.
    let notes = if lines_only {
        FailureNotes::BetweenLines
    } else {
        FailureNotes::BeforeOutput
    };
    let mut delivery = Delivery::new(plan, notes);
    let renders = delivery.renders();
    // Each result is rendered by the thread that graded it for every place it goes.
    let then = |outcome: Outcome| -> Result<Graded, Box<CliError>> {
        Ok(match outcome {
            Ok(result) if lines_only => Graded::Line(json_line(&result)?),
            Ok(result) => Graded::Rendered(Box::new(renders.render(result)?)),
            Err(err) => Graded::Failed(Box::new(err)),
        })
    };
    let mut first_error: Option<Box<CliError>> = None;
    let source = &plan.source;
    let read = grade_engine::run::grade_source_into(
        &plan.pack,
        &source.registry,
        &source.path,
        &run,
        progress,
        then,
        &mut |graded| match graded {
            Ok(Graded::Line(line)) => delivery.take_line(line),
            Ok(Graded::Rendered(rendered)) => delivery.take(*rendered),
            Ok(Graded::Failed(err)) => delivery.failed(err),
            Err(err) => {
                first_error.get_or_insert(err);
            }
        },
    );
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let read = read?;
    if let Some(err) = first_error {
        return Err(*err);
    }
    for warning in &read.warnings {
        crate::warn(&warning.to_string());
    }
    Ok((delivery.finish()?, read.skipped_lines))
}

/// A progress bar on stderr, only when stderr is a terminal (silent when piped or logged).
fn progress_bar() -> Option<ProgressBar> {
    use std::io::IsTerminal;
    if crate::quiet() || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr_with_hz(10));
    bar.set_style(
        ProgressStyle::with_template("grading {wide_bar} {percent:>3}% {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    Some(bar)
}

/// Grades `sessions` in parallel, each with its judgment when the command line asks for
/// one; a session graded without entries or judgment is worth a warning (once).
pub(crate) fn grade_sessions(
    plan: &GradePlan,
    sessions: &[Session],
    warn: &mut dyn FnMut(String),
) -> Result<Vec<Result<GradeResult, EvalError>>, CliError> {
    let judgments = judge::judgments(&plan.judging, &plan.pack, sessions)?;
    if judgments.iter().all(Option::is_none) {
        let mut warned = HashSet::new();
        for s in sessions
            .iter()
            .filter(|s| s.entries.is_empty() && warned.insert(&s.id))
        {
            warn(grade_engine::named::empty_session_warning(
                &render::escape_controls(&s.id),
                plan.source_path(),
            ));
        }
    }
    Ok(grade_engine::run::grade_sessions(
        &plan.pack,
        sessions,
        &judgments,
        &plan.options,
    ))
}
