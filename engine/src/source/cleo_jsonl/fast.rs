//! The shape nearly every CLEO audit line has, read without serde's generic machinery.
//!
//! A CLEO log line is a flat object: short strings without escapes, a `result` of a boolean
//! and integers, `params` and `metadata` of scalars. [`read`] reads exactly such lines, byte
//! by byte, into the [`RawEntry`] serde builds from them, and declines (`None`) every line
//! outside that shape (an escape, a fraction, a nested value, a key it does not expect, a
//! repeated field, anything malformed), which serde then reads, and names the errors of, as
//! before (a repeated field keeping its last value, see [`super::repeated`]). Declining is always safe; what is read must be what serde reads, which the tests
//! below check on generated lines, and the `cleo_line` fuzz target on any bytes.
//!
//! Why: serde_json's typed reading was about 40% of the CPU time of grading a log, and a
//! parsed line is the entry the rest of the run works on, so there is no tree to skip.

use serde_json::{Number, Value};

use super::super::lenient::{Duration, ExitCode, FromJson as _, Lenient};
use super::raw::{MetadataSlots, RawEntry, RawMetadata, RawOutcome};
use crate::entry::{MetaValue, Params, Text};
use crate::field::{FieldsRead, Projection};
use crate::json::special_byte;

/// How deep a skipped value may nest before the line is left to serde: well within
/// serde_json's recursion limit of 128 levels, so that the skim never takes a line serde
/// would stop in.
const SKIP_DEPTH: u32 = 48;

/// How many digits a skipped number's integer part may have before the line is left to
/// serde: serde_json refuses a number beyond a float's range (about 1.8e308).
const SKIP_DIGITS: usize = 300;

/// The line's entry as serde would read it, or `None` to leave the line to serde.
#[cfg(any(test, feature = "fuzzing"))]
pub(super) fn read(line: &str) -> Option<RawEntry> {
    read_kept(line, Kept::ALL)
}

/// What of a line [`read_kept`] builds; the rest it skips, checking that it is JSON, without
/// building it. `result.exitCode` and `metadata` are always built: the first costs nothing
/// to read, and the second names where an entry came from (`toolUseId`) and where its
/// scores go (`traceId`), which outputs read beside the packs.
#[derive(Clone, Copy)]
pub(in crate::source) struct Kept<'k> {
    duration: bool,
    error: bool,
    params: KeptParams<'k>,
}

#[derive(Clone, Copy)]
pub(in crate::source) enum KeptParams<'k> {
    All,
    /// These first-level keys only (whose values must be scalars, or the line is left to
    /// serde as before).
    Keys(&'k [String]),
    Skipped,
}

impl<'k> Kept<'k> {
    /// Every field.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(super) const ALL: Kept<'static> = Kept {
        duration: true,
        error: true,
        params: KeptParams::All,
    };

    /// What `kept` keeps, and what `checked` checks the type of (which must be read to be
    /// refused when it is of the wrong type).
    pub(in crate::source) fn new(kept: &'k Projection, checked: FieldsRead) -> Kept<'k> {
        let fields = kept.fields().with(checked);
        Kept {
            duration: fields.contains(FieldsRead::DURATION),
            error: fields.contains(FieldsRead::ERROR),
            params: match kept.params_keys() {
                _ if !fields.contains(FieldsRead::PARAMS) => KeptParams::Skipped,
                Some(keys) => KeptParams::Keys(keys),
                None => KeptParams::All,
            },
        }
    }

    /// Whether `result.duration` is built.
    pub(in crate::source) fn duration(self) -> bool {
        self.duration
    }

    /// Whether `error` is built.
    pub(in crate::source) fn error(self) -> bool {
        self.error
    }

    /// What of `params` is built.
    pub(in crate::source) fn params(self) -> KeptParams<'k> {
        self.params
    }
}

/// The line's entry as serde would read it, with only what `kept` keeps of it (the rest
/// `null`), or `None` to leave the line to serde.
// Inlined into `parse_line_kept` so the entry is built where it is used, not copied out of a
// returned value (2–3% of a run over the bench log, alternated).
#[inline(always)]
pub(super) fn read_kept(line: &str, kept: Kept<'_>) -> Option<RawEntry> {
    let mut c = Cursor { text: line, at: 0 };
    let mut timestamp = None;
    let mut session_id = None;
    let mut domain = None;
    let mut operation = None;
    let mut params = None;
    let mut result = None;
    let mut metadata = None;
    let mut error = None;
    c.object(ENTRY_FIELDS, |c, key| {
        // A repeated field is left to serde's reading, which keeps the last value of it
        // (`super::repeated`): `once` declines it.
        let Key::Known(field) = key else {
            return None;
        };
        match field {
            Field::Timestamp => once(&mut timestamp, c.text()?),
            Field::SessionId => once(&mut session_id, c.text()?),
            Field::Domain => once(&mut domain, c.text()?),
            Field::Operation => once(&mut operation, c.text()?),
            Field::Params => {
                let value = match kept.params {
                    KeptParams::All => c.params()?,
                    KeptParams::Keys(keys) => c.params_keeping(keys)?,
                    KeptParams::Skipped => c.skipped()?,
                };
                once(&mut params, value)
            }
            Field::Result => once(&mut result, c.outcome(kept.duration)?),
            Field::Metadata => once(&mut metadata, c.metadata()?),
            Field::Error if kept.error => once(&mut error, c.error()?),
            Field::Error => once(&mut error, c.skipped()?),
        }
    })?;
    c.skip_whitespace();
    if c.at != line.len() {
        return None;
    }
    Some(RawEntry {
        timestamp: timestamp?,
        session_id: session_id?,
        domain: domain?,
        operation: operation?,
        params: params.unwrap_or_default(),
        result: result?,
        metadata: metadata.unwrap_or_default(),
        error: error.unwrap_or_default(),
    })
}

/// A JSON document that is a params object, or `null` (no params), as serde reads it into
/// `Option<Params>`; `None` to leave it to serde. What `tasks.db` keeps in `details_json`.
/// With `keys`, only those keys are built, and the other values skipped as a line's are
/// (checked as JSON, and declined where the skim does not vouch for them).
pub(crate) fn params_document(text: &str, keys: Option<&[String]>) -> Option<Params> {
    let mut c = Cursor { text, at: 0 };
    let params = match keys {
        None => c.params()?,
        Some(keys) => c.params_keeping(keys)?,
    };
    c.skip_whitespace();
    if c.at != text.len() {
        return None;
    }
    match params {
        Lenient::Value(params) => Some(params),
        Lenient::Null => Some(Params::new()),
        Lenient::Wrong(_) => None,
    }
}

fn once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    match slot {
        Some(_) => None,
        None => {
            *slot = Some(value);
            Some(())
        }
    }
}

/// The fields of an entry.
#[derive(Clone, Copy)]
enum Field {
    Timestamp,
    SessionId,
    Domain,
    Operation,
    Params,
    Result,
    Metadata,
    Error,
}

/// The keys of an entry, of its `result` and of its `metadata`, in the order CLEO writes
/// them: what [`Cursor::key`] matches first.
const ENTRY_FIELDS: &[(KeyName, Field)] = &[
    (KeyName::new("timestamp"), Field::Timestamp),
    (KeyName::new("sessionId"), Field::SessionId),
    (KeyName::new("domain"), Field::Domain),
    (KeyName::new("operation"), Field::Operation),
    (KeyName::new("params"), Field::Params),
    (KeyName::new("result"), Field::Result),
    (KeyName::new("metadata"), Field::Metadata),
    (KeyName::new("error"), Field::Error),
];

#[derive(Clone, Copy)]
enum OutcomeField {
    Success,
    ExitCode,
    Duration,
}

const OUTCOME_FIELDS: &[(KeyName, OutcomeField)] = &[
    (KeyName::new("success"), OutcomeField::Success),
    (KeyName::new("exitCode"), OutcomeField::ExitCode),
    (KeyName::new("duration"), OutcomeField::Duration),
];

/// Each metadata key CLEO defines, and the key again for [`MetadataSlots::slot`].
const METADATA_KEYS: &[(KeyName, &str)] = &[
    KeyName::named("source"),
    KeyName::named("gateway"),
    KeyName::named("taskId"),
    KeyName::named("userId"),
    KeyName::named("role"),
];

/// A key the reader knows, with itself and its closing quote as two little-endian words and
/// their masks: compared with a line's next sixteen bytes in two steps, without a call to
/// `memcmp` (which the slices' comparison made, 4% of a run).
#[derive(Clone, Copy)]
struct KeyName {
    name: &'static str,
    words: [u64; 2],
    masks: [u64; 2],
}

impl KeyName {
    const fn new(name: &'static str) -> KeyName {
        let bytes = name.as_bytes();
        let mut words = [0; 2];
        let mut masks = [0; 2];
        // A name of 16 bytes or more has no room for its quote in the words: its masks stay
        // 0 and `starts` never takes it, leaving it to the scan.
        if bytes.len() < 16 {
            let mut i = 0;
            while i <= bytes.len() {
                let byte = if i < bytes.len() { bytes[i] } else { b'"' };
                words[i / 8] |= (byte as u64) << (8 * (i % 8));
                masks[i / 8] |= 0xff << (8 * (i % 8));
                i += 1;
            }
        }
        KeyName { name, words, masks }
    }

    /// A key whose reader is given the key itself.
    const fn named(name: &'static str) -> (KeyName, &'static str) {
        (KeyName::new(name), name)
    }

    /// Whether `rest` starts with the name and its closing quote.
    #[inline(always)]
    fn starts(&self, rest: &[u8]) -> bool {
        if self.masks[0] == 0 {
            return false;
        }
        let Some(sixteen) = rest.get(..16) else {
            // Near the end of a line.
            return rest
                .strip_prefix(self.name.as_bytes())
                .is_some_and(|after| after.first() == Some(&b'"'));
        };
        let mut low = [0; 8];
        let mut high = [0; 8];
        low.copy_from_slice(&sixteen[..8]);
        high.copy_from_slice(&sixteen[8..]);
        let differ = (u64::from_le_bytes(low) ^ self.words[0]) & self.masks[0]
            | (u64::from_le_bytes(high) ^ self.words[1]) & self.masks[1];
        differ == 0
    }
}

/// An object's key: one the reader knows, or another as written.
#[derive(Clone, Copy)]
enum Key<'a, K> {
    Known(K),
    Other(&'a str),
}

/// A value of `params` or `metadata` this reader takes.
enum Scalar<'a> {
    Str(&'a str),
    Number(Number),
    Bool(bool),
    Null,
}

impl Scalar<'_> {
    fn into_value(self) -> Value {
        match self {
            Scalar::Str(s) => Value::String(s.to_owned()),
            Scalar::Number(n) => Value::Number(n),
            Scalar::Bool(b) => Value::Bool(b),
            Scalar::Null => Value::Null,
        }
    }

    /// As [`MetaValue`]'s own reading makes it.
    fn into_meta(self) -> MetaValue {
        match self {
            Scalar::Str(s) => MetaValue::Text(s.into()),
            other => MetaValue::Json(Box::new(other.into_value())),
        }
    }
}

struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// JSON's whitespace, which is not Rust's (no form feed).
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// The next byte after whitespace, consumed.
    fn next(&mut self) -> Option<u8> {
        self.skip_whitespace();
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn literal(&mut self, word: &str) -> Option<()> {
        let rest = self.text.as_bytes().get(self.at..)?;
        rest.starts_with(word.as_bytes())
            .then(|| self.at += word.len())
    }

    /// An object's key. `expected` are the keys the object's reader knows, in the order
    /// they are usually written; one of those from `*next` on is matched in place, without
    /// a scan for its end and without comparing it with each (the keys were a third of the
    /// strings this reader scanned, and matching them by name was as costly again).
    #[inline(always)]
    fn key<K: Copy>(&mut self, expected: &[(KeyName, K)], next: &mut usize) -> Option<Key<'a, K>> {
        self.skip_whitespace();
        let rest = self.text.as_bytes().get(self.at..)?;
        if let Some((b'"', rest)) = rest.split_first() {
            for (j, &(want, known)) in expected.iter().enumerate().skip(*next) {
                if want.starts(rest) {
                    // The name has no quote, backslash or control character: it is the key
                    // `string` would read.
                    self.at += want.name.len() + 2;
                    *next = j + 1;
                    return Some(Key::Known(known));
                }
            }
        }
        let key = self.string()?;
        Some(match expected.iter().find(|(want, _)| want.name == key) {
            Some(&(_, known)) => Key::Known(known),
            None => Key::Other(key),
        })
    }

    /// A string without escapes or control characters (serde refuses the latter).
    fn string(&mut self) -> Option<&'a str> {
        if self.next()? != b'"' {
            return None;
        }
        let start = self.at;
        let rest = self.text.as_bytes().get(start..)?;
        let end = start + special_byte(rest)?;
        if self.text.as_bytes().get(end) != Some(&b'"') {
            return None;
        }
        self.at = end + 1;
        // Both ends are next to an ASCII quote, so on character boundaries.
        self.text.get(start..end)
    }

    fn text(&mut self) -> Option<Text> {
        self.string().map(Text::from)
    }

    /// An integer as serde_json reads it: up to 18 digits, no leading zero, no fraction or
    /// exponent (those are left to serde, whose float reading is not redone here), not `-0`
    /// (which serde_json reads as a float).
    fn integer(&mut self) -> Option<Number> {
        let bytes = self.text.as_bytes();
        let negative = self.peek()? == b'-';
        let start = self.at + usize::from(negative);
        let mut end = start;
        let mut n: u64 = 0;
        while let Some(&d @ b'0'..=b'9') = bytes.get(end) {
            n = n * 10 + u64::from(d - b'0');
            end += 1;
            if end - start > 18 {
                return None;
            }
        }
        let digits = end - start;
        if digits == 0 || (digits > 1 && bytes.get(start) == Some(&b'0')) {
            return None;
        }
        if let Some(b'.' | b'e' | b'E') = bytes.get(end) {
            return None;
        }
        self.at = end;
        if negative {
            // Below 10^18, so the negation fits.
            (n > 0).then(|| Number::from(-(n as i64)))
        } else {
            Some(Number::from(n))
        }
    }

    fn scalar(&mut self) -> Option<Scalar<'a>> {
        self.skip_whitespace();
        Some(match self.peek()? {
            b'"' => Scalar::Str(self.string()?),
            b't' => self.literal("true").map(|()| Scalar::Bool(true))?,
            b'f' => self.literal("false").map(|()| Scalar::Bool(false))?,
            b'n' => self.literal("null").map(|()| Scalar::Null)?,
            b'-' | b'0'..=b'9' => Scalar::Number(self.integer()?),
            _ => return None,
        })
    }

    /// `null`, consumed; `None` with nothing consumed for anything else.
    fn null(&mut self) -> Option<()> {
        self.skip_whitespace();
        self.literal("null")
    }

    /// An object, `field` reading each value (the cursor after the key's colon); `expected`
    /// as for [`Cursor::key`].
    fn object<K: Copy>(
        &mut self,
        expected: &[(KeyName, K)],
        mut field: impl FnMut(&mut Self, Key<'a, K>) -> Option<()>,
    ) -> Option<()> {
        if self.next()? != b'{' {
            return None;
        }
        self.skip_whitespace();
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        let mut next = 0;
        loop {
            let key = self.key(expected, &mut next)?;
            if self.next()? != b':' {
                return None;
            }
            field(self, key)?;
            match self.next()? {
                b',' => {}
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    /// A params object of which only `keys` are built, or `null`; the other keys' values
    /// are skipped.
    fn params_keeping(&mut self, keys: &[String]) -> Option<Lenient<Params>> {
        if self.null().is_some() {
            return Some(Lenient::Null);
        }
        let mut pairs: Vec<(Text, Value)> = Vec::new();
        self.object(&[], |c, key: Key<'a, ()>| {
            let Key::Other(key) = key else { return None };
            if keys.iter().any(|k| k == key) {
                let value = c.scalar()?.into_value();
                pairs.push((Text::from(key), value));
            } else {
                c.skip_value(0)?;
            }
            Some(())
        })?;
        Some(Lenient::Value(pairs.into_iter().collect()))
    }

    /// A value not kept: skipped, and taken for `null`.
    fn skipped<T>(&mut self) -> Option<Lenient<T>> {
        self.skip_value(0).map(|()| Lenient::Null)
    }

    /// Skips one JSON value without building it, checking that it is one: that serde_json
    /// would read the line holding it into the same entry, less this value. Strings are
    /// crossed eight bytes at a step to their next quote, backslash or control character
    /// ([`special_byte`]); escapes are checked as serde checks them. Declines (`None`) what
    /// it does not vouch for, which serde then reads: a number with an exponent or of more
    /// than [`SKIP_DIGITS`] digits (serde refuses one beyond a float's range), the escape of
    /// a UTF-16 surrogate (a lone one is read with a warning), nesting deeper than
    /// [`SKIP_DEPTH`].
    fn skip_value(&mut self, depth: u32) -> Option<()> {
        self.skip_whitespace();
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' => {
                if depth >= SKIP_DEPTH {
                    return None;
                }
                self.at += 1;
                self.skip_whitespace();
                if self.peek()? == b'}' {
                    self.at += 1;
                    return Some(());
                }
                loop {
                    self.skip_whitespace();
                    if self.peek()? != b'"' {
                        return None;
                    }
                    self.skip_string()?;
                    if self.next()? != b':' {
                        return None;
                    }
                    self.skip_value(depth + 1)?;
                    match self.next()? {
                        b',' => {}
                        b'}' => return Some(()),
                        _ => return None,
                    }
                }
            }
            b'[' => {
                if depth >= SKIP_DEPTH {
                    return None;
                }
                self.at += 1;
                self.skip_whitespace();
                if self.peek()? == b']' {
                    self.at += 1;
                    return Some(());
                }
                loop {
                    self.skip_value(depth + 1)?;
                    match self.next()? {
                        b',' => {}
                        b']' => return Some(()),
                        _ => return None,
                    }
                }
            }
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            b'-' | b'0'..=b'9' => self.skip_number(),
            _ => None,
        }
    }

    /// Skips a string, the cursor on its opening quote.
    fn skip_string(&mut self) -> Option<()> {
        let bytes = self.text.as_bytes();
        self.at += 1;
        loop {
            let at = self.at + special_byte(bytes.get(self.at..)?)?;
            match *bytes.get(at)? {
                b'"' => {
                    self.at = at + 1;
                    return Some(());
                }
                b'\\' => match *bytes.get(at + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.at = at + 2,
                    b'u' => {
                        let hex = bytes.get(at + 2..at + 6)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        // Four ASCII hex digits: a `u16`, read by hand.
                        let code = hex.iter().fold(0u32, |n, &d| {
                            n * 16 + char::from(d).to_digit(16).unwrap_or(0)
                        });
                        if (0xD800..=0xDFFF).contains(&code) {
                            return None;
                        }
                        self.at = at + 6;
                    }
                    _ => return None,
                },
                // A control character, which serde refuses in a string.
                _ => return None,
            }
        }
    }

    /// Skips a number as JSON writes one, without an exponent.
    fn skip_number(&mut self) -> Option<()> {
        let bytes = self.text.as_bytes();
        let digits_from = |mut at: usize| {
            while let Some(b'0'..=b'9') = bytes.get(at) {
                at += 1;
            }
            at
        };
        let start = self.at + usize::from(bytes.get(self.at) == Some(&b'-'));
        let mut end = digits_from(start);
        let digits = end - start;
        if digits == 0 || digits > SKIP_DIGITS || (digits > 1 && bytes.get(start) == Some(&b'0')) {
            return None;
        }
        if bytes.get(end) == Some(&b'.') {
            let fraction = end + 1;
            end = digits_from(fraction);
            if end == fraction {
                return None;
            }
        }
        if let Some(b'e' | b'E') = bytes.get(end) {
            return None;
        }
        self.at = end;
        Some(())
    }

    fn params(&mut self) -> Option<Lenient<Params>> {
        if self.null().is_some() {
            return Some(Lenient::Null);
        }
        let mut pairs: Vec<(Text, Value)> = Vec::new();
        self.object(&[], |c, key: Key<'a, ()>| {
            let Key::Other(key) = key else { return None };
            let value = c.scalar()?.into_value();
            pairs.push((Text::from(key), value));
            Some(())
        })?;
        Some(Lenient::Value(pairs.into_iter().collect()))
    }

    /// A number made into `T`, or `null`; anything else is left to serde.
    fn lenient_number<T>(&mut self, make: impl FnOnce(Number) -> Option<T>) -> Option<Lenient<T>> {
        match self.scalar()? {
            Scalar::Null => Some(Lenient::Null),
            Scalar::Number(n) => make(n).map(Lenient::Value),
            _ => None,
        }
    }

    /// `result`, its duration built only when `duration` asks for it.
    fn outcome(&mut self, duration_kept: bool) -> Option<RawOutcome> {
        let (mut success, mut exit_code, mut duration) = (None, None, None);
        self.object(OUTCOME_FIELDS, |c, key| match key {
            Key::Known(OutcomeField::Success) => {
                let value = match c.scalar()? {
                    Scalar::Bool(b) => b,
                    _ => return None,
                };
                once(&mut success, value)
            }
            Key::Known(OutcomeField::ExitCode) => {
                let value = c.lenient_number(|n| n.as_i64().map(ExitCode))?;
                once(&mut exit_code, value)
            }
            Key::Known(OutcomeField::Duration) if duration_kept => {
                let value = c.lenient_number(|n| n.as_f64().and_then(Duration::from_f64))?;
                once(&mut duration, value)
            }
            Key::Known(OutcomeField::Duration) => once(&mut duration, c.skipped()?),
            Key::Other(_) => None,
        })?;
        Some(RawOutcome {
            success: success?,
            exit_code: exit_code.unwrap_or_default(),
            duration: duration.unwrap_or_default(),
        })
    }

    fn metadata(&mut self) -> Option<Lenient<RawMetadata>> {
        if self.null().is_some() {
            return Some(Lenient::Null);
        }
        let mut slots = MetadataSlots::default();
        // A repeated key keeps its last value, as serde's reading does.
        self.object(METADATA_KEYS, |c, key| {
            let value = c.scalar()?;
            let key = match key {
                Key::Known(name) | Key::Other(name) => name,
            };
            match slots.slot(key) {
                Some(slot) => *slot = Some(value.into_meta()),
                None => {
                    slots.extra.insert(key.to_owned(), value.into_value());
                }
            }
            Some(())
        })?;
        Some(Lenient::Value(RawMetadata(slots.finish())))
    }

    fn error(&mut self) -> Option<Lenient<Text>> {
        match self.scalar()? {
            Scalar::Str(s) => Some(Lenient::Value(Text::from(s))),
            Scalar::Null => Some(Lenient::Null),
            _ => None,
        }
    }
}

/// Whether [`read`] took `line` (`Ok(false)` when it left it to serde), and, if it did, that
/// serde reads the same entry from it; what the tests and the `cleo_line` fuzz target check.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn agrees_with_serde(line: &str) -> Result<bool, String> {
    use super::{finish_line, read_raw};
    use crate::field::FieldsRead;
    // The entry for a pack that reads every optional field and for one that reads none;
    // `RawEntry` is not `Clone`, so the line is read for each.
    let both = |read: &dyn Fn() -> Option<RawEntry>| {
        Some([
            finish_line(read()?, FieldsRead::ALL),
            finish_line(read()?, FieldsRead::NONE),
        ])
    };
    let Some(fast) = both(&|| read(line)) else {
        return Ok(false);
    };
    let by_serde = || read_raw(line.as_bytes(), Some(line), &mut Default::default());
    if let Err(e) = by_serde() {
        return Err(format!("fast read a line serde refuses ({e:?}): {line:?}"));
    }
    let serde = both(&|| by_serde().ok());
    match serde {
        Some(serde) if serde == fast => Ok(true),
        serde => Err(format!("{line:?}\nfast:  {fast:?}\nserde: {serde:?}")),
    }
}

/// Whether [`read_kept`] took `line` for `kept` (`Ok(false)` when it left it to serde), and
/// that reading the line so and reading it whole by serde agree: both take it or both refuse
/// it (with the same error and notes), and the entries agree on every field `kept` keeps;
/// a line the skimming reader takes, serde takes. What the tests and the `cleo_projection`
/// fuzz target check.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn projected_agrees_with_serde(
    line: &str,
    kept: &Projection,
    checked: FieldsRead,
) -> Result<bool, String> {
    use super::{finish_line, parse_line_kept, read_raw, LineNotes};
    let skim = Kept::new(kept, checked);
    let took = read_kept(line, skim).is_some();
    let mut serde_notes = LineNotes::default();
    let by_serde = read_raw(line.as_bytes(), Some(line), &mut serde_notes);
    if took && by_serde.is_err() {
        return Err(format!(
            "the skimming reader took a line serde refuses: {line:?}"
        ));
    }
    let whole = by_serde.and_then(|raw| finish_line(raw, checked));
    let mut notes = LineNotes::default();
    let skimmed = parse_line_kept(line.as_bytes(), Some(line), checked, skim, &mut notes);
    let same = match (&whole, &skimmed) {
        (Ok(a), Ok(b)) => projected(a, skim) == projected(b, skim),
        (Err(a), Err(b)) => a == b,
        _ => false,
    };
    if !same || notes != serde_notes {
        return Err(format!(
            "{line:?} kept as {kept:?}, checked {checked:?}\nserde:   {whole:?} {serde_notes:?}\nskimmed: {skimmed:?} {notes:?}"
        ));
    }
    Ok(took)
}

/// What `kept` keeps of `entry`.
#[cfg(any(test, feature = "fuzzing"))]
pub(in crate::source) fn projected(
    entry: &crate::entry::Entry,
    kept: Kept<'_>,
) -> crate::entry::Entry {
    let mut entry = entry.clone();
    if !kept.duration {
        entry.result.duration = 0.0;
    }
    if !kept.error {
        entry.error = None;
    }
    entry.params = match kept.params {
        KeptParams::All => entry.params,
        KeptParams::Keys(keys) => entry
            .params
            .iter()
            .filter(|(k, _)| keys.iter().any(|key| key == k))
            .map(|(k, v)| (k, v.clone()))
            .collect(),
        KeptParams::Skipped => Params::new(),
    };
    entry
}

/// A projection and the fields checked, from two bytes (what the `cleo_projection` fuzz
/// target and the tests read lines for): everything, whole fields, or whole fields and some
/// params keys; checked, usually what is kept.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn projection_of(a: u8, b: u8) -> (Projection, FieldsRead) {
    const KEYS: &[&str] = &["taskId", "userId", "source", "gateway", "role", "x", "a"];
    let set = |bits: u8| {
        [
            FieldsRead::PARAMS,
            FieldsRead::EXIT_CODE,
            FieldsRead::DURATION,
            FieldsRead::ERROR,
            FieldsRead::METADATA,
        ]
        .into_iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .fold(FieldsRead::NONE, |read, (_, f)| read.with(f))
    };
    let kept = match a >> 5 & 3 {
        0 => Projection::ALL,
        1 => Projection::of_fields(set(a)),
        _ => KEYS
            .iter()
            .enumerate()
            .filter(|(i, _)| b & (1 << i) != 0)
            .fold(Projection::of_fields(set(a & !1)), |p, (_, key)| {
                p.with(&Projection::of_field(&crate::field::Field::Params(vec![
                    (*key).to_owned(),
                ])))
            }),
    };
    let checked = if a & (1 << 7) == 0 {
        kept.fields()
    } else {
        set(b >> 3)
    };
    (kept, checked)
}

/// [`projected_agrees_with_serde`] for the projection `a` and `b` choose ([`projection_of`]).
#[cfg(feature = "fuzzing")]
pub(crate) fn projection_agrees_with_serde(line: &str, a: u8, b: u8) -> Result<bool, String> {
    let (kept, checked) = projection_of(a, b);
    projected_agrees_with_serde(line, &kept, checked)
}

/// Whether [`params_document`] took `text` (`Ok(false)` when it left it to serde), and, if it
/// did, that serde reads the same params from it; and that, read keeping only some keys (as
/// a `tasks.db` is read for a pack that names them), a document taken is one serde takes,
/// with the same values of those keys. What the tests and the `cleo_line` fuzz target check.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn params_agree_with_serde(text: &str) -> Result<bool, String> {
    let serde = || serde_json::from_str::<Option<Params>>(text);
    let keys = ["title", "a", "x"].map(str::to_owned);
    if let Some(kept) = params_document(text, Some(&keys)) {
        let by_serde = serde().map(|serde| {
            serde
                .unwrap_or_default()
                .iter()
                .filter(|(k, _)| keys.iter().any(|key| key == k))
                .map(|(k, v)| (k, v.clone()))
                .collect::<Params>()
        });
        if by_serde.as_ref().ok() != Some(&kept) {
            return Err(format!(
                "{text:?} keeping {keys:?}\nfast:  {kept:?}\nserde: {by_serde:?}"
            ));
        }
    }
    let Some(fast) = params_document(text, None) else {
        return Ok(false);
    };
    match serde() {
        Ok(serde) if serde.clone().unwrap_or_default() == fast => Ok(true),
        serde => Err(format!("{text:?}\nfast:  {fast:?}\nserde: {serde:?}")),
    }
}

#[cfg(test)]
mod tests;
