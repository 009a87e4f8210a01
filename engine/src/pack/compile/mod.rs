//! Stage 2: from the YAML as written to a pack that can grade. Every problem is collected,
//! so an author sees all of them at once instead of fixing one per run.
//!
//! One file per node of the pack: [`judge`] (bands and the judge), [`selector`] (and the
//! cycle check), [`metric`], [`dimension`], [`rule`] (cases, outcomes, templates) and
//! [`script`] (script rules and the names they pass); conditions live with their kinds in
//! [`crate::pack::condition`]. This file holds the compiler's state, its problem helpers and
//! the order in which the nodes are compiled.

mod dimension;
mod judge;
mod metric;
mod rule;
mod script;
mod selector;

pub use judge::check_template;

use std::collections::HashSet;

use indexmap::IndexMap;

use super::codes::{Code, Target};
use super::locate::Places;
use super::raw::{Lenient, RawPack, Scoring};
use super::template::TemplateScope;
use super::{CompiledPack, Metric, PackError, PackFiles, Problem, Selector, Severity, Vocabulary};
use crate::native::{FunctionKind, PluginPolicy};
use crate::script::ScriptHost;

pub(crate) const MANIFEST: &str = "rubric.yaml";
const DEFAULT_EMPTY_FLAG: &str = "no audit entries found for session";

/// A pack that compiled, or every error found; with the warnings of the static checks.
pub struct Validation {
    /// The compiled pack, when there were no errors.
    pub pack: Option<CompiledPack>,
    /// Errors and warnings, each with its place.
    pub problems: Vec<Problem>,
    /// Whether a declared plugin could not be used (missing, refused, not loadable, lacking a
    /// function): an input error rather than a mistake in the pack's text.
    pub plugin_failed: bool,
}

/// Compiles a pack, failing with every error found. A pack with plugins is refused: see
/// [`compile_pack_with`].
pub fn compile_pack(files: &PackFiles) -> Result<CompiledPack, PackError> {
    compile_pack_with(files, PluginPolicy::default())
}

/// Compiles a pack, loading its plugins if `policy` allows it.
pub fn compile_pack_with(
    files: &PackFiles,
    policy: PluginPolicy,
) -> Result<CompiledPack, PackError> {
    let validation = validate(files, policy, None);
    match validation.pack {
        Some(pack) => Ok(pack),
        None => {
            let problems = validation
                .problems
                .into_iter()
                .filter(|p| p.severity == Severity::Error)
                .collect();
            Err(if validation.plugin_failed {
                PackError::Plugin { problems }
            } else {
                PackError::Invalid {
                    origin: files.origin.clone(),
                    problems,
                }
            })
        }
    }
}

/// What a dry run adds to a pack that compiled without errors: `validate` (above the
/// evaluator, since it grades) passes [`crate::validate::dry_run`]; loading a pack to grade
/// passes none.
pub(crate) type DryRun = fn(&mut CompiledPack, &PackFiles) -> Vec<Problem>;

/// Compiles a pack and runs the static checks, and the dry run if one is given.
pub(crate) fn validate(
    files: &PackFiles,
    policy: PluginPolicy,
    dry_run: Option<DryRun>,
) -> Validation {
    let manifest_path = files.display_path(MANIFEST);
    let failed = |problems| Validation {
        pack: None,
        problems,
        plugin_failed: false,
    };
    let Some(text) = files.files.get(MANIFEST) else {
        return failed(vec![Problem::new(
            Code::NoManifest,
            manifest_path,
            "",
            "the pack has no `rubric.yaml`",
        )]);
    };
    // Blank or only comments: "missing field `id`" would send its author after one key.
    let empty = text.lines().all(|l| {
        let l = l.trim_start_matches('\u{feff}').trim();
        l.is_empty() || l.starts_with('#') || l == "---" || l == "..."
    });
    if empty {
        return failed(vec![Problem::new(
            Code::EmptyManifest,
            manifest_path,
            "",
            "`rubric.yaml` is empty: a pack needs at least `id`, `version`, `name` and `dimensions` (`grade rubric new NAME` scaffolds one)",
        )]);
    }
    let (raw, top_level) = match RawPack::read(text) {
        Ok(read) => read,
        Err(err) => {
            let location = err.location();
            return failed(vec![Problem::new(
                Code::Yaml,
                manifest_path,
                "",
                yaml_message(&err),
            )
            .at(
                location.as_ref().map(|l| l.line()),
                location.as_ref().map(|l| l.column()),
            )]);
        }
    };
    let mut compiler = Compiler {
        files,
        manifest_path,
        problems: Vec::new(),
        selector_ids: IndexMap::new(),
        selectors: Vec::new(),
        inline_selectors: Vec::new(),
        window_selectors: Vec::new(),
        metric_ids: IndexMap::new(),
        vocabulary: Vocabulary::default(),
        scripts: None,
        policy,
        plugins: super::native::Plugins::default(),
        plugin_failed: false,
        fractional_points: Vec::new(),
        allowed: Vec::new(),
    };
    for (code, path, message) in top_level {
        compiler.problem(code, path, message);
    }
    let mut pack = compiler.pack(raw);
    let plugin_failed = compiler.plugin_failed;
    let allowed = compiler.allowed;
    let mut problems = compiler.problems;
    let pack = if problems.is_empty() {
        problems.extend(super::lint::lint(&pack, &files.display_path(MANIFEST)));
        if let Some(dry_run) = dry_run {
            problems.extend(dry_run(&mut pack, files));
        }
        // Only warnings reach here: `allow` takes no error code.
        problems.retain(|p| !allowed.contains(&p.code));
        // A script that fails on the dry run makes the pack invalid, not only reported.
        problems
            .iter()
            .all(|p| p.severity != Severity::Error)
            .then_some(pack)
    } else {
        None
    };
    let places = Places::read(text);
    let manifest = files.display_path(MANIFEST);
    for p in problems
        .iter_mut()
        .filter(|p| p.line.is_none() && p.file == manifest)
    {
        let key = p.code.info().target == Target::Key;
        if let Some(place) = places.find(&p.path, key) {
            p.line = Some(place.line);
            p.column = Some(place.column);
        }
    }
    Validation {
        pack,
        problems,
        plugin_failed,
    }
}

/// serde_yaml's message without the location it also reports separately.
fn yaml_message(err: &serde_yaml::Error) -> String {
    let text = err.to_string();
    // Only a trailing "at line N column M" repeats the location; one inside the message
    // ("while scanning a quoted scalar at line 7 column 28") is part of what went wrong.
    let trimmed = match (err.location(), text.rfind(" at line ")) {
        (Some(location), Some(cut))
            if text[cut..]
                == format!(" at line {} column {}", location.line(), location.column()) =>
        {
            &text[..cut]
        }
        _ => text.as_str(),
    };
    let message = crate::entry::lowercase_first(trimmed);
    // These are what a line indented too far or not far enough produces; the line reported
    // is where the parser noticed, often the one after the mistake.
    const INDENTATION: [&str; 5] = [
        "did not find expected key",
        "mapping values are not allowed in this context",
        "did not find expected '-' indicator",
        "block sequence entries are not allowed in this context",
        "could not find expected ':'",
    ];
    if INDENTATION.iter().any(|m| message.contains(m)) {
        format!("{message} (check the indentation of this line and the line above)")
    } else {
        message
    }
}

/// The state of one compilation: the names declared so far and every problem found.
pub(crate) struct Compiler<'f> {
    files: &'f PackFiles,
    manifest_path: String,
    problems: Vec<Problem>,
    selector_ids: IndexMap<String, usize>,
    /// Compiled selectors by id; `None` until compiled (or when compiling failed).
    selectors: Vec<Option<Selector>>,
    /// The selectors written in place, by id, with where.
    inline_selectors: Vec<(usize, String)>,
    /// The selectors written in place under `entry`, `followed_by` or `preceded_by`.
    pub(in crate::pack) window_selectors: Vec<usize>,
    metric_ids: IndexMap<String, usize>,
    vocabulary: Vocabulary,
    scripts: Option<ScriptHost>,
    policy: PluginPolicy,
    plugins: super::native::Plugins,
    plugin_failed: bool,
    /// Fixed points that are not whole numbers, with their places: refused once the pack
    /// turns out to score in whole numbers.
    fractional_points: Vec<(String, f64)>,
    /// The warnings the pack's `allow` silences.
    allowed: Vec<Code>,
}

impl Compiler<'_> {
    /// A problem with a declared plugin: reported at its declaration, and an input error.
    fn plugin_problem(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.plugin_failed = true;
        self.problem(Code::Plugin, path, message);
    }

    /// Loads the declared plugins before anything can refer to them.
    fn declare_plugins(&mut self, raw: &RawPack) {
        let mut declared = Vec::new();
        for (i, item) in raw.plugins.iter().enumerate() {
            let path = format!("plugins[{i}]");
            if let Some(plugin) = self.lenient(item, &path) {
                declared.push((path, plugin));
            }
        }
        let (plugins, problems) =
            super::native::Plugins::declare(&declared, &self.files.origin, self.policy);
        self.plugins = plugins;
        for (code, path, message, is_plugin) in problems {
            if is_plugin {
                self.plugin_problem(path, message);
            } else {
                self.problem(code, path, message);
            }
        }
    }

    /// Resolves `native: plugin.function` at `path` for a use that needs `want`.
    pub(in crate::pack) fn native(
        &mut self,
        reference: &str,
        want: FunctionKind,
        path: &str,
    ) -> Option<crate::native::NativeRef> {
        match self.plugins.resolve(reference, want) {
            Ok(found) => Some(found),
            Err(super::native::NativeProblem::AtUse(message)) => {
                self.problem(Code::Plugin, path, message);
                None
            }
            Err(super::native::NativeProblem::AtDeclaration { path: at, message }) => {
                self.plugin_problem(at, format!("{message} at `{path}`"));
                None
            }
            Err(super::native::NativeProblem::AlreadyReported) => None,
        }
    }

    /// An error of `code` at the key path `path` of `rubric.yaml`.
    pub(in crate::pack) fn problem(
        &mut self,
        code: Code,
        path: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.problems.push(Problem::new(
            code,
            self.manifest_path.clone(),
            path,
            message,
        ));
    }

    /// Reads `allow`: warning codes only, each known.
    fn allow(&mut self, codes: &[String]) {
        for (i, text) in codes.iter().enumerate() {
            let path = format!("allow[{i}]");
            match Code::parse(text) {
                Some(code) if code.info().severity == Severity::Warning => self.allowed.push(code),
                Some(code) => self.problem(
                    Code::AllowCode,
                    path,
                    format!(
                        "`{}` ({}) is an error, and only warnings can be allowed",
                        code.info().id,
                        code.info().name
                    ),
                ),
                None => {
                    let close: Vec<String> =
                        Code::close_to_where(text, |c| c.info().severity == Severity::Warning)
                            .iter()
                            .map(|c| format!("`{}` ({})", c.info().id, c.info().name))
                            .collect();
                    let hint = if close.is_empty() {
                        "`grade explain` lists the codes".to_owned()
                    } else {
                        format!("did you mean {}?", close.join(", "))
                    };
                    self.problem(
                        Code::AllowCode,
                        path,
                        format!("unknown code `{text}`: {hint}"),
                    );
                }
            }
        }
    }

    /// The id of the metric named `name`, if the pack declares it.
    pub(in crate::pack) fn metric_id(&self, name: &str) -> Option<usize> {
        self.metric_ids.get(name).copied()
    }

    /// The item, or `None` after reporting why it did not deserialize.
    pub(in crate::pack) fn lenient<'r, T>(
        &mut self,
        item: &'r Lenient<T>,
        path: &str,
    ) -> Option<&'r T> {
        match item {
            Lenient::Ok(item) => Some(item),
            Lenient::Err {
                code,
                path: inner,
                message,
            } => {
                let full = if inner.is_empty() {
                    path.to_owned()
                } else if inner.starts_with('[') {
                    format!("{path}{inner}")
                } else {
                    format!("{path}.{inner}")
                };
                self.problem(*code, full, message.clone());
                None
            }
        }
    }

    /// Reads `sources`: format names the engine or one of the pack's plugins reads, each
    /// once, at least one. `None` (any format) when the key is left out.
    fn sources(&mut self, sources: Option<&[String]>) -> Option<Vec<String>> {
        let sources = sources?;
        if sources.is_empty() {
            self.problem(
                Code::SourceFormat,
                "sources",
                "`sources` lists no format: leave it out for a pack that grades any source",
            );
        }
        let plugin_formats: Vec<String> = self
            .plugins
            .loaded()
            .iter()
            .flat_map(|p| p.sources.iter().map(|s| s.name.clone()))
            .collect();
        let known: Vec<&str> = crate::source::Registry::builtin()
            .names()
            .chain(plugin_formats.iter().map(String::as_str))
            .collect();
        for (i, name) in sources.iter().enumerate() {
            let path = format!("sources[{i}]");
            if sources[..i].contains(name) {
                self.problem(
                    Code::SourceFormat,
                    path,
                    format!("source format `{name}` is listed twice"),
                );
            } else if !known.contains(&name.as_str()) && !self.plugin_failed {
                let close: Vec<String> = known
                    .iter()
                    .filter(|k| super::codes::distance(name, k) <= 2.max(name.len() / 3))
                    .map(|k| format!("`{k}`"))
                    .collect();
                let hint = if close.is_empty() {
                    let all: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                    format!("the formats are {}", all.join(", "))
                } else {
                    format!("did you mean {}?", close.join(", "))
                };
                self.problem(
                    Code::SourceFormat,
                    path,
                    format!("unknown source format `{name}`: {hint}"),
                );
            }
        }
        Some(sources.to_vec())
    }

    fn pack(&mut self, raw: RawPack) -> CompiledPack {
        self.declare_plugins(&raw);
        self.allow(raw.allow.as_deref().unwrap_or_default());
        let sources = self.sources(raw.sources.as_deref());
        if raw.id.trim().is_empty() {
            self.problem(Code::EmptyId, "id", "the pack id is empty");
        }
        if raw.version.trim().is_empty() {
            self.problem(Code::EmptyId, "version", "the pack version is empty");
        }
        let bands = self.bands(&raw);

        // Names first, so selectors and metrics may refer to ones declared later.
        for name in raw.selectors.keys() {
            let id = self.selectors.len();
            self.selectors.push(None);
            self.selector_ids.insert(name.clone(), id);
        }
        for (i, (name, selector)) in raw.selectors.iter().enumerate() {
            let path = format!("selectors.{name}");
            if let Some(selector) = self.lenient(selector, &path) {
                self.selectors[i] = self.selector(selector, &path);
            }
        }
        self.check_selector_cycles();

        for name in raw.metrics.keys() {
            let id = self.metric_ids.len();
            self.metric_ids.insert(name.clone(), id);
        }
        let metrics: Vec<Metric> = raw
            .metrics
            .iter()
            .filter_map(|(name, metric)| {
                let path = format!("metrics.{name}");
                let metric = self.lenient(metric, &path)?;
                self.metric(metric, &path)
            })
            .collect();

        if raw.dimensions.is_empty() {
            self.problem(
                Code::DimensionShape,
                "dimensions",
                "a pack needs at least one dimension",
            );
        }
        let mut dimension_ids = HashSet::new();
        let mut rule_ids = HashSet::new();
        let mut dimensions = Vec::new();
        for (d, dimension) in raw.dimensions.iter().enumerate() {
            let path = format!("dimensions[{d}]");
            let Some(dimension) = self.lenient(dimension, &path) else {
                continue;
            };
            if !dimension_ids.insert(dimension.id.clone()) {
                self.problem(
                    Code::DuplicateId,
                    format!("{path}.id"),
                    format!("dimension id `{}` is used twice", dimension.id),
                );
            }
            dimensions.push(self.dimension(dimension, &path, raw.scoring, &mut rule_ids));
        }

        let names: Vec<String> = self.metric_ids.keys().cloned().collect();
        for dimension in &mut dimensions {
            let mut read: Vec<usize> = dimension
                .rules
                .iter()
                .flat_map(super::trajectory::metrics_read)
                .collect();
            read.sort_unstable();
            read.dedup();
            dimension.compares_with_reference =
                super::trajectory::trajectory_names(&metrics, &names, &read);
        }
        let whole = dimension::whole_scores(raw.scoring, &dimensions);
        if whole {
            for (path, points) in std::mem::take(&mut self.fractional_points) {
                self.problem(
                    Code::FractionalPoints,path,
                    format!(
                        "points {} are not a whole number, and every score of this pack is (its dimensions' `max`, `start`, `floor` and `cap`)",
                        crate::entry::js_number(points)
                    ),
                );
            }
        }
        let judge = self.judge(&raw, &dimensions);
        let script_seconds = self.script_seconds(&raw);
        let aggregate = match (&raw.aggregate, raw.scoring) {
            (Some(a), Scoring::Weighted) => {
                Some((a.id.clone(), a.description.clone().unwrap_or_default()))
            }
            (Some(_), Scoring::Points) => {
                self.problem(
                    Code::Weight,
                    "aggregate",
                    "`aggregate` names the weighted total, so it needs `scoring: weighted`",
                );
                None
            }
            (None, _) => None,
        };
        let empty_flag = raw
            .empty_session
            .map(|e| e.flag)
            .unwrap_or_else(|| DEFAULT_EMPTY_FLAG.to_owned());
        let selectors: Vec<Selector> = self
            .selectors
            .iter()
            .map(|s| s.clone().unwrap_or(Selector::All(Vec::new())))
            .collect();
        let decided = super::decided::DecidedSelectors::build(&selectors, &self.vocabulary);
        let plugins = self.plugins.loaded();
        let selector_order = selector::evaluation_order(&selectors);
        CompiledPack {
            id: raw.id,
            version: raw.version,
            name: raw.name,
            description: raw.description,
            digest: self.files.digest_with_plugins(&plugins),
            plugins,
            sources,
            origin: self.files.origin.clone(),
            bands,
            empty_flag,
            selectors,
            inline_selectors: std::mem::take(&mut self.inline_selectors),
            window_selectors: std::mem::take(&mut self.window_selectors),
            selector_order,
            metrics,
            metric_names: self.metric_ids.keys().cloned().collect(),
            selector_index: std::sync::Arc::new(
                self.selector_ids
                    .iter()
                    .map(|(k, v)| (k.clone(), *v))
                    .collect(),
            ),
            metric_index: std::sync::Arc::new(
                self.metric_ids
                    .iter()
                    .map(|(k, v)| (k.clone(), *v))
                    .collect(),
            ),
            vocabulary: std::mem::take(&mut self.vocabulary),
            decided,
            dimensions,
            scoring: raw.scoring,
            aggregate,
            judge,
            scripts: self.scripts.take().map(|mut host| {
                host.set_time_limit(script_seconds);
                host
            }),
            whole_scores: whole,
        }
    }
}

impl Compiler<'_> {
    /// The fixed part of the processor time a script run may take: the pack's
    /// `limits.script_seconds`, within (0, [`crate::script::MAX_PACK_SECONDS`]].
    fn script_seconds(&mut self, raw: &RawPack) -> f64 {
        let default = crate::script::MAX_SECONDS;
        let Some(seconds) = raw.limits.as_ref().and_then(|l| l.script_seconds) else {
            return default;
        };
        if seconds > 0.0 && seconds <= crate::script::MAX_PACK_SECONDS {
            return seconds;
        }
        self.problem(
            Code::Limits,
            "limits.script_seconds",
            format!(
                "`script_seconds` must be more than 0 and at most {}, not {}",
                crate::entry::js_number(crate::script::MAX_PACK_SECONDS),
                crate::entry::js_number(seconds)
            ),
        );
        default
    }
}

/// Resolves template placeholders against the compiler's names.
struct Scope<'c, 'f> {
    compiler: &'c mut Compiler<'f>,
    has_entry: bool,
}

impl TemplateScope for Scope<'_, '_> {
    fn selector(&mut self, name: &str) -> Option<usize> {
        self.compiler.selector_ids.get(name).copied()
    }
    fn metric(&self, name: &str) -> Option<usize> {
        self.compiler.metric_ids.get(name).copied()
    }
    fn has_entry(&self) -> bool {
        self.has_entry
    }
}

#[cfg(test)]
mod tests {
    use crate::pack::codes::Code;
    use crate::pack::testing::{files, problems};

    /// A rule whose case after a catch-all never applies (W104), in a dimension whose max
    /// it cannot reach (W107).
    const SUSPICIOUS: &str =
        "      - id: r\n        doc: d\n        cases:\n          - { points: 1 }\n          - { points: 2 }\n";

    fn codes(rules: &str) -> Vec<Code> {
        problems(rules).into_iter().map(|p| p.code).collect()
    }

    #[test]
    fn allow_silences_warnings_by_code() {
        assert_eq!(
            codes(SUSPICIOUS),
            [Code::UnreachableCase, Code::NeverReachesMax]
        );
        let allowed = format!("{}allow: [W104]\n", files(SUSPICIOUS).files["rubric.yaml"]);
        assert_eq!(codes(&allowed), [Code::NeverReachesMax]);
    }

    #[test]
    fn allow_refuses_errors_and_unknown_codes() {
        let manifest = format!(
            "{}allow: [E012, W130, nonsense]\n",
            files(SUSPICIOUS).files["rubric.yaml"]
        );
        let found: Vec<(Code, String, String)> = problems(&manifest)
            .into_iter()
            .map(|p| (p.code, p.path, p.message))
            .collect();
        assert_eq!(
            found,
            [
                (
                    Code::AllowCode,
                    "allow[0]".to_owned(),
                    "`E012` (unknown-selector) is an error, and only warnings can be allowed"
                        .to_owned()
                ),
                (
                    Code::AllowCode,
                    "allow[1]".to_owned(),
                    "unknown code `W130`: did you mean `W101` (weights-sum), `W102` (for-each-never-fires), `W103` (no-outcome), `W104` (unreachable-case), `W105` (case-never-applies)?".to_owned()
                ),
                (
                    Code::AllowCode,
                    "allow[2]".to_owned(),
                    "unknown code `nonsense`: `grade explain` lists the codes".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn sources_must_name_known_formats_each_once() {
        let manifest = format!(
            "{}sources: [cleo-jsonl, claude-cod, cleo-jsonl, events]\n",
            files(SUSPICIOUS).files["rubric.yaml"]
        );
        let found: Vec<(Code, String, String)> = problems(&manifest)
            .into_iter()
            .filter(|p| p.code == Code::SourceFormat)
            .map(|p| (p.code, p.path, p.message))
            .collect();
        assert_eq!(
            found,
            [
                (
                    Code::SourceFormat,
                    "sources[1]".to_owned(),
                    "unknown source format `claude-cod`: did you mean `claude-code`?".to_owned()
                ),
                (
                    Code::SourceFormat,
                    "sources[2]".to_owned(),
                    "source format `cleo-jsonl` is listed twice".to_owned()
                ),
                (
                    Code::SourceFormat,
                    "sources[3]".to_owned(),
                    format!(
                        "unknown source format `events`: the formats are {}",
                        crate::source::Registry::builtin()
                            .names()
                            .map(|name| format!("`{name}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                ),
            ]
        );
        let empty = format!("{}sources: []\n", files(SUSPICIOUS).files["rubric.yaml"]);
        let found: Vec<String> = problems(&empty)
            .into_iter()
            .filter(|p| p.code == Code::SourceFormat)
            .map(|p| p.message)
            .collect();
        assert_eq!(
            found,
            ["`sources` lists no format: leave it out for a pack that grades any source"]
        );
    }

    #[test]
    fn a_pack_without_sources_grades_any_format_and_one_with_them_only_those() {
        let manifest = files(SUSPICIOUS).files["rubric.yaml"].clone();
        assert_eq!(crate::pack::testing::pack(&manifest).sources, None);
        let listed = format!("{manifest}sources: [cleo-db, cleo-jsonl]\n");
        assert_eq!(
            crate::pack::testing::pack(&listed).sources,
            Some(vec!["cleo-db".to_owned(), "cleo-jsonl".to_owned()])
        );
    }

    /// The place of a problem is its key or its value as its code says, not as its words do.
    #[test]
    fn a_problem_points_at_the_key_or_the_value_its_code_names() {
        let rules = "      - id: r\n        doc: d\n        when: { count: nope }\n        points: 1\n      - id: r\n        doc: d\n        points: 1\n";
        let found: Vec<(Code, Option<usize>, Option<usize>)> = problems(rules)
            .into_iter()
            .map(|p| (p.code, p.line, p.column))
            .collect();
        // `count: nope` is on line 17: the value; the second `id: r` on line 19: the key.
        assert_eq!(
            found,
            [
                (Code::UnknownSelector, Some(17), Some(24)),
                (Code::DuplicateId, Some(19), Some(9)),
            ]
        );
    }

    #[test]
    fn every_problem_of_the_yaml_stage_has_its_code() {
        let found = problems("id: t\nversion: '1'\nname: T\nbogus: 1\nscoring: .inf\ndimensions: [ { id: d, max: 1, rules: [ { id: r, doc: d, points: x } ] } ]\n");
        let codes: Vec<Code> = found.iter().map(|p| p.code).collect();
        assert_eq!(
            codes,
            [
                Code::NotFinite,
                Code::UnknownKey,
                Code::WrongType,
                Code::WrongType
            ],
            "{found:#?}"
        );
        let broken = problems("id: [\n");
        assert_eq!(broken[0].code, Code::Yaml);
    }
}
