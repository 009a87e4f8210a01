//! The grading command's plan: its flags checked against each other and against the pack,
//! the pack loaded, and where the sessions come from and how they are read decided, before
//! anything is graded (parsed flags → a validated plan → the engine's run → render).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use grade_engine::sink::RowFormat;
use grade_engine::source::{Input, Registry};
use grade_engine::{CompiledPack, GradeOptions, ReadOptions, SourceFormat};

use crate::args::{self, Cli, ColorChoice, EmitTarget, Format, GradeFormat, PanelArg};
use crate::error::CliError;
use crate::{grades, input, langfuse, DEFAULT_SOURCE};

mod compare;
mod request;

pub(crate) use compare::{CompareOutput, ComparePlan, Form};
pub(crate) use request::GradeRequest;
use request::SourceFormatChoice;

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

/// Which sessions a run grades, and whether one the source lacks is refused.
pub(crate) struct Selection {
    /// `--all`: every session of the source, in its order.
    pub all: bool,
    /// The sessions named, in the order asked (each mention graded).
    pub named: Vec<String>,
    /// A named session the source has no entries for is graded as empty rather than
    /// refused: `--allow-empty`, or a `--judgment` (the grade rests on it).
    pub allow_empty: bool,
}

/// How the judges of a run are asked: `--judgment`, `--judge`, `--judge-cmd` and their
/// settings, as given (a judge's spec is read when it is asked, after the sessions).
pub(crate) struct JudgePlan {
    pub judgment: Option<PathBuf>,
    pub judge: Vec<String>,
    pub judge_cmd: Vec<String>,
    pub judge_order: Vec<(bool, usize)>,
    pub panel: Option<PanelArg>,
    pub timeout: std::time::Duration,
    /// The cap on what a judge command prints, in bytes.
    pub max_output: u64,
    pub runs: u32,
    pub jobs: u32,
    pub cache: bool,
    pub attempts: u32,
    pub backoff: std::time::Duration,
    pub agreement: Option<PathBuf>,
}

/// Where a run's results go and in what form.
pub(crate) struct OutputPlan {
    pub format: GradeFormat,
    /// `--output`: the file written instead of standard output.
    pub to: Option<PathBuf>,
    /// Whether human reports are coloured.
    pub color: bool,
    /// Whether the output keeps each rule's trace (`--explain`).
    pub explain: bool,
    /// `--html`: the page written once the results are out.
    pub html: Option<PathBuf>,
    /// `--fail-under`: the gate every result is held to.
    pub fail_under: Option<f64>,
    /// `--emit langfuse`: score bodies printed instead of the results.
    pub emit: bool,
    /// `--push langfuse`: score bodies sent to the Langfuse server of the environment.
    pub push: bool,
    pub config_ids: Option<PathBuf>,
    /// `--print-prompt`: the judge's prompts printed in this format instead of grading.
    pub print_prompt: Option<Format>,
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
    pub(crate) selection: Selection,
    pub(crate) judging: JudgePlan,
    pub(crate) output: OutputPlan,
    /// No `--grades` was given: the history is CLEO's default file (not followed through
    /// symbolic links).
    pub(crate) default_grades: bool,
}

impl GradePlan {
    /// Where the sessions come from, as messages name it.
    pub fn source_path(&self) -> &Path {
        &self.source.path
    }

    /// Checks the grading flags, loads the pack and decides how the source is read.
    pub fn new(ask: &GradeRequest) -> Result<GradePlan, CliError> {
        let pack = grading_pack(ask)?;
        let options = grade_options(ask)?;
        let source = source_plan(ask, &pack)?;
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
            && ask.judge_cmd.is_empty()
            && ask.judge.is_empty()
            && !ask.print_prompt
            && ask.emit.is_none()
            && ask.push.is_none();
        let streamable = ask.all && by_rules;
        // So are many named sessions (without judgments, which are read per session named):
        // a few are found sooner by one read that keeps them (a `tasks.db`'s index finds them
        // without a scan), many in the pipeline `--all` takes, without holding the source.
        let stream_named = !ask.all
            && by_rules
            && ask.judgment.is_none()
            && source.remote.is_none()
            && ask.sessions.len() >= STREAM_NAMED_FROM;
        // Only a CLEO source records by default (CLEO's history file); others with `--grades`.
        let record_to = grades::destination(
            ask.grades.as_deref(),
            ask.no_record,
            format.as_deref().is_some_and(grades::is_cleo),
        );
        let sources = source
            .several
            .as_deref()
            .unwrap_or(std::slice::from_ref(path));
        check_targets(ask, sources, record_to.as_deref())?;
        let lines_only = ask.format == GradeFormat::Jsonl
            && record_to.is_none()
            && ask.output.is_none()
            && ask.fail_under.is_none()
            && ask.html.is_none();
        if ask.print_prompt && ask.format.plain().is_none() {
            return Err(CliError::Usage(format!(
                "`--print-prompt` prints prompts as `human`, `json` or `jsonl`, not `{}`",
                ask.format.name()
            )));
        }
        Ok(GradePlan {
            rows: row_format(ask.format, &pack, ask.fail_under),
            pack,
            options,
            source,
            stream_as: format.clone().filter(|_| streamable),
            stream_named: format.filter(|_| stream_named),
            lines_only,
            record_to,
            held_budget: crate::held::budget()?,
            selection: Selection {
                all: ask.all,
                named: ask.sessions.clone(),
                allow_empty: ask.allow_empty || ask.judgment.is_some(),
            },
            judging: JudgePlan::of(ask),
            output: OutputPlan::of(ask),
            default_grades: ask.grades.is_none(),
        })
    }
}

impl JudgePlan {
    fn of(ask: &GradeRequest) -> JudgePlan {
        JudgePlan {
            judgment: ask.judgment.clone(),
            judge: ask.judge.clone(),
            judge_cmd: ask.judge_cmd.clone(),
            judge_order: ask.judge_order.clone(),
            panel: ask.panel,
            timeout: std::time::Duration::from_secs(ask.judge_timeout),
            max_output: ask.judge_max_output << 20,
            runs: ask.judge_runs,
            jobs: ask.judge_jobs,
            cache: !ask.no_judge_cache,
            attempts: ask.judge_attempts,
            backoff: std::time::Duration::from_millis(ask.judge_backoff_ms),
            agreement: ask.agreement.clone(),
        }
    }
}

impl OutputPlan {
    fn of(ask: &GradeRequest) -> OutputPlan {
        OutputPlan {
            format: ask.format,
            to: ask.output.clone(),
            // A file named by `--output` gets colour only when asked for.
            color: match (&ask.output, ask.color) {
                (Some(_), ColorChoice::Auto) => false,
                (_, choice) => crate::render::use_color(choice),
            },
            explain: ask.explain,
            html: ask.html.clone(),
            fail_under: ask.fail_under,
            emit: ask.emit == Some(EmitTarget::Langfuse),
            push: ask.push == Some(EmitTarget::Langfuse),
            config_ids: ask.config_ids.clone(),
            // The plan refuses the formats only results are written in.
            print_prompt: ask
                .print_prompt
                .then(|| ask.format.plain().unwrap_or(Format::Human)),
        }
    }
}

/// Checks where a run writes (`--output`, the grades file, `--html`, `--agreement`) before
/// anything is graded: not standard input's `-` where a file is meant, not a source being
/// graded, not a folder that is not there, not the output over the grades file.
fn check_targets(
    ask: &GradeRequest,
    sources: &[PathBuf],
    record_to: Option<&Path>,
) -> Result<(), CliError> {
    // `-` reads standard input for `--list --grades -`, but grades are appended to a file:
    // recording to `-` made a file of that name.
    if record_to == Some(Path::new("-")) {
        return Err(CliError::Usage(
            "`--grades -` would record to a file named `-`: grades are appended to a file (`--format jsonl` prints the results, `--no-record` records none)".to_owned(),
        ));
    }
    if ask.html.as_deref() == Some(Path::new("-")) {
        return Err(CliError::Usage(
            "`--html -` would mix the page with the results on standard output: name a file for the page".to_owned(),
        ));
    }
    // Results written over the source (`-o tasks.db`), or appended to it (`--grades
    // audit.jsonl`), destroy the very data they were graded from.
    for (flag, target) in [
        ("--output", ask.output.as_deref()),
        ("--grades", record_to),
        ("--html", ask.html.as_deref()),
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
        ("output file", ask.output.as_deref()),
        ("agreement file", ask.agreement.as_deref()),
        ("HTML page", ask.html.as_deref()),
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
    if let (Some(output), Some(grades)) = (ask.output.as_deref(), record_to) {
        if same_file(output, grades) {
            return Err(CliError::Usage(format!(
                "`--output {}` is the grades file this run records to: results written there would replace its history (write them elsewhere, or give `--no-record`)",
                output.display()
            )));
        }
    }
    Ok(())
}

/// From how many named sessions they are read streamed (`GradePlan::stream_named`).
const STREAM_NAMED_FROM: usize = 100;

/// The row format `format` names, made for `pack`: a session passes at `--fail-under` when
/// it is given, else at the pack's pass mark (the lowest band needing half the points, C = 60
/// for CLEO). `None` for the formats that are not written a row per result.
fn row_format(
    format: GradeFormat,
    pack: &CompiledPack,
    fail_under: Option<f64>,
) -> Option<Box<dyn RowFormat>> {
    let pass_at = fail_under.unwrap_or_else(|| grade_engine::compare::default_pass_at(&pack.bands));
    match format {
        GradeFormat::Rows(kind) => Some((kind.make)(pack, pass_at)),
        GradeFormat::Human | GradeFormat::Json | GradeFormat::Jsonl => None,
    }
}

/// The pack to grade with, once the grading flags fit together and the pack can be graded
/// with what they give (a judged pack needs a judgment or a judge).
fn grading_pack(ask: &GradeRequest) -> Result<CompiledPack, CliError> {
    let spec = grading_spec(ask)?;
    let pack = grade_engine::load_pack_with(spec, &ask.search_path, ask.policy)?;
    if pack.judge.is_some()
        && ask.judgment.is_none()
        && ask.judge_cmd.is_empty()
        && ask.judge.is_empty()
        && !ask.print_prompt
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

pub(crate) fn grade_options(ask: &GradeRequest) -> Result<GradeOptions, CliError> {
    Ok(GradeOptions {
        // The page of `--html` opens each rule's trace.
        explain: ask.explain || ask.html.is_some(),
        references: read_references(ask.reference.as_deref())?,
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

pub(crate) fn source_plan(ask: &GradeRequest, pack: &CompiledPack) -> Result<SourcePlan, CliError> {
    // Fields no rule reads are not type-checked: an odd value there changes no grade.
    // Nor are they built: what the pack does not read, a reader may skip. Nothing else of
    // the run reads an entry's params, error or duration (metadata, which the Langfuse sink
    // and evidence's places read, is always kept).
    let read_options = pack.read_options(ask.skip_bad_lines);
    // With a judgment and no source, the grade rests on the judgment alone.
    let judgment_only = ask.judgment.is_some() && ask.source.is_empty();
    if let Some(remote) = remote_source(ask)? {
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
    let format = match ask.source_format() {
        SourceFormatChoice::Builtin(format) => Some(format),
        SourceFormatChoice::Plugin(name) => Some(plugin_format(&registry, &name)?),
        SourceFormatChoice::Auto => None,
    };
    if let Some(several) = several_sources(ask)? {
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
    let spooled = match (ask.source.first(), judgment_only) {
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
fn several_sources(ask: &GradeRequest) -> Result<Option<Vec<PathBuf>>, CliError> {
    let one_file = match ask.source.as_slice() {
        [] => return Ok(None),
        // A name with `*` that exists is that file; one that does not is a pattern.
        [one] => !one.is_dir() && (one.exists() || !grade_engine::source::is_glob(one)),
        _ => false,
    };
    if one_file {
        return Ok(None);
    }
    for given in &ask.source {
        let text = given.to_string_lossy();
        if given.as_os_str() == "-" || langfuse::fetch::Remote::parse(&text).is_some() {
            return Err(CliError::Usage(format!(
                "`--source {text}` is read on its own: give it as the only `--source`"
            )));
        }
    }
    Ok(Some(ask.source.clone()))
}

/// The rubric to grade with, once the grading flags are known to fit together.
fn grading_spec(ask: &GradeRequest) -> Result<&str, CliError> {
    let Some(spec) = ask.rubric.as_deref() else {
        // `grade --rubric-path DIR rubric list`: a flag before a command makes clap read the
        // command as a session to grade; say where the command goes instead.
        if let Some(command) = ask.sessions.first().filter(|s| is_command(s)) {
            return Err(CliError::Usage(format!(
                "`{command}` is a command, and a flag before it makes it read as a session to grade: write the command first (`grade {command} …` with its flags after it)"
            )));
        }
        return Err(CliError::Usage(
            "`--rubric ID|PATH` is required to grade (or use `--list` to show recorded grades)"
                .to_owned(),
        ));
    };
    if ask.session.is_some() {
        return Err(CliError::Usage(
            "`--session` filters `--list`; to grade a session, name it as an argument".to_owned(),
        ));
    }
    if ask.all && !ask.sessions.is_empty() {
        return Err(CliError::Usage(
            "give session ids or `--all`, not both".to_owned(),
        ));
    }
    if !ask.all && ask.sessions.is_empty() {
        return Err(CliError::Usage(
            "name the sessions to grade, or pass `--all` to grade every session of the source"
                .to_owned(),
        ));
    }
    if ask.judgment.is_some() && (ask.all || ask.sessions.len() != 1) {
        return Err(CliError::Usage(
            "a `--judgment` judges one session: name exactly one".to_owned(),
        ));
    }
    if ask.agreement.as_deref() == Some(Path::new("-")) {
        // `-` is standard input or output elsewhere; here it made a file of that name.
        return Err(CliError::Usage(
            "`--agreement -` would write a file named `-`: give the report a file name (the agreement is printed on standard error anyway)".to_owned(),
        ));
    }
    let unused = unused_flags(ask);
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
fn unused_flags(ask: &GradeRequest) -> Vec<String> {
    let mut unused = Vec::new();
    if ask.print_prompt {
        let given: Vec<&str> = [
            ("`--fail-under`", ask.fail_under.is_some()),
            ("`--emit`", ask.emit.is_some()),
            ("`--push`", ask.push.is_some()),
            ("`--output`", ask.output.is_some()),
            ("`--explain`", ask.explain),
            ("`--grades`", ask.grades.is_some()),
            ("`--html`", ask.html.is_some()),
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
    if ask.config_ids.is_some() && ask.emit.is_none() && ask.push.is_none() {
        unused.push(
            "`--config-ids` names the score configs of `--emit langfuse` or `--push langfuse`, and neither is given"
                .to_owned(),
        );
    }
    if ask.emit.is_some() && ask.explain {
        unused.push(
            "`--emit` prints score bodies, which hold no rule traces: drop `--explain`, or write the results with `--explain --format json` in another run"
                .to_owned(),
        );
    }
    if ask.allow_empty && ask.all {
        unused.push(
            "`--allow-empty` grades a named session the source has no entries for, and `--all` names none: drop `--allow-empty`"
                .to_owned(),
        );
    }
    // Defaults cannot be told from values given, so only a value other than the default
    // counts as given.
    let model_only = [
        ("--no-judge-cache", ask.no_judge_cache),
        ("--judge-attempts", ask.judge_attempts != 3),
        ("--judge-backoff-ms", ask.judge_backoff_ms != 500),
    ];
    if !ask.judge_cmd.is_empty() && ask.judge.is_empty() {
        for (flag, given) in model_only {
            if given {
                unused.push(format!(
                    "`{flag}` is about the requests of `--judge PROVIDER:MODEL`; a `--judge-cmd` is run once per chunk, and its replies are never cached"
                ));
            }
        }
    }
    if ask.judge_cmd.is_empty() && ask.judge_max_output != 64 {
        unused.push(
            "`--judge-max-output` caps what a `--judge-cmd` prints, and no judge command is run: give `--judge-cmd CMD`, or drop it (a model's answer is capped at 10 MiB)"
                .to_owned(),
        );
    }
    if ask.panel.is_some() && ask.judge.len() + ask.judge_cmd.len() < 2 {
        unused.push(
            "`--panel` combines the scores of a panel of judges, and fewer than two are asked: give `--judge` or `--judge-cmd` once for each judge of the panel, or drop `--panel`"
                .to_owned(),
        );
    }
    let asks_a_judge = !ask.judge.is_empty() || !ask.judge_cmd.is_empty();
    if !asks_a_judge {
        for (flag, given) in [
            ("--judge-runs", ask.judge_runs > 1),
            ("--judge-jobs", ask.judge_jobs > 1),
            ("--agreement", ask.agreement.is_some()),
            ("--judge-timeout", ask.judge_timeout != 300),
        ]
        .into_iter()
        .chain(model_only)
        {
            if given {
                unused.push(format!(
                    "`{flag}` is about asking a judge, and no judge is asked: give `--judge PROVIDER:MODEL` or `--judge-cmd CMD`{}",
                    if ask.judgment.is_some() {
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
fn remote_source(ask: &GradeRequest) -> Result<Option<langfuse::fetch::Remote>, CliError> {
    let [source] = ask.source.as_slice() else {
        return Ok(None);
    };
    let Some(remote) = Some(source.as_path())
        .and_then(Path::to_str)
        .and_then(langfuse::fetch::Remote::parse)
    else {
        return Ok(None);
    };
    let remote = remote?;
    let format = ask.source_format.as_str();
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

#[cfg(test)]
mod tests;
