//! Plugin functions in Rhai: each plugin is a module named as the pack names it, so a script
//! calls `shell::near_repeats(session)`, or for one entry `shell::writes_files(e)`.
//!
//! A plugin call reads the whole session, which no probe can record: a run that makes one
//! is not remembered for other sessions.

use std::sync::Arc;

use rhai::{Dynamic, Engine, Map, Module};

use super::view::{EntryView, Fallible, SessionView};
use crate::native::{FunctionKind, NativeRef, Plugin};

/// Registers one module per plugin.
pub(super) fn register(engine: &mut Engine, plugins: &[Arc<Plugin>]) {
    for plugin in plugins {
        let mut module = Module::new();
        for index in 0..plugin.functions.len() {
            let Some(native) = NativeRef::new(Arc::clone(plugin), index) else {
                continue;
            };
            let name = native.function().name.clone();
            let on_session = native.clone();
            module.set_native_fn(name.as_str(), move |s: &mut SessionView| {
                call(&on_session, s, None)
            });
            module.set_native_fn(name.as_str(), move |e: &mut EntryView| {
                let at = e.at.index(&e.session.data.observable());
                call(&native, &e.session, at)
            });
        }
        engine.register_static_module(plugin.name.as_str(), module.into());
    }
}

fn call(native: &NativeRef, session: &SessionView, entry: Option<u32>) -> Fallible<Dynamic> {
    session.give_up_memo();
    let data = &session.data;
    let result = native
        .call(&data.session_id, &data.entries, entry, 0.0)
        .map_err(|error| {
            format!(
                "plugin function `{}` failed: {}",
                native.qualified_name(),
                error.describe(None)
            )
        })?;
    Ok(match native.function().kind {
        FunctionKind::Condition => {
            Dynamic::from(result.value.is_some_and(|v| v != 0.0 && !v.is_nan()))
        }
        FunctionKind::Metric => result.value.map_or(Dynamic::UNIT, Dynamic::from),
        FunctionKind::Rule => {
            let mut map = Map::new();
            map.insert("points".into(), Dynamic::from(result.value.unwrap_or(0.0)));
            map.insert(
                "evidence".into(),
                Dynamic::from_array(result.evidence.into_iter().map(Dynamic::from).collect()),
            );
            map.insert(
                "flags".into(),
                Dynamic::from_array(result.flags.into_iter().map(Dynamic::from).collect()),
            );
            map.insert(
                "entries".into(),
                Dynamic::from_array(
                    result
                        .entries
                        .into_iter()
                        .map(|i| Dynamic::from(i64::from(i)))
                        .collect(),
                ),
            );
            Dynamic::from_map(map)
        }
    })
}
