//! The `plugins:` a pack declares and the `native:` references to their functions: loading
//! (through the plugin host, [`crate::native`]) when the pack compiles, and resolving
//! `plugin.function` for a rule, a condition or a metric.

use super::codes::Code;
use std::sync::Arc;

use indexmap::IndexMap;

use super::raw::RawPlugin;
use super::PackOrigin;
use crate::native::{self, FunctionKind, NativeRef, Plugin, PluginPolicy};

/// The declared plugins, by the name the pack gives them.
#[derive(Default)]
pub(crate) struct Plugins {
    slots: IndexMap<String, Slot>,
}

struct Slot {
    /// Where the plugin is declared (`plugins[0]`).
    path: String,
    /// `None` when it could not be loaded (already reported).
    loaded: Option<Arc<Plugin>>,
}

/// A problem with a `native:` reference: at the place of the reference, or (for what the
/// library lacks) at the plugin's declaration, which is a plugin problem.
pub(crate) enum NativeProblem {
    AtUse(String),
    AtDeclaration {
        path: String,
        message: String,
    },
    /// The plugin did not load; that was reported where it is declared.
    AlreadyReported,
}

impl Plugins {
    /// Loads every declared plugin (each with its key path, `plugins[0]`). Problems come back
    /// as (code, key path, message, whether it is a plugin problem rather than a mistake in the
    /// YAML).
    pub fn declare(
        declared: &[(String, &RawPlugin)],
        origin: &PackOrigin,
        policy: PluginPolicy,
    ) -> (Plugins, Vec<(Code, String, String, bool)>) {
        let mut plugins = Plugins::default();
        let mut problems = Vec::new();
        for (path, declared) in declared {
            let name = declared.name.trim();
            let identifier = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !identifier {
                problems.push((
                    Code::Plugin,
                    format!("{path}.name"),
                    format!("plugin name `{}` must be a letter or `_` followed by letters, digits or `_` (rules write `native: NAME.function`, scripts `NAME::function(session)`)", declared.name),
                    false,
                ));
                continue;
            }
            if plugins.slots.contains_key(name) {
                problems.push((
                    Code::DuplicateId,
                    format!("{path}.name"),
                    format!("plugin name `{name}` is declared twice"),
                    false,
                ));
                continue;
            }
            let loaded = match origin {
                PackOrigin::Folder(dir) => {
                    match native::load(name, dir, &declared.path, &declared.sha256, policy)
                        .and_then(|p| plugins.formats_free(p))
                    {
                        Ok(p) => Some(Arc::new(p)),
                        Err(problem) => {
                            problems.push((Code::Plugin, path.clone(), problem.0, true));
                            None
                        }
                    }
                }
                PackOrigin::Builtin(id) => {
                    problems.push((
                        Code::Plugin,
                        path.clone(),
                        format!("plugin `{name}`: built-in pack `{id}` has no folder to load a library from"),
                        true,
                    ));
                    None
                }
            };
            plugins.slots.insert(
                name.to_owned(),
                Slot {
                    path: path.clone(),
                    loaded,
                },
            );
        }
        (plugins, problems)
    }

    /// `plugin`, when no format it reads has the name of a built-in format or of one an
    /// earlier plugin of the pack reads: a source of that name could be read only one way,
    /// and which would be a matter of order.
    fn formats_free(&self, plugin: Plugin) -> Result<Plugin, native::LoadProblem> {
        for source in &plugin.sources {
            if crate::source::Registry::builtin()
                .get(&source.name)
                .is_some()
            {
                return Err(native::LoadProblem(format!(
                    "plugin `{}`: its source format `{}` has the name of a built-in format, which a plugin cannot replace",
                    plugin.name, source.name
                )));
            }
            let earlier = self.slots.iter().find(|(_, slot)| {
                slot.loaded
                    .as_ref()
                    .is_some_and(|p| p.sources.iter().any(|s| s.name == source.name))
            });
            if let Some((other, slot)) = earlier {
                return Err(native::LoadProblem(format!(
                    "plugin `{}`: its source format `{}` is read by plugin `{other}` (`{}`) too, and a source can be read one way only",
                    plugin.name, source.name, slot.path
                )));
            }
        }
        Ok(plugin)
    }

    /// The loaded plugins, in declaration order.
    pub fn loaded(&self) -> Vec<Arc<Plugin>> {
        self.slots
            .values()
            .filter_map(|s| s.loaded.clone())
            .collect()
    }

    /// Resolves `plugin.function` for a use that needs a function of kind `want`.
    pub fn resolve(&self, reference: &str, want: FunctionKind) -> Result<NativeRef, NativeProblem> {
        let Some((name, function)) = reference.split_once('.') else {
            return Err(NativeProblem::AtUse(format!(
                "`native: {reference}` must name a plugin and one of its functions: `PLUGIN.FUNCTION`"
            )));
        };
        let Some(slot) = self.slots.get(name) else {
            let declared = self
                .slots
                .keys()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(NativeProblem::AtUse(if declared.is_empty() {
                format!("unknown plugin `{name}`: the pack declares no `plugins`")
            } else {
                format!("unknown plugin `{name}` (declared: {declared})")
            }));
        };
        let Some(loaded) = &slot.loaded else {
            return Err(NativeProblem::AlreadyReported);
        };
        let Some(index) = loaded.functions.iter().position(|f| f.name == function) else {
            let provided = loaded
                .functions
                .iter()
                .map(|f| format!("`{}` ({})", f.name, f.kind))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(NativeProblem::AtDeclaration {
                path: slot.path.clone(),
                message: format!(
                    "plugin `{name}` (`{}`) has no function `{function}`, which the pack uses (it provides {})",
                    loaded.path.display(),
                    if provided.is_empty() { "none".to_owned() } else { provided }
                ),
            });
        };
        let kind = loaded.functions[index].kind;
        if kind != want {
            return Err(NativeProblem::AtUse(format!(
                "`{reference}` is a {kind} function, and a {want} is needed here"
            )));
        }
        NativeRef::new(Arc::clone(loaded), index).ok_or(NativeProblem::AlreadyReported)
    }
}
