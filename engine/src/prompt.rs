//! The scorer prompt of a judged pack, rendered from a session.
//!
//! A template is pack data (`*.prompt.md`) with `{{name}}` placeholders, so the JSON
//! braces a prompt shows the judge stay literal. Placeholders: `{{session_id}}`,
//! `{{trace_count}}`, `{{entry_count}}`, `{{task_context}}`, `{{session_summary}}`,
//! `{{chunk_number}}`, `{{total_chunks}}`, `{{dimensions}}` (the judged dimensions with
//! their scales, from the pack) and `{{output_format}}` (the JSON the judge must return).
//!
//! A session whose summary is estimated above the pack's budget (tokens ≈ characters / 4)
//! is cut into chunks of about `chunk_tokens`, one prompt each.

use std::collections::HashSet;
use std::fmt::Write as _;

use serde_json::Value;

use crate::entry::{Entry, MetaRef, Session};
use crate::pack::{CompiledPack, DimensionKind, Judge};

// The placeholders are part of the pack's language: the compiler checks a pack's template
// against them, so the list and its check live with the judge's compilation.
pub use crate::pack::compile::check_template;

/// Longest text of one entry kept in a summary line.
const MAX_TEXT: usize = 400;

/// Characters per token in the estimate (the usual rule of thumb for English and code).
const CHARS_PER_TOKEN: usize = 4;

/// A rough count of the tokens of `text`, for chunking a session to a judge's budget.
pub(crate) fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count().div_ceil(CHARS_PER_TOKEN)) as u64
}

/// One prompt per chunk of the session (one chunk when it fits the budget).
pub fn render_prompts(pack: &CompiledPack, judge: &Judge, session: &Session) -> Vec<String> {
    let lines: Vec<String> = session
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| summary_line(i, e))
        .collect();
    let total: u64 = lines.iter().map(|l| estimate_tokens(l) + 1).sum();
    let chunks: Vec<&[String]> = if total <= judge.budget_tokens || lines.is_empty() {
        vec![&lines[..]]
    } else {
        let mut chunks = Vec::new();
        let (mut start, mut size) = (0, 0u64);
        for (i, line) in lines.iter().enumerate() {
            let cost = estimate_tokens(line) + 1;
            if size + cost > judge.chunk_tokens && i > start {
                chunks.push(&lines[start..i]);
                start = i;
                size = 0;
            }
            size += cost;
        }
        chunks.push(&lines[start..]);
        chunks
    };
    let task = task_context(session);
    let traces = trace_count(session);
    let dimensions = dimensions_text(pack);
    let output = output_format(pack);
    let n = chunks.len();
    chunks
        .iter()
        .enumerate()
        .map(|(i, chunk)| {
            let context = if i == 0 {
                task.clone()
            } else {
                "See chunk 1".to_owned()
            };
            let summary = if chunk.is_empty() {
                "(no entries)".to_owned()
            } else {
                chunk.join("\n")
            };
            fill(&judge.template, |name| match name {
                "session_id" => session.id.clone(),
                "trace_count" => traces.to_string(),
                "entry_count" => session.entries.len().to_string(),
                "task_context" => context.clone(),
                "session_summary" => summary.clone(),
                "chunk_number" => (i + 1).to_string(),
                "total_chunks" => n.to_string(),
                "dimensions" => dimensions.clone(),
                "output_format" => output.clone(),
                _ => String::new(),
            })
        })
        .collect()
}

fn fill(template: &str, value: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                out.push_str(&value(after[..end].trim()));
                rest = &after[end + 2..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// What the user asked for: the first user message where the source has one.
fn task_context(session: &Session) -> String {
    session
        .entries
        .iter()
        .find(|e| e.domain == "message" && e.operation == "user")
        .and_then(entry_text)
        .map(|t| truncate(&t, 4 * MAX_TEXT))
        .unwrap_or_else(|| {
            "(the source records no user message; judge the task from the entries below)".to_owned()
        })
}

fn trace_count(session: &Session) -> usize {
    let traces: HashSet<&str> = session
        .entries
        .iter()
        .filter_map(|e| e.metadata.get("traceId").and_then(MetaRef::as_str))
        .collect();
    traces.len().max(1)
}

fn entry_text(e: &Entry) -> Option<String> {
    ["text", "content", "message"]
        .iter()
        .find_map(|k| e.params.get(k))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
}

fn truncate(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// `#12 2026-03-01T09:00:31Z tasks.find ok {"query":"T42"}`: what happened, compactly.
fn summary_line(index: usize, e: &Entry) -> String {
    let mut line = format!(
        "#{} {} {}.{}",
        index + 1,
        e.timestamp,
        e.domain,
        e.operation
    );
    if e.domain == "message" {
        if let Some(text) = entry_text(e) {
            let _ = write!(line, ": {}", truncate(&text, MAX_TEXT));
        }
        return line;
    }
    line.push_str(if e.result.success { " ok" } else { " FAILED" });
    if !e.params.is_empty() {
        let params = serde_json::to_string(&e.params).unwrap_or_default();
        let _ = write!(line, " {}", truncate(&params, MAX_TEXT));
    }
    if let Some(error) = &e.error {
        let _ = write!(line, " error: {}", truncate(error, MAX_TEXT));
    }
    line
}

fn dimensions_text(pack: &CompiledPack) -> String {
    let mut out = String::new();
    for (i, d) in pack.judged_dimensions().enumerate() {
        let scale = match &d.kind {
            DimensionKind::Categorical { categories } => format!(
                "CATEGORICAL: {}",
                categories
                    .iter()
                    .map(|(l, v)| format!("{l} ({})", crate::entry::js_number(*v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            DimensionKind::Numeric { min } => format!(
                "NUMERIC {}–{}",
                crate::entry::js_number(*min),
                crate::entry::js_number(d.max)
            ),
            DimensionKind::Points => continue,
        };
        let weight = d
            .weight
            .map(|w| format!(", weight {}", crate::entry::js_number(w)))
            .unwrap_or_default();
        let _ = writeln!(out, "{}. `{}` — {} ({scale}{weight})", i + 1, d.id, d.name);
        if !d.description.is_empty() {
            let _ = writeln!(out, "   {}", d.description.trim());
        }
    }
    out.trim_end().to_owned()
}

fn output_format(pack: &CompiledPack) -> String {
    let mut out = String::from("{\n");
    let judged: Vec<_> = pack.judged_dimensions().collect();
    for (i, d) in judged.iter().enumerate() {
        let score = match &d.kind {
            DimensionKind::Categorical { categories } => categories
                .iter()
                .map(|(_, v)| crate::entry::js_number(*v))
                .collect::<Vec<_>>()
                .join(" | "),
            _ => format!(
                "{}-{}",
                crate::entry::js_number(d.start),
                crate::entry::js_number(d.max)
            ),
        };
        let comma = if i + 1 < judged.len() { "," } else { "" };
        let _ = writeln!(
            out,
            "  \"{}\": {{ \"score\": {score}, \"evidence\": [\"...\"], \"rationale\": \"1-2 sentences\" }}{comma}",
            d.id
        );
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_placeholders_are_refused_and_json_braces_are_left_alone() {
        assert!(check_template("{ \"a\": 1 } {{session_id}}").is_ok());
        let err = check_template("{{session}}").unwrap_err();
        assert!(err.contains("unknown placeholder `{{session}}`"), "{err}");
        assert!(check_template("{{session_id").is_err());
        assert_eq!(fill("a {{x}} {b}", |_| "1".into()), "a 1 {b}");
    }

    #[test]
    fn token_estimates_round_up() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcde"), 2);
    }
}
