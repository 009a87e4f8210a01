//! The first pass of a streamed read: each line's `sessionId`, mostly found by skipping the
//! values before it rather than parsing the line.

use std::borrow::Cow;

use rustc_hash::FxHashMap;
use serde::Deserialize;

use super::chunks::{is_blank, lines};

/// The sessions of some lines with their number of lines, in order of first line, and the
/// number of lines whose session cannot be read.
pub(super) type SessionCounts<'a> = (Vec<(Cow<'a, str>, u32)>, u64);

/// The sessions of a piece's lines with their number of lines, in order of first line, and
/// the number of lines whose session cannot be read (the second pass reports or skips them).
pub(super) fn count_sessions(piece: &[u8]) -> SessionCounts<'_> {
    let mut out: Vec<(Cow<'_, str>, u32)> = Vec::new();
    let mut unreadable = 0;
    let mut index: FxHashMap<Cow<'_, str>, usize> = FxHashMap::default();
    for line in lines(piece) {
        if is_blank(line) {
            continue;
        }
        let Some(id) = session_of(line) else {
            unreadable += 1;
            continue;
        };
        match index.get(&id) {
            Some(&i) => out[i].1 += 1,
            None => {
                index.insert(id.clone(), out.len());
                out.push((id, 1));
            }
        }
    }
    (out, unreadable)
}

/// The `sessionId` of a line, as the full parse will read it.
pub(super) fn session_of(line: &[u8]) -> Option<Cow<'_, str>> {
    if let Some(id) = skim_session_id(line) {
        return Some(id);
    }
    #[derive(Deserialize)]
    struct OnlySession<'a> {
        #[serde(borrow, rename = "sessionId")]
        session_id: Cow<'a, str>,
    }
    serde_json::from_slice::<OnlySession<'_>>(line)
        .ok()
        .map(|s| s.session_id)
}

/// Finds the top-level `"sessionId"` of a line by skipping the values before it, without
/// validating the line. `None` when anything is unusual (escapes in keys, odd nesting): the
/// caller then parses the line properly.
fn skim_session_id(line: &[u8]) -> Option<Cow<'_, str>> {
    let mut s = Skim { b: line, i: 0 };
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
            return if raw.contains(&b'\\') {
                serde_json::from_slice::<String>(&line[start..s.i])
                    .ok()
                    .map(Cow::Owned)
            } else {
                std::str::from_utf8(raw).ok().map(Cow::Borrowed)
            };
        }
        if key.contains(&b'\\') {
            return None;
        }
        s.skip_value()?;
        s.ws();
        s.eat(b',')?;
    }
}

struct Skim<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Skim<'a> {
    fn ws(&mut self) {
        while self
            .b
            .get(self.i)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }
    /// A string's raw content (escapes left as they are).
    fn string(&mut self) -> Option<&'a [u8]> {
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
    fn skip_value(&mut self) -> Option<()> {
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
