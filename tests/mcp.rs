//! `grade mcp` as an MCP client meets it: a spawned server spoken to over stdio, line by
//! line (initialize, the initialized notification, tools/list, tools/call), whose every
//! answer is checked against what the `grade` command prints for the same request.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use crate::common;
use crate::stand_in;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use common::*;
use serde_json::{json, Value};

const EXAMPLE: &str = "examples/cleo-audit.jsonl";

/// A minimal MCP client: newline-delimited JSON-RPC over the child's stdin and stdout.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Client {
    /// Starts `grade mcp ARGS` in `dir` and completes the handshake.
    fn start(dir: &Path, args: &[&str]) -> Client {
        Client::start_with_env(dir, args, &[])
    }

    fn start_with_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Client {
        let mut client = Client::spawn(dir, args, env);
        client.handshake();
        client
    }

    /// Starts `grade mcp ARGS` in `dir` and says nothing yet.
    fn spawn(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Client {
        let mut child = grade_bin()
            .current_dir(dir)
            .envs(env.iter().copied())
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("grade mcp starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        Client {
            child,
            stdin,
            stdout,
            next_id: 0,
        }
    }

    /// `initialize`, then the initialized notification.
    fn handshake(&mut self) {
        let init = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "grade-tests", "version": "0" },
            }),
        );
        let result = &init["result"];
        assert_eq!(result["serverInfo"]["name"], "grade", "{init}");
        assert_eq!(result["protocolVersion"], "2025-06-18", "{init}");
        assert!(result["capabilities"]["tools"].is_object(), "{init}");
        self.notify("notifications/initialized");
    }

    /// Writes one line as it is, JSON or not.
    fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("the connection is open");
        writeln!(stdin, "{line}").expect("the server reads its stdin");
        stdin.flush().expect("flush");
    }

    /// The next message the server writes.
    fn next_message(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).expect("read a line");
        assert!(n > 0, "the server closed stdout instead of answering");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the server wrote a line that is not JSON ({e}): {line}"))
    }

    /// Sends a line and returns the next message, which must be its answer.
    fn answer_to(&mut self, line: &str) -> Value {
        self.send_line(line);
        self.next_message()
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("the connection is open");
        writeln!(stdin, "{message}").expect("the server reads its stdin");
        stdin.flush().expect("flush");
    }

    fn notify(&mut self, method: &str) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method }));
    }

    /// Sends a request and returns the response with its id (notifications are skipped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read a line");
            assert!(
                n > 0,
                "the server closed stdout while `{method}` was pending"
            );
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("the server wrote a line that is not JSON ({e}): {line}")
            });
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// Calls a tool and returns its `CallToolResult`.
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        );
        assert!(
            response.get("error").is_none(),
            "`{tool}` answered with a protocol error instead of a result: {response}"
        );
        response["result"].clone()
    }

    /// Closes stdin, as a client that is done does, and returns the server's exit code and stderr.
    fn close(mut self) -> (i32, String) {
        drop(self.stdin.take());
        let out = self.child.wait_with_output().expect("the server exits");
        (code(&out), stderr(&out))
    }
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .expect("content is an array")
        .iter()
        .map(|c| {
            assert_eq!(c["type"], "text");
            c["text"].as_str().expect("text content").to_owned()
        })
        .collect::<Vec<_>>()
        .join("")
}

fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}

/// The CLI's list (oldest first) in `grade_list`'s order.
fn newest_first(list: &Value) -> Value {
    let mut grades = list.as_array().expect("a list").clone();
    grades.reverse();
    Value::Array(grades)
}

/// A grade with the run's clock taken out, so two runs compare equal.
fn timeless(mut grade: Value) -> Value {
    if let Some(obj) = grade.as_object_mut() {
        obj.remove("timestamp");
    }
    grade
}

fn cli_json(dir: &Path, args: &[&str]) -> Value {
    let out = run_in(dir, args);
    assert_eq!(code(&out), 0, "grade {args:?}: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("the CLI prints JSON")
}

/// The first line of the CLI's stderr that is an error, as the user reads it.
fn cli_error(dir: &Path, args: &[&str]) -> String {
    let out = run_in(dir, args);
    assert_eq!(code(&out), 2, "grade {args:?} should fail as a usage error");
    stderr(&out)
        .lines()
        .find(|l| l.starts_with("error"))
        .expect("the CLI names the error")
        .to_owned()
}

#[test]
fn tools_list_offers_four_tools_an_agent_can_call_from_their_schemas() {
    let root = repo_root();
    let mut client = Client::start(&root, &[]);
    let listed = client.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().expect("a tool list");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["grade", "grade_list", "rubric_list", "rubric_show"]);
    for tool in tools {
        let name = &tool["name"];
        let description = tool["description"].as_str().unwrap_or_default();
        assert!(
            description.len() > 80,
            "{name} needs a description an agent can act on"
        );
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["additionalProperties"], false, "{name}");
        for (param, spec) in schema["properties"].as_object().expect("properties") {
            assert!(
                spec["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{name}.{param} has no description"
            );
        }
        if let Some(output) = tool.get("outputSchema") {
            assert_eq!(
                output["type"], "object",
                "{name}: structured content is an object"
            );
        }
    }
    let grade = &tools[0]["inputSchema"];
    assert_eq!(grade["required"], json!(["sessionId"]));
    assert_eq!(grade["properties"]["rubric"]["default"], "cleo-v1");
    assert_eq!(grade["properties"]["source"]["default"], ".cleo/tasks.db");
    assert_eq!(grade["properties"]["sourceFormat"]["default"], "auto");
    // The grade tool promises results that satisfy schemas/grade.schema.json.
    let shipped: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("schemas/grade.schema.json")).expect("schema"),
    )
    .expect("schema JSON");
    assert_eq!(tools[0]["outputSchema"], shipped);
    assert_eq!(tools[3]["inputSchema"]["required"], json!(["rubric"]));
    let (code, stderr) = client.close();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn grade_tool_returns_the_cli_json_for_the_same_session() {
    let root = repo_root();
    let validator = grade_schema();
    let mut client = Client::start(&root, &[]);
    for (session, rubric, explain) in [
        ("session-demo-good", "cleo-v1", false),
        ("session-demo-sloppy", "cleo-v1", false),
        ("session-demo-sloppy", "cleo-v2", true),
    ] {
        let result = client.call(
            "grade",
            json!({
                "sessionId": session, "rubric": rubric, "source": EXAMPLE,
                "explain": explain, "record": false,
            }),
        );
        assert!(!is_error(&result), "{}", text(&result));
        let mut args = vec![
            "--rubric",
            rubric,
            "--source",
            EXAMPLE,
            "--format",
            "json",
            "--no-record",
        ];
        if explain {
            args.push("--explain");
        }
        args.push(session);
        let cli = cli_json(&root, &args);
        let structured = result["structuredContent"].clone();
        assert_valid_grade(&validator, &structured);
        assert_eq!(
            timeless(structured.clone()),
            timeless(cli),
            "{session} by {rubric}"
        );
        if explain {
            assert!(structured["explain"].is_object(), "explain was asked for");
        }

        // The text leads with the score, the letter and the flags, then the JSON itself.
        let text = text(&result);
        let headline = format!(
            "session `{session}`: {}/{} ({}%), grade {}",
            structured["totalScore"],
            structured["maxScore"],
            structured["percent"],
            structured["grade"]
                .as_str()
                .expect("cleo packs give letters"),
        );
        assert!(text.starts_with(&headline), "{text}");
        for flag in structured["flags"].as_array().expect("flags") {
            assert!(
                text.contains(&format!("- {}\n", flag.as_str().expect("flag"))),
                "{text}"
            );
        }
        let json_at = text.find("\n{").expect("the text carries the JSON");
        let embedded: Value = serde_json::from_str(&text[json_at..]).expect("JSON");
        assert_eq!(embedded, structured);
    }
    client.close();
}

#[test]
fn grade_reads_the_working_folders_cleo_db_and_records_where_grade_list_reads() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join(".cleo")).expect("mkdir");
    write_cleo_db(
        &repo_root().join(EXAMPLE),
        &dir.path().join(".cleo/tasks.db"),
    );
    let mut client = Client::start(dir.path(), &[]);

    // Nothing recorded yet: the same empty list as the CLI.
    let empty = client.call("grade_list", json!({}));
    assert!(!is_error(&empty), "{}", text(&empty));
    assert_eq!(
        empty["structuredContent"],
        json!({ "grades": [], "total": 0, "offset": 0, "nextOffset": null })
    );

    let good = client.call("grade", json!({ "sessionId": "session-demo-good" }));
    assert!(!is_error(&good), "{}", text(&good));
    assert!(text(&good).contains("recorded in `.cleo/metrics/GRADES.jsonl`"));
    let sloppy = client.call(
        "grade",
        json!({ "sessionId": "session-demo-sloppy", "rubric": "cleo-v2" }),
    );
    assert!(!is_error(&sloppy), "{}", text(&sloppy));
    let cli = cli_json(
        dir.path(),
        &[
            "--rubric",
            "cleo-v1",
            "--format",
            "json",
            "--no-record",
            "session-demo-good",
        ],
    );
    assert_eq!(
        timeless(good["structuredContent"].clone()),
        timeless(cli),
        "the default source is the working folder's .cleo/tasks.db, as for the CLI"
    );

    // grade_list is `grade --list --format json`, the newest first, wrapped in an object.
    let listed = client.call("grade_list", json!({}));
    let cli_list = cli_json(dir.path(), &["--list", "--format", "json"]);
    assert_eq!(
        listed["structuredContent"]["grades"],
        newest_first(&cli_list)
    );
    assert_eq!(listed["structuredContent"]["total"], 2);
    assert_eq!(cli_list.as_array().map(Vec::len), Some(2));
    assert_eq!(
        cli_list[0]["timestamp"],
        good["structuredContent"]["timestamp"]
    );

    let one = client.call("grade_list", json!({ "sessionId": "session-demo-sloppy" }));
    let cli_one = cli_json(
        dir.path(),
        &[
            "--list",
            "--session",
            "session-demo-sloppy",
            "--format",
            "json",
        ],
    );
    assert_eq!(one["structuredContent"]["grades"], cli_one);
    let by_rubric = client.call("grade_list", json!({ "rubric": "cleo-v2" }));
    let grades = by_rubric["structuredContent"]["grades"]
        .as_array()
        .expect("grades");
    assert_eq!(grades.len(), 1);
    assert_eq!(grades[0]["sessionId"], "session-demo-sloppy");
    assert!(text(&by_rubric).contains("session-demo-sloppy"));

    // record: false leaves the file as it was.
    let unrecorded = client.call(
        "grade",
        json!({ "sessionId": "session-demo-good", "record": false }),
    );
    assert!(!is_error(&unrecorded));
    assert!(!text(&unrecorded).contains("recorded in"));
    let after = client.call("grade_list", json!({}));
    assert_eq!(
        after["structuredContent"]["grades"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    let (code, stderr) = client.close();
    assert_eq!(code, 0, "{stderr}");
}

/// A grades file of `count` grades, each the example's graded session under its own id
/// (`s0`, `s1`…, oldest first), with `padding` bytes of evidence in the grade of `padded`.
fn many_grades(dir: &Path, count: usize, padded: Option<(usize, usize)>) -> std::path::PathBuf {
    let graded = cli_json(
        &repo_root(),
        &[
            "--rubric",
            "cleo-v1",
            "--format",
            "json",
            "--no-record",
            "--source",
            EXAMPLE,
            "session-demo-good",
        ],
    );
    let mut text = String::new();
    for i in 0..count {
        let mut grade = graded.clone();
        grade["sessionId"] = json!(format!("s{i}"));
        if let Some((_, padding)) = padded.filter(|(at, _)| *at == i) {
            grade["dimensions"]["sessionDiscipline"]["evidence"] = json!(["x".repeat(padding)]);
        }
        text.push_str(&serde_json::to_string(&grade).expect("json"));
        text.push('\n');
    }
    let path = dir.join("grades.jsonl");
    std::fs::write(&path, text).expect("write grades");
    path
}

fn session_ids(reply: &Value) -> Vec<String> {
    reply["structuredContent"]["grades"]
        .as_array()
        .expect("grades")
        .iter()
        .map(|g| g["sessionId"].as_str().expect("sessionId").to_owned())
        .collect()
}

#[test]
fn grade_list_pages_a_large_grades_file_newest_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let grades = many_grades(dir.path(), 250, None);
    let grades_arg = grades.to_str().expect("utf-8 path");
    let mut client = Client::start(dir.path(), &["--grades", grades_arg]);

    // Unasked, a page of 100, the newest first, and where the next one starts.
    let first = client.call("grade_list", json!({}));
    assert!(!is_error(&first), "{}", text(&first));
    let ids = session_ids(&first);
    assert_eq!(ids.len(), 100);
    assert_eq!((ids[0].as_str(), ids[99].as_str()), ("s249", "s150"));
    assert_eq!(first["structuredContent"]["total"], 250);
    assert_eq!(first["structuredContent"]["offset"], 0);
    assert_eq!(first["structuredContent"]["nextOffset"], 100);
    assert!(
        text(&first).contains("100 of 250 grades") && text(&first).contains("offset 100"),
        "{}",
        text(&first)
    );

    // Reading on from nextOffset reaches the oldest, and the last page says it is the last.
    let last = client.call("grade_list", json!({ "offset": 200, "limit": 100 }));
    let ids = session_ids(&last);
    assert_eq!(ids.len(), 50);
    assert_eq!(ids.last().map(String::as_str), Some("s0"));
    assert_eq!(last["structuredContent"]["nextOffset"], Value::Null);

    // Past the end: an empty page, not an error.
    let past = client.call("grade_list", json!({ "offset": 1000 }));
    assert_eq!(session_ids(&past), Vec::<String>::new());
    assert_eq!(past["structuredContent"]["offset"], 250);

    // The filters apply before the paging.
    let one = client.call("grade_list", json!({ "sessionId": "s7", "limit": 5 }));
    assert_eq!(session_ids(&one), ["s7"]);
    assert_eq!(one["structuredContent"]["total"], 1);

    for limit in [0, 1001] {
        let refused = client.call("grade_list", json!({ "limit": limit }));
        assert!(is_error(&refused));
        assert!(text(&refused).contains("`limit`"), "{}", text(&refused));
    }
    // An argument of the wrong type is named (issue 48, friction 12).
    let wrong = client.call("grade_list", json!({ "sessionId": 5 }));
    assert!(is_error(&wrong));
    assert!(
        text(&wrong).contains("invalid argument `sessionId` for `grade_list`: invalid type: integer `5`, expected a string"),
        "{}",
        text(&wrong)
    );
    let (code, stderr) = client.close();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn grade_list_reply_stops_at_its_size_cap() {
    let dir = tempfile::tempdir().expect("tempdir");
    // s2 (third newest of 4) carries 3 MiB of evidence, s1 another 3 MiB: together over the
    // 4 MiB a reply carries.
    let grades = many_grades(dir.path(), 4, Some((2, 3 << 20)));
    let text_of_file = std::fs::read_to_string(&grades).expect("read");
    let mut lines: Vec<String> = text_of_file.lines().map(str::to_owned).collect();
    let mut s1: Value = serde_json::from_str(&lines[1]).expect("json");
    s1["dimensions"]["sessionDiscipline"]["evidence"] = json!(["y".repeat(3 << 20)]);
    lines[1] = serde_json::to_string(&s1).expect("json");
    std::fs::write(&grades, lines.join("\n") + "\n").expect("write");
    let grades_arg = grades.to_str().expect("utf-8 path");
    let mut client = Client::start(dir.path(), &["--grades", grades_arg]);

    let page = client.call("grade_list", json!({}));
    assert!(!is_error(&page), "{}", text(&page));
    assert_eq!(session_ids(&page), ["s3", "s2"]);
    assert_eq!(page["structuredContent"]["nextOffset"], 2);
    let next = client.call("grade_list", json!({ "offset": 2 }));
    assert_eq!(session_ids(&next), ["s1", "s0"]);

    // A single grade over the cap is named, not sent.
    let mut huge = s1.clone();
    huge["sessionId"] = json!("huge");
    huge["dimensions"]["sessionDiscipline"]["evidence"] = json!(["z".repeat(5 << 20)]);
    let mut text_of_file = std::fs::read_to_string(&grades).expect("read");
    text_of_file.push_str(&serde_json::to_string(&huge).expect("json"));
    text_of_file.push('\n');
    std::fs::write(&grades, text_of_file).expect("write");
    let refused = client.call("grade_list", json!({}));
    assert!(is_error(&refused));
    assert!(
        text(&refused).contains("line 5") && text(&refused).contains("grade --list"),
        "{}",
        text(&refused)
    );
    client.close();
}

#[test]
fn grade_tool_takes_a_reference_trajectory_as_the_cli_does() {
    let root = repo_root();
    let session = "1af7fc5e-8455-4414-9ccd-011d40f70b2a";
    let mut client = Client::start(&root, &[]);
    let args = |reference: Option<&str>| {
        let mut args = json!({
            "sessionId": session,
            "rubric": "examples/trajectory/pack",
            "source": "examples/trajectory/session.jsonl",
            "record": false,
        });
        if let Some(reference) = reference {
            args["reference"] = json!(reference);
        }
        args
    };
    let with = client.call("grade", args(Some("examples/trajectory/reference.jsonl")));
    assert!(!is_error(&with), "{}", text(&with));
    let cli = cli_json(
        &root,
        &[
            "--rubric",
            "examples/trajectory/pack",
            "--source",
            "examples/trajectory/session.jsonl",
            "--reference",
            "examples/trajectory/reference.jsonl",
            "--format",
            "json",
            "--no-record",
            session,
        ],
    );
    assert_eq!(timeless(with["structuredContent"].clone()), timeless(cli));
    // Without one, the trajectory dimension does not apply, and says so.
    let without = client.call("grade", args(None));
    assert!(!is_error(&without), "{}", text(&without));
    let trajectory = &without["structuredContent"]["dimensions"]["trajectory"];
    assert_eq!(trajectory["notApplicable"], true, "{trajectory}");
    // A reference file that is not one is a tool error naming it.
    let bad = client.call("grade", args(Some("examples/trajectory/session.jsonl")));
    assert!(is_error(&bad));
    assert!(
        text(&bad).contains("examples/trajectory/session.jsonl"),
        "{}",
        text(&bad)
    );
    let (code, stderr) = client.close();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn server_grades_option_names_the_file_grade_appends_to_and_grade_list_reads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let grades = dir.path().join("elsewhere/grades.jsonl");
    let grades_arg = grades.to_str().expect("utf-8 path");
    let mut client = Client::start(&repo_root(), &["--grades", grades_arg]);
    let graded = client.call(
        "grade",
        json!({ "sessionId": "session-demo-good", "source": EXAMPLE }),
    );
    assert!(!is_error(&graded), "{}", text(&graded));
    let listed = client.call("grade_list", json!({}));
    let cli = cli_json(
        &repo_root(),
        &["--list", "--grades", grades_arg, "--format", "json"],
    );
    assert_eq!(listed["structuredContent"]["grades"], newest_first(&cli));
    assert_eq!(cli[0]["sessionId"], "session-demo-good");
    client.close();
}

#[test]
fn rubric_tools_return_what_grade_rubric_prints() {
    let root = repo_root();
    let packs = fixture("packs");
    let packs_arg = packs.to_str().expect("utf-8 path");
    let mut client = Client::start(&root, &["--rubric-path", packs_arg]);

    let listed = client.call("rubric_list", json!({}));
    assert!(!is_error(&listed), "{}", text(&listed));
    let cli = cli_json(
        &root,
        &[
            "rubric",
            "list",
            "--rubric-path",
            packs_arg,
            "--format",
            "json",
        ],
    );
    assert_eq!(listed["structuredContent"]["rubrics"], cli);
    let human = run_in(&root, &["rubric", "list", "--rubric-path", packs_arg]);
    assert_eq!(text(&listed), stdout(&human));

    for pack in ["cleo-v1", "claude-code-v1", "langfuse-v1"] {
        let shown = client.call("rubric_show", json!({ "rubric": pack }));
        assert!(!is_error(&shown), "{}", text(&shown));
        let cli = cli_json(&root, &["rubric", "show", pack, "--format", "json"]);
        assert_eq!(shown["structuredContent"], cli, "{pack}");
        let human = run_in(&root, &["rubric", "show", pack]);
        assert_eq!(text(&shown), stdout(&human), "{pack}");
    }
    client.close();
}

#[test]
fn errors_are_tool_errors_with_the_cli_message_and_the_server_keeps_serving() {
    let root = repo_root();
    let empty = tempfile::tempdir().expect("tempdir");
    let mut client = Client::start(empty.path(), &[]);
    let example = root.join(EXAMPLE);
    let example = example.to_str().expect("utf-8 path");

    // An unknown rubric, a missing source, no `.cleo/tasks.db` here, an unknown pack to show.
    let cases: [(&str, Value, Vec<&str>); 5] = [
        (
            "grade",
            json!({ "sessionId": "session-demo-good", "rubric": "no-such-pack", "source": example }),
            vec![
                "--rubric",
                "no-such-pack",
                "--source",
                example,
                "session-demo-good",
            ],
        ),
        (
            "grade",
            json!({ "sessionId": "session-demo-good", "source": "missing.jsonl" }),
            vec![
                "--rubric",
                "cleo-v1",
                "--source",
                "missing.jsonl",
                "session-demo-good",
            ],
        ),
        (
            "grade",
            json!({ "sessionId": "session-demo-good" }),
            vec!["--rubric", "cleo-v1", "session-demo-good"],
        ),
        (
            "grade",
            json!({ "sessionId": "session-demo-good", "source": example, "sourceFormat": "csv" }),
            vec![
                "--rubric",
                "cleo-v1",
                "--source",
                example,
                "--source-format",
                "csv",
                "session-demo-good",
            ],
        ),
        (
            "rubric_show",
            json!({ "rubric": "no-such-pack" }),
            vec!["rubric", "show", "no-such-pack"],
        ),
    ];
    for (tool, arguments, cli_args) in cases {
        let result = client.call(tool, arguments.clone());
        assert!(is_error(&result), "{tool} {arguments}: {result}");
        assert_eq!(
            text(&result),
            cli_error(empty.path(), &cli_args),
            "{tool} {arguments}"
        );
    }

    // A judged pack cannot be graded without a judgment, which a tool call cannot give.
    let judged = client.call(
        "grade",
        json!({ "sessionId": "session-demo-good", "rubric": "langfuse-v1", "source": example }),
    );
    assert!(is_error(&judged));
    assert!(
        text(&judged).starts_with("error[E201]: rubric `langfuse-v1` scores"),
        "{judged}"
    );

    // Arguments that do not fit the schema are tool errors the agent can correct.
    for (arguments, says) in [
        (json!({}), "missing field `sessionId`"),
        (json!({ "session": "x" }), "unknown field `session`"),
        (json!({ "sessionId": 7 }), "invalid type"),
        // Standard input carries the protocol: it is no source here.
        (
            json!({ "sessionId": "x", "source": "-" }),
            "source `-` would be standard input",
        ),
    ] {
        let result = client.call("grade", arguments.clone());
        assert!(is_error(&result), "{arguments}");
        let message = text(&result);
        assert!(message.starts_with("error[E201]: "), "{message}");
        assert!(message.contains(says), "{arguments}: {message}");
        assert!(!message.contains('\n'), "one line: {message}");
    }

    // An unknown tool is a protocol error, as the specification asks.
    let unknown = client.request("tools/call", json!({ "name": "nope", "arguments": {} }));
    assert!(unknown["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("nope")));

    // After all that the server still grades.
    let ok = client.call(
        "grade",
        json!({ "sessionId": "session-demo-good", "source": example, "record": false }),
    );
    assert!(!is_error(&ok), "{}", text(&ok));
    assert_eq!(ok["structuredContent"]["totalScore"], 100);
    let (code, stderr) = client.close();
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A session the pack cannot grade (CLEO's grader throws on it) is a tool error with the
/// message the CLI prints for it.
#[test]
fn a_session_cleo_cannot_grade_is_a_tool_error_naming_the_entry() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let line = json!({
        "timestamp": "2026-03-01T12:00:01Z", "sessionId": "s1", "domain": "tasks",
        "operation": "add", "params": { "title": "x", "description": 7 },
        "result": { "success": true, "exitCode": 0, "duration": 5 },
        "metadata": { "source": "mcp" }
    });
    std::fs::write(&log, format!("{line}\n")).expect("log written");
    let log = log.to_str().expect("utf-8 path");
    let mut client = Client::start(dir.path(), &[]);
    let result = client.call(
        "grade",
        json!({ "sessionId": "s1", "source": log, "record": false }),
    );
    assert!(is_error(&result), "{result}");
    let message = "error[E040]: rubric `cleo-v1` cannot grade session `s1`: `blank` of selector `task_added_without_description` tests text, and `params.description` of the entry at `audit.jsonl:1` is a number (`7`)";
    assert_eq!(text(&result), message);
    let out = run_in(
        dir.path(),
        &["--rubric", "cleo-v1", "--source", log, "--no-record", "s1"],
    );
    assert_eq!(code(&out), 1);
    assert_eq!(
        stderr(&out),
        format!("{message}\nerror[E202]: 1 of 1 session could not be graded\n")
    );
    let (code, stderr) = client.close();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn unknown_session_id_is_answered_as_the_cli_answers_it() {
    let root = repo_root();
    let mut client = Client::start(&root, &[]);
    let result = client.call(
        "grade",
        json!({ "sessionId": "session-nobody-ran", "source": EXAMPLE, "record": false }),
    );
    let out = run_in(
        &root,
        &[
            "--rubric",
            "cleo-v1",
            "--source",
            EXAMPLE,
            "--format",
            "json",
            "--no-record",
            "session-nobody-ran",
        ],
    );
    // The server shares the CLI's code, so it follows the CLI's policy whichever it is: an
    // empty-session grade with a warning, or an error.
    if code(&out) == 0 {
        assert!(!is_error(&result), "{}", text(&result));
        let cli: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
        assert_eq!(timeless(result["structuredContent"].clone()), timeless(cli));
        for warning in stderr(&out).lines().filter(|l| l.starts_with("warning: ")) {
            assert!(
                text(&result).contains(warning),
                "{warning} missing from {result}"
            );
        }
    } else {
        assert!(is_error(&result), "{result}");
        let error = stderr(&out)
            .lines()
            .find(|l| l.starts_with("error"))
            .expect("an error line")
            .to_owned();
        assert!(text(&result).ends_with(&error), "{result}");
    }
    client.close();
}

#[test]
fn grade_asks_the_judge_a_call_names_for_a_judged_pack_as_the_cli_does() {
    const TRANSCRIPT: &str = "rubrics/claude-code-v1/tests/real/claude_code_transcripts/real/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";
    const SESSION: &str = "1af7fc5e-8455-4414-9ccd-011d40f70b2a";
    let mut judged = serde_json::Map::new();
    for (name, score) in [
        ("goal_achievement", 3.0),
        ("tool_efficiency", 0.5),
        ("process_adherence", 0.5),
        ("context_efficiency", 0.5),
        ("error_handling", 3.0),
        ("output_quality", 0.5),
    ] {
        judged.insert(
            name.to_owned(),
            json!({ "score": score, "evidence": [format!("{name} seen")], "rationale": "because" }),
        );
    }
    let reply = stand_in::Response::json(
        200,
        &json!({
            "id": "chatcmpl-test", "object": "chat.completion", "model": "gpt-test",
            "choices": [{ "index": 0, "finish_reason": "stop",
                          "message": { "role": "assistant", "content": Value::Object(judged).to_string() } }],
            "usage": { "prompt_tokens": 900, "completion_tokens": 120, "total_tokens": 1020 },
        }),
    );
    let server = stand_in::serve(move |_| reply.clone());
    let base = format!("{}/v1", server.url);
    let cache = tempfile::tempdir().expect("tempdir");
    let cache_dir = cache.path().to_str().expect("utf-8 path");
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", "sk-test"),
        ("XDG_CACHE_HOME", cache_dir),
    ];
    let root = repo_root();
    let mut client = Client::start_with_env(&root, &[], &env);
    let result = client.call(
        "grade",
        json!({ "sessionId": SESSION, "rubric": "langfuse-v1", "source": TRANSCRIPT,
                "judge": "openai:gpt-test", "record": false }),
    );
    assert!(!is_error(&result), "{}", text(&result));
    let out = grade_bin()
        .current_dir(&root)
        .envs(env)
        .args([
            "--rubric",
            "langfuse-v1",
            "--source",
            TRANSCRIPT,
            "--judge",
            "openai:gpt-test",
            "--no-judge-cache",
            "--no-record",
            "--format",
            "json",
            SESSION,
        ])
        .output()
        .expect("grade runs");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let cli: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let structured = result["structuredContent"].clone();
    assert_eq!(
        structured["dimensions"]["goal_achievement"]["rationale"],
        "because"
    );
    assert_eq!(timeless(structured), timeless(cli));
    assert!(
        std::fs::read_dir(cache.path()).map_or(true, |mut d| d.next().is_none()),
        "the server keeps no judgment cache"
    );
    client.close();
}

#[test]
fn grade_of_a_transcript_records_nothing_unless_asked_as_the_cli_does() {
    let transcript = repo_root().join(
        "rubrics/claude-code-v1/tests/real/claude_code_transcripts/real/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
    );
    let source = transcript.to_str().expect("utf-8 path");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut client = Client::start(dir.path(), &[]);

    // Only CLEO sources go to CLEO's history file by default.
    let quiet = client.call(
        "grade",
        json!({ "sessionId": "1af7fc5e-8455-4414-9ccd-011d40f70b2a",
                "rubric": "claude-code-v1", "source": source }),
    );
    assert!(!is_error(&quiet), "{}", text(&quiet));
    assert!(!text(&quiet).contains("recorded in"), "{}", text(&quiet));
    assert!(!dir.path().join(".cleo").exists(), "nothing was written");

    // Asked for, the grade goes to the server's grades file, which the reply names.
    let asked = client.call(
        "grade",
        json!({ "sessionId": "1af7fc5e-8455-4414-9ccd-011d40f70b2a",
                "rubric": "claude-code-v1", "source": source, "record": true }),
    );
    assert!(!is_error(&asked), "{}", text(&asked));
    assert!(
        text(&asked).contains("recorded in `.cleo/metrics/GRADES.jsonl`"),
        "{}",
        text(&asked)
    );
    let listed = client.call("grade_list", json!({}));
    assert_eq!(
        listed["structuredContent"]["grades"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    client.close();
}

/// The error of a JSON-RPC error response: its code and message, after checking the id.
fn error_of(response: &Value, id: Value) -> (i64, String) {
    assert_eq!(response["jsonrpc"], "2.0", "{response}");
    assert_eq!(
        response.get("id"),
        Some(&id),
        "the answer carries the id: {response}"
    );
    assert!(response.get("result").is_none(), "{response}");
    let code = response["error"]["code"].as_i64().expect("an error code");
    let message = response["error"]["message"]
        .as_str()
        .expect("an error message")
        .to_owned();
    (code, message)
}

/// After whatever came before, a ping still gets its own answer, and nothing else came first.
fn still_serves(client: &mut Client) {
    let pong = client.answer_to(r#"{"jsonrpc":"2.0","id":"still-there","method":"ping"}"#);
    assert_eq!(
        pong["id"], "still-there",
        "an answer nobody asked for came first: {pong}"
    );
    assert_eq!(pong["result"], json!({}), "{pong}");
}

#[test]
fn params_of_the_wrong_shape_are_invalid_params_answered_with_the_request_id() {
    let mut client = Client::start(&repo_root(), &[]);
    for (line, says) in [
        (
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":"str"}"#,
            "`params` of `tools/call` must be an object, not a string",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":[1]}"#,
            "`params` of `tools/call` must be an object, not an array",
        ),
        // rmcp alone took a known method with params that do not fit for an unknown method.
        (
            r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"arguments":{}}}"#,
            "invalid params for `tools/call`: missing field `name`",
        ),
        (
            r#"{"jsonrpc":"2.0","id":14,"method":"tools/call"}"#,
            "invalid params for `tools/call`",
        ),
    ] {
        let sent: Value = serde_json::from_str(line).expect("JSON");
        let answer = client.answer_to(line);
        let (code, message) = error_of(&answer, sent["id"].clone());
        assert_eq!(code, -32602, "{line}: {answer}");
        assert!(message.contains(says), "{line}: {message}");
    }
    still_serves(&mut client);
    let (code, stderr) = client.close();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_line_that_is_not_json_is_answered_with_a_parse_error_and_a_null_id() {
    let mut client = Client::start(&repo_root(), &[]);
    for line in [
        "this is not json",
        r#"{"jsonrpc":"2.0","id":3,"method":"ping""#,
    ] {
        let answer = client.answer_to(line);
        let (code, message) = error_of(&answer, Value::Null);
        assert_eq!(code, -32700, "{line}: {answer}");
        assert!(message.starts_with("parse error: not JSON"), "{message}");
    }
    still_serves(&mut client);
    client.close();

    // Answered even when the client closes stdin right after: what is queued is written.
    let out = mcp_once(b"not json\n", Stdio::piped());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let answer: Value = serde_json::from_str(stdout(&out).trim()).expect("one JSON line");
    assert_eq!(error_of(&answer, Value::Null).0, -32700);
}

/// Runs `grade mcp` with `input` on stdin, closed right after, and its stdout to `stdout`.
fn mcp_once(input: &[u8], stdout: Stdio) -> std::process::Output {
    grade_bin()
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(input)?;
            }
            child.wait_with_output()
        })
        .expect("grade mcp runs")
}

#[test]
fn an_answer_that_cannot_be_written_ends_the_server_with_exit_2() {
    // stdout on a full disk: the answer to `not json` cannot be written, and the server must
    // not end with 0 as if the client had it (a broken pipe, the client gone, still ends 0).
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return;
    };
    let out = mcp_once(b"not json\n", full.into());
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot write to standard output"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_batch_is_refused_with_an_error_for_each_request_it_holds() {
    let mut client = Client::start(&repo_root(), &[]);
    let answer = client.answer_to(
        r#"[{"jsonrpc":"2.0","id":20,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"tools/list"}]"#,
    );
    let errors = answer
        .as_array()
        .expect("a batch is answered with an array");
    assert_eq!(errors.len(), 2, "no answer to the notification: {answer}");
    for (error, id) in errors.iter().zip([json!(20), json!("b")]) {
        let (code, message) = error_of(error, id);
        assert_eq!(code, -32600);
        assert!(message.contains("batches are not supported"), "{message}");
    }
    // An empty batch, and one of notifications only: one error, as nothing carries an id.
    for line in [
        "[]",
        r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
    ] {
        let answer = client.answer_to(line);
        assert_eq!(error_of(&answer, Value::Null).0, -32600, "{line}: {answer}");
    }
    still_serves(&mut client);
    client.close();
}

#[test]
fn a_message_that_is_no_request_is_an_invalid_request_answered_with_its_id() {
    let mut client = Client::start(&repo_root(), &[]);
    for (line, id, says) in [
        (r#"{"jsonrpc":"2.0","id":30}"#, json!(30), "no `method`"),
        (
            r#"{"jsonrpc":"2.0","id":31,"params":{}}"#,
            json!(31),
            "no `method`",
        ),
        (
            r#"{"id":32,"method":"ping"}"#,
            json!(32),
            "`jsonrpc` must be \"2.0\"",
        ),
        (
            r#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#,
            json!("x"),
            "`jsonrpc`",
        ),
        (
            r#"{"jsonrpc":"2.0","id":33,"method":7}"#,
            json!(33),
            "`method` must be a string",
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            Value::Null,
            "`id` must be a string or an integer, not null",
        ),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            Value::Null,
            "not a boolean",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            json!(1.5),
            "`id` must be a string or an integer",
        ),
        (
            "42",
            Value::Null,
            "a message is a JSON object, not a number",
        ),
    ] {
        let answer = client.answer_to(line);
        let (code, message) = error_of(&answer, id);
        assert_eq!(code, -32600, "{line}: {answer}");
        assert!(message.contains(says), "{line}: {message}");
    }
    still_serves(&mut client);
    client.close();
}

#[test]
fn an_unknown_method_is_method_not_found_for_a_request_and_unanswered_for_a_notification() {
    let mut client = Client::start(&repo_root(), &[]);
    let answer =
        client.answer_to(r#"{"jsonrpc":"2.0","id":40,"method":"grades/everything","params":{}}"#);
    let (code, message) = error_of(&answer, json!(40));
    assert_eq!(code, -32601, "{answer}");
    assert_eq!(message, "unknown method `grades/everything`");
    // Notifications are never answered: not an unknown one, nor one that is malformed.
    client.send_line(r#"{"jsonrpc":"2.0","method":"grades/everything"}"#);
    client.send_line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"str"}"#);
    // Nor is a response to a request this server never sent.
    client.send_line(r#"{"jsonrpc":"2.0","id":99,"result":{}}"#);
    still_serves(&mut client);
    let (code, stderr) = client.close();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_call_before_initialize_is_told_to_initialize_first_and_the_server_goes_on() {
    let mut client = Client::spawn(&repo_root(), &[], &[]);
    // A notification before the handshake is no reason to end the server (rmcp ended it).
    client.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    client.send_line(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
    let answer = client.answer_to(
        r#"{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"rubric_list","arguments":{}}}"#,
    );
    let (code, message) = error_of(&answer, json!(50));
    assert_eq!(code, -32600, "{answer}");
    assert_eq!(
        message,
        "`tools/call` before `initialize`: a session starts with an `initialize` request"
    );
    assert!(!message.contains("_meta"), "{message}");
    // Ping is allowed before initialize.
    still_serves(&mut client);
    client.handshake();
    let listed = client.call("rubric_list", json!({}));
    assert!(!is_error(&listed), "{}", text(&listed));
    let (code, stderr) = client.close();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_client_that_leaves_before_initialize_ends_the_server_cleanly() {
    let out = grade_bin()
        .arg("mcp")
        .stdin(Stdio::null())
        .output()
        .expect("grade mcp runs");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
}

#[test]
fn a_closed_stdout_ends_the_server_cleanly_while_stdin_stays_open() {
    let client = Client::start(&repo_root(), &[]);
    // The client stops reading; the server's next answer cannot be written.
    let Client {
        mut child,
        stdin,
        stdout,
        ..
    } = client;
    drop(stdout);
    let mut stdin = stdin.expect("stdin is open");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut id = 60;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server went on after stdout was closed");
        }
        // A ping a round, not one: while another test's child is between fork and exec it
        // holds a copy of every pipe end, so one answer can land in the pipe without an
        // error and the server, rightly, waits for the next request. The server may also
        // have ended between `try_wait` and this write, so a failed write is expected.
        let _ = writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)
            .and_then(|()| stdin.flush());
        id += 1;
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        std::io::Read::read_to_string(&mut pipe, &mut stderr).expect("stderr");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    drop(stdin);
}

#[test]
fn a_session_with_nothing_to_grade_says_so_as_the_cli_does() {
    let root = repo_root();
    let source = "rubrics/claude-code-v1/tests/real/claude_code_transcripts/synthetic/daaain__test_data/session_b.jsonl";
    let mut client = Client::start(&root, &[]);
    let result = client.call(
        "grade",
        json!({ "sessionId": "session_b", "rubric": "claude-code-v1", "source": source, "record": false }),
    );
    assert!(!is_error(&result), "{}", text(&result));
    let cli = run_in(
        &root,
        &[
            "--rubric",
            "claude-code-v1",
            "--source",
            source,
            "--no-record",
            "session_b",
        ],
    );
    assert_eq!(code(&cli), 0, "{}", stderr(&cli));
    assert!(
        stdout(&cli).contains("nothing to grade: no dimension applies"),
        "{}",
        stdout(&cli)
    );
    let said = text(&result);
    assert!(
        said.starts_with("session `session_b`: nothing to grade: no dimension applies"),
        "{said}"
    );
    assert!(!said.contains("0/0"), "{said}");
    client.close();
}

#[test]
fn methods_of_capabilities_the_server_does_not_declare_are_method_not_found_naming_them() {
    let mut client = Client::start(&repo_root(), &[]);
    for (id, method, params) in [
        (60, "prompts/list", json!({})),
        (61, "resources/list", json!({})),
        (62, "logging/setLevel", json!({ "level": "debug" })),
        // Params that would not fit do not make it a method to call with other params.
        (63, "completion/complete", json!({})),
        (64, "resources/read", json!({ "uri": "file:///etc/passwd" })),
    ] {
        let answer = client.answer_to(
            &json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string(),
        );
        let (code, message) = error_of(&answer, json!(id));
        assert_eq!(code, -32601, "{method}: {answer}");
        assert_eq!(
            message,
            format!(
                "method `{method}` is not offered: this server has tools only (`tools/list`, `tools/call`)"
            )
        );
    }
    still_serves(&mut client);
    let (code, stderr) = client.close();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_tools_list_cursor_the_server_never_gave_is_invalid_params() {
    let mut client = Client::start(&repo_root(), &[]);
    let listed = client.request("tools/list", json!({}));
    assert!(
        listed["result"].get("nextCursor").is_none(),
        "one page: {listed}"
    );
    let answer = client.answer_to(
        r#"{"jsonrpc":"2.0","id":"page-2","method":"tools/list","params":{"cursor":"zzz"}}"#,
    );
    let (code, message) = error_of(&answer, json!("page-2"));
    assert_eq!(code, -32602, "{answer}");
    assert_eq!(
        message,
        "invalid cursor `zzz`: the tool list is one page and has no next one"
    );
    still_serves(&mut client);
    client.close();
}

#[test]
fn an_id_that_is_an_integer_beyond_64_bits_is_answered_with_the_id_as_written() {
    let mut client = Client::start(&repo_root(), &[]);
    client.send_line(r#"{"jsonrpc":"2.0","id":1180591620717411303424,"method":"ping"}"#);
    // Read as text: a JSON reader would turn the id into a float, the very thing guarded.
    let mut line = String::new();
    client.stdout.read_line(&mut line).expect("read a line");
    assert_eq!(
        line,
        concat!(
            r#"{"error":{"code":-32600,"message":"`id` must be a string or an integer (of 64 bits at most), "#,
            r#"not `1180591620717411303424`"},"id":1180591620717411303424,"jsonrpc":"2.0"}"#,
            "\n"
        )
    );
    still_serves(&mut client);
    client.close();
}

#[test]
fn a_second_initialize_is_refused_and_the_session_goes_on() {
    let mut client = Client::start(&repo_root(), &[]);
    let answer = client.answer_to(
        r#"{"jsonrpc":"2.0","id":"again","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"grade-tests","version":"0"}}}"#,
    );
    let (code, message) = error_of(&answer, json!("again"));
    assert_eq!(code, -32600, "{answer}");
    assert_eq!(
        message,
        "`initialize` again: this connection is initialized already, and a new session needs a new connection"
    );
    still_serves(&mut client);
    client.close();
}

/// A call naming a FIFO nobody writes to blocked its thread for good: cancelling it did
/// nothing, and when the client closed stdin the server waited for that thread and never
/// exited.
#[cfg(unix)]
#[test]
fn a_source_that_is_a_named_pipe_is_a_tool_error_and_the_server_still_exits() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("source.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let mut client = Client::start(&repo_root(), &[]);
    let result = client.call(
        "grade",
        json!({ "sessionId": "s", "source": fifo.to_str().expect("utf-8") }),
    );
    assert!(is_error(&result), "{result}");
    assert_eq!(
        text(&result),
        format!(
            "error[E201]: source `{}` is a named pipe, which this server would wait on until something writes to it: name a file",
            fifo.display()
        )
    );
    still_serves(&mut client);
    let (code, stderr) = client.close();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_one_entry_session_is_graded_over_1_entry_not_1_entries() {
    let dir = tempfile::tempdir().unwrap();
    write_one_entry_log(dir.path());
    let mut client = Client::start(dir.path(), &[]);
    let result = client.call(
        "grade",
        json!({ "sessionId": "s", "rubric": "cleo-v1", "source": "one.jsonl", "record": false }),
    );
    assert!(!is_error(&result), "{}", text(&result));
    let text = text(&result);
    assert!(
        text.lines()
            .next()
            .is_some_and(|l| l.ends_with(" by cleo-v1 1.0.0 over 1 entry")),
        "{text}"
    );
    client.close();
}

/// `source: "langfuse:session/x"` made the server send authenticated requests with its own
/// LANGFUSE_* keys, while the docs said it reads only files. A remote source is refused
/// unless the server was started with `--allow-remote-sources`. (Issue 41, defect 16.)
#[test]
fn a_remote_source_is_refused_unless_the_server_allows_remote_sources() {
    let langfuse = stand_in::serve(|_| {
        stand_in::Response::json(401, &json!({ "message": "Invalid credentials" }))
    });
    let env = [
        ("LANGFUSE_BASE_URL", langfuse.url.as_str()),
        ("LANGFUSE_PUBLIC_KEY", "pk-lf-server"),
        ("LANGFUSE_SECRET_KEY", "sk-lf-server"),
    ];
    let root = repo_root();
    let call = json!({ "sessionId": "x", "rubric": "claude-code-v1",
                       "source": "langfuse:session/x", "record": false });

    let mut client = Client::start_with_env(&root, &[], &env);
    let result = client.call("grade", call.clone());
    assert!(is_error(&result), "{}", text(&result));
    assert_eq!(
        text(&result),
        "error[E201]: source `langfuse:session/x` would be read from Langfuse with this server's keys, and the server reads only files: start it with `grade mcp --allow-remote-sources` to allow that"
    );
    client.close();
    assert_eq!(langfuse.requests().len(), 0, "no request was sent");

    let mut client = Client::start_with_env(&root, &["--allow-remote-sources"], &env);
    let result = client.call("grade", call);
    assert!(is_error(&result), "{}", text(&result));
    assert!(
        text(&result).contains("refused the keys"),
        "{}",
        text(&result)
    );
    client.close();
    assert!(
        !langfuse.requests().is_empty(),
        "allowed, the server asks Langfuse"
    );
}

/// The VmHWM (peak resident memory) of a process, in KiB.
#[cfg(target_os = "linux")]
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

/// A client that sent requests and never read its stdout made the server queue replies
/// without end (266 → 841 MiB, linear in the requests). The server now stops reading
/// requests while its replies cannot be written, and goes on once they are read.
/// (Issue 41, defect 5.)
#[cfg(target_os = "linux")]
#[test]
fn a_client_that_never_reads_its_replies_stops_the_server_reading_requests() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    const REQUESTS: usize = 20_000;
    let client = Client::start(&repo_root(), &[]);
    let Client {
        mut child,
        stdin,
        mut stdout,
        ..
    } = client;
    let mut stdin = stdin.expect("stdin is open");
    let sent = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&sent);
    // Each answer to `tools/list` is about 12 kB: 20,000 of them are 230 MB.
    let writer = std::thread::spawn(move || {
        for id in 1..=REQUESTS {
            let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n");
            if stdin.write_all(line.as_bytes()).is_err() || stdin.flush().is_err() {
                return;
            }
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    // Wait until the server stops taking requests (no progress for 2 s), or takes them all.
    let deadline = Instant::now() + Duration::from_secs(120);
    let (mut last, mut since) = (0, Instant::now());
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let now = sent.load(Ordering::SeqCst);
        assert!(
            now < REQUESTS,
            "the server read all {REQUESTS} requests while no reply was read"
        );
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() > Duration::from_secs(2) {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server kept reading requests: {now} so far");
        }
    }
    let peak = peak_kib(child.id());
    assert!(
        peak < 200 << 10,
        "the server's memory peaked at {} MiB with {last} requests unanswered",
        peak >> 10
    );

    // Read some replies: the server reads requests again.
    let mut line = Vec::new();
    for _ in 0..600 {
        line.clear();
        let n = stdout.read_until(b'\n', &mut line).expect("a reply");
        assert!(n > 0, "the server closed stdout");
    }
    let resumed = Instant::now() + Duration::from_secs(60);
    while sent.load(Ordering::SeqCst) == last {
        assert!(Instant::now() < resumed, "the server does not read again");
        std::thread::sleep(Duration::from_millis(50));
    }

    // The client goes away without reading the rest: the server ends cleanly.
    drop(stdout);
    let end = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > end {
            let _ = child.kill();
            panic!("the server went on after the client left");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
    writer.join().expect("the writer ends");
}
