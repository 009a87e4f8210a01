//! Rule coverage: how often each rule of a pack fired over its fixtures.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::{CompiledPack, GradeResult};

/// In how many fixture sessions each rule gave points, evidence or a flag.
#[derive(Debug)]
pub struct Coverage {
    rules: Vec<(String, String)>,
    counts: BTreeMap<(String, String), [usize; 4]>,
}

impl Coverage {
    /// No session seen yet, for the rules of `pack`.
    pub fn new(pack: &CompiledPack) -> Coverage {
        let rules = pack
            .dimensions
            .iter()
            .flat_map(|d| d.rules.iter().map(|r| (d.id.clone(), r.id.clone())))
            .collect();
        Coverage {
            rules,
            counts: BTreeMap::new(),
        }
    }

    /// Counts what each rule did in `result` (from its `explain` traces).
    pub fn record(&mut self, result: &GradeResult) {
        let Some(explain) = &result.explain else {
            return;
        };
        for (dimension, traces) in explain {
            for t in traces {
                let c = self
                    .counts
                    .entry((dimension.clone(), t.rule.clone()))
                    .or_default();
                if t.points.0 > 0.0 {
                    c[0] += 1;
                }
                if t.points.0 < 0.0 {
                    c[1] += 1;
                }
                if !t.flags.is_empty() {
                    c[2] += 1;
                }
                if t.points.0 != 0.0 || !t.flags.is_empty() || !t.evidence.is_empty() {
                    c[3] += 1;
                }
            }
        }
    }

    fn fired(&self, key: &(String, String)) -> usize {
        self.counts.get(key).map_or(0, |c| c[3])
    }

    /// The share of the rules that fired at least once, as a percentage.
    pub fn percent(&self) -> f64 {
        if self.rules.is_empty() {
            return 100.0;
        }
        let fired = self.rules.iter().filter(|k| self.fired(k) > 0).count();
        crate::result::percent_of(fired as f64, self.rules.len() as f64)
    }

    /// The rules that never fired, as `` `dimension/rule` ``.
    pub fn never_fired(&self) -> Vec<String> {
        self.rules
            .iter()
            .filter(|k| self.fired(k) == 0)
            .map(|(d, r)| format!("`{d}/{r}`"))
            .collect()
    }

    /// A table of every rule: sessions it awarded, deducted, flagged and fired in.
    pub fn table(&self) -> String {
        let width = self
            .rules
            .iter()
            .map(|(d, r)| d.len() + r.len() + 1)
            .max()
            .unwrap_or(4)
            .max(4);
        let mut out = format!(
            "{:<width$}  {:>7}  {:>8}  {:>7}  {:>5}\n",
            "RULE", "AWARDED", "DEDUCTED", "FLAGGED", "FIRED"
        );
        for key in &self.rules {
            let c = self.counts.get(key).copied().unwrap_or_default();
            let name = format!("{}/{}", key.0, key.1);
            let mark = if c[3] == 0 { "  never" } else { "" };
            let _ = writeln!(
                out,
                "{name:<width$}  {:>7}  {:>8}  {:>7}  {:>5}{mark}",
                c[0], c[1], c[2], c[3]
            );
        }
        let fired = self.rules.iter().filter(|k| self.fired(k) > 0).count();
        let _ = writeln!(
            out,
            "coverage: {fired} of {} rules fired ({}%)",
            self.rules.len(),
            crate::entry::js_number(self.percent())
        );
        out
    }
}
