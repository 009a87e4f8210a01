//! `grade calibrate --labels langfuse…`: people's scores read from Langfuse, the scores
//! whose `source` is `ANNOTATION` (made in the annotation UI or its queues).
//!
//! Langfuse v4 serves scores through `GET /api/public/v3/scores` (a page of up to 100 behind a
//! cursor; the `subject` field group says what a score is on, `annotation` who wrote it); a
//! server without it (a v3 server answers 404) is read through `GET /api/public/v2/scores`
//! (numbered pages), as the fetch of sessions falls back. A score's name is the dimension
//! it labels; a categorical score's value is its category's label. A score on a session
//! labels that session; a score on a trace (or an observation of one) labels the session
//! the trace belongs to, asked of `GET /api/public/traces/{id}` once per trace, and the
//! trace itself when it has no session (as the reader of traces names it).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use grade_engine::calibrate::{Label, LabelScore};
use serde_json::Value;

use super::server::Server;
use crate::error::CliError;
use crate::http::Failure;

/// Pages read at most, so that a server that keeps answering with a cursor cannot keep
/// the read going forever.
const MAX_PAGES: usize = 10_000;
/// Scores per page, the v3 endpoint's maximum.
const PAGE: usize = 100;

/// Which scores to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// Every annotation score of the project.
    All,
    /// The annotation scores of one session.
    Session(String),
    /// The annotation scores with one name (one dimension).
    Score(String),
}

impl Wanted {
    /// `langfuse`, `langfuse:session/ID` or `langfuse:score/NAME`; `None` for a labels
    /// argument that is not `langfuse…` (a file).
    pub fn parse(spec: &str) -> Option<Result<Wanted, CliError>> {
        if spec == "langfuse" {
            return Some(Ok(Wanted::All));
        }
        let rest = spec.strip_prefix("langfuse:")?;
        Some(match rest.split_once('/') {
            Some(("session", id)) if !id.is_empty() => Ok(Wanted::Session(id.to_owned())),
            Some(("score", name)) if !name.is_empty() => Ok(Wanted::Score(name.to_owned())),
            _ => Err(CliError::Usage(format!(
                "labels `{spec}`: labels from Langfuse are `langfuse`, `langfuse:session/ID` or `langfuse:score/NAME`"
            ))),
        })
    }

    fn filter(&self) -> String {
        match self {
            Wanted::All => String::new(),
            Wanted::Session(id) => format!("&sessionId={}", super::fetch::encode(id)),
            Wanted::Score(name) => format!("&name={}", super::fetch::encode(name)),
        }
    }

    fn shown(&self) -> String {
        match self {
            Wanted::All => "langfuse".to_owned(),
            Wanted::Session(id) => format!("langfuse:session/{id}"),
            Wanted::Score(name) => format!("langfuse:score/{name}"),
        }
    }
}

/// One annotation score as read, before its trace is placed in a session.
struct Read {
    id: String,
    name: String,
    value: Option<LabelScore>,
    session: Option<String>,
    trace: Option<String>,
    author: Option<String>,
}

/// The labels of the annotation scores `wanted` asks for, from the server of the environment.
pub fn labels(wanted: &Wanted, timeout: u64) -> Result<Vec<Label>, CliError> {
    let server = Server::from_env(
        &format!("`--labels {}`", wanted.shown()),
        Duration::from_secs(timeout),
        crate::http::Retry {
            attempts: 4,
            backoff: Duration::from_millis(500),
            max_wait: Duration::from_secs(60),
        },
    )?;
    let failed = |failure: Failure| {
        let why = server
            .access_problem(&failure)
            .unwrap_or_else(|| failure.describe());
        CliError::Remote(format!(
            "cannot read the annotation scores of `{}` from Langfuse at `{}`: {why}",
            wanted.shown(),
            server.host
        ))
    };
    let scores = match scores_v4(wanted, &server) {
        Ok(scores) => scores,
        Err(Failure::Status {
            status: 404 | 405 | 501,
            ..
        }) => scores_v3(wanted, &server).map_err(failed)?,
        Err(failure) => return Err(failed(failure)),
    };
    let mut sessions: HashMap<String, String> = HashMap::new();
    let mut labels = Vec::new();
    let mut skipped = 0usize;
    for score in scores {
        let Some(value) = score.value else {
            skipped += 1;
            continue;
        };
        let session = match (&score.session, &score.trace) {
            (Some(s), _) => s.clone(),
            (None, Some(trace)) => match sessions.get(trace) {
                Some(s) => s.clone(),
                None => {
                    let s = session_of(&server, trace).map_err(failed)?;
                    sessions.insert(trace.clone(), s.clone());
                    s
                }
            },
            (None, None) => {
                skipped += 1;
                continue;
            }
        };
        labels.push(Label {
            session_id: session,
            trace_id: score.trace,
            annotator: score.author.unwrap_or_else(|| "(no author)".to_owned()),
            scores: [(score.name, value)].into_iter().collect(),
            origin: format!("Langfuse score `{}`", score.id),
        });
    }
    if skipped > 0 {
        eprintln!(
            "warning: {skipped} annotation score{} of `{}` are not on a session or trace, or hold no number or category (boolean and text scores), and are left out",
            if skipped == 1 { "" } else { "s" },
            wanted.shown()
        );
    }
    if labels.is_empty() {
        return Err(CliError::Usage(format!(
            "Langfuse at `{}` has no annotation scores for `{}` (scores whose source is ANNOTATION)",
            server.host,
            wanted.shown()
        )));
    }
    Ok(labels)
}

fn page_of(server: &Server, query: &str) -> Result<Value, Failure> {
    let reply = server.get(query)?;
    serde_json::from_str(&reply.body).map_err(|e| super::fetch::not_api(&reply.body, &e))
}

fn text(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A score's value as a label: a number, or a category's label.
fn value_of(score: &Value, string_key: &str) -> Option<LabelScore> {
    match score.get("dataType").and_then(Value::as_str) {
        Some("NUMERIC") | None => score
            .get("value")
            .and_then(Value::as_f64)
            .map(LabelScore::Number),
        Some("CATEGORICAL") => score
            .get(string_key)
            .and_then(Value::as_str)
            .map(|s| LabelScore::Category(s.to_owned()))
            .or_else(|| {
                score
                    .get("value")
                    .and_then(Value::as_f64)
                    .map(LabelScore::Number)
            }),
        _ => None,
    }
}

/// Every annotation score through the v4 endpoint, all pages.
fn scores_v4(wanted: &Wanted, server: &Server) -> Result<Vec<Read>, Failure> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..MAX_PAGES {
        let mut query = format!(
            "/api/public/v3/scores?source=ANNOTATION&fields=subject%2Cannotation&limit={PAGE}{}",
            wanted.filter()
        );
        if let Some(c) = &cursor {
            query.push_str(&format!("&cursor={}", super::fetch::encode(c)));
        }
        let page = page_of(server, &query)?;
        let Some(data) = page.get("data").and_then(Value::as_array) else {
            return Err(super::fetch::not_api(
                &page.to_string(),
                "it has no `data` array",
            ));
        };
        for score in data {
            let kind = text(score, "/subject/kind");
            let subject = text(score, "/subject/id");
            let (session, trace) = match kind.as_deref() {
                Some("session") => (subject, None),
                Some("trace") => (None, subject),
                Some("observation") => (None, text(score, "/subject/traceId")),
                _ => (None, None),
            };
            out.push(Read {
                id: text(score, "/id").unwrap_or_default(),
                name: text(score, "/name").unwrap_or_default(),
                value: value_of(score, "value"),
                session,
                trace,
                author: text(score, "/authorUserId"),
            });
        }
        cursor = text(&page, "/meta/cursor");
        match &cursor {
            None => return Ok(out),
            Some(c) if !seen.insert(c.clone()) => return Ok(out),
            Some(_) if data.is_empty() => return Ok(out),
            Some(_) => {}
        }
    }
    Ok(out)
}

/// Every annotation score through the v3 server's endpoint, all pages.
fn scores_v3(wanted: &Wanted, server: &Server) -> Result<Vec<Read>, Failure> {
    let mut out = Vec::new();
    for page in 1..=MAX_PAGES {
        let query = format!(
            "/api/public/v2/scores?source=ANNOTATION&limit={PAGE}&page={page}{}",
            wanted.filter()
        );
        let reply = page_of(server, &query)?;
        let Some(data) = reply.get("data").and_then(Value::as_array) else {
            return Err(super::fetch::not_api(
                &reply.to_string(),
                "it has no `data` array",
            ));
        };
        for score in data {
            out.push(Read {
                id: text(score, "/id").unwrap_or_default(),
                name: text(score, "/name").unwrap_or_default(),
                value: value_of(score, "stringValue"),
                session: text(score, "/sessionId"),
                trace: text(score, "/traceId"),
                author: text(score, "/authorUserId"),
            });
        }
        let pages = reply
            .pointer("/meta/totalPages")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        if data.is_empty() || page as u64 >= pages {
            break;
        }
    }
    Ok(out)
}

/// The session a trace belongs to; the trace itself when it has none.
fn session_of(server: &Server, trace: &str) -> Result<String, Failure> {
    let doc = page_of(
        server,
        &format!("/api/public/traces/{}", super::fetch::encode(trace)),
    )?;
    Ok(text(&doc, "/sessionId").unwrap_or_else(|| trace.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_all_a_session_or_a_score() {
        assert_eq!(Wanted::parse("langfuse").unwrap().unwrap(), Wanted::All);
        assert_eq!(
            Wanted::parse("langfuse:session/s 1").unwrap().unwrap(),
            Wanted::Session("s 1".into())
        );
        assert_eq!(
            Wanted::parse("langfuse:score/goal").unwrap().unwrap(),
            Wanted::Score("goal".into())
        );
        assert!(Wanted::parse("langfuse:trace/x").unwrap().is_err());
        assert!(Wanted::parse("labels.jsonl").is_none());
        assert_eq!(Wanted::Session("a b".into()).filter(), "&sessionId=a%20b");
    }
}
