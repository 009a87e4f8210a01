//! The plugin host: all of the plugin code's `unsafe` (the engine's other `unsafe` is the
//! counting allocator, `alloc.rs`, and `sink/signals.rs`). It opens libraries with
//! `libloading`, checks the ABI version before touching any other symbol, copies a plugin's
//! description into owned values, and runs functions and source readers with callbacks that
//! copy their results. Everything else in the engine sees the safe types of [`super`].
#![expect(
    unsafe_code,
    reason = "the plugin host loads native libraries and calls them through the C ABI"
)]

use std::ffi::c_void;
use std::path::Path;

use grade_plugin::abi::{
    self, AbiVersionFn, DescribeFn, GradeCall, GradeDetectFn, GradeFn, GradeNewEntry, GradeOutput,
    GradeReadFn, GradeSourceOutput, GradeStr,
};

/// Why a library could not be opened as a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OpenError {
    /// The dynamic loader refused it (not a library, another platform or architecture).
    NotLoadable(String),
    NoAbiVersion,
    AbiMismatch {
        found: u32,
    },
    NoDescribe,
    BadDescription(String),
}

/// A plugin's description, copied out of the library.
#[derive(Debug, Clone)]
pub(crate) struct Described {
    pub name: String,
    pub version: String,
    pub functions: Vec<DescribedFunction>,
    pub sources: Vec<DescribedSource>,
}

#[derive(Debug, Clone)]
pub(crate) struct DescribedFunction {
    pub name: String,
    pub kind: u32,
    pub doc: String,
    pub fields: Vec<String>,
    pub call: GradeFn,
}

#[derive(Debug, Clone)]
pub(crate) struct DescribedSource {
    pub name: String,
    pub doc: String,
    pub detect: GradeDetectFn,
    pub read: GradeReadFn,
}

/// Loads a library from `bytes`, the very bytes whose sha256 the caller checked, checks its
/// ABI version and reads its description. The library's own path is never opened again: a
/// file renamed over it after the check cannot be what is loaded. The bytes go to a sealed
/// memory file on Linux (nobody can change it, not even this process), elsewhere, or where
/// the kernel will not map a memory file executable, to a private read-only copy.
///
/// The library is never unloaded: function pointers into it live as long as the process
/// (and `dlclose` is not reliable anyway: musl ignores it).
pub(crate) fn open(bytes: &[u8]) -> Result<Described, OpenError> {
    let library = load_verified(bytes).map_err(OpenError::NotLoadable)?;
    let library: &'static libloading::Library = Box::leak(Box::new(library));
    // SAFETY: `grade_plugin_abi_version` is declared by the ABI as `uint32_t (void)`, which is
    // `AbiVersionFn`. A library that exports the name with another type is not a plugin of
    // any version; the symbol is read before any other, as the ABI promises.
    let version: AbiVersionFn = unsafe { library.get::<AbiVersionFn>(abi::ABI_VERSION_SYMBOL) }
        .map(|symbol| *symbol)
        .map_err(|_| OpenError::NoAbiVersion)?;
    let found = version();
    if found != abi::ABI_VERSION {
        return Err(OpenError::AbiMismatch { found });
    }
    // SAFETY: the version matched, so `grade_plugin_describe` has the type this version of the
    // ABI declares: `const grade_plugin *(void)`.
    let describe: DescribeFn = unsafe { library.get::<DescribeFn>(abi::DESCRIBE_SYMBOL) }
        .map(|symbol| *symbol)
        .map_err(|_| OpenError::NoDescribe)?;
    let described = describe();
    if described.is_null() {
        return Err(OpenError::BadDescription(
            "`grade_plugin_describe` returned null".to_owned(),
        ));
    }
    // SAFETY: the ABI requires the description, and every array and string it points to, to
    // live as long as the library, which is never unloaded; the pointer was checked non-null.
    let plugin = unsafe { &*described };
    let text = |s: GradeStr, what: &str| {
        owned_text(s).ok_or_else(|| OpenError::BadDescription(format!("{what} is not UTF-8 text")))
    };
    let mut functions = Vec::new();
    for (i, f) in table(plugin.functions, plugin.function_count)
        .iter()
        .enumerate()
    {
        // Counted from 1, as a reader of the plugin's table counts.
        let name = text(f.name, &format!("the name of function {}", i + 1))?;
        let fields = table(f.fields, f.field_count)
            .iter()
            .map(|s| text(*s, &format!("a field path of function `{name}`")))
            .collect::<Result<_, _>>()?;
        functions.push(DescribedFunction {
            doc: text(f.doc, &format!("the doc of function `{name}`"))?,
            kind: f.kind,
            fields,
            call: f.call,
            name,
        });
    }
    let mut sources = Vec::new();
    for (i, s) in table(plugin.sources, plugin.source_count)
        .iter()
        .enumerate()
    {
        let name = text(s.name, &format!("the name of source format {}", i + 1))?;
        sources.push(DescribedSource {
            doc: text(s.doc, &format!("the doc of source format `{name}`"))?,
            name,
            detect: s.detect,
            read: s.read,
        });
    }
    Ok(Described {
        name: text(plugin.name, "the plugin name")?,
        version: text(plugin.version, "the plugin version")?,
        functions,
        sources,
    })
}

/// Loads `bytes` as a library, from a file no one else can write.
fn load_verified(bytes: &[u8]) -> Result<libloading::Library, String> {
    #[cfg(target_os = "linux")]
    let first = match sealed::load(bytes) {
        Ok(library) => return Ok(library),
        Err(e) => Some(e),
    };
    #[cfg(not(target_os = "linux"))]
    let first: Option<String> = None;
    // A memory file the kernel refuses to map executable (`vm.memfd_noexec`) fails as any
    // unloadable file does; the private copy tells them apart, and a library neither way
    // loads is reported as the first way saw it.
    private_copy(bytes).map_err(|e| first.unwrap_or(e))
}

/// Loads a library through `path`, a file this process made and no one else can write.
fn dlopen(path: &Path) -> Result<libloading::Library, String> {
    // SAFETY: loading a library runs its initialisers, which is arbitrary native code. That
    // is the risk the user accepted with `--allow-plugins`, after the bytes' sha256 matched
    // the one the pack pins; `path` holds exactly those bytes and no one else can change it
    // (see `load_verified`). Nothing else here depends on what the initialisers do.
    unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())
}

/// A copy of `bytes` in a fresh folder only this user can enter, the file read-only, removed
/// once loaded (the mapping stays).
fn private_copy(bytes: &[u8]) -> Result<libloading::Library, String> {
    use std::io::Write as _;
    let dir = tempfile::Builder::new()
        .prefix("grade-plugin-")
        .tempdir()
        .map_err(|e| format!("cannot make a private copy to load: {e}"))?;
    let path = dir
        .path()
        .join(format!("plugin{}", std::env::consts::DLL_SUFFIX));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o500);
    let mut file = options
        .open(&path)
        .and_then(|mut f| f.write_all(bytes).map(|()| f))
        .map_err(|e| format!("cannot make a private copy to load: {e}"))?;
    file.flush().map_err(|e| e.to_string())?;
    drop(file);
    dlopen(&path)
}

#[cfg(target_os = "linux")]
mod sealed {
    use std::io::Write as _;

    use rustix::fs::{fcntl_add_seals, memfd_create, MemfdFlags, SealFlags};

    /// `bytes` in a memory file sealed against every change, loaded through
    /// `/proc/self/fd/N`. The descriptor stays open for the life of the process: the loader
    /// knows a library by the name it was opened with, and the number of a closed descriptor
    /// would come back for the next plugin, which would then be taken for this one.
    pub(super) fn load(bytes: &[u8]) -> Result<libloading::Library, String> {
        let flags = MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING;
        // Kernels since 6.3 may make memory files non-executable unless asked; older ones
        // refuse the flag.
        let fd = memfd_create("grade-plugin", flags | MemfdFlags::EXEC)
            .or_else(|_| memfd_create("grade-plugin", flags))
            .map_err(|e| format!("cannot make a sealed copy to load: {e}"))?;
        let mut file = std::fs::File::from(fd);
        file.write_all(bytes)
            .map_err(|e| format!("cannot make a sealed copy to load: {e}"))?;
        fcntl_add_seals(
            &file,
            SealFlags::WRITE | SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL,
        )
        .map_err(|e| format!("cannot seal the copy to load: {e}"))?;
        let path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file));
        let library = super::dlopen(std::path::Path::new(&path))?;
        std::mem::forget(file);
        Ok(library)
    }
}

/// An array the library keeps alive (see [`open`]).
fn table<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
    if ptr.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: the ABI requires `ptr` to point at `len` initialised values living as long as
    // the library, which is never unloaded.
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

/// Bytes a plugin lends for the duration of a call (or of the library's life).
fn lent<'a>(s: GradeStr) -> &'a [u8] {
    table(s.ptr, s.len)
}

fn owned_text(s: GradeStr) -> Option<String> {
    std::str::from_utf8(lent(s)).ok().map(str::to_owned)
}

/// The most evidence texts and flags one call may hand back: a rule's evidence is read by
/// people, and every text is kept with the session's result and written out.
pub(crate) const MAX_RETURNED_TEXTS: usize = 10_000;

/// The most bytes of text (evidence, flags, the reason it failed) one call may hand back.
pub(crate) const MAX_RETURNED_BYTES: usize = 4 << 20;

/// What a function handed back, copied.
#[derive(Debug, Default)]
pub(crate) struct Returned {
    pub value: Option<f64>,
    pub evidence: Vec<String>,
    pub flags: Vec<String>,
    pub entries: Vec<u64>,
    pub error: Option<String>,
    /// The first text that was not UTF-8, as what it was meant to be (`evidence`): the call
    /// fails with it, since replacing the bytes would put words in the plugin's mouth.
    pub not_utf8: Option<&'static str>,
    /// Why the call fails whatever its status: it gave more than a call may, or a text of a
    /// kind the ABI does not define. Nothing more is copied once it is set.
    pub refused: Option<String>,
    /// Bytes of text handed back so far.
    bytes: usize,
    /// The most entry positions the call may name.
    entry_cap: usize,
}

extern "C" fn put_value(host: *mut c_void, value: f64) {
    with_returned(host, |r| r.value = Some(value));
}

extern "C" fn put_text(host: *mut c_void, kind: u32, text: GradeStr) {
    with_returned(host, |r| {
        if r.refused.is_some() {
            return;
        }
        let what = match kind {
            abi::TEXT_EVIDENCE => "evidence",
            abi::TEXT_FLAG => "a flag",
            abi::TEXT_ERROR => "the reason it failed",
            other => {
                r.refused = Some(format!(
                    "it gave a text of kind {other}, which plugin ABI version {} does not define ({} is evidence, {} a flag, {} the reason it failed)",
                    abi::ABI_VERSION,
                    abi::TEXT_EVIDENCE,
                    abi::TEXT_FLAG,
                    abi::TEXT_ERROR
                ));
                return;
            }
        };
        // Counted before the text is copied, so a refused call holds no more than the cap.
        if kind != abi::TEXT_ERROR && r.evidence.len() + r.flags.len() >= MAX_RETURNED_TEXTS {
            r.refused = Some(format!(
                "it gave more than {MAX_RETURNED_TEXTS} evidence texts and flags (the most one plugin call may return)"
            ));
            return;
        }
        r.bytes = r.bytes.saturating_add(text.len);
        if r.bytes > MAX_RETURNED_BYTES {
            r.refused = Some(format!(
                "it gave more than {} MiB of evidence, flags and reasons (the most one plugin call may return)",
                MAX_RETURNED_BYTES >> 20
            ));
            return;
        }
        let Some(text) = owned_text(text) else {
            r.not_utf8.get_or_insert(what);
            return;
        };
        match kind {
            abi::TEXT_EVIDENCE => r.evidence.push(text),
            abi::TEXT_FLAG => r.flags.push(text),
            _ => r.error = Some(text),
        }
    });
}

extern "C" fn put_entry(host: *mut c_void, index: u64) {
    with_returned(host, |r| {
        if r.refused.is_some() {
            return;
        }
        if r.entries.len() >= r.entry_cap {
            r.refused = Some(format!(
                "it named more than {} entries (the session's entries and {MAX_RETURNED_TEXTS} more, the most one plugin call may name)",
                r.entry_cap
            ));
            return;
        }
        r.entries.push(index);
    });
}

fn with_returned(host: *mut c_void, f: impl FnOnce(&mut Returned)) {
    if host.is_null() {
        return;
    }
    // SAFETY: `host` is the `&mut Returned` that `call` put in the output; the plugin passes
    // it back only while that call runs, on the thread that made it, and no other reference
    // to it is live meanwhile.
    f(unsafe { &mut *host.cast::<Returned>() });
}

/// Runs a function on a call the caller built from live slices.
pub(crate) fn call(function: GradeFn, input: &GradeCall) -> Result<Returned, String> {
    let mut returned = Returned {
        entry_cap: input.entry_count.saturating_add(MAX_RETURNED_TEXTS),
        ..Returned::default()
    };
    let output = GradeOutput {
        host: (&mut returned as *mut Returned).cast(),
        value: put_value,
        text: put_text,
        entry: put_entry,
    };
    let status = function(input, &output);
    if let Some(refused) = returned.refused {
        return Err(refused);
    }
    if let Some(what) = returned.not_utf8 {
        return Err(format!(
            "it gave {what} that is not UTF-8 text (the plugin ABI passes UTF-8 only)"
        ));
    }
    if status == abi::STATUS_OK {
        Ok(returned)
    } else {
        Err(returned
            .error
            .unwrap_or_else(|| format!("it failed with status {status} and gave no reason")))
    }
}

/// An entry a source plugin read, copied.
#[derive(Debug, Clone)]
pub(crate) struct ReadEntry {
    pub session_id: String,
    pub timestamp: String,
    pub domain: String,
    pub operation: String,
    pub success: bool,
    pub exit_code: i64,
    pub duration_ms: f64,
    pub error: Option<String>,
    pub params_json: String,
    pub metadata_json: String,
}

/// What a source plugin read, and how the host judged each entry as it came.
pub(crate) struct Reading<'a> {
    pub accept: &'a mut dyn FnMut(ReadEntry) -> Result<(), String>,
    pub warnings: Vec<(u64, String)>,
    pub error: Option<(u64, String)>,
}

extern "C" fn take_entry(host: *mut c_void, entry: *const GradeNewEntry) -> i32 {
    if host.is_null() || entry.is_null() {
        return abi::STATUS_ERROR;
    }
    // SAFETY: `entry` points at a `GradeNewEntry` the plugin keeps alive for this call.
    let e = unsafe { &*entry };
    // SAFETY: `host` is the `&mut Reading` that `read` put in the output, passed back only
    // during that call, on its thread, with no other reference live.
    let reading = unsafe { &mut *host.cast::<Reading<'_>>() };
    let read = match read_entry(e) {
        Ok(read) => read,
        Err(field) => {
            reading.error.get_or_insert((
                e.line,
                format!(
                    "the entry's `{field}` is not UTF-8 text (the plugin ABI passes UTF-8 only)"
                ),
            ));
            return abi::STATUS_ERROR;
        }
    };
    match (reading.accept)(read) {
        Ok(()) => abi::STATUS_OK,
        Err(message) => {
            reading.error.get_or_insert((e.line, message));
            abi::STATUS_ERROR
        }
    }
}

/// An entry's texts copied, or the name of the first field that is not UTF-8.
fn read_entry(e: &GradeNewEntry) -> Result<ReadEntry, &'static str> {
    let text = |s: GradeStr, field: &'static str| owned_text(s).ok_or(field);
    Ok(ReadEntry {
        session_id: text(e.session_id, "session_id")?,
        timestamp: text(e.timestamp, "timestamp")?,
        domain: text(e.domain, "domain")?,
        operation: text(e.operation, "operation")?,
        success: e.success != 0,
        exit_code: e.exit_code,
        duration_ms: e.duration_ms,
        error: if e.error.ptr.is_null() {
            None
        } else {
            Some(text(e.error, "error")?)
        },
        params_json: text(e.params_json, "params_json")?,
        metadata_json: text(e.metadata_json, "metadata_json")?,
    })
}

extern "C" fn take_warning(host: *mut c_void, line: u64, message: GradeStr) {
    if host.is_null() {
        return;
    }
    let message = owned_text(message);
    // SAFETY: as in `take_entry`.
    let reading = unsafe { &mut *host.cast::<Reading<'_>>() };
    match message {
        Some(message) => reading.warnings.push((line, message)),
        None => {
            reading.error.get_or_insert((
                line,
                "it gave a warning that is not UTF-8 text (the plugin ABI passes UTF-8 only)"
                    .to_owned(),
            ));
        }
    }
}

extern "C" fn take_error(host: *mut c_void, line: u64, message: GradeStr) {
    if host.is_null() {
        return;
    }
    let message = owned_text(message).unwrap_or_else(|| {
        "it failed, and gave a reason that is not UTF-8 text (the plugin ABI passes UTF-8 only)"
            .to_owned()
    });
    // SAFETY: as in `take_entry`.
    let reading = unsafe { &mut *host.cast::<Reading<'_>>() };
    // The first error is the cause; a refusal by the host came before the plugin's report of it.
    reading.error.get_or_insert((line, message));
}

/// Runs a source reader over a file's content.
pub(crate) fn read(reader: GradeReadFn, path: &str, content: &[u8], reading: &mut Reading<'_>) {
    let output = GradeSourceOutput {
        host: (reading as *mut Reading<'_>).cast(),
        entry: take_entry,
        warning: take_warning,
        error: take_error,
    };
    let status = reader(GradeStr::new(path), GradeStr::bytes(content), &output);
    if status != abi::STATUS_OK && reading.error.is_none() {
        reading.error = Some((
            0,
            format!("it failed with status {status} and gave no reason"),
        ));
    }
}

/// Asks a source whether a file's first bytes are its format.
pub(crate) fn detect(detect: GradeDetectFn, head: &[u8]) -> bool {
    detect(GradeStr::bytes(head)) != 0
}
