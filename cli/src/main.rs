//! `grade`: grade AI coding-agent sessions against rubric packs.
//!
//! Only this binary turns errors into exit codes: 0 graded, 1 a check failed (an invalid
//! pack), 2 a usage or input error.

mod args;
mod error;
mod grades;
mod render;
mod rubric_cmd;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use grade_engine::source::StreamError;
use grade_engine::{GradeOptions, GradeResult, Session, SessionFilter};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use args::{Cli, Command, Format};
use error::CliError;

/// Sessions are parsed on one thread and graded and freed on another, the pattern glibc's
/// allocator handles worst (it spent about half of a large run in malloc and free).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Where CLEO keeps its database, relative to the project folder.
const DEFAULT_SOURCE: &str = ".cleo/tasks.db";
/// Where CLEO appends grades, relative to the project folder.
const DEFAULT_GRADES: &str = ".cleo/metrics/GRADES.jsonl";

// mimalloc's `mi_option_set` and its `mi_option_purge_delay` (15 in v2 and v3's `mi_option_e`).
extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

fn main() -> ExitCode {
    // Keep freed memory for reuse instead of returning it to the OS after 10 ms: a large run
    // frees and allocates sessions continuously, and faulting the pages back in (the kernel
    // zeroing 2 MiB huge pages) took 10-15% of it. Peak memory is unchanged.
    // SAFETY: a plain setter of the allocator linked above, called before any thread starts.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
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
    let options = GradeOptions {
        explain: cli.explain,
        ..GradeOptions::default()
    };
    // JSON lines that are only printed are written by the threads that grade.
    let lines_only = cli.format == Format::Jsonl && cli.no_record;

    let results: Vec<GradeResult> = if cli.all {
        // Streamed: sessions are graded as soon as they are read whole, so memory follows the
        // sessions open at once rather than the size of the source.
        let bar = progress_bar();
        let report = |done: u64, total: u64| {
            if let Some(bar) = &bar {
                bar.set_length(total);
                bar.set_position(done);
            }
        };
        let graded = grade_engine::source::map_sessions(
            &source,
            &filter,
            bar.is_some().then_some(&report as grade_engine::source::Progress<'_>),
            |session| -> Result<Graded, CliError> {
                let result = pack.grade_owned(session, &options)?;
                Ok(if lines_only {
                    let mut line = serde_json::to_vec(&result).map_err(CliError::Json)?;
                    line.push(b'\n');
                    Graded::Line(line)
                } else {
                    Graded::Result(Box::new(result))
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
        let graded = graded?;
        if lines_only {
            let mut out = Vec::with_capacity(graded.iter().map(Graded::len).sum());
            for g in graded {
                if let Graded::Line(line) = g {
                    out.extend_from_slice(&line);
                }
            }
            return write_stdout(&out);
        }
        graded
            .into_iter()
            .filter_map(|g| match g {
                Graded::Result(r) => Some(*r),
                Graded::Line(_) => None,
            })
            .collect()
    } else {
        let mut sessions = grade_engine::read_sessions(&source, &filter)?;
        // Results come out in the order asked; a session without entries still gets a grade.
        let ordered: Vec<Session> = cli
            .sessions
            .iter()
            .map(|id| match sessions.iter().position(|s| &s.id == id) {
                Some(i) => sessions.swap_remove(i),
                None => Session {
                    id: id.clone(),
                    entries: Vec::new(),
                },
            })
            .collect();
        for s in ordered.iter().filter(|s| s.entries.is_empty()) {
            eprintln!(
                "warning: session `{}` has no entries in `{}`; it gets the empty-session grade",
                s.id,
                source.display()
            );
        }
        ordered
            .par_iter()
            .map(|s| pack.grade(s, &options))
            .collect::<Result<_, _>>()?
    };

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
    write_stdout(&out)
}

/// A session graded by a streamed run: its JSON line, or the result itself.
enum Graded {
    Line(Vec<u8>),
    Result(Box<GradeResult>),
}

impl Graded {
    fn len(&self) -> usize {
        match self {
            Graded::Line(line) => line.len(),
            Graded::Result(_) => 0,
        }
    }
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
