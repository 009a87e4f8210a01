//! Stage 2: from the YAML as written to a pack that can grade. Every problem is collected,
//! so an author sees all of them at once instead of fixing one per run.

use std::collections::HashSet;

use indexmap::IndexMap;

use super::field::Field;
use super::locate::Places;
use super::raw::{
    DimensionType, Lenient, RawCase, RawCondition, RawDimension, RawMetric, RawOutcome, RawPack,
    RawPoints, RawRule, RawSelector, Scoring, SelectorRef,
};
use super::template::{Template, TemplateScope};
use super::{
    Applies, Band, Case, CompiledPack, Condition, Dimension, DimensionKind, Judge, Metric,
    PackError, PackFiles, Points, Problem, Rule, RuleKind, Selector, Severity, Vocabulary,
};
use crate::plugin::{FunctionKind, PluginPolicy};
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
    let validation = validate(files, policy, false);
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

/// Compiles a pack and runs the static checks: everything `grade rubric validate` reports.
pub fn validate_pack(files: &PackFiles) -> Validation {
    validate_pack_with(files, PluginPolicy::default())
}

/// [`validate_pack`], loading the pack's plugins if `policy` allows it. Every script also
/// grades a made-up session once, as `grade rubric validate` reports; loading a pack to
/// grade does not.
pub fn validate_pack_with(files: &PackFiles, policy: PluginPolicy) -> Validation {
    validate(files, policy, true)
}

fn validate(files: &PackFiles, policy: PluginPolicy, dry_run: bool) -> Validation {
    let manifest_path = files.display_path(MANIFEST);
    let failed = |problems| Validation {
        pack: None,
        problems,
        plugin_failed: false,
    };
    let Some(text) = files.files.get(MANIFEST) else {
        return failed(vec![Problem {
            severity: Severity::Error,
            file: manifest_path,
            path: String::new(),
            line: None,
            column: None,
            message: "the pack has no `rubric.yaml`".to_owned(),
        }]);
    };
    let (raw, top_level) = match RawPack::read(text) {
        Ok(read) => read,
        Err(err) => {
            let location = err.location();
            return failed(vec![Problem {
                severity: Severity::Error,
                file: manifest_path,
                path: String::new(),
                line: location.as_ref().map(|l| l.line()),
                column: location.as_ref().map(|l| l.column()),
                message: yaml_message(&err),
            }]);
        }
    };
    let mut compiler = Compiler {
        files,
        manifest_path,
        problems: Vec::new(),
        selector_ids: IndexMap::new(),
        selectors: Vec::new(),
        metric_ids: IndexMap::new(),
        vocabulary: Vocabulary::default(),
        scripts: None,
        policy,
        plugins: super::native::Plugins::default(),
        plugin_failed: false,
        fractional_points: Vec::new(),
    };
    for (path, message) in top_level {
        compiler.problem(path, message);
    }
    let pack = compiler.pack(raw);
    let plugin_failed = compiler.plugin_failed;
    let mut problems = compiler.problems;
    let pack = if problems.is_empty() {
        problems.extend(super::lint::lint(&pack, &files.display_path(MANIFEST)));
        if dry_run {
            problems.extend(super::dry_run::dry_run(&pack, files));
        }
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
        let prefer_key = p.message.starts_with("unknown field") || p.message.contains("used twice");
        if let Some(place) = places.find(&p.path, prefer_key) {
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

struct Compiler<'f> {
    files: &'f PackFiles,
    manifest_path: String,
    problems: Vec<Problem>,
    selector_ids: IndexMap<String, usize>,
    /// Compiled selectors by id; `None` until compiled (or when compiling failed).
    selectors: Vec<Option<Selector>>,
    metric_ids: IndexMap<String, usize>,
    vocabulary: Vocabulary,
    scripts: Option<ScriptHost>,
    policy: PluginPolicy,
    plugins: super::native::Plugins,
    plugin_failed: bool,
    /// Fixed points that are not whole numbers, with their places: refused once the pack
    /// turns out to score in whole numbers.
    fractional_points: Vec<(String, f64)>,
}

/// Whether a pack scores in whole numbers: a points pack whose dimensions all have whole
/// `max`, `start`, `floor` and `cap` (CLEO's packs, claude-code-v1). Its rules must then give
/// whole points, or a score would come out as a fraction nobody wrote.
fn whole_scores(scoring: Scoring, dimensions: &[Dimension]) -> bool {
    scoring == Scoring::Points
        && dimensions.iter().all(|d| {
            [d.max, d.start, d.floor, d.cap]
                .iter()
                .all(|v| v.fract() == 0.0)
        })
}

impl Compiler<'_> {
    /// A problem with a declared plugin: reported at its declaration, and an input error.
    fn plugin_problem(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.plugin_failed = true;
        self.problem(path, message);
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
        for (path, message, is_plugin) in problems {
            if is_plugin {
                self.plugin_problem(path, message);
            } else {
                self.problem(path, message);
            }
        }
    }

    /// Resolves `native: plugin.function` at `path` for a use that needs `want`.
    fn native(
        &mut self,
        reference: &str,
        want: FunctionKind,
        path: &str,
    ) -> Option<crate::plugin::NativeRef> {
        match self.plugins.resolve(reference, want) {
            Ok(found) => Some(found),
            Err(super::native::NativeProblem::AtUse(message)) => {
                self.problem(path, message);
                None
            }
            Err(super::native::NativeProblem::AtDeclaration { path: at, message }) => {
                self.plugin_problem(at, format!("{message} at `{path}`"));
                None
            }
            Err(super::native::NativeProblem::AlreadyReported) => None,
        }
    }

    fn problem(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem {
            severity: Severity::Error,
            file: self.manifest_path.clone(),
            path: path.into(),
            line: None,
            column: None,
            message: message.into(),
        });
    }

    /// The item, or `None` after reporting why it did not deserialize.
    fn lenient<'r, T>(&mut self, item: &'r Lenient<T>, path: &str) -> Option<&'r T> {
        match item {
            Lenient::Ok(item) => Some(item),
            Lenient::Err {
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
                self.problem(full, message.clone());
                None
            }
        }
    }

    fn pack(&mut self, raw: RawPack) -> CompiledPack {
        self.declare_plugins(&raw);
        if raw.id.trim().is_empty() {
            self.problem("id", "the pack id is empty");
        }
        if raw.version.trim().is_empty() {
            self.problem("version", "the pack version is empty");
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
            self.problem("dimensions", "a pack needs at least one dimension");
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
                    format!("{path}.id"),
                    format!("dimension id `{}` is used twice", dimension.id),
                );
            }
            dimensions.push(self.dimension(dimension, &path, raw.scoring, &mut rule_ids));
        }

        let whole = whole_scores(raw.scoring, &dimensions);
        if whole {
            for (path, points) in std::mem::take(&mut self.fractional_points) {
                self.problem(
                    path,
                    format!(
                        "points {} are not a whole number, and every score of this pack is (its dimensions' `max`, `start`, `floor` and `cap`)",
                        crate::entry::js_number(points)
                    ),
                );
            }
        }
        let judge = self.judge(&raw, &dimensions);
        let aggregate = match (&raw.aggregate, raw.scoring) {
            (Some(a), Scoring::Weighted) => {
                Some((a.id.clone(), a.description.clone().unwrap_or_default()))
            }
            (Some(_), Scoring::Points) => {
                self.problem(
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
        CompiledPack {
            id: raw.id,
            version: raw.version,
            name: raw.name,
            description: raw.description,
            digest: self.files.digest_with_plugins(&plugins),
            plugins,
            origin: self.files.origin.clone(),
            bands,
            empty_flag,
            selectors,
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
            scripts: self.scripts.take(),
            whole_scores: whole,
        }
    }

    fn judge(&mut self, raw: &RawPack, dimensions: &[Dimension]) -> Option<Judge> {
        let judged = dimensions.iter().any(|d| d.kind.is_judged());
        let Some(judge) = &raw.judge else {
            if judged {
                self.problem("dimensions", "the pack has judged dimensions, so it needs a `judge` with a `prompt` template");
            }
            return None;
        };
        if !judged {
            self.problem("judge", "`judge` asks for judged dimensions, and the pack has none (`type: numeric` or `categorical`)");
        }
        if judge.chunk_tokens == 0 || judge.chunk_tokens > judge.budget_tokens {
            self.problem(
                "judge.chunk_tokens",
                format!(
                    "`chunk_tokens` must be between 1 and `budget_tokens` ({})",
                    judge.budget_tokens
                ),
            );
        }
        if let Some(t) = judge.temperature.filter(|t| !(0.0..=2.0).contains(t)) {
            self.problem(
                "judge.temperature",
                format!(
                    "`temperature` must be between 0 and 2, not {}",
                    crate::entry::js_number(t)
                ),
            );
        }
        if judge.max_tokens == Some(0) {
            self.problem("judge.max_tokens", "`max_tokens` must be at least 1");
        }
        let Some(template) = self.files.files.get(&judge.prompt) else {
            self.problem(
                "judge.prompt",
                format!("prompt template `{}` is not in the pack (templates are files named `*.prompt.md`)", judge.prompt),
            );
            return None;
        };
        if let Err(problem) = crate::prompt::check_template(template) {
            self.problems.push(Problem {
                severity: Severity::Error,
                file: self.files.display_path(&judge.prompt),
                path: String::new(),
                line: None,
                column: None,
                message: problem,
            });
        }
        Some(Judge {
            prompt_file: judge.prompt.clone(),
            template: template.clone(),
            budget_tokens: judge.budget_tokens,
            chunk_tokens: judge.chunk_tokens,
            temperature: judge.temperature,
            max_tokens: judge.max_tokens,
        })
    }

    fn bands(&mut self, raw: &RawPack) -> Vec<Band> {
        let mut bands = Vec::new();
        let mut seen = HashSet::new();
        for (i, band) in raw.bands.iter().enumerate() {
            let path = format!("bands[{i}]");
            let Some(band) = self.lenient(band, &path) else {
                continue;
            };
            if !(0.0..=100.0).contains(&band.min_percent) {
                self.problem(
                    format!("{path}.min_percent"),
                    format!("`min_percent` {} is outside 0..=100", band.min_percent),
                );
            }
            if let Some(prev) = bands.last().map(|b: &Band| b.min_percent) {
                if band.min_percent >= prev {
                    self.problem(
                        format!("{path}.min_percent"),
                        format!(
                            "score bands must be listed from the highest down, but `{}` ({}%) follows a band at {prev}%",
                            band.grade, band.min_percent
                        ),
                    );
                }
            }
            if !seen.insert(band.grade.clone()) {
                self.problem(
                    format!("{path}.grade"),
                    format!("grade `{}` is used twice", band.grade),
                );
            }
            bands.push(Band {
                grade: band.grade.clone(),
                min_percent: band.min_percent,
            });
        }
        bands
    }

    fn selector_ref(&mut self, r: &SelectorRef, path: &str) -> Option<usize> {
        match r {
            SelectorRef::Name(name) => self.named_selector(name, path),
            SelectorRef::Inline(raw) => {
                let compiled = self.selector(raw, path)?;
                self.selectors.push(Some(compiled));
                Some(self.selectors.len() - 1)
            }
        }
    }

    fn named_selector(&mut self, name: &str, path: &str) -> Option<usize> {
        match self.selector_ids.get(name) {
            Some(&id) => Some(id),
            None => {
                let known = self
                    .selector_ids
                    .keys()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let known = if known.is_empty() {
                    "the pack declares none".to_owned()
                } else {
                    format!("declared: {known}")
                };
                self.problem(path, format!("unknown selector `{name}` ({known})"));
                None
            }
        }
    }

    fn selector(&mut self, raw: &RawSelector, path: &str) -> Option<Selector> {
        let mut parts = Vec::new();
        let mut ok = true;
        if let Some(domain) = &raw.domain {
            parts.push(Selector::Domain(self.vocabulary.domains(&domain.0)));
        }
        if let Some(operation) = &raw.operation {
            parts.push(Selector::Operation(
                self.vocabulary.operations(&operation.0),
            ));
        }
        if let Some(success) = raw.success {
            parts.push(Selector::Success(success));
        }
        if let Some(codes) = &raw.exit_code {
            parts.push(Selector::ExitCode(self.vocabulary.exit_codes(&codes.0)));
        }
        let tests: Vec<&str> = [
            ("equals", raw.equals.is_some()),
            ("one_of", raw.one_of.is_some()),
            ("truthy", raw.truthy.is_some()),
            ("blank", raw.blank.is_some()),
            ("present", raw.present.is_some()),
            ("contains", raw.contains.is_some()),
            ("type", raw.kind.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect();
        match (&raw.field, tests.as_slice()) {
            (None, []) => {}
            (None, some) => {
                ok = false;
                self.problem(
                    path,
                    format!("`{}` tests a field, so the selector needs `field`", some[0]),
                );
            }
            (Some(field), []) => {
                ok = false;
                self.problem(
                    format!("{path}.field"),
                    format!("field `{field}` is named but not tested (add `equals`, `one_of`, `truthy`, `blank`, `present`, `contains` or `type`)"),
                );
            }
            (Some(field), [_]) => match Field::parse(field) {
                Ok(field) => parts.push(if let Some(v) = &raw.equals {
                    Selector::Equals(field, v.clone())
                } else if let Some(vs) = &raw.one_of {
                    Selector::OneOf(field, vs.clone())
                } else if let Some(b) = raw.truthy {
                    Selector::Truthy(field, b)
                } else if let Some(b) = raw.blank {
                    Selector::Blank(field, b)
                } else if let Some(b) = raw.present {
                    Selector::Present(field, b)
                } else if let Some(kind) = raw.kind {
                    Selector::Type(field, kind)
                } else {
                    Selector::Contains(field, raw.contains.clone().unwrap_or_default())
                }),
                Err(message) => {
                    ok = false;
                    self.problem(format!("{path}.field"), message);
                }
            },
            (Some(_), many) => {
                ok = false;
                self.problem(
                    path,
                    format!(
                        "one `field` takes one test, but this selector has {} (split it with `all`)",
                        many.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
                    ),
                );
            }
        }
        if let Some(name) = &raw.is {
            match self.named_selector(name, &format!("{path}.is")) {
                Some(id) => parts.push(Selector::Ref(id)),
                None => ok = false,
            }
        }
        for (key, list) in [("all", &raw.all), ("any", &raw.any)] {
            let Some(list) = list else { continue };
            let mut items = Vec::new();
            for (i, item) in list.iter().enumerate() {
                match self.selector_item(item, &format!("{path}.{key}[{i}]")) {
                    Some(s) => items.push(s),
                    None => ok = false,
                }
            }
            parts.push(if key == "all" {
                Selector::All(items)
            } else {
                Selector::Any(items)
            });
        }
        if let Some(inner) = &raw.not {
            match self.selector_item(inner, &format!("{path}.not")) {
                Some(s) => parts.push(Selector::Not(Box::new(s))),
                None => ok = false,
            }
        }
        if !ok {
            return None;
        }
        match parts.len() {
            0 => {
                self.problem(
                    path,
                    "the selector is empty (to match every entry, write `all: []`)",
                );
                None
            }
            1 => parts.pop(),
            _ => Some(Selector::All(parts)),
        }
    }

    /// A selector inside `all`/`any`/`not`: a name becomes a reference, a map is compiled in place.
    fn selector_item(&mut self, item: &SelectorRef, path: &str) -> Option<Selector> {
        match item {
            SelectorRef::Name(name) => self.named_selector(name, path).map(Selector::Ref),
            SelectorRef::Inline(raw) => self.selector(raw, path),
        }
    }

    fn check_selector_cycles(&mut self) {
        fn refs(s: &Selector, out: &mut Vec<usize>) {
            match s {
                Selector::Ref(id) => out.push(*id),
                Selector::All(items) | Selector::Any(items) => {
                    items.iter().for_each(|i| refs(i, out))
                }
                Selector::Not(inner) => refs(inner, out),
                _ => {}
            }
        }
        let named = self.selector_ids.len();
        let edges: Vec<Vec<usize>> = (0..named)
            .map(|id| {
                let mut out = Vec::new();
                if let Some(s) = &self.selectors[id] {
                    refs(s, &mut out);
                }
                out
            })
            .collect();
        // Colours: 0 unvisited, 1 on the stack, 2 done.
        let mut colour = vec![0u8; named];
        let mut reported = HashSet::new();
        for start in 0..named {
            let mut stack = vec![(start, 0usize)];
            let mut trail = vec![start];
            if colour[start] != 0 {
                continue;
            }
            colour[start] = 1;
            while let Some((node, next)) = stack.last_mut() {
                let node = *node;
                if let Some(&to) = edges[node].get(*next) {
                    *next += 1;
                    if to >= named {
                        continue;
                    }
                    match colour[to] {
                        0 => {
                            colour[to] = 1;
                            stack.push((to, 0));
                            trail.push(to);
                        }
                        1 if reported.insert(to) => {
                            let names: Vec<String> = trail
                                [trail.iter().position(|&n| n == to).unwrap_or(0)..]
                                .iter()
                                .chain(std::iter::once(&to))
                                .map(|&n| {
                                    format!(
                                        "`{}`",
                                        self.selector_ids.get_index(n).map_or("", |(k, _)| k)
                                    )
                                })
                                .collect();
                            let name = self
                                .selector_ids
                                .get_index(to)
                                .map_or("", |(k, _)| k)
                                .to_owned();
                            self.problem(
                                format!("selectors.{name}"),
                                format!(
                                    "selectors refer to each other in a cycle: {}",
                                    names.join(" → ")
                                ),
                            );
                        }
                        _ => {}
                    }
                } else {
                    colour[node] = 2;
                    stack.pop();
                    trail.pop();
                }
            }
        }
    }

    fn metric(&mut self, raw: &RawMetric, path: &str) -> Option<Metric> {
        let kinds = [
            raw.ratio.is_some(),
            raw.duplicates.is_some(),
            raw.distinct.is_some(),
            raw.native.is_some(),
        ];
        if kinds.iter().filter(|k| **k).count() != 1 {
            self.problem(
                path,
                "a metric is exactly one of `ratio`, `duplicates`, `distinct` or `native`",
            );
            return None;
        }
        if let Some(reference) = &raw.native {
            return self
                .native(reference, FunctionKind::Metric, &format!("{path}.native"))
                .map(Metric::Native);
        }
        if let Some(ratio) = &raw.ratio {
            let of = self.selector_ref(&ratio.of, &format!("{path}.ratio.of"));
            let over = self.selector_ref(&ratio.over, &format!("{path}.ratio.over"));
            return Some(Metric::Ratio {
                of: of?,
                over: over?,
            });
        }
        let (keyed, which) = match (&raw.duplicates, &raw.distinct) {
            (Some(k), _) => (k, "duplicates"),
            (_, Some(k)) => (k, "distinct"),
            _ => return None,
        };
        let of = self.selector_ref(&keyed.of, &format!("{path}.{which}.of"));
        let key = match Field::parse(&keyed.key) {
            Ok(field) => Some(field),
            Err(message) => {
                self.problem(format!("{path}.{which}.key"), message);
                None
            }
        };
        let (of, key, normalize) = (of?, key?, keyed.normalize.clone());
        Some(if which == "duplicates" {
            Metric::Duplicates { of, key, normalize }
        } else {
            Metric::Distinct { of, key, normalize }
        })
    }

    fn dimension(
        &mut self,
        raw: &RawDimension,
        path: &str,
        scoring: Scoring,
        rule_ids: &mut HashSet<String>,
    ) -> Dimension {
        if raw.id.trim().is_empty() {
            self.problem(format!("{path}.id"), "the dimension id is empty");
        }
        match (scoring, raw.weight) {
            (Scoring::Weighted, None) => self.problem(
                path,
                format!(
                    "dimension `{}` needs a `weight`: the pack is `scoring: weighted`",
                    raw.id
                ),
            ),
            (Scoring::Weighted, Some(w)) if !(0.0..=1.0).contains(&w) => self.problem(
                format!("{path}.weight"),
                format!("`weight` {w} is outside 0..=1"),
            ),
            (Scoring::Points, Some(_)) => self.problem(
                format!("{path}.weight"),
                "`weight` only counts in a pack with `scoring: weighted`",
            ),
            _ => {}
        }
        if raw.kind != DimensionType::Points {
            if raw.applies_when.is_some() {
                self.problem(
                    format!("{path}.applies_when"),
                    "`applies_when` belongs to dimensions scored by rules: a judge scores every judged dimension",
                );
            }
            return self.judged_dimension(raw, path, scoring);
        }
        let Some(max) = raw.max else {
            self.problem(
                path,
                format!(
                    "dimension `{}` needs a `max`: the most its rules can give",
                    raw.id
                ),
            );
            return self.placeholder_dimension(raw, path);
        };
        // NaN is not above 0 either.
        if max.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            self.problem(
                format!("{path}.max"),
                format!("`max` must be above 0, not {max}"),
            );
        }
        if raw.min.is_some() || !raw.categories.is_empty() {
            self.problem(path, "`min` and `categories` belong to judged dimensions (`type: numeric` or `type: categorical`)");
        }
        let floor = raw.floor.unwrap_or(0.0);
        let cap = raw.cap.unwrap_or(max);
        // Scores stay within [0, max]: results and their schema rely on it.
        if floor < 0.0 {
            self.problem(
                format!("{path}.floor"),
                format!("`floor` {floor} is below 0"),
            );
        }
        if cap > max {
            self.problem(
                format!("{path}.cap"),
                format!("`cap` {cap} is above the dimension's max {max}"),
            );
        }
        if floor > cap {
            self.problem(
                format!("{path}.floor"),
                format!("`floor` {floor} is above the cap {cap}"),
            );
        }
        if raw.rules.is_empty() {
            self.problem(
                format!("{path}.rules"),
                "a dimension needs at least one rule",
            );
        }
        let mut rules = Vec::new();
        for (r, rule) in raw.rules.iter().enumerate() {
            let rule_path = format!("{path}.rules[{r}]");
            let Some(rule) = self.lenient(rule, &rule_path) else {
                continue;
            };
            if !rule_ids.insert(rule.id.clone()) {
                self.problem(
                    format!("{rule_path}.id"),
                    format!("rule id `{}` is used twice in the pack", rule.id),
                );
            }
            if let Some(kind) = self.rule(rule, &rule_path) {
                rules.push(Rule {
                    path: rule_path.clone(),
                    id: rule.id.clone(),
                    doc: rule.doc.clone(),
                    kind,
                });
            }
        }
        let applies = match &raw.applies_when {
            Some(when) => {
                let when = self.condition(when, &format!("{path}.applies_when"), false);
                let otherwise = raw
                    .not_applicable
                    .as_deref()
                    .and_then(|text| self.template(text, &format!("{path}.not_applicable"), false));
                when.map(|when| Applies { when, otherwise })
            }
            None => {
                if raw.not_applicable.is_some() {
                    self.problem(
                        format!("{path}.not_applicable"),
                        "`not_applicable` says why a dimension does not apply: it needs an `applies_when`",
                    );
                }
                None
            }
        };
        Dimension {
            path: path.to_owned(),
            id: raw.id.clone(),
            kind: DimensionKind::Points,
            applies,
            weight: raw.weight,
            name: raw.name.clone().unwrap_or_else(|| raw.id.clone()),
            description: raw.description.clone().unwrap_or_default(),
            max,
            start: raw.start,
            floor,
            cap,
            rules,
        }
    }

    /// A dimension whose score a judge gives: a number in a range, or a category.
    fn judged_dimension(&mut self, raw: &RawDimension, path: &str, scoring: Scoring) -> Dimension {
        if scoring != Scoring::Weighted {
            self.problem(
                format!("{path}.type"),
                "judged dimensions are normalised and weighted, so the pack needs `scoring: weighted`",
            );
        }
        if !raw.rules.is_empty() {
            self.problem(
                format!("{path}.rules"),
                "a judged dimension has no rules: its score comes from the judgment",
            );
        }
        let (kind, min, max) = if raw.kind == DimensionType::Categorical {
            if raw.categories.is_empty() {
                self.problem(
                    path,
                    "a categorical dimension needs `categories` (label and value)",
                );
            }
            let mut labels = HashSet::new();
            let mut values = Vec::new();
            for (i, c) in raw.categories.iter().enumerate() {
                if !labels.insert(c.label.clone()) {
                    self.problem(
                        format!("{path}.categories[{i}].label"),
                        format!("category `{}` is used twice", c.label),
                    );
                }
                if values.contains(&c.value) {
                    self.problem(
                        format!("{path}.categories[{i}].value"),
                        format!("category value {} is used twice", c.value),
                    );
                }
                values.push(c.value);
            }
            if raw.min.is_some() {
                self.problem(
                    format!("{path}.min"),
                    "a categorical dimension takes its range from its categories",
                );
            }
            let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if let Some(given) = raw.max.filter(|m| *m != max) {
                self.problem(
                    format!("{path}.max"),
                    format!("`max` {given} differs from the largest category value {max}"),
                );
            }
            if values.iter().any(|v| *v < 0.0) {
                self.problem(
                    format!("{path}.categories"),
                    "category values must be 0 or more",
                );
            }
            let categories = raw
                .categories
                .iter()
                .map(|c| (c.label.clone(), c.value))
                .collect();
            // A category normalises as value / largest value (the design's value / 3), so
            // the range always starts at 0.
            (
                DimensionKind::Categorical { categories },
                0.0,
                if max > 0.0 { max } else { 1.0 },
            )
        } else {
            if !raw.categories.is_empty() {
                self.problem(
                    format!("{path}.categories"),
                    "`categories` belong to `type: categorical`",
                );
            }
            let (min, max) = (raw.min.unwrap_or(0.0), raw.max.unwrap_or(1.0));
            if min.partial_cmp(&max) != Some(std::cmp::Ordering::Less) || min < 0.0 {
                self.problem(
                    format!("{path}.max"),
                    format!("a numeric dimension needs 0 ≤ `min` < `max`, not {min}..{max}"),
                );
            }
            (DimensionKind::Numeric { min }, min, max)
        };
        Dimension {
            path: path.to_owned(),
            id: raw.id.clone(),
            kind,
            weight: raw.weight,
            name: raw.name.clone().unwrap_or_else(|| raw.id.clone()),
            description: raw.description.clone().unwrap_or_default(),
            max,
            start: min,
            floor: min,
            cap: max,
            rules: Vec::new(),
            applies: None,
        }
    }

    /// Stands in for a dimension that could not be compiled, so later checks still run.
    fn placeholder_dimension(&mut self, raw: &RawDimension, path: &str) -> Dimension {
        Dimension {
            path: path.to_owned(),
            id: raw.id.clone(),
            kind: DimensionKind::Points,
            weight: raw.weight,
            name: raw.id.clone(),
            description: String::new(),
            max: 1.0,
            start: 0.0,
            floor: 0.0,
            cap: 1.0,
            rules: Vec::new(),
            applies: None,
        }
    }

    fn rule(&mut self, raw: &RawRule, path: &str) -> Option<RuleKind> {
        let shorthand = raw.when.is_some()
            || raw.points.is_some()
            || raw.evidence.is_some()
            || raw.flag.is_some()
            || raw.otherwise.is_some();
        let forms = [
            raw.script.is_some(),
            raw.native.is_some(),
            raw.cases.is_some(),
            shorthand,
        ];
        if forms.iter().filter(|f| **f).count() != 1 {
            self.problem(
                path,
                "a rule is exactly one of: `script`, `native`, `cases`, or a single case (`when` with `points`/`evidence`/`flag`, and optionally `otherwise`)",
            );
            return None;
        }
        if raw.doc.trim().is_empty() {
            self.problem(
                format!("{path}.doc"),
                "the rule has no `doc`; say what it checks",
            );
        }
        if let Some(file) = &raw.script {
            if raw.for_each.is_some() {
                self.problem(
                    format!("{path}.for_each"),
                    "a script rule sees the whole session; drop `for_each` and loop in the script",
                );
                return None;
            }
            return self.script(file, &format!("{path}.script"));
        }
        if let Some(reference) = &raw.native {
            if raw.for_each.is_some() {
                self.problem(
                    format!("{path}.for_each"),
                    "a native rule sees the whole session; drop `for_each` (or use a native condition in a `for_each` rule)",
                );
                return None;
            }
            return self
                .native(reference, FunctionKind::Rule, &format!("{path}.native"))
                .map(RuleKind::Native);
        }
        // A bad `for_each` must not hide the problems of the outcomes below it.
        let for_each = raw
            .for_each
            .as_ref()
            .map(|r| self.selector_ref(r, &format!("{path}.for_each")));
        let has_entry = for_each.is_some();
        let cases = if let Some(cases) = &raw.cases {
            if cases.is_empty() {
                self.problem(format!("{path}.cases"), "`cases` is empty");
            }
            cases
                .iter()
                .enumerate()
                .filter_map(|(i, case)| self.case(case, &format!("{path}.cases[{i}]"), has_entry))
                .collect::<Vec<_>>()
        } else {
            let mut cases = Vec::new();
            let when = match &raw.when {
                Some(c) => self.condition(c, &format!("{path}.when"), has_entry),
                None => Some(Condition::Always),
            };
            let outcome = self.outcome(
                raw.points.as_ref(),
                raw.evidence.as_deref(),
                raw.flag.as_deref(),
                path,
                has_entry,
            );
            if let (Some(when), Some((points, evidence, flag))) = (when, outcome) {
                cases.push(Case {
                    path: path.to_owned(),
                    when,
                    points,
                    evidence,
                    flag,
                });
            }
            if let Some(RawOutcome {
                points,
                evidence,
                flag,
            }) = &raw.otherwise
            {
                if raw.when.is_none() {
                    self.problem(
                        format!("{path}.otherwise"),
                        "`otherwise` needs a `when` to be the alternative of",
                    );
                }
                let opath = format!("{path}.otherwise");
                if let Some((points, evidence, flag)) = self.outcome(
                    points.as_ref(),
                    evidence.as_deref(),
                    flag.as_deref(),
                    &opath,
                    has_entry,
                ) {
                    cases.push(Case {
                        path: opath.clone(),
                        when: Condition::Always,
                        points,
                        evidence,
                        flag,
                    });
                }
            }
            cases
        };
        Some(match for_each {
            Some(selector) => RuleKind::ForEach {
                selector: selector?,
                cases,
            },
            None => RuleKind::Session(cases),
        })
    }

    fn case(&mut self, raw: &RawCase, path: &str, has_entry: bool) -> Option<Case> {
        let when = match &raw.when {
            Some(c) => self.condition(c, &format!("{path}.when"), has_entry),
            None => Some(Condition::Always),
        };
        let outcome = self.outcome(
            raw.points.as_ref(),
            raw.evidence.as_deref(),
            raw.flag.as_deref(),
            path,
            has_entry,
        );
        let (points, evidence, flag) = outcome?;
        Some(Case {
            path: path.to_owned(),
            when: when?,
            points,
            evidence,
            flag,
        })
    }

    #[allow(clippy::type_complexity)]
    fn outcome(
        &mut self,
        points: Option<&RawPoints>,
        evidence: Option<&str>,
        flag: Option<&str>,
        path: &str,
        has_entry: bool,
    ) -> Option<(Option<Points>, Option<Template>, Option<Template>)> {
        let mut ok = true;
        let points = match points {
            None => None,
            Some(RawPoints::Fixed(p)) => {
                if p.fract() != 0.0 {
                    self.fractional_points.push((format!("{path}.points"), *p));
                }
                Some(Points::Fixed(*p))
            }
            Some(RawPoints::Scaled(s)) => match self.metric_ids.get(&s.metric) {
                Some(&metric) => Some(Points::Scaled {
                    metric,
                    times: s.times,
                }),
                None => {
                    ok = false;
                    self.problem(
                        format!("{path}.points.metric"),
                        format!("unknown metric `{}`", s.metric),
                    );
                    None
                }
            },
        };
        let evidence = evidence.and_then(|t| {
            let parsed = self.template(t, &format!("{path}.evidence"), has_entry);
            ok &= parsed.is_some();
            parsed
        });
        let flag = flag.and_then(|t| {
            let parsed = self.template(t, &format!("{path}.flag"), has_entry);
            ok &= parsed.is_some();
            parsed
        });
        ok.then_some((points, evidence, flag))
    }

    fn template(&mut self, text: &str, path: &str, has_entry: bool) -> Option<Template> {
        let mut scope = Scope {
            compiler: self,
            has_entry,
        };
        match Template::parse(text, &mut scope) {
            Ok(t) => Some(t),
            Err(problems) => {
                for p in problems {
                    self.problem(path, p);
                }
                None
            }
        }
    }

    fn condition(&mut self, raw: &RawCondition, path: &str, has_entry: bool) -> Option<Condition> {
        let subjects: Vec<&str> = [
            ("count", raw.count.is_some()),
            ("metric", raw.metric.is_some()),
            (
                "score_at_least/score_at_most",
                raw.score_at_least.is_some() || raw.score_at_most.is_some(),
            ),
            ("first", raw.first.is_some()),
            ("entry", raw.entry.is_some()),
            ("followed_by", raw.followed_by.is_some()),
            ("preceded_by", raw.preceded_by.is_some()),
            ("all", raw.all.is_some()),
            ("any", raw.any.is_some()),
            ("not", raw.not.is_some()),
            ("native", raw.native.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect();
        if subjects.len() != 1 {
            self.problem(
                path,
                if subjects.is_empty() {
                    "the condition tests nothing (use `count`, `metric`, `score_at_least`, `first`, `entry`, `followed_by`, `preceded_by`, `all`, `any`, `not` or `native`)".to_owned()
                } else {
                    format!(
                        "a condition tests one thing, but this one has {} (combine them with `all`)",
                        subjects.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
                    )
                },
            );
            return None;
        }
        let subject = subjects[0];
        let bounded = matches!(subject, "count" | "metric");
        if !bounded && (raw.at_least.is_some() || raw.at_most.is_some()) {
            self.problem(
                path,
                format!("`at_least`/`at_most` bound a `count` or `metric`, not `{subject}`"),
            );
        }
        let windowed = matches!(subject, "followed_by" | "preceded_by");
        if !windowed && raw.within.is_some() {
            self.problem(
                format!("{path}.within"),
                "`within` belongs to `followed_by` or `preceded_by`",
            );
        }
        if subject != "first" && (raw.before_first.is_some() || raw.is.is_some()) {
            self.problem(path, "`before_first` and `is` belong to `first`");
        }
        if matches!(subject, "entry" | "followed_by" | "preceded_by") && !has_entry {
            self.problem(
                format!("{path}.{subject}"),
                format!("`{subject}` looks at one entry, so it works only in a `for_each` rule"),
            );
            return None;
        }
        match subject {
            "count" => {
                let selector = self.selector_ref(raw.count.as_ref()?, &format!("{path}.count"))?;
                let at_least = if raw.at_least.is_none() && raw.at_most.is_none() {
                    Some(1.0)
                } else {
                    raw.at_least
                };
                Some(Condition::Count {
                    selector,
                    at_least,
                    at_most: raw.at_most,
                })
            }
            "metric" => {
                let name = raw.metric.as_deref()?;
                let Some(&metric) = self.metric_ids.get(name) else {
                    self.problem(format!("{path}.metric"), format!("unknown metric `{name}`"));
                    return None;
                };
                if raw.at_least.is_none() && raw.at_most.is_none() {
                    self.problem(path, "a `metric` condition needs `at_least` or `at_most`");
                    return None;
                }
                Some(Condition::Metric {
                    metric,
                    at_least: raw.at_least,
                    at_most: raw.at_most,
                })
            }
            "score_at_least/score_at_most" => Some(Condition::Score {
                at_least: raw.score_at_least,
                at_most: raw.score_at_most,
            }),
            "first" => {
                let first = self.selector_ref(raw.first.as_ref()?, &format!("{path}.first"));
                match (&raw.before_first, &raw.is) {
                    (Some(b), None) => {
                        let before = self.selector_ref(b, &format!("{path}.before_first"));
                        Some(Condition::FirstBeforeFirst {
                            first: first?,
                            before: before?,
                        })
                    }
                    (None, Some(i)) => {
                        let is = self.selector_ref(i, &format!("{path}.is"));
                        Some(Condition::FirstIs {
                            first: first?,
                            is: is?,
                        })
                    }
                    _ => {
                        self.problem(path, "`first` takes exactly one of `before_first` or `is`");
                        None
                    }
                }
            }
            "entry" => Some(Condition::Entry(
                self.selector_ref(raw.entry.as_ref()?, &format!("{path}.entry"))?,
            )),
            "followed_by" | "preceded_by" => {
                let target = if subject == "followed_by" {
                    raw.followed_by.as_ref()?
                } else {
                    raw.preceded_by.as_ref()?
                };
                let selector = self.selector_ref(target, &format!("{path}.{subject}"));
                let within = match raw.within {
                    Some(0) => {
                        self.problem(
                            format!("{path}.within"),
                            "`within` must be 1 or more: it counts the entries to look at",
                        );
                        return None;
                    }
                    Some(w) => w,
                    None => {
                        self.problem(
                            path,
                            format!("`{subject}` needs `within`: how many entries to look at (1 or more)"),
                        );
                        return None;
                    }
                };
                let selector = selector?;
                Some(if subject == "followed_by" {
                    Condition::FollowedBy { selector, within }
                } else {
                    Condition::PrecededBy { selector, within }
                })
            }
            "all" | "any" => {
                let list = if subject == "all" {
                    raw.all.as_ref()?
                } else {
                    raw.any.as_ref()?
                };
                let mut items = Vec::new();
                let mut ok = true;
                for (i, c) in list.iter().enumerate() {
                    match self.condition(c, &format!("{path}.{subject}[{i}]"), has_entry) {
                        Some(c) => items.push(c),
                        None => ok = false,
                    }
                }
                ok.then(|| {
                    if subject == "all" {
                        Condition::All(items)
                    } else {
                        Condition::Any(items)
                    }
                })
            }
            "native" => self
                .native(
                    raw.native.as_deref()?,
                    FunctionKind::Condition,
                    &format!("{path}.native"),
                )
                .map(Condition::Native),
            "not" => Some(Condition::Not(Box::new(self.condition(
                raw.not.as_ref()?,
                &format!("{path}.not"),
                has_entry,
            )?))),
            _ => None,
        }
    }

    fn script(&mut self, file: &str, path: &str) -> Option<RuleKind> {
        let Some(source) = self.files.files.get(file) else {
            let known: Vec<String> = self
                .files
                .files
                .keys()
                .filter(|k| k.ends_with(".rhai"))
                .map(|k| format!("`{k}`"))
                .collect();
            self.problem(
                path,
                format!(
                    "script `{file}` is not in the pack ({})",
                    if known.is_empty() {
                        "it has no `.rhai` files".to_owned()
                    } else {
                        format!("it has {}", known.join(", "))
                    }
                ),
            );
            return None;
        };
        let plugins = self.plugins.loaded();
        let host = self.scripts.get_or_insert_with(|| {
            let mut host = ScriptHost::new();
            host.add_plugins(&plugins);
            host
        });
        match host.compile(file, source) {
            Ok(index) => {
                self.check_script_names(file, source);
                Some(RuleKind::Script { index })
            }
            Err(err) => {
                self.problems.push(Problem {
                    severity: Severity::Error,
                    file: self.files.display_path(file),
                    path: String::new(),
                    line: err.line,
                    column: err.column,
                    message: err.message,
                });
                None
            }
        }
    }
}

impl Compiler<'_> {
    /// Selector and metric names a script passes as literals (`session.count("task_op")`,
    /// `e.is("lookup")`, `session.metric("ratio")`) must exist: at run time an unknown name
    /// fails every session, so it is an error of the pack, reported at its place in the script.
    fn check_script_names(&mut self, file: &str, source: &str) {
        const CALLS: [(&str, bool); 5] = [
            ("count", true),
            ("first", true),
            ("matching", true),
            ("is", true),
            ("metric", false),
        ];
        for (line_no, line) in source.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            for (call, is_selector) in CALLS {
                let needle = format!(".{call}(\"");
                let mut from = 0;
                while let Some(at) = code[from..].find(&needle) {
                    let start = from + at + needle.len();
                    from = start;
                    let Some(len) = code[start..].find('"') else {
                        break;
                    };
                    let name = &code[start..start + len];
                    let known = if is_selector {
                        self.selector_ids.contains_key(name)
                    } else {
                        self.metric_ids.contains_key(name)
                    };
                    if !known {
                        let (kind, names): (&str, Vec<&String>) = if is_selector {
                            ("selector", self.selector_ids.keys().collect())
                        } else {
                            ("metric", self.metric_ids.keys().collect())
                        };
                        let declared = if names.is_empty() {
                            "the pack declares none".to_owned()
                        } else {
                            format!(
                                "declared: {}",
                                names
                                    .iter()
                                    .map(|n| format!("`{n}`"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        };
                        self.problems.push(Problem {
                            severity: Severity::Error,
                            file: self.files.display_path(file),
                            path: String::new(),
                            line: Some(line_no + 1),
                            column: Some(code[..start - 1].chars().count() + 1),
                            message: format!(
                                "unknown {kind} `{name}` in `.{call}(\"{name}\")` ({declared})"
                            ),
                        });
                    }
                }
            }
        }
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
