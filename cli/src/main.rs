//! `grade`: grade AI coding-agent sessions against rubric packs.
//!
//! Only this binary turns errors into exit codes: 0 graded, 1 a check failed (an invalid
//! pack), 2 a usage or input error.

// No unwrap, expect or panic outside tests: input must never crash the grader, and a failure
// must say what failed (clippy.toml allows them in `#[cfg(test)]` code).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod args;
mod compare;
mod compare_html;
mod error;
mod grades;
mod http;
mod input;
mod judge;
mod langfuse;
mod manual;
mod mcp;
mod pack_tests;
mod render;
mod rubric_cmd;
mod scaffold;
mod sessions;
mod summary;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use grade_engine::judgment::Judgment;
use grade_engine::source::{Input, Registry, SourceFormat, StreamError};
use grade_engine::{
    CompiledPack, EvalError, GradeOptions, GradeResult, ReadOptions, Session, SessionFilter,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use args::{Cli, Command, EmitTarget, Format, SourceFormatChoice};
use error::CliError;

/// Sessions are parsed on one thread and graded and freed on another, the pattern glibc's
/// allocator handles worst (it spent about half of a large run in malloc and free).
/// jemalloc reuses that memory where mimalloc kept faulting in fresh pages: 1M entries of
/// JSONL ran 13% faster in 117 MiB instead of 190 MiB.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Where CLEO keeps its database, relative to the project folder.
pub(crate) const DEFAULT_SOURCE: &str = ".cleo/tasks.db";
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
        Err(err) if err.is_closed_output() => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!(
                "error: {}",
                render::escape_controls_keep_lines(&err.to_string())
            );
            ExitCode::from(err.exit_code())
        }
    }
}

fn run(cli: Cli) -> Result<(), CliError> {
    let search_path = cli.rubric_search_path();
    match &cli.command {
        Some(Command::Rubric(cmd)) => {
            return rubric_cmd::run(cmd, &search_path, cli.plugin_policy())
        }
        Some(Command::Push(args)) => return langfuse::push(args),
        Some(Command::Mcp(args)) => return mcp::serve(args, &cli),
        Some(Command::Completions { shell }) => return manual::completions(*shell),
        Some(Command::Man) => return manual::man(),
        Some(Command::Compare(args)) => return compare::run(args, &search_path),
        None => {}
    }
    if let Some(jobs) = cli.jobs {
        // Only fails when a pool was built already, which nothing here does before.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(jobs))
            .build_global();
    }
    if cli.list {
        return list_grades(&cli);
    }
    let pack = grading_pack(&cli, &search_path)?;
    let options = grade_options(&cli);
    let plan = source_plan(&cli, &pack)?;
    let source = plan.path.clone();
    // A whole log graded by rules alone is streamed when its format streams: sessions are
    // graded as soon as they are read whole, so memory follows the sessions open at once,
    // not the size of the source.
    let format = if plan.judgment_only || source.is_dir() {
        None
    } else {
        Some(match plan.format.clone() {
            Some(format) => format,
            None => plan.registry.detect(&Input::File(&source))?,
        })
    };
    let skipped_lines;
    let streamable = cli.all
        && format.as_ref().is_some_and(|f| f.streams())
        && cli.judge_cmd.is_none()
        && cli.judge.is_none()
        && !cli.print_prompt
        && cli.emit.is_none()
        && cli.push.is_none();
    let cleo_source = format.as_deref().is_some_and(grades::is_cleo);
    let stream_as = format.filter(|_| streamable);
    let (outcomes, sessions): (Vec<Result<GradeResult, EvalError>>, Vec<Session>) =
        if let Some(format) = stream_as {
            match stream_grades(
                &pack,
                format.as_ref(),
                &source,
                &options,
                &plan.read,
                cli.format == Format::Jsonl
                    && grades::destination(&cli, cleo_source).is_none()
                    && cli.output.is_none()
                    && cli.fail_under.is_none(),
            )? {
                Streamed::Printed {
                    failed,
                    total,
                    skipped,
                } => {
                    report_skipped(skipped, &source);
                    return finish(failed, total);
                }
                Streamed::Outcomes(outcomes, skipped) => {
                    skipped_lines = skipped;
                    (outcomes, Vec::new())
                }
            }
        } else {
            let mut warn = |warning: String| {
                eprintln!("warning: {}", render::escape_controls_keep_lines(&warning));
            };
            let (sessions, skipped) = named_sessions(&cli, &plan, &mut warn)?;
            skipped_lines = skipped;
            if cli.print_prompt {
                return print_prompts(&pack, &sessions, cli.format);
            }
            let outcomes = grade_sessions(&cli, &pack, &sessions, &source, &options, &mut warn)?;
            (outcomes, sessions)
        };

    // A rule that fails on one session (a runaway script) must not cost the others their
    // grade: report it, grade the rest, and fail the run at the end.
    let mut results = Vec::with_capacity(outcomes.len());
    let mut failed = 0;
    for outcome in outcomes {
        match outcome {
            Ok(r) => results.push(r),
            Err(err) => {
                failed += 1;
                eprintln!(
                    "error: {}",
                    render::escape_controls_keep_lines(&error::eval_message(&err))
                );
            }
        }
    }
    let total = results.len() + failed;

    let mut out = Vec::new();
    let scores = if cli.emit.is_some() || cli.push.is_some() {
        score_bodies(&cli, &pack, &results, &sessions)?
    } else {
        Vec::new()
    };
    if let Some(EmitTarget::Langfuse) = cli.emit {
        for body in &scores {
            serde_json::to_writer(&mut out, body).map_err(CliError::Json)?;
            out.push(b'\n');
        }
    } else {
        render_results(&mut out, &results, &pack, &cli)?;
        if cli.all && cli.format == Format::Human && !results.is_empty() {
            let bands: Vec<String> = pack.bands.iter().map(|b| b.grade.clone()).collect();
            out.push(b'\n');
            out.extend_from_slice(summary::summary(&results, &bands).as_bytes());
        }
    }
    // Recorded only once the results are out: a run whose output was lost (a full disk, a
    // closed pipe) leaves no grade behind that nobody saw. The file is opened first, so one
    // that cannot be written fails the run before anything is printed. Only a CLEO source
    // records by default (CLEO's history file); others only with `--grades FILE`.
    let record_to = grades::destination(&cli, cleo_source);
    let recorder = match &record_to {
        Some(path) => Some(grades::Recorder::open(path)?),
        None => None,
    };
    write_output(&cli, &out)?;
    if let (Some(recorder), Some(path)) = (recorder, &record_to) {
        recorder.append(&results)?;
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
    }
    report_skipped(skipped_lines, &source);
    finish(failed, total)?;
    match cli.fail_under {
        Some(threshold) => summary::check_floor(&results, threshold),
        None => Ok(()),
    }
}

/// The pack to grade with, once the grading flags fit together and the pack can be graded
/// with what they give (a judged pack needs a judgment or a judge).
pub(crate) fn grading_pack(cli: &Cli, search_path: &[PathBuf]) -> Result<CompiledPack, CliError> {
    let spec = grading_spec(cli)?;
    let pack = grade_engine::load_pack_with(spec, search_path, cli.plugin_policy())?;
    if pack.judge.is_some()
        && cli.judgment.is_none()
        && cli.judge_cmd.is_none()
        && cli.judge.is_none()
        && !cli.print_prompt
    {
        let judged: Vec<String> = pack
            .judged_dimensions()
            .map(|d| format!("`{}`", d.id))
            .collect();
        return Err(CliError::Usage(format!(
            "rubric `{}` scores {} from a judgment: give `--judgment FILE`, `--judge PROVIDER:MODEL` or `--judge-cmd CMD` (or `--print-prompt` to see what a judge reads)",
            pack.id,
            judged.join(", ")
        )));
    }
    Ok(pack)
}

pub(crate) fn grade_options(cli: &Cli) -> GradeOptions {
    GradeOptions {
        explain: cli.explain,
        ..GradeOptions::default()
    }
}

/// Where the sessions come from and how they are read, as the command line says.
pub(crate) struct SourcePlan {
    /// Holds a pipe's private copy of the source for as long as it is read.
    _input: Option<input::Source>,
    pub path: PathBuf,
    /// The built-in formats and those the pack's plugins read.
    pub registry: Registry,
    /// The format `--source-format` asks for; detected from the content when `None`.
    pub format: Option<std::sync::Arc<dyn SourceFormat>>,
    pub read: ReadOptions,
    /// A judgment and no source: the grade rests on the judgment alone.
    pub judgment_only: bool,
    /// A session or trace read from the Langfuse API.
    pub remote: Option<langfuse::fetch::Remote>,
}

pub(crate) fn source_plan(cli: &Cli, pack: &CompiledPack) -> Result<SourcePlan, CliError> {
    // Fields no rule reads are not type-checked: an odd value there changes no grade.
    let read_options = ReadOptions {
        checked: pack.fields_read(),
        skip_bad_lines: cli.skip_bad_lines,
    };
    // With a judgment and no source, the grade rests on the judgment alone.
    let judgment_only = cli.judgment.is_some() && cli.source.is_none();
    if let Some(remote) = remote_source(cli)? {
        return Ok(SourcePlan {
            _input: None,
            path: PathBuf::from(remote.shown()),
            registry: Registry::builtin().clone(),
            format: Registry::builtin()
                .get(langfuse::fetch::LANGFUSE_FORMAT)
                .cloned(),
            read: read_options,
            judgment_only: false,
            remote: Some(remote),
        });
    }
    // A pipe or standard input is read whole first: the readers open a source more than once.
    let spooled = match (&cli.source, judgment_only) {
        (Some(given), false) => Some(input::source(given)?),
        _ => None,
    };
    let source = match (&spooled, judgment_only) {
        (Some(s), _) => s.path.clone(),
        (None, true) => PathBuf::new(),
        (None, false) => default_source()?,
    };
    // A format a plugin of the pack reads is asked for by name, or recognised by the plugin.
    let registry = grade_engine::source::Registry::with_plugins_of(pack)
        .map_err(|e| CliError::Usage(format!("rubric `{}`: {e}", pack.id)))?;
    let format = match cli.source_format() {
        SourceFormatChoice::Builtin(format) => Some(format),
        SourceFormatChoice::Plugin(name) => Some(plugin_format(&registry, &name)?),
        SourceFormatChoice::Auto => None,
    };
    Ok(SourcePlan {
        path: source,
        _input: spooled,
        registry,
        format,
        read: read_options,
        judgment_only,
        remote: None,
    })
}

/// The sessions the command line names (or all of them with `--all`) in the order asked,
/// with how many malformed lines were skipped; the source's warnings go to `warn`.
pub(crate) fn named_sessions(
    cli: &Cli,
    plan: &SourcePlan,
    warn: &mut dyn FnMut(String),
) -> Result<(Vec<Session>, u64), CliError> {
    let filter = if cli.all {
        SessionFilter::All
    } else {
        SessionFilter::only(cli.sessions.iter().cloned())
    };
    let mut lost_to_unknown = 0;
    let mut skipped_lines = 0;
    let sessions = if plan.judgment_only {
        Vec::new()
    } else {
        let read = match &plan.remote {
            Some(remote) => {
                let server = langfuse::server::Server::from_env(
                    &format!("`--source {}`", remote.shown()),
                    std::time::Duration::from_secs(60),
                    http::Retry {
                        attempts: 4,
                        backoff: std::time::Duration::from_millis(500),
                        max_wait: std::time::Duration::from_secs(60),
                    },
                )?;
                langfuse::fetch::read(remote, &server, &filter, &plan.read)?
            }
            None => plan.registry.read(
                &Input::File(&plan.path),
                plan.format.as_deref(),
                &filter,
                &plan.read,
            )?,
        };
        for warning in &read.warnings {
            warn(warning.to_string());
        }
        skipped_lines = read.skipped_lines;
        lost_to_unknown = read.skipped_unattributed;
        read.sessions
    };
    // Results come out in the order asked; a session without entries still gets a grade.
    let ordered = if cli.all {
        sessions
    } else {
        // A named session the source does not hold is refused (a typo would otherwise record
        // a zero), unless `--allow-empty` asks for CLEO's way. With lines skipped whose
        // session could not be read, it may be in one of them: it is graded (and marked).
        if !cli.allow_empty && !plan.judgment_only && cli.judgment.is_none() && lost_to_unknown == 0
        {
            let missing = sessions::missing(&sessions, &cli.sessions);
            if !missing.is_empty() {
                return Err(sessions::not_found(
                    &missing,
                    &plan.path,
                    plan.format.as_deref(),
                ));
            }
        }
        in_order_asked(sessions, &cli.sessions, lost_to_unknown)
    };
    Ok((ordered, skipped_lines))
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
    Ok(sessions
        .par_iter()
        .zip(judgments.par_iter())
        .map(|(s, j)| pack.grade_with(s, j.as_ref(), options))
        .collect())
}

/// The grades file opened for appending, unless the command line says not to record.
pub(crate) fn recorder(cli: &Cli) -> Result<Option<grades::Recorder>, CliError> {
    if cli.no_record {
        return Ok(None);
    }
    grades::Recorder::open(&grades_path(cli)).map(Some)
}

pub(crate) fn grades_path(cli: &Cli) -> PathBuf {
    cli.grades
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_GRADES))
}

/// The recorded grades, only those of `--session` and of `--rubric` when given.
pub(crate) fn recorded_grades(cli: &Cli) -> Result<Vec<serde_json::Value>, CliError> {
    let mut recorded = grades::read(&grades_path(cli))?;
    if let Some(id) = &cli.session {
        recorded.retain(|g| g.get("sessionId").and_then(|v| v.as_str()) == Some(id.as_str()));
    }
    if let Some(rubric) = &cli.rubric {
        // `cleo-v1` or `cleo-v1@1.0.0`: the pack's grades, or only that version's.
        let (id, version) = rubric
            .split_once('@')
            .map_or((rubric.as_str(), None), |(i, v)| (i, Some(v)));
        recorded.retain(|g| {
            let field = |k: &str| g.pointer(&format!("/rubric/{k}")).and_then(|v| v.as_str());
            field("id") == Some(id) && version.is_none_or(|v| field("version") == Some(v))
        });
    }
    Ok(recorded)
}

/// The sessions in the order they were named, one per mention: a session named twice is
/// graded twice (a copy for every mention but the last), and one the source does not hold
/// gets no entries.
/// A session the source does not hold may still have lost the skipped lines whose session
/// could not be read (`lost_to_unknown`).
fn in_order_asked(sessions: Vec<Session>, asked: &[String], lost_to_unknown: u64) -> Vec<Session> {
    let mut mentions: HashMap<&str, usize> = HashMap::new();
    for id in asked {
        *mentions.entry(id).or_default() += 1;
    }
    let mut by_id: HashMap<String, Session> =
        sessions.into_iter().map(|s| (s.id.clone(), s)).collect();
    asked
        .iter()
        .map(|id| {
            let left = mentions.get_mut(id.as_str()).map(|n| {
                *n -= 1;
                *n
            });
            let found = if left == Some(0) {
                by_id.remove(id)
            } else {
                by_id.get(id).cloned()
            };
            found.unwrap_or_else(|| Session {
                id: id.clone(),
                entries: Vec::new(),
                skipped_lines: lost_to_unknown,
            })
        })
        .collect()
}

/// The rubric to grade with, once the grading flags are known to fit together.
fn grading_spec(cli: &Cli) -> Result<&str, CliError> {
    let Some(spec) = cli.rubric.as_deref() else {
        return Err(CliError::Usage(
            "`--rubric ID|PATH` is required to grade (or use `--list` to show recorded grades)"
                .to_owned(),
        ));
    };
    if cli.session.is_some() {
        return Err(CliError::Usage(
            "`--session` filters `--list`; to grade a session, name it as an argument".to_owned(),
        ));
    }
    if cli.all && !cli.sessions.is_empty() {
        return Err(CliError::Usage(
            "give session ids or `--all`, not both".to_owned(),
        ));
    }
    if !cli.all && cli.sessions.is_empty() {
        return Err(CliError::Usage(
            "name the sessions to grade, or pass `--all` to grade every session of the source"
                .to_owned(),
        ));
    }
    if cli.judgment.is_some() && (cli.all || cli.sessions.len() != 1) {
        return Err(CliError::Usage(
            "a `--judgment` judges one session: name exactly one".to_owned(),
        ));
    }
    Ok(spec)
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

/// What a streamed run produced: lines already printed (and how many sessions failed), or
/// the outcomes to record and print.
enum Streamed {
    Printed {
        failed: usize,
        total: usize,
        skipped: u64,
    },
    Outcomes(Vec<Result<GradeResult, EvalError>>, u64),
}

/// A session graded by a streamed run: its JSON line, the result itself, or why it failed.
enum Graded {
    Line(Vec<u8>),
    Result(Box<GradeResult>),
    Failed(EvalError),
}

/// The run's last word on skipped lines: how many, so a long run's warnings are not lost.
fn report_skipped(skipped: u64, source: &Path) {
    if let Some(warning) = skipped_warning(skipped, source) {
        eprintln!("warning: {warning}");
    }
}

pub(crate) fn skipped_warning(skipped: u64, source: &Path) -> Option<String> {
    let plural = if skipped == 1 { "" } else { "s" };
    (skipped > 0).then(|| format!(
        "skipped {skipped} malformed line{plural} of `{}`; the results of their sessions say how many each lost",
        source.display()
    ))
}

fn stream_grades(
    pack: &CompiledPack,
    format: &dyn SourceFormat,
    source: &Path,
    options: &GradeOptions,
    read_options: &ReadOptions,
    lines_only: bool,
) -> Result<Streamed, CliError> {
    let bar = progress_bar();
    let report = |done: u64, total: u64| {
        if let Some(bar) = &bar {
            bar.set_length(total);
            bar.set_position(done);
        }
    };
    // The format asked for (or detected once above) is the one read: `--source-format`
    // is not second-guessed by detecting again.
    let graded = Registry::builtin()
        .map_sessions(
            source,
            Some(format),
            &SessionFilter::All,
            read_options,
            bar.is_some()
                .then_some(&report as grade_engine::source::Progress<'_>),
            |session| -> Result<Graded, CliError> {
                Ok(match pack.grade_owned(session, None, options) {
                    // JSON lines that are only printed are written by the threads that grade.
                    Ok(result) if lines_only => {
                        let mut line = serde_json::to_vec(&result).map_err(CliError::Json)?;
                        line.push(b'\n');
                        Graded::Line(line)
                    }
                    Ok(result) => Graded::Result(Box::new(result)),
                    Err(err) => Graded::Failed(err),
                })
            },
        )
        .map_err(|e| match e {
            StreamError::Source(e) => CliError::Source(e),
            StreamError::Session(e) => e,
        });
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let mapped = graded?;
    for warning in &mapped.warnings {
        eprintln!("warning: {warning}");
    }
    let skipped = mapped.skipped_lines;
    let graded = mapped.results;
    if !lines_only {
        return Ok(Streamed::Outcomes(
            graded
                .into_iter()
                .filter_map(|g| match g {
                    Graded::Result(r) => Some(Ok(*r)),
                    Graded::Failed(e) => Some(Err(e)),
                    Graded::Line(_) => None,
                })
                .collect(),
            skipped,
        ));
    }
    let total = graded.len();
    let mut failed = 0;
    // Each line is written and freed in turn: no second copy of the whole output.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    for g in graded {
        match g {
            Graded::Line(line) => out.write_all(&line).map_err(CliError::Stdout)?,
            Graded::Failed(err) => {
                failed += 1;
                eprintln!(
                    "error: {}",
                    render::escape_controls_keep_lines(&error::eval_message(&err))
                );
            }
            Graded::Result(_) => {}
        }
    }
    out.flush().map_err(CliError::Stdout)?;
    Ok(Streamed::Printed {
        failed,
        total,
        skipped,
    })
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

/// A `langfuse:session/ID` or `langfuse:trace/ID` source, read from the API.
fn remote_source(cli: &Cli) -> Result<Option<langfuse::fetch::Remote>, CliError> {
    let Some(remote) = cli
        .source
        .as_deref()
        .and_then(Path::to_str)
        .and_then(langfuse::fetch::Remote::parse)
    else {
        return Ok(None);
    };
    let remote = remote?;
    let format = cli.source_format.as_str();
    if format != args::AUTO_FORMAT && format != langfuse::fetch::LANGFUSE_FORMAT {
        return Err(CliError::Usage(format!(
            "source `{}` is read from Langfuse; `--source-format` can only be `langfuse` for it",
            remote.shown()
        )));
    }
    Ok(Some(remote))
}

/// The Langfuse score bodies of graded sessions, in order.
fn score_bodies(
    cli: &Cli,
    pack: &CompiledPack,
    results: &[GradeResult],
    sessions: &[Session],
) -> Result<Vec<langfuse::ScoreBody>, CliError> {
    let config_ids = match &cli.config_ids {
        Some(path) => langfuse::read_config_ids(path)?,
        None => Default::default(),
    };
    let mut out = Vec::new();
    for r in results {
        let session = sessions.iter().find(|s| s.id == r.session_id);
        let target = langfuse::ScoreTarget::of(session);
        out.extend(langfuse::score_bodies(pack, r, &target, &config_ids));
    }
    Ok(out)
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

fn print_prompts(
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

fn render_results(
    out: &mut Vec<u8>,
    results: &[GradeResult],
    pack: &CompiledPack,
    cli: &Cli,
) -> Result<(), CliError> {
    match cli.format {
        Format::Jsonl => {
            for r in results {
                serde_json::to_writer(&mut *out, r).map_err(CliError::Json)?;
                out.push(b'\n');
            }
        }
        Format::Json => {
            if let [one] = results {
                serde_json::to_writer_pretty(&mut *out, one).map_err(CliError::Json)?;
            } else {
                serde_json::to_writer_pretty(&mut *out, &results).map_err(CliError::Json)?;
            }
            out.push(b'\n');
        }
        Format::Human => {
            // A file named by `--output` gets colour only when asked for.
            let color = match (&cli.output, cli.color) {
                (Some(_), args::ColorChoice::Auto) => false,
                (_, choice) => render::use_color(choice),
            };
            for (i, r) in results.iter().enumerate() {
                if i > 0 {
                    out.push(b'\n');
                }
                out.extend_from_slice(render::report(r, pack, color).as_bytes());
            }
        }
    }
    Ok(())
}

/// The format a pack's plugin reads under `name`, or a usage error listing the known ones.
fn plugin_format(
    registry: &Registry,
    name: &str,
) -> Result<std::sync::Arc<dyn SourceFormat>, CliError> {
    if let Some(format) = registry.get(name) {
        return Ok(format.clone());
    }
    let known: Vec<String> = std::iter::once(format!("`{}`", args::AUTO_FORMAT))
        .chain(registry.formats().map(|f| match f.plugin() {
            Some(plugin) => format!("`{}` (plugin `{plugin}`)", f.name()),
            None => format!("`{}`", f.name()),
        }))
        .collect();
    Err(CliError::Usage(format!(
        "unknown source format `{name}` (known: {})",
        known.join(", ")
    )))
}

/// `.cleo/tasks.db` in this folder, the source when none is given.
pub(crate) fn default_source() -> Result<PathBuf, CliError> {
    let default = PathBuf::from(DEFAULT_SOURCE);
    if default.is_file() {
        Ok(default)
    } else {
        Err(CliError::Usage(format!(
            "no `--source` given and there is no `{DEFAULT_SOURCE}` in this folder (CLEO keeps its audit log there)"
        )))
    }
}

fn list_grades(cli: &Cli) -> Result<(), CliError> {
    if !cli.sessions.is_empty() || cli.all {
        return Err(CliError::Usage(
            "`--list` shows recorded grades; it takes only `--rubric`, `--session`, `--grades` and `--format`"
                .to_owned(),
        ));
    }
    let recorded = recorded_grades(cli)?;
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

/// Writes results where `--output` says, or to standard output.
fn write_output(cli: &Cli, bytes: &[u8]) -> Result<(), CliError> {
    match &cli.output {
        Some(path) => std::fs::write(path, bytes).map_err(|source| CliError::Output {
            path: path.clone(),
            source,
        }),
        None => write_stdout(bytes),
    }
}

pub(crate) fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(CliError::Stdout)
}
