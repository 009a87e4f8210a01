//! Source formats a pack's native plugins read, registered beside the built-in ones
//! ([`Registry::with_plugins_of`]): a plugin format is then detected, named by
//! `--source-format`-style choices and read exactly as a built-in one is. It lives with the
//! plugin host, which depends on `source`, so that `source` never depends on plugins.

use std::sync::Arc;

use super::{PluginSource, DETECT_BYTES};
use crate::pack::CompiledPack;
use crate::source::{
    DuplicateFormat, Input, ReadOptions, Registry, SessionFilter, SourceError, SourceFormat,
    SourceRead,
};

/// A plugin's source format, as the registry sees it.
struct PluginFormat {
    source: PluginSource,
    /// `` a `NAME` source (plugin `PLUGIN`) ``.
    noun: String,
}

impl SourceFormat for PluginFormat {
    fn name(&self) -> &str {
        self.source.name()
    }

    fn noun(&self) -> &str {
        &self.noun
    }

    fn about(&self) -> &str {
        self.source.doc()
    }

    fn plugin(&self) -> Option<&str> {
        Some(&self.source.plugin().name)
    }

    // A plugin format is specific, and the pack that declares it expects it: its detector
    // is asked before the built-in formats look at the content.
    fn claim_bytes(&self) -> usize {
        DETECT_BYTES
    }

    fn claims(&self, head: &[u8]) -> bool {
        self.source.detect(head)
    }

    fn read(
        &self,
        input: &Input<'_>,
        filter: &SessionFilter,
        options: &ReadOptions,
    ) -> Result<SourceRead, SourceError> {
        let content = input.bytes()?;
        self.source.read(input.name(), &content, filter, options)
    }
}

impl Registry {
    /// The registry to read sources for `pack` through: the built-in formats and, after
    /// them, those the plugins of `pack` read (in declaration order), refusing a source of a
    /// format the pack does not grade ([`CompiledPack::grading`]). A plugin format that takes a
    /// name already taken is refused.
    pub fn with_plugins_of(pack: &CompiledPack) -> Result<Registry, DuplicateFormat> {
        let mut registry = Registry::builtin().clone();
        for source in pack.plugin_sources() {
            let noun = format!(
                "a `{}` source (plugin `{}`)",
                source.name(),
                source.plugin().name
            );
            registry.register(Arc::new(PluginFormat { source, noun }))?;
        }
        Ok(pack.grading(registry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pack_without_plugins_reads_the_builtin_formats() {
        let pack = crate::load_pack("cleo-v1", &[]).unwrap();
        let registry = Registry::with_plugins_of(&pack).unwrap();
        let names: Vec<&str> = registry.names().collect();
        let builtin: Vec<&str> = Registry::builtin().names().collect();
        assert_eq!(names, builtin);
    }
}
