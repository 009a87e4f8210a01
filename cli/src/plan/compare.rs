//! `grade compare`'s plan: its flags checked once into the comparison's form, inputs and
//! settings, before any pack is loaded or source read; `compare.rs` runs it and
//! `compare_render.rs` writes what it found as the plan says.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use grade_engine::compare::{self, CompareOptions, FailOn};
use grade_engine::pack::Field;
use grade_engine::plugin::PluginPolicy;
use grade_engine::reference::References;
use grade_engine::SourceFormat;

use crate::args::{CompareArgs, CompareFormat};
use crate::error::CliError;

/// A comparison as the command line asks for it, once its flags are known to fit together.
pub(crate) struct ComparePlan {
    pub form: Form,
    /// The folders packs are looked up in, and whether their native plugins may load.
    pub search_path: Vec<PathBuf>,
    pub policy: PluginPolicy,
    /// The format `--source-format` asks for; detected from the content when `None`.
    pub format: Option<Arc<dyn SourceFormat>>,
    pub skip_bad_lines: bool,
    /// The session ids named, as given (a comparison of two rubrics refuses those the
    /// source lacks).
    pub named: Vec<String>,
    /// The reference trajectories of `--reference`, read once.
    pub references: Option<Arc<References>>,
    pub options: CompareOptions,
    /// The `--fail-on` rules the comparison is held to.
    pub rules: Vec<FailOn>,
    pub output: CompareOutput,
}

/// Where a comparison's report goes and in what form.
pub(crate) struct CompareOutput {
    pub format: CompareFormat,
    /// `--html`: the page written before the report.
    pub html: Option<PathBuf>,
    /// How many of the most changed sessions the human report lists.
    pub top: usize,
    /// Whether the human report is coloured.
    pub color: bool,
}

impl ComparePlan {
    /// Checks the flags of `grade compare`, in the order a person fixes them: the form and
    /// its inputs, the page, the source format, the `--fail-on` rules, the references.
    pub fn new(args: &CompareArgs) -> Result<ComparePlan, CliError> {
        let form = form(args)?;
        html_clear_of_inputs(&form, args.html.as_deref())?;
        let format = if args.source_format == crate::args::AUTO_FORMAT {
            None
        } else {
            match grade_engine::source::Registry::builtin().get(&args.source_format) {
                Some(f) => Some(f.clone()),
                None => {
                    return Err(usage(format!(
                        "`--source-format {}`: compare reads the built-in formats only",
                        args.source_format
                    )))
                }
            }
        };
        Ok(ComparePlan {
            form,
            search_path: args.packs.search.rubric_path.clone(),
            policy: args.packs.policy(),
            format,
            skip_bad_lines: args.skip_bad_lines,
            named: args.inputs.clone(),
            rules: fail_rules(args)?,
            references: super::read_references(args.reference.as_deref())?,
            options: CompareOptions {
                pass_at: args.pass_at,
                seed: args.seed,
                resamples: compare::DEFAULT_RESAMPLES,
            },
            output: CompareOutput {
                format: args.format,
                html: args.html.clone(),
                top: args.top,
                color: crate::render::use_color(args.color),
            },
        })
    }
}

fn usage(message: impl Into<String>) -> CliError {
    CliError::Usage(message.into())
}

/// What the flags ask to compare, checked.
pub(crate) enum Form {
    /// Two rubrics, one source: each session graded by both in one read.
    Rubrics {
        base: String,
        cand: String,
        source: crate::input::Source,
        /// Every session of the source, or those named.
        all: bool,
    },
    /// Two files of recorded results.
    Recorded { base: PathBuf, cand: PathBuf },
    /// One rubric, two sources.
    Arms {
        rubric: String,
        arms: [(String, crate::input::Source); 2],
        pair_by: Option<String>,
    },
}

/// Which comparison the flags ask for, its inputs checked (and a pipe or standard input
/// spooled).
fn form(args: &CompareArgs) -> Result<Form, CliError> {
    if !args.arms.is_empty() {
        if args.rubric.len() != 1 {
            return Err(usage(
                "arms are graded by one rubric: give `--rubric ID|PATH` once with `--arm NAME=SOURCE` twice",
            ));
        }
        if args.arms.len() != 2 {
            return Err(usage(format!(
                "give exactly two arms (`--arm NAME=SOURCE` twice), not {}",
                args.arms.len()
            )));
        }
        if args.source.is_some() || args.all || !args.inputs.is_empty() {
            return Err(usage(
                "with `--arm`, each arm names its source and all its sessions are compared: drop `--source`, `--all` and session ids",
            ));
        }
        let mut arms = Vec::new();
        for arm in &args.arms {
            let Some((name, source)) = arm
                .split_once('=')
                .filter(|(n, s)| !n.is_empty() && !s.is_empty())
            else {
                return Err(usage(format!("`--arm {arm}` is not `NAME=SOURCE`")));
            };
            let path = PathBuf::from(source);
            if source != "-" && !path.exists() {
                return Err(usage(format!(
                    "source `{source}` of arm `{name}` does not exist"
                )));
            }
            arms.push((name.to_owned(), path));
        }
        if arms[0].0 == arms[1].0 {
            return Err(usage(format!("both arms are named `{}`", arms[0].0)));
        }
        if arms.iter().all(|(_, path)| path.as_os_str() == "-") {
            return Err(usage(
                "both arms read standard input (`-`), which can be read once: save one to a file",
            ));
        }
        // A pipe or standard input is read whole first, as `grade --source` reads it.
        let mut read = Vec::new();
        for (name, path) in arms {
            read.push((name, crate::input::source(&path)?));
        }
        if let Some(field) = &args.pair_by {
            Field::parse(field).map_err(|e| usage(format!("`--pair-by`: {e}")))?;
        }
        let arms = read
            .try_into()
            .map_err(|_| usage("give exactly two arms"))?;
        return Ok(Form::Arms {
            rubric: args.rubric[0].clone(),
            arms,
            pair_by: args.pair_by.clone(),
        });
    }
    if args.pair_by.is_some() {
        return Err(usage(
            "`--pair-by` pairs the sessions of two arms (`--arm NAME=SOURCE`); rubric versions and recorded results pair by session id",
        ));
    }
    match args.rubric.len() {
        2 => {
            if args.all && !args.inputs.is_empty() {
                return Err(usage("give session ids or `--all`, not both"));
            }
            if !args.all && args.inputs.is_empty() {
                return Err(usage(
                    "name the sessions to compare, or pass `--all` to compare every session of the source",
                ));
            }
            // A pipe or standard input is read whole first, as `grade --source` reads it.
            let source = crate::input::source(&match &args.source {
                Some(path) => path.clone(),
                None => crate::default_source()?,
            })?;
            Ok(Form::Rubrics {
                base: args.rubric[0].clone(),
                cand: args.rubric[1].clone(),
                source,
                all: args.all,
            })
        }
        0 => {
            if args.inputs.len() != 2 || args.all || args.source.is_some() {
                return Err(usage(
                    "compare two rubrics (`--rubric BASE --rubric CAND --source FILE --all`), two files of recorded results (`BASE.jsonl CAND.jsonl`), or two arms (`--rubric R --arm A=SOURCE --arm B=SOURCE`)",
                ));
            }
            Ok(Form::Recorded {
                base: PathBuf::from(&args.inputs[0]),
                cand: PathBuf::from(&args.inputs[1]),
            })
        }
        1 => Err(usage(
            "one rubric compares two arms (`--arm NAME=SOURCE` twice); to compare rubric versions give `--rubric` twice",
        )),
        n => Err(usage(format!("give `--rubric` at most twice, not {n} times"))),
    }
}

fn fail_rules(args: &CompareArgs) -> Result<Vec<FailOn>, CliError> {
    args.fail_on
        .iter()
        .map(|rule| {
            FailOn::parse(rule).ok_or_else(|| {
                usage(format!(
                    "`--fail-on {rule}`: expected `regression`, `flips` or `drop=X` with X a number of points ≥ 0"
                ))
            })
        })
        .collect()
}

/// Refuses an `--html` page that would be written over a file the comparison reads: the page
/// is written after the inputs are read, so the run would end by destroying its own input.
fn html_clear_of_inputs(form: &Form, html: Option<&Path>) -> Result<(), CliError> {
    let Some(html) = html else {
        return Ok(());
    };
    // `-` is standard input or output elsewhere; here it made a file of that name.
    if html.as_os_str() == "-" {
        return Err(usage(
            "`--html -` would write a file named `-`: give the page a file name (the report on standard output is `--format`'s)",
        ));
    }
    let inputs: Vec<&Path> = match form {
        Form::Rubrics { source, .. } => vec![&source.path],
        Form::Recorded { base, cand } => vec![base, cand],
        Form::Arms { arms, .. } => arms.iter().map(|(_, s)| s.path.as_path()).collect(),
    };
    match inputs
        .into_iter()
        .find(|input| super::same_file(input, html))
    {
        Some(input) => Err(usage(format!(
            "`--html {}` would be written over `{}`, which the comparison reads: choose another file",
            html.display(),
            input.display()
        ))),
        None => Ok(()),
    }
}
