//! The trajectory metrics: `trajectory_match`, `tool_precision`, `tool_recall`, `tool_f1` and
//! `tool_sequence`, which compare a session's tool calls with its reference trajectory
//! ([`crate::reference`]).
//!
//! One kind, one home: the YAML as written ([`RawTrajectory`]), its compilation with every
//! problem under code E037, its evaluation for one session, which rules read it (so that a
//! dimension whose rules compare with a reference does not apply to a session without one),
//! and the tests, here; the algorithms are in [`matching`]. `docs/trajectories.md` is the
//! user's page.
//!
//! The agent's calls are the entries `of` selects (by default the entries of domain `tool`,
//! which is how every source names a tool call): an entry's `operation` is the tool's name,
//! its `params` the arguments.

pub(crate) mod matching;

use indexmap::IndexMap;
use serde::Deserialize;

use self::matching::{ArgsMode, KeyTest, Matcher, Measure, Mode, Scored, ToolArgs};
use super::codes::Code;
use super::compile::Compiler;
use super::raw::{Names, RawSelector, SelectorRef};
use super::template::{Segment, Template};
use super::{Condition, Metric, Points, Rule, RuleKind};
use crate::entry::Entry;
use crate::reference::{ToolCall, Trajectory};

/// A trajectory metric as written: `{ mode, args, of, tools }` under one of the five keys.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawTrajectory {
    /// `strict` (default), `unordered`, `subset` or `superset`; only for `trajectory_match`.
    #[serde(default)]
    pub mode: Option<String>,
    /// `exact` (default), `ignore` or `contains`.
    #[serde(default)]
    pub args: Option<String>,
    /// The agent's calls; the entries of domain `tool` when left out.
    #[serde(default)]
    pub of: Option<SelectorRef>,
    /// Per tool name: its own `args`, or the `keys` compared.
    #[serde(default)]
    pub tools: IndexMap<String, RawToolArgs>,
}

/// How one tool's calls are compared.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawToolArgs {
    #[serde(default)]
    pub args: Option<String>,
    /// A list of keys compared for equality, or a map of key → `equal`, `{regex: …}` or
    /// `{within: N}`. Dotted keys reach into nested objects.
    #[serde(default)]
    pub keys: Option<serde_yaml::Value>,
}

/// A compiled trajectory metric.
#[derive(Debug, Clone)]
pub(crate) struct TrajectoryMetric {
    pub measure: Measure,
    /// The selector of the agent's calls.
    pub of: usize,
    pub matcher: Matcher,
}

const MODES: &str = "`strict`, `unordered`, `subset` or `superset`";
const ARGS: &str = "`exact`, `ignore` or `contains`";

impl Compiler<'_> {
    /// Compiles the trajectory metric written under `kind` (`trajectory_match`, `tool_f1`, …) at `path`
    /// (`metrics.NAME`), reporting every problem.
    pub(in crate::pack) fn trajectory_metric(
        &mut self,
        kind: &str,
        raw: &RawTrajectory,
        path: &str,
    ) -> Option<TrajectoryMetric> {
        let at = format!("{path}.{kind}");
        let mut ok = true;
        let measure = match kind {
            "trajectory_match" => Measure::Match(match raw.mode.as_deref() {
                None | Some("strict") => Mode::Strict,
                Some("unordered") => Mode::Unordered,
                Some("subset") => Mode::Subset,
                Some("superset") => Mode::Superset,
                Some(other) => {
                    self.problem(
                        Code::TrajectoryMetric,
                        format!("{at}.mode"),
                        format!("unknown trajectory mode `{other}` (expected {MODES})"),
                    );
                    ok = false;
                    Mode::Strict
                }
            }),
            _ => {
                if raw.mode.is_some() {
                    self.problem(
                        Code::TrajectoryMetric,
                        format!("{at}.mode"),
                        format!("`mode` belongs to `trajectory_match`; `{kind}` counts matched calls whatever their order"),
                    );
                    ok = false;
                }
                match kind {
                    "tool_precision" => Measure::Precision,
                    "tool_recall" => Measure::Recall,
                    "tool_f1" => Measure::F1,
                    _ => Measure::Sequence,
                }
            }
        };
        let args = match raw.args.as_deref() {
            None => ArgsMode::Exact,
            Some(args) => self
                .args_mode(args, &format!("{at}.args"))
                .unwrap_or_else(|| {
                    ok = false;
                    ArgsMode::Exact
                }),
        };
        let mut matcher = Matcher::new(args);
        for (tool, over) in &raw.tools {
            let here = format!("{at}.tools.{tool}");
            match self.tool_args(over, &here) {
                Some(rule) => {
                    matcher.tools.insert(tool.clone(), rule);
                }
                None => ok = false,
            }
        }
        let of = match &raw.of {
            Some(of) => self.selector_ref(of, &format!("{at}.of")),
            None => {
                let tools = RawSelector {
                    domain: Some(Names(vec!["tool".to_owned()])),
                    ..RawSelector::default()
                };
                self.selector_ref(&SelectorRef::Inline(Box::new(tools)), &at)
            }
        };
        let of = of?;
        ok.then_some(TrajectoryMetric {
            measure,
            of,
            matcher,
        })
    }

    fn args_mode(&mut self, args: &str, path: &str) -> Option<ArgsMode> {
        match args {
            "exact" => Some(ArgsMode::Exact),
            "ignore" => Some(ArgsMode::Ignore),
            "contains" => Some(ArgsMode::Contains),
            other => {
                let hint = match other {
                    "superset" => " (agentevals' `superset` of arguments is `contains`)",
                    _ => "",
                };
                self.problem(
                    Code::TrajectoryMetric,
                    path,
                    format!("unknown argument matcher `{other}` (expected {ARGS}){hint}"),
                );
                None
            }
        }
    }

    fn tool_args(&mut self, raw: &RawToolArgs, path: &str) -> Option<ToolArgs> {
        match (&raw.args, &raw.keys) {
            (Some(args), None) => self
                .args_mode(args, &format!("{path}.args"))
                .map(ToolArgs::Mode),
            (None, Some(keys)) => self.keys(keys, &format!("{path}.keys")).map(ToolArgs::Keys),
            _ => {
                self.problem(
                    Code::TrajectoryMetric,
                    path,
                    "a tool's override is `args: MATCHER` or `keys: […]`, one of them",
                );
                None
            }
        }
    }

    fn keys(
        &mut self,
        keys: &serde_yaml::Value,
        path: &str,
    ) -> Option<Vec<(Vec<String>, KeyTest)>> {
        use serde_yaml::Value as Y;
        let split = |key: &str| key.split('.').map(str::to_owned).collect::<Vec<_>>();
        let mut out = Vec::new();
        let mut ok = true;
        match keys {
            Y::Sequence(items) => {
                for (i, item) in items.iter().enumerate() {
                    match item.as_str() {
                        Some(key) if !key.is_empty() => out.push((split(key), KeyTest::Equal)),
                        _ => {
                            self.problem(
                                Code::TrajectoryMetric,
                                format!("{path}[{i}]"),
                                "a key is a name (`file_path`, `options.depth`)",
                            );
                            ok = false;
                        }
                    }
                }
            }
            Y::Mapping(map) => {
                for (key, test) in map {
                    let Some(key) = key.as_str().filter(|k| !k.is_empty()) else {
                        self.problem(
                            Code::TrajectoryMetric,
                            path,
                            "a key is a name (`file_path`, `options.depth`)",
                        );
                        ok = false;
                        continue;
                    };
                    let here = format!("{path}.{key}");
                    match self.key_test(test, &here) {
                        Some(test) => out.push((split(key), test)),
                        None => ok = false,
                    }
                }
            }
            _ => {
                self.problem(
                    Code::TrajectoryMetric,
                    path,
                    "`keys` is a list of keys, or a map of key → `equal`, `{ regex: … }` or `{ within: N }`",
                );
                return None;
            }
        }
        if out.is_empty() && ok {
            self.problem(
                Code::TrajectoryMetric,
                path,
                "`keys` lists no key, so every call of the tool would match (write `args: ignore` for that)",
            );
            return None;
        }
        ok.then_some(out)
    }

    fn key_test(&mut self, test: &serde_yaml::Value, path: &str) -> Option<KeyTest> {
        use serde_yaml::Value as Y;
        const EXPECTED: &str = "`equal`, `{ regex: … }` or `{ within: N }`";
        let one = match test {
            Y::String(s) if s == "equal" => return Some(KeyTest::Equal),
            Y::Mapping(map) if map.len() == 1 => map.iter().next(),
            _ => None,
        };
        match one.and_then(|(k, v)| Some((k.as_str()?, v))) {
            Some(("regex", Y::String(pattern))) => match regex::Regex::new(pattern) {
                Ok(re) => Some(KeyTest::Regex(re)),
                Err(err) => {
                    let message = err.to_string();
                    let last = message.lines().last().unwrap_or_default().trim().to_owned();
                    self.problem(
                        Code::TrajectoryMetric,
                        format!("{path}.regex"),
                        format!(
                            "`{pattern}` is not a regular expression ({})",
                            crate::entry::lowercase_first(&last)
                        ),
                    );
                    None
                }
            },
            Some(("within", v)) => match v.as_f64() {
                Some(n) if n >= 0.0 && n.is_finite() => Some(KeyTest::Within(n)),
                _ => {
                    self.problem(
                        Code::TrajectoryMetric,
                        format!("{path}.within"),
                        "`within` is a number, 0 or more: how far apart two numbers may be",
                    );
                    None
                }
            },
            _ => {
                let shown = match (test, one.and_then(|(k, _)| k.as_str())) {
                    (Y::String(s), _) => format!("`{s}`"),
                    (_, Some(key)) => format!("`{key}`"),
                    _ => "written here".to_owned(),
                };
                self.problem(
                    Code::TrajectoryMetric,
                    path,
                    format!("unknown key matcher {shown} (expected {EXPECTED})"),
                );
                None
            }
        }
    }
}

/// The agent's tool calls: the entries at `positions`, their operation as the name and their
/// params as the arguments.
pub(crate) fn agent_calls(entries: &[Entry], positions: &[u32]) -> Vec<ToolCall> {
    positions
        .iter()
        .filter_map(|&i| entries.get(i as usize))
        .map(|e| ToolCall {
            name: e.operation.to_string(),
            args: e.params.to_map(),
        })
        .collect()
}

/// What a trajectory metric found in one session: the entry of each agent call, how many
/// reference calls there are and their names, and the pairs behind the value.
#[derive(Debug, Clone)]
pub(crate) struct Pairing {
    pub scored: Scored,
    /// The entry position of each agent call, in order.
    pub agent: Vec<u32>,
    /// The name of each reference call, in order.
    pub reference: Vec<String>,
}

impl TrajectoryMetric {
    /// The metric for a session with this reference.
    pub(crate) fn evaluate(
        &self,
        entries: &[Entry],
        hits: &[Vec<u32>],
        reference: &Trajectory,
    ) -> Pairing {
        let positions = hits.get(self.of).map_or(&[][..], Vec::as_slice);
        let agent = agent_calls(entries, positions);
        Pairing {
            scored: matching::score(self.measure, &agent, &reference.calls, &self.matcher),
            agent: positions.to_vec(),
            reference: reference.calls.iter().map(|c| c.name.clone()).collect(),
        }
    }
}

impl Pairing {
    /// The agent's calls left out of every pair, as entry positions.
    pub(crate) fn extra(&self) -> Vec<u32> {
        let mut paired = vec![false; self.agent.len()];
        for &(a, _) in &self.scored.pairs {
            paired[a as usize] = true;
        }
        self.agent
            .iter()
            .zip(paired)
            .filter(|(_, p)| !p)
            .map(|(&i, _)| i)
            .collect()
    }

    /// The reference calls left out of every pair, as 0-based indices.
    pub(crate) fn missed(&self) -> Vec<usize> {
        let mut paired = vec![false; self.reference.len()];
        for &(_, r) in &self.scored.pairs {
            paired[r as usize] = true;
        }
        (0..self.reference.len()).filter(|&r| !paired[r]).collect()
    }
}

/// The metrics a rule reads in its conditions, points and texts (not those a script or a
/// plugin asks for, which only running them tells).
pub(crate) fn metrics_read(rule: &Rule) -> Vec<usize> {
    let mut out = Vec::new();
    if let RuleKind::Session(cases) | RuleKind::ForEach { cases, .. } = &rule.kind {
        for case in cases {
            condition_metrics(&case.when, &mut out);
            if let Some(Points::Scaled { metric, .. }) = case.points {
                out.push(metric);
            }
            for text in [&case.evidence, &case.flag].into_iter().flatten() {
                template_metrics(text, &mut out);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn condition_metrics(condition: &Condition, out: &mut Vec<usize>) {
    match condition {
        Condition::Metric(bound) => out.push(bound.metric),
        Condition::All(items) | Condition::Any(items) => {
            for c in items {
                condition_metrics(c, out);
            }
        }
        Condition::Not(inner) => condition_metrics(inner, out),
        _ => {}
    }
}

/// The metrics of a template (`{metric.NAME}`, `{percent.NAME}`).
pub(crate) fn template_metrics(template: &Template, out: &mut Vec<usize>) {
    for segment in template.segments() {
        if let Segment::Metric(m) | Segment::Percent(m) = segment {
            out.push(*m);
        }
    }
}

/// The names of the trajectory metrics among `metrics`, in order.
pub(crate) fn trajectory_names(all: &[Metric], names: &[String], metrics: &[usize]) -> Vec<String> {
    metrics
        .iter()
        .filter(|&&m| matches!(all.get(m), Some(Metric::Trajectory(_))))
        .filter_map(|&m| names.get(m).cloned())
        .collect()
}

#[cfg(test)]
mod tests;
