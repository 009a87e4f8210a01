//! Which optional fields of an entry a pack reads, so a source can leave the others
//! unchecked: a `"duration": "fast"` is no reason to refuse a log graded by rules that never
//! look at durations.
//!
//! The fields every entry must have (`timestamp`, `sessionId`, `domain`, `operation`,
//! `result.success`) are always checked; these are the optional ones.

use super::field::Field;
use super::template::{Segment, Template};
use super::{CompiledPack, Condition, Metric, RuleKind, Selector};

/// A set of an entry's optional fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldsRead(u8);

impl FieldsRead {
    /// `params`: an object.
    pub const PARAMS: FieldsRead = FieldsRead(1);
    /// `result.exitCode`: an integer (`4`, `4.0` or `4e0`).
    pub const EXIT_CODE: FieldsRead = FieldsRead(1 << 1);
    /// `result.duration`: a number.
    pub const DURATION: FieldsRead = FieldsRead(1 << 2);
    /// `error`: a string.
    pub const ERROR: FieldsRead = FieldsRead(1 << 3);
    /// `metadata`: an object.
    pub const METADATA: FieldsRead = FieldsRead(1 << 4);
    /// No optional field.
    pub const NONE: FieldsRead = FieldsRead(0);
    /// Every optional field: what a reader checks when it is not told what is read.
    pub const ALL: FieldsRead = FieldsRead(0b1_1111);

    /// Whether every field of `other` is in `self`.
    pub fn contains(self, other: FieldsRead) -> bool {
        self.0 & other.0 == other.0
    }

    /// The fields of both.
    pub fn with(self, other: FieldsRead) -> FieldsRead {
        FieldsRead(self.0 | other.0)
    }

    /// The optional field a field path reads, if it reads one.
    pub fn of_field(field: &Field) -> FieldsRead {
        match field {
            Field::Params(_) => FieldsRead::PARAMS,
            Field::ExitCode => FieldsRead::EXIT_CODE,
            Field::Duration => FieldsRead::DURATION,
            Field::Error => FieldsRead::ERROR,
            Field::Metadata(..) => FieldsRead::METADATA,
            Field::Timestamp
            | Field::SessionId
            | Field::Domain
            | Field::Operation
            | Field::Success => FieldsRead::NONE,
        }
    }
}

impl Default for FieldsRead {
    fn default() -> Self {
        FieldsRead::ALL
    }
}

impl CompiledPack {
    /// The optional fields this pack's rules, metrics, texts and judge prompt read. Scripts
    /// can read any field, and plugin functions are handed every entry's exit code, duration
    /// and error, so a pack with scripts or plugins reads them all.
    pub fn fields_read(&self) -> FieldsRead {
        if self.scripts.is_some() || !self.plugins.is_empty() {
            return FieldsRead::ALL;
        }
        let mut read = FieldsRead::NONE;
        for selector in &self.selectors {
            read = read.with(selector_reads(selector));
        }
        for metric in &self.metrics {
            if let Metric::Duplicates { key, .. } | Metric::Distinct { key, .. } = metric {
                read = read.with(FieldsRead::of_field(key));
            }
        }
        for dimension in &self.dimensions {
            for rule in &dimension.rules {
                match &rule.kind {
                    RuleKind::Session(cases) | RuleKind::ForEach { cases, .. } => {
                        for case in cases {
                            read = read.with(condition_reads(&case.when));
                            for text in [&case.evidence, &case.flag].into_iter().flatten() {
                                read = read.with(template_reads(text));
                            }
                        }
                    }
                    RuleKind::Script { .. } | RuleKind::Native(_) => return FieldsRead::ALL,
                }
            }
        }
        if self.judge.is_some() {
            // The prompt's session summary shows params and errors, and counts traces by
            // `metadata.traceId`.
            read = read
                .with(FieldsRead::PARAMS)
                .with(FieldsRead::ERROR)
                .with(FieldsRead::METADATA);
        }
        read
    }
}

fn selector_reads(selector: &Selector) -> FieldsRead {
    match selector {
        Selector::Domain(_) | Selector::Operation(_) | Selector::Success(_) | Selector::Ref(_) => {
            FieldsRead::NONE
        }
        Selector::ExitCode(_) => FieldsRead::EXIT_CODE,
        Selector::Equals(field, _)
        | Selector::OneOf(field, _)
        | Selector::Truthy(field, _)
        | Selector::Blank(field, _)
        | Selector::Present(field, _)
        | Selector::Contains(field, _)
        | Selector::Type(field, _) => FieldsRead::of_field(field),
        Selector::All(items) | Selector::Any(items) => items
            .iter()
            .fold(FieldsRead::NONE, |read, s| read.with(selector_reads(s))),
        Selector::Not(inner) => selector_reads(inner),
    }
}

/// Conditions refer to selectors by id (all of which are in the pack's list) and read no
/// field themselves: only what the selectors they name read.
fn condition_reads(condition: &Condition) -> FieldsRead {
    match condition {
        Condition::All(items) | Condition::Any(items) => items
            .iter()
            .fold(FieldsRead::NONE, |read, c| read.with(condition_reads(c))),
        Condition::Not(inner) => condition_reads(inner),
        _ => FieldsRead::NONE,
    }
}

fn template_reads(template: &Template) -> FieldsRead {
    template
        .segments()
        .iter()
        .fold(FieldsRead::NONE, |read, segment| match segment {
            Segment::EntryField { field, .. } => read.with(FieldsRead::of_field(field)),
            _ => read,
        })
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
}
