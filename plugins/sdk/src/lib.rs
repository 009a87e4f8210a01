//! `grade-plugin`: write native plugins for `grade` in safe Rust.
//!
//! A plugin is a `cdylib` crate. Its functions take a [`Session`] and return what they decide;
//! the [`plugin!`] macro exports them through the C ABI (`abi`, `plugins/grade_plugin.h`), so
//! the author writes no `unsafe`:
//!
//! ```
//! use grade_plugin::{plugin, Session};
//!
//! /// Failed shell commands, as a metric.
//! fn failed_commands(session: &Session) -> f64 {
//!     session
//!         .entries()
//!         .filter(|e| e.operation() == "Bash" && !e.success())
//!         .count() as f64
//! }
//!
//! /// Whether any command wrote to `/etc`, as a condition.
//! fn touches_etc(session: &Session) -> bool {
//!     session
//!         .entries()
//!         .any(|e| e.field("params.command").as_str().is_some_and(|c| c.contains("/etc/")))
//! }
//!
//! plugin! {
//!     name: "demo",
//!     version: "0.1.0",
//!     functions: [
//!         { name: "failed_commands", doc: "how many shell commands failed", reads: [], call: failed_commands },
//!         { name: "touches_etc", doc: "a command names /etc", reads: ["params.command"], call: touches_etc },
//!     ],
//! }
//! ```
//!
//! What a function returns says what it is: `bool` a condition, `f64` or `Option<f64>` a
//! metric (`None`: undefined), [`Outcome`] or `Option<Outcome>` a rule; each may be wrapped in
//! `Result<_, E: Display>`, whose error fails the session it was graded for, naming the
//! plugin and the function. A panic does the same: it is caught before it reaches the
//! host. A source reader implements [`Source`].

pub mod abi;
#[doc(hidden)]
pub mod ffi;
pub mod shell;

use std::fmt::Display;

pub use serde_json;

/// One session, as a function sees it: its entries in order, and the fields it declared.
pub struct Session<'a> {
    id: &'a str,
    entries: &'a [abi::GradeEntry],
    fields: &'a [abi::GradeValue],
    names: &'static [&'static str],
    current: Option<usize>,
    score: f64,
}

impl<'a> Session<'a> {
    /// The session's id.
    pub fn id(&self) -> &'a str {
        self.id
    }

    /// How many entries the session has.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in session order.
    pub fn entries(&self) -> impl DoubleEndedIterator<Item = Entry<'a>> + ExactSizeIterator + '_ {
        (0..self.entries.len()).map(move |i| self.at(i))
    }

    /// The entry at `index` (0-based), if there is one.
    pub fn entry(&self, index: usize) -> Option<Entry<'a>> {
        (index < self.entries.len()).then(|| self.at(index))
    }

    /// In a `for_each` rule, the entry being judged; `None` for a rule over the session.
    pub fn current(&self) -> Option<Entry<'a>> {
        self.current.and_then(|i| self.entry(i))
    }

    /// The dimension's running score before this rule.
    pub fn score(&self) -> f64 {
        self.score
    }

    fn at(&self, index: usize) -> Entry<'a> {
        let width = self.names.len();
        Entry {
            index,
            raw: &self.entries[index],
            fields: self
                .fields
                .get(index * width..(index + 1) * width)
                .unwrap_or(&[]),
            names: self.names,
        }
    }
}

/// One audit entry (see `docs/sources.md` for what each source puts in it).
#[derive(Clone, Copy)]
pub struct Entry<'a> {
    index: usize,
    raw: &'a abi::GradeEntry,
    fields: &'a [abi::GradeValue],
    names: &'static [&'static str],
}

impl<'a> Entry<'a> {
    /// The entry's 0-based position in its session; what [`Outcome::entries`] takes.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The timestamp as the source spelled it.
    pub fn timestamp(&self) -> &'a str {
        ffi::text(self.raw.timestamp)
    }

    /// Milliseconds since the Unix epoch.
    pub fn instant_ms(&self) -> i64 {
        self.raw.instant_ms
    }

    pub fn domain(&self) -> &'a str {
        ffi::text(self.raw.domain)
    }

    pub fn operation(&self) -> &'a str {
        ffi::text(self.raw.operation)
    }

    pub fn success(&self) -> bool {
        self.raw.success != 0
    }

    pub fn exit_code(&self) -> i64 {
        self.raw.exit_code
    }

    /// Milliseconds.
    pub fn duration_ms(&self) -> f64 {
        self.raw.duration_ms
    }

    pub fn error(&self) -> Option<&'a str> {
        (!self.raw.error.ptr.is_null()).then(|| ffi::text(self.raw.error))
    }

    /// A field the function declared in `reads` (`params.command`, `metadata.cwd`, …).
    ///
    /// # Panics
    /// When `path` is not declared: the host resolves only declared fields. The panic is
    /// caught at the boundary and fails the call with this message.
    #[expect(
        clippy::panic,
        reason = "an undeclared field is the author's bug; the boundary catches the panic and fails the call with this message"
    )]
    pub fn field(&self, path: &str) -> Value<'a> {
        match self.names.iter().position(|n| *n == path) {
            Some(i) => self
                .fields
                .get(i)
                .map_or(Value::Missing, |v| ffi::value(*v)),
            None => panic!(
                "field `{path}` is not declared in the function's `reads` (declared: {})",
                self.names.join(", ")
            ),
        }
    }
}

/// A field's value in one entry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// Absent, or JSON `null`.
    Missing,
    Bool(bool),
    Number(f64),
    Str(&'a str),
    /// An object or array, as JSON text.
    Json(&'a str),
}

impl<'a> Value<'a> {
    pub fn as_str(self) -> Option<&'a str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_f64(self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    pub fn as_bool(self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    pub fn is_missing(self) -> bool {
        matches!(self, Value::Missing)
    }
}

/// What a rule function decided: points added to the dimension, evidence and flags to
/// report, and the entries behind them (`--explain` lists these).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    pub points: f64,
    pub evidence: Vec<String>,
    pub flags: Vec<String>,
    /// 0-based entry indices ([`Entry::index`]).
    pub entries: Vec<usize>,
}

/// What a function may return; its type decides whether it is a rule, a condition or a metric.
pub trait FunctionResult {
    /// `abi::KIND_RULE`, `abi::KIND_CONDITION` or `abi::KIND_METRIC`.
    const KIND: u32;
    #[doc(hidden)]
    fn deliver(self, out: &ffi::Output<'_>) -> Result<(), String>;
}

impl FunctionResult for bool {
    const KIND: u32 = abi::KIND_CONDITION;
    fn deliver(self, out: &ffi::Output<'_>) -> Result<(), String> {
        if self {
            out.value(1.0);
        }
        Ok(())
    }
}

impl FunctionResult for f64 {
    const KIND: u32 = abi::KIND_METRIC;
    fn deliver(self, out: &ffi::Output<'_>) -> Result<(), String> {
        out.value(self);
        Ok(())
    }
}

impl FunctionResult for Option<f64> {
    const KIND: u32 = abi::KIND_METRIC;
    fn deliver(self, out: &ffi::Output<'_>) -> Result<(), String> {
        if let Some(v) = self {
            out.value(v);
        }
        Ok(())
    }
}

impl FunctionResult for Outcome {
    const KIND: u32 = abi::KIND_RULE;
    fn deliver(self, out: &ffi::Output<'_>) -> Result<(), String> {
        out.value(self.points);
        for text in &self.evidence {
            out.text(abi::TEXT_EVIDENCE, text);
        }
        for text in &self.flags {
            out.text(abi::TEXT_FLAG, text);
        }
        for &index in &self.entries {
            out.entry(index as u64);
        }
        Ok(())
    }
}

impl FunctionResult for Option<Outcome> {
    const KIND: u32 = abi::KIND_RULE;
    fn deliver(self, out: &ffi::Output<'_>) -> Result<(), String> {
        self.map_or(Ok(()), |o| o.deliver(out))
    }
}

impl<T: FunctionResult, E: Display> FunctionResult for Result<T, E> {
    const KIND: u32 = T::KIND;
    fn deliver(self, out: &ffi::Output<'_>) -> Result<(), String> {
        match self {
            Ok(value) => value.deliver(out),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// A source format: tells its files apart from others and reads them into entries.
pub trait Source {
    /// Whether the first bytes of a file (up to 64 KiB) are this format. Keep it strict:
    /// detection asks the built-in formats first and then each plugin in declaration order.
    fn detect(head: &[u8]) -> bool;

    /// Reads a whole file into `out`. `path` is for messages; the content is `content`.
    fn read(path: &str, content: &[u8], out: &mut Sink<'_>) -> Result<(), SourceError>;
}

/// An entry a source read. `params` and `metadata` are JSON objects (`Value::Null` for none).
#[derive(Debug, Clone, PartialEq)]
pub struct NewEntry {
    pub session_id: String,
    /// RFC 3339 (`2025-12-08T00:37:46.102Z`).
    pub timestamp: String,
    pub domain: String,
    pub operation: String,
    pub success: bool,
    pub exit_code: i64,
    pub duration_ms: f64,
    pub error: Option<String>,
    pub params: serde_json::Value,
    pub metadata: serde_json::Value,
    /// The 1-based line (or record) it came from, for messages; 0 when unknown.
    pub line: u64,
}

/// Why a source could not be read, at a 1-based line (0: the file as a whole).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceError {
    pub line: u64,
    pub message: String,
}

impl SourceError {
    pub fn at(line: u64, message: impl Into<String>) -> SourceError {
        SourceError {
            line,
            message: message.into(),
        }
    }
}

/// Where a source puts what it read.
pub struct Sink<'a> {
    out: &'a abi::GradeSourceOutput,
}

impl Sink<'_> {
    /// Hands an entry to the host, which copies it. An error means the host refused it (a
    /// timestamp it cannot read, params that are not an object): stop reading and return it.
    pub fn entry(&mut self, entry: &NewEntry) -> Result<(), SourceError> {
        let params = json_object_text(&entry.params);
        let metadata = json_object_text(&entry.metadata);
        let raw = abi::GradeNewEntry {
            session_id: abi::GradeStr::new(&entry.session_id),
            timestamp: abi::GradeStr::new(&entry.timestamp),
            domain: abi::GradeStr::new(&entry.domain),
            operation: abi::GradeStr::new(&entry.operation),
            success: u32::from(entry.success),
            exit_code: entry.exit_code,
            duration_ms: entry.duration_ms,
            error: entry
                .error
                .as_deref()
                .map_or(abi::GradeStr::EMPTY, abi::GradeStr::new),
            params_json: abi::GradeStr::new(&params),
            metadata_json: abi::GradeStr::new(&metadata),
            line: entry.line,
        };
        if (self.out.entry)(self.out.host, &raw) == abi::STATUS_OK {
            Ok(())
        } else {
            // The host recorded why; the reader only has to stop.
            Err(SourceError::at(entry.line, "the host refused the entry"))
        }
    }

    /// Something skipped or guessed; reading goes on.
    pub fn warning(&mut self, line: u64, message: &str) {
        (self.out.warning)(self.out.host, line, abi::GradeStr::new(message));
    }
}

fn json_object_text(value: &serde_json::Value) -> String {
    if value.is_null() {
        String::new()
    } else {
        value.to_string()
    }
}

/// Exports a plugin's functions and sources through the C ABI.
///
/// ```ignore
/// grade_plugin::plugin! {
///     name: "shell",
///     version: env!("CARGO_PKG_VERSION"),
///     functions: [
///         { name: "near_repeat", doc: "…", reads: ["params.command"], call: near_repeat },
///     ],
///     sources: [
///         { name: "aider-history", doc: "…", reader: AiderHistory },
///     ],
/// }
/// ```
/// `functions` and `sources` may each be left out. A function is `fn(&Session) -> R` with
/// `R: FunctionResult`; a reader is a type implementing [`Source`].
#[macro_export]
macro_rules! plugin {
    (
        name: $name:expr,
        version: $version:expr,
        functions: [ $( { name: $fname:expr, doc: $fdoc:expr, reads: [ $( $field:expr ),* $(,)? ], call: $call:path $(,)? } ),* $(,)? ],
        sources: [ $( { name: $sname:expr, doc: $sdoc:expr, reader: $reader:ty $(,)? } ),* $(,)? ] $(,)?
    ) => {
        #[allow(unsafe_code, reason = "a C ABI entry point: `no_mangle` and raw pointers from the host")]
        #[no_mangle]
        pub extern "C" fn grade_plugin_abi_version() -> u32 {
            $crate::abi::ABI_VERSION
        }

        #[allow(unsafe_code, reason = "a C ABI entry point: `no_mangle` and raw pointers from the host")]
        #[no_mangle]
        pub extern "C" fn grade_plugin_describe() -> *const $crate::abi::GradePlugin {
            static DESCRIBED: ::std::sync::OnceLock<$crate::ffi::Described> =
                ::std::sync::OnceLock::new();
            DESCRIBED
                .get_or_init(|| {
                    $crate::ffi::Described::new(
                        $name,
                        $version,
                        vec![ $( {
                            const READS: &[&str] = &[ $( $field ),* ];
                            #[allow(unsafe_code, reason = "a C ABI entry point: `no_mangle` and raw pointers from the host")]
                            extern "C" fn call(
                                call: *const $crate::abi::GradeCall,
                                out: *const $crate::abi::GradeOutput,
                            ) -> i32 {
                                // SAFETY: the host calls this entry point as the ABI says:
                                // with a call and an output valid for the whole call.
                                unsafe { $crate::ffi::call(call, out, READS, $call) }
                            }
                            $crate::ffi::function($fname, $fdoc, READS, $crate::ffi::kind_of(&$call), call)
                        } ),* ],
                        vec![ $( {
                            extern "C" fn detect(head: $crate::abi::GradeStr) -> u32 {
                                $crate::ffi::detect::<$reader>(head)
                            }
                            #[allow(unsafe_code, reason = "a C ABI entry point: `no_mangle` and raw pointers from the host")]
                            extern "C" fn read(
                                path: $crate::abi::GradeStr,
                                content: $crate::abi::GradeStr,
                                out: *const $crate::abi::GradeSourceOutput,
                            ) -> i32 {
                                // SAFETY: the host calls this entry point as the ABI says:
                                // with content and an output valid for the whole call.
                                unsafe { $crate::ffi::read::<$reader>(path, content, out) }
                            }
                            $crate::ffi::source($sname, $sdoc, detect, read)
                        } ),* ],
                    )
                })
                .as_ptr()
        }
    };
    (
        name: $name:expr,
        version: $version:expr,
        functions: [ $( $functions:tt )* ] $(,)?
    ) => {
        $crate::plugin! { name: $name, version: $version, functions: [ $( $functions )* ], sources: [], }
    };
    (
        name: $name:expr,
        version: $version:expr,
        sources: [ $( $sources:tt )* ] $(,)?
    ) => {
        $crate::plugin! { name: $name, version: $version, functions: [], sources: [ $( $sources )* ], }
    };
}
