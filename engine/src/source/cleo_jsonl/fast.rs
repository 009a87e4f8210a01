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
pub(super) struct Kept<'k> {
    duration: bool,
    error: bool,
    params: KeptParams<'k>,
}

#[derive(Clone, Copy)]
enum KeptParams<'k> {
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
    pub(super) fn new(kept: &'k Projection, checked: FieldsRead) -> Kept<'k> {
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
pub(crate) fn params_document(text: &str) -> Option<Params> {
    let mut c = Cursor { text, at: 0 };
    let params = c.params()?;
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
fn projected(entry: &crate::entry::Entry, kept: Kept<'_>) -> crate::entry::Entry {
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
/// did, that serde reads the same params from it; what the tests and the `cleo_line` fuzz
/// target check.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn params_agree_with_serde(text: &str) -> Result<bool, String> {
    let Some(fast) = params_document(text) else {
        return Ok(false);
    };
    match serde_json::from_str::<Option<Params>>(text) {
        Ok(serde) if serde.clone().unwrap_or_default() == fast => Ok(true),
        serde => Err(format!("{text:?}\nfast:  {fast:?}\nserde: {serde:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::skim::skim_agrees_with_parse;
    use super::super::{parse_line, read_raw, LineError};
    use super::*;
    use crate::field::FieldsRead;
    use proptest::prelude::*;

    fn check(line: &str) -> Result<bool, TestCaseError> {
        agrees_with_serde(line).map_err(TestCaseError::fail)
    }

    /// A line as `JSON.parse` reads it (CLEO's grader), written back without the earlier
    /// values of a repeated key; `None` for a line that is no JSON.
    fn as_json_parse_reads(line: &str) -> Option<String> {
        serde_json::from_str::<Value>(line)
            .ok()
            .map(|v| v.to_string())
    }

    /// That `line` is read as `JSON.parse` reads it, with the last value of a repeated key,
    /// and that the first pass finds the session its entry lands in; whether it repeats an
    /// entry field.
    fn check_as_json_parse(line: &str) -> Result<bool, TestCaseError> {
        let Some(plain) = as_json_parse_reads(line) else {
            return Ok(false);
        };
        let mut repeats = false;
        for reads in [FieldsRead::ALL, FieldsRead::NONE] {
            let mut notes = super::super::LineNotes::default();
            let ours = parse_line(line.as_bytes(), Some(line), reads, &mut notes);
            let theirs = parse_line(
                plain.as_bytes(),
                Some(&plain),
                reads,
                &mut Default::default(),
            );
            match (&ours, &theirs) {
                (Ok(a), Ok(b)) if a == b => {}
                (Err(_), Err(_)) => {}
                _ => {
                    return Err(TestCaseError::fail(format!(
                        "{line:?}\nours:   {ours:?}\ntheirs: {theirs:?}"
                    )))
                }
            }
            repeats = notes.repeated.is_some();
        }
        skim_agrees_with_parse(line).map_err(TestCaseError::fail)?;
        Ok(repeats)
    }

    fn by_serde(line: &str) -> Result<(), LineError> {
        read_raw(line.as_bytes(), Some(line), &mut Default::default()).map(drop)
    }

    // Each list starts with the options in the shape `fast` reads, then those it leaves to
    // serde, then those that are no JSON; `[fast, json]` after it counts the first two.
    const SPACE: &[&str] = &["", "", "", " ", "\t", "\r", "\n", "  "];
    const SPACE_KINDS: [usize; 2] = [8, 8];
    const STRINGS: &[&str] = &[
        "\"abc\"",
        "\"T1\"",
        "\"\"",
        "\"é✓\"",
        "\"mcp\"",
        "\"cleo_query\"",
        "\"a string longer than twenty-four bytes\"",
        "\"2026-03-01T00:00:22.645Z\"",
        "\"not a time\"",
        "\"a\\\"b\"",
        "\"a\\u0041\"",
        "\"tab\there\"",
    ];
    const STRING_KINDS: [usize; 2] = [9, 11];
    const NUMBERS: &[&str] = &[
        "0",
        "7",
        "-3",
        "999999999999999999",
        "-999999999999999999",
        "-0",
        "1.5",
        "4.0",
        "1e3",
        "1000000000000000000",
        "18446744073709551616",
        "-9223372036854775808",
        "01",
        "-",
    ];
    const NUMBER_KINDS: [usize; 2] = [5, 12];
    const OTHERS: &[&str] = &[
        "true",
        "false",
        "null",
        "[1]",
        "[]",
        "{}",
        "{\"a\":1}",
        "tru",
        "nul",
        "x",
    ];
    const OTHER_KINDS: [usize; 2] = [3, 7];
    const ENDINGS: &[&str] = &["", "\n", "\r\n", " ", " x", "}", "\n\n{}"];
    const ENDING_KINDS: [usize; 2] = [4, 4];
    const META_KEYS: &[&str] = &[
        "taskId",
        "userId",
        "source",
        "gateway",
        "role",
        "x",
        "a",
        "ta\\u0073kId",
    ];
    const FIELDS: &[&str] = &[
        "timestamp",
        "sessionId",
        "domain",
        "operation",
        "params",
        "result",
        "metadata",
        "error",
        "extra",
        "time\\u0073tamp",
    ];

    /// A line built from `choices`: mostly lines in the shape `fast` reads, and every way
    /// out of it (escapes, fractions, nesting, repeated and unknown keys, wrong types, bad
    /// JSON).
    struct Gen<'a> {
        choices: std::slice::Iter<'a, u16>,
        out: String,
        /// 0: only what `fast` reads; 1: any JSON; 2: anything.
        mode: usize,
        /// Params, errors and durations often hold values of any kind, which a reader that
        /// does not keep them skips.
        nested: bool,
    }

    impl Gen<'_> {
        fn pick(&mut self, n: usize) -> usize {
            self.choices.next().map_or(0, |&c| c as usize % n)
        }
        fn one_of(&mut self, options: &[&str]) {
            let i = self.pick(options.len());
            self.out.push_str(options[i]);
        }
        /// One of `options`, of those the line's mode allows (`kinds` as for the lists).
        fn one_of_kind(&mut self, options: &[&str], kinds: [usize; 2]) {
            let n = kinds.get(self.mode).copied().unwrap_or(options.len());
            let i = self.pick(n);
            self.out.push_str(options[i]);
        }
        fn space(&mut self) {
            self.one_of_kind(SPACE, SPACE_KINDS);
        }
        fn scalar(&mut self) {
            match self.pick(10) {
                0..=4 => self.one_of_kind(STRINGS, STRING_KINDS),
                5..=7 => self.one_of_kind(NUMBERS, NUMBER_KINDS),
                _ => self.one_of_kind(OTHERS, OTHER_KINDS),
            }
        }
        fn key(&mut self, keys: &[&str]) {
            self.space();
            self.out.push('"');
            self.one_of(keys);
            self.out.push('"');
            self.space();
            self.out.push(':');
            self.space();
        }
        fn object(&mut self, keys: &[&str], value: impl Fn(&mut Self, &str)) {
            self.out.push('{');
            let n = self.pick(5);
            for i in 0..n {
                if i > 0 {
                    self.out.push(',');
                }
                let at = self.out.len();
                self.key(keys);
                let key = self.out[at..].trim_matches([' ', '\t', '\r', '\n', ':', '"']);
                let key = key.to_owned();
                value(self, &key);
                self.space();
            }
            if self.pick(20) == 0 {
                self.out.push(',');
            }
            self.out.push('}');
        }
        fn value_of(&mut self, field: &str) {
            match (field, self.pick(8)) {
                ("timestamp", 0..=5) => self.out.push_str("\"2026-03-01T00:00:22.645Z\""),
                ("error", 0..=2) if self.nested => self.skippable(0),
                ("params", 0..=5) if self.nested && self.mode < 2 => {
                    let keys = &META_KEYS[..7 + self.mode];
                    self.object(keys, |g, _| {
                        if g.pick(3) == 0 {
                            g.skippable(0)
                        } else {
                            g.scalar()
                        }
                    });
                }
                ("sessionId" | "domain" | "operation" | "error", _) if self.mode < 2 => {
                    self.one_of_kind(STRINGS, STRING_KINDS)
                }
                ("timestamp" | "sessionId" | "domain" | "operation" | "error", _) => self.scalar(),
                ("params" | "metadata", _) if self.mode < 2 => {
                    let keys = &META_KEYS[..7 + self.mode];
                    self.object(keys, |g, _| g.scalar());
                }
                ("params" | "metadata", 0..=5) => {
                    self.object(META_KEYS, |g, _| g.scalar());
                }
                ("result", _) if self.mode < 2 => {
                    // `success` once, the others at most once, in any order.
                    let mut keys = vec!["success"];
                    for key in ["exitCode", "duration"] {
                        if self.pick(2) == 0 {
                            keys.insert(self.pick(keys.len() + 1), key);
                        }
                    }
                    if self.mode == 1 && self.pick(4) == 0 {
                        let again = keys[self.pick(keys.len())];
                        keys.insert(self.pick(keys.len() + 1), again);
                    }
                    self.out.push('{');
                    for (i, key) in keys.into_iter().enumerate() {
                        if i > 0 {
                            self.out.push(',');
                        }
                        self.key(&[key]);
                        match key {
                            "success" => self.one_of(&["true", "false"]),
                            "duration" if self.nested && self.pick(3) == 0 => self.skippable(0),
                            _ => self.one_of_kind(
                                &[&["null"], NUMBERS].concat(),
                                NUMBER_KINDS.map(|n| n + 1),
                            ),
                        }
                        self.space();
                    }
                    self.out.push('}');
                }
                ("result", 0..=5) => {
                    self.object(
                        &["success", "exitCode", "duration", "other"],
                        |g, key| match (key, g.pick(3)) {
                            ("success", 0 | 1) => g.one_of(&["true", "false"]),
                            ("exitCode" | "duration", 0 | 1) => g.one_of(NUMBERS),
                            _ => g.scalar(),
                        },
                    );
                }
                _ => self.scalar(),
            }
        }
        fn line(&mut self) -> String {
            self.mode = self.pick(3);
            self.space();
            if self.mode == 2 && self.pick(30) == 0 {
                self.out.push('\u{feff}');
            }
            self.out.push('{');
            // Usually the fields CLEO writes, in its order; sometimes any of them, in any order.
            let fields: Vec<&str> = if self.mode < 2 || self.pick(3) > 0 {
                let mut fields = vec!["timestamp", "sessionId", "domain", "operation"];
                for optional in ["params", "result", "metadata", "error"] {
                    if optional == "result" || self.pick(3) > 0 {
                        fields.push(optional);
                    }
                }
                // Now and then a field twice, each with a value of its own: `JSON.parse`
                // keeps the last, and so must the readers.
                if self.mode == 1 && self.pick(3) == 0 {
                    let again = FIELDS[self.pick(8)];
                    let at = self.pick(fields.len() + 1);
                    fields.insert(at, again);
                }
                fields
            } else {
                (0..self.pick(10))
                    .map(|_| FIELDS[self.pick(FIELDS.len())])
                    .collect()
            };
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                self.key(&[field]);
                self.value_of(field);
                self.space();
            }
            self.out.push('}');
            self.one_of_kind(ENDINGS, ENDING_KINDS);
            std::mem::take(&mut self.out)
        }
    }

    /// A `details_json` document built from `choices`: a params object in any of the three
    /// modes, `null`, or another scalar, with white space around it.
    fn params_of(choices: &[u16]) -> String {
        let mut g = Gen {
            choices: choices.iter(),
            out: String::new(),
            mode: 0,
            nested: false,
        };
        g.mode = g.pick(3);
        g.space();
        match g.pick(12) {
            0 => g.out.push_str("null"),
            1 => g.scalar(),
            _ => {
                let keys = &META_KEYS[..7 + g.mode.min(1)];
                g.object(keys, |g, _| g.scalar());
            }
        }
        g.one_of_kind(ENDINGS, ENDING_KINDS);
        g.out
    }

    fn line_of(choices: &[u16]) -> String {
        Gen {
            choices: choices.iter(),
            out: String::new(),
            mode: 0,
            nested: false,
        }
        .line()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4_000))]

        /// The same for a `tasks.db` row's `details_json`.
        #[test]
        fn a_params_document_the_fast_reader_takes_is_the_params_serde_reads(
            choices in proptest::collection::vec(any::<u16>(), 10..120)
        ) {
            params_agree_with_serde(&params_of(&choices)).map_err(TestCaseError::fail)?;
        }

        /// What makes the fast reader safe to use: whatever it reads, serde reads the same.
        #[test]
        fn a_line_the_fast_reader_takes_is_the_entry_serde_reads(
            choices in proptest::collection::vec(any::<u16>(), 40..400)
        ) {
            check(&line_of(&choices))?;
        }

        /// CLEO's grader reads a line with `JSON.parse`, which keeps the last value of a
        /// repeated key: whichever reader takes a line, it is that entry, in the session
        /// the first pass counted it in.
        #[test]
        fn a_line_is_the_entry_json_parse_reads_and_lands_in_the_session_the_skim_finds(
            choices in proptest::collection::vec(any::<u16>(), 40..400)
        ) {
            check_as_json_parse(&line_of(&choices))?;
        }
    }

    /// A known key is matched with its quote whether sixteen bytes follow or the line ends
    /// sooner, and a name too long for the words is left to the scan.
    #[test]
    fn a_known_key_matches_only_itself_with_its_quote() {
        let key = KeyName::new("timestamp");
        assert!(key.starts(b"timestamp\": \"2026-03-01T00:00:00Z\""));
        assert!(key.starts(b"timestamp\":1}"));
        assert!(key.starts(b"timestamp\""));
        for other in [
            &b"timestamp"[..],
            b"timestamps\": 1, \"padding\": 2",
            b"timestamP\": 1, \"padding\": 2",
            b"timestam\": 1, \"padding\": 22",
            b"",
        ] {
            assert!(!key.starts(other), "{}", String::from_utf8_lossy(other));
        }
        let long = KeyName::new("a_key_of_sixteen");
        assert!(!long.starts(b"a_key_of_sixteen\": 1, \"x\": 2"));
    }

    /// Keys are matched in their usual order without a scan; any other order, a key that
    /// only starts like a known one, or a known key again must read as serde reads them.
    #[test]
    fn keys_out_of_their_usual_order_read_as_serde_reads_them() {
        let taken = [
            r#"{"error":"E","metadata":{"role":"r","taskId":"T1","source":"cli"},"result":{"duration":3,"exitCode":1,"success":false},"params":{"b":1,"a":"x"},"operation":"o","domain":"d","sessionId":"s","timestamp":"2026-03-01T00:00:00Z"}"#,
            r#"{"sessionId":"s","timestamp":"2026-03-01T00:00:00Z","domain":"d","operation":"o","result":{"success":true},"metadata":{"gateway":"g","source":"cli","userId":"u"}}"#,
            r#"{"timestamp":"t","sessionId":"s","domain":"d","operation":"o","params":{"timestamp":"p","sessionId":"q"},"result":{"success":true},"metadata":{"sourceX":"y","source":"cli"}}"#,
        ];
        for line in taken {
            assert_eq!(agrees_with_serde(line), Ok(true), "{line}");
        }
        let declined = [
            r#"{"timestamp":"t","sessionIdX":"s","domain":"d","operation":"o","result":{"success":true}}"#,
            r#"{"timestamp":"t","sessionId":"s","domain":"d","operation":"o","result":{"success":true},"timestamp":"u"}"#,
            r#"{"timestamp":"t","sessionId":"s","domain":"d","operation":"o","result":{"success":true,"exitCodes":1}}"#,
            r#"{"timestamp":"t","sessionId":"s","domain":"d","operation":"o","result":{"success":true},"timestamps":"u"}"#,
        ];
        for line in declined {
            assert_eq!(agrees_with_serde(line), Ok(false), "{line}");
        }
    }

    /// Of 3,000 generated inputs (`len` choices each, from a fixed `seed`): how many the fast
    /// reader took, left to serde, and serde refused; `read` says for one input whether the
    /// fast reader took it and whether serde reads it.
    fn tally(seed: u64, len: usize, read: impl Fn(&[u16]) -> (bool, bool)) -> [usize; 3] {
        let mut state = seed;
        let mut counts = [0; 3];
        for _ in 0..3_000 {
            let choices: Vec<u16> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u16
                })
                .collect();
            match read(&choices) {
                (true, _) => counts[0] += 1,
                (false, true) => counts[1] += 1,
                (false, false) => counts[2] += 1,
            }
        }
        counts
    }

    /// The generator is only useful if the fast reader takes many of its lines, and leaves
    /// many to serde.
    #[test]
    fn generated_lines_exercise_both_readers() {
        let [fast, serde, refused] = tally(0x2545_f491_4f6c_dd1d, 300, |choices| {
            let line = line_of(choices);
            (check(&line).unwrap(), by_serde(&line).is_ok())
        });
        assert!(
            fast > 300 && serde > 300 && refused > 300,
            "{fast} {serde} {refused}"
        );
    }

    /// The check above is only useful if many generated lines repeat an entry field and
    /// are read.
    #[test]
    fn generated_lines_repeat_entry_fields() {
        let [repeats, _, _] = tally(0x2545_f491_4f6c_dd1d, 300, |choices| {
            (check_as_json_parse(&line_of(choices)).unwrap(), false)
        });
        assert!(repeats > 150, "{repeats}");
    }

    #[test]
    fn generated_params_documents_exercise_both_readers() {
        let [fast, serde, refused] = tally(0x9e37_79b9_7f4a_7c15, 80, |choices| {
            let text = params_of(choices);
            let by_serde = serde_json::from_str::<Option<Params>>(&text).is_ok();
            (params_agree_with_serde(&text).unwrap(), by_serde)
        });
        assert!(
            fast > 300 && serde > 300 && refused > 300,
            "{fast} {serde} {refused}"
        );
        for (text, expected) in [
            ("null", Some(0)),
            (" {\"b\": 1, \"a\": \"x\", \"b\": null} ", Some(2)),
            ("{\"a\": 1.5}", None),
            ("{\"a\": [1]}", None),
            ("[]", None),
        ] {
            assert_eq!(params_document(text).map(|p| p.len()), expected, "{text}");
        }
    }

    #[test]
    fn lines_of_the_corpus_and_the_bench_shape_are_read_fast_and_as_serde_reads_them() {
        let corpus = include_str!("../../../../tests/fixtures/conformance/audit.jsonl");
        let mut fast = 0;
        for line in corpus.lines() {
            fast += usize::from(check(line).unwrap());
        }
        // Every line but those with an escape.
        let escaped = corpus.lines().filter(|l| l.contains('\\')).count();
        assert_eq!(fast, corpus.lines().count() - escaped);
        let bench = r#"{"timestamp": "2026-03-01T00:00:25.731Z", "sessionId": "ses_1772323222_200a64", "domain": "admin", "operation": "dash", "params": {}, "result": {"success": false, "exitCode": 6, "duration": 415}, "metadata": {"source": "mcp", "gateway": "query", "taskId": "T342"}, "error": "E_GENERAL"}"#;
        assert!(check(bench).unwrap());
    }

    #[test]
    fn repeated_fields_escapes_and_fractions_are_left_to_serde() {
        for line in [
            r#"{"timestamp":"2026-03-01T00:00:00Z","timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"d","operation":"o","result":{"success":true}}"#,
            r#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s\u0031","domain":"d","operation":"o","result":{"success":true}}"#,
            r#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"d","operation":"o","result":{"success":true,"duration":1.5}}"#,
            r#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"d","operation":"o","result":{"success":true},"params":{"a":[1]}}"#,
            r#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"d","operation":"o","result":{"success":true},"future":1}"#,
        ] {
            assert!(read(line).is_none(), "{line}");
            assert!(by_serde(line).is_ok(), "{line}");
        }
    }

    /// A value the skimming reader skips when its field is not kept: every kind of JSON, and
    /// what it must leave to serde or refuse (an exponent, a surrogate's escape, nesting
    /// deeper than it skips, bad JSON).
    const SKIPPED: &[&str] = &[
        "[]",
        "{}",
        "[1, 2.5, -0.0, \"x\"]",
        "{\"a\": {\"b\": [true, false, null]}, \"c\": \"d\"}",
        "\"esc \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\u0000\"",
        "{\"a\":1,\"a\":[2]}",
        "12345678901234567890123",
        "0.000001",
        "\"\\ud83d\\ude00\"",
        "\"\\ud83d\"",
        "1e400",
        "1.5e3",
        "[1,]",
        "{\"a\"}",
        "{\"a\":}",
        "\"\\x\"",
        "\"\\u12G4\"",
        "\"a\tb\"",
        "01",
        "1.",
        "-",
        "[",
        "{\"a\" 1}",
        "[1 2]",
    ];

    impl Gen<'_> {
        /// A value for a field the reader may skip.
        fn skippable(&mut self, depth: u32) {
            match self.pick(9) {
                0 if depth < 3 => {
                    self.out.push('[');
                    for i in 0..self.pick(4) {
                        if i > 0 {
                            self.out.push(',');
                        }
                        self.space();
                        self.skippable(depth + 1);
                        self.space();
                    }
                    self.out.push(']');
                }
                1 if depth < 3 => self.object(META_KEYS, |g, _| g.skippable(depth + 1)),
                2 => {
                    let n = [1, 47, 48, 49, 130][self.pick(5)];
                    let (open, close) = if self.pick(2) == 0 {
                        ("[", "]")
                    } else {
                        ("{\"k\":[", "]}")
                    };
                    self.out.push_str(&open.repeat(n));
                    self.out.push_str(&close.repeat(n));
                }
                3..=6 => self.one_of(SKIPPED),
                _ => self.scalar(),
            }
        }
    }

    /// A line of [`Gen`] whose params, error and duration often hold values of any kind.
    fn nested_line_of(choices: &[u16]) -> String {
        Gen {
            choices: choices.iter(),
            out: String::new(),
            mode: 0,
            nested: true,
        }
        .line()
    }

    fn check_projected(choices: &[u16]) -> Result<bool, TestCaseError> {
        let (kept, checked) = projection_of(choices[0] as u8, choices[1] as u8);
        let line = nested_line_of(&choices[2..]);
        projected_agrees_with_serde(&line, &kept, checked).map_err(TestCaseError::fail)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4_000))]

        /// What makes skipping safe: for any projection, the skimming reader and serde take
        /// and refuse the same lines, and agree on every field kept.
        #[test]
        fn a_projected_line_reads_as_serde_reads_it_on_every_field_kept(
            choices in proptest::collection::vec(any::<u16>(), 42..400)
        ) {
            check_projected(&choices)?;
        }
    }

    /// The check above is only useful if the skimming reader takes many generated lines
    /// (skipping values of every kind), leaves many to serde, and serde refuses many.
    #[test]
    fn generated_nested_lines_exercise_the_skimming_reader() {
        let [fast, serde, refused] = tally(0x1234_5678_9abc_def1, 300, |choices| {
            let line = nested_line_of(&choices[2..]);
            (check_projected(choices).unwrap(), by_serde(&line).is_ok())
        });
        assert!(
            fast > 300 && serde > 300 && refused > 300,
            "{fast} {serde} {refused}"
        );
    }

    /// cleo-v1 reads three params keys, exit codes and metadata: the bench's line is taken,
    /// its `taskId` param, duration and error left out; values of any kind in unkept fields
    /// are skipped, and what the skim does not vouch for is serde's, error or warning alike.
    #[test]
    fn a_line_read_for_cleo_v1_keeps_what_cleo_v1_reads() {
        let pack = crate::load_pack("cleo-v1", &[]).unwrap();
        let (kept, checked) = (pack.projection(), pack.fields_read());
        let skim = Kept::new(&kept, checked);
        let read = |line: &str| {
            let mut notes = super::super::LineNotes::default();
            let entry = super::super::parse_line_kept(
                line.as_bytes(),
                Some(line),
                checked,
                skim,
                &mut notes,
            );
            (entry, notes)
        };
        let bench = r#"{"timestamp": "2026-03-01T00:00:25.731Z", "sessionId": "ses_1", "domain": "tasks", "operation": "show", "params": {"taskId": "T342", "title": "t"}, "result": {"success": false, "exitCode": 6, "duration": 415}, "metadata": {"source": "mcp", "gateway": "query", "taskId": "T342"}, "error": "E_GENERAL"}"#;
        assert_eq!(projected_agrees_with_serde(bench, &kept, checked), Ok(true));
        let (entry, _) = read(bench);
        let entry = entry.unwrap();
        assert_eq!(entry.params.get("taskId"), None);
        assert_eq!(entry.params.get("title"), Some(&Value::from("t")));
        assert_eq!((entry.result.exit_code, entry.result.duration), (6, 0.0));
        assert_eq!(entry.error, None);
        assert!(entry.metadata.get("gateway").is_some());
        let with = |params: &str, error: &str| {
            format!(
                r#"{{"timestamp":"2026-03-01T00:00:00Z","sessionId":"s","domain":"d","operation":"o","params":{params},"result":{{"success":true,"duration":{error}}},"error":{error}}}"#
            )
        };
        // Skipped whole, and taken.
        for (params, error) in [
            (
                r#"{"x":{"deep":[1,{"y":"\"\\\u00e9"}]},"title":"t"}"#,
                r#"[1, "a"]"#,
            ),
            (r#"{"a":[],"b":{},"c":-1.25}"#, r#"{"k":"v"}"#),
        ] {
            let line = with(params, error);
            assert_eq!(
                projected_agrees_with_serde(&line, &kept, checked),
                Ok(true),
                "{line}"
            );
        }
        // Left to serde: read alike, with the same warning.
        let lone = with(r#"{"title":"t"}"#, r#""\ud83d""#);
        assert_eq!(
            projected_agrees_with_serde(&lone, &kept, checked),
            Ok(false)
        );
        assert!(read(&lone).1.lone_surrogate);
        // Refused alike, with serde's words.
        for (params, error) in [
            (r#"{"x":[1,}"#, "1"),
            (r#"{"x":1}"#, "1e400"),
            (r#"{"x":"a	b"}"#, "1"),
        ] {
            let line = with(params, error);
            assert_eq!(
                projected_agrees_with_serde(&line, &kept, checked),
                Ok(false),
                "{line}"
            );
            assert!(read(&line).0.is_err(), "{line}");
        }
        // Nested deeper than the skim goes: serde's (which takes this one).
        let deep = with(
            r#"{"x":1}"#,
            &format!("{}{}", "[".repeat(130), "]".repeat(130)),
        );
        assert_eq!(
            projected_agrees_with_serde(&deep, &kept, checked),
            Ok(false)
        );
        assert!(read(&deep).0.is_ok());
    }

    #[test]
    fn lines_of_the_corpus_read_for_each_pack_as_serde_reads_them() {
        let corpus = include_str!("../../../../tests/fixtures/conformance/audit.jsonl");
        for id in ["cleo-v1", "cleo-v2", "claude-code-v1", "langfuse-v1"] {
            let pack = crate::load_pack(id, &[]).unwrap();
            let (kept, checked) = (pack.projection(), pack.fields_read());
            for line in corpus.lines() {
                projected_agrees_with_serde(line, &kept, checked).unwrap();
            }
        }
    }
}
