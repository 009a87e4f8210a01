//! The command line, exactly as scripts call it:
//!
//! ```text
//! grade --rubric ID|PATH [--source FILE] [--format human|json|jsonl|ROWS] [-q] [--grades FILE] [--no-record] SESSION...
//! grade --rubric ID|PATH --source FILE|DIR [--source-format FORMAT] --all [--format ...]
//! grade --list [--rubric ID] [--session ID] [--grades FILE] [--format human|json]
//! grade completions bash|zsh|fish|powershell|elvish
//! grade man
//! grade rubric list|show ...
//! grade mcp [--rubric-path DIR] [--grades FILE]
//! ```
//!
//! `ROWS` is any row format of the engine's registry (`grade_engine::sink::ROW_FORMATS`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use grade_engine::sink::{RowFormatKind, ROW_FORMATS};

mod rubric;

pub use rubric::{RubricArgs, RubricCommand, RubricNewArgs, RubricTestArgs};

/// How a user of the binary allows native plugins, as refusals say it.
pub const ALLOW_PLUGINS_HINT: &str = "`--allow-plugins` (or `GRADE_ALLOW_PLUGINS=1`)";

#[derive(Debug, Parser)]
#[command(
    name = "grade",
    version,
    about = "Grade AI coding-agent sessions against rubric packs",
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  grade --rubric cleo-v1 --source .cleo/tasks.db session-123\n  grade --rubric claude-code-v1 --source ~/.claude/projects/my-project --all\n  grade --rubric cleo-v1 --source audit.jsonl --all --format jsonl\n  grade --list --session session-123"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Rubric pack: a shipped id (`cleo-v1`, `cleo-v2`, `claude-code-v1`, `coding-agent-v1`, `langfuse-v1`), an id found in `--rubric-path`, or a pack folder
    #[arg(long, value_name = "ID|PATH")]
    pub rubric: Option<String>,

    /// Source: a CLEO audit log or tasks.db, a Claude Code transcript or project folder, a Langfuse trace file, another agent's session (Codex CLI, Gemini CLI, OpenHands, SWE-agent, inspect_ai, ATIF, an OpenTelemetry trace export), `-` for standard input, or `langfuse:session/ID` / `langfuse:trace/ID` read from the Langfuse API (LANGFUSE_BASE_URL, LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY); a folder or glob (`'logs/*.jsonl'`) of files of any format; give it again for more sources (each result then names its file) [default: .cleo/tasks.db]
    #[arg(long, value_name = "FILE|DIR|GLOB")]
    pub source: Vec<PathBuf>,

    /// Read the source as this format instead of detecting it from its content (or a format a plugin of the pack reads)
    #[arg(long, value_name = "FORMAT", default_value = AUTO_FORMAT, value_parser = SourceFormatParser)]
    pub source_format: String,

    /// Skip malformed lines of a JSONL audit log with a warning naming each, instead of failing on the first (results say how many lines their session lost)
    #[arg(long)]
    pub skip_bad_lines: bool,

    /// Grade every session of the source
    #[arg(long)]
    pub all: bool,

    /// Output format
    #[arg(long, value_enum, default_value_t = GradeFormat::Human)]
    pub format: GradeFormat,

    /// Print only the results and errors: no progress bar, no warnings, no `recorded …` note
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// Grades file to append each result to, and that `--list` reads (`-`: standard input, for `--list` only) [default: .cleo/metrics/GRADES.jsonl for a CLEO source; other sources record only with this flag]
    #[arg(long, value_name = "FILE")]
    pub grades: Option<PathBuf>,

    /// Do not append results to the grades file
    // With `--grades FILE` too, one of the two flags is a mistake: refused rather than one
    // of them dropped without a word.
    #[arg(long, conflicts_with = "grades")]
    pub no_record: bool,

    /// Grade a session the source has no entries for (it gets the empty-session grade, as CLEO's grader gives) instead of failing
    #[arg(long)]
    pub allow_empty: bool,

    /// Exit 1 when any graded session scores below this percentage (a CI gate)
    #[arg(long, value_name = "PERCENT", value_parser = percent)]
    pub fail_under: Option<f64>,

    /// Write the results to FILE instead of standard output (`-` is standard output)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Grade on this many threads, at most 256 [default: one per CPU]
    // Each thread keeps a script's stack in reserve, and thousands of idle workers looking for
    // work starve the ones grading: `-j 8192` ran for minutes on two sessions.
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: Option<u16>,

    /// Show, for each rule, the points it gave or took and the entries behind them
    #[arg(long)]
    pub explain: bool,

    /// Also write a self-contained HTML page of the results to FILE (each session's rule trace in it, as `--explain` gives it)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Reference trajectories for the pack's trajectory metrics: JSONL, one `{"sessionId", "toolCalls": [{"name", "args"}]}` (or OpenAI-style `messages`) a line
    #[arg(long, value_name = "FILE")]
    pub reference: Option<PathBuf>,

    /// A judge's scores for the pack's judged dimensions (one JSON object, or an array with one per chunk); `-` reads stdin
    #[arg(long, value_name = "FILE", conflicts_with = "judge_cmd")]
    pub judgment: Option<PathBuf>,

    /// Ask this command for the judgment: it gets each chunk's scorer prompt on stdin and prints a judgment; repeat (or add `--judge`) for a panel
    #[arg(long, value_name = "CMD", value_parser = command_line)]
    pub judge_cmd: Vec<String>,

    /// Ask a model for the judgment: `anthropic:MODEL` (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL) or `openai:MODEL` (OPENAI_API_KEY, OPENAI_BASE_URL; any compatible server), optionally `,temperature=T` and `,max_tokens=N`; repeat for a panel of judges
    #[arg(long, value_name = "PROVIDER:MODEL", conflicts_with = "judgment")]
    pub judge: Vec<String>,

    /// How a panel's scores of a dimension combine (default: the pack's `judge.panel`, else `mean`; categories take the median under `mean`)
    #[arg(long, value_enum, value_name = "HOW")]
    pub panel: Option<PanelArg>,

    /// Seconds the judge may take per chunk (1 to 86400)
    #[arg(long, value_name = "SECONDS", default_value_t = 300,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub judge_timeout: u64,

    /// MiB a `--judge-cmd` may print on stdout, and on stderr, per chunk; past that it is stopped (1 to 4096)
    #[arg(long, value_name = "MIB", default_value_t = 64,
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub judge_max_output: u64,

    /// Ask the judge this many times per chunk; the result reports each dimension's spread over the runs, and the run Krippendorff's alpha over the batch
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub judge_runs: u32,

    /// Requests to a judge in flight at once (results keep their order)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub judge_jobs: u32,

    /// Ask the model again instead of reusing replies kept in the judgment cache
    #[arg(long)]
    pub no_judge_cache: bool,

    /// Attempts per request to a model when it answers 429, 5xx or cannot be reached
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub judge_attempts: u32,

    /// Wait before the first retry of a model request (when it names no retry-after); each further retry waits twice as long
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub judge_backoff_ms: u64,

    /// With `--judge-runs` above 1 or a panel: write the agreement of each judge's runs and among the panel's judges (Krippendorff's alpha per dimension) to this JSON file
    #[arg(long, value_name = "FILE")]
    pub agreement: Option<PathBuf>,

    /// Print the pack's scorer prompt for each session (one per chunk of a long session) instead of grading
    #[arg(long, conflicts_with_all = ["judgment", "judge_cmd", "judge"])]
    pub print_prompt: bool,

    /// Print each graded session as score bodies for an observability tool instead of as results
    // Score bodies have one shape: a `--format` given with it would be dropped without a word.
    #[arg(long, value_enum, value_name = "TARGET", conflicts_with = "format")]
    pub emit: Option<EmitTarget>,

    /// After grading, send each session's scores to Langfuse as its SDK does (LANGFUSE_BASE_URL, LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY); re-running updates the same scores
    #[arg(long, value_enum, value_name = "TARGET")]
    pub push: Option<EmitTarget>,

    /// With `--emit langfuse` or `--push langfuse`: a JSON object mapping score names to Langfuse score-config ids
    #[arg(long, value_name = "FILE")]
    pub config_ids: Option<PathBuf>,

    /// List recorded grades instead of grading
    #[arg(long)]
    pub list: bool,

    /// With `--list`: only this session's grades (and `--rubric ID`: only that pack's)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,

    #[command(flatten)]
    pub packs: PackLoad,

    /// Colour in human output
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// Sessions to grade, in the order their results are printed
    #[arg(value_name = "SESSION")]
    pub sessions: Vec<String>,

    /// The pack flags given on the command line (not from the environment), which a mode
    /// that loads no pack (`--list`) refuses rather than ignores.
    #[arg(skip)]
    pub pack_flags_given: Vec<&'static str>,

    /// The judges of `--judge` and `--judge-cmd` in the order given on the command line:
    /// `(true, i)` is `judge_cmd[i]`, `(false, i)` is `judge[i]`. A panel keeps this order.
    #[arg(skip)]
    pub judge_order: Vec<(bool, usize)>,
}

/// `--rubric-path`, for a command that finds packs by id but loads no plugins.
#[derive(Debug, Clone, Default, Args)]
pub struct PackSearch {
    /// Folders holding rubric packs, searched before the shipped ones
    #[arg(
        long = "rubric-path",
        value_name = "DIR",
        env = "GRADE_RUBRIC_PATH",
        value_delimiter = ':'
    )]
    pub rubric_path: Vec<PathBuf>,
}

/// `--rubric-path` and `--allow-plugins`, for a command that loads packs. Each such command
/// declares them itself rather than inheriting them from `grade`: as global flags, `grade
/// man`, `grade completions` and `grade push` listed and accepted them, meaning nothing.
#[derive(Debug, Clone, Default, Args)]
pub struct PackLoad {
    #[command(flatten)]
    pub search: PackSearch,

    /// Let packs load their native plugins (code that runs with your rights; each pinned by its sha256)
    #[arg(
        long,
        env = "GRADE_ALLOW_PLUGINS",
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub allow_plugins: bool,
}

impl PackLoad {
    /// The plugin policy of the command line; a refusal names the flag that allows plugins.
    pub fn policy(&self) -> grade_engine::plugin::PluginPolicy {
        grade_engine::plugin::PluginPolicy {
            allow: self.allow_plugins,
            how_to_allow: Some(ALLOW_PLUGINS_HINT),
        }
    }
}

/// The argument ids of `PackLoad`'s flags, as `ArgMatches` knows them.
const RUBRIC_PATH_ID: &str = "rubric_path";
const ALLOW_PLUGINS_ID: &str = "allow_plugins";

impl Cli {
    /// The usage `grade` alone prints (on stderr, exit 2: it grades nothing), also when the
    /// environment gives a flag (`GRADE_RUBRIC_PATH`). Not clap's `arg_required_else_help`
    /// on the struct: the plan's tests parse `grade` alone for its defaults.
    pub fn bare_usage() -> Option<String> {
        use clap::CommandFactory;
        use std::io::IsTerminal;
        if std::env::args_os().len() > 1 {
            return None;
        }
        let help = Cli::command().render_help();
        Some(if std::io::stderr().is_terminal() {
            help.ansi().to_string()
        } else {
            help.to_string()
        })
    }

    /// The command line of this process. Beyond clap's parse, it settles the pack flags a
    /// user gave between `grade rubric` and its subcommand (`grade rubric --rubric-path DIR
    /// list`, which worked while the flags were global).
    pub fn parse_args() -> Result<Cli, clap::Error> {
        use clap::{CommandFactory, FromArgMatches};
        let matches = Cli::command().try_get_matches()?;
        let mut cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut Cli::command()))?;
        let mut order: Vec<(usize, bool, usize)> = Vec::new();
        for (is_cmd, id) in [(false, "judge"), (true, "judge_cmd")] {
            if let Some(indices) = matches.indices_of(id) {
                order.extend(indices.enumerate().map(|(i, at)| (at, is_cmd, i)));
            }
        }
        order.sort_unstable();
        cli.judge_order = order
            .into_iter()
            .map(|(_, is_cmd, i)| (is_cmd, i))
            .collect();
        if cli.command.is_none() {
            cli.pack_flags_given = [
                ("`--rubric-path`", RUBRIC_PATH_ID),
                ("`--allow-plugins`", ALLOW_PLUGINS_ID),
            ]
            .into_iter()
            .filter(|(_, id)| {
                matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
            })
            .map(|(flag, _)| flag)
            .collect();
        }
        if let (Some(Command::Rubric(rubric)), Some(("rubric", group))) =
            (&mut cli.command, matches.subcommand())
        {
            if let Some((name, leaf)) = group.subcommand() {
                rubric.settle(name, group, leaf).map_err(|message| {
                    // Formatted with the subcommand's usage, as clap's own refusals are.
                    let mut command = Cli::command();
                    command.build();
                    let leaf_command = command
                        .find_subcommand("rubric")
                        .and_then(|c| c.find_subcommand(name))
                        .cloned();
                    let mut shown = leaf_command.unwrap_or(command);
                    clap::Error::raw(clap::error::ErrorKind::ArgumentConflict, message)
                        .format(&mut shown)
                })?;
            }
        }
        Ok(cli)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
    Jsonl,
}

/// What a grading run prints (`grade --format`): a form of its own, or one of the engine's
/// row formats ([`grade_engine::sink::ROW_FORMATS`], whose names and help the command line
/// takes, so that a new row format is not named here).
#[derive(Debug, Clone, Copy)]
pub enum GradeFormat {
    /// A report per session, and a summary after `--all`
    Human,
    /// One JSON document: the result, or an array of them
    Json,
    /// One JSON line per session
    Jsonl,
    /// A row per session between a head and a tail (CSV, JUnit XML, Markdown…)
    Rows(&'static RowFormatKind),
}

/// Formats are told apart by name: a row format's name is its identity in the registry.
impl PartialEq for GradeFormat {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for GradeFormat {}

/// Every `--format` value, in the order the help lists them.
static GRADE_FORMATS: std::sync::LazyLock<Vec<GradeFormat>> = std::sync::LazyLock::new(|| {
    [GradeFormat::Human, GradeFormat::Json, GradeFormat::Jsonl]
        .into_iter()
        .chain(ROW_FORMATS.iter().map(GradeFormat::Rows))
        .collect()
});

impl ValueEnum for GradeFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &GRADE_FORMATS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let (name, help) = match self {
            GradeFormat::Human => ("human", "A report per session, and a summary after `--all`"),
            GradeFormat::Json => ("json", "One JSON document: the result, or an array of them"),
            GradeFormat::Jsonl => ("jsonl", "One JSON line per session"),
            GradeFormat::Rows(kind) => (kind.name, kind.help),
        };
        Some(clap::builder::PossibleValue::new(name).help(help))
    }
}

impl GradeFormat {
    /// The format as the commands that print no results (`--list`, `--print-prompt`) take
    /// it: `None` for a format only results are written in.
    pub fn plain(self) -> Option<Format> {
        match self {
            GradeFormat::Human => Some(Format::Human),
            GradeFormat::Json => Some(Format::Json),
            GradeFormat::Jsonl => Some(Format::Jsonl),
            GradeFormat::Rows(_) => None,
        }
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            GradeFormat::Human => "human",
            GradeFormat::Json => "json",
            GradeFormat::Jsonl => "jsonl",
            GradeFormat::Rows(kind) => kind.name,
        }
    }
}

/// `--source-format`'s value for detecting the format from the content.
pub const AUTO_FORMAT: &str = "auto";

/// `--source-format` values: `auto` and the names of the source registry's formats, with
/// their help. Any name parses, because a pack's plugins register formats after parsing;
/// the plan refuses a name no format has.
#[derive(Debug, Clone, Copy)]
pub struct SourceFormatParser;

impl clap::builder::TypedValueParser for SourceFormatParser {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        value
            .to_str()
            .map(str::to_owned)
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidUtf8).with_cmd(cmd))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        use clap::builder::PossibleValue;
        let auto = PossibleValue::new(AUTO_FORMAT).help("Detect from the content");
        let formats = grade_engine::source::Registry::builtin()
            .formats()
            .map(|f| PossibleValue::new(f.name()).help(f.about()));
        Some(Box::new(std::iter::once(auto).chain(formats)))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Work with rubric packs
    Rubric(RubricArgs),
    /// Explain an error or warning code (`E012`, `E101`, `W103`) or its name, or list every code
    Explain(crate::explain::RubricExplainArgs),
    /// Send score bodies (from `--emit langfuse`) to a server
    Push(PushArgs),
    /// Serve grading to agents as MCP tools over stdio (`grade`, `grade_list`, `rubric_list`, `rubric_show`)
    Mcp(McpArgs),
    /// Print a shell completion script (for example `grade completions bash > /etc/bash_completion.d/grade`)
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff; `grade man | man -l -`), or a subcommand's (`grade man compare`, `grade man rubric validate`)
    Man {
        /// The subcommand whose page to print (its page is named `grade-COMMAND` in SEE ALSO lists)
        #[arg(value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Compare two rubric versions, two files of recorded results, or two agent arms
    #[command(after_help = crate::args::COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// Calibrate a judge against people: its results beside human labels, per judged dimension (Cohen's kappa, correlations, Krippendorff's alpha, with bootstrap intervals)
    #[command(after_help = crate::args::CALIBRATE_EXAMPLES)]
    Calibrate(CalibrateArgs),
    /// Write one self-contained HTML page over results or a grades history: scores, letters, dimensions, flags, each session's trace, and each rubric's trend over time
    #[command(after_help = crate::args::REPORT_EXAMPLES)]
    Report(ReportArgs),
}

pub const REPORT_EXAMPLES: &str = "Examples:\n  grade report --html grades.html                      # .cleo/metrics/GRADES.jsonl\n  grade report results.jsonl --html report.html\n  grade --rubric claude-code-v1 --source ~/.claude/projects/app --all --explain --html report.html";

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results (`--format jsonl` or `json`, with `--explain` for each rule's trace) or a grades history; several are read as one [default: .cleo/metrics/GRADES.jsonl]
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The page to write (`-` is standard output)
    #[arg(long, value_name = "FILE", required = true)]
    pub html: PathBuf,
    /// The page's title [default: the files' names]
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    #[command(flatten)]
    pub packs: PackLoad,
}

pub const CALIBRATE_EXAMPLES: &str = "Examples:\n  grade --rubric langfuse-v1 --source traces.json --all --judge openai:gpt-4.1 --format jsonl > results.jsonl\n  grade calibrate --rubric langfuse-v1 --results results.jsonl --labels labels.jsonl\n  grade calibrate --rubric langfuse-v1 --results results.jsonl --labels langfuse --min-kappa 0.6 --min-alpha goal_achievement=0.7\n  grade calibrate --rubric langfuse-v1 --results a=judge-a.jsonl --results b=judge-b.jsonl --labels labels.jsonl --html calibration.html\n\nLabels are JSON lines: {\"sessionId\": \"s1\", \"annotator\": \"ana\", \"scores\": {\"goal_achievement\": 2, \"error_handling\": \"recovered\"}}";

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// The rubric the results were graded with (a judged pack)
    #[arg(long, value_name = "ID|PATH")]
    pub rubric: String,
    /// Results of `grade … --format jsonl` by the judge; repeat to compare judges in one report (`NAME=FILE` names one; a panel's results add each of its judges)
    #[arg(long, value_name = "[NAME=]FILE")]
    pub results: Vec<String>,
    /// Judgments instead of results: a JSON object mapping each session id to its judgment; repeatable
    #[arg(long, value_name = "[NAME=]FILE")]
    pub judgments: Vec<String>,
    /// Human labels: a JSON-lines file, or from Langfuse (scores whose source is ANNOTATION): `langfuse`, `langfuse:session/ID` or `langfuse:score/NAME` (LANGFUSE_BASE_URL, LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY)
    #[arg(long, value_name = "FILE|langfuse[:session/ID|:score/NAME]")]
    pub labels: String,
    /// Output format
    #[arg(long, value_enum, default_value_t = CompareFormat::Human)]
    pub format: CompareFormat,
    /// Write the report to FILE instead of standard output (`-` is standard output)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write a self-contained HTML report (confusion matrices, a scatter per dimension) to this file
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Exit 1 when a categorical dimension's quadratic-weighted kappa is below X (`X` for every labelled one, `DIMENSION=X` for one); repeatable
    #[arg(long, value_name = "[DIMENSION=]X")]
    pub min_kappa: Vec<String>,
    /// Exit 1 when a dimension's Krippendorff's alpha (judge and people) is below X (`X` for every labelled one, `DIMENSION=X` for one); repeatable
    #[arg(long, value_name = "[DIMENSION=]X")]
    pub min_alpha: Vec<String>,
    /// Bootstrap resamples of the sessions for each 95% interval
    #[arg(long, value_name = "N", default_value_t = 2000, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub resamples: u32,
    /// Seed of the bootstrap
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Sessions where the judge disagrees most to list
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Seconds to wait for each Langfuse response (1 to 86400)
    #[arg(long, value_name = "SECONDS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
    /// Colour in human output
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    #[command(flatten)]
    pub packs: PackLoad,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Grades file the `grade` tool appends to and `grade_list` reads [default: .cleo/metrics/GRADES.jsonl]
    #[arg(long, value_name = "FILE")]
    pub grades: Option<PathBuf>,

    /// Let a `grade` call read a `langfuse:session/ID` or `langfuse:trace/ID` source, with the server's own LANGFUSE_* keys; without it such a source is refused and the server reads only files
    #[arg(long)]
    pub allow_remote_sources: bool,

    #[command(flatten)]
    pub packs: PackLoad,
}

/// `--panel`: how a panel's scores combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PanelArg {
    /// The mean of numbers, the median category of categories
    Mean,
    /// The median score
    Median,
    /// The lowest score (the strictest judge)
    Min,
    /// The highest score (the most lenient judge)
    Max,
}

impl PanelArg {
    pub fn combine(self) -> grade_engine::pack::PanelCombine {
        use grade_engine::pack::PanelCombine;
        match self {
            PanelArg::Mean => PanelCombine::Mean,
            PanelArg::Median => PanelCombine::Median,
            PanelArg::Min => PanelCombine::Min,
            PanelArg::Max => PanelCombine::Max,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EmitTarget {
    /// Langfuse score bodies (`POST /api/public/scores`), one JSON object per line
    Langfuse,
}

#[derive(Debug, Args)]
pub struct PushArgs {
    /// Score bodies to send to Langfuse (JSON lines or an array); `-` reads stdin. Uses LANGFUSE_BASE_URL (else LANGFUSE_HOST), LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY
    #[arg(long, value_name = "FILE|-")]
    pub langfuse: PathBuf,
    /// Attempts per score when the server answers 429 or 5xx, or cannot be reached (1 to 100)
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub attempts: u32,
    /// Wait before the first retry; each further retry waits twice as long
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub backoff_ms: u64,
    /// Seconds to wait for each response (1 to 86400)
    #[arg(long, value_name = "SECONDS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
}

/// A `--judge-cmd`: `sh -c ''` runs nothing and answers nothing, which would surface as a
/// judge whose reply is not JSON rather than as the empty (often unset) variable it was.
fn command_line(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err("the command is empty: give the program that prints a judgment".to_owned());
    }
    Ok(text.to_owned())
}

/// A percentage from 0 to 100: `NaN` would pass every comparison, so it is refused.
fn percent(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if !(0.0..=100.0).contains(&value) {
        return Err(format!("`{text}` is not a percentage from 0 to 100"));
    }
    Ok(value)
}

pub const COMPARE_EXAMPLES: &str = "Examples:\n  grade compare --rubric cleo-v1 --rubric cleo-v2 --source audit.jsonl --all\n  grade compare before.jsonl after.jsonl --format json\n  grade compare --rubric cleo-v2 --arm old=old.jsonl --arm new=new.jsonl --pair-by metadata.taskId\n  grade compare --rubric cleo-v1 --rubric ./my-pack --source tasks.db --all --html report.html --fail-on regression";

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Two files of recorded results (baseline, candidate); or, with two `--rubric`, the sessions to compare
    #[arg(value_name = "FILE|SESSION")]
    pub inputs: Vec<String>,
    /// The baseline rubric, then the candidate (twice); or the one rubric of two arms
    #[arg(long, value_name = "ID|PATH")]
    pub rubric: Vec<String>,
    /// The source both rubrics grade (`-` for standard input) [default: .cleo/tasks.db]
    #[arg(long, value_name = "FILE|DIR")]
    pub source: Option<PathBuf>,
    /// Read sources as this built-in format instead of detecting it
    #[arg(long, value_name = "FORMAT", default_value = AUTO_FORMAT, value_parser = SourceFormatParser)]
    pub source_format: String,
    /// Compare every session of the source
    #[arg(long)]
    pub all: bool,
    /// Skip malformed lines of a JSONL audit log with a warning naming each, instead of failing on the first (as grading does)
    #[arg(long)]
    pub skip_bad_lines: bool,
    /// Reference trajectories for the packs' trajectory metrics (JSONL, as `grade --reference` reads it)
    #[arg(long, value_name = "FILE")]
    pub reference: Option<PathBuf>,
    /// An agent arm and its source (`-` for standard input); give two (the first is the baseline)
    #[arg(long = "arm", value_name = "NAME=SOURCE")]
    pub arms: Vec<String>,
    /// Pair the sessions of two arms by this field (for example `metadata.taskId`); unpaired without it
    #[arg(long, value_name = "FIELD")]
    pub pair_by: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t = CompareFormat::Human)]
    pub format: CompareFormat,
    /// Also write a self-contained HTML report to this file
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// The percent a session needs to pass [default: the lowest band needing half the points, C = 60 for CLEO]
    #[arg(long, value_name = "PERCENT", value_parser = percent)]
    pub pass_at: Option<f64>,
    /// Seed of the bootstrap confidence intervals
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Changed sessions to list in human output
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Exit 1 when: `regression` (the whole 95% CI of the mean change is below 0), `flips` (a session goes from pass to fail), `drop=X` (the mean change is below -X)
    #[arg(long = "fail-on", value_name = "regression|flips|drop=X")]
    pub fail_on: Vec<String>,
    /// Colour in human output
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    #[command(flatten)]
    pub packs: PackLoad,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Human,
    Json,
}
