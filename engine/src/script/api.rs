//! The functions and properties scripts call on a session and its entries.

use rhai::{Array, Dynamic, Engine, EvalAltResult, ImmutableString};
use serde_json::Value;

use super::observe::{Answer, EntryAt, Getter, Probe};
use super::view::{id_of, EntryView, Fallible, SessionView};
use crate::entry::{MetaValue, Metadata, Reach};
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

/// `metadata` as [`json_to_dynamic`] converts its JSON (`serde_json::to_value`), built
/// without the JSON in between: scripts that read `e.metadata` on every entry spent 12% of
/// their run serializing it (`claude-code-v1`, 20,000 tool calls). Defined keys first, then
/// `extra`, so a key in both keeps `extra`'s value as the JSON object does.
fn metadata_to_dynamic(metadata: &Metadata) -> Dynamic {
    let meta = |value: &MetaValue| match value {
        MetaValue::Text(t) => Dynamic::from(t.as_str().to_owned()),
        MetaValue::Json(v) => json_to_dynamic(v),
    };
    let mut map = rhai::Map::new();
    let defined = [
        ("taskId", metadata.task_id.as_ref()),
        ("userId", metadata.user_id.as_ref()),
        ("source", Some(&metadata.source)),
        ("gateway", metadata.gateway.as_ref()),
        ("role", metadata.role.as_ref()),
    ];
    for (key, value) in defined {
        if let Some(value) = value {
            map.insert(key.into(), meta(value));
        }
    }
    for (key, value) in &metadata.extra {
        map.insert(key.as_str().into(), json_to_dynamic(value));
    }
    Dynamic::from_map(map)
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
    engine.register_fn("cmp_time", |a: &mut EntryView, b: EntryView| {
        a.session.ask(Probe::TimeOrder(a.at, b.at))
    });
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
        e.cached(&e.session.params, |entry| {
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
        e.cached(&e.session.metadata, |entry| {
            metadata_to_dynamic(&entry.metadata)
        })
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
    // `matches`, not `is`: Rhai reserves `is` as a keyword, so `e.is("NAME")`, which the docs
    // once named, never parsed.
    engine.register_fn(
        "matches",
        |e: &mut EntryView, name: &str| -> Fallible<Dynamic> {
            Ok(e.ask(Getter::Is(e.session.selector(name)?)))
        },
    );
    engine.register_fn(
        "followed_by",
        |e: &mut EntryView, name: &str, within: i64| -> Fallible<Dynamic> {
            near(e, name, within, "followed_by", Reach::After)
        },
    );
    engine.register_fn(
        "preceded_by",
        |e: &mut EntryView, name: &str, within: i64| -> Fallible<Dynamic> {
            near(e, name, within, "preceded_by", Reach::Before)
        },
    );
    engine.register_fn("to_string", |e: &mut EntryView| -> ImmutableString {
        e.ask(Getter::Describe)
            .into_immutable_string()
            .unwrap_or_default()
    });
}

/// `e.followed_by(NAME, N)` and `e.preceded_by(NAME, N)`: whether one of the `N` entries after
/// (before) `e` matches the selector, as the declarative conditions of the same names.
fn near(
    e: &EntryView,
    name: &str,
    within: i64,
    function: &str,
    reach: fn(u32) -> Reach,
) -> Fallible<Dynamic> {
    let selector = e.session.selector(name)?;
    if within < 1 {
        return Err(format!("`{function}` looks at 1 or more entries, not `{within}`").into());
    }
    // A reach past any session's end is as good as the end.
    let within = u32::try_from(within).unwrap_or(u32::MAX);
    Ok(e.session.ask(Probe::Near(e.at, selector, reach(within))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The map a script gets must be the one the JSON route made, for every shape metadata
    /// takes: optional keys absent or present, values that are not text, nested `extra`.
    #[test]
    fn metadata_map_is_the_map_its_json_converts_to() {
        let via_json =
            |m: &Metadata| format!("{:?}", json_to_dynamic(&serde_json::to_value(m).unwrap()));
        let direct = |m: &Metadata| format!("{:?}", metadata_to_dynamic(m));
        let text = |s: &str| MetaValue::Text(s.into());
        let json = |v: Value| MetaValue::Json(Box::new(v));
        let plain = Metadata {
            task_id: None,
            user_id: None,
            source: text("mcp"),
            gateway: None,
            role: None,
            extra: serde_json::Map::new(),
        };
        let serde_json::Value::Object(extra) = serde_json::json!({"cwd": "/p", "isSidechain": true,
            "messageId": "m", "nested": {"x": [1, -2, 18446744073709551615u64]}})
        else {
            unreachable!()
        };
        let full = Metadata {
            task_id: Some(text("T1")),
            user_id: Some(json(Value::Null)),
            source: json(serde_json::json!(7)),
            gateway: Some(text("cleo_query")),
            role: Some(json(serde_json::json!(["a", {"b": 1.5}]))),
            extra,
        };
        let mut clash = plain.clone();
        clash
            .extra
            .insert("source".into(), serde_json::json!({"extra": "wins"}));
        for m in [&plain, &full, &clash] {
            assert_eq!(direct(m), via_json(m));
        }
        assert!(direct(&clash).contains("wins"), "{}", direct(&clash));
        assert!(direct(&full).contains("1.5"), "{}", direct(&full));
    }
}
