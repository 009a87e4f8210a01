//! `grade --rubric …`: the grading command, staged as the engine's pipeline is. The
//! command line becomes a checked [`GradePlan`] (pack, source, streaming choice, where
//! results go); the engine grades (`grade_engine::run`); this module renders the outcomes,
//! records them through the engine's sinks and turns failures into the binary's errors.

use std::collections::HashSet;
use std::path::Path;

use grade_engine::judgment::Judgment;
use grade_engine::run::{Outcome, SourceRun};
use grade_engine::sink::langfuse::{LangfuseScores, ScoreBody};
use grade_engine::sink::{self, JsonDocument, JsonLines};
use grade_engine::{
    CompiledPack, EvalError, GradeOptions, GradeResult, Session, SessionFilter, SourceFormat,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::args::{Cli, EmitTarget, Format};
use crate::error::CliError;
use crate::held::{HeldError, HeldOutput};
use crate::plan::GradePlan;
use crate::{grades, http, input, judge, langfuse, render, summary, write_stdout};

/// Grades as planned, then renders, records and reports.
pub fn run(cli: &Cli, plan: &GradePlan) -> Result<(), CliError> {
    let (outcomes, sessions, skipped) = match &plan.stream_as {
        Some(format) => match stream(plan, format.as_ref())? {
            Streamed::Printed {
                failed,
                total,
                skipped,
            } => {
                report_skipped(skipped, &plan.source.path);
                report_nothing_graded(cli, total, &plan.source.path);
                return finish(failed, total);
            }
            Streamed::Outcomes(outcomes, skipped) => (outcomes, Vec::new(), skipped),
        },
        None => {
            let mut warn = |warning: String| {
                eprintln!("warning: {}", render::for_stderr(&warning));
            };
            if cli.print_prompt {
                let (sessions, _) = crate::sessions::named_sessions(cli, &plan.source, &mut warn)?;
                return print_prompts(&plan.pack, &sessions, cli.format);
            }
            let graded = grade_named(cli, plan, &mut warn)?;
            (graded.outcomes, graded.sessions, graded.skipped)
        }
    };
    let (results, failed) = report_failures(outcomes);
    let total = results.len() + failed;
    deliver(cli, plan, &results, &sessions)?;
    report_skipped(skipped, &plan.source.path);
    report_nothing_graded(cli, total, &plan.source.path);
    finish(failed, total)?;
    match cli.fail_under {
        Some(threshold) => summary::check_floor(&results, threshold),
        None => Ok(()),
    }
}

/// `--all` over a source without sessions (an empty log, the wrong file) prints no result,
/// and a gate such as `--fail-under` passes with nothing checked: said on stderr, so that
/// nobody takes the silence for a clean run.
fn report_nothing_graded(cli: &Cli, total: usize, source: &std::path::Path) {
    if cli.all && total == 0 {
        eprintln!(
            "warning: {}",
            render::for_stderr(&format!(
                "`{}` holds no sessions: nothing was graded",
                source.display()
            ))
        );
    }
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
    cli: &Cli,
    plan: &GradePlan,
    warn: &mut dyn FnMut(String),
) -> Result<GradedSessions, CliError> {
    let (sessions, skipped) = crate::sessions::named_sessions(cli, &plan.source, warn)?;
    let outcomes = grade_sessions(
        cli,
        &plan.pack,
        &sessions,
        &plan.source.path,
        &plan.options,
        warn,
    )?;
    Ok(GradedSessions {
        sessions,
        outcomes,
        skipped,
    })
}

/// The results of the sessions that were graded; a rule that failed on one session (a
/// runaway script) is reported, and the others keep their grade.
fn report_failures(outcomes: Vec<Outcome>) -> (Vec<GradeResult>, usize) {
    let mut results = Vec::with_capacity(outcomes.len());
    let mut failed = 0;
    for outcome in outcomes {
        match outcome {
            Ok(r) => results.push(r),
            Err(err) => {
                failed += 1;
                eprintln!(
                    "error: {}",
                    render::for_stderr(&crate::error::eval_message(&err))
                );
            }
        }
    }
    (results, failed)
}

/// Renders the results, records them and sends their scores where the command line says.
/// Recorded only once the results are out: a run whose output was lost (a full disk, a
/// closed pipe) leaves no grade behind that nobody saw. The grades file is opened first, so
/// one that cannot be written fails the run before anything is printed.
fn deliver(
    cli: &Cli,
    plan: &GradePlan,
    results: &[GradeResult],
    sessions: &[Session],
) -> Result<(), CliError> {
    let scores = if cli.emit.is_some() || cli.push.is_some() {
        score_bodies(cli, &plan.pack, results, sessions)?
    } else {
        Vec::new()
    };
    let mut out = Vec::new();
    if let Some(EmitTarget::Langfuse) = cli.emit {
        for body in &scores {
            serde_json::to_writer(&mut out, body).map_err(CliError::Json)?;
            out.push(b'\n');
        }
    } else {
        render_results(&mut out, results, &plan.pack, cli)?;
    }
    let recorder = match &plan.record_to {
        Some(path) => Some(grades::Recorder::open(path)?),
        None => None,
    };
    write_output(cli, &out)?;
    if let (Some(recorder), Some(path)) = (recorder, &plan.record_to) {
        recorder.append(results)?;
        if !results.is_empty() {
            let plural = if results.len() == 1 { "" } else { "s" };
            eprintln!(
                "recorded {} grade{plural} to {}",
                results.len(),
                path.display()
            );
        }
    }
    if let Some(EmitTarget::Langfuse) = cli.push {
        push_scores(&scores)?;
    }
    Ok(())
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
    cli: &Cli,
    pack: &CompiledPack,
    results: &[GradeResult],
    sessions: &[Session],
) -> Result<Vec<ScoreBody>, CliError> {
    let config_ids = match &cli.config_ids {
        Some(path) => langfuse::read_config_ids(path)?,
        None => Default::default(),
    };
    let environment = std::env::var("LANGFUSE_TRACING_ENVIRONMENT")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let mut scores = LangfuseScores::new(pack, sessions, environment.as_deref(), &config_ids);
    sink::write_all(&mut scores, results)?;
    Ok(scores.into_bodies())
}

/// The results as `--format` asks: JSON through the engine's sinks, or the human report
/// (with a summary after a whole source).
fn render_results(
    out: &mut Vec<u8>,
    results: &[GradeResult],
    pack: &CompiledPack,
    cli: &Cli,
) -> Result<(), CliError> {
    match cli.format {
        Format::Jsonl => sink::write_all(&mut JsonLines::new(&mut *out), results)?,
        Format::Json => sink::write_all(&mut JsonDocument::new(&mut *out), results)?,
        Format::Human => {
            // A file named by `--output` gets colour only when asked for.
            let color = match (&cli.output, cli.color) {
                (Some(_), crate::args::ColorChoice::Auto) => false,
                (_, choice) => render::use_color(choice),
            };
            for (i, r) in results.iter().enumerate() {
                if i > 0 {
                    out.push(b'\n');
                }
                out.extend_from_slice(render::report(r, pack, color).as_bytes());
            }
            if cli.all && !results.is_empty() {
                let bands: Vec<String> = pack.bands.iter().map(|b| b.grade.clone()).collect();
                out.push(b'\n');
                out.extend_from_slice(summary::summary(results, &bands).as_bytes());
            }
        }
    }
    Ok(())
}

/// Writes results where `--output` says, or to standard output.
fn write_output(cli: &Cli, bytes: &[u8]) -> Result<(), CliError> {
    match &cli.output {
        Some(path) => std::fs::write(path, bytes).map_err(|source| CliError::Output {
            path: path.clone(),
            source,
        }),
        None => crate::write_stdout(bytes),
    }
}

/// The end of a grading run: it fails when a session could not be graded.
fn finish(failed: usize, total: usize) -> Result<(), CliError> {
    if failed == 0 {
        return Ok(());
    }
    let plural = if total == 1 { "" } else { "s" };
    Err(CliError::CheckFailed(format!(
        "{failed} of {total} session{plural} could not be graded"
    )))
}

/// The run's last word on skipped lines: how many, so a long run's warnings are not lost.
fn report_skipped(skipped: u64, source: &Path) {
    if let Some(warning) = skipped_warning(skipped, source) {
        eprintln!("warning: {}", render::for_stderr(&warning));
    }
}

/// How many malformed lines of `source` were skipped, when any were.
pub fn skipped_warning(skipped: u64, source: &Path) -> Option<String> {
    let plural = if skipped == 1 { "" } else { "s" };
    (skipped > 0).then(|| format!(
        "skipped {skipped} malformed line{plural} of `{}`; the results of their sessions say how many each lost",
        source.display()
    ))
}

/// What a streamed run produced: lines already printed (and how many sessions failed), or
/// the outcomes to record and print.
enum Streamed {
    Printed {
        failed: usize,
        total: usize,
        skipped: u64,
    },
    Outcomes(Vec<Outcome>, u64),
}

/// A session graded by a streamed run: its JSON line, the result itself, or why it failed.
/// Boxed, so that a run holding one for every session (to record or render them) holds 24
/// bytes a session beside the results, and a line its length (not serde_json's doubled
/// buffer) until it is written.
enum Graded {
    Line(Box<[u8]>),
    Result(Box<GradeResult>),
    Failed(Box<grade_engine::EvalError>),
}

/// Grades the whole source streamed (the engine's [`grade_engine::run::grade_source`]).
fn stream(plan: &GradePlan, format: &dyn SourceFormat) -> Result<Streamed, CliError> {
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
        read: plan.source.read,
        grade: plan.options,
    };
    let progress = bar
        .is_some()
        .then_some(&report as grade_engine::source::Progress<'_>);
    let lines_only = plan.lines_only;
    // Lines that are only printed are serialised by the threads that grade, and held in
    // order as soon as the sessions before them are graded: a late bad line of the source
    // must print nothing, and a run over millions of sessions must not keep them in memory.
    let then = |outcome: Outcome| -> Result<Graded, Box<CliError>> {
        Ok(match outcome {
            Ok(result) if lines_only => {
                let mut line = serde_json::to_vec(&result).map_err(CliError::Json)?;
                line.push(b'\n');
                Graded::Line(line.into_boxed_slice())
            }
            Ok(result) => Graded::Result(Box::new(result)),
            Err(err) => Graded::Failed(Box::new(err)),
        })
    };
    let source = &plan.source;
    if lines_only {
        let mut held = HeldOutput::new(crate::held::budget());
        // Failed sessions: where their message goes between the lines, and the message.
        let mut failures: Vec<(u64, Box<grade_engine::EvalError>)> = Vec::new();
        let mut total = 0usize;
        let mut first_error: Option<Box<CliError>> = None;
        let delivered = grade_engine::run::grade_source_into(
            &plan.pack,
            &source.registry,
            &source.path,
            &run,
            progress,
            then,
            &mut |graded| {
                total += 1;
                match graded {
                    Ok(Graded::Line(line)) => held.write(line),
                    Ok(Graded::Failed(err)) => failures.push((held.len(), err)),
                    Ok(Graded::Result(_)) => {}
                    Err(err) => {
                        first_error.get_or_insert(err);
                    }
                }
            },
        );
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }
        let delivered = delivered?;
        if let Some(err) = first_error {
            return Err(*err);
        }
        for warning in &delivered.warnings {
            eprintln!("warning: {}", render::for_stderr(&warning.to_string()));
        }
        let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        let marks: Vec<u64> = failures.iter().map(|(at, _)| *at).collect();
        held.finish(&mut out, &marks, &mut |i| {
            eprintln!(
                "error: {}",
                render::for_stderr(&crate::error::eval_message(&failures[i].1))
            );
        })
        .map_err(|err| match err {
            HeldError::Write(err) => CliError::Stdout(err),
            HeldError::Spill(source) => CliError::Held {
                dir: std::env::temp_dir(),
                source,
            },
        })?;
        return Ok(Streamed::Printed {
            failed: failures.len(),
            total,
            skipped: delivered.skipped_lines,
        });
    }
    let graded = grade_engine::run::grade_source(
        &plan.pack,
        &source.registry,
        &source.path,
        &run,
        progress,
        then,
    );
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let mapped = graded?;
    for warning in &mapped.warnings {
        eprintln!("warning: {}", render::for_stderr(&warning.to_string()));
    }
    let outcomes = mapped
        .results
        .into_iter()
        .map(|graded| {
            graded.map_err(|e| *e).map(|g| match g {
                Graded::Result(r) => Some(Ok(*r)),
                Graded::Failed(e) => Some(Err(*e)),
                Graded::Line(_) => None,
            })
        })
        .filter_map(Result::transpose)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Streamed::Outcomes(outcomes, mapped.skipped_lines))
}

/// A progress bar on stderr, only when stderr is a terminal (silent when piped or logged).
fn progress_bar() -> Option<ProgressBar> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
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
    cli: &Cli,
    pack: &CompiledPack,
    sessions: &[Session],
    source: &Path,
    options: &GradeOptions,
    warn: &mut dyn FnMut(String),
) -> Result<Vec<Result<GradeResult, EvalError>>, CliError> {
    let judgments = judgments(cli, pack, sessions)?;
    if judgments.iter().all(Option::is_none) {
        let mut warned = HashSet::new();
        for s in sessions
            .iter()
            .filter(|s| s.entries.is_empty() && warned.insert(&s.id))
        {
            warn(format!(
                "session `{}` has no entries in `{}`; it gets the empty-session grade",
                render::escape_controls(&s.id),
                source.display()
            ));
        }
    }
    Ok(grade_engine::run::grade_sessions(
        pack, sessions, &judgments, options,
    ))
}

/// One judgment per session: from `--judgment`, from `--judge-cmd`, or none.
fn judgments(
    cli: &Cli,
    pack: &CompiledPack,
    sessions: &[Session],
) -> Result<Vec<Option<Judgment>>, CliError> {
    if let Some(path) = &cli.judgment {
        let io = |source| CliError::Io {
            path: path.clone(),
            source,
        };
        let text = input::read_text(path, input::MAX_DOCUMENT, "judgment")
            .map_err(io)?
            .ok_or_else(|| io(std::io::ErrorKind::NotFound.into()))?;
        let origin = if path.as_os_str() == "-" {
            "stdin".to_owned()
        } else {
            path.display().to_string()
        };
        return Ok(vec![Some(grade_engine::judgment::parse_judgment(
            &text, &origin, pack,
        )?)]);
    }
    if cli.agreement.is_some() && cli.judge_runs < 2 {
        return Err(CliError::Usage(
            "`--agreement` reports how repeated runs agree: give `--judge-runs 2` or more"
                .to_owned(),
        ));
    }
    let judge = match (&cli.judge_cmd, &cli.judge) {
        (Some(cmd), _) => judge::Judge::Command(cmd.clone()),
        (None, Some(spec)) => judge::Judge::model(spec)?,
        (None, None) => return Ok(vec![None; sessions.len()]),
    };
    let options = judge::Options {
        runs: cli.judge_runs as usize,
        jobs: cli.judge_jobs as usize,
        timeout: std::time::Duration::from_secs(cli.judge_timeout),
        retry: http::Retry {
            attempts: cli.judge_attempts,
            backoff: std::time::Duration::from_millis(cli.judge_backoff_ms),
            max_wait: std::time::Duration::from_secs(60),
        },
        cache: if cli.no_judge_cache {
            None
        } else {
            judge::cache::Cache::user()
        },
    };
    let judged = judge::judge_sessions(pack, sessions, &judge, &options)?;
    if options.runs > 1 {
        judge::report_agreement(pack, &judge, &judged, cli.agreement.as_deref())?;
    }
    Ok(judged.into_iter().map(Some).collect())
}

/// The judge prompts of the sessions, as `--print-prompt` shows them.
pub(crate) fn print_prompts(
    pack: &CompiledPack,
    sessions: &[Session],
    format: Format,
) -> Result<(), CliError> {
    let judge = pack.judge.as_ref().ok_or_else(|| {
        CliError::Usage(format!("rubric `{}` has no judge prompt (only packs with judged dimensions, like `langfuse-v1`, do)", pack.id))
    })?;
    let mut out = String::new();
    let mut all = Vec::new();
    for s in sessions {
        let prompts = grade_engine::prompt::render_prompts(pack, judge, s);
        let n = prompts.len();
        for (i, p) in prompts.into_iter().enumerate() {
            if format == Format::Human {
                out.push_str(&format!(
                    "===== session `{}`, prompt {} of {n} =====\n",
                    s.id,
                    i + 1
                ));
                out.push_str(&p);
                if !p.ends_with('\n') {
                    out.push('\n');
                }
            } else {
                all.push(serde_json::json!({"sessionId": s.id, "chunk": i + 1, "chunks": n, "prompt": p}));
            }
        }
    }
    match format {
        Format::Human => {}
        Format::Json => {
            out = format!(
                "{}\n",
                serde_json::to_string_pretty(&all).map_err(CliError::Json)?
            )
        }
        Format::Jsonl => {
            for p in &all {
                out.push_str(&serde_json::to_string(p).map_err(CliError::Json)?);
                out.push('\n');
            }
        }
    }
    write_stdout(out.as_bytes())
}
