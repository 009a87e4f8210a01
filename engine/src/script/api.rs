//! The functions and properties scripts call on a session and its entries.

use rhai::{Array, Dynamic, Engine, EvalAltResult, ImmutableString};
use serde_json::Value;

use super::observe::{Answer, EntryAt, Getter, Probe};
use super::view::{id_of, EntryView, Fallible, SessionView};
use crate::field::Field;

pub(super) fn json_to_dynamic(value: &Value) -> Dynamic {
    match value {
        Value::Null => Dynamic::UNIT,
        Value::Bool(b) => Dynamic::from(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Dynamic::from(i),
            None => Dynamic::from(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Dynamic::from(s.clone()),
        Value::Array(items) => Dynamic::from_array(items.iter().map(json_to_dynamic).collect()),
        Value::Object(map) => Dynamic::from_map(
            map.iter()
                .map(|(k, v)| (k.as_str().into(), json_to_dynamic(v)))
                .collect(),
        ),
    }
}

pub(super) fn register_api(engine: &mut Engine) {
    engine.register_type_with_name::<SessionView>("Session");
    engine.register_type_with_name::<EntryView>("Entry");

    engine.register_get("id", |s: &mut SessionView| s.ask(Probe::SessionId));
    engine.register_fn("len", |s: &mut SessionView| s.ask(Probe::Len));
    engine.register_get("entries", |s: &mut SessionView| -> Array {
        let len = s.ask(Probe::Len).as_int().unwrap_or(0);
        (0..len as u32)
            .map(|k| Dynamic::from(s.entry(EntryAt::Nth(k))))
            .collect()
    });
    engine.register_fn(
        "count",
        |s: &mut SessionView, name: &str| -> Fallible<Dynamic> {
            Ok(s.ask(Probe::Count(s.selector(name)?)))
        },
    );
    engine.register_fn(
        "first",
        |s: &mut SessionView, name: &str| -> Fallible<Dynamic> {
            let selector = s.selector(name)?;
            Ok(match s.ask(Probe::Any(selector)).as_bool() {
                Ok(true) => Dynamic::from(s.entry(EntryAt::Hit { selector, k: 0 })),
                _ => Dynamic::UNIT,
            })
        },
    );
    engine.register_fn(
        "matching",
        |s: &mut SessionView, name: &str| -> Fallible<Array> {
            let selector = s.selector(name)?;
            let count = s.ask(Probe::Count(selector)).as_int().unwrap_or(0);
            Ok((0..count as u32)
                .map(|k| Dynamic::from(s.entry(EntryAt::Hit { selector, k })))
                .collect())
        },
    );
    engine.register_fn(
        "metric",
        |s: &mut SessionView, name: &str| -> Fallible<Dynamic> {
            Ok(s.ask(Probe::Metric(id_of(&s.data.metric_ids, name, "metric")?)))
        },
    );

    engine.register_get("index", |e: &mut EntryView| e.ask(Getter::Index));
    engine.register_get("position", |e: &mut EntryView| e.ask(Getter::Position));
    engine.register_get("place", |e: &mut EntryView| e.ask(Getter::Place));
    engine.register_get("timestamp", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::Timestamp))
    });
    engine.register_get("instant", |e: &mut EntryView| e.ask(Getter::Instant));
    engine.register_get("session_id", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::SessionId))
    });
    engine.register_get("domain", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::Domain))
    });
    engine.register_get("operation", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::Operation))
    });
    engine.register_get("success", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::Success))
    });
    engine.register_get("exit_code", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::ExitCode))
    });
    engine.register_get("duration", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::Duration))
    });
    engine.register_get("error", |e: &mut EntryView| {
        e.ask(Getter::Field(Field::Error))
    });
    engine.register_get("params", |e: &mut EntryView| -> Dynamic {
        e.session.give_up_memo();
        e.entry().map_or(Dynamic::UNIT, |entry| {
            Dynamic::from_map(
                entry
                    .params
                    .iter()
                    .map(|(k, v)| (k.into(), json_to_dynamic(v)))
                    .collect(),
            )
        })
    });
    engine.register_get("metadata", |e: &mut EntryView| -> Dynamic {
        e.session.give_up_memo();
        match e.entry().map(|entry| serde_json::to_value(&entry.metadata)) {
            Some(Ok(v)) => json_to_dynamic(&v),
            _ => Dynamic::UNIT,
        }
    });
    engine.register_fn(
        "field",
        |e: &mut EntryView, path: &str| -> Fallible<Dynamic> {
            let field = Field::parse(path).map_err(|m| -> Box<EvalAltResult> { m.into() })?;
            let Some(value) = e.entry().map(|entry| field.get(entry)) else {
                return Ok(Dynamic::UNIT);
            };
            Ok(match Answer::from_field(value) {
                Some(answer) => e
                    .session
                    .answered(Probe::Entry(e.at, Getter::Field(field)), answer),
                None => {
                    e.session.give_up_memo();
                    json_to_dynamic(&value.to_json())
                }
            })
        },
    );
    engine.register_fn("is", |e: &mut EntryView, name: &str| -> Fallible<Dynamic> {
        Ok(e.ask(Getter::Is(e.session.selector(name)?)))
    });
    engine.register_fn("to_string", |e: &mut EntryView| -> ImmutableString {
        e.ask(Getter::Describe)
            .into_immutable_string()
            .unwrap_or_default()
    });
}
