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
mod explain;
mod grades;
mod grading;
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
use grade_engine::source::{Input, Registry, SourceFormat};
use grade_engine::{
    CompiledPack, EvalError, GradeOptions, GradeResult, ReadOptions, Session, SessionFilter,
    SourceRead,
};

use args::{Cli, Command, Format, SourceFormatChoice};
use error::CliError;
pub(crate) use grading::skipped_warning;

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
    // Parsed flags → a checked plan → the engine's run → rendered output and an exit code.
    let plan = grading::GradePlan::new(&cli, &search_path)?;
    grading::run(&cli, &plan)
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
        let read = read_source(plan, &filter)?;
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

/// The sessions of the planned source that `filter` wants: from the Langfuse API, or read
/// through the registry.
fn read_source(plan: &SourcePlan, filter: &SessionFilter) -> Result<SourceRead, CliError> {
    let Some(remote) = &plan.remote else {
        let input = Input::File(&plan.path);
        return Ok(plan
            .registry
            .read(&input, plan.format.as_deref(), filter, &plan.read)?);
    };
    let server = langfuse::server::Server::from_env(
        &format!("`--source {}`", remote.shown()),
        std::time::Duration::from_secs(60),
        http::Retry {
            attempts: 4,
            backoff: std::time::Duration::from_millis(500),
            max_wait: std::time::Duration::from_secs(60),
        },
    )?;
    langfuse::fetch::read(remote, &server, filter, &plan.read)
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

pub(crate) fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(CliError::Stdout)
}
