//! Human labels: the scores people gave sessions, one JSON object a line.
//!
//! ```json
//! {"sessionId": "s1", "annotator": "ana", "scores": {"goal_achievement": 2, "tool_efficiency": 0.8}}
//! ```
//!
//! A categorical score is the category's value or its label (`"complete"`); `null` is no
//! score for that dimension. `traceId` is optional (Langfuse scores name the trace).
//! Several lines may label one session, by several annotators or by one annotator
//! dimension by dimension. A line that is not a label refuses the whole file, naming the
//! line: a results file or a judgment given by mistake must not calibrate as nothing.

use indexmap::IndexMap;
use serde_json::Value;

/// A score as a person gave it.
#[derive(Debug, Clone, PartialEq)]
pub enum LabelScore {
    /// A number: a numeric score, or a category's value.
    Number(f64),
    /// A category's label.
    Category(String),
}

/// One annotator's scores of one session.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// The session labelled.
    pub session_id: String,
    /// The trace labelled, when the label names one.
    pub trace_id: Option<String>,
    /// Who labelled it.
    pub annotator: String,
    /// Dimension id → score, in the order given.
    pub scores: IndexMap<String, LabelScore>,
    /// Where the label came from (`labels.jsonl:3`, a Langfuse score's id).
    pub origin: String,
}

/// Why a labels file is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}:{line}: not a label ({why}); a label is one JSON object a line: {{\"sessionId\": \"…\", \"annotator\": \"…\", \"scores\": {{\"DIMENSION\": SCORE, …}}}}")]
pub struct LabelsError {
    /// The file.
    pub origin: String,
    /// The first line that is not a label, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub why: String,
}

/// The labels of a JSONL text; blank lines are skipped. `origin` names the file in messages.
pub fn parse_labels(text: &str, origin: &str) -> Result<Vec<Label>, LabelsError> {
    let mut labels = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fail = |why: String| LabelsError {
            origin: origin.to_owned(),
            line: i + 1,
            why,
        };
        let label = parse_line(line, &format!("{origin}:{}", i + 1)).map_err(fail)?;
        labels.push(label);
    }
    Ok(labels)
}

fn parse_line(line: &str, origin: &str) -> Result<Label, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| {
        format!(
            "not JSON: {}; it starts with `{}`",
            crate::entry::lowercase_first(&e.to_string()),
            crate::judgment::quote_start(line, 60)
        )
    })?;
    crate::judgment::duplicate_keys(line).map_err(|e| e.to_string())?;
    let Value::Object(object) = value else {
        return Err(format!(
            "{}, not an object",
            crate::entry::json_kind(&value)
        ));
    };
    if let Some(key) = object
        .keys()
        .find(|k| !matches!(k.as_str(), "sessionId" | "traceId" | "annotator" | "scores"))
    {
        return Err(format!(
            "`{key}` is not a field of a label (sessionId, traceId, annotator, scores)"
        ));
    }
    let text = |key: &str, required: bool| -> Result<Option<String>, String> {
        match object.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(Value::String(_)) => Err(format!("`{key}` is empty")),
            None | Some(Value::Null) if !required => Ok(None),
            None => Err(format!("`{key}` is missing")),
            Some(other) => Err(format!(
                "`{key}` is {}, not a string",
                crate::entry::json_kind(other)
            )),
        }
    };
    let session_id = text("sessionId", true)?.unwrap_or_default();
    let annotator = text("annotator", true)?.unwrap_or_default();
    let trace_id = text("traceId", false)?;
    let scores = match object.get("scores") {
        Some(Value::Object(scores)) => scores,
        Some(other) => {
            return Err(format!(
                "`scores` is {}, not an object",
                crate::entry::json_kind(other)
            ))
        }
        None => return Err("`scores` is missing".to_owned()),
    };
    let mut out = IndexMap::new();
    for (dimension, score) in scores {
        let score = match score {
            Value::Number(n) => match n.as_f64() {
                Some(v) if v.is_finite() => LabelScore::Number(v),
                _ => return Err(format!("the score of `{dimension}` is not a finite number")),
            },
            Value::String(s) => LabelScore::Category(s.clone()),
            Value::Null => continue,
            other => {
                return Err(format!(
                    "the score of `{dimension}` is {}, not a number or a category's label",
                    crate::entry::json_kind(other)
                ))
            }
        };
        out.insert(dimension.clone(), score);
    }
    Ok(Label {
        session_id,
        trace_id,
        annotator,
        scores: out,
        origin: origin.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_numbers_category_labels_and_skip_nulls() {
        let text = "{\"sessionId\":\"s1\",\"annotator\":\"a\",\"scores\":{\"g\":2,\"e\":\"poor\",\"t\":null}}\n\n{\"sessionId\":\"s2\",\"traceId\":\"t2\",\"annotator\":\"b\",\"scores\":{}}\n";
        let labels = parse_labels(text, "l.jsonl").unwrap();
        assert_eq!(labels.len(), 2);
        assert_eq!(labels[0].scores.len(), 2);
        assert_eq!(labels[0].scores["g"], LabelScore::Number(2.0));
        assert_eq!(labels[0].scores["e"], LabelScore::Category("poor".into()));
        assert_eq!(labels[1].trace_id.as_deref(), Some("t2"));
        assert_eq!(labels[1].origin, "l.jsonl:3");
    }

    #[test]
    fn a_file_that_is_not_labels_is_refused_at_its_first_bad_line() {
        let result_line = "{\"sessionId\":\"s1\",\"totalScore\":0.5}";
        let text = format!("{{\"sessionId\":\"s\",\"annotator\":\"a\",\"scores\":{{}}}}\n{result_line}\nnot json\n");
        let err = parse_labels(&text, "x.jsonl").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(
            err.to_string()
                .starts_with("x.jsonl:2: not a label (`totalScore` is not a field of a label"),
            "{err}"
        );
        for (line, why) in [
            ("[1]", "an array, not an object"),
            (
                "{\"sessionId\":\"s\",\"scores\":{}}",
                "`annotator` is missing",
            ),
            (
                "{\"sessionId\":7,\"annotator\":\"a\",\"scores\":{}}",
                "`sessionId` is a number, not a string",
            ),
            (
                "{\"sessionId\":\"s\",\"annotator\":\"a\",\"scores\":{\"g\":true}}",
                "the score of `g` is a boolean, not a number or a category's label",
            ),
            (
                "{\"sessionId\":\"s\",\"annotator\":\"a\",\"annotator\":\"b\",\"scores\":{}}",
                "the key `annotator` appears twice",
            ),
            (
                "{\"sessionId\":\"s\"",
                "not JSON: EOF while parsing an object",
            ),
        ] {
            let err = parse_labels(line, "x").unwrap_err();
            assert_eq!(err.line, 1);
            assert!(err.why.starts_with(why), "{line}: {}", err.why);
        }
    }
}
