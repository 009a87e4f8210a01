//! The first pass of a streamed read: each line's `sessionId`, mostly found by skipping the
//! values before it rather than parsing the line.

use std::borrow::Cow;
use std::fmt;

use rustc_hash::FxHashMap;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::chunks::{is_blank, lines};

/// The sessions of some lines with their number of lines, in order of first line. The ids
/// are copied out of the lines, one after the other in one text, so that the counts outlive
/// the chunk they were read from: a chunk's counts are added to the session table while the
/// next chunk is counted, its buffer already reused.
pub(super) struct SessionCounts {
    /// Every session's id, one after the other.
    ids: String,
    /// Where each session's id ends in `ids`, and its number of lines.
    sessions: Vec<(u32, u32)>,
    /// The lines whose session cannot be read (the second pass reports or skips them).
    pub unreadable: u64,
    /// All the lines, blank ones too.
    pub lines: u64,
}

impl SessionCounts {
    /// Each session's id with its number of lines, in order of first line.
    pub(super) fn sessions(&self) -> impl Iterator<Item = (&str, u32)> + '_ {
        let mut start = 0;
        self.sessions.iter().map(move |&(end, n)| {
            let end = end as usize;
            // Each end was the text's length after an id was pushed whole: a boundary.
            let id = self.ids.get(start..end).unwrap_or_default();
            start = end;
            (id, n)
        })
    }
}

/// The sessions of a piece's lines with their number of lines, in order of first line.
pub(super) fn count_sessions(piece: &[u8]) -> SessionCounts {
    let mut ids = String::new();
    let mut sessions: Vec<(u32, u32)> = Vec::new();
    let mut unreadable = 0;
    let mut count = 0;
    let mut index: FxHashMap<Cow<'_, str>, usize> = FxHashMap::default();
    for line in lines(piece) {
        count += 1;
        if is_blank(line) {
            continue;
        }
        let Some(id) = session_of(line) else {
            unreadable += 1;
            continue;
        };
        match index.get(&id) {
            Some(&i) => sessions[i].1 += 1,
            None => {
                ids.push_str(&id);
                // A piece is at most a few hundred KiB past its last line's start, and a
                // line at most `MAX_LINE_BYTES`: its ids fit in `u32`.
                sessions.push((ids.len() as u32, 1));
                index.insert(id, sessions.len() - 1);
            }
        }
    }
    SessionCounts {
        ids,
        sessions,
        unreadable,
        lines: count,
    }
}

/// The `sessionId` of a line, as the full parse will read it: the last, when the key is
/// repeated (as JavaScript's `JSON.parse` keeps it, and [`super::repeated`] reads the line).
/// For a line that is no JSON, the last one readable.
pub(super) fn session_of(line: &[u8]) -> Option<Cow<'_, str>> {
    let so_far = match skim_session_id(line) {
        Ok(id) => return Some(id),
        Err(so_far) => so_far,
    };
    match serde_json::from_slice::<LastSession>(line) {
        Ok(LastSession(id)) => id.map(Cow::Owned),
        // Read as the full parse reads it, with U+FFFD for a lone surrogate (its own id's
        // too): a line counted in no session and then graded in one is a changed log.
        Err(_) => match crate::json::lone_surrogates_replaced(line) {
            Some(fixed) => session_of(&fixed).map(|id| Cow::Owned(id.into_owned())),
            None => so_far,
        },
    }
}

/// Whether the full parse takes `line` (`Ok(false)` when it refuses it, whichever fields a
/// pack reads), and, when it does, that the first pass found the session its entry lands
/// in (`Err` says how they differ): a line counted in one session and graded in another is
/// lost from both. What the property tests and the `cleo_line` fuzz target check.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn skim_agrees_with_parse(line: &str) -> Result<bool, String> {
    use crate::field::FieldsRead;
    let skimmed = session_of(line.as_bytes());
    let mut parsed = false;
    for reads in [FieldsRead::ALL, FieldsRead::NONE] {
        let Ok(entry) =
            super::parse_line(line.as_bytes(), Some(line), reads, &mut Default::default())
        else {
            continue;
        };
        parsed = true;
        if skimmed.as_deref() != Some(&*entry.session_id) {
            return Err(format!(
                "{line:?}\nskim:  {skimmed:?}\nparse: {:?}",
                entry.session_id
            ));
        }
    }
    Ok(parsed)
}

/// The last top-level `sessionId` of an object, when it is a string.
struct LastSession(Option<String>);

impl<'de> Deserialize<'de> for LastSession {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct LastVisitor;
        impl<'de> Visitor<'de> for LastVisitor {
            type Value = LastSession;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LastSession, A::Error> {
                let mut last = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == "sessionId" {
                        last = Some(map.next_value::<Value>()?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(LastSession(match last {
                    Some(Value::String(id)) => Some(id),
                    _ => None,
                }))
            }
        }
        d.deserialize_map(LastVisitor)
    }
}

/// Finds the last top-level `"sessionId"` of a line by skipping the values around it,
/// without validating the line. When anything is unusual (escapes in keys, odd nesting, a
/// `sessionId` that is not a string, a line cut off) the caller parses the line properly,
/// and is given the last `sessionId` found before, for a line that does not parse.
fn skim_session_id(line: &[u8]) -> Result<Cow<'_, str>, Option<Cow<'_, str>>> {
    let mut s = Skim { b: line, i: 0 };
    // Where the last string value of the key starts, and its raw content.
    let mut found: Option<(usize, &[u8])> = None;
    let whole = (|| {
        s.ws();
        s.eat(b'{')?;
        loop {
            s.ws();
            let key = s.string()?;
            s.ws();
            s.eat(b':')?;
            s.ws();
            if key == b"sessionId" {
                let start = s.i;
                let raw = s.string()?;
                let first = found.is_none();
                found = Some((start, raw));
                // Nearly every line names its session once, early: the rest is skipped
                // unless it could hold the key again.
                if first && !may_hold_session_key(&line[s.i..]) {
                    return Some(());
                }
            } else if key.contains(&b'\\') {
                return None;
            } else {
                s.skip_value()?;
            }
            s.ws();
            if s.eat(b'}').is_some() {
                return Some(());
            }
            s.eat(b',')?;
        }
    })();
    let id = found.and_then(|(start, raw)| {
        if raw.contains(&b'\\') {
            serde_json::from_slice::<String>(&line[start..start + raw.len() + 2])
                .ok()
                .map(Cow::Owned)
        } else {
            std::str::from_utf8(raw).ok().map(Cow::Borrowed)
        }
    });
    match (whole, id) {
        (Some(()), Some(id)) => Ok(id),
        (_, id) => Err(id),
    }
}

/// Whether `rest` of a line could hold a `sessionId` key, spelled out or with `\u` escapes.
fn may_hold_session_key(rest: &[u8]) -> bool {
    // One pass for both, stopping at each `I` (every `taskId` has one) and escape: as fast
    // as a substring search here, and both cost about what the skim before them does.
    memchr::memchr2_iter(b'I', b'\\', rest).any(|at| match rest[at] {
        b'I' => at >= 7 && &rest[at - 7..at] == b"session" && rest.get(at + 1) == Some(&b'd'),
        _ => rest.get(at + 1) == Some(&b'u'),
    })
}

/// A cursor over a line's bytes that steps over JSON without checking it.
pub(super) struct Skim<'a> {
    pub(super) b: &'a [u8],
    pub(super) i: usize,
}

impl<'a> Skim<'a> {
    pub(super) fn ws(&mut self) {
        while self
            .b
            .get(self.i)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.i += 1;
        }
    }
    pub(super) fn eat(&mut self, c: u8) -> Option<()> {
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }
    /// A string's raw content (escapes left as they are).
    pub(super) fn string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        loop {
            let at = self.i + memchr::memchr2(b'"', b'\\', &self.b[self.i..])?;
            if self.b[at] == b'\\' {
                self.i = at + 2;
                if self.i > self.b.len() {
                    return None;
                }
            } else {
                self.i = at + 1;
                return Some(&self.b[start..at]);
            }
        }
    }
    pub(super) fn skip_value(&mut self) -> Option<()> {
        match *self.b.get(self.i)? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match *self.b.get(self.i)? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
            }
            _ => {
                while self.b.get(self.i).is_some_and(|c| {
                    !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.i += 1;
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The session check of the `cleo_line` fuzz target: it holds on the lines the parse
    /// takes, a repeated or escaped key included, and passes over those it refuses.
    #[test]
    fn the_skim_and_the_parse_agree_on_the_session_of_each_line_the_parse_takes() {
        let rest = r#""timestamp": "2026-03-01T09:00:00.000Z", "domain": "tasks", "operation": "add", "params": {"title": "a"}, "result": {"success": true, "exitCode": 0, "duration": 20}, "metadata": {"source": "mcp"}"#;
        for line in [
            format!(r#"{{"sessionId": "s1", {rest}}}"#),
            format!(r#"{{{rest}, "sessionId": "s1"}}"#),
            format!(r#"{{"sessionId": "s0", {rest}, "sessionId": "s1"}}"#),
            format!(r#"{{"session\u0049d": "s1", {rest}}}"#),
            format!(r#"{{"sessionId": "s\u00e91", {rest}}}"#),
        ] {
            assert_eq!(skim_agrees_with_parse(&line), Ok(true), "{line}");
        }
        for line in [
            "not json".to_owned(),
            format!(r#"{{"sessionId": 5, {rest}}}"#),
            format!(r#"{{"sessionId": "s1", {rest}"#),
        ] {
            assert_eq!(skim_agrees_with_parse(&line), Ok(false), "{line}");
        }
    }

    #[test]
    fn the_skim_finds_the_session_the_parse_reads() {
        let cases: &[(&[u8], Option<&str>)] = &[
            (br#"{"timestamp": "t", "sessionId": "s1", "domain": "d"}"#, Some("s1")),
            (br#"{"params": {"sessionId": "inner", "a": [1, {"b": "}"}]}, "sessionId": "outer"}"#, Some("outer")),
            (br#"{"x": "a\"sessionId\": \"no", "sessionId": "yes"}"#, Some("yes")),
            (br#"{"sessionId": "a\u00e9b"}"#, Some("a\u{e9}b")),
            (br#"  {"n": -1.5e3, "b": true, "z": null, "sessionId":"s"}"#, Some("s")),
            (br#"{"session\u0049d": "escaped-key"}"#, Some("escaped-key")),
            (br#"{"timestamp": "t"}"#, None),
            (br#"not json"#, None),
            // A repeated key: the last value, as the parse keeps it.
            (br#"{"sessionId": "a", "domain": "d", "sessionId": "b", "x": 1}"#, Some("b")),
            (br#"{"sessionId": "a", "session\u0049d": "b"}"#, Some("b")),
            (br#"{"session\u0049d": "a", "sessionId": "b"}"#, Some("b")),
            (br#"{"sessionId": "a", "params": {"q": "caf\u00e9"}, "sessionId": "b\u00e9"}"#, Some("b\u{e9}")),
            (br#"{"sessionId": 5, "sessionId": "b"}"#, Some("b")),
            (br#"{"sessionId": "a", "sessionId": 5}"#, None),
            // A line cut off: the last one readable.
            (br#"{"sessionId": "a", "params": {"q": "caf\u00e9"#, Some("a")),
            (br#"{"sessionId": "a", "sessionId": "b", "domain": "ta"#, Some("b")),
        ];
        for (line, want) in cases {
            assert_eq!(
                session_of(line).as_deref(),
                *want,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }
}
