//! `grade rubric list|show|validate`.

use std::fmt::Write as _;
use std::path::PathBuf;

use grade_engine::entry::js_number;
use grade_engine::pack::{DimensionKind, Problem, Severity};
use grade_engine::plugin::PluginPolicy;
use grade_engine::{CompiledPack, PackError, PackFiles, PackOrigin};
use serde_json::json;

use crate::args::{Format, RubricCommand};
use crate::error::CliError;
use crate::write_stdout;

pub fn run(cmd: &RubricCommand) -> Result<(), CliError> {
    match cmd {
        RubricCommand::List(args) => list(
            &args.packs.search.rubric_path,
            args.format,
            args.packs.policy(),
        ),
        RubricCommand::Show(args) => {
            let pack = grade_engine::load_pack_with(
                &args.pack,
                &args.packs.search.rubric_path,
                args.packs.policy(),
            )?;
            show(&pack, args.format)
        }
        RubricCommand::Validate(args) => validate(
            &args.pack,
            &args.packs.search.rubric_path,
            args.format,
            args.packs.policy(),
        ),
        RubricCommand::Test(args) => {
            crate::pack_tests::run(args, &args.packs.search.rubric_path, args.packs.policy())
        }
        RubricCommand::Pin(args) => pin(&args.pack, &args.search.rubric_path),
        RubricCommand::Explain(args) => crate::explain::run(args),
        RubricCommand::New(args) => crate::scaffold::run(args),
        RubricCommand::ScoreConfigs(args) => {
            // With the command line's plugin policy, as every command that loads a pack: a
            // pack with plugins was refused here even with `--allow-plugins`.
            let pack = grade_engine::load_pack_with(
                &args.pack,
                &args.packs.search.rubric_path,
                args.packs.policy(),
            )?;
            let configs = grade_engine::sink::langfuse::score_configs(&pack)
                .map_err(|e| CliError::Usage(e.to_string()))?;
            print_json_list(&configs, args.format)
        }
        RubricCommand::JudgmentSchema(args) => {
            let pack = grade_engine::load_pack_with(
                &args.pack,
                &args.packs.search.rubric_path,
                args.packs.policy(),
            )?;
            if pack.judge.is_none() {
                return Err(CliError::Usage(format!(
                    "rubric `{}` has no judged dimensions, so it takes no judgment",
                    pack.id
                )));
            }
            let schema = grade_engine::judgment::judgment_schema(&pack);
            write_stdout(
                format!(
                    "{}\n",
                    serde_json::to_string_pretty(&schema).map_err(CliError::Json)?
                )
                .as_bytes(),
            )
        }
    }
}

/// A list of JSON bodies: an array (`human`, `json`) or one per line (`jsonl`).
fn print_json_list<T: serde::Serialize>(items: &[T], format: Format) -> Result<(), CliError> {
    let mut out = String::new();
    match format {
        Format::Jsonl => {
            for item in items {
                out.push_str(&serde_json::to_string(item).map_err(CliError::Json)?);
                out.push('\n');
            }
        }
        Format::Human | Format::Json => {
            out = format!(
                "{}\n",
                serde_json::to_string_pretty(items).map_err(CliError::Json)?
            );
        }
    }
    write_stdout(out.as_bytes())
}

fn origin_text(origin: &PackOrigin) -> String {
    match origin {
        PackOrigin::Builtin(_) => "shipped".to_owned(),
        PackOrigin::Folder(dir) => dir.display().to_string(),
    }
}

fn list(search_path: &[PathBuf], format: Format, policy: PluginPolicy) -> Result<(), CliError> {
    let rows = list_rows(search_path, policy)?;
    match format {
        Format::Human => write_stdout(list_human(&rows).as_bytes()),
        // One pack a line in `jsonl`, as `--format jsonl` means everywhere else.
        Format::Json | Format::Jsonl => print_json_list(&rows, format),
    }
}

/// One row per pack of the `--rubric-path` folders, then per shipped pack: its id, version,
/// name, dimensions, maximum and origin, or how many problems make it invalid.
pub fn list_rows(
    search_path: &[PathBuf],
    policy: PluginPolicy,
) -> Result<Vec<serde_json::Value>, CliError> {
    let mut packs = Vec::new();
    for dir in search_path {
        let Ok(listing) = std::fs::read_dir(dir) else {
            return Err(CliError::Usage(format!(
                "rubric path `{}` is not a readable folder",
                dir.display()
            )));
        };
        let mut found: Vec<PathBuf> = listing
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join("rubric.yaml").is_file())
            .collect();
        found.sort();
        for path in found {
            packs.push(grade_engine::pack::compile_pack_with(
                &grade_engine::PackFiles::read_folder(&path)?,
                policy,
            ));
        }
    }
    for id in grade_engine::builtin_pack_ids() {
        if let Some(files) = grade_engine::builtin_pack(id) {
            packs.push(grade_engine::compile_pack(&files));
        }
    }
    let mut rows = Vec::new();
    for pack in packs {
        match pack {
            Ok(p) => rows.push(json!({
                "id": p.id, "version": p.version, "name": p.name,
                "dimensions": p.dimensions.len(), "maxScore": p.max_score(),
                "origin": origin_text(&p.origin),
            })),
            Err(PackError::Invalid { origin, problems }) => rows.push(json!({
                "origin": origin_text(&origin), "invalid": problems.len(),
            })),
            // A pack whose plugins are not allowed (or not built) is listed, not fatal.
            Err(PackError::Plugin { problems }) => rows.push(json!({
                "origin": problems.first().map(|p| p.file.trim_end_matches("rubric.yaml").trim_end_matches('/').to_owned()).unwrap_or_default(),
                "invalid": problems.len(),
            })),
            Err(other) => return Err(other.into()),
        }
    }
    Ok(rows)
}

/// The rows of `list_rows` as `grade rubric list` prints them.
pub fn list_human(rows: &[serde_json::Value]) -> String {
    let mut out = String::new();
    for r in rows {
        if let Some(n) = r.get("invalid") {
            let _ = writeln!(
                out,
                "{:<16} invalid ({}; run `grade rubric validate`)  {}",
                "?",
                plural(n.as_u64().unwrap_or(0) as usize, "problem"),
                r["origin"].as_str().unwrap_or("")
            );
        } else {
            let _ = writeln!(
                out,
                "{:<16} {:<8} {:<13} max {:<5} {}",
                r["id"].as_str().unwrap_or(""),
                r["version"].as_str().unwrap_or(""),
                format!(
                    "{},",
                    plural(r["dimensions"].as_u64().unwrap_or(0) as usize, "dimension")
                ),
                r["maxScore"].as_f64().map(js_number).unwrap_or_default(),
                r["origin"].as_str().unwrap_or("")
            );
        }
    }
    out
}

fn show(pack: &CompiledPack, format: Format) -> Result<(), CliError> {
    let out = match format {
        Format::Human => show_human(pack),
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&show_json(pack)).map_err(CliError::Json)?
        ),
        // The whole description on one line, as `--format jsonl` means everywhere else.
        Format::Jsonl => format!(
            "{}\n",
            serde_json::to_string(&show_json(pack)).map_err(CliError::Json)?
        ),
    };
    write_stdout(out.as_bytes())
}

/// A pack in words, as `grade rubric show` prints it: its dimensions, their points, and
/// what each rule checks.
pub fn show_human(pack: &CompiledPack) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} {} — {}", pack.id, pack.version, pack.name);
    if !pack.description.is_empty() {
        let _ = writeln!(out, "{}", pack.description);
    }
    let _ = writeln!(out, "digest {}", pack.digest);
    let _ = writeln!(out, "max score {}", js_number(pack.max_score()));
    match &pack.sources {
        Some(formats) => {
            let names: Vec<String> = formats.iter().map(|f| format!("`{f}`")).collect();
            let _ = writeln!(out, "grades {} sources", names.join(", "));
        }
        None => {
            let _ = writeln!(out, "grades any source");
        }
    }
    if let Some(judge) = &pack.judge {
        let _ = writeln!(
            out,
            "judge prompt `{}` (one prompt per chunk of about {} tokens past {}); a panel of judges combines by `{}`",
            judge.prompt_file,
            judge.chunk_tokens,
            judge.budget_tokens,
            judge.panel.name()
        );
    }
    if let Some((id, description)) = &pack.aggregate {
        let _ = writeln!(
            out,
            "total `{id}`: {description} (Σ weight × normalised score)"
        );
    }
    for plugin in &pack.plugins {
        let _ = writeln!(
            out,
            "plugin `{}`: {} {} from `{}` ({})",
            plugin.name,
            plugin.reported_name,
            plugin.version,
            plugin.path.display(),
            plugin.digest
        );
        for f in &plugin.functions {
            let _ = writeln!(out, "  {}.{} ({}): {}", plugin.name, f.name, f.kind, f.doc);
        }
        for s in &plugin.sources {
            let _ = writeln!(out, "  source format `{}`: {}", s.name, s.doc);
        }
    }
    if !pack.bands.is_empty() {
        let bands: Vec<String> = pack
            .bands
            .iter()
            .map(|b| format!("{} ≥ {}%", b.grade, b.min_percent))
            .collect();
        let _ = writeln!(out, "bands {}", bands.join(", "));
    }
    for d in &pack.dimensions {
        let weight = d
            .weight
            .map(|w| format!(", weight {}", js_number(w)))
            .unwrap_or_default();
        let scale = match &d.kind {
            DimensionKind::Points => format!(
                "{} point{}, starts at {}",
                js_number(d.max),
                if d.max == 1.0 { "" } else { "s" },
                js_number(d.start)
            ),
            DimensionKind::Numeric { min } => {
                format!("judged, numeric {}–{}", js_number(*min), js_number(d.max))
            }
            DimensionKind::Categorical { categories } => format!(
                "judged, categorical: {}",
                categories
                    .iter()
                    .map(|(l, v)| format!("{l} {}", js_number(*v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let _ = writeln!(out, "\n{} ({}) — {scale}{weight}", d.name, d.id);
        if !d.description.is_empty() {
            let _ = writeln!(out, "  {}", d.description);
        }
        for r in &d.rules {
            let _ = writeln!(out, "  - {}: {}", r.id, r.doc.trim());
        }
    }
    out
}

/// A pack as `grade rubric show --format json` prints it.
pub fn show_json(pack: &CompiledPack) -> serde_json::Value {
    let dims: Vec<_> = pack
        .dimensions
        .iter()
        .map(|d| json!({
            "id": d.id, "name": d.name, "description": d.description, "max": d.max, "start": d.start,
            "rules": d.rules.iter().map(|r| json!({"id": r.id, "doc": r.doc.trim()})).collect::<Vec<_>>(),
        }))
        .collect();
    let plugins: Vec<_> = pack
        .plugins
        .iter()
        .map(|p| json!({
            "name": p.name, "reportedName": p.reported_name, "version": p.version,
            "path": p.path.display().to_string(), "sha256": p.digest,
            "functions": p.functions.iter().map(|f| json!({"name": f.name, "kind": f.kind.name(), "doc": f.doc, "reads": f.fields})).collect::<Vec<_>>(),
            "sources": p.sources.iter().map(|s| json!({"name": s.name, "doc": s.doc})).collect::<Vec<_>>(),
        }))
        .collect();
    let mut body = json!({
        "id": pack.id, "version": pack.version, "name": pack.name, "description": pack.description,
        "digest": pack.digest, "maxScore": pack.max_score(), "dimensions": dims,
    });
    if let Some(formats) = &pack.sources {
        body["sources"] = json!(formats);
    }
    if !plugins.is_empty() {
        body["plugins"] = json!(plugins);
    }
    body
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

fn validate(
    spec: &str,
    search_path: &[PathBuf],
    format: Format,
    policy: PluginPolicy,
) -> Result<(), CliError> {
    let files = grade_engine::locate_pack(spec, search_path)?;
    let validation = grade_engine::pack::validate_pack_with(&files, policy);
    let errors = validation
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .count();
    let warnings = validation.problems.len() - errors;
    let out = match format {
        Format::Human => {
            let mut out = String::new();
            for p in &validation.problems {
                out.push_str(&describe_problem(p, &files));
            }
            let verdict = match &validation.pack {
                Some(pack) => format!("{} {} is valid", pack.id, pack.version),
                None => format!("{spec} is invalid"),
            };
            let _ = writeln!(
                out,
                "{verdict}: {}, {}",
                plural(errors, "error"),
                plural(warnings, "warning")
            );
            out
        }
        Format::Json | Format::Jsonl => {
            let report = json!({
                "valid": validation.pack.is_some(),
                "errors": errors,
                "warnings": warnings,
                "problems": validation.problems,
            });
            // The report on one line in `jsonl`, as `--format jsonl` means everywhere else.
            let text = if format == Format::Jsonl {
                serde_json::to_string(&report)
            } else {
                serde_json::to_string_pretty(&report)
            };
            format!("{}\n", text.map_err(CliError::Json)?)
        }
    };
    write_stdout(out.as_bytes())?;
    if validation.plugin_failed {
        // A plugin that cannot be loaded is an input error (exit 2), as when grading. The
        // human report above already shows each problem at its place, so standard error
        // sums up, as a compiler does; beside JSON it gives grading's one-line errors.
        if format == Format::Human {
            return Err(CliError::Summary(format!(
                "rubric pack `{spec}` cannot be used: a plugin it declares cannot be loaded ({} above)",
                plural(errors, "error")
            )));
        }
        let problems = validation
            .problems
            .into_iter()
            .filter(|p| p.severity == Severity::Error)
            .collect();
        return Err(PackError::Plugin { problems }.into());
    }
    if validation.pack.is_some() {
        Ok(())
    } else {
        // The verdict is the report's last line (or its `valid`): said again on stderr, it
        // was printed twice.
        Err(CliError::Reported)
    }
}

/// A problem as compilers print one: the message, its place, and the line with a caret.
pub fn describe_problem(p: &Problem, files: &PackFiles) -> String {
    let mut out = String::new();
    let label = match p.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let _ = writeln!(out, "{label}[{}]: {}", p.code, p.message);
    let mut place = p.file.clone();
    if let Some(line) = p.line {
        let _ = write!(place, ":{line}");
        if let Some(column) = p.column {
            let _ = write!(place, ":{column}");
        }
    }
    if p.path.is_empty() {
        let _ = writeln!(out, "  --> {place}");
    } else {
        let _ = writeln!(out, "  --> {place} (at `{}`)", p.path);
    }
    let text = files
        .files
        .iter()
        .find(|(name, _)| files.display_path(name) == p.file)
        .map(|(_, t)| t);
    if let (Some(text), Some(line), Some(column)) = (text, p.line, p.column) {
        if let Some(snippet) =
            grade_engine::pack::snippet(text, grade_engine::pack::Place { line, column })
        {
            for l in snippet.lines() {
                let _ = writeln!(out, "   {l}");
            }
        }
    }
    out.push('\n');
    out
}

/// `grade rubric pin`: writes the sha256 of each declared plugin library into `rubric.yaml`.
fn pin(spec: &str, search_path: &[PathBuf]) -> Result<(), CliError> {
    let files = grade_engine::locate_pack(spec, search_path)?;
    let PackOrigin::Folder(dir) = &files.origin else {
        return Err(CliError::Usage(format!(
            "`{spec}` is built into the binary; pin plugins in a pack folder"
        )));
    };
    let manifest = dir.join("rubric.yaml");
    let text = files.files.get("rubric.yaml").cloned().unwrap_or_default();
    let (pinned, changes) = grade_engine::plugin::pin(&text, dir)
        .map_err(|message| CliError::Usage(format!("{}: {message}", manifest.display())))?;
    let mut out = String::new();
    for change in &changes {
        let _ = writeln!(out, "{change}");
    }
    if pinned != text {
        std::fs::write(&manifest, pinned).map_err(|source| CliError::Io {
            path: manifest.clone(),
            source,
        })?;
    }
    if changes.is_empty() {
        out.push_str("the pack declares no plugins\n");
    }
    write_stdout(out.as_bytes())
}
