//! `grade mcp`: the grading operations as Model Context Protocol tools over stdio, as CLEO
//! exposes `admin.grade` and `admin.grade.list` to agents.
//!
//! Each tool call becomes the command line that would do the same thing and runs through the
//! functions `grade` itself runs, so a tool's result is the CLI's JSON and its error is the
//! CLI's one-line message. What the server reads: what a call names (a source, a pack
//! folder), the working folder's `.cleo/`, the `--rubric-path` folders and the grades file.

mod wire;

use std::path::PathBuf;
use std::sync::Arc;

use grade_engine::GradeResult;
use rmcp::handler::server::common::schema_for_input;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::schemars::JsonSchema;
use rmcp::service::{RequestContext, ServerInitializeError};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::args::McpArgs;
use crate::error::CliError;
use crate::plan::{GradePlan, GradeRequest};

/// The rubric `grade` uses when a call names none: CLEO's grader.
const DEFAULT_RUBRIC: &str = "cleo-v1";

/// Runs the server on stdin and stdout until the client closes the connection.
pub fn serve(args: &McpArgs) -> Result<(), CliError> {
    let server = GradeServer {
        inner: Arc::new(Inner {
            search_path: args.packs.search.rubric_path.clone(),
            allow_plugins: args.packs.allow_plugins,
            grades: args.grades.clone(),
            allow_remote_sources: args.allow_remote_sources,
            tools: tools()?,
        }),
    };
    // One thread serves the protocol; grading runs on the blocking pool (and rayon), so a
    // long grade does not hold up pings or other calls.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Mcp(format!("cannot start the runtime: {e}")))?;
    let closed = Arc::new(wire::Closed::default());
    let served = runtime.block_on(async {
        // The queue is bounded by what it holds: the transport reads no request while it
        // holds more than it may (`wire::Backlog`).
        let (out, lines) = tokio::sync::mpsc::unbounded_channel();
        let backlog = Arc::new(wire::Backlog::default());
        let writer = tokio::spawn(wire::write_lines(
            tokio::io::stdout(),
            lines,
            Arc::clone(&closed),
            Arc::clone(&backlog),
        ));
        let transport = wire::Wire::new(tokio::io::stdin(), out, Arc::clone(&closed), backlog);
        let served = match server.serve(transport).await {
            Ok(running) => running
                .waiting()
                .await
                .map(drop)
                .map_err(|e| CliError::Mcp(e.to_string())),
            // The client left (or stopped reading) before the session started: done.
            Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
            Err(e) => Err(CliError::Mcp(e.to_string())),
        };
        // The transport is gone, so the writer writes what is queued and ends.
        let written = match writer.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(CliError::Stdout(e)),
            Err(e) => Err(CliError::Mcp(format!("the writer failed: {e}"))),
        };
        // A failed write says more than what the server made of its closed connection.
        written.and(served)
    });
    if closed.is_set() {
        // Stdout is closed: the connection is over, whatever stdin does. A read of stdin
        // may still be blocked on its thread; do not wait for it.
        runtime.shutdown_background();
    }
    served
}

#[derive(Clone)]
struct GradeServer {
    inner: Arc<Inner>,
}

struct Inner {
    search_path: Vec<PathBuf>,
    /// `--allow-plugins`: packs may load their native plugins.
    allow_plugins: bool,
    grades: Option<PathBuf>,
    /// `--allow-remote-sources`: a call may read a Langfuse source with the server's keys.
    allow_remote_sources: bool,
    tools: Vec<Tool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(crate = "rmcp::schemars")]
struct GradeParams {
    /// The session to grade, as its source names it: CLEO's `sessionId`, a Claude Code session id, a Langfuse session or trace id.
    session_id: String,
    /// Rubric pack: a shipped id (`cleo-v1`, `cleo-v2`, `claude-code-v1`, `coding-agent-v1`, `langfuse-v1`), an id in the server's `--rubric-path` folders, or a pack folder. `rubric_list` names them all.
    #[serde(default)]
    #[schemars(with = "String", extend("default" = DEFAULT_RUBRIC))]
    rubric: Option<String>,
    /// Where the session is: a CLEO audit log (`.jsonl`) or `tasks.db`, a Claude Code transcript or project folder, or a Langfuse trace download. Relative paths are from the server's working folder. `langfuse:session/ID` and `langfuse:trace/ID` are read from Langfuse only when the server was started with `--allow-remote-sources`.
    #[serde(default)]
    #[schemars(with = "String", extend("default" = crate::DEFAULT_SOURCE))]
    source: Option<PathBuf>,
    /// Read the source as this format instead of detecting it from its content: `auto`, `cleo-jsonl`, `cleo-db`, `claude-code`, `langfuse`, or a format a plugin of the rubric reads.
    #[serde(default)]
    #[schemars(with = "String", extend("default" = "auto"))]
    source_format: Option<String>,
    /// For a pack with judged dimensions (`langfuse-v1`): ask this model for the judgment, `anthropic:MODEL` or `openai:MODEL`, with the server's ANTHROPIC_API_KEY / OPENAI_API_KEY (and *_BASE_URL). Judgments are not cached by the server.
    #[serde(default)]
    #[schemars(with = "String")]
    judge: Option<String>,
    /// Also return, for each rule, the points it gave or took and the entries behind them.
    #[serde(default)]
    #[schemars(with = "bool", extend("default" = false))]
    explain: Option<bool>,
    /// Reference trajectories for the rubric's trajectory metrics (`tool_f1`, `trajectory_match`, …): a JSONL file, one `{"sessionId", "toolCalls": [{"name", "args"}]}` a line. Without one for the session, those metrics' dimensions do not apply.
    #[serde(default)]
    #[schemars(with = "String")]
    reference: Option<PathBuf>,
    /// Append the grade to the server's grades file (which `grade_list` reads). Omit to do as the `grade` command does.
    #[serde(default)]
    #[schemars(with = "bool")]
    record: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(crate = "rmcp::schemars")]
struct GradeListParams {
    /// Only this session's grades.
    #[serde(default)]
    #[schemars(with = "String")]
    session_id: Option<String>,
    /// Only grades given by this rubric pack id (as in a grade's `rubric.id`), or `ID@VERSION` for one version's.
    #[serde(default)]
    #[schemars(with = "String")]
    rubric: Option<String>,
    /// At most this many grades, the newest first (1 to 1000).
    #[serde(default)]
    #[schemars(with = "u32", extend("default" = LIST_LIMIT, "minimum" = 1, "maximum" = LIST_LIMIT_MAX))]
    limit: Option<u32>,
    /// Skip this many of the newest grades first: pass a reply's `nextOffset` to read on.
    #[serde(default)]
    #[schemars(with = "u64", extend("default" = 0, "minimum" = 0))]
    offset: Option<u64>,
}

/// How many grades `grade_list` returns when not told: a grades file grows by a line per
/// session graded, and a reply of all of them (148 MB for a 54 MB file) is more than a
/// client or a model can take.
const LIST_LIMIT: u32 = 100;
const LIST_LIMIT_MAX: u32 = 1000;
/// The most bytes of grades (as pretty JSON) one `grade_list` reply carries: a page stops
/// before the grade that would pass it, and says where the next page starts.
const LIST_REPLY_CAP: usize = 4 << 20;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct RubricListParams {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct RubricShowParams {
    /// A pack id (`cleo-v1`, `claude-code-v1`…, or one in the server's `--rubric-path` folders) or a pack folder.
    rubric: String,
}

fn tools() -> Result<Vec<Tool>, CliError> {
    let schema = |result: Result<Arc<JsonObject>, String>| {
        let mut schema =
            result.map_err(|e| CliError::Mcp(format!("a tool's input schema is invalid: {e}")))?;
        // Some clients insist on `properties`, even for a tool that takes none.
        if !schema.contains_key("properties") {
            Arc::make_mut(&mut schema).insert("properties".to_owned(), json!({}));
        }
        Ok::<_, CliError>(schema)
    };
    let object = |value: Value| -> Result<Arc<JsonObject>, CliError> {
        match value {
            Value::Object(map) => Ok(Arc::new(map)),
            _ => Err(CliError::Mcp(
                "a tool's output schema is not an object".to_owned(),
            )),
        }
    };
    let grade_schema: Value = serde_json::from_str(include_str!("../../schemas/grade.schema.json"))
        .map_err(CliError::Json)?;
    let list_of = |key: &str, what: &str| {
        object(json!({
            "type": "object",
            "properties": { key: { "type": "array", "items": { "type": "object" }, "description": what } },
            "required": [key],
        }))
    };
    Ok(vec![
        Tool::new(
            "grade",
            "Grade one agent session against a rubric pack. Returns the GradeResult (the same JSON as \
             `grade --format json`): totalScore out of maxScore, percent, the letter grade, each \
             dimension's score with its evidence, and flags that say what to do better. The session \
             is read from `source`, by default CLEO's `.cleo/tasks.db` in the server's working folder. \
             Call `rubric_show` first to learn what a rubric rewards; pass `explain: true` to see which \
             rule gave or took each point. A pack with judged dimensions (`langfuse-v1`) needs `judge`. \
             An unknown session, rubric or source comes back as a tool error with the reason.",
            schema(schema_for_input::<GradeParams>())?,
        )
        .with_title("Grade a session")
        .with_raw_output_schema(object(grade_schema)?)
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        ),
        Tool::new(
            "grade_list",
            "List recorded grades (the grades file `grade` appends to), the newest first, optionally \
             only one session's or one rubric's, a page at a time: at most `limit` grades (100 \
             unless told) after skipping `offset` of the newest. Returns `{\"grades\": \
             [GradeResult…], \"total\": N, \"offset\": O, \"nextOffset\": O2 or null}`, each \
             grade as `grade --list --format json` prints it; `total` counts every grade that \
             matches, and `nextOffset` is where the next page starts.",
            schema(schema_for_input::<GradeListParams>())?,
        )
        .with_title("List recorded grades")
        .with_raw_output_schema(object(json!({
            "type": "object",
            "properties": {
                "grades": { "type": "array", "items": { "type": "object" }, "description": "This page of the recorded grades, the newest first." },
                "total": { "type": "integer", "minimum": 0, "description": "How many recorded grades match, on every page." },
                "offset": { "type": "integer", "minimum": 0, "description": "How many of the newest matching grades this page skipped." },
                "nextOffset": { "type": ["integer", "null"], "minimum": 0, "description": "The `offset` of the next page, or null when this page is the last." },
            },
            "required": ["grades", "total", "offset", "nextOffset"],
        }))?)
        .with_annotations(ToolAnnotations::new().read_only(true).open_world(false)),
        Tool::new(
            "rubric_list",
            "List the rubric packs `grade` can use: those in the server's `--rubric-path` folders, then \
             the shipped ones, each with its id, version, name, number of dimensions, maximum score \
             and origin (a pack that does not validate shows how many problems it has). Returns \
             `{\"rubrics\": [...]}`, as `grade rubric list --format json` prints them.",
            schema(schema_for_input::<RubricListParams>())?,
        )
        .with_title("List rubric packs")
        .with_raw_output_schema(list_of("rubrics", "One entry per pack.")?)
        .with_annotations(ToolAnnotations::new().read_only(true).open_world(false)),
        Tool::new(
            "rubric_show",
            "Show what a rubric pack grades on, in words: its dimensions, the points each is worth, \
             and what every rule checks. The text is `grade rubric show`; the structured result is \
             `grade rubric show --format json`. Read it to learn how to score well.",
            schema(schema_for_input::<RubricShowParams>())?,
        )
        .with_title("Show a rubric pack")
        .with_annotations(ToolAnnotations::new().read_only(true).open_world(false)),
    ])
}

impl ServerHandler for GradeServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("grade", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Grades AI coding-agent sessions against rubric packs. `rubric_list` and \
                 `rubric_show` tell what a rubric rewards; `grade` grades a session and returns \
                 its score, letter, per-dimension evidence and flags; `grade_list` reads the grades \
                 recorded so far.",
            )
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // The list is one page and gives no `nextCursor`, so any cursor is one this server never
        // gave: answering it with the first page again would make a paging client loop.
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(ErrorData::invalid_params(
                format!(
                    "invalid cursor `{}`: the tool list is one page and has no next one",
                    crate::render::escape_controls(&cursor)
                ),
                None,
            ));
        }
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.get_tool(&request.name).is_none() {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", request.name),
                None,
            ));
        }
        let inner = Arc::clone(&self.inner);
        let name = request.name.clone();
        let arguments = request.arguments.unwrap_or_default();
        // Grading reads files and runs scripts: off the protocol's thread. A panic there
        // (none is expected) costs that call, not the server.
        let result = tokio::task::spawn_blocking(move || inner.call(&name, arguments))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the tool failed: {e}"), None))?;
        Ok(CallToolResponse::Complete(result))
    }
}

/// What a tool produced: text for the model, structured JSON for programs, and the warnings
/// the CLI would print on stderr.
struct Reply {
    text: String,
    structured: Value,
}

impl Inner {
    fn call(&self, name: &str, arguments: JsonObject) -> CallToolResult {
        let mut warnings = Vec::new();
        let outcome = match name {
            "grade" => parse(name, arguments).and_then(|p| self.grade(p, &mut warnings)),
            "grade_list" => parse(name, arguments).and_then(|p| self.grade_list(p)),
            "rubric_list" => {
                parse::<RubricListParams>(name, arguments).and_then(|_| self.rubric_list())
            }
            "rubric_show" => parse(name, arguments).and_then(|p| self.rubric_show(p)),
            other => Err(CliError::Usage(format!("unknown tool `{other}`"))),
        };
        let warnings: String = warnings
            .iter()
            .map(|w| {
                format!(
                    "warning: {}\n",
                    crate::render::escape_controls_keep_lines(w)
                )
            })
            .collect();
        match outcome {
            Ok(reply) => {
                let mut content = Vec::new();
                if !warnings.is_empty() {
                    content.push(ContentBlock::text(warnings));
                }
                content.push(ContentBlock::text(reply.text));
                let mut result = CallToolResult::success(content);
                result.structured_content = Some(reply.structured);
                result
            }
            // In the CLI's words, with its code: `error[E104]: …`.
            Err(err) => CallToolResult::error(vec![ContentBlock::text(format!(
                "{warnings}{}",
                err.line()
            ))]),
        }
    }

    fn policy(&self) -> grade_engine::plugin::PluginPolicy {
        grade_engine::plugin::PluginPolicy {
            allow: self.allow_plugins,
            how_to_allow: Some(crate::args::ALLOW_PLUGINS_HINT),
        }
    }

    /// The grading request of a tool call: every flag at its default, but the server's own
    /// options.
    fn request(&self) -> GradeRequest {
        GradeRequest {
            search_path: self.search_path.clone(),
            policy: self.policy(),
            grades: self.grades.clone(),
            ..GradeRequest::default()
        }
    }

    fn grade(&self, params: GradeParams, warnings: &mut Vec<String>) -> Result<Reply, CliError> {
        let mut ask = self.request();
        ask.rubric = Some(params.rubric.unwrap_or_else(|| DEFAULT_RUBRIC.to_owned()));
        ask.source = params.source.into_iter().collect();
        if ask.source.first().map(PathBuf::as_path) == Some(std::path::Path::new("-")) {
            return Err(CliError::Usage(
                "source `-` would be standard input, which carries this MCP connection; name a file"
                    .to_owned(),
            ));
        }
        // A remote source is read with the server's own keys: a client that may name one
        // can make the server send authenticated requests, so that is the operator's choice.
        if let Some(source) = ask.source.first().and_then(|s| s.to_str()) {
            if crate::langfuse::fetch::Remote::parse(source).is_some() && !self.allow_remote_sources
            {
                return Err(CliError::Usage(format!(
                    "source `{source}` would be read from Langfuse with this server's keys, and the server reads only files: start it with `grade mcp --allow-remote-sources` to allow that"
                )));
            }
        }
        // A read of a pipe blocks its thread until something writes, and neither a client's
        // cancellation nor the end of the connection ends it: the server would never exit.
        if let Some(source) = ask.source.first().filter(|s| crate::input::is_pipe(s)) {
            return Err(CliError::Usage(format!(
                "source `{}` is a named pipe, which this server would wait on until something writes to it: name a file",
                source.display()
            )));
        }
        if let Some(format) = params.source_format {
            ask.source_format = format;
        }
        ask.explain = params.explain.unwrap_or(false);
        if let Some(reference) = params
            .reference
            .as_deref()
            .filter(|r| *r == std::path::Path::new("-") || crate::input::is_pipe(r))
        {
            return Err(CliError::Usage(format!(
                "reference `{}` is standard input or a named pipe, which this server cannot read without waiting on it: name a file",
                reference.display()
            )));
        }
        ask.reference = params.reference;
        ask.judge = params.judge.into_iter().collect();
        // The judgment cache lives outside the folders this server may touch (and without a
        // judge there is no cache to pass over: the flag would be refused as doing nothing).
        ask.no_judge_cache = !ask.judge.is_empty();
        if let Some(record) = params.record {
            ask.no_record = !record;
        }
        ask.sessions = vec![params.session_id];

        // The grading command's own plan and pipeline; only the reply is this tool's.
        let plan = GradePlan::new(&ask)?;
        let mut warn = |w: String| warnings.push(w);
        let graded = crate::grading::grade_named(&plan, &mut warn)?;
        warnings.extend(crate::skipped_warning(graded.skipped, plan.source_path()));
        let outcomes = graded.outcomes;
        // As the grade command records: CLEO sources to CLEO's history file, others only to a
        // file the server was given; `record: true` asks for the server's grades file in any case.
        let record_to = match params.record {
            Some(true) => Some(crate::grades_path(self.grades.as_deref())),
            _ => plan.record_to.clone(),
        };
        let recorder = match &record_to {
            Some(path) => Some(crate::grades::Recorder::open(path, plan.default_grades)?),
            None => None,
        };
        let mut results = Vec::with_capacity(1);
        for outcome in outcomes {
            results.push(outcome?);
        }
        let [result] = results.as_slice() else {
            return Err(CliError::Usage(format!(
                "expected one grade, got {}",
                results.len()
            )));
        };
        let structured = serde_json::to_value(result).map_err(CliError::Json)?;
        let mut text = summary(result);
        if let Some(path) = &record_to {
            text.push_str(&format!("recorded in `{}`\n", path.display()));
        }
        text.push('\n');
        text.push_str(&serde_json::to_string_pretty(result).map_err(CliError::Json)?);
        if let Some(recorder) = recorder {
            recorder.append(&results)?;
        }
        Ok(Reply { text, structured })
    }

    fn grade_list(&self, params: GradeListParams) -> Result<Reply, CliError> {
        let limit = params.limit.unwrap_or(LIST_LIMIT);
        if !(1..=LIST_LIMIT_MAX).contains(&limit) {
            return Err(CliError::Usage(format!(
                "invalid arguments for `grade_list`: `limit` is {limit}; give 1 to {LIST_LIMIT_MAX}"
            )));
        }
        let offset = params.offset.unwrap_or(0);
        let path = crate::grades_path(self.grades.as_deref());
        let wanted = crate::grade_filter(params.session_id.as_deref(), params.rubric.as_deref());
        // Two readings, each holding little: the line numbers of every grade that matches,
        // then only the page's grades. A whole grades file as JSON trees took 8 times its size.
        let lines = crate::grades::read_kept_at(&path, |line, g| wanted(&g).then_some(line))?;
        let total = lines.len();
        let skip = usize::try_from(offset).unwrap_or(usize::MAX).min(total);
        let page: std::collections::HashSet<usize> = lines
            .iter()
            .rev()
            .skip(skip)
            .take(limit as usize)
            .copied()
            .collect();
        let mut grades = crate::grades::read_kept_at(&path, |line, g| {
            page.contains(&line).then_some((line, g))
        })?;
        grades.sort_unstable_by_key(|g| std::cmp::Reverse(g.0));
        let (grades, json) = fit_reply(grades, &path)?;
        let returned = grades.len();
        let next = skip + returned;
        let next_offset = (next < total).then_some(next);
        let mut text = crate::render::grade_table(&grades);
        text.push_str(&format!(
            "{} of {total} grade{} in `{}`, the newest first, from offset {skip}{}\n",
            returned,
            if total == 1 { "" } else { "s" },
            path.display(),
            match next_offset {
                Some(n) => format!("; the next page is at offset {n}"),
                None => String::new(),
            },
        ));
        text.push('\n');
        text.push_str(&json);
        Ok(Reply {
            text,
            structured: json!({
                "grades": grades,
                "total": total,
                "offset": skip,
                "nextOffset": next_offset,
            }),
        })
    }

    fn rubric_list(&self) -> Result<Reply, CliError> {
        let rows = crate::rubric_cmd::list_rows(&self.search_path, self.policy())?;
        Ok(Reply {
            text: crate::rubric_cmd::list_human(&rows),
            structured: json!({ "rubrics": rows }),
        })
    }

    fn rubric_show(&self, params: RubricShowParams) -> Result<Reply, CliError> {
        let pack = grade_engine::load_pack_with(&params.rubric, &self.search_path, self.policy())?;
        Ok(Reply {
            text: crate::rubric_cmd::show_human(&pack),
            structured: crate::rubric_cmd::show_json(&pack),
        })
    }
}

/// The grades of a page that fit in [`LIST_REPLY_CAP`], with their pretty JSON array: the
/// page stops before the grade that would pass the cap. A single grade bigger than the cap
/// is an error that names it, not a reply no client can take.
fn fit_reply(
    grades: Vec<(usize, Value)>,
    path: &std::path::Path,
) -> Result<(Vec<Value>, String), CliError> {
    let mut kept = Vec::new();
    let mut items = Vec::new();
    let mut size = 0;
    for (line, grade) in grades {
        let item = serde_json::to_string_pretty(&grade).map_err(CliError::Json)?;
        if size + item.len() > LIST_REPLY_CAP {
            if kept.is_empty() {
                return Err(CliError::Usage(format!(
                    "the grade on line {line} of `{}` is {} bytes, more than the {} a `grade_list` reply carries; read it with `grade --list`",
                    path.display(),
                    item.len(),
                    LIST_REPLY_CAP
                )));
            }
            break;
        }
        size += item.len();
        items.push(item);
        kept.push(grade);
    }
    Ok((kept, crate::render::pretty_array(&items)))
}

/// A tool's arguments, or a usage error naming what is wrong with them and the argument it
/// is wrong in: serde's own "invalid type: integer `5`, expected a string" left an agent to
/// guess which argument (issue 48, friction 12).
fn parse<T: serde::de::DeserializeOwned>(tool: &str, arguments: JsonObject) -> Result<T, CliError> {
    serde_path_to_error::deserialize(Value::Object(arguments)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        CliError::Usage(if path == "." {
            format!("invalid arguments for `{tool}`: {inner}")
        } else {
            format!("invalid argument `{path}` for `{tool}`: {inner}")
        })
    })
}

/// The grade at a glance: score, percent, letter, and the flags, one per line. A grade none
/// of whose dimensions applies says so, as the CLI's report does, rather than "0/0 (0%)".
fn summary(r: &GradeResult) -> String {
    let skipped = crate::render::not_applicable(r);
    let mut text = if skipped > 0 && skipped == r.dimensions.len() {
        format!(
            "session `{}`: {}; rubric {} {} over {} entr{}\n",
            r.session_id,
            crate::render::NOTHING_TO_GRADE,
            r.rubric.id,
            r.rubric.version,
            r.entry_count,
            if r.entry_count == 1 { "y" } else { "ies" }
        )
    } else {
        let letter = r
            .grade
            .as_deref()
            .map(|g| format!(", grade {g}"))
            .unwrap_or_default();
        // Beside the letter: what it stands on, when some dimensions did not apply.
        let on = r
            .applied_note()
            .map(|n| format!(" {n}"))
            .unwrap_or_default();
        format!(
            "session `{}`: {}/{} ({}%){letter}{on} by {} {} over {} entr{}\n",
            r.session_id,
            r.total_score,
            r.max_score,
            r.percent.unwrap_or_default(),
            r.rubric.id,
            r.rubric.version,
            r.entry_count,
            if r.entry_count == 1 { "y" } else { "ies" }
        )
    };
    if r.flags.is_empty() {
        text.push_str("no flags\n");
    } else {
        text.push_str("flags:\n");
        for f in &r.flags {
            text.push_str(&format!("- {f}\n"));
        }
    }
    text
}
