//! One rule's run: its cases over the session or over each entry of its `for_each`
//! selector, a script, or a plugin's rule function.

use std::sync::Arc;

use rayon::prelude::*;

use super::outcome::{apply, first_case};
use super::EvalError;
use crate::pack::condition::{Ctx, Facts};
use crate::pack::{CompiledPack, Rule, RuleKind};
use crate::script::{Observable, ScriptOutcome, SessionData};

/// What a rule adds to as it runs: the dimension's running score, its evidence, the
/// result's flags, and (when explained) the entries behind the rule's outcome.
pub(super) struct Running<'a> {
    pub score: &'a mut f64,
    pub evidence: &'a mut Vec<String>,
    pub flags: &'a mut Vec<String>,
    pub witnesses: &'a mut Vec<u32>,
}

/// Sessions at least this long run their scripts side by side: a run over a thousand
/// entries takes about a millisecond, far above what handing it to another thread costs, and
/// a long session is often the only one graded (a transcript), so it would run on one core.
const SCRIPTS_SIDE_BY_SIDE_FROM: usize = 1_000;

/// Outcomes of scripts run ahead of their rules, by script index; a rule takes its own.
pub(super) type Prefetched = Vec<Option<Result<ScriptOutcome, String>>>;

impl CompiledPack {
    /// Runs, side by side on the thread pool, the scripts of a long session that do not read
    /// the running score (their outcome is the same whenever they run), so that a session
    /// graded alone uses every core. Each rule still takes its outcome in order, so the
    /// grade and the first error are those of running them one by one; the outcome of a
    /// rule never reached (an earlier error, a dimension that does not apply) is dropped.
    pub(super) fn prefetch_scripts(
        &self,
        session_id: &str,
        facts: &Facts<'_>,
        judged: bool,
        script_data: &mut Option<Arc<SessionData>>,
        make_script_data: &dyn Fn() -> Arc<SessionData>,
    ) -> Prefetched {
        let Some(host) = self.scripts.as_ref() else {
            return Vec::new();
        };
        if facts.entries.len() < SCRIPTS_SIDE_BY_SIDE_FROM {
            return Vec::new();
        }
        let ahead: Vec<usize> = self
            .dimensions
            .iter()
            .filter(|d| !(judged && d.kind.is_judged()))
            .flat_map(|d| &d.rules)
            .filter_map(|rule| match rule.kind {
                RuleKind::Script { index, .. } if !host.reads_score(index) => Some(index),
                _ => None,
            })
            .collect();
        if ahead.len() < 2 {
            return Vec::new();
        }
        let data = Arc::clone(script_data.get_or_insert_with(make_script_data));
        let observable = Observable {
            session_id,
            entries: facts.entries,
            hits: &facts.hits,
            metrics: &facts.metrics,
        };
        let outcomes: Vec<(usize, Result<ScriptOutcome, String>)> = ahead
            .into_par_iter()
            .map(|index| {
                let outcome = host.run(index, &observable, 0.0, &mut || Arc::clone(&data));
                (index, outcome)
            })
            .collect();
        let mut prefetched: Prefetched = Vec::new();
        for (index, outcome) in outcomes {
            if prefetched.len() <= index {
                prefetched.resize_with(index + 1, || None);
            }
            prefetched[index] = Some(outcome);
        }
        prefetched
    }

    /// Runs `rule` for the session of `facts`; `script_data` is made once per session, and
    /// only when a script runs.
    #[allow(
        clippy::too_many_arguments,
        reason = "each argument belongs to a different layer of the evaluation (pack, session, running state)"
    )]
    pub(super) fn run_rule(
        &self,
        rule: &Rule,
        session_id: &str,
        facts: &Facts<'_>,
        running: Running<'_>,
        script_data: &mut Option<Arc<SessionData>>,
        make_script_data: &dyn Fn() -> Arc<SessionData>,
        prefetched: &mut Prefetched,
        explain: bool,
    ) -> Result<(), EvalError> {
        let Running {
            score,
            evidence,
            flags,
            witnesses,
        } = running;
        let entries = facts.entries;
        match &rule.kind {
            RuleKind::Session(cases) => {
                let ctx = Ctx {
                    facts,
                    score: *score,
                    entry: None,
                };
                if let Some(case) = first_case(cases, &ctx, explain.then_some(&mut *witnesses)) {
                    *score += apply(case, &ctx, evidence, flags);
                }
            }
            RuleKind::ForEach { selector, cases } => {
                for &at in &facts.hits[*selector] {
                    let ctx = Ctx {
                        facts,
                        score: *score,
                        entry: Some(at),
                    };
                    let mut found = Vec::new();
                    if let Some(case) = first_case(cases, &ctx, explain.then_some(&mut found)) {
                        let points = apply(case, &ctx, evidence, flags);
                        *score += points;
                        if explain
                            && (points != 0.0 || case.evidence.is_some() || case.flag.is_some())
                        {
                            witnesses.push(at);
                            witnesses.extend(found);
                        }
                    }
                }
            }
            RuleKind::Script { index, .. } => {
                let fail = |message: String| EvalError::Script {
                    pack: self.id.clone(),
                    rule: rule.id.clone(),
                    session: session_id.to_owned(),
                    message,
                };
                let host = self
                    .scripts
                    .as_ref()
                    .ok_or_else(|| fail("the pack has no script host".to_owned()))?;
                let observable = Observable {
                    session_id,
                    entries,
                    hits: &facts.hits,
                    metrics: &facts.metrics,
                };
                let ahead = prefetched.get_mut(*index).and_then(Option::take);
                let outcome = match ahead {
                    Some(outcome) => outcome,
                    None => {
                        let mut data =
                            || Arc::clone(script_data.get_or_insert_with(make_script_data));
                        host.run(*index, &observable, *score, &mut data)
                    }
                }
                .map_err(fail)?;
                if !outcome.points.is_finite() {
                    return Err(fail(format!(
                        "it gave {} points at `{}`, and a grade cannot hold it",
                        crate::entry::js_number(outcome.points),
                        rule.path
                    )));
                }
                if let Some(points) = outcome.points_past_exact {
                    return Err(fail(format!(
                        "it gave {points} points at `{}`, more than a score holds exactly (2^53)",
                        rule.path
                    )));
                }
                if self.whole_scores && outcome.points.fract() != 0.0 {
                    return Err(fail(format!(
                        "it gave {} points at `{}`, and every score of this pack is a whole number",
                        crate::entry::js_number(outcome.points),
                        rule.path
                    )));
                }
                // As for a plugin: `--explain` would drop the index without a word, and the
                // script's author would never learn it pointed at nothing.
                if let Some(bad) = outcome
                    .entries
                    .iter()
                    .find(|&&i| i as usize >= entries.len())
                {
                    return Err(fail(format!(
                        "it named entry {bad} at `{}`, and the session has {} (entries are 0-based)",
                        rule.path,
                        entries.len()
                    )));
                }
                *score += outcome.points;
                evidence.extend(outcome.evidence);
                flags.extend(outcome.flags);
                witnesses.extend(outcome.entries);
            }
            RuleKind::Native(native) => {
                if let Some(outcome) = facts.call_native(native, None, *score) {
                    let points = outcome.value.unwrap_or(0.0);
                    // As for scripts: CLEO's grades and the JSON of such a pack hold whole
                    // numbers, and half a point would come out as a score nobody wrote.
                    if self.whole_scores && points.fract() != 0.0 {
                        return Err(EvalError::Plugin {
                            pack: self.id.clone(),
                            place: format!("rule `{}`", rule.id),
                            function: native.qualified_name(),
                            session: session_id.to_owned(),
                            message: format!(
                                "it gave {} points at `{}`, and every score of this pack is a whole number",
                                crate::entry::js_number(points),
                                rule.path
                            ),
                        });
                    }
                    *score += points;
                    evidence.extend(outcome.evidence);
                    flags.extend(outcome.flags);
                    witnesses.extend(outcome.entries);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::{grade, pack};

    #[test]
    fn for_each_applies_its_cases_to_every_matching_entry() {
        let rule = "      - id: r\n        doc: d\n        for_each: failed\n        cases:\n          - { when: { entry: tasks }, points: -2, flag: 'failed {entry.operation} at #{entry.position}' }\n          - { points: -1 }\n";
        let result = grade(&pack(rule), &[("tasks", "add!"), ("x", "y"), ("a", "b!")]);
        assert_eq!(result.dimensions["d"].score.0, 0.0);
        assert_eq!(result.flags, ["failed add at #1"]);
        let traces = &result.explain.as_ref().expect("explained")["d"];
        assert_eq!(traces[0].points.0, -3.0);
        let positions: Vec<usize> = traces[0].entries.iter().map(|e| e.position).collect();
        assert_eq!(positions, [1, 3]);
    }

    /// A finite metric times a finite `times` can overflow: clamped, the infinite sum was the
    /// dimension's cap (or floor) without a word.
    #[test]
    fn points_that_overflow_fail_the_session_naming_the_dimension() {
        let pack = pack("      - { id: r, doc: d, points: { metric: share, times: 1e308 } }\n");
        let session =
            crate::pack::testing::session(&[("tasks", "a"), ("tasks", "b"), ("session", "s")]);
        match pack.grade(&session, &crate::eval::GradeOptions::default()) {
            Ok(result) => panic!("graded: {:?}", result.dimensions),
            Err(err) => assert_eq!(
                err.to_string(),
                "rubric `t`, dimension `d`, session `s`: its rules add up to Infinity points, which no grade can hold (a rule's `times` too large for its metric's value?)"
            ),
        }
        // One task per session: 1e308 points, finite, clamped to the cap as any score is.
        let result = grade(&pack, &[("tasks", "a"), ("session", "s")]);
        assert_eq!(result.dimensions["d"].score.0, 100.0);
    }

    #[test]
    fn a_script_rule_adds_its_points_and_words() {
        let yaml = "id: t\nversion: '1'\nname: T\nselectors:\n  tasks: { domain: tasks }\ndimensions:\n  - id: d\n    max: 10\n    rules: [ { id: r, doc: d, script: r.rhai } ]\n";
        let mut files = crate::pack::testing::files(yaml);
        files.files.insert(
            "r.rhai".to_owned(),
            "#{ points: session.count(\"tasks\") * 2, evidence: [\"counted\"] }".to_owned(),
        );
        let pack = match crate::pack::compile_pack(&files) {
            Ok(p) => p,
            Err(err) => panic!("{err}"),
        };
        let result = grade(&pack, &[("tasks", "a"), ("tasks", "b")]);
        assert_eq!(result.dimensions["d"].score.0, 4.0);
        assert_eq!(result.dimensions["d"].evidence, ["counted"]);
    }

    /// A pack of three dimensions whose scripts are `scripts` (file name, source), one
    /// dimension each, the last applying only to sessions with a `never` entry.
    fn three_script_pack(scripts: [&str; 3]) -> crate::pack::CompiledPack {
        let yaml = "id: t\nversion: '1'\nname: T\nselectors:\n  tasks: { domain: tasks }\n  never: { domain: never }\ndimensions:\n  - { id: a, max: 100000, rules: [ { id: ra, doc: d, script: a.rhai } ] }\n  - { id: b, max: 100000, rules: [ { id: rb, doc: d, points: 3 }, { id: rb2, doc: d, script: b.rhai } ] }\n  - { id: c, max: 100000, applies_when: { count: never }, rules: [ { id: rc, doc: d, script: c.rhai } ] }\n";
        let mut files = crate::pack::testing::files(yaml);
        for (name, source) in ["a.rhai", "b.rhai", "c.rhai"].into_iter().zip(scripts) {
            files.files.insert(name.to_owned(), source.to_owned());
        }
        match crate::pack::compile_pack(&files) {
            Ok(p) => p,
            Err(err) => panic!("{err}"),
        }
    }

    /// A session long enough that its scripts run side by side, and one too short to.
    fn long_and_short() -> [Vec<(&'static str, &'static str)>; 2] {
        let long = (0..super::SCRIPTS_SIDE_BY_SIDE_FROM + 1)
            .map(|i| {
                if i % 3 == 0 {
                    ("tasks", "add")
                } else {
                    ("session", "x")
                }
            })
            .collect();
        [long, vec![("tasks", "add"), ("session", "x")]]
    }

    #[test]
    fn scripts_run_side_by_side_grade_as_they_do_one_by_one() {
        // `b` reads the running score, so it runs in its turn; `a` and `c` run ahead.
        let pack = three_script_pack([
            "#{ points: session.count(\"tasks\"), evidence: [\"a\"] }",
            "#{ points: score * 2, evidence: [`b saw ${score}`] }",
            "throw \"c ran\"",
        ]);
        for ops in long_and_short() {
            let tasks = ops.iter().filter(|(d, _)| *d == "tasks").count() as f64;
            let result = grade(&pack, &ops);
            assert_eq!(result.dimensions["a"].score.0, tasks);
            assert_eq!(result.dimensions["a"].evidence, ["a"]);
            // 3, then twice the 3 it saw: 9.
            assert_eq!(result.dimensions["b"].score.0, 9.0);
            assert_eq!(result.dimensions["b"].evidence, ["b saw 3.0"]);
            // `c`'s dimension does not apply: its failure, run ahead or not, is not the grade's.
            assert!(result.dimensions["c"].not_applicable);
        }
    }

    #[test]
    fn scripts_run_side_by_side_fail_with_the_first_failure_in_rule_order() {
        let pack =
            three_script_pack(["#{ points: 1 }", "throw \"b failed\"", "throw \"c failed\""]);
        let pack_a_fails = three_script_pack(["throw \"a failed\"", "throw \"b failed\"", "1"]);
        for ops in long_and_short() {
            let session = crate::pack::testing::session(&ops);
            let options = crate::eval::GradeOptions::default();
            for (pack, expected) in [(&pack, "b failed"), (&pack_a_fails, "a failed")] {
                match pack.grade(&session, &options) {
                    Ok(result) => panic!("graded: {:?}", result.dimensions),
                    Err(err) => {
                        let message = err.to_string();
                        assert!(message.contains(expected), "{message}");
                    }
                }
            }
        }
    }

    fn script_pack(max: &str, script: &str) -> crate::pack::CompiledPack {
        let yaml = format!("id: t\nversion: '1'\nname: T\ndimensions:\n  - id: d\n    max: {max}\n    rules: [ {{ id: a, doc: d, points: 1 }}, {{ id: r, doc: d, script: r.rhai }} ]\n");
        let mut files = crate::pack::testing::files(&yaml);
        files.files.insert("r.rhai".to_owned(), script.to_owned());
        match crate::pack::compile_pack(&files) {
            Ok(p) => p,
            Err(err) => panic!("{err}"),
        }
    }

    fn grade_error(pack: &crate::pack::CompiledPack) -> String {
        let session = crate::pack::testing::session(&[("tasks", "a")]);
        match pack.grade(&session, &crate::eval::GradeOptions::default()) {
            Ok(result) => panic!("graded: {result:?}"),
            Err(err) => err.to_string(),
        }
    }

    /// `--explain` dropped an index past the session's end without a word (and one of 2^32
    /// or more was called negative): the script's author never learned it named nothing.
    #[test]
    fn a_script_naming_an_entry_the_session_lacks_fails_the_session_saying_which() {
        for (entries, says) in [
            ("[0, 1]", "it named entry 1 at `dimensions[0].rules[1]`, and the session has 1 (entries are 0-based)"),
            ("[-1]", "r.rhai:1: `entries` holds a negative index (-1)"),
            ("[4294967296]", "r.rhai:1: it named entry 4294967296, and no session has that many (entries are 0-based)"),
        ] {
            let script = format!("#{{ points: 1, entries: {entries} }}");
            assert_eq!(
                grade_error(&script_pack("10", &script)),
                format!("rubric `t`, rule `r`, session `s`: the script failed: {says}"),
                "{script}"
            );
        }
        let named = grade(
            &script_pack("10", "#{ points: 1, entries: [0, session.entries[0]] }"),
            &[("tasks", "a")],
        );
        assert_eq!(named.dimensions["d"].score.0, 2.0);
    }

    #[test]
    fn a_script_that_gives_nan_or_infinite_points_fails_the_session_naming_the_rule() {
        // In a pack of fractional scores too, where no whole-number check would catch it.
        for (max, script, value) in [
            ("10", "#{ points: 0.0 / 0.0 }", "NaN"),
            ("7.5", "#{ points: 0.0 / 0.0 }", "NaN"),
            ("7.5", "#{ points: 1.0 / 0.0 }", "Infinity"),
            ("10", "#{ points: -1.0 / 0.0 }", "-Infinity"),
        ] {
            assert_eq!(
                grade_error(&script_pack(max, script)),
                format!("rubric `t`, rule `r`, session `s`: the script failed: it gave {value} points at `dimensions[0].rules[1]`, and a grade cannot hold it"),
                "{script} in a pack of max {max}"
            );
        }
        // Finite points keep counting.
        let result = grade(&script_pack("7.5", "#{ points: 2.5 }"), &[("tasks", "a")]);
        assert_eq!(result.dimensions["d"].score.0, 3.5);
    }

    #[test]
    fn a_script_that_gives_integer_points_past_2_pow_53_fails_the_session_naming_the_rule() {
        // A double rounds these to a neighbour (…993 to …992): the grade would be off in silence.
        for value in [
            "9007199254740993",
            "-9007199254740993",
            "9007199254740994",
            "9223372036854775807",
            "-9223372036854775808",
        ] {
            // `i64::MIN` has no literal in Rhai: it is written as one less than its neighbour.
            let script = if value == "-9223372036854775808" {
                "#{ points: -9223372036854775807 - 1 }".to_owned()
            } else {
                format!("#{{ points: {value} }}")
            };
            assert_eq!(
                grade_error(&script_pack("10", &script)),
                format!("rubric `t`, rule `r`, session `s`: the script failed: it gave {value} points at `dimensions[0].rules[1]`, more than a score holds exactly (2^53)"),
                "{script}"
            );
        }
        // Up to 2^53 every integer is a double: the rule's points are what the script wrote
        // (the only rule here, as the running score past 2^53 is a sum of doubles).
        for value in [
            9_007_199_254_740_992_i64,
            -9_007_199_254_740_992,
            9_007_199_254_740_991,
        ] {
            let yaml = "id: t\nversion: '1'\nname: T\ndimensions:\n  - id: d\n    max: 10\n    rules: [ { id: r, doc: d, script: r.rhai } ]\n";
            let mut files = crate::pack::testing::files(yaml);
            files
                .files
                .insert("r.rhai".to_owned(), format!("#{{ points: {value} }}"));
            let pack = match crate::pack::compile_pack(&files) {
                Ok(p) => p,
                Err(err) => panic!("{err}"),
            };
            let result = grade(&pack, &[("tasks", "a")]);
            let traces = &result.explain.as_ref().expect("explained")["d"];
            let trace = traces
                .iter()
                .find(|t| t.rule == "r")
                .expect("rule r traced");
            assert_eq!(trace.points.0, value as f64, "{value}");
            assert_eq!(trace.points.0 as i64, value, "{value}");
        }
        // A decimal past 2^53 is already the double the script computed: nothing was rounded
        // on the way to the score, and the score is clamped to the cap as any is.
        let result = grade(&script_pack("10", "#{ points: 1e300 }"), &[("tasks", "a")]);
        assert_eq!(result.dimensions["d"].score.0, 10.0);
    }
}
