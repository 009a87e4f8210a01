//! The stdio transport of `grade mcp`: newline-delimited JSON-RPC 2.0, checked here before
//! rmcp sees it.
//!
//! rmcp's own stdio transport drops a line that is not JSON without a word, answers a
//! message of the wrong shape with an error that has lost the request's id, answers a known
//! method with parameters of the wrong shape as an unknown method, and ends the server on a
//! notification sent before `initialize`. A client waiting for an id then waits forever. So
//! every line is read here first: what JSON-RPC 2.0 and MCP say is wrong with it is answered
//! here, with the id when one can be read, and only well-formed messages go on to rmcp.
//! What the server writes goes through one writer task; when stdout is closed it stops, and
//! the server ends as when stdin is closed.

use std::collections::HashSet;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use grade_engine::entry::json_kind;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, GetMeta, JsonRpcMessage,
    ProtocolVersion, ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, Notify};

/// JSON-RPC 2.0's error codes.
pub const PARSE_ERROR: i32 = -32700;
pub const INVALID_REQUEST: i32 = -32600;
pub const METHOD_NOT_FOUND: i32 = -32601;
pub const INVALID_PARAMS: i32 = -32602;
pub const INTERNAL_ERROR: i32 = -32603;

/// The longest line (one message) the server reads, as rmcp's transport allows.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// The MCP methods of capabilities this server does not declare (it declares `tools` only).
/// rmcp answers them with the bare method name as the message, or, when their params do not
/// fit, with a params error, as if the method were there to call.
const NOT_OFFERED: &[&str] = &[
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/directory/read",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
];

/// Why a batch gets errors: the protocol versions from 2025-06-18 on have no batches.
const NO_BATCHES: &str =
    "batches are not supported (MCP 2025-06-18 removed them): send one message per line";

/// Bytes of replies queued for the client past which no further request is read: a client
/// that sends requests and never reads its stdout made the queue grow without end (266 →
/// 841 MiB). Reading resumes once the writer has written the queue down below it.
const MAX_QUEUED: usize = 4 * 1024 * 1024;

/// Requests read and not yet answered past which no further request is read: each will
/// add its reply to the queue, so the queue's bound alone would let a client that never
/// reads have any number of replies on their way to it.
const MAX_IN_FLIGHT: usize = 64;

/// The bytes of the lines queued for the client and not yet written.
#[derive(Default)]
pub struct Backlog {
    bytes: AtomicUsize,
    /// Told whenever a line has been written.
    written: Notify,
}

impl Backlog {
    fn add(&self, n: usize) {
        self.bytes.fetch_add(n, Ordering::SeqCst);
    }

    fn sub(&self, n: usize) {
        self.bytes.fetch_sub(n, Ordering::SeqCst);
        // A permit is kept if the reader is not waiting yet.
        self.written.notify_one();
    }

    fn full(&self) -> bool {
        self.bytes.load(Ordering::SeqCst) > MAX_QUEUED
    }
}

/// Set once a write to the client failed: the connection is over.
#[derive(Default)]
pub struct Closed {
    flag: AtomicBool,
    wake: Notify,
}

impl Closed {
    fn set(&self) {
        self.flag.store(true, Ordering::SeqCst);
        // A permit is kept if the reader is not waiting yet.
        self.wake.notify_one();
    }

    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }
}

/// Writes each queued line to `out` and flushes it; stops at the first failure, which it
/// records in `closed`. Ends when every sender is gone and the queue is written. A broken
/// pipe is the client going away, the end of a connection like a closed stdin; any other
/// failure (a full disk behind a redirected stdout) is returned, so that the server does not
/// end as if all it answered had been written.
pub async fn write_lines<W: AsyncWrite + Unpin>(
    mut out: W,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
    closed: Arc<Closed>,
    backlog: Arc<Backlog>,
) -> std::io::Result<()> {
    while let Some(line) = lines.recv().await {
        let written = match out.write_all(&line).await {
            Ok(()) => out.flush().await,
            Err(e) => Err(e),
        };
        if let Err(e) = written {
            closed.set();
            return match e.kind() {
                std::io::ErrorKind::BrokenPipe => Ok(()),
                _ => Err(e),
            };
        }
        backlog.sub(line.len());
    }
    Ok(())
}

/// The server's side of the connection: messages in from `read`, lines out to the writer task.
pub struct Wire<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Dropping the rest of a line longer than [`MAX_LINE`].
    discarding: bool,
    out: Option<mpsc::UnboundedSender<Vec<u8>>>,
    closed: Arc<Closed>,
    /// What is queued for the writer: past [`MAX_QUEUED`], no request is read.
    backlog: Arc<Backlog>,
    /// The ids (as JSON text) of the requests handed to rmcp and not yet answered: at
    /// [`MAX_IN_FLIGHT`], no request is read.
    in_flight: HashSet<String>,
    /// An `initialize` request (or a request that names its protocol version, as from
    /// 2026-07-28) has gone to rmcp: the session is under way.
    started: bool,
    /// An `initialize` request has gone to rmcp; MCP has one per connection.
    initialized: bool,
}

impl<R: AsyncRead + Unpin> Wire<R> {
    pub fn new(
        read: R,
        out: mpsc::UnboundedSender<Vec<u8>>,
        closed: Arc<Closed>,
        backlog: Arc<Backlog>,
    ) -> Self {
        Wire {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            out: Some(out),
            closed,
            backlog,
            in_flight: HashSet::new(),
            started: false,
            initialized: false,
        }
    }

    /// Queues a line for the client; false once the connection is over.
    fn queue(&self, message: &Value) -> bool {
        match serde_json::to_vec(message) {
            Ok(line) => self.queue_line(line),
            Err(_) => false,
        }
    }

    fn queue_line(&self, mut line: Vec<u8>) -> bool {
        match &self.out {
            Some(out) => {
                line.push(b'\n');
                let len = line.len();
                self.backlog.add(len);
                if out.send(line).is_err() {
                    self.backlog.sub(len);
                    return false;
                }
                !self.closed.is_set()
            }
            None => false,
        }
    }
}

/// What became of a line.
enum Line {
    /// A whole line is in the buffer.
    Whole,
    /// The line was longer than [`MAX_LINE`] and has been dropped.
    TooLong,
    /// The client closed stdin (a last line without a newline is still read).
    End,
}

/// Reads one line into `buf` without letting it grow past [`MAX_LINE`]. Safe to cancel: a
/// partly read line stays in `buf` and the next call goes on with it.
async fn read_line<R: AsyncRead + Unpin>(
    read: &mut BufReader<R>,
    buf: &mut Vec<u8>,
    discarding: &mut bool,
) -> io::Result<Line> {
    loop {
        let available = read.fill_buf().await?;
        if available.is_empty() {
            return Ok(if buf.is_empty() || *discarding {
                Line::End
            } else {
                Line::Whole
            });
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        let mut outcome = None;
        if *discarding {
            if newline.is_some() {
                *discarding = false;
            }
        } else if buf.len().saturating_add(take) > MAX_LINE {
            buf.clear();
            *discarding = newline.is_none();
            outcome = Some(Line::TooLong);
        } else {
            buf.extend_from_slice(&available[..take]);
            if newline.is_some() {
                outcome = Some(Line::Whole);
            }
        }
        read.consume(take);
        if let Some(outcome) = outcome {
            return Ok(outcome);
        }
    }
}

/// What to do with a message.
enum Action {
    /// Hand it to rmcp.
    Forward(Box<ClientJsonRpcMessage>),
    /// Answer it here.
    Reply(Value),
    /// Answer it here with a line already written out: for an id a `Value` cannot hold.
    ReplyLine(Vec<u8>),
    /// Nothing: a notification or a response nobody waits for.
    Ignore,
}

/// A JSON-RPC error response.
pub fn error(id: Value, code: i32, message: impl Into<String>) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message.into() } })
}

/// A message's `id` as its line spells it, when the line has exactly one.
fn id_as_written(line: &[u8]) -> Option<&str> {
    #[derive(serde::Deserialize)]
    struct Id<'a> {
        #[serde(borrow)]
        id: &'a serde_json::value::RawValue,
    }
    serde_json::from_slice::<Id>(line).ok().map(|m| m.id.get())
}

/// [`error`] written out with `id` as the JSON text given, in the same order of keys.
fn error_line(id: &str, code: i32, message: &str) -> Option<Vec<u8>> {
    let body = serde_json::to_string(&json!({ "code": code, "message": message })).ok()?;
    Some(format!(r#"{{"error":{body},"id":{id},"jsonrpc":"2.0"}}"#).into_bytes())
}

/// The id to answer with: the request's if JSON-RPC allows it (a string or a number), else null.
fn reply_id(message: &Map<String, Value>) -> Value {
    match message.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    }
}

/// Whether JSON-RPC asks for an answer to this member of a batch: a notification or a
/// response gets none, a request or something that is no message at all does.
fn answered(member: &Value) -> bool {
    let Value::Object(map) = member else {
        return true;
    };
    match map.get("method") {
        Some(Value::String(_)) => map.contains_key("id"),
        Some(_) => true,
        None => !(map.contains_key("result") || map.contains_key("error")),
    }
}

impl<R: AsyncRead + Unpin> Wire<R> {
    fn classify(&mut self, line: &[u8]) -> Action {
        let value: Value = match serde_json::from_slice(line) {
            Ok(value) => value,
            Err(e) => {
                return Action::Reply(error(
                    Value::Null,
                    PARSE_ERROR,
                    format!("parse error: not JSON: {e}"),
                ))
            }
        };
        match value {
            Value::Object(message) => self.classify_object(message, line),
            Value::Array(members) if members.is_empty() => Action::Reply(error(
                Value::Null,
                INVALID_REQUEST,
                "an empty batch is no request",
            )),
            Value::Array(members) => {
                // Each request of the batch gets its error, with its id, so that no client waits.
                let replies: Vec<Value> = members
                    .iter()
                    .filter(|m| answered(m))
                    .map(|m| {
                        let id = m.as_object().map_or(Value::Null, reply_id);
                        error(id, INVALID_REQUEST, NO_BATCHES)
                    })
                    .collect();
                Action::Reply(if replies.is_empty() {
                    error(Value::Null, INVALID_REQUEST, NO_BATCHES)
                } else {
                    Value::Array(replies)
                })
            }
            other => Action::Reply(error(
                Value::Null,
                INVALID_REQUEST,
                format!("a message is a JSON object, not {}", json_kind(&other)),
            )),
        }
    }

    fn classify_object(&mut self, message: Map<String, Value>, line: &[u8]) -> Action {
        let id = reply_id(&message);
        let version_ok = message.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
        let method = match message.get("method") {
            Some(Value::String(method)) => Some(method.clone()),
            Some(other) => {
                return Action::Reply(error(
                    id,
                    INVALID_REQUEST,
                    format!("`method` must be a string, not {}", json_kind(other)),
                ))
            }
            None => None,
        };
        let Some(method) = method else {
            if message.contains_key("result") || message.contains_key("error") {
                // A response: this server sends no requests before the session starts,
                // and a response that fits none is nobody's business.
                return match self.started {
                    true => forward_or_ignore(message),
                    false => Action::Ignore,
                };
            }
            return Action::Reply(error(
                id,
                INVALID_REQUEST,
                "no `method`: a request names the method it calls",
            ));
        };
        if !version_ok {
            return Action::Reply(error(id, INVALID_REQUEST, "`jsonrpc` must be \"2.0\""));
        }
        match message.get("id") {
            // A notification is never answered, whatever is wrong with it.
            None if self.started => forward_or_ignore(message),
            None => Action::Ignore,
            Some(Value::String(_)) => self.request(&method, id, message),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => {
                self.request(&method, id, message)
            }
            // An integer beyond 64 bits is read as a float: "not a number" would be untrue,
            // and the float is not what the client wrote, so the answer carries its text.
            Some(Value::Number(n)) => {
                let written = id_as_written(line);
                let why = format!(
                    "`id` must be a string or an integer (of 64 bits at most), not `{}`",
                    written.unwrap_or(&n.to_string())
                );
                match written.and_then(|text| error_line(text, INVALID_REQUEST, &why)) {
                    Some(line) => Action::ReplyLine(line),
                    None => Action::Reply(error(id, INVALID_REQUEST, why)),
                }
            }
            Some(other) => Action::Reply(error(
                id,
                INVALID_REQUEST,
                format!(
                    "`id` must be a string or an integer, not {}",
                    json_kind(other)
                ),
            )),
        }
    }

    fn request(&mut self, method: &str, id: Value, message: Map<String, Value>) -> Action {
        match message.get("params") {
            None | Some(Value::Object(_)) => {}
            Some(other) => {
                return Action::Reply(error(
                    id,
                    INVALID_PARAMS,
                    format!(
                        "`params` of `{method}` must be an object, not {}",
                        json_kind(other)
                    ),
                ))
            }
        }
        if NOT_OFFERED.contains(&method) {
            return Action::Reply(error(
                id,
                METHOD_NOT_FOUND,
                format!(
                    "method `{method}` is not offered: this server has tools only (`tools/list`, `tools/call`)"
                ),
            ));
        }
        let shape = json!({ "method": method, "params": message.get("params") });
        let parsed = match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(message)) {
            Ok(parsed) => parsed,
            Err(e) => {
                return Action::Reply(error(id, INVALID_REQUEST, format!("invalid request: {e}")))
            }
        };
        let JsonRpcMessage::Request(request) = &parsed else {
            return Action::Reply(error(id, INVALID_REQUEST, "invalid request"));
        };
        // rmcp reads a known method whose params do not fit as a method of its own.
        if let ClientRequest::CustomRequest(_) = request.request {
            return Action::Reply(match params_error(method, shape) {
                Some(why) => error(
                    id,
                    INVALID_PARAMS,
                    format!("invalid params for `{method}`: {why}"),
                ),
                None => error(id, METHOD_NOT_FOUND, format!("unknown method `{method}`")),
            });
        }
        if let ClientRequest::InitializeRequest(_) = request.request {
            if self.initialized {
                return Action::Reply(error(
                    id,
                    INVALID_REQUEST,
                    "`initialize` again: this connection is initialized already, and a new session needs a new connection",
                ));
            }
            self.initialized = true;
        }
        if !self.started {
            match &request.request {
                ClientRequest::InitializeRequest(_) => self.started = true,
                ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => {}
                other => {
                    // From 2026-07-28 a request may name its version instead of a handshake
                    // (rmcp checks that); before, a session starts with `initialize`.
                    let meta = other.get_meta();
                    let Some(version) = meta.protocol_version() else {
                        return Action::Reply(error(
                            id,
                            INVALID_REQUEST,
                            format!(
                                "`{method}` before `initialize`: a session starts with an `initialize` request"
                            ),
                        ));
                    };
                    self.started = meta
                        .missing_required_keys(&ProtocolVersion::V_2026_07_28)
                        .is_empty()
                        && ProtocolVersion::KNOWN_VERSIONS.contains(&version);
                }
            }
        }
        // rmcp answers one request of an id at a time (a second one's answer is dropped), so
        // an id in use is refused here, and each request handed on gets exactly one answer.
        if !self.in_flight.insert(id.to_string()) {
            return Action::Reply(error(
                id.clone(),
                INVALID_REQUEST,
                format!("request id `{id}` is in use by a request not answered yet"),
            ));
        }
        Action::Forward(Box::new(parsed))
    }

    /// Ends the wait for the answer to the request `id`, when it was one.
    fn answered(&mut self, id: Option<Value>) {
        if let Some(id) = id {
            self.in_flight.remove(&id.to_string());
        }
    }

    /// Whether no request is read for now: too much is queued for the client, or too many
    /// requests wait for their answers.
    fn holding_back(&self) -> bool {
        self.backlog.full() || self.in_flight.len() >= MAX_IN_FLIGHT
    }
}

fn forward_or_ignore(message: Map<String, Value>) -> Action {
    match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(message)) {
        Ok(parsed) => Action::Forward(Box::new(parsed)),
        Err(_) => Action::Ignore,
    }
}

/// Why `shape` (`{method, params}`) does not fit the request `method` names, or `None` for a
/// method rmcp does not know.
// rmcp still reads the methods it marks deprecated (logging, resources/subscribe), so they
// are explained too.
#[allow(
    deprecated,
    reason = "clients still send the methods rmcp marks deprecated"
)]
fn params_error(method: &str, shape: Value) -> Option<String> {
    use rmcp::model::*;
    fn why<T: serde::de::DeserializeOwned>(shape: Value) -> Option<String> {
        Some(match serde_json::from_value::<T>(shape) {
            Ok(_) => "rejected".to_owned(),
            Err(e) => e.to_string(),
        })
    }
    macro_rules! table {
        ($($method:literal => $ty:ty),* $(,)?) => {
            match method {
                $($method => why::<$ty>(shape),)*
                _ => None,
            }
        };
    }
    table! {
        "ping" => PingRequest,
        "initialize" => InitializeRequest,
        "server/discover" => DiscoverRequest,
        "completion/complete" => CompleteRequest,
        "logging/setLevel" => SetLevelRequest,
        "prompts/get" => GetPromptRequest,
        "prompts/list" => ListPromptsRequest,
        "resources/list" => ListResourcesRequest,
        "resources/templates/list" => ListResourceTemplatesRequest,
        "resources/read" => ReadResourceRequest,
        "resources/subscribe" => SubscribeRequest,
        "resources/unsubscribe" => UnsubscribeRequest,
        "resources/directory/read" => ReadResourceDirectoryRequest,
        "subscriptions/listen" => SubscriptionsListenRequest,
        "tools/call" => CallToolRequest,
        "tools/list" => ListToolsRequest,
        "tasks/get" => GetTaskRequest,
        "tasks/update" => UpdateTaskRequest,
        "tasks/cancel" => CancelTaskRequest,
        "skills/list" => ListSkillsRequest,
        "skills/get" => GetSkillRequest,
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for Wire<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), io::Error>> + Send + 'static {
        let answers = match &item {
            JsonRpcMessage::Response(r) => serde_json::to_value(&r.id).ok(),
            JsonRpcMessage::Error(r) => r.id.as_ref().and_then(|id| serde_json::to_value(id).ok()),
            _ => None,
        };
        self.answered(answers);
        let sent = match serde_json::to_value(&item) {
            Ok(message) => self.queue(&message),
            // Cannot happen with serde_json's values; if it did, the request still gets an answer.
            Err(e) => {
                let id = match &item {
                    JsonRpcMessage::Response(r) => serde_json::to_value(&r.id).ok(),
                    JsonRpcMessage::Error(r) => {
                        r.id.as_ref().and_then(|id| serde_json::to_value(id).ok())
                    }
                    _ => None,
                };
                match id {
                    Some(id) => self.queue(&error(
                        id,
                        INTERNAL_ERROR,
                        format!("cannot encode the answer: {e}"),
                    )),
                    None => true,
                }
            }
        };
        std::future::ready(if sent {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the client closed the connection",
            ))
        })
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if self.closed.is_set() {
                return None;
            }
            // Backpressure: while the client is not reading what it was sent, read nothing
            // more from it (each request read may add a reply to the queue). Waiting is safe
            // to cancel: nothing has been read.
            // rmcp drops this wait when an answer is ready, sends it, and asks again.
            while self.holding_back() {
                tokio::select! {
                    biased;
                    () = self.closed.wake.notified() => return None,
                    () = self.backlog.written.notified() => {}
                }
                if self.closed.is_set() {
                    return None;
                }
            }
            let read = tokio::select! {
                biased;
                () = self.closed.wake.notified() => return None,
                read = read_line(&mut self.read, &mut self.line, &mut self.discarding) => read,
            };
            let action = match read {
                Ok(Line::End) | Err(_) => return None,
                Ok(Line::TooLong) => Action::Reply(error(
                    Value::Null,
                    INVALID_REQUEST,
                    format!("a message longer than {} MiB was dropped", MAX_LINE >> 20),
                )),
                Ok(Line::Whole) => {
                    let line = std::mem::take(&mut self.line);
                    let mut text = line.strip_suffix(b"\n").unwrap_or(&line);
                    text = text.strip_suffix(b"\r").unwrap_or(text);
                    text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
                    let action = if text.iter().all(u8::is_ascii_whitespace) {
                        Action::Ignore
                    } else {
                        self.classify(text)
                    };
                    // The buffer's room serves the next line.
                    self.line = line;
                    self.line.clear();
                    action
                }
            };
            match action {
                Action::Forward(message) => {
                    // A cancelled request may get no answer: it waits no longer.
                    if let JsonRpcMessage::Notification(n) = message.as_ref() {
                        if let ClientNotification::CancelledNotification(c) = &n.notification {
                            self.answered(serde_json::to_value(&c.params.request_id).ok());
                        }
                    }
                    return Some(*message);
                }
                Action::Reply(reply) => {
                    if !self.queue(&reply) {
                        return None;
                    }
                }
                Action::ReplyLine(line) => {
                    if !self.queue_line(line) {
                        return None;
                    }
                }
                Action::Ignore => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        // The writer task writes what is queued and ends; `serve` waits for it.
        drop(self.out.take());
        Ok(())
    }
}
