//! Selectors decided ahead of time. Most selectors test only an entry's domain, operation,
//! success and exit code, each of which takes one of a few values that matter to the pack
//! (the names and codes its selectors mention, or "another"). For every combination of those
//! values, such selectors are evaluated once, when the pack compiles; grading an entry then
//! reads their decisions from one row instead of walking each selector.

use super::{EntryKeys, Selector, Vocabulary};

/// Combinations at most: beyond this the table would cost more memory than it saves time.
const MAX_ROWS: usize = 1 << 16;

#[derive(Debug, Clone)]
pub(crate) struct DecidedSelectors {
    /// Whether each selector is decided by the table.
    pub decided: Vec<bool>,
    words: usize,
    operations: usize,
    exit_codes: usize,
    /// One row of `words` bit words per combination.
    bits: Vec<u64>,
}

impl DecidedSelectors {
    /// The table for `selectors`, or `None` when no selector can be decided ahead or there
    /// are too many combinations.
    pub fn build(selectors: &[Selector], vocabulary: &Vocabulary) -> Option<DecidedSelectors> {
        let mut known = vec![Known::Unknown; selectors.len()];
        let decided: Vec<bool> = selectors
            .iter()
            .map(|s| is_decidable(s, selectors, &mut known))
            .collect();
        if !decided.contains(&true) {
            return None;
        }
        let (domains, operations, exit_codes) = vocabulary.sizes();
        // Each size counts "another" as one more value.
        let (domains, operations, exit_codes) = (domains + 1, operations + 1, exit_codes + 1);
        let rows = domains
            .checked_mul(operations)?
            .checked_mul(exit_codes)?
            .checked_mul(2)?;
        if rows > MAX_ROWS {
            return None;
        }
        let words = selectors.len().div_ceil(64);
        let mut bits = vec![0u64; rows * words];
        for domain in 0..domains {
            for operation in 0..operations {
                for exit_code in 0..exit_codes {
                    for success in [false, true] {
                        let keys = EntryKeys {
                            domain: domain as u32,
                            operation: operation as u32,
                            exit_code: exit_code as u32,
                        };
                        let row = row_index(keys, success, operations, exit_codes) * words;
                        let mut memo = vec![None; selectors.len()];
                        for (s, selector) in selectors.iter().enumerate() {
                            if decided[s] && decide(selector, selectors, keys, success, &mut memo) {
                                bits[row + s / 64] |= 1 << (s % 64);
                            }
                        }
                    }
                }
            }
        }
        Some(DecidedSelectors {
            decided,
            words,
            operations,
            exit_codes,
            bits,
        })
    }

    /// The decisions for an entry with these keys and success.
    pub fn row(&self, keys: EntryKeys, success: bool) -> &[u64] {
        let at = row_index(keys, success, self.operations, self.exit_codes) * self.words;
        &self.bits[at..at + self.words]
    }
}

fn row_index(keys: EntryKeys, success: bool, operations: usize, exit_codes: usize) -> usize {
    ((keys.domain as usize * operations + keys.operation as usize) * exit_codes
        + keys.exit_code as usize)
        * 2
        + usize::from(success)
}

/// What [`is_decidable`] knows of a selector: a graph of references that doubles at each level
/// (`s2: {any: [s1, s1]}`) is walked once per selector, not once per path.
#[derive(Clone, Copy, PartialEq)]
enum Known {
    Unknown,
    Visiting,
    Decidable(bool),
}

/// Whether the selector tests nothing but domain, operation, success and exit code. A
/// reference that leads back to itself (an invalid pack) is not decidable.
fn is_decidable(selector: &Selector, selectors: &[Selector], known: &mut [Known]) -> bool {
    match selector {
        Selector::Domain(_) | Selector::Operation(_) | Selector::Success(_) => true,
        Selector::ExitCode(_) => true,
        Selector::Ref(id) => match (selectors.get(*id), known.get(*id).copied()) {
            (Some(_), Some(Known::Decidable(answer))) => answer,
            (Some(target), Some(Known::Unknown)) => {
                known[*id] = Known::Visiting;
                let decidable = is_decidable(target, selectors, known);
                known[*id] = Known::Decidable(decidable);
                decidable
            }
            _ => false,
        },
        Selector::All(items) | Selector::Any(items) => items
            .iter()
            .all(|item| is_decidable(item, selectors, known)),
        Selector::Not(inner) => is_decidable(inner, selectors, known),
        Selector::Equals(..)
        | Selector::OneOf(..)
        | Selector::Truthy(..)
        | Selector::Blank(..)
        | Selector::Present(..)
        | Selector::Contains(..)
        | Selector::Type(..) => false,
    }
}

/// A decidable selector's decision for one combination ([`is_decidable`] has found its
/// references acyclic); `memo` holds the referenced selectors already decided for it.
fn decide(
    selector: &Selector,
    selectors: &[Selector],
    keys: EntryKeys,
    success: bool,
    memo: &mut [Option<bool>],
) -> bool {
    match selector {
        Selector::Domain(names) => names.ids.contains(&keys.domain),
        Selector::Operation(names) => names.ids.contains(&keys.operation),
        Selector::ExitCode(codes) => codes.ids.contains(&keys.exit_code),
        Selector::Success(want) => success == *want,
        Selector::Ref(id) => {
            if let Some(Some(answer)) = memo.get(*id) {
                return *answer;
            }
            let answer = selectors
                .get(*id)
                .is_some_and(|s| decide(s, selectors, keys, success, memo));
            if let Some(slot) = memo.get_mut(*id) {
                *slot = Some(answer);
            }
            answer
        }
        Selector::All(items) => items
            .iter()
            .all(|s| decide(s, selectors, keys, success, memo)),
        Selector::Any(items) => items
            .iter()
            .any(|s| decide(s, selectors, keys, success, memo)),
        Selector::Not(inner) => !decide(inner, selectors, keys, success, memo),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::entry::{Entry, Metadata, Outcome, Params};

    /// Every builtin pack, every decided selector, every combination of values its
    /// selectors mention and values they do not: the table says what evaluating says.
    #[test]
    fn decided_selectors_agree_with_evaluating_them() {
        let domains = [
            "tasks", "session", "admin", "tools", "skills", "tool", "message", "x",
        ];
        let operations = [
            "find",
            "list",
            "show",
            "add",
            "end",
            "exists",
            "help",
            "skill.show",
            "Bash",
            "y",
        ];
        let mut checked = 0;
        for id in crate::builtin_pack_ids() {
            let files = crate::builtin_pack(id).expect("builtin");
            let pack = crate::compile_pack(&files).expect("compiles");
            let Some(table) = &pack.decided else { continue };
            for domain in domains {
                for operation in operations {
                    for exit_code in [0, 1, 4, 6, 7] {
                        for success in [false, true] {
                            let entry = Entry {
                                timestamp: "2026-03-01T00:00:00Z".into(),
                                instant: Default::default(),
                                session_id: "s".into(),
                                domain: domain.into(),
                                operation: operation.into(),
                                params: Params::new(),
                                result: Outcome {
                                    success,
                                    exit_code,
                                    duration: 0.0,
                                },
                                metadata: Metadata::with_source("mcp"),
                                error: None,
                                origin: crate::entry::Origin::UNKNOWN,
                            };
                            let keys = pack.vocabulary.keys(&entry);
                            let row = table.row(keys, success);
                            for (s, selector) in pack.selectors.iter().enumerate() {
                                if !table.decided[s] {
                                    continue;
                                }
                                let from_table = row[s / 64] >> (s % 64) & 1 == 1;
                                let evaluated = pack.matches(
                                    selector,
                                    &entry,
                                    keys,
                                    &crate::eval::Decisions::new(0),
                                );
                                assert_eq!(
                                    from_table, evaluated,
                                    "{id}: selector {s} on {domain}.{operation} exit {exit_code} success {success}"
                                );
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 10_000, "only {checked} decisions checked");
    }

    /// The conformance corpus graded by each CLEO pack with and without the table.
    #[test]
    fn grades_do_not_depend_on_the_table() {
        let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/conformance/audit.jsonl");
        let sessions = crate::read_sessions(&log, &crate::SessionFilter::All).expect("reads");
        let options = crate::GradeOptions::default();
        for id in ["cleo-v1", "cleo-v2"] {
            let files = crate::builtin_pack(id).expect("builtin");
            let with_table = crate::compile_pack(&files).expect("compiles");
            let mut without = crate::compile_pack(&files).expect("compiles");
            assert!(
                with_table.decided.is_some(),
                "{id} has selectors to decide ahead"
            );
            without.decided = None;
            for session in &sessions {
                let mut a = with_table.grade(session, &options).expect("grades");
                let mut b = without.grade(session, &options).expect("grades");
                a.timestamp.clear();
                b.timestamp.clear();
                assert_eq!(
                    serde_json::to_value(&a).unwrap(),
                    serde_json::to_value(&b).unwrap(),
                    "{id} on {}",
                    session.id
                );
            }
        }
    }

    #[test]
    fn too_many_combinations_leave_selectors_to_evaluation() {
        let mut vocabulary = super::Vocabulary::default();
        let names: Vec<String> = (0..300).map(|i| format!("n{i}")).collect();
        let domains = vocabulary.domains(&names);
        let operations = vocabulary.operations(&names);
        let selectors = [super::Selector::All(vec![
            super::Selector::Domain(domains),
            super::Selector::Operation(operations),
        ])];
        assert!(super::DecidedSelectors::build(&selectors, &vocabulary).is_none());
        let small = super::Vocabulary::default();
        assert!(
            super::DecidedSelectors::build(&[super::Selector::Success(true)], &small).is_some()
        );
    }
}
