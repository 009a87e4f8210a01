//! The judgment cache: a model's valid reply to a prompt, kept so that grading the same
//! session again with the same pack and judge asks nothing.
//!
//! Kept under `$XDG_CACHE_HOME/grade/judgments` (else `~/.cache/grade/judgments`), one
//! JSON file per reply, named by a SHA-256 of everything that shapes the request: the
//! judge and model, the endpoint it is asked at, the pack's digest, temperature and output limit, the run number and
//! the prompt. Only replies that held a valid judgment are kept. Files are written to a
//! temporary name and renamed, so a reader never sees half a file.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// What is kept of one reply.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cached {
    pub judge: String,
    /// The judgment object read from the reply.
    pub judgment: Value,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Cache {
    /// The user's cache folder, as the XDG base directory spec says (a relative
    /// `XDG_CACHE_HOME` is ignored); `None` when there is no home to put it in.
    pub fn user() -> Option<Cache> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| {
                std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .map(|home| home.join(".cache"))
            })?;
        Some(Cache {
            dir: base.join("grade").join("judgments"),
        })
    }

    /// The key of a request: a hash of its parts, each length-prefixed so that no two
    /// different lists of parts hash alike.
    pub fn key(parts: &[&str]) -> String {
        let mut hasher = Sha256::new();
        for part in parts {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    /// A kept reply, or `None` when none is kept. A file that is there but cannot be read
    /// or is not a kept reply (a disk error, a file cut short by a full disk, an edit) is a
    /// miss too, with a warning naming it: the caller asks again, and the new reply replaces it.
    pub fn get(&self, key: &str) -> Result<Option<Cached>, String> {
        let path = self.path(key);
        // Through the guarded open: a FIFO or a device planted in the cache is refused.
        let read = grade_engine::file::read_capped(&path, crate::input::MAX_DOCUMENT, "kept reply");
        let text = match read {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(format!(
                    "judgment cache file `{}` cannot be read ({e}); the judge is asked again",
                    path.display()
                ))
            }
        };
        serde_json::from_slice(&text).map(Some).map_err(|e| {
            format!(
                "judgment cache file `{}` is not a kept judgment ({e}); the judge is asked again",
                path.display()
            )
        })
    }

    /// Keeps a reply, atomically.
    pub fn put(&self, key: &str, entry: &Cached) -> Result<(), String> {
        let path = self.path(key);
        let folder = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(folder)
            .map_err(|e| format!("cannot create `{}`: {e}", folder.display()))?;
        let temp = folder.join(format!(
            ".{key}.{}.{}.tmp",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let text = serde_json::to_vec(entry).map_err(|e| e.to_string())?;
        let written = std::fs::write(&temp, text)
            .and_then(|()| std::fs::rename(&temp, &path))
            .map_err(|e| format!("cannot write `{}`: {e}", path.display()));
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_separate_their_parts() {
        assert_ne!(Cache::key(&["ab", "c"]), Cache::key(&["a", "bc"]));
        assert_eq!(Cache::key(&["x"]).len(), 64);
    }

    #[test]
    fn a_kept_reply_reads_back_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache {
            dir: dir.path().join("j"),
        };
        let key = Cache::key(&["p"]);
        assert!(cache.get(&key).unwrap().is_none());
        let entry = Cached {
            judge: "openai:m".to_owned(),
            judgment: serde_json::json!({"a": 1}),
            input_tokens: 3,
            output_tokens: 4,
        };
        cache.put(&key, &entry).unwrap();
        let back = cache.get(&key).unwrap().unwrap();
        assert_eq!(back.judgment, entry.judgment);
        let files: Vec<_> = std::fs::read_dir(cache.dir.join(&key[..2]))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(files, [format!("{key}.json")]);
    }

    #[test]
    fn a_kept_file_that_does_not_read_is_a_miss_with_a_warning_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache {
            dir: dir.path().to_owned(),
        };
        let key = Cache::key(&["p"]);
        let path = cache.path(&key);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{\"judge\": \"openai:m\", \"judg").unwrap();
        assert_eq!(
            cache.get(&key).unwrap_err(),
            format!(
                "judgment cache file `{}` is not a kept judgment (EOF while parsing a string at line 1 column 27); the judge is asked again",
                path.display()
            )
        );
    }
}
