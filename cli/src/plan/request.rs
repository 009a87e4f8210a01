//! A grading run as it is asked for: the command line's grading flags, or a `grade mcp`
//! tool call over the defaults of `grade` alone.

use std::path::PathBuf;
use std::sync::Arc;

use grade_engine::source::Registry;
use grade_engine::SourceFormat;

use crate::args::{self, Cli, ColorChoice, EmitTarget, GradeFormat, PanelArg};

/// A grading run as it is asked for, before its flags are checked against each other: the
/// command line's grading flags ([`GradeRequest::from_cli`]), or what a `grade mcp` tool
/// call gives over the defaults ([`GradeRequest::default`], the values of `grade` alone).
/// Only [`GradePlan::new`] reads it: the rest of the run reads the plan.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GradeRequest {
    pub rubric: Option<String>,
    /// The folders packs are looked up in, and whether their native plugins may load.
    pub search_path: Vec<PathBuf>,
    pub policy: grade_engine::plugin::PluginPolicy,
    pub sessions: Vec<String>,
    pub all: bool,
    /// `--session`, which filters `--list` and is refused when grading.
    pub session: Option<String>,
    pub source: Vec<PathBuf>,
    pub source_format: String,
    pub skip_bad_lines: bool,
    pub format: GradeFormat,
    pub grades: Option<PathBuf>,
    pub no_record: bool,
    pub allow_empty: bool,
    pub fail_under: Option<f64>,
    pub output: Option<PathBuf>,
    pub color: ColorChoice,
    pub explain: bool,
    pub html: Option<PathBuf>,
    pub reference: Option<PathBuf>,
    pub judgment: Option<PathBuf>,
    pub judge: Vec<String>,
    pub judge_cmd: Vec<String>,
    /// Which of `--judge` (`false`) and `--judge-cmd` (`true`) came in which order, by
    /// index; empty for every `--judge` first.
    pub judge_order: Vec<(bool, usize)>,
    pub panel: Option<PanelArg>,
    pub judge_timeout: u64,
    pub judge_max_output: u64,
    pub judge_runs: u32,
    pub judge_jobs: u32,
    pub no_judge_cache: bool,
    pub judge_attempts: u32,
    pub judge_backoff_ms: u64,
    pub agreement: Option<PathBuf>,
    pub print_prompt: bool,
    pub emit: Option<EmitTarget>,
    pub push: Option<EmitTarget>,
    pub config_ids: Option<PathBuf>,
}

impl Default for GradeRequest {
    /// The values of `grade` alone on the command line (a test holds them to clap's).
    fn default() -> Self {
        GradeRequest {
            rubric: None,
            search_path: Vec::new(),
            policy: args::PackLoad::default().policy(),
            sessions: Vec::new(),
            all: false,
            session: None,
            source: Vec::new(),
            source_format: args::AUTO_FORMAT.to_owned(),
            skip_bad_lines: false,
            format: GradeFormat::Human,
            grades: None,
            no_record: false,
            allow_empty: false,
            fail_under: None,
            output: None,
            color: ColorChoice::Auto,
            explain: false,
            html: None,
            reference: None,
            judgment: None,
            judge: Vec::new(),
            judge_cmd: Vec::new(),
            judge_order: Vec::new(),
            panel: None,
            judge_timeout: 300,
            judge_max_output: 64,
            judge_runs: 1,
            judge_jobs: 1,
            no_judge_cache: false,
            judge_attempts: 3,
            judge_backoff_ms: 500,
            agreement: None,
            print_prompt: false,
            emit: None,
            push: None,
            config_ids: None,
        }
    }
}

impl GradeRequest {
    /// The grading flags of the command line.
    pub fn from_cli(cli: &Cli) -> GradeRequest {
        GradeRequest {
            rubric: cli.rubric.clone(),
            search_path: cli.packs.search.rubric_path.clone(),
            policy: cli.packs.policy(),
            sessions: cli.sessions.clone(),
            all: cli.all,
            session: cli.session.clone(),
            source: cli.source.clone(),
            source_format: cli.source_format.clone(),
            skip_bad_lines: cli.skip_bad_lines,
            format: cli.format,
            grades: cli.grades.clone(),
            no_record: cli.no_record,
            allow_empty: cli.allow_empty,
            fail_under: cli.fail_under,
            output: cli.output.clone(),
            color: cli.color,
            explain: cli.explain,
            html: cli.html.clone(),
            reference: cli.reference.clone(),
            judgment: cli.judgment.clone(),
            judge: cli.judge.clone(),
            judge_cmd: cli.judge_cmd.clone(),
            judge_order: cli.judge_order.clone(),
            panel: cli.panel,
            judge_timeout: cli.judge_timeout,
            judge_max_output: cli.judge_max_output,
            judge_runs: cli.judge_runs,
            judge_jobs: cli.judge_jobs,
            no_judge_cache: cli.no_judge_cache,
            judge_attempts: cli.judge_attempts,
            judge_backoff_ms: cli.judge_backoff_ms,
            agreement: cli.agreement.clone(),
            print_prompt: cli.print_prompt,
            emit: cli.emit,
            push: cli.push,
            config_ids: cli.config_ids.clone(),
        }
    }

    /// `--source-format`: a built-in format, or the name of one a plugin reads (checked once
    /// the pack and its plugins are loaded).
    pub(super) fn source_format(&self) -> SourceFormatChoice {
        if self.source_format == args::AUTO_FORMAT {
            return SourceFormatChoice::Auto;
        }
        match Registry::builtin().get(&self.source_format) {
            Some(format) => SourceFormatChoice::Builtin(format.clone()),
            None => SourceFormatChoice::Plugin(self.source_format.clone()),
        }
    }
}

/// What `--source-format` asks for.
pub(super) enum SourceFormatChoice {
    Auto,
    Builtin(Arc<dyn SourceFormat>),
    /// Not a built-in name: a format of one of the pack's plugins, or a mistake.
    Plugin(String),
}
