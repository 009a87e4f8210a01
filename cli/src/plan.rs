//! The grading command's plan: its flags checked against each other and against the pack,
//! the pack loaded, and where the sessions come from and how they are read decided, before
//! anything is graded (parsed flags → a validated plan → the engine's run → render).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use grade_engine::sink::RowFormat;
use grade_engine::source::{Input, Registry};
use grade_engine::{CompiledPack, GradeOptions, ReadOptions, SourceFormat};

use crate::args::{self, Cli, GradeFormat, SourceFormatChoice};
use crate::error::CliError;
use crate::{grades, input, langfuse, DEFAULT_SOURCE};

/// Whether `a` and `b` name one file (through links, hard or symbolic, or two spellings), also
/// when one is not written yet: then by its folder and name.
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    // A hard link is one file under a path of its own: files that exist are compared by
    // device and inode.
    #[cfg(unix)]
    if let (Ok(a), Ok(b)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        use std::os::unix::fs::MetadataExt;
        return (a.dev(), a.ino()) == (b.dev(), b.ino());
    }
    fn resolved(path: &Path) -> Option<PathBuf> {
        std::fs::canonicalize(path).ok().or_else(|| {
            Some(
                std::fs::canonicalize(folder_of(path))
                    .ok()?
                    .join(path.file_name()?),
            )
        })
    }
    match (resolved(a), resolved(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The folder a file is (or would be) written in: `.` for a bare name.
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A grading run as the command line asks for it, once its flags are known to fit together.
pub struct GradePlan {
    pub(crate) pack: CompiledPack,
    pub(crate) options: GradeOptions,
    pub(crate) source: SourcePlan,
    /// The source's format when the whole source is graded streamed.
    pub(crate) stream_as: Option<Arc<dyn SourceFormat>>,
    /// The source's format when the sessions named are many, and read as a whole source is
    /// streamed: filtered, graded the moment each is read whole, then put in the order asked.
    pub(crate) stream_named: Option<Arc<dyn SourceFormat>>,
    /// A streamed run whose JSON lines are only printed: the grading threads write them.
    pub(crate) lines_only: bool,
    /// The grades file the results are recorded in, if any.
    pub(crate) record_to: Option<PathBuf>,
    /// Bytes of output held in memory before the rest waits on disk.
    pub(crate) held_budget: usize,
    /// The row format (CSV, JUnit, Markdown) `--format` asks for, made for the pack.
    pub(crate) rows: Option<Box<dyn RowFormat>>,
}

impl GradePlan {
    /// Where the sessions come from, as messages name it.
    pub fn source_path(&self) -> &Path {
        &self.source.path
    }

    /// Checks the grading flags, loads the pack and decides how the source is read.
    pub fn new(cli: &Cli, search_path: &[PathBuf]) -> Result<GradePlan, CliError> {
        let pack = grading_pack(cli, search_path)?;
        let options = grade_options(cli)?;
        let source = source_plan(cli, &pack)?;
        let path = &source.path;
        let format = if source.judgment_only || source.several.is_some() || path.is_dir() {
            None
        } else {
            Some(match source.format.clone() {
                Some(format) => format,
                None => source.registry.detect(&Input::File(path))?,
            })
        };
        // A whole log graded by rules alone is streamed when its format streams.
        let by_rules = format.as_ref().is_some_and(|f| f.streams())
            && cli.judge_cmd.is_empty()
            && cli.judge.is_empty()
            && !cli.print_prompt
            && cli.emit.is_none()
            && cli.push.is_none();
        let streamable = cli.all && by_rules;
        // So are many named sessions (without judgments, which are read per session named):
        // a few are found sooner by one read that keeps them (a `tasks.db`'s index finds them
        // without a scan), many in the pipeline `--all` takes, without holding the source.
        let stream_named = !cli.all
            && by_rules
            && cli.judgment.is_none()
            && source.remote.is_none()
            && cli.sessions.len() >= STREAM_NAMED_FROM;
        // Only a CLEO source records by default (CLEO's history file); others with `--grades`.
        let record_to = grades::destination(cli, format.as_deref().is_some_and(grades::is_cleo));
        // `-` reads standard input for `--list --grades -`, but grades are appended to a file:
        // recording to `-` made a file of that name.
        if record_to.as_deref() == Some(Path::new("-")) {
            return Err(CliError::Usage(
                "`--grades -` would record to a file named `-`: grades are appended to a file (`--format jsonl` prints the results, `--no-record` records none)".to_owned(),
            ));
        }
        if cli.html.as_deref() == Some(Path::new("-")) {
            return Err(CliError::Usage(
                "`--html -` would mix the page with the results on standard output: name a file for the page".to_owned(),
            ));
        }
        let lines_only = cli.format == GradeFormat::Jsonl
            && record_to.is_none()
            && cli.output.is_none()
            && cli.fail_under.is_none()
            && cli.html.is_none();
        // Results written over the source (`-o tasks.db`), or appended to it (`--grades
        // audit.jsonl`), destroy the very data they were graded from.
        let sources = source
            .several
            .as_deref()
            .unwrap_or(std::slice::from_ref(path));
        for (flag, target) in [
            ("--output", cli.output.as_deref()),
            ("--grades", record_to.as_deref()),
            ("--html", cli.html.as_deref()),
        ] {
            if let Some(target) = target.filter(|t| sources.iter().any(|s| same_file(t, s))) {
                return Err(CliError::Usage(format!(
                    "`{flag} {}` is the source being graded: results written there would destroy it",
                    target.display()
                )));
            }
        }
        // Files written at the end of the run, after every session was graded (and every
        // judge asked, at its cost): a folder that is not there is found out now, not then.
        for (what, target) in [
            ("output file", cli.output.as_deref()),
            ("agreement file", cli.agreement.as_deref()),
            ("HTML page", cli.html.as_deref()),
        ] {
            if let Some(target) = target {
                let folder = folder_of(target);
                if !folder.is_dir() {
                    return Err(CliError::Usage(format!(
                        "cannot write {what} `{}`: there is no folder `{}` to write it in",
                        target.display(),
                        folder.display()
                    )));
                }
            }
        }
        // The output replaces the file it is written to: over the grades file it would wipe
        // the history, and in human form leave a file that no longer lists.
        if let (Some(output), Some(grades)) = (cli.output.as_deref(), record_to.as_deref()) {
            if same_file(output, grades) {
                return Err(CliError::Usage(format!(
                    "`--output {}` is the grades file this run records to: results written there would replace its history (write them elsewhere, or give `--no-record`)",
                    output.display()
                )));
            }
        }
        if cli.print_prompt && cli.format.plain().is_none() {
            return Err(CliError::Usage(format!(
                "`--print-prompt` prints prompts as `human`, `json` or `jsonl`, not `{}`",
                cli.format.name()
            )));
        }
        Ok(GradePlan {
            rows: row_format(cli.format, &pack, cli.fail_under),
            pack,
            options,
            source,
            stream_as: format.clone().filter(|_| streamable),
            stream_named: format.filter(|_| stream_named),
            lines_only,
            record_to,
            held_budget: crate::held::budget()?,
        })
    }
}

/// From how many named sessions they are read streamed (`GradePlan::stream_named`).
const STREAM_NAMED_FROM: usize = 100;

/// The row format `format` names, made for `pack`: a session passes at `--fail-under` when
/// it is given, else at the pack's pass mark (the lowest band needing half the points, C = 60
/// for CLEO). `None` for the formats that are not written a row per result. A new row format
/// is a file of the engine's `sink` and a line here.
fn row_format(
    format: GradeFormat,
    pack: &CompiledPack,
    fail_under: Option<f64>,
) -> Option<Box<dyn RowFormat>> {
    use grade_engine::sink::{Csv, JUnit, Markdown};
    let pass_at = fail_under.unwrap_or_else(|| grade_engine::compare::default_pass_at(&pack.bands));
    match format {
        GradeFormat::Csv => Some(Box::new(Csv::new(pack, pass_at))),
        GradeFormat::Junit => Some(Box::new(JUnit::new(pack, pass_at))),
        GradeFormat::Markdown => Some(Box::new(Markdown::new(pack, pass_at))),
        GradeFormat::Human | GradeFormat::Json | GradeFormat::Jsonl => None,
    }
}

/// The pack to grade with, once the grading flags fit together and the pack can be graded
/// with what they give (a judged pack needs a judgment or a judge).
pub(crate) fn grading_pack(cli: &Cli, search_path: &[PathBuf]) -> Result<CompiledPack, CliError> {
    let spec = grading_spec(cli)?;
    let pack = grade_engine::load_pack_with(spec, search_path, cli.plugin_policy())?;
    if pack.judge.is_some()
        && cli.judgment.is_none()
        && cli.judge_cmd.is_empty()
        && cli.judge.is_empty()
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

pub(crate) fn grade_options(cli: &Cli) -> Result<GradeOptions, CliError> {
    Ok(GradeOptions {
        // The page of `--html` opens each rule's trace.
        explain: cli.explain || cli.html.is_some(),
        references: read_references(cli.reference.as_deref())?,
        ..GradeOptions::default()
    })
}

/// The reference trajectories of `--reference`, read once for the whole run.
pub(crate) fn read_references(
    path: Option<&Path>,
) -> Result<Option<Arc<grade_engine::reference::References>>, CliError> {
    path.map(|path| grade_engine::reference::References::read(path).map(Arc::new))
        .transpose()
        .map_err(CliError::from)
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
    /// Several sources, or a folder or glob of them, read file by file (each result then
    /// names its file); `path` names them all for messages.
    pub several: Option<Vec<PathBuf>>,
}

pub(crate) fn source_plan(cli: &Cli, pack: &CompiledPack) -> Result<SourcePlan, CliError> {
    // Fields no rule reads are not type-checked: an odd value there changes no grade.
    // Nor are they built: what the pack does not read, a reader may skip. Nothing else of
    // the run reads an entry's params, error or duration (metadata, which the Langfuse sink
    // and evidence's places read, is always kept).
    let read_options = ReadOptions {
        checked: pack.fields_read(),
        kept: pack.projection(),
        skip_bad_lines: cli.skip_bad_lines,
    };
    // With a judgment and no source, the grade rests on the judgment alone.
    let judgment_only = cli.judgment.is_some() && cli.source.is_empty();
    if let Some(remote) = remote_source(cli)? {
        let registry = pack.grading(Registry::builtin().clone());
        let format = registry.get(langfuse::fetch::LANGFUSE_FORMAT).cloned();
        let path = PathBuf::from(remote.shown());
        // Refused before anything is fetched.
        if let Some(refused) = format
            .as_ref()
            .and_then(|f| registry.refusal(f.as_ref(), &path))
        {
            return Err(refused.into());
        }
        return Ok(SourcePlan {
            _input: None,
            path,
            registry,
            format,
            read: read_options,
            judgment_only: false,
            remote: Some(remote),
            several: None,
        });
    }
    let registry = grade_engine::source::Registry::with_plugins_of(pack)
        .map_err(|e| CliError::Usage(format!("rubric `{}`: {e}", pack.id)))?;
    let format = match cli.source_format() {
        SourceFormatChoice::Builtin(format) => Some(format),
        SourceFormatChoice::Plugin(name) => Some(plugin_format(&registry, &name)?),
        SourceFormatChoice::Auto => None,
    };
    if let Some(several) = several_sources(cli)? {
        let path = match several.as_slice() {
            [one] => one.clone(),
            all => PathBuf::from(
                all.iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join("`, `"),
            ),
        };
        return Ok(SourcePlan {
            _input: None,
            path,
            registry,
            format,
            read: read_options,
            judgment_only,
            remote: None,
            several: Some(several),
        });
    }
    // A pipe or standard input is read whole first: the readers open a source more than once.
    let spooled = match (cli.source.first(), judgment_only) {
        (Some(given), false) => Some(input::source(given)?),
        _ => None,
    };
    let source = match (&spooled, judgment_only) {
        (Some(s), _) => s.path.clone(),
        (None, true) => PathBuf::new(),
        (None, false) => default_source()?,
    };
    Ok(SourcePlan {
        path: source,
        _input: spooled,
        registry,
        format,
        read: read_options,
        judgment_only,
        remote: None,
        several: None,
    })
}

/// The sources of a run that reads file by file: `--source` given more than once, a folder,
/// or a glob pattern the shell left for `grade` to expand. `None` for one file (read as
/// before: streamed, or from standard input).
fn several_sources(cli: &Cli) -> Result<Option<Vec<PathBuf>>, CliError> {
    let one_file = match cli.source.as_slice() {
        [] => return Ok(None),
        // A name with `*` that exists is that file; one that does not is a pattern.
        [one] => !one.is_dir() && (one.exists() || !grade_engine::source::is_glob(one)),
        _ => false,
    };
    if one_file {
        return Ok(None);
    }
    for given in &cli.source {
        let text = given.to_string_lossy();
        if given.as_os_str() == "-" || langfuse::fetch::Remote::parse(&text).is_some() {
            return Err(CliError::Usage(format!(
                "`--source {text}` is read on its own: give it as the only `--source`"
            )));
        }
    }
    Ok(Some(cli.source.clone()))
}

/// The rubric to grade with, once the grading flags are known to fit together.
fn grading_spec(cli: &Cli) -> Result<&str, CliError> {
    let Some(spec) = cli.rubric.as_deref() else {
        // `grade --rubric-path DIR rubric list`: a flag before a command makes clap read the
        // command as a session to grade; say where the command goes instead.
        if let Some(command) = cli.sessions.first().filter(|s| is_command(s)) {
            return Err(CliError::Usage(format!(
                "`{command}` is a command, and a flag before it makes it read as a session to grade: write the command first (`grade {command} …` with its flags after it)"
            )));
        }
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
    if cli.agreement.as_deref() == Some(Path::new("-")) {
        // `-` is standard input or output elsewhere; here it made a file of that name.
        return Err(CliError::Usage(
            "`--agreement -` would write a file named `-`: give the report a file name (the agreement is printed on standard error anyway)".to_owned(),
        ));
    }
    let unused = unused_flags(cli);
    if !unused.is_empty() {
        // Every flag that would do nothing at once, each on its own `error:` line.
        return Err(CliError::Usage(unused.join("\nerror: ")));
    }
    Ok(spec)
}

/// Whether `word` names one of `grade`'s commands (`rubric`, `compare`, …).
fn is_command(word: &str) -> bool {
    use clap::CommandFactory;
    Cli::command()
        .get_subcommands()
        .any(|c| c.get_name() == word || c.get_all_aliases().any(|a| a == word))
}

/// Flags the rest of the command line leaves with nothing to act on: dropped without a word,
/// each would leave its user believing it did something (a gate that checked nothing, config
/// ids that reached no score).
fn unused_flags(cli: &Cli) -> Vec<String> {
    let mut unused = Vec::new();
    if cli.print_prompt {
        let given: Vec<&str> = [
            ("`--fail-under`", cli.fail_under.is_some()),
            ("`--emit`", cli.emit.is_some()),
            ("`--push`", cli.push.is_some()),
            ("`--output`", cli.output.is_some()),
            ("`--explain`", cli.explain),
            ("`--grades`", cli.grades.is_some()),
            ("`--html`", cli.html.is_some()),
        ]
        .into_iter()
        .filter_map(|(flag, on)| on.then_some(flag))
        .collect();
        if !given.is_empty() {
            unused.push(format!(
                "`--print-prompt` prints the judge's prompts instead of grading: drop {}",
                given.join(", ")
            ));
        }
    }
    if cli.config_ids.is_some() && cli.emit.is_none() && cli.push.is_none() {
        unused.push(
            "`--config-ids` names the score configs of `--emit langfuse` or `--push langfuse`, and neither is given"
                .to_owned(),
        );
    }
    if cli.emit.is_some() && cli.explain {
        unused.push(
            "`--emit` prints score bodies, which hold no rule traces: drop `--explain`, or write the results with `--explain --format json` in another run"
                .to_owned(),
        );
    }
    if cli.allow_empty && cli.all {
        unused.push(
            "`--allow-empty` grades a named session the source has no entries for, and `--all` names none: drop `--allow-empty`"
                .to_owned(),
        );
    }
    // Defaults cannot be told from values given, so only a value other than the default
    // counts as given.
    let model_only = [
        ("--no-judge-cache", cli.no_judge_cache),
        ("--judge-attempts", cli.judge_attempts != 3),
        ("--judge-backoff-ms", cli.judge_backoff_ms != 500),
    ];
    if !cli.judge_cmd.is_empty() && cli.judge.is_empty() {
        for (flag, given) in model_only {
            if given {
                unused.push(format!(
                    "`{flag}` is about the requests of `--judge PROVIDER:MODEL`; a `--judge-cmd` is run once per chunk, and its replies are never cached"
                ));
            }
        }
    }
    if cli.judge_cmd.is_empty() && cli.judge_max_output != 64 {
        unused.push(
            "`--judge-max-output` caps what a `--judge-cmd` prints, and no judge command is run: give `--judge-cmd CMD`, or drop it (a model's answer is capped at 10 MiB)"
                .to_owned(),
        );
    }
    if cli.panel.is_some() && cli.judge.len() + cli.judge_cmd.len() < 2 {
        unused.push(
            "`--panel` combines the scores of a panel of judges, and fewer than two are asked: give `--judge` or `--judge-cmd` once for each judge of the panel, or drop `--panel`"
                .to_owned(),
        );
    }
    let asks_a_judge = !cli.judge.is_empty() || !cli.judge_cmd.is_empty();
    if !asks_a_judge {
        for (flag, given) in [
            ("--judge-runs", cli.judge_runs > 1),
            ("--judge-jobs", cli.judge_jobs > 1),
            ("--agreement", cli.agreement.is_some()),
            ("--judge-timeout", cli.judge_timeout != 300),
        ]
        .into_iter()
        .chain(model_only)
        {
            if given {
                unused.push(format!(
                    "`{flag}` is about asking a judge, and no judge is asked: give `--judge PROVIDER:MODEL` or `--judge-cmd CMD`{}",
                    if cli.judgment.is_some() {
                        " (a `--judgment` file is read as it is)"
                    } else {
                        ""
                    }
                ));
            }
        }
    }
    unused
}

/// A `langfuse:session/ID` or `langfuse:trace/ID` source, read from the API.
fn remote_source(cli: &Cli) -> Result<Option<langfuse::fetch::Remote>, CliError> {
    let [source] = cli.source.as_slice() else {
        return Ok(None);
    };
    let Some(remote) = Some(source.as_path())
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

/// The format a pack's plugin reads under `name`, or a usage error listing the known ones.
fn plugin_format(
    registry: &Registry,
    name: &str,
) -> Result<std::sync::Arc<dyn SourceFormat>, CliError> {
    registry.format_named(name).map_err(CliError::Usage)
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
