//! Sources a pack's plugins read: chosen by `--source-format NAME`, or by a plugin's own
//! detector, which is asked before the built-in detection (a plugin format is specific, and
//! the pack that declares it expects it).

use std::io::Read;
use std::path::Path;

use grade_engine::plugin::{PluginSource, DETECT_BYTES};
use grade_engine::source::SourceError;
use grade_engine::{CompiledPack, SessionFilter, SourceRead};

use crate::args::SourceFormatChoice;
use crate::error::CliError;

/// The plugin format to read `source` with, if any.
pub fn choose(
    pack: &CompiledPack,
    choice: &SourceFormatChoice,
    source: &Path,
) -> Result<Option<PluginSource>, CliError> {
    let formats = pack.plugin_sources();
    match choice {
        SourceFormatChoice::Builtin(_) => Ok(None),
        SourceFormatChoice::Plugin(name) => match formats.iter().find(|f| f.name() == name) {
            Some(format) => Ok(Some(format.clone())),
            None => {
                let mut known: Vec<String> = std::iter::once(crate::args::AUTO_FORMAT)
                    .chain(grade_engine::source::Registry::builtin().names())
                    .map(|n| format!("`{n}`"))
                    .collect();
                known.extend(
                    formats
                        .iter()
                        .map(|f| format!("`{}` (plugin `{}`)", f.name(), f.plugin().name)),
                );
                Err(CliError::Usage(format!(
                    "unknown source format `{name}` (known: {})",
                    known.join(", ")
                )))
            }
        },
        SourceFormatChoice::Auto => {
            if formats.is_empty() || !source.is_file() {
                return Ok(None);
            }
            let head = head(source)?;
            Ok(formats.into_iter().find(|f| f.detect(&head)))
        }
    }
}

fn head(path: &Path) -> Result<Vec<u8>, CliError> {
    let io = |source| {
        CliError::Source(SourceError::Io {
            path: path.to_owned(),
            source,
        })
    };
    let mut head = Vec::with_capacity(DETECT_BYTES);
    std::fs::File::open(path)
        .map_err(io)?
        .take(DETECT_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(io)?;
    Ok(head)
}

/// Reads a whole source file with a plugin.
pub fn read(
    format: &PluginSource,
    path: &Path,
    filter: &SessionFilter,
) -> Result<SourceRead, CliError> {
    let content = std::fs::read(path).map_err(|source| {
        CliError::Source(SourceError::Io {
            path: path.to_owned(),
            source,
        })
    })?;
    Ok(format.read(path, &content, filter)?)
}
