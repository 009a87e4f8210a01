//! Session ids the user named that the source does not hold.
//!
//! CLEO's grader gives such a session the empty-session grade and records it; a typo then
//! lands a zero in the grades file in silence. `grade` refuses instead, naming the source
//! and the ids it does hold that look closest, unless `--allow-empty` asks for CLEO's way.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use grade_engine::source::Input;
use grade_engine::{Session, SessionFilter, SourceRead};

use crate::args::Cli;
use crate::error::CliError;
use crate::plan::SourcePlan;
use crate::{http, langfuse};

/// How many close ids a message suggests at most.
const SUGGESTIONS: usize = 3;
/// How many missing sessions the error names, one line each.
const NAMED_MISSING: usize = 10;

/// The named ids not among `held` (the ids of sessions with entries), each once, in the
/// order named: what `grade` and `grade compare` refuse.
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
/// (graded as an empty session that says so, as `--all` grades it).
fn with_entries(sessions: &[Session]) -> impl Iterator<Item = &str> {
    sessions
        .iter()
        .filter(|s| !s.entries.is_empty() || s.skipped_lines > 0)
        .map(|s| s.id.as_str())
}

/// The error for ids the source has no entries for, with the closest of the ids it holds
/// (`known`; `None` when they could not be read).
pub fn not_found(missing: &[&str], source: &Path, known: Option<&[String]>) -> CliError {
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
    let (first, rest) = lines
        .split_first()
        .map_or((String::new(), &[][..]), |(f, r)| (f.clone(), r));
    let mut message = first;
    for line in rest {
        message.push_str("\nerror: ");
        message.push_str(line);
    }
    let holds = match known.map(<[String]>::len) {
        None => String::new(),
        Some(0) => "; it holds no sessions".to_owned(),
        Some(1) => "; it holds 1 session".to_owned(),
        Some(n) => format!("; it holds {n} sessions"),
    };
    // One line per session, the way out on the last: a tool reading the first error line
    // (the MCP server does) gets a whole sentence.
    message.push_str(&format!(
        "{holds} (`--allow-empty` grades a session without entries anyway, with the empty-session grade)"
    ));
    CliError::Usage(message)
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

/// Levenshtein distance over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The sessions the command line names (or all of them with `--all`) in the order asked,
/// with how many malformed lines were skipped; the source's warnings go to `warn`.
pub(crate) fn named_sessions(
    cli: &Cli,
    plan: &SourcePlan,
    warn: &mut dyn FnMut(String),
) -> Result<(Vec<Session>, u64), CliError> {
    named_sessions_files(cli, plan, warn).map(|(sessions, skipped, _)| (sessions, skipped))
}

/// The file each session of a run of several sources came from, by session id (an id is in
/// one file only: the read refuses one in two).
pub(crate) type SessionFiles = HashMap<String, std::path::PathBuf>;

/// [`named_sessions`], with the file each session came from when the plan reads several.
pub(crate) fn named_sessions_files(
    cli: &Cli,
    plan: &SourcePlan,
    warn: &mut dyn FnMut(String),
) -> Result<(Vec<Session>, u64, SessionFiles), CliError> {
    let filter = if cli.all {
        SessionFilter::All
    } else {
        SessionFilter::only(cli.sessions.iter().cloned())
    };
    let mut lost_to_unknown = 0;
    let mut skipped_lines = 0;
    let mut files = SessionFiles::new();
    let sessions = if plan.judgment_only {
        Vec::new()
    } else {
        let (read, read_from) = read_source_files(plan, &filter)?;
        for warning in &read.warnings {
            warn(warning.to_string());
        }
        skipped_lines = read.skipped_lines;
        lost_to_unknown = read.skipped_unattributed;
        files = read
            .sessions
            .iter()
            .map(|s| s.id.clone())
            .zip(read_from)
            .collect();
        read.sessions
    };
    // Results come out in the order asked; a session without entries still gets a grade.
    let ordered = if cli.all {
        sessions
    } else {
        // A named session the source does not hold is refused (a typo would otherwise record
        // a zero), unless `--allow-empty` asks for CLEO's way. With lines skipped whose
        // session could not be read, it may be in one of them: it is graded (and marked).
        if !cli.allow_empty && !plan.judgment_only && cli.judgment.is_none() && lost_to_unknown == 0
        {
            let missing = missing(with_entries(&sessions), &cli.sessions);
            if !missing.is_empty() {
                // Only on this path is the whole source read for its ids, as it was read
                // (with `--skip-bad-lines`, say).
                let known: Option<Vec<String>> = read_source(plan, &SessionFilter::All)
                    .ok()
                    .map(|read| read.sessions.into_iter().map(|s| s.id).collect());
                return Err(not_found(&missing, &plan.path, known.as_deref()));
            }
        }
        in_order_asked(sessions, &cli.sessions, lost_to_unknown)
    };
    Ok((ordered, skipped_lines, files))
}

/// The sessions of the planned source that `filter` wants: from the Langfuse API, or read
/// through the registry.
fn read_source(plan: &SourcePlan, filter: &SessionFilter) -> Result<SourceRead, CliError> {
    read_source_files(plan, filter).map(|(read, _)| read)
}

/// [`read_source`], with the file each session came from when the plan reads several
/// (empty otherwise).
fn read_source_files(
    plan: &SourcePlan,
    filter: &SessionFilter,
) -> Result<(SourceRead, Vec<std::path::PathBuf>), CliError> {
    if let Some(several) = &plan.several {
        let read =
            plan.registry
                .read_sources(several, plan.format.as_deref(), filter, &plan.read)?;
        return Ok((read.read, read.files));
    }
    read_source_single(plan, filter).map(|read| (read, Vec::new()))
}

fn read_source_single(plan: &SourcePlan, filter: &SessionFilter) -> Result<SourceRead, CliError> {
    let Some(remote) = &plan.remote else {
        let input = Input::File(&plan.path);
        return Ok(plan
            .registry
            .read(&input, plan.format.as_deref(), filter, &plan.read)?);
    };
    let server = langfuse::server::Server::from_env(
        &format!("`--source {}`", remote.shown()),
        std::time::Duration::from_secs(60),
        http::Retry {
            attempts: 4,
            backoff: std::time::Duration::from_millis(500),
            max_wait: std::time::Duration::from_secs(60),
        },
    )?;
    let caps = langfuse::fetch::Caps::from_env()?;
    langfuse::fetch::read(remote, &server, filter, &plan.read, caps)
}

/// The sessions in the order they were named, one per mention: a session named twice is
/// graded twice (a copy for every mention but the last), and one the source does not hold
/// gets no entries.
/// A session the source does not hold may still have lost the skipped lines whose session
/// could not be read (`lost_to_unknown`).
fn in_order_asked(sessions: Vec<Session>, asked: &[String], lost_to_unknown: u64) -> Vec<Session> {
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
        let held = grade_engine::read_source(&source, None, &SessionFilter::All)
            .unwrap()
            .sessions;
        let mut asked: Vec<String> = (0..20_000).map(|i| format!("s-{i}")).collect();
        asked.push("s-held".to_owned());
        asked.push("s-7".to_owned());
        let missing = missing(with_entries(&held), &asked);
        assert_eq!(
            missing.len(),
            20_000,
            "each missing id once, the held one not"
        );
        assert_eq!(&missing[..2], ["s-0", "s-1"], "in the order named");

        let known: Vec<String> = held.iter().map(|s| s.id.clone()).collect();
        let message = not_found(&missing, &source, Some(&known)).to_string();
        assert_eq!(message.lines().count(), 11, "{message}");
        assert!(
            message.contains("session `s-9` has no entries"),
            "{message}"
        );
        assert!(!message.contains("`s-10`"), "{message}");
        assert!(
            message.contains("19990 more of the sessions named have no entries in"),
            "{message}"
        );
        assert!(message.ends_with("; it holds 1 session (`--allow-empty` grades a session without entries anyway, with the empty-session grade)"), "{message}");
        let unread = not_found(&missing[..1], &source, None).to_string();
        assert!(
            !unread.contains("it holds"),
            "nothing said of sessions not read: {unread}"
        );
    }

    /// A session whose every line was skipped is held by the source: `--all` grades it as an
    /// empty session that says so, and naming it does the same instead of refusing it with
    /// itself as the suggestion.
    #[test]
    fn a_session_whose_every_line_was_skipped_is_held_not_missing() {
        let sessions = [Session {
            id: "t".to_owned(),
            entries: Vec::new(),
            skipped_lines: 1,
        }];
        assert!(missing(with_entries(&sessions), &["t".to_owned()]).is_empty());
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
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
