//! Sending scores to Langfuse as its Python SDK does (langfuse 5.0.4,
//! `_task_manager/score_consumer.py`): `POST /api/public/scores` with a JSON array of up to
//! 15 scores and at most 1,000,000 bytes, retried on 429, 5xx and transport errors; a 2xx
//! answer is success, and a 207 lists the scores the server rejected (which the SDK logs
//! and does not retry; here they fail the run, named). A server that takes one score per
//! request (Langfuse before the batch endpoint) answers an array with 400; the scores are
//! then sent one by one.

use serde_json::Value;

use super::server::Server;
use crate::error::CliError;
use crate::http::Failure;

/// The SDK's `flush_at`: scores per request.
const BATCH_SCORES: usize = 15;
/// The body limit of `POST /api/public/scores` (Next.js default), as the SDK caps it.
const BATCH_BYTES: usize = 1_000_000;
const PATH: &str = "/api/public/scores";

/// What a push did.
#[derive(Debug, Default)]
pub struct Pushed {
    pub scores: usize,
    pub requests: usize,
    pub retries: u32,
}

/// Batches of scores as the SDK forms them: in order, at most 15 and 1,000,000 bytes of
/// JSON array each.
fn batches(bodies: &[Value]) -> Result<Vec<Vec<(usize, String)>>, CliError> {
    let mut out: Vec<Vec<(usize, String)>> = Vec::new();
    let mut size = 2;
    for (i, body) in bodies.iter().enumerate() {
        let text = body.to_string();
        if text.len() + 2 > BATCH_BYTES {
            return Err(CliError::Push(format!(
                "score `{}` is {} bytes of JSON, over the {BATCH_BYTES} bytes Langfuse takes in one request",
                name_of(body),
                text.len()
            )));
        }
        let fits = out
            .last()
            .is_some_and(|b| b.len() < BATCH_SCORES && size + text.len() < BATCH_BYTES);
        if !fits {
            out.push(Vec::new());
            size = 2;
        }
        size += text.len() + usize::from(out.last().is_some_and(|b| !b.is_empty()));
        if let Some(batch) = out.last_mut() {
            batch.push((i, text));
        }
    }
    Ok(out)
}

fn name_of(body: &Value) -> &str {
    body.get("name").and_then(Value::as_str).unwrap_or("?")
}

fn describe_score(body: &Value) -> String {
    match body.get("id").and_then(Value::as_str) {
        Some(id) => format!("`{}` (id `{id}`)", name_of(body)),
        None => format!("`{}`", name_of(body)),
    }
}

/// Sends every score; fails naming the scores the server rejected.
pub fn push_scores(server: &Server, bodies: &[Value]) -> Result<Pushed, CliError> {
    let mut pushed = Pushed::default();
    let mut one_by_one = false;
    let mut rejected: Vec<String> = Vec::new();
    for batch in batches(bodies)? {
        if !one_by_one {
            let texts: Vec<&str> = batch.iter().map(|(_, t)| t.as_str()).collect();
            let array = format!("[{}]", texts.join(","));
            pushed.requests += 1;
            match server.post(PATH, &array) {
                Ok(reply) => {
                    pushed.retries += reply.retries;
                    pushed.scores += batch.len();
                    rejected.extend(rejections(&reply.body, reply.status, &batch, bodies));
                    continue;
                }
                Err(Failure::Status {
                    status: 400 | 422,
                    attempts,
                    ..
                }) if batch.len() > 1 || bodies.len() == 1 => {
                    // An older server that takes one score per request: send them singly.
                    pushed.retries += attempts.saturating_sub(1);
                    one_by_one = true;
                }
                Err(failure) => return Err(failed(server, &failure, &batch, bodies)),
            }
        }
        for (i, text) in &batch {
            pushed.requests += 1;
            match server.post(PATH, text) {
                Ok(reply) => {
                    pushed.retries += reply.retries;
                    pushed.scores += 1;
                    rejected.extend(rejections(
                        &reply.body,
                        reply.status,
                        &[(*i, text.clone())],
                        bodies,
                    ));
                }
                Err(failure) => {
                    return Err(failed(server, &failure, &[(*i, text.clone())], bodies))
                }
            }
        }
    }
    if !rejected.is_empty() {
        return Err(CliError::Push(format!(
            "Langfuse at `{}` rejected {} of {} score{}: {}",
            server.host,
            rejected.len(),
            bodies.len(),
            if bodies.len() == 1 { "" } else { "s" },
            rejected.join("; ")
        )));
    }
    Ok(pushed)
}

fn failed(
    server: &Server,
    failure: &Failure,
    batch: &[(usize, String)],
    bodies: &[Value],
) -> CliError {
    if let Some(problem) = server.access_problem(failure) {
        return CliError::Push(problem);
    }
    let names: Vec<String> = batch
        .iter()
        .map(|(i, _)| format!("`{}`", name_of(&bodies[*i])))
        .collect();
    let what = match failure {
        Failure::Status { status: 404, .. } => format!(
            "{} (is LANGFUSE_BASE_URL the address of a Langfuse server?)",
            failure.describe()
        ),
        _ => failure.describe(),
    };
    CliError::Push(if batch.len() == 1 {
        format!(
            "Langfuse at `{}` refused score {}: {what}",
            server.host,
            describe_score(&bodies[batch[0].0])
        )
    } else {
        format!(
            "could not send scores {} to `{}{PATH}`: {what}",
            names.join(", "),
            server.host
        )
    })
}

/// The scores a 2xx answer says were rejected (a 207 `{accepted, rejected, errors}`),
/// each named with the server's reason.
fn rejections(body: &str, status: u16, batch: &[(usize, String)], bodies: &[Value]) -> Vec<String> {
    let Ok(answer) = serde_json::from_str::<Value>(body) else {
        return if status == 207 {
            vec![format!(
                "a 207 answer that is not JSON for scores {}",
                batch
                    .iter()
                    .map(|(i, _)| format!("`{}`", name_of(&bodies[*i])))
                    .collect::<Vec<_>>()
                    .join(", ")
            )]
        } else {
            Vec::new()
        };
    };
    let count = answer.get("rejected").and_then(Value::as_u64).unwrap_or(0) as usize;
    if count == 0 && status != 207 {
        return Vec::new();
    }
    let errors = answer
        .get("errors")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let batch_names = || {
        batch
            .iter()
            .map(|(i, _)| format!("`{}`", name_of(&bodies[*i])))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = Vec::new();
    for error in &errors {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| error.to_string(), str::to_owned);
        // The server may say which item it means, by position in the batch or by id.
        let item = error
            .get("index")
            .and_then(Value::as_u64)
            .and_then(|i| batch.get(i as usize))
            .map(|(i, _)| &bodies[*i])
            .or_else(|| {
                let id = error.get("id").and_then(Value::as_str)?;
                batch
                    .iter()
                    .map(|(i, _)| &bodies[*i])
                    .find(|b| b.get("id").and_then(Value::as_str) == Some(id))
            });
        out.push(match item {
            Some(body) => format!("{}: {message}", describe_score(body)),
            None => format!("{message} (in the request with {})", batch_names()),
        });
    }
    for _ in errors.len()..count {
        out.push(format!(
            "a score the server gave no reason for (in the request with {})",
            batch_names()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn batches_hold_fifteen_scores_at_most() {
        let bodies: Vec<Value> = (0..32)
            .map(|i| json!({"name": format!("s{i}"), "value": i}))
            .collect();
        let sizes: Vec<usize> = batches(&bodies).unwrap().iter().map(Vec::len).collect();
        assert_eq!(sizes, [15, 15, 2]);
        let big = "x".repeat(400_000);
        let bodies: Vec<Value> = (0..3)
            .map(|i| json!({"name": format!("s{i}"), "value": 1, "comment": big}))
            .collect();
        let sizes: Vec<usize> = batches(&bodies).unwrap().iter().map(Vec::len).collect();
        assert_eq!(sizes, [2, 1], "a batch stays under 1,000,000 bytes");
        let huge = vec![json!({"name": "h", "value": 1, "comment": "x".repeat(1_000_000)})];
        assert!(batches(&huge).is_err());
    }

    #[test]
    fn rejections_name_their_scores() {
        let bodies = vec![
            json!({"id": "a", "name": "goal_achievement", "value": "complete"}),
            json!({"id": "b", "name": "tool_efficiency", "value": 0.8}),
        ];
        let batch: Vec<(usize, String)> = bodies
            .iter()
            .enumerate()
            .map(|(i, b)| (i, b.to_string()))
            .collect();
        let by_index = rejections(
            r#"{"accepted":1,"rejected":1,"errors":[{"index":1,"message":"bad value"}]}"#,
            207,
            &batch,
            &bodies,
        );
        assert_eq!(by_index, ["`tool_efficiency` (id `b`): bad value"]);
        let by_id = rejections(
            r#"{"accepted":1,"rejected":1,"errors":[{"id":"a","message":"no config"}]}"#,
            207,
            &batch,
            &bodies,
        );
        assert_eq!(by_id, ["`goal_achievement` (id `a`): no config"]);
        let unnamed = rejections(
            r#"{"accepted":1,"rejected":1,"errors":[{"message":"Invalid score"}]}"#,
            207,
            &batch,
            &bodies,
        );
        assert_eq!(
            unnamed,
            ["Invalid score (in the request with `goal_achievement`, `tool_efficiency`)"]
        );
        assert!(rejections(r#"{"id":"x"}"#, 200, &batch, &bodies).is_empty());
        assert!(rejections("", 202, &batch, &bodies).is_empty());
    }
}
