//! The native plugin host: loading the libraries a pack declares, calling their functions
//! (rules, conditions, metrics) and reading their source formats. See `docs/plugins.md`.
//!
//! Loading is opt-in ([`PluginPolicy`]) and pinned: the file's sha256 must be the one the pack
//! declares before the library is opened, the bytes hashed are the bytes loaded (the file is
//! read once), and the ABI version is checked before any other symbol. [`host`] holds all of
//! this module's `unsafe`; the rest is the safe side.
//!
//! It sits below `script` and `pack`, which call plugins, and knows nothing of packs: what an
//! embedder sees of plugins (these types, pinning a pack's libraries, the registry with a
//! pack's formats) is the public face [`crate::plugin`], above the pack.

mod call;
pub(crate) use call::{CallError, NativeRef, NativeResult};
mod host;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use grade_plugin::abi;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::entry::{Entry, Metadata, Outcome, Params, Session};
use crate::field::{Field, FieldsRead};
use crate::source::{Place, ReadOptions, SessionFilter, SourceError, SourceRead, SourceWarning};

pub use grade_plugin::abi::ABI_VERSION;

/// Whether packs may load native code. Off unless the user says so.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PluginPolicy {
    /// Whether a pack may load its declared plugins.
    pub allow: bool,
    /// How the embedder's users allow plugins (a flag, a setting), which a refusal names;
    /// without it a refusal names the policy.
    pub how_to_allow: Option<&'static str>,
}

/// What a function is, from its declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionKind {
    /// Scores a dimension as a rule does.
    Rule,
    /// Decides whether a rule case applies.
    Condition,
    /// Computes a named metric.
    Metric,
}

impl FunctionKind {
    fn from_abi(kind: u32) -> Option<FunctionKind> {
        match kind {
            abi::KIND_RULE => Some(FunctionKind::Rule),
            abi::KIND_CONDITION => Some(FunctionKind::Condition),
            abi::KIND_METRIC => Some(FunctionKind::Metric),
            _ => None,
        }
    }

    /// The kind as a pack declares it (`rule`, `condition`, `metric`).
    pub fn name(self) -> &'static str {
        match self {
            FunctionKind::Rule => "rule",
            FunctionKind::Condition => "condition",
            FunctionKind::Metric => "metric",
        }
    }
}

impl fmt::Display for FunctionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A loaded plugin: what the pack declared and what the library says it provides.
#[derive(Debug)]
pub struct Plugin {
    /// The name the pack gives it (what `native: NAME.function` refers to).
    pub name: String,
    /// The name and version the library reports.
    pub reported_name: String,
    /// The version the library reports.
    pub version: String,
    /// The library file, as resolved from the pack's `path`.
    pub path: PathBuf,
    /// `sha256:` and the hex digest of the library's bytes (the pinned one, verified).
    pub digest: String,
    /// The functions the library provides, in its order.
    pub functions: Vec<PluginFunction>,
    /// The source formats the library reads, in its order.
    pub sources: Vec<PluginSourceInfo>,
}

/// A function a plugin provides.
#[derive(Debug)]
pub struct PluginFunction {
    /// The name a pack refers to it by (after `PLUGIN.`).
    pub name: String,
    /// What the function computes.
    pub kind: FunctionKind,
    /// What the library says the function does.
    pub doc: String,
    /// The entry fields the function reads, resolved.
    pub fields: Vec<String>,
    resolved: Vec<Field>,
    call: grade_plugin::abi::GradeFn,
}

/// A source format a plugin reads.
#[derive(Debug)]
pub struct PluginSourceInfo {
    /// The format's name (what `--source-format` style choices use).
    pub name: String,
    /// What the library says the format is.
    pub doc: String,
    detect: grade_plugin::abi::GradeDetectFn,
    read: grade_plugin::abi::GradeReadFn,
}

/// A library the pack cannot use, with the reason in words (the place is the caller's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoadProblem(pub String);

/// Libraries already opened by this process, by canonical path, with the sha256 they had:
/// opening one again is free, and a file rebuilt since it was opened is refused instead of
/// silently running the old code.
type Opened = Mutex<HashMap<PathBuf, (String, Arc<host::Described>)>>;

fn opened() -> &'static Opened {
    static OPENED: std::sync::OnceLock<Opened> = std::sync::OnceLock::new();
    OPENED.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The file a declared `path` names: relative to the pack folder, and with the platform's
/// library prefix and suffix when its file name has no extension (`lib/shell` is
/// `lib/libshell.so` on Linux, `lib/libshell.dylib` on macOS, `lib\shell.dll` on Windows).
pub(crate) fn library_path(pack_dir: &Path, declared: &str) -> PathBuf {
    let path = pack_dir.join(declared);
    let Some(file) = path.file_name().and_then(|f| f.to_str()) else {
        return path;
    };
    if Path::new(file).extension().is_some() {
        return path;
    }
    let prefix = std::env::consts::DLL_PREFIX;
    let name = if file.starts_with(prefix) {
        format!("{file}{}", std::env::consts::DLL_SUFFIX)
    } else {
        format!("{prefix}{file}{}", std::env::consts::DLL_SUFFIX)
    };
    path.with_file_name(name)
}

/// The hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Bytes as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// Whether `pinned` is a sha256 as packs write it: 64 hex digits, optionally after `sha256:`.
pub(crate) fn parse_pin(pinned: &str) -> Option<String> {
    let hex = pinned.strip_prefix("sha256:").unwrap_or(pinned);
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| hex.to_ascii_lowercase())
}

/// Loads a declared plugin: the file must exist and match the pin before the policy is even
/// asked, and the library is opened only when the policy allows it.
pub(crate) fn load(
    name: &str,
    pack_dir: &Path,
    declared_path: &str,
    pinned: &str,
    policy: PluginPolicy,
) -> Result<Plugin, LoadProblem> {
    let problem = |message: String| LoadProblem(format!("plugin `{name}`: {message}"));
    let path = library_path(pack_dir, declared_path);
    let shown = path.display().to_string();
    let Some(pin) = parse_pin(pinned) else {
        return Err(problem(format!(
            "`sha256` must be the library's 64 hex digits (`sha256sum {shown}`), not `{pinned}`"
        )));
    };
    let bytes = match crate::file::read_capped(&path, crate::file::MAX_DOCUMENT, "plugin library") {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(problem(format!(
                "library `{shown}` does not exist (build the plugin, or correct `path`)"
            )))
        }
        Err(e) => return Err(problem(format!("cannot read library `{shown}`: {e}"))),
    };
    let actual = sha256_hex(&bytes);
    if actual != pin {
        return Err(problem(format!(
            "library `{shown}` has sha256 `{actual}`, and the pack pins `{pin}`: refused before loading (if you rebuilt it and trust this build, pin it with `grade rubric pin`)"
        )));
    }
    if !policy.allow {
        return Err(problem(match policy.how_to_allow {
            Some(how) => format!(
                "the pack loads native code from `{shown}`, which runs with your rights: allow it with {how}"
            ),
            None => format!(
                "the pack loads native code from `{shown}`, which runs with your rights, and the plugin policy does not allow it"
            ),
        }));
    }
    let described =
        open_once(&path, &actual, &bytes).map_err(|e| problem(open_message(&e, &shown)))?;
    drop(bytes);
    let mut functions = Vec::new();
    for f in &described.functions {
        let Some(kind) = FunctionKind::from_abi(f.kind) else {
            return Err(problem(format!(
                "function `{}` of `{shown}` has kind {}, which ABI version {ABI_VERSION} does not define",
                f.name, f.kind
            )));
        };
        let resolved = f
            .fields
            .iter()
            .map(|p| Field::parse(p))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|m| {
                problem(format!(
                    "function `{}` of `{shown}` reads a field grade does not know: {m}",
                    f.name
                ))
            })?;
        functions.push(PluginFunction {
            name: f.name.clone(),
            kind,
            doc: f.doc.clone(),
            fields: f.fields.clone(),
            resolved,
            call: f.call,
        });
    }
    // `native: NAME.f` and `NAME::f(session)` must each mean one function: with two of a
    // name, the pack would call the first and scripts the last.
    if let Some(twice) = twice_named(functions.iter().map(|f| f.name.as_str())) {
        let kind = |i: usize| functions[i].kind;
        return Err(problem(format!(
            "`{shown}` provides two functions named `{}` (number {}, a {}, and number {}, a {}), and a pack could not tell which it calls",
            twice.name, twice.first + 1, kind(twice.first), twice.second + 1, kind(twice.second)
        )));
    }
    if let Some(twice) = twice_named(described.sources.iter().map(|s| s.name.as_str())) {
        return Err(problem(format!(
            "`{shown}` provides two source formats named `{}` (number {} and number {}), and a source could not tell which reads it",
            twice.name, twice.first + 1, twice.second + 1
        )));
    }
    let sources = described
        .sources
        .iter()
        .map(|s| PluginSourceInfo {
            name: s.name.clone(),
            doc: s.doc.clone(),
            detect: s.detect,
            read: s.read,
        })
        .collect();
    Ok(Plugin {
        name: name.to_owned(),
        reported_name: described.name.clone(),
        version: described.version.clone(),
        path,
        digest: format!("sha256:{actual}"),
        functions,
        sources,
    })
}

/// A name given twice in a list, with both 0-based positions.
struct Twice<'a> {
    name: &'a str,
    first: usize,
    second: usize,
}

fn twice_named<'a>(names: impl Iterator<Item = &'a str>) -> Option<Twice<'a>> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, name) in names.enumerate() {
        if let Some(&first) = seen.get(name) {
            return Some(Twice {
                name,
                first,
                second: i,
            });
        }
        seen.insert(name, i);
    }
    None
}

/// Opens the library whose verified `bytes` were read from `path` (the path only keys what
/// this process already opened: the bytes are what is loaded).
fn open_once(
    path: &Path,
    sha: &str,
    bytes: &[u8],
) -> Result<Arc<host::Described>, host::OpenError> {
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let mut opened = opened().lock().unwrap_or_else(|p| p.into_inner());
    if let Some((loaded_sha, described)) = opened.get(&key) {
        if loaded_sha == sha {
            return Ok(Arc::clone(described));
        }
        return Err(host::OpenError::NotLoadable(format!(
            "the file changed since this process loaded it (sha256 `{loaded_sha}` then), and a loaded library cannot be replaced"
        )));
    }
    let described = Arc::new(host::open(bytes)?);
    opened.insert(key, (sha.to_owned(), Arc::clone(&described)));
    Ok(described)
}

fn open_message(e: &host::OpenError, shown: &str) -> String {
    match e {
        host::OpenError::NotLoadable(reason) => format!(
            "`{shown}` is not a library this platform ({} {}) can load: {reason}",
            std::env::consts::OS,
            std::env::consts::ARCH
        ),
        host::OpenError::NoAbiVersion => format!(
            "`{shown}` does not export `{}`, so it is not a grade plugin",
            abi::ABI_VERSION_SYMBOL
        ),
        host::OpenError::AbiMismatch { found } => format!(
            "`{shown}` was built for plugin ABI version {found}, and this grade loads version {ABI_VERSION} (rebuild it against a matching `grade-plugin`)"
        ),
        host::OpenError::NoDescribe => format!(
            "`{shown}` reports ABI version {ABI_VERSION} but does not export `{}`",
            abi::DESCRIBE_SYMBOL
        ),
        host::OpenError::BadDescription(reason) => {
            format!("`{shown}` describes itself wrongly: {reason}")
        }
    }
}

/// A source format a plugin reads.
#[derive(Debug, Clone)]
pub struct PluginSource {
    plugin: Arc<Plugin>,
    index: usize,
}

/// How many bytes of a file a source's detector sees.
pub const DETECT_BYTES: usize = 64 * 1024;

impl PluginSource {
    /// The `index`-th source format of `plugin`, if it has one.
    pub fn new(plugin: Arc<Plugin>, index: usize) -> Option<PluginSource> {
        (index < plugin.sources.len()).then_some(PluginSource { plugin, index })
    }

    fn info(&self) -> &PluginSourceInfo {
        &self.plugin.sources[self.index]
    }

    /// The format's name (`--source-format`).
    pub fn name(&self) -> &str {
        &self.info().name
    }

    /// What the library says the format is.
    pub fn doc(&self) -> &str {
        &self.info().doc
    }

    /// The plugin that reads the format.
    pub fn plugin(&self) -> &Plugin {
        &self.plugin
    }

    /// Whether the first bytes of a file (up to [`DETECT_BYTES`]) are this format.
    pub fn detect(&self, head: &[u8]) -> bool {
        host::detect(self.info().detect, &head[..head.len().min(DETECT_BYTES)])
    }

    /// Reads a file's content into sessions, in order of first appearance; an entry's
    /// duration is checked only when `options` checks durations, as a CLEO log's is.
    pub fn read(
        &self,
        path: &Path,
        content: &[u8],
        filter: &SessionFilter,
        options: &ReadOptions,
    ) -> Result<SourceRead, SourceError> {
        let format = self.name().to_owned();
        let durations_read = options.checked.contains(FieldsRead::DURATION);
        let mut sessions: indexmap::IndexMap<String, Vec<Entry>> = indexmap::IndexMap::new();
        let mut accept = |read: host::ReadEntry| -> Result<(), String> {
            let entry = to_entry(read, &format, durations_read)?;
            if filter.wants(&entry.session_id) {
                sessions
                    .entry(entry.session_id.to_string())
                    .or_default()
                    .push(entry);
            }
            Ok(())
        };
        let mut reading = host::Reading {
            accept: &mut accept,
            warnings: Vec::new(),
            error: None,
        };
        host::read(
            self.info().read,
            &path.display().to_string(),
            content,
            &mut reading,
        );
        let (warnings, error) = (reading.warnings, reading.error);
        if let Some((line, message)) = error {
            return Err(SourceError::Plugin {
                path: path.to_owned(),
                place: if line == 0 {
                    String::new()
                } else {
                    format!(":{line}")
                },
                format,
                plugin: self.plugin.name.clone(),
                message,
            });
        }
        Ok(SourceRead {
            sessions: sessions
                .into_iter()
                .map(|(id, entries)| Session {
                    id,
                    entries,
                    ..Session::default()
                })
                .collect(),
            warnings: warnings
                .into_iter()
                .map(|(line, message)| SourceWarning {
                    path: path.to_owned(),
                    place: if line == 0 {
                        Place::File
                    } else {
                        Place::Line(line)
                    },
                    message,
                })
                .collect(),
            // A plugin skips by warning; it reports no count of skipped lines.
            ..SourceRead::default()
        })
    }
}

/// An entry a plugin read, checked as the built-in sources check theirs. Its duration is
/// held to a CLEO log's bound: NaN and infinities compare false with any budget, and larger
/// durations add up to infinity, so a pack reading durations would grade the session wrong
/// without a word. One that nothing reads is left at 0, as a CLEO log's of the wrong type is.
fn to_entry(read: host::ReadEntry, format: &str, durations_read: bool) -> Result<Entry, String> {
    let duration = match read.duration_ms {
        ms if crate::source::is_duration(ms) => ms,
        ms if durations_read => {
            return Err(format!(
                "the entry's `duration_ms` is {}, not {}",
                crate::entry::js_number(ms),
                crate::source::DURATION_WANTED
            ))
        }
        _ => 0.0,
    };
    let instant = crate::time::parse_timestamp(&read.timestamp)
        .map_err(|e| format!("timestamp `{}`: {e}", read.timestamp))?;
    let object = |text: &str, what: &str| -> Result<serde_json::Map<String, Value>, String> {
        if text.is_empty() {
            return Ok(serde_json::Map::new());
        }
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(other) => Err(format!("{what} must be a JSON object, not `{other}`")),
            Err(e) => Err(format!("{what} is not JSON: {e}")),
        }
    };
    let params = object(&read.params_json, "params")?;
    let metadata = object(&read.metadata_json, "metadata")?;
    if read.session_id.is_empty() {
        return Err("the entry has no session id".to_owned());
    }
    Ok(Entry {
        timestamp: read.timestamp.into(),
        instant,
        session_id: read.session_id.into(),
        domain: read.domain.into(),
        operation: read.operation.into(),
        params: Params::from(params),
        result: Outcome {
            success: read.success,
            exit_code: read.exit_code,
            duration,
        },
        metadata: Metadata::from_map(metadata, format),
        error: read.error.map(Into::into),
        origin: crate::entry::Origin::UNKNOWN,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_library_name_gets_the_platform_prefix_and_suffix() {
        let (pre, suf) = (std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
        let dir = Path::new("/packs/p");
        assert_eq!(
            library_path(dir, "lib/shell"),
            dir.join(format!("lib/{pre}shell{suf}"))
        );
        assert_eq!(
            library_path(dir, &format!("{pre}shell")),
            dir.join(format!("{pre}shell{suf}")),
            "a prefix already there is not doubled"
        );
        assert_eq!(library_path(dir, "bin/shell.so"), dir.join("bin/shell.so"));
        assert_eq!(
            library_path(dir, "/opt/plugins/x.dylib"),
            Path::new("/opt/plugins/x.dylib")
        );
    }

    #[test]
    fn a_pin_is_64_hex_digits_with_or_without_its_prefix() {
        let hex = "AB".repeat(32);
        assert_eq!(parse_pin(&hex), Some("ab".repeat(32)));
        assert_eq!(parse_pin(&format!("sha256:{hex}")), Some("ab".repeat(32)));
        assert_eq!(parse_pin(&hex[1..]), None);
        assert_eq!(parse_pin(&"g".repeat(64)), None);
        assert_eq!(parse_pin(""), None);
    }

    fn entry_lasting(duration_ms: f64) -> host::ReadEntry {
        host::ReadEntry {
            session_id: "s".to_owned(),
            timestamp: "2026-03-01T09:00:00Z".to_owned(),
            domain: "tasks".to_owned(),
            operation: "find".to_owned(),
            success: true,
            exit_code: 0,
            duration_ms,
            error: None,
            params_json: String::new(),
            metadata_json: String::new(),
        }
    }

    /// As a CLEO log's `result.duration` of the wrong type: a plugin entry's duration that no
    /// session can have is refused only for a pack that reads durations, and left at 0 for
    /// one that reads none.
    #[test]
    fn a_plugin_source_duration_no_session_can_have_is_left_at_0_when_no_duration_is_read() {
        for (ms, shown) in [
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (-1e308, "-1e+308"),
            (9_007_199_254_740_992.0, "9007199254740992"),
        ] {
            let refused = to_entry(entry_lasting(ms), "f", true).map(|e| e.result.duration);
            assert_eq!(
                refused,
                Err(format!("the entry's `duration_ms` is {shown}, not a number of milliseconds from -9007199254740991 to 9007199254740991"))
            );
            let kept = to_entry(entry_lasting(ms), "f", false).map(|e| e.result.duration);
            assert_eq!(kept, Ok(0.0), "{shown}");
        }
        for ms in [
            -9_007_199_254_740_991.0,
            -5.0,
            0.0,
            12.5,
            9_007_199_254_740_991.0,
        ] {
            for read in [true, false] {
                let duration = to_entry(entry_lasting(ms), "f", read).map(|e| e.result.duration);
                assert_eq!(duration, Ok(ms), "{ms} read: {read}");
            }
        }
    }

    #[test]
    fn a_missing_library_is_named_before_the_policy_is_asked() {
        let dir = tempfile::tempdir().unwrap();
        let err = load(
            "x",
            dir.path(),
            "nope",
            &"0".repeat(64),
            PluginPolicy::default(),
        )
        .unwrap_err();
        assert!(err.0.starts_with("plugin `x`: library `"), "{}", err.0);
        assert!(err.0.contains("does not exist"), "{}", err.0);
        std::fs::write(dir.path().join("f.so"), b"bytes").unwrap();
        let err = load("x", dir.path(), "f.so", "abc", PluginPolicy::default()).unwrap_err();
        assert!(
            err.0.contains("must be the library's 64 hex digits"),
            "{}",
            err.0
        );
        let pin = sha256_hex(b"bytes");
        let err = load("x", dir.path(), "f.so", &pin, PluginPolicy::default()).unwrap_err();
        assert!(
            err.0.contains("the plugin policy does not allow it"),
            "{}",
            err.0
        );
        let told = PluginPolicy {
            allow: false,
            how_to_allow: Some("`--trust`"),
        };
        let err = load("x", dir.path(), "f.so", &pin, told).unwrap_err();
        assert!(err.0.ends_with("allow it with `--trust`"), "{}", err.0);
    }
}
