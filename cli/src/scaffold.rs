//! `grade rubric new NAME [--from ID]`: a pack folder that validates and passes its own
//! test straight away, so an author starts from something that works.

use std::path::{Path, PathBuf};

use grade_engine::pack_test;
use grade_engine::plugin::PluginPolicy;
use grade_engine::{PackFiles, PackOrigin, Registry};

use crate::args::RubricNewArgs;
use crate::error::CliError;
use crate::write_stdout;

const TEMPLATE_RUBRIC: &str = r#"# A rubric pack: selectors name the entries rules look at, metrics compute values per
# session, and each dimension's rules give or take points. See docs/rubric-packs.md.
id: "{{NAME}}"
version: 0.1.0
name: "{{NAME}}"
description: What this rubric grades, in one sentence.

# The source formats the rules are written for (others are refused); leave out for any.
sources: [cleo-db, cleo-jsonl]

bands:
  - { grade: A, min_percent: 90 }
  - { grade: B, min_percent: 75 }
  - { grade: C, min_percent: 60 }
  - { grade: D, min_percent: 45 }
  - { grade: F, min_percent: 0 }

selectors:
  task_find: { domain: tasks, operation: find }
  task_discovery: { domain: tasks, operation: [find, list] }
  failed_call: { success: false }

metrics:
  find_share:
    ratio: { of: task_find, over: task_discovery }

dimensions:
  - id: discovery
    name: Discovery
    max: 10
    rules:
      - id: prefer-find
        doc: Up to 10 points for the share of discovery calls that use `tasks.find`.
        cases:
          - when: { count: task_discovery, at_most: 0 }
            points: 10
            evidence: No discovery calls needed
          - when: { metric: find_share, at_least: 1 }
            points: 10
            evidence: All {count.task_discovery} discovery calls used tasks.find
          - points: { metric: find_share, times: 10 }
            flag: "{percent.find_share}% of discovery calls used tasks.find (prefer it over tasks.list)"

  - id: errors
    name: Errors
    max: 10
    start: 10
    rules:
      - id: failed-calls
        doc: −2 for each failed call; a script names each one in a flag.
        script: failed_calls.rhai
"#;

const TEMPLATE_SCRIPT: &str = r#"// Runs once per session. `session` is the session, `score` the dimension's running score.
// Return #{ points, evidence, flags, entries } (every key optional) or () for no outcome.
let failed = session.matching("failed_call");
if failed.len() == 0 {
    return #{ evidence: "No failed calls" };
}
#{
    points: -2 * failed.len(),
    flags: failed.map(|e| `${e.domain}.${e.operation} failed (entry ${e.position})`),
    entries: failed,
}
"#;

const TEMPLATE_FIXTURE: &str = r#"{"timestamp": "2026-03-01T09:00:00Z", "sessionId": "clean", "domain": "tasks", "operation": "find", "params": {"query": "login"}, "result": {"success": true, "exitCode": 0, "duration": 12}, "metadata": {"source": "mcp", "gateway": "query"}}
{"timestamp": "2026-03-01T09:00:01Z", "sessionId": "messy", "domain": "tasks", "operation": "list", "params": {}, "result": {"success": true, "exitCode": 0, "duration": 40}, "metadata": {"source": "mcp", "gateway": "query"}}
{"timestamp": "2026-03-01T09:00:02Z", "sessionId": "clean", "domain": "tasks", "operation": "show", "params": {"taskId": "T1"}, "result": {"success": true, "exitCode": 0, "duration": 8}, "metadata": {"source": "mcp", "gateway": "query", "taskId": "T1"}}
{"timestamp": "2026-03-01T09:00:03Z", "sessionId": "messy", "domain": "tasks", "operation": "find", "params": {"query": "T9"}, "result": {"success": true, "exitCode": 0, "duration": 11}, "metadata": {"source": "mcp", "gateway": "query"}}
{"timestamp": "2026-03-01T09:00:04Z", "sessionId": "messy", "domain": "tasks", "operation": "show", "params": {"taskId": "T9"}, "result": {"success": false, "exitCode": 4, "duration": 9}, "metadata": {"source": "mcp", "gateway": "query"}, "error": "E_NOT_FOUND: task not found"}
{"timestamp": "2026-03-01T09:00:05Z", "sessionId": "quiet", "domain": "session", "operation": "list", "params": {}, "result": {"success": true, "exitCode": 0, "duration": 5}, "metadata": {"source": "mcp", "gateway": "query"}}
"#;

const TEMPLATE_README: &str = r#"# {{NAME}}

What this rubric grades and why, for the people whose sessions it scores.

- `rubric.yaml`: selectors, metrics, dimensions and rules (`grade rubric show ./{{NAME}}` prints them in words).
- `*.rhai`: rules written as scripts.
- `tests/`: fixtures (`*.jsonl` audit logs) and their expectations (`*.expected.jsonl`).

Work on it with:

    grade rubric validate ./{{NAME}}
    grade rubric test ./{{NAME}} --coverage
    grade rubric test ./{{NAME}} --update     # after an intended change, then review the diff
    grade --rubric ./{{NAME}} --source audit.jsonl --explain SESSION
"#;

pub fn run(args: &RubricNewArgs) -> Result<(), CliError> {
    let name = args.name.as_str();
    let policy = args.packs.policy();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(CliError::Usage(format!(
            "pack name `{name}` must be letters, digits, `-` or `_` (it becomes the folder and the id)"
        )));
    }
    let dir = args.dir.join(name);
    if dir.exists() {
        return Err(CliError::Usage(format!(
            "`{}` already exists; pick another name or `--dir`",
            dir.display()
        )));
    }
    // The original is checked before anything is written: a pack that does not load (its
    // plugins refused without `--allow-plugins`) makes a copy that does not either.
    let from = match &args.from {
        Some(spec) => Some(original(spec, &args.packs.search.rubric_path, policy)?),
        None => None,
    };
    std::fs::create_dir_all(dir.join("tests")).map_err(|source| CliError::Io {
        path: dir.clone(),
        source,
    })?;
    // A pack that cannot be made whole is not left half made: the folder did not exist.
    match scaffold(from.as_ref(), name, &dir, policy) {
        Ok(()) => {}
        Err(err) => {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(err);
        }
    }
    let shown = dir.display();
    let allow = if from.is_some_and(|f| f.has_plugins) {
        " --allow-plugins"
    } else {
        ""
    };
    write_stdout(
        format!(
            "created pack `{name}` in `{shown}`\nnext: grade rubric validate{allow} {shown} && grade rubric test{allow} {shown} --coverage\n"
        )
        .as_bytes(),
    )
}

/// The pack a copy starts from (`--from`), as the copy writes it.
struct Original {
    files: PackFiles,
    /// Its `rubric.yaml`, each plugin's `path` rewritten to name the same library from the
    /// copy's folder.
    rubric: String,
    has_plugins: bool,
}

/// Finds and loads the pack `spec` names with `policy`, as grading with it would.
fn original(
    spec: &str,
    search_path: &[PathBuf],
    policy: PluginPolicy,
) -> Result<Original, CliError> {
    let files = grade_engine::locate_pack(spec, search_path)?;
    let pack = grade_engine::pack::compile_pack_with(&files, policy)?;
    let rubric = files.files.get("rubric.yaml").cloned().unwrap_or_default();
    let rubric = match &files.origin {
        // A plugin's `path` is relative to its pack's folder, which the copy is not in.
        PackOrigin::Folder(src) if !pack.plugins.is_empty() => {
            grade_engine::plugin::relocate(&rubric, src)
                .map_err(|message| {
                    CliError::Usage(format!("{}: {message}", src.join("rubric.yaml").display()))
                })?
                .0
        }
        _ => rubric,
    };
    Ok(Original {
        files,
        rubric,
        has_plugins: !pack.plugins.is_empty(),
    })
}

/// Writes the pack's files into `dir` (which exists, empty but for `tests/`) and its tests'
/// expectations, loading its plugins (if any) with `policy`.
fn scaffold(
    from: Option<&Original>,
    name: &str,
    dir: &Path,
    policy: PluginPolicy,
) -> Result<(), CliError> {
    let io = |path: &Path, source| CliError::Io {
        path: path.to_owned(),
        source,
    };
    let write = |rel: &str, text: &str| -> Result<(), CliError> {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        std::fs::write(&path, text).map_err(|e| io(&path, e))
    };

    match from {
        None => {
            write("rubric.yaml", &TEMPLATE_RUBRIC.replace("{{NAME}}", name))?;
            write("failed_calls.rhai", TEMPLATE_SCRIPT)?;
            write("tests/basic.jsonl", TEMPLATE_FIXTURE)?;
        }
        Some(Original { files, rubric, .. }) => {
            for (file, text) in &files.files {
                let text = if file == "rubric.yaml" {
                    retitle(rubric, name)
                } else {
                    text.clone()
                };
                write(file, &text)?;
            }
            match &files.origin {
                PackOrigin::Builtin(id) => {
                    for (file, text) in grade_engine::builtin_pack_tests(id) {
                        if !file.ends_with(".expected.jsonl") {
                            write(&format!("tests/{file}"), text)?;
                        }
                    }
                }
                PackOrigin::Folder(src) => copy_fixtures(&src.join("tests"), &dir.join("tests"))?,
            }
            if !dir
                .join("tests")
                .read_dir()
                .map_err(|e| io(dir, e))?
                .any(|_| true)
            {
                write("tests/basic.jsonl", TEMPLATE_FIXTURE)?;
            }
        }
    }
    write("README.md", &TEMPLATE_README.replace("{{NAME}}", name))?;

    // The expectations are the new pack's own results, so it passes its test at once and
    // an author's later change shows up as a readable diff. Written as `rubric test
    // --update` writes them: fixtures in subfolders and of any format, with their judgments.
    let pack = grade_engine::pack::compile_pack_with(&PackFiles::read_folder(dir)?, policy)?;
    let fixtures = pack_test::discover(&dir.join("tests"))?;
    let registry = Registry::with_plugins_of(&pack)
        .map_err(|e| CliError::Usage(format!("rubric `{}`: {e}", pack.id)))?;
    // A session the copy cannot grade is written as the error it expects, as the original's
    // tests expect theirs: an update records no failure.
    pack_test::run(&pack, &registry, &fixtures, true)?;
    Ok(())
}

/// The pack's `id:` and `version:` lines, set for the copy.
fn retitle(yaml: &str, name: &str) -> String {
    let mut out = String::with_capacity(yaml.len());
    let (mut id_done, mut version_done) = (false, false);
    for line in yaml.split_inclusive('\n') {
        if !id_done && line.starts_with("id:") {
            // Quoted: a name of digits (`123`) or a YAML word (`true`, `null`) is a string.
            out.push_str(&format!("id: \"{name}\"\n"));
            id_done = true;
        } else if !version_done && line.starts_with("version:") {
            out.push_str("version: 0.1.0\n");
            version_done = true;
        } else {
            out.push_str(line);
        }
    }
    out
}

fn copy_fixtures(from: &Path, to: &Path) -> Result<(), CliError> {
    let Ok(listing) = std::fs::read_dir(from) else {
        return Ok(());
    };
    for entry in listing.filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            copy_fixtures(&path, &to.join(&name))?;
        } else if !name.to_string_lossy().ends_with(".expected.jsonl") {
            std::fs::create_dir_all(to).map_err(|source| CliError::Io {
                path: to.to_owned(),
                source,
            })?;
            std::fs::copy(&path, to.join(&name)).map_err(|source| CliError::Io {
                path: path.clone(),
                source,
            })?;
        }
    }
    Ok(())
}
