//! `grade`: grade AI coding-agent sessions against rubric packs.
//!
//! Only this binary turns errors into exit codes: 0 graded, 1 a check failed (an invalid
//! pack), 2 a usage or input error.

mod args;
mod calibrate;
mod calibrate_html;
mod compare;
mod compare_html;
mod compare_render;
mod delivery;
mod error;
mod explain;
mod grades;
mod grading;
mod held;
mod http;
mod input;
mod judge;
mod langfuse;
mod manual;
mod mcp;
mod pack_tests;
mod page;
mod plan;
mod render;
mod report;
mod rubric_cmd;
mod scaffold;
mod sessions;
mod summary;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use args::{Cli, Command, Format};
use error::CliError;
pub(crate) use grading::{report_skipped, skipped_warning};
pub(crate) use plan::default_source;

/// Sessions are parsed on one thread and graded and freed on another, the pattern glibc's
/// allocator handles worst (it spent about half of a large run in malloc and free).
/// jemalloc reuses that memory where mimalloc kept faulting in fresh pages: 1M entries of
/// JSONL ran 13% faster in 117 MiB instead of 190 MiB. Allocations are counted per thread, by
/// which scripts are bounded in memory (see `grade_engine::CountingAllocator`).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: grade_engine::CountingAllocator<tikv_jemallocator::Jemalloc> =
    grade_engine::CountingAllocator(tikv_jemallocator::Jemalloc);
#[cfg(target_env = "msvc")]
#[global_allocator]
static ALLOCATOR: grade_engine::CountingAllocator<std::alloc::System> =
    grade_engine::CountingAllocator(std::alloc::System);

/// Where CLEO keeps its database, relative to the project folder.
pub(crate) const DEFAULT_SOURCE: &str = ".cleo/tasks.db";
/// Where CLEO appends grades, relative to the project folder.
pub(crate) const DEFAULT_GRADES: &str = ".cleo/metrics/GRADES.jsonl";

/// Environment settings as people leave them: `GRADE_RUBRIC_PATH=` or a stray `:` (from
/// appending to an empty value) name no folder, and an empty `GRADE_ALLOW_PLUGINS` allows
/// nothing. clap would refuse them as `--rubric-path` and `--allow-plugins` given without a
/// value, blaming flags nobody gave. Run first, before any other thread exists.
fn tidy_environment() {
    if let Some(value) = std::env::var_os("GRADE_RUBRIC_PATH") {
        let folders: Vec<std::path::PathBuf> = std::env::split_paths(&value)
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        match std::env::join_paths(&folders) {
            Ok(joined) if !folders.is_empty() => std::env::set_var("GRADE_RUBRIC_PATH", joined),
            // No folder named, or one that cannot be joined back (left for clap to report).
            Ok(_) => std::env::remove_var("GRADE_RUBRIC_PATH"),
            Err(_) => {}
        }
    }
    if std::env::var_os("GRADE_ALLOW_PLUGINS").is_some_and(|v| v.is_empty()) {
        std::env::remove_var("GRADE_ALLOW_PLUGINS");
    }
}

fn main() -> ExitCode {
    tidy_environment();
    if let Some(usage) = Cli::bare_usage() {
        eprint!("{usage}");
        return ExitCode::from(2);
    }
    let cli = match Cli::parse_args() {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help and version to stdout with success; everything else is usage.
            let code = if err.use_stderr() { 2 } else { 0 };
            return match err.print() {
                // Help that could not be written (`grade --help > /dev/full`) is no success;
                // a reader that closed the pipe (`grade --help | head`) is.
                Err(e) if code == 0 && e.kind() != std::io::ErrorKind::BrokenPipe => {
                    let err = CliError::Stdout(e);
                    eprintln!("{}", err.line());
                    ExitCode::from(err.exit_code())
                }
                _ => ExitCode::from(code),
            };
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.is_closed_output() => ExitCode::SUCCESS,
        Err(err @ CliError::Reported) => ExitCode::from(err.exit_code()),
        Err(err) => {
            eprintln!("{}", err.line());
            ExitCode::from(err.exit_code())
        }
    }
}

fn run(mut cli: Cli) -> Result<(), CliError> {
    // `-o -` is standard output, as `-` is standard input for `--source` (it wrote a file
    // named `-`).
    if cli.output.as_deref() == Some(std::path::Path::new("-")) {
        cli.output = None;
    }
    // The threads that grade keep a script run's stack in reserve, so that a run does not map
    // one of its own each time (`grade_engine::SCRIPT_THREAD_STACK`). Building the pool fails
    // only when one was built already, which nothing does before; rayon's default pool (and
    // a stack mapped per run) is the fallback.
    let mut pool = rayon::ThreadPoolBuilder::new().stack_size(grade_engine::SCRIPT_THREAD_STACK);
    if let Some(jobs) = cli.jobs {
        pool = pool.num_threads(usize::from(jobs));
    }
    let _ = pool.build_global();
    match &cli.command {
        Some(Command::Rubric(rubric)) => return rubric_cmd::run(&rubric.command),
        Some(Command::Explain(args)) => return explain::run(args),
        Some(Command::Push(args)) => return langfuse::push(args),
        Some(Command::Mcp(args)) => return mcp::serve(args),
        Some(Command::Completions { shell }) => return manual::completions(*shell),
        Some(Command::Man { command }) => return manual::man(command),
        Some(Command::Calibrate(args)) => return calibrate::run(args),
        Some(Command::Report(args)) => return report::run(args),
        Some(Command::Compare(args)) => return compare::run(plan::ComparePlan::new(args)?),
        None => {}
    }
    QUIET.store(cli.quiet, std::sync::atomic::Ordering::Relaxed);
    if cli.list {
        return list_grades(&cli);
    }
    // Parsed flags → a checked plan → the engine's run → rendered output and an exit code.
    let plan = plan::GradePlan::new(&plan::GradeRequest::from_cli(&cli))?;
    grading::run(&plan)
}

/// The grades file `--grades` names, or CLEO's history file.
pub(crate) fn grades_path(grades: Option<&std::path::Path>) -> PathBuf {
    grades.map_or_else(|| PathBuf::from(DEFAULT_GRADES), ToOwned::to_owned)
}

/// What `make` makes of each recorded grade of `--session` and of `--rubric` when given,
/// holding only that (see [`grades::read_kept`]).
pub(crate) fn recorded_grades_as<T: Send>(
    cli: &Cli,
    make: impl Fn(serde_json::Value) -> T + Sync,
) -> Result<Vec<T>, CliError> {
    let wanted = grade_filter(cli.session.as_deref(), cli.rubric.as_deref());
    grades::read_kept(&grades_path(cli.grades.as_deref()), |g| {
        wanted(&g).then(|| make(g))
    })
}

/// Whether a recorded grade is of `session` and of `rubric` (`cleo-v1`, or `cleo-v1@1.0.0`
/// for only that version's), each when given: `--list`'s filter, which MCP's `grade_list`
/// shares.
pub(crate) fn grade_filter<'a>(
    session: Option<&'a str>,
    rubric: Option<&'a str>,
) -> impl Fn(&serde_json::Value) -> bool + Sync + 'a {
    let rubric = rubric.map(|rubric| {
        rubric
            .split_once('@')
            .map_or((rubric, None), |(i, v)| (i, Some(v)))
    });
    move |g: &serde_json::Value| {
        let session =
            session.is_none_or(|id| g.get("sessionId").and_then(|v| v.as_str()) == Some(id));
        session
            && rubric.is_none_or(|(id, version)| {
                let field = |k: &str| {
                    g.get("rubric")
                        .and_then(|r| r.get(k))
                        .and_then(|v| v.as_str())
                };
                field("id") == Some(id) && version.is_none_or(|v| field("version") == Some(v))
            })
    }
}

fn list_grades(cli: &Cli) -> Result<(), CliError> {
    const TAKES: &str =
        "`--list` shows recorded grades; it takes only `--rubric`, `--session`, `--grades` and `--format`";
    if !cli.sessions.is_empty() || cli.all {
        return Err(CliError::Usage(TAKES.to_owned()));
    }
    // A grading flag beside `--list` did nothing without a word: `--output` left the list on
    // the terminal and no file, `--fail-under` gated nothing.
    let given: Vec<&str> = [
        ("`--source`", !cli.source.is_empty()),
        ("`--source-format`", cli.source_format != args::AUTO_FORMAT),
        ("`--skip-bad-lines`", cli.skip_bad_lines),
        ("`--no-record`", cli.no_record),
        ("`--allow-empty`", cli.allow_empty),
        ("`--fail-under`", cli.fail_under.is_some()),
        ("`--output`", cli.output.is_some()),
        ("`--jobs`", cli.jobs.is_some()),
        ("`--explain`", cli.explain),
        ("`--html`", cli.html.is_some()),
        ("`--judgment`", cli.judgment.is_some()),
        ("`--judge-cmd`", !cli.judge_cmd.is_empty()),
        ("`--judge`", !cli.judge.is_empty()),
        ("`--panel`", cli.panel.is_some()),
        ("`--judge-runs`", cli.judge_runs > 1),
        ("`--judge-jobs`", cli.judge_jobs > 1),
        ("`--no-judge-cache`", cli.no_judge_cache),
        ("`--agreement`", cli.agreement.is_some()),
        ("`--print-prompt`", cli.print_prompt),
        ("`--emit`", cli.emit.is_some()),
        ("`--push`", cli.push.is_some()),
        ("`--config-ids`", cli.config_ids.is_some()),
    ]
    .into_iter()
    .filter_map(|(flag, on)| on.then_some(flag))
    // `--list` loads no pack: `--rubric` names the recorded grades' pack by id.
    .chain(cli.pack_flags_given.iter().copied())
    .collect();
    if !given.is_empty() {
        return Err(CliError::Usage(format!(
            "{TAKES}: drop {}",
            given.join(", ")
        )));
    }
    // Each grade becomes what is printed of it as it is read, so the list holds that and
    // not a JSON tree of every grade.
    let format = cli.format.plain().ok_or_else(|| {
        CliError::Usage(format!(
            "`--list` prints recorded grades as `human`, `json` or `jsonl`, not `{}`",
            cli.format.name()
        ))
    })?;
    let out = match format {
        Format::Human => {
            let rows = recorded_grades_as(cli, |g| render::grade_row(&g))?;
            if rows.is_empty() {
                nothing_listed(cli)
            } else {
                render::grade_table_of(&rows)
            }
        }
        Format::Json => {
            let items = recorded_grades_as(cli, |g| serde_json::to_string_pretty(&g))?;
            let items = items
                .into_iter()
                .collect::<Result<Vec<_>, _>>()
                .map_err(CliError::Json)?;
            let mut text = render::pretty_array(&items);
            text.push('\n');
            text
        }
        Format::Jsonl => {
            let mut text = String::new();
            for line in recorded_grades_as(cli, |g| serde_json::to_string(&g))? {
                text.push_str(&line.map_err(CliError::Json)?);
                text.push('\n');
            }
            text
        }
    };
    write_stdout(out.as_bytes())
}

/// Set by `-q/--quiet`: warnings and notes are not printed (errors still are).
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Prints a warning on stderr (controls escaped), unless the run is `--quiet`.
pub(crate) fn warn(message: &str) {
    if !QUIET.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("warning: {}", render::for_stderr(message));
    }
}

/// Prints a note on stderr (what the run did beside its output), unless it is `--quiet`.
pub(crate) fn note(message: &str) {
    if !QUIET.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("{}", render::for_stderr(message));
    }
}

/// Whether the run is `--quiet`.
pub(crate) fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// What `--list` says when it lists nothing: where it looked (CLEO's history file in this
/// folder unless `--grades` names one), and whether the file was there at all.
fn nothing_listed(cli: &Cli) -> String {
    let path = grades_path(cli.grades.as_deref());
    let filtered = match (&cli.rubric, &cli.session) {
        (None, None) => String::new(),
        _ => " that match `--rubric`/`--session`".to_owned(),
    };
    if path.as_os_str() == "-" {
        format!("no grades recorded{filtered} on standard input\n")
    } else if path.exists() {
        format!("no grades recorded{filtered} in `{}`\n", path.display())
    } else {
        format!(
            "no grades recorded: there is no `{}` (a run over a CLEO source records there; `--grades FILE` lists another file)\n",
            path.display()
        )
    }
}

pub(crate) fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    stdout_written(stdout.write_all(bytes).and_then(|()| stdout.flush()))
}

/// Set once standard output was closed by its reader (`grade … | head -1`).
static OUTPUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether standard output was closed by its reader: what was left to print was dropped,
/// and no grade is recorded that nobody saw.
pub(crate) fn output_closed() -> bool {
    OUTPUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The outcome of a write to standard output. A reader that went away (a closed pipe) is
/// no failure of the run: what was left to print is dropped, and the run goes on to its
/// checks, whose exit status stands (a `--fail-under` or `--fail-on` gate still fails), but
/// records nothing. Any other failure is an error.
pub(crate) fn stdout_written(written: std::io::Result<()>) -> Result<(), CliError> {
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            OUTPUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        }
        written => written.map_err(CliError::Stdout),
    }
}
