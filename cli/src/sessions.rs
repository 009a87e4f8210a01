//! Session ids the user named that the source does not hold.
//!
//! CLEO's grader gives such a session the empty-session grade and records it; a typo then
//! lands a zero in the grades file in silence. `grade` refuses instead, naming the source
//! and the ids it does hold that look closest, unless `--allow-empty` asks for CLEO's way.

use std::collections::HashMap;
use std::path::Path;

use grade_engine::named;
use grade_engine::source::Input;
use grade_engine::{Session, SessionFilter, SourceRead};

use crate::error::CliError;
use crate::plan::{Selection, SourcePlan};
use crate::{http, langfuse};

pub use grade_engine::named::missing;

/// The error for ids the source has no entries for, with the closest of the ids it holds
/// (`known`; `None` when they could not be read): each line of the engine's message an
/// `error:` line.
pub fn not_found(missing: &[&str], source: &Path, known: Option<&[String]>) -> CliError {
    CliError::Usage(
        named::not_found_lines(missing, source, known, "`--allow-empty`").join("\nerror: "),
    )
}

/// The sessions the command line names (or all of them with `--all`) in the order asked,
/// with how many malformed lines were skipped; the source's warnings go to `warn`.
pub(crate) fn named_sessions(
    selection: &Selection,
    plan: &SourcePlan,
    warn: &mut dyn FnMut(String),
) -> Result<(Vec<Session>, u64), CliError> {
    named_sessions_files(selection, plan, warn).map(|(sessions, skipped, _)| (sessions, skipped))
}

/// The file each session of a run of several sources came from, by session id (an id is in
/// one file only: the read refuses one in two).
pub(crate) type SessionFiles = HashMap<String, std::path::PathBuf>;

/// [`named_sessions`], with the file each session came from when the plan reads several.
pub(crate) fn named_sessions_files(
    selection: &Selection,
    plan: &SourcePlan,
    warn: &mut dyn FnMut(String),
) -> Result<(Vec<Session>, u64, SessionFiles), CliError> {
    let filter = if selection.all {
        SessionFilter::All
    } else {
        SessionFilter::only(selection.named.iter().cloned())
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
    let ordered = if selection.all {
        sessions
    } else {
        refuse_missing(selection, plan, named::held(&sessions), lost_to_unknown)?;
        named::in_order_asked(sessions, &selection.named, lost_to_unknown)
    };
    Ok((ordered, skipped_lines, files))
}

/// Refuses the named sessions the source does not hold (`held`: the ids of those it has
/// entries for) — a typo would otherwise record a zero — unless `--allow-empty` asks for
/// CLEO's way. With `lost_to_unknown` lines skipped whose session could not be read, a
/// session may be in one of them: it is graded (and marked).
pub(crate) fn refuse_missing<'h>(
    selection: &Selection,
    plan: &SourcePlan,
    held: impl IntoIterator<Item = &'h str>,
    lost_to_unknown: u64,
) -> Result<(), CliError> {
    if selection.allow_empty || plan.judgment_only || lost_to_unknown != 0 {
        return Ok(());
    }
    let missing = missing(held, &selection.named);
    if missing.is_empty() {
        return Ok(());
    }
    // Only on this path is the whole source read for its ids, as it was read (with
    // `--skip-bad-lines`, say).
    let known: Option<Vec<String>> = read_source(plan, &SessionFilter::All)
        .ok()
        .map(|read| read.sessions.into_iter().map(|s| s.id).collect());
    Err(not_found(&missing, &plan.path, known.as_deref()))
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
