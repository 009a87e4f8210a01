//! Which optional fields of an entry a pack reads, so a source can leave the others
//! unchecked: a `"duration": "fast"` is no reason to refuse a log graded by rules that never
//! look at durations. The set itself, [`FieldsRead`], lives in [`crate::field`].
//!
//! The fields every entry must have (`timestamp`, `sessionId`, `domain`, `operation`,
//! `result.success`) are always checked; these are the optional ones.

use super::template::{Segment, Template};
use super::{CompiledPack, Condition, Metric, RuleKind, Selector};
use crate::field::{FieldsRead, Projection};
use crate::source::ReadOptions;

impl CompiledPack {
    /// How to read a source for this pack alone: only [`CompiledPack::fields_read`] checked,
    /// only its [`CompiledPack::projection`] kept. The binary and the Python package read
    /// with it, so that both build the same entries and grade them the same.
    pub fn read_options(&self, skip_bad_lines: bool) -> ReadOptions {
        ReadOptions {
            checked: self.fields_read(),
            kept: self.projection(),
            skip_bad_lines,
        }
    }

    /// The optional fields this pack's rules, metrics, texts and judge prompt read. Scripts
    /// can read any field, and plugin functions are handed every entry's exit code, duration
    /// and error, so a pack with scripts or plugins reads them all.
    pub fn fields_read(&self) -> FieldsRead {
        self.projection().fields()
    }

    /// What of each entry this pack reads: [`CompiledPack::fields_read`], and of `params`
    /// only the keys its rules, metrics and texts name. A source read for this pack alone
    /// may leave the rest out of its entries.
    pub fn projection(&self) -> Projection {
        if self.scripts.is_some() || !self.plugins.is_empty() {
            return Projection::ALL;
        }
        let mut read = Projection::of_fields(FieldsRead::NONE);
        for selector in &self.selectors {
            read = read.with(&selector_reads(selector));
        }
        for metric in &self.metrics {
            match metric {
                Metric::Duplicates { key, .. } | Metric::Distinct { key, .. } => {
                    read = read.with(&Projection::of_field(key));
                }
                // A call's arguments are its params.
                Metric::Trajectory(_) => {
                    read = read.with(&Projection::of_fields(FieldsRead::PARAMS));
                }
                // Counts of selected entries: what the selectors read, counted above.
                Metric::Ratio { .. } => {}
                // A pack with plugins reads everything (returned above).
                Metric::Native(_) => return Projection::ALL,
            }
        }
        for dimension in &self.dimensions {
            for rule in &dimension.rules {
                match &rule.kind {
                    RuleKind::Session(cases) | RuleKind::ForEach { cases, .. } => {
                        for case in cases {
                            read = read.with(&condition_reads(&case.when));
                            for text in [&case.evidence, &case.flag].into_iter().flatten() {
                                read = read.with(&template_reads(text));
                            }
                        }
                    }
                    RuleKind::Script { .. } | RuleKind::Native(_) => return Projection::ALL,
                }
            }
        }
        if self.judge.is_some() {
            // The prompt's session summary shows params and errors, and counts traces by
            // `metadata.traceId`.
            read = read.with(&Projection::of_fields(
                FieldsRead::PARAMS
                    .with(FieldsRead::ERROR)
                    .with(FieldsRead::METADATA),
            ));
        }
        read
    }
}

fn selector_reads(selector: &Selector) -> Projection {
    match selector {
        Selector::Domain(_) | Selector::Operation(_) | Selector::Success(_) | Selector::Ref(_) => {
            Projection::of_fields(FieldsRead::NONE)
        }
        Selector::ExitCode(_) => Projection::of_fields(FieldsRead::EXIT_CODE),
        Selector::Equals(field, _)
        | Selector::OneOf(field, _)
        | Selector::Truthy(field, _)
        | Selector::Blank(field, _)
        | Selector::Present(field, _)
        | Selector::Contains(field, _)
        | Selector::Type(field, _) => Projection::of_field(field),
        Selector::All(items) | Selector::Any(items) => items
            .iter()
            .fold(Projection::of_fields(FieldsRead::NONE), |read, s| {
                read.with(&selector_reads(s))
            }),
        Selector::Not(inner) => selector_reads(inner),
    }
}

/// Conditions refer to selectors by id (all of which are in the pack's list) and read no
/// field themselves: only what the selectors they name read.
fn condition_reads(condition: &Condition) -> Projection {
    match condition {
        Condition::All(items) | Condition::Any(items) => items
            .iter()
            .fold(Projection::of_fields(FieldsRead::NONE), |read, c| {
                read.with(&condition_reads(c))
            }),
        Condition::Not(inner) => condition_reads(inner),
        // Each names selectors, metrics or the score by id: what those read is counted where
        // they are declared. Every kind is listed, so a new one that reads a field of its own
        // cannot compile without saying so here.
        Condition::Always
        | Condition::Count(_)
        | Condition::Metric(_)
        | Condition::Score(_)
        | Condition::First(_)
        | Condition::Window(_) => Projection::of_fields(FieldsRead::NONE),
        // A pack with plugins reads everything (`projection` returns before it gets here).
        Condition::Native(_) => Projection::ALL,
    }
}

fn template_reads(template: &Template) -> Projection {
    template
        .segments()
        .iter()
        .fold(
            Projection::of_fields(FieldsRead::NONE),
            |read, segment| match segment {
                Segment::EntryField { field, .. } => read.with(&Projection::of_field(field)),
                Segment::Text(_)
                | Segment::Count(_)
                | Segment::Metric(_)
                | Segment::Percent(_)
                | Segment::Score
                | Segment::EntryPosition => read,
            },
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_by(id: &str) -> FieldsRead {
        crate::load_pack(id, &[]).unwrap().fields_read()
    }

    #[test]
    fn the_shipped_packs_read_what_their_rules_name() {
        // CLEO's grader reads params (description, title, parent), exit codes and the
        // gateway in metadata, never durations; its flags print no error text.
        let cleo = FieldsRead::PARAMS
            .with(FieldsRead::EXIT_CODE)
            .with(FieldsRead::METADATA);
        assert_eq!(read_by("cleo-v1"), cleo);
        assert_eq!(read_by("cleo-v2"), cleo);
        assert!(!read_by("cleo-v1").contains(FieldsRead::DURATION));
        assert_eq!(read_by("claude-code-v1"), FieldsRead::ALL, "it has scripts");
        assert!(read_by("langfuse-v1").contains(FieldsRead::PARAMS.with(FieldsRead::ERROR)));
    }

    /// What a reader may leave out for a pack: of params, cleo-v1 names three keys; a pack
    /// with scripts keeps everything.
    #[test]
    fn the_shipped_packs_project_params_to_the_keys_they_name() {
        let project = |id: &str| crate::load_pack(id, &[]).unwrap().projection();
        for id in ["cleo-v1", "cleo-v2"] {
            let p = project(id);
            assert_eq!(p.fields(), read_by(id));
            assert!(!p.keeps_all());
            let keys = p.params_keys().expect("cleo packs name their params");
            assert!(keys.contains(&"title".to_owned()), "{keys:?}");
            assert!(keys.contains(&"description".to_owned()), "{keys:?}");
            assert!(!keys.contains(&"taskId".to_owned()), "{keys:?}");
        }
        assert!(project("claude-code-v1").keeps_all());
        // The judge's prompt shows every param.
        assert_eq!(project("langfuse-v1").params_keys(), None);
    }
}
