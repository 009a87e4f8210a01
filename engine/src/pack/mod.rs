//! Rubric packs: a folder with `rubric.yaml` and optional `.rhai` scripts.
//!
//! Stages: `raw` (the YAML as written) → `compile` (every reference resolved, every
//! problem collected, scripts compiled once) → [`CompiledPack`], which grades any number
//! of sessions.

pub mod codes;
pub(crate) mod compile;
pub(crate) mod condition;
mod decided;
pub(crate) mod lint;
pub(crate) mod locate;
mod native;
mod prescan;
pub(crate) mod raw;
pub(crate) mod reads;
pub(crate) mod template;
#[cfg(test)]
pub(crate) mod testing;
pub(crate) mod trajectory;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::script::ScriptHost;
pub(crate) use condition::Condition;
use template::Template;

pub use crate::field::{Field, FieldsRead, Projection};
pub use compile::{compile_pack, compile_pack_with, Validation};
// Validation grades a made-up session (the dry run), so it lives above the evaluator; its
// public paths stay here (a facade re-export: nothing in `pack` calls it).
pub use crate::validate::{validate_pack, validate_pack_with};
pub use locate::{snippet, Place};

/// The files of a pack and where they came from.
#[derive(Debug, Clone)]
pub struct PackFiles {
    /// Where the files came from.
    pub origin: PackOrigin,
    /// File name (relative to the pack folder) → content. The manifest, Rhai scripts and
    /// judge prompt templates make up the pack's behaviour and digest; READMEs and test
    /// fixtures do not.
    pub files: BTreeMap<String, String>,
}

/// Where a pack was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackOrigin {
    /// Shipped inside the binary.
    Builtin(String),
    /// Read from this folder.
    Folder(PathBuf),
}

impl std::fmt::Display for PackOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PackOrigin::Builtin(id) => write!(f, "built-in `{id}`"),
            PackOrigin::Folder(path) => write!(f, "`{}`", path.display()),
        }
    }
}

/// The files that make up a pack's behaviour (and its digest): the manifest, Rhai scripts
/// and judge prompt templates. READMEs and test fixtures are not among them.
pub(crate) fn is_pack_file(name: &str) -> bool {
    name == "rubric.yaml" || name.ends_with(".rhai") || name.ends_with(".prompt.md")
}

impl PackFiles {
    /// Reads `rubric.yaml` and the `.rhai` scripts of a pack folder.
    pub fn read_folder(dir: &Path) -> Result<PackFiles, PackError> {
        let io = |path: &Path, source| PackError::Io {
            path: path.to_owned(),
            source,
        };
        let manifest = dir.join("rubric.yaml");
        if !manifest.is_file() {
            return Err(PackError::NoManifest {
                dir: dir.to_owned(),
            });
        }
        // Every file must resolve inside the folder: a link to `/etc/passwd` named
        // `rubric.yaml`, or to a script elsewhere, is not part of the pack.
        let root = std::fs::canonicalize(dir).map_err(|e| io(dir, e))?;
        let mut files = BTreeMap::new();
        let listing = std::fs::read_dir(dir).map_err(|e| io(dir, e))?;
        for item in listing {
            let item = item.map_err(|e| io(dir, e))?;
            let path = item.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if is_pack_file(name) && path.is_file() {
                let target = std::fs::canonicalize(&path).map_err(|e| io(&path, e))?;
                if !target.starts_with(&root) {
                    return Err(PackError::OutsidePack { path, target });
                }
                let len = std::fs::metadata(&target).map_err(|e| io(&path, e))?.len();
                if len > MAX_PACK_FILE {
                    return Err(PackError::TooLarge { path });
                }
                let text = std::fs::read_to_string(&path).map_err(|e| io(&path, e))?;
                // An editor's byte order mark is no content: YAML allows one, and Rhai read
                // it as an invisible unexpected character.
                let text = match text.strip_prefix('\u{FEFF}') {
                    Some(rest) => rest.to_owned(),
                    None => text,
                };
                files.insert(name.to_owned(), text);
            }
        }
        Ok(PackFiles {
            origin: PackOrigin::Folder(dir.to_owned()),
            files,
        })
    }

    /// `sha256:` over every file's name and content, in name order: two results with the
    /// same digest were graded by the same rubric text.
    pub fn digest(&self) -> String {
        let mut hasher = Sha256::new();
        for (name, text) in &self.files {
            hasher.update((name.len() as u64).to_le_bytes());
            hasher.update(name.as_bytes());
            hasher.update((text.len() as u64).to_le_bytes());
            hasher.update(text.as_bytes());
        }
        format!("sha256:{}", crate::native::hex(&hasher.finalize()))
    }

    /// [`PackFiles::digest`], covering also the bytes of the pack's plugins (by their
    /// verified sha256), so a result names exactly the code that graded it. Without plugins
    /// it is the plain digest.
    pub fn digest_with_plugins(&self, plugins: &[std::sync::Arc<crate::native::Plugin>]) -> String {
        if plugins.is_empty() {
            return self.digest();
        }
        let mut hasher = Sha256::new();
        hasher.update(self.digest().as_bytes());
        for plugin in plugins {
            hasher.update((plugin.name.len() as u64).to_le_bytes());
            hasher.update(plugin.name.as_bytes());
            hasher.update(plugin.digest.as_bytes());
        }
        format!("sha256:{}", crate::native::hex(&hasher.finalize()))
    }

    /// Where a file of this pack lives, for messages.
    pub fn display_path(&self, file: &str) -> String {
        match &self.origin {
            PackOrigin::Builtin(id) => format!("rubrics/{id}/{file}"),
            PackOrigin::Folder(dir) => dir.join(file).display().to_string(),
        }
    }
}

/// How bad a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The pack cannot be used.
    Error,
    /// The pack works, but something in it is probably not what its author meant.
    Warning,
}

/// One problem found in a pack, with its place.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Problem {
    /// Whether the problem makes the pack unusable.
    pub severity: Severity,
    /// The diagnostic code (`E012`, `W103`): `grade explain CODE` says what it means.
    pub code: codes::Code,
    /// The file, as a path a user can open.
    pub file: String,
    /// Where in `rubric.yaml`, as a key path (`dimensions[2].rules[0].for_each`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// The 1-based line, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The 1-based column, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        if !self.path.is_empty() {
            write!(f, ": `{}`", self.path)?;
        }
        write!(f, ": {} [{}]", self.message, self.code)
    }
}

impl Problem {
    /// A problem of `code` (whose severity it takes) in `file` at the key path `path`; its
    /// line and column are found later, from the path and what the code points at.
    pub(crate) fn new(
        code: codes::Code,
        file: impl Into<String>,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Problem {
        Problem {
            severity: code.info().severity,
            code,
            file: file.into(),
            path: path.into(),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// The problem at a known line and column.
    pub(crate) fn at(mut self, line: Option<usize>, column: Option<usize>) -> Problem {
        self.line = line;
        self.column = column;
        self
    }
}

/// The largest pack file read: packs are text a person writes.
pub(crate) const MAX_PACK_FILE: u64 = 16 << 20;

/// Why a pack could not be found, read or compiled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PackError {
    /// No pack has this id, and it is not a folder.
    #[error("unknown rubric `{spec}` (shipped: {shipped}; or give the path of a pack folder)")]
    Unknown {
        /// The id or path asked for.
        spec: String,
        /// The ids of the built-in packs, as a phrase.
        shipped: String,
    },
    /// The folder has no `rubric.yaml`.
    #[error("`{}` has no `rubric.yaml`, so it is not a rubric pack [E005]", dir.display())]
    NoManifest {
        /// The folder.
        dir: PathBuf,
    },
    /// A pack file could not be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// A file of the pack is a link to outside the pack folder.
    #[error("`{}` leads out of the pack folder (to `{}`): a pack reads only its own files", path.display(), target.display())]
    OutsidePack {
        /// The link.
        path: PathBuf,
        /// Where it leads.
        target: PathBuf,
    },
    /// A pack file is larger than 16 MiB: packs are text a person writes.
    #[error("`{}` is larger than {} MiB, too large for a pack file", path.display(), MAX_PACK_FILE >> 20)]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// The pack has errors (every one found).
    #[error("rubric pack {origin} is invalid ({} problem{}): {}", problems.len(), if problems.len() == 1 { "" } else { "s" }, problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid {
        /// The pack.
        origin: PackOrigin,
        /// The errors, each with its place.
        problems: Vec<Problem>,
    },
    /// A declared plugin cannot be used; one line per problem, each naming the pack file and
    /// the line that declares the plugin.
    #[error("{}", problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Plugin {
        /// The problems, each naming the declaring line.
        problems: Vec<Problem>,
    },
}

impl PackError {
    /// The error's diagnostic code (`grade explain CODE` says what it means); `None` for an
    /// invalid pack, whose problems each carry their own.
    pub fn code(&self) -> Option<codes::Code> {
        match self {
            PackError::Unknown { .. } => Some(codes::Code::UnknownRubric),
            PackError::NoManifest { .. } => Some(codes::Code::NoManifest),
            PackError::Io { .. } => Some(codes::Code::PackUnreadable),
            PackError::OutsidePack { .. } | PackError::TooLarge { .. } => {
                Some(codes::Code::PackFileRefused)
            }
            PackError::Invalid { .. } | PackError::Plugin { .. } => None,
        }
    }
}

/// A pack ready to grade: references resolved, templates parsed, scripts compiled.
pub struct CompiledPack {
    /// The pack's id (`cleo-v1`).
    pub id: String,
    /// The pack's version.
    pub version: String,
    /// The pack's human name.
    pub name: String,
    /// What the pack grades, in a sentence or two.
    pub description: String,
    /// `sha256:` and the digest of the pack's files and plugins; results carry it.
    pub digest: String,
    /// Where the pack was found.
    pub origin: PackOrigin,
    /// The letter bands, highest first.
    pub bands: Vec<Band>,
    /// The flag a session without entries gets.
    pub empty_flag: String,
    /// Every selector the pack uses: the named ones first, in declaration order.
    pub(crate) selectors: Vec<Selector>,
    /// The selectors written in place (not named), by id, with the key path where: what an
    /// error about one names.
    pub(crate) inline_selectors: Vec<(usize, String)>,
    /// The selectors written in place under `entry`, `followed_by` or `preceded_by`, in
    /// ascending order: their tests count only at the entries those conditions look at, so
    /// a test there that cannot decide an entry no condition reads fails no session.
    pub(crate) window_selectors: Vec<usize>,
    /// The selector ids with every referenced selector before those that refer to it: the
    /// order each entry is matched in, the same for every session.
    pub(crate) selector_order: Vec<usize>,
    pub(crate) metrics: Vec<Metric>,
    /// The names of the named metrics, in declaration order.
    pub metric_names: Vec<String>,
    /// Name → id of the named selectors and metrics, built once for scripts to look up.
    pub(crate) selector_index: std::sync::Arc<std::collections::HashMap<String, usize>>,
    pub(crate) metric_index: std::sync::Arc<std::collections::HashMap<String, usize>>,
    pub(crate) vocabulary: Vocabulary,
    pub(crate) decided: Option<decided::DecidedSelectors>,
    /// The dimensions, in declaration order.
    pub dimensions: Vec<Dimension>,
    /// How the dimensions add up to the total.
    pub scoring: Scoring,
    /// The id and description of a weighted pack's total (`overall_quality`).
    pub aggregate: Option<(String, String)>,
    /// How a judge is asked, when the pack has judged dimensions.
    pub judge: Option<Judge>,
    pub(crate) scripts: Option<ScriptHost>,
    /// The plugins the pack loaded, in declaration order.
    pub plugins: Vec<std::sync::Arc<crate::native::Plugin>>,
    /// The source formats the pack grades (`sources` in `rubric.yaml`), by the names
    /// `--source-format` takes; `None` when it grades any source. See
    /// [`CompiledPack::grading`].
    pub sources: Option<Vec<String>>,
    /// Every score of the pack is a whole number: scripts must give whole points.
    pub(crate) whole_scores: bool,
}

/// How a pack totals its dimensions (`scoring` in `rubric.yaml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scoring {
    /// The total is the sum of the dimension scores.
    #[default]
    Points,
    /// The total is Σ weight × normalised score, each dimension normalised to 0–1.
    Weighted,
}

/// A step applied to a metric's key before keys are compared (`normalize` in `rubric.yaml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Normalize {
    Lowercase,
    Trim,
    CollapseWhitespace,
}

/// A letter grade and the percentage it needs.
#[derive(Debug, Clone)]
pub struct Band {
    /// The letter (`A`).
    pub grade: String,
    /// The lowest percentage that earns it.
    pub min_percent: f64,
}

#[derive(Debug, Clone)]
pub(crate) enum Selector {
    Domain(Names),
    Operation(Names),
    Success(bool),
    ExitCode(Codes),
    Equals(Field, serde_json::Value),
    OneOf(Field, Vec<serde_json::Value>),
    Truthy(Field, bool),
    Blank(Field, bool),
    Present(Field, bool),
    Contains(Field, String),
    Type(Field, crate::field::JsonType),
    Ref(usize),
    All(Vec<Selector>),
    Any(Vec<Selector>),
    Not(Box<Selector>),
}

/// The domain or operation names a selector accepts, and their ids in the pack's
/// [`Vocabulary`], which is what evaluation compares.
#[derive(Debug, Clone)]
pub(crate) struct Names {
    pub names: Vec<String>,
    pub ids: Vec<u32>,
}

impl std::ops::Deref for Names {
    type Target = Vec<String>;
    fn deref(&self) -> &Vec<String> {
        &self.names
    }
}

/// The exit codes a selector accepts, and their ids in the pack's [`Vocabulary`].
#[derive(Debug, Clone)]
pub(crate) struct Codes {
    pub codes: Vec<i64>,
    pub ids: Vec<u32>,
}

impl std::ops::Deref for Codes {
    type Target = Vec<i64>;
    fn deref(&self) -> &Vec<i64> {
        &self.codes
    }
}

/// Every domain name, operation name and exit code the pack's selectors mention, numbered.
/// An entry's are looked up once, so each selector compares small integers instead of
/// strings (a selector pass compares each entry with every selector).
#[derive(Debug, Clone, Default)]
pub(crate) struct Vocabulary {
    domains: rustc_hash::FxHashMap<String, u32>,
    operations: rustc_hash::FxHashMap<String, u32>,
    exit_codes: rustc_hash::FxHashMap<i64, u32>,
}

/// The ids of an entry's domain, operation and exit code; a value no selector mentions has
/// the id one past the last (the number of values of its kind).
#[derive(Debug, Clone, Copy)]
pub(crate) struct EntryKeys {
    pub domain: u32,
    pub operation: u32,
    pub exit_code: u32,
}

impl Vocabulary {
    /// The domains and operations selectors name, each sorted.
    pub(crate) fn names(&self) -> (Vec<String>, Vec<String>) {
        let sorted = |map: &rustc_hash::FxHashMap<String, u32>| {
            let mut names: Vec<String> = map.keys().cloned().collect();
            names.sort();
            names
        };
        (sorted(&self.domains), sorted(&self.operations))
    }

    pub(crate) fn domains(&mut self, names: &[String]) -> Names {
        Names {
            names: names.to_vec(),
            ids: Self::intern(&mut self.domains, names),
        }
    }

    pub(crate) fn operations(&mut self, names: &[String]) -> Names {
        Names {
            names: names.to_vec(),
            ids: Self::intern(&mut self.operations, names),
        }
    }

    pub(crate) fn exit_codes(&mut self, codes: &[i64]) -> Codes {
        Codes {
            codes: codes.to_vec(),
            ids: Self::intern(&mut self.exit_codes, codes),
        }
    }

    fn intern<K: Clone + Eq + std::hash::Hash>(
        table: &mut rustc_hash::FxHashMap<K, u32>,
        values: &[K],
    ) -> Vec<u32> {
        values
            .iter()
            .map(|v| {
                let next = table.len() as u32;
                *table.entry(v.clone()).or_insert(next)
            })
            .collect()
    }

    /// How many domains, operations and exit codes the selectors mention.
    pub(crate) fn sizes(&self) -> (usize, usize, usize) {
        (
            self.domains.len(),
            self.operations.len(),
            self.exit_codes.len(),
        )
    }

    pub(crate) fn keys(&self, e: &crate::entry::Entry) -> EntryKeys {
        fn id<
            K: Eq + std::hash::Hash + std::borrow::Borrow<Q>,
            Q: Eq + std::hash::Hash + ?Sized,
        >(
            map: &rustc_hash::FxHashMap<K, u32>,
            key: &Q,
        ) -> u32 {
            map.get(key).copied().unwrap_or(map.len() as u32)
        }
        EntryKeys {
            domain: id(&self.domains, e.domain.as_str()),
            operation: id(&self.operations, e.operation.as_str()),
            exit_code: id(&self.exit_codes, &e.result.exit_code),
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) enum Metric {
    Ratio {
        of: usize,
        over: usize,
    },
    Duplicates {
        of: usize,
        key: Field,
        normalize: Vec<Normalize>,
    },
    Distinct {
        of: usize,
        key: Field,
        normalize: Vec<Normalize>,
    },
    Native(crate::native::NativeRef),
    /// Compared with the session's reference trajectory; undefined without one.
    Trajectory(Box<trajectory::TrajectoryMetric>),
}

#[derive(Debug, Clone)]
pub(crate) enum Points {
    Fixed(f64),
    Scaled { metric: usize, times: f64 },
}

#[derive(Debug, Clone)]
pub(crate) struct Case {
    /// Where the case is written (`…rules[1].cases[0]`, the rule itself, or `…otherwise`).
    pub path: String,
    pub when: Condition,
    pub points: Option<Points>,
    pub evidence: Option<Template>,
    pub flag: Option<Template>,
}

/// How a dimension is scored.
#[derive(Debug, Clone, PartialEq)]
pub enum DimensionKind {
    /// By the pack's rules.
    Points,
    /// By a judge: a number within `min..=max`.
    Numeric {
        /// The lowest score a judge may give.
        min: f64,
    },
    /// By a judge: one of these categories (label, value).
    Categorical {
        /// Each category's label and value.
        categories: Vec<(String, f64)>,
    },
}

impl DimensionKind {
    /// Whether a judge scores the dimension.
    pub fn is_judged(&self) -> bool {
        !matches!(self, DimensionKind::Points)
    }
}

/// How a judge is asked for a pack's judged dimensions.
#[derive(Debug, Clone)]
pub struct Judge {
    /// The prompt template's file in the pack.
    pub prompt_file: String,
    /// The prompt template.
    pub template: String,
    /// The most tokens of a session a prompt may hold in all.
    pub budget_tokens: u64,
    /// The most tokens of a session per chunk.
    pub chunk_tokens: u64,
    /// The sampling temperature for a built-in judge; the model's default when `None`.
    pub temperature: Option<f64>,
    /// The most tokens a built-in judge may write per reply.
    pub max_tokens: Option<u64>,
    /// How a panel of several judges (`--judge` given more than once) combines their scores
    /// of a dimension.
    pub panel: PanelCombine,
}

/// How a panel's scores of one judged dimension make the dimension's score: `panel:` in the
/// pack's `judge` block, or `--panel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PanelCombine {
    /// The mean of a numeric dimension's scores; a category has no mean, so a categorical
    /// dimension takes the median category.
    #[default]
    Mean,
    /// The median: for numbers the mean of the two middle scores when there is an even
    /// number of judges, for categories the lower of the two (a tie never rounds up).
    Median,
    /// The lowest score: the strictest judge decides.
    Min,
    /// The highest score: the most lenient judge decides.
    Max,
}

impl PanelCombine {
    /// The name written in a pack and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PanelCombine::Mean => "mean",
            PanelCombine::Median => "median",
            PanelCombine::Min => "min",
            PanelCombine::Max => "max",
        }
    }
}

/// A compiled dimension.
pub struct Dimension {
    /// Where the dimension is written in `rubric.yaml` (`dimensions[0]`).
    pub path: String,
    /// The dimension's id.
    pub id: String,
    /// How the dimension is scored.
    pub kind: DimensionKind,
    /// Share of the total in a weighted pack.
    pub weight: Option<f64>,
    /// The dimension's human name.
    pub name: String,
    /// What the dimension measures.
    pub description: String,
    /// The most the dimension can score.
    pub max: f64,
    /// The score before any rule.
    pub start: f64,
    /// The lowest score the rules can bring it to.
    pub floor: f64,
    /// The highest score the rules can bring it to.
    pub cap: f64,
    /// The dimension's rules, in order.
    pub rules: Vec<Rule>,
    /// When the dimension applies (`applies_when`) and what it says when it does not.
    pub(crate) applies: Option<Applies>,
    /// The trajectory metrics its rules read: without a reference trajectory for a session,
    /// the dimension does not apply to it.
    pub(crate) compares_with_reference: Vec<String>,
}

/// A dimension's `applies_when` and `not_applicable`.
pub(crate) struct Applies {
    pub when: Condition,
    pub otherwise: Option<Template>,
}

/// A compiled rule.
pub struct Rule {
    /// The rule's id.
    pub id: String,
    /// What the rule checks, as the pack says.
    pub doc: String,
    /// Where the rule is written in `rubric.yaml` (`dimensions[0].rules[2]`).
    pub path: String,
    pub(crate) kind: RuleKind,
}

pub(crate) enum RuleKind {
    Session(Vec<Case>),
    ForEach { selector: usize, cases: Vec<Case> },
    Script { index: usize },
    Native(crate::native::NativeRef),
}

impl CompiledPack {
    /// `registry`, refusing to read a source of a format this pack does not grade (its
    /// `sources`); unchanged for a pack that grades any source.
    pub fn grading(&self, registry: crate::source::Registry) -> crate::source::Registry {
        match &self.sources {
            Some(formats) => registry.graded_by(&self.id, formats),
            None => registry,
        }
    }

    /// The source formats the pack's plugins read, in declaration order.
    pub(crate) fn plugin_sources(&self) -> Vec<crate::native::PluginSource> {
        self.plugins
            .iter()
            .flat_map(|p| {
                (0..p.sources.len())
                    .filter_map(|i| crate::native::PluginSource::new(std::sync::Arc::clone(p), i))
            })
            .collect()
    }

    /// Whether scripts reuse the outcome of an earlier run for a session that gives them the
    /// same answers (on unless turned off). Grades are the same either way; off, every script
    /// runs for every session, which tests and measurements compare against.
    pub fn remember_script_outcomes(&mut self, on: bool) {
        if let Some(host) = self.scripts.as_mut() {
            host.set_memoize(on);
        }
    }

    /// The most a session can score: the sum of the dimensions' maxima, or of the weights
    /// in a weighted pack (1 when they sum to 1, as they should).
    pub fn max_score(&self) -> f64 {
        self.max_score_of(|_| true)
    }

    /// [`CompiledPack::max_score`] over the dimensions `counts` keeps: those that apply.
    pub(crate) fn max_score_of(&self, counts: impl Fn(&Dimension) -> bool) -> f64 {
        match self.scoring {
            Scoring::Points => self
                .dimensions
                .iter()
                .filter(|d| counts(d))
                .map(|d| d.max)
                .sum(),
            Scoring::Weighted => {
                let sum: f64 = self
                    .dimensions
                    .iter()
                    .filter(|d| counts(d))
                    .filter_map(|d| d.weight)
                    .sum();
                // 0.3 + 0.2 + … in binary is 0.9999999999999999; the author meant 1.
                if (sum - 1.0).abs() < 1e-9 {
                    1.0
                } else {
                    sum
                }
            }
        }
    }

    /// The dimensions a judge scores.
    pub fn judged_dimensions(&self) -> impl Iterator<Item = &Dimension> {
        self.dimensions.iter().filter(|d| d.kind.is_judged())
    }

    /// The letter for a percentage: the first band (highest first) whose minimum it reaches.
    pub fn band_for(&self, percent: f64) -> Option<&str> {
        band_of(&self.bands, percent)
    }
}

/// The letter of `bands` (highest first) for a percentage: the first whose minimum it reaches.
pub(crate) fn band_of(bands: &[Band], percent: f64) -> Option<&str> {
    bands
        .iter()
        .find(|b| percent >= b.min_percent)
        .map(|b| b.grade.as_str())
}
