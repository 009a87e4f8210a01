//! Sessions a caller named: which of them a source does not hold, the message that says so
//! (with the closest ids it does hold), and the sessions in the order named.
//!
//! CLEO's grader gives a named session the source does not hold the empty-session grade and
//! records it; a typo then lands a zero in the grades file in silence. The `grade` binary
//! and the Python module refuse it instead, with [`not_found_lines`], unless asked for
//! CLEO's way.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::text::distance;
use crate::Session;

/// How many close ids a message suggests at most.
const SUGGESTIONS: usize = 3;
/// How many missing sessions the error names, one line each.
const NAMED_MISSING: usize = 10;
/// How many sessions a source may hold for the error to name them all.
const NAMED_HELD: usize = 5;

/// The named ids not among `held` (the ids of sessions with entries), each once, in the
/// order named.
pub fn missing<'a, 'h>(
    held: impl IntoIterator<Item = &'h str>,
    asked: &'a [String],
) -> Vec<&'a str> {
    // Sets, since a list of sessions may be as long as the source's.
    let held: HashSet<&str> = held.into_iter().collect();
    let mut said = HashSet::new();
    asked
        .iter()
        .map(String::as_str)
        .filter(|id| !held.contains(id) && said.insert(*id))
        .collect()
}

/// The ids of the sessions the source holds: with entries, or whose every line was skipped
/// (graded as an empty session that says so, as a whole source's grading grades it).
pub fn held(sessions: &[Session]) -> impl Iterator<Item = &str> {
    sessions
        .iter()
        .filter(|s| !s.entries.is_empty() || s.skipped_lines > 0)
        .map(|s| s.id.as_str())
}

/// The lines of the error for ids the source has no entries for, with the closest of the ids
/// it holds (`known`; `None` when they could not be read): one line per session (the first
/// ten, then a count), the way out on the last, so that a reader of the first line alone
/// gets a whole sentence. `allow_empty` names the way out (the binary's flag, say).
pub fn not_found_lines(
    missing: &[&str],
    source: &Path,
    known: Option<&[String]>,
    allow_empty: &str,
) -> Vec<String> {
    let mut lines = Vec::new();
    // A list of sessions meant for another source may miss thousands: the first few, with
    // suggestions (each weighed against every id held), tell what happened.
    for id in missing.iter().take(NAMED_MISSING) {
        let close = closest(id, known.unwrap_or_default());
        let hint = if close.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = close.iter().map(|c| format!("`{c}`")).collect();
            format!(" (did you mean {}?)", names.join(" or "))
        };
        lines.push(format!(
            "session `{id}` has no entries in `{}`{hint}",
            source.display()
        ));
    }
    if missing.len() > NAMED_MISSING {
        lines.push(format!(
            "{} more of the sessions named have no entries in `{}`",
            missing.len() - NAMED_MISSING,
            source.display()
        ));
    }
    // A source of a few sessions names them: a trace id given for a session id was met by
    // "it holds 1 session", and the id to give was nowhere.
    let holds = match known {
        None => String::new(),
        Some([]) => "; it holds no sessions".to_owned(),
        Some(ids) if ids.len() <= NAMED_HELD => {
            let plural = if ids.len() == 1 { "" } else { "s" };
            let named: Vec<String> = ids.iter().map(|id| format!("`{id}`")).collect();
            format!(
                "; it holds {} session{plural}: {}",
                ids.len(),
                named.join(", ")
            )
        }
        Some(ids) => format!("; it holds {} sessions", ids.len()),
    };
    let way_out = format!(
        "{holds} ({allow_empty} grades a session without entries anyway, with the empty-session grade)"
    );
    match lines.last_mut() {
        Some(last) => last.push_str(&way_out),
        None => lines.push(way_out),
    }
    lines
}

/// The error of a comparison over named sessions that the source does not all hold.
pub(crate) fn no_entries_for(missing: &[&str], source: &Path) -> String {
    let named: Vec<String> = missing.iter().map(|id| format!("`{id}`")).collect();
    format!(
        "no entries for session{} {} in `{}`",
        if named.len() == 1 { "" } else { "s" },
        named.join(", "),
        source.display()
    )
}

/// The warning for a named session graded without entries (`--allow-empty`): it gets the
/// empty-session grade.
pub fn empty_session_warning(id: &str, source: &Path) -> String {
    format!(
        "session `{id}` has no entries in `{}`; it gets the empty-session grade",
        source.display()
    )
}

/// Up to three known ids close to `id`: those sharing a prefix with it, then those within a
/// few edits, nearest first.
fn closest<'k>(id: &str, known: &'k [String]) -> Vec<&'k str> {
    let limit = (id.chars().count() / 3).clamp(1, 4);
    let mut scored: Vec<(usize, &str)> = known
        .iter()
        .filter(|k| k.as_str() != id)
        .filter_map(|k| {
            let d = distance(id, k);
            let prefix = !id.is_empty() && (k.starts_with(id) || id.starts_with(k.as_str()));
            (d <= limit || prefix).then_some((if prefix { 0 } else { d }, k.as_str()))
        })
        .collect();
    scored.sort();
    scored.dedup();
    scored
        .into_iter()
        .take(SUGGESTIONS)
        .map(|(_, k)| k)
        .collect()
}

/// The sessions in the order they were named, one per mention: a session named twice is
/// graded twice (a copy for every mention but the last), and one the source does not hold
/// gets no entries. A session the source does not hold may still have lost the skipped
/// lines whose session could not be read (`lost_to_unknown`).
pub fn in_order_asked(
    sessions: Vec<Session>,
    asked: &[String],
    lost_to_unknown: u64,
) -> Vec<Session> {
    let mut mentions: HashMap<&str, usize> = HashMap::new();
    for id in asked {
        *mentions.entry(id).or_default() += 1;
    }
    let mut by_id: HashMap<String, Session> =
        sessions.into_iter().map(|s| (s.id.clone(), s)).collect();
    asked
        .iter()
        .map(|id| {
            let left = mentions.get_mut(id.as_str()).map(|n| {
                *n -= 1;
                *n
            });
            let found = if left == Some(0) {
                by_id.remove(id)
            } else {
                by_id.get(id).cloned()
            };
            found.unwrap_or_else(|| Session {
                id: id.clone(),
                entries: Vec::new(),
                skipped_lines: lost_to_unknown,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SessionFilter;

    /// Thousands of ids named against the wrong source: each is looked for once, and the
    /// error names the first few and counts the rest.
    #[test]
    fn thousands_of_missing_ids_are_found_once_and_named_ten_then_counted() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("audit.jsonl");
        std::fs::write(
            &source,
            r#"{"timestamp":"2026-03-01T00:00:00.000Z","sessionId":"s-held","domain":"tasks","operation":"show","params":{},"result":{"success":true,"exitCode":0,"duration":1},"metadata":{"source":"mcp"}}"#,
        )
        .unwrap();
        let sessions = crate::read_source(&source, None, &SessionFilter::All)
            .unwrap()
            .sessions;
        let mut asked: Vec<String> = (0..20_000).map(|i| format!("s-{i}")).collect();
        asked.push("s-held".to_owned());
        asked.push("s-7".to_owned());
        let missing = missing(held(&sessions), &asked);
        assert_eq!(
            missing.len(),
            20_000,
            "each missing id once, the held one not"
        );
        assert_eq!(&missing[..2], ["s-0", "s-1"], "in the order named");

        let known: Vec<String> = sessions.iter().map(|s| s.id.clone()).collect();
        let lines = not_found_lines(&missing, &source, Some(&known), "`--allow-empty`");
        assert_eq!(lines.len(), 11, "{lines:?}");
        assert!(
            lines[9].contains("session `s-9` has no entries"),
            "{lines:?}"
        );
        assert!(!lines.iter().any(|l| l.contains("`s-10`")), "{lines:?}");
        assert!(
            lines[10].contains("19990 more of the sessions named have no entries in"),
            "{lines:?}"
        );
        assert!(lines[10].ends_with("; it holds 1 session: `s-held` (`--allow-empty` grades a session without entries anyway, with the empty-session grade)"), "{lines:?}");
        let unread = not_found_lines(&missing[..1], &source, None, "`--allow-empty`");
        assert!(
            !unread.concat().contains("it holds"),
            "nothing said of sessions not read: {unread:?}"
        );
    }

    /// A trace id given for the session id of a source of one session was met by "it holds
    /// 1 session", and the id to give was nowhere (issue 48, friction 6): a source of a few
    /// sessions names them all, a larger one counts them.
    #[test]
    fn a_source_of_a_few_sessions_names_them_when_an_id_is_not_there() {
        let source = Path::new("trace.json");
        let one = ["5c0375b4-57a5".to_owned()];
        let lines = not_found_lines(&["trace-9f2e"], source, Some(&one), "`--allow-empty`");
        assert_eq!(lines, ["session `trace-9f2e` has no entries in `trace.json`; it holds 1 session: `5c0375b4-57a5` (`--allow-empty` grades a session without entries anyway, with the empty-session grade)"]);
        let six: Vec<String> = (0..6).map(|i| format!("held-{i}")).collect();
        let lines = not_found_lines(&["other"], source, Some(&six), "`--allow-empty`");
        assert!(lines[0].contains("; it holds 6 sessions ("), "{lines:?}");
    }

    /// A session whose every line was skipped is held by the source: a whole source's
    /// grading grades it as an empty session that says so, and naming it does the same
    /// instead of refusing it with itself as the suggestion.
    #[test]
    fn a_session_whose_every_line_was_skipped_is_held_not_missing() {
        let sessions = [Session {
            id: "t".to_owned(),
            entries: Vec::new(),
            skipped_lines: 1,
        }];
        assert!(missing(held(&sessions), &["t".to_owned()]).is_empty());
        assert!(
            closest("t", &["t".to_owned()]).is_empty(),
            "not its own suggestion"
        );
    }

    #[test]
    fn close_ids_are_typos_and_prefixes_nearest_first() {
        let known: Vec<String> = ["session-123", "session-124", "other", "session-1234567"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            closest("sesion-123", &known),
            ["session-123", "session-124"]
        );
        assert_eq!(
            closest("session-12345", &known),
            ["session-123", "session-1234567", "session-124"]
        );
        assert!(closest("zzzz", &known).is_empty());
    }
}
