//! Native plugins: libraries a pack declares (`plugins: [{name, path, sha256}]`) whose
//! functions are rules, conditions and metrics (`native: shell.near_repeat`) and whose
//! source readers add formats. See `docs/plugins.md`.
//!
//! Loading is opt-in ([`PluginPolicy`]) and pinned: the file's sha256 must be the one the pack
//! declares before the library is opened, and the ABI version is checked before any other
//! symbol.
//!
//! This module is the public face of plugins, above the pack: the types of the host (which
//! lives below the pack, in `native`, since packs and scripts call plugins), [`pin`] and
//! [`relocate`] (which rewrite a pack's `rubric.yaml`) and
//! [`Registry::with_plugins_of`](crate::source::Registry::with_plugins_of) (a pack's formats).

mod source_format;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::native::{library_path, parse_pin};
pub use crate::native::{
    sha256_hex, FunctionKind, Plugin, PluginFunction, PluginPolicy, PluginSource, PluginSourceInfo,
    ABI_VERSION, DETECT_BYTES,
};

/// A plugin whose sha256 [`pin`] recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    /// The plugin's name in the pack.
    pub name: String,
    /// The library file.
    pub path: PathBuf,
    /// The library's sha256, as now pinned.
    pub sha256: String,
    /// Whether the pack pinned another hash before.
    pub changed: bool,
}

impl fmt::Display for Pinned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "plugin `{}`: `{}` sha256 {} ({})",
            self.name,
            self.path.display(),
            self.sha256,
            if self.changed { "pinned" } else { "unchanged" }
        )
    }
}

/// Rewrites the `sha256` of every plugin declared in `rubric.yaml` (`text`) with the hash of
/// its library as it is now; the rest of the text is kept byte for byte. Pinning is what an
/// author does after building a plugin and deciding to trust that build.
pub fn pin(text: &str, pack_dir: &Path) -> Result<(String, Vec<Pinned>), String> {
    use crate::pack::raw::{Lenient, RawPack};
    let (raw, _) = RawPack::read(text).map_err(|e| e.to_string())?;
    let places = crate::pack::locate::Places::read(text);
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    let mut pinned = Vec::new();
    for (i, item) in raw.plugins.iter().enumerate() {
        let Lenient::Ok(declared) = item else {
            return Err(format!(
                "`plugins[{i}]` needs `name`, `path` and `sha256` (write `sha256: \"\"` to have it pinned)"
            ));
        };
        let path = library_path(pack_dir, &declared.path);
        let bytes = crate::file::read_capped(&path, crate::file::MAX_DOCUMENT, "plugin library")
            .map_err(|e| {
                format!(
                    "plugin `{}`: cannot read library `{}`: {e}",
                    declared.name,
                    path.display()
                )
            })?;
        let sha256 = sha256_hex(&bytes);
        let changed = parse_pin(&declared.sha256).as_deref() != Some(sha256.as_str());
        replace_scalar(
            text,
            &places,
            &mut lines,
            i,
            "sha256",
            &format!("\"{sha256}\""),
            " (`sha256: \"\"`) to have it pinned",
        )?;
        pinned.push(Pinned {
            name: declared.name.clone(),
            path,
            sha256,
            changed,
        });
    }
    let pinned_text = lines.join("\n");
    // Only a value written on its own line can be replaced in place; one that continues on
    // the next lines would leave text behind, so the rewrite must read back as the new hashes.
    let (reread, _) = RawPack::read(&pinned_text).map_err(|e| {
        format!("pinning `plugins[…].sha256` in place would break `rubric.yaml` ({e}); write each `sha256` on one line")
    })?;
    for (i, (item, done)) in reread.plugins.iter().zip(&pinned).enumerate() {
        let Lenient::Ok(declared) = item else {
            return Err(format!(
                "pinning would break `plugins[{i}]`; write its `sha256` on one line"
            ));
        };
        if parse_pin(&declared.sha256).as_deref() != Some(done.sha256.as_str()) {
            return Err(format!(
                "`plugins[{i}].sha256` continues past its line; write it on one line \
                 (`sha256: \"\"`) to have it pinned"
            ));
        }
    }
    Ok((pinned_text, pinned))
}

/// A plugin whose `path` [`relocate`] rewrote, or kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relocated {
    /// The plugin's name in the pack.
    pub name: String,
    /// The `path` the copy declares.
    pub path: String,
}

/// `rubric.yaml` (`text`) of the pack in `pack_dir`, with each plugin's relative `path`
/// rewritten as the absolute path of the same library, so that a copy of the pack in any
/// other folder (`grade rubric new --from`) loads the libraries the original loads, pinned to
/// the same hashes; an absolute `path` is kept. The rest of the text is kept byte for byte.
pub fn relocate(text: &str, pack_dir: &Path) -> Result<(String, Vec<Relocated>), String> {
    use crate::pack::raw::{Lenient, RawPack};
    let (raw, _) = RawPack::read(text).map_err(|e| e.to_string())?;
    let places = crate::pack::locate::Places::read(text);
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    let mut relocated = Vec::new();
    for (i, item) in raw.plugins.iter().enumerate() {
        let Lenient::Ok(declared) = item else {
            return Err(format!("`plugins[{i}]` needs `name`, `path` and `sha256`"));
        };
        let given = Path::new(&declared.path);
        if given.is_absolute() {
            relocated.push(Relocated {
                name: declared.name.clone(),
                path: declared.path.clone(),
            });
            continue;
        }
        let declared_at = pack_dir.join(given);
        // The folder resolved, the file name kept as declared: the platform's prefix and
        // suffix are then added to it as they were to the original's.
        let (Some(folder), Some(file)) = (declared_at.parent(), declared_at.file_name()) else {
            return Err(format!(
                "plugin `{}`: `path` `{}` names no library file",
                declared.name, declared.path
            ));
        };
        let folder = std::fs::canonicalize(folder).map_err(|e| {
            format!(
                "plugin `{}`: cannot find the folder of library `{}`: {e}",
                declared.name,
                library_path(pack_dir, &declared.path).display()
            )
        })?;
        let absolute = folder.join(file);
        let Some(path) = absolute.to_str() else {
            return Err(format!(
                "plugin `{}`: library path `{}` is not UTF-8, and `rubric.yaml` is",
                declared.name,
                absolute.display()
            ));
        };
        // A JSON string is a YAML double-quoted scalar, backslashes and quotes escaped.
        let quoted = serde_json::to_string(path).map_err(|e| e.to_string())?;
        replace_scalar(text, &places, &mut lines, i, "path", &quoted, "")?;
        relocated.push(Relocated {
            name: declared.name.clone(),
            path: path.to_owned(),
        });
    }
    let relocated_text = lines.join("\n");
    // Only a value written on its own line can be replaced in place: the rewrite must read
    // back as the new paths.
    let (reread, _) = RawPack::read(&relocated_text).map_err(|e| {
        format!("rewriting `plugins[…].path` in place would break `rubric.yaml` ({e}); write each `path` on one line")
    })?;
    for (i, (item, done)) in reread.plugins.iter().zip(&relocated).enumerate() {
        if !matches!(item, Lenient::Ok(declared) if declared.path == done.path) {
            return Err(format!(
                "`plugins[{i}].path` could not be rewritten in place; write it on one line, quoted"
            ));
        }
    }
    Ok((relocated_text, relocated))
}

/// Replaces the value of `plugins[i].KEY` in `lines` (of `text`) with `value`: a scalar
/// written on the key's line, which ends at a comment, at the `,` or `}` of a flow mapping,
/// or at the end of the line. `hint` ends the refusal of a value on several lines.
fn replace_scalar(
    text: &str,
    places: &crate::pack::locate::Places,
    lines: &mut [String],
    i: usize,
    key: &str,
    value: &str,
    hint: &str,
) -> Result<(), String> {
    let at = format!("plugins[{i}].{key}");
    // A block scalar (`KEY: |`) keeps its value on the lines below: not rewritable in place.
    let key_line = places
        .find(&at, true)
        .and_then(|k| text.split('\n').nth(k.line - 1));
    if let Some(indicator) = key_line
        .and_then(|l| l.split_once(&format!("{key}:")))
        .map(|(_, after)| after.trim())
        .filter(|after| after.starts_with(['|', '>']))
    {
        return Err(format!(
            "`{at}` is a block scalar (`{indicator}`); write it on one line{hint}"
        ));
    }
    let place = places
        .find(&at, false)
        .ok_or_else(|| format!("cannot find where `{at}` is written"))?;
    let line = lines
        .get_mut(place.line - 1)
        .ok_or_else(|| format!("`{at}` is past the end of the file"))?;
    let start = line
        .char_indices()
        .nth(place.column - 1)
        .map_or(line.len(), |(at, _)| at);
    let rest = &line[start..];
    let cut = [" #", ",", "}"]
        .iter()
        .filter_map(|t| rest.find(t))
        .min()
        .unwrap_or(rest.len());
    let end = start + rest[..cut].trim_end().len();
    line.replace_range(start..end, value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_rewrites_only_the_sha256_values() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.so"), b"library a").unwrap();
        std::fs::write(dir.path().join("b.so"), b"library b").unwrap();
        let text = format!(
            "id: p # the pack\nplugins:\n  - name: a\n    path: a.so\n    sha256: \"{}\" # pinned\n  - {{ name: b, path: b.so, sha256: old }}\ndimensions: []\n",
            "0".repeat(64)
        );
        let (pinned, changes) = pin(&text, dir.path()).unwrap();
        let (a, b) = (sha256_hex(b"library a"), sha256_hex(b"library b"));
        assert_eq!(
            pinned,
            format!(
                "id: p # the pack\nplugins:\n  - name: a\n    path: a.so\n    sha256: \"{a}\" # pinned\n  - {{ name: b, path: b.so, sha256: \"{b}\" }}\ndimensions: []\n"
            )
        );
        assert_eq!(changes.len(), 2);
        assert!(changes.iter().all(|c| c.changed));
        let (again, changes) = pin(&pinned, dir.path()).unwrap();
        assert_eq!(again, pinned, "pinning twice changes nothing");
        assert!(changes.iter().all(|c| !c.changed));
    }

    /// A copy of a pack in another folder (`grade rubric new --from`) named no library: a
    /// relative `path` is relative to the pack's folder.
    #[test]
    fn relocate_names_each_relative_library_from_anywhere_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let pack = dir.path().join("pack");
        std::fs::create_dir_all(pack.join("lib")).unwrap();
        let lib = std::fs::canonicalize(pack.join("lib")).unwrap();
        let text = "id: p # the pack\nplugins:\n  - name: a\n    path: lib/a # built here\n    sha256: \"x\"\n  - { name: b, path: ../pack/lib/b.so, sha256: y }\n  - { name: c, path: /opt/c.so, sha256: z }\ndimensions: []\n";
        let (relocated, plugins) = relocate(text, &pack).unwrap();
        let (a, b) = (lib.join("a"), lib.join("b.so"));
        assert_eq!(
            relocated,
            format!(
                "id: p # the pack\nplugins:\n  - name: a\n    path: \"{}\" # built here\n    sha256: \"x\"\n  - {{ name: b, path: \"{}\", sha256: y }}\n  - {{ name: c, path: /opt/c.so, sha256: z }}\ndimensions: []\n",
                a.display(),
                b.display()
            )
        );
        let paths: Vec<&str> = plugins.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [a.to_str().unwrap(), b.to_str().unwrap(), "/opt/c.so"]
        );
        // A value it cannot replace in place is refused, not half rewritten.
        let text =
            "id: p\nplugins:\n  - { name: a, path: \"lib/a, b\", sha256: x }\ndimensions: []\n";
        let err = relocate(text, &pack).unwrap_err();
        assert!(err.contains("path") && err.contains("on one line"), "{err}");
        let text = "id: p\nplugins:\n  - name: a\n    path: |\n      lib/a\n    sha256: x\ndimensions: []\n";
        let err = relocate(text, &pack).unwrap_err();
        assert_eq!(
            err,
            "`plugins[0].path` is a block scalar (`|`); write it on one line"
        );
    }

    #[test]
    fn pin_refuses_a_sha256_it_cannot_rewrite_in_place_rather_than_break_the_pack() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.so"), b"library a").unwrap();
        for value in ["|\n      old", ">-\n      old", "|"] {
            let text = format!(
                "id: p\nplugins:\n  - name: a\n    path: a.so\n    sha256: {value}\ndimensions: []\n"
            );
            let err = pin(&text, dir.path()).unwrap_err();
            assert!(err.contains("`plugins[0].sha256`"), "{value:?}: {err}");
            assert!(err.contains("on one line"), "{value:?}: {err}");
        }
    }
}
