//! Calling a plugin's rule, condition or metric function on a session: entries and the
//! fields the function asked for cross the ABI as borrowed C structs.

use std::sync::Arc;

use grade_plugin::abi::{self, GradeCall, GradeEntry, GradeStr, GradeValue};
use serde_json::Value;

use super::{host, Plugin, PluginFunction};
use crate::entry::Entry;
use crate::field::FieldValue;

/// A function of a loaded plugin, as a pack refers to it.
#[derive(Debug, Clone)]
pub(crate) struct NativeRef {
    plugin: Arc<Plugin>,
    index: usize,
}

/// What a native function returned.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct NativeResult {
    /// A metric's value, a condition's truth (non-zero), a rule's points; `None` when the
    /// function gave none (undefined, false, no points).
    pub value: Option<f64>,
    pub evidence: Vec<String>,
    pub flags: Vec<String>,
    /// 0-based entry positions, within the session.
    pub entries: Vec<u32>,
}

/// Why a call gave nothing a grade can use.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CallError {
    /// The function failed, panicked, or handed back something the host refuses; the reason
    /// in words.
    Failed(String),
    /// The function gave NaN or an infinity, which no score, condition or metric can mean.
    NotFinite(f64),
}

impl CallError {
    /// The reason in words; `at` is the key path of the use (`dimensions[0].rules[1]`), when
    /// the caller knows it.
    pub(crate) fn describe(&self, at: Option<&str>) -> String {
        match self {
            CallError::Failed(message) => message.clone(),
            CallError::NotFinite(value) => {
                let value = crate::entry::js_number(*value);
                match at {
                    Some(at) => format!("it gave {value} at `{at}`, and a grade cannot hold it"),
                    None => format!("it gave {value}, and a grade cannot hold it"),
                }
            }
        }
    }
}

impl NativeRef {
    pub fn new(plugin: Arc<Plugin>, index: usize) -> Option<NativeRef> {
        (index < plugin.functions.len()).then_some(NativeRef { plugin, index })
    }

    pub fn function(&self) -> &PluginFunction {
        &self.plugin.functions[self.index]
    }

    /// `plugin.function`, as packs write it.
    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.plugin.name, self.function().name)
    }

    /// Calls the function on a session. `current` is the entry a `for_each` rule judges.
    pub fn call(
        &self,
        session_id: &str,
        entries: &[Entry],
        current: Option<u32>,
        score: f64,
    ) -> Result<NativeResult, CallError> {
        let function = self.function();
        let width = function.resolved.len();
        // Objects and arrays cross as JSON text, which must outlive the call.
        let mut json_texts: Vec<String> = Vec::new();
        let mut values: Vec<GradeValue> = Vec::with_capacity(entries.len() * width);
        let raw: Vec<GradeEntry> = entries
            .iter()
            .map(|e| {
                for field in &function.resolved {
                    values.push(field_value(field.get(e), &mut json_texts));
                }
                GradeEntry {
                    timestamp: GradeStr::new(&e.timestamp),
                    instant_ms: e.instant,
                    domain: GradeStr::new(&e.domain),
                    operation: GradeStr::new(&e.operation),
                    success: u32::from(e.result.success),
                    exit_code: e.result.exit_code,
                    duration_ms: e.result.duration,
                    error: e.error.as_deref().map_or(GradeStr::EMPTY, GradeStr::new),
                }
            })
            .collect();
        // JSON texts were pushed while `values` pointed into earlier ones: `String`s do not
        // move their bytes when the vector holding them grows, so those pointers still hold.
        let input = GradeCall {
            session_id: GradeStr::new(session_id),
            entries: raw.as_ptr(),
            entry_count: raw.len(),
            fields: values.as_ptr(),
            field_count: width,
            current: current.map_or(-1, i64::from),
            score,
        };
        let returned = host::call(function.call, &input).map_err(CallError::Failed)?;
        drop(json_texts);
        // A condition's NaN would read as false and a metric's as a value no comparison
        // holds for: the session would be graded on a number that means nothing.
        if let Some(value) = returned.value.filter(|v| !v.is_finite()) {
            return Err(CallError::NotFinite(value));
        }
        let count = entries.len() as u64;
        if let Some(bad) = returned.entries.iter().find(|&&i| i >= count) {
            return Err(CallError::Failed(format!(
                "it named entry {bad}, and the session has {count} (entries are 0-based)"
            )));
        }
        Ok(NativeResult {
            value: returned.value,
            evidence: returned.evidence,
            flags: returned.flags,
            entries: returned.entries.iter().map(|&i| i as u32).collect(),
        })
    }
}

fn field_value(value: FieldValue<'_>, json_texts: &mut Vec<String>) -> GradeValue {
    let number = |kind, number| GradeValue {
        kind,
        number,
        text: GradeStr::EMPTY,
    };
    let text = |kind, text: &str| GradeValue {
        kind,
        number: 0.0,
        text: GradeStr::new(text),
    };
    match value {
        FieldValue::Missing => number(abi::VALUE_MISSING, 0.0),
        FieldValue::Bool(b) => number(abi::VALUE_BOOL, f64::from(u8::from(b))),
        FieldValue::Int(i) => number(abi::VALUE_NUMBER, i as f64),
        FieldValue::Float(f) => number(abi::VALUE_NUMBER, f),
        FieldValue::Str(s) => text(abi::VALUE_STRING, s),
        FieldValue::Json(v) => match v {
            Value::Null => number(abi::VALUE_MISSING, 0.0),
            Value::Bool(b) => number(abi::VALUE_BOOL, f64::from(u8::from(*b))),
            Value::Number(n) => number(abi::VALUE_NUMBER, n.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => text(abi::VALUE_STRING, s),
            Value::Array(_) | Value::Object(_) => {
                json_texts.push(v.to_string());
                let last = json_texts.last().map_or("", String::as_str);
                text(abi::VALUE_JSON, last)
            }
        },
    }
}
