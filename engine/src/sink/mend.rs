//! What a file about to be appended to as a grades file holds: only grades, one per line,
//! and at most a torn last line (a write cut off by a crash), which may be cut before
//! appending. Any other file (notes, a shell rc file, an audit log) is not a grades file:
//! appending is refused, and nothing is cut from it.

use std::io::{BufRead, Read};

use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

/// The longest line read as a grade: a source's line cap. A longer line is not a grade
/// `grade` wrote, and is not held whole to find that out.
pub(crate) const MAX_GRADE_LINE: u64 = 64 << 20;

/// How a grades file ends, when every line of it is a grade.
#[derive(Debug, PartialEq)]
pub(crate) enum Tail {
    /// Empty, or ending in a line end.
    Whole,
    /// A last line that is a grade but lacks its line end (an editor dropped it).
    NoLineEnd,
    /// This many bytes of a grade line that never got its end: a write cut off.
    Torn(u64),
}

/// The first line of a file that is not a grade, and why.
#[derive(Debug, PartialEq)]
pub(crate) struct NotAGrade {
    /// Its number, from 1.
    pub(crate) line: u64,
    /// Why it is not a grade.
    pub(crate) why: String,
}

/// Where a check of a file ended: after the last line end it read.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Checked {
    /// The offset just past the last line end.
    pub(crate) offset: u64,
    /// The lines that end there.
    pub(crate) lines: u64,
}

/// Why a recorded line is no grade, if it is not. A `sessionId` alone does not make one: an
/// audit log's entries have it too, and `--grades` given the log instead of the grades file
/// would list every entry as a grade with no score.
pub fn not_a_grade(value: &Value) -> Option<String> {
    let Some(obj) = value.as_object() else {
        return Some("an object with a `sessionId` was expected".to_owned());
    };
    missing_keys(|k| obj.contains_key(k))
}

fn missing_keys(has: impl Fn(&str) -> bool) -> Option<String> {
    let missing: Vec<String> = GRADE_KEYS
        .into_iter()
        .filter(|k| !has(k))
        .map(|k| format!("`{k}`"))
        .collect();
    match missing.as_slice() {
        [] => None,
        [one] => Some(format!("missing field {one}")),
        _ => Some(format!("missing fields {}", missing.join(", "))),
    }
}

const GRADE_KEYS: [&str; 3] = ["sessionId", "totalScore", "maxScore"];

/// Whether a line is a grade, without building it: a JSON object holding the keys of one.
/// Every line of a grades file is checked before each append, so this skips values rather
/// than building a tree of each (a tenth of the time).
fn quick_grade(line: &[u8]) -> bool {
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = u8;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u8, A::Error> {
            let mut seen = 0u8;
            while let Some(key) = map.next_key::<Key>()? {
                seen |= key.0;
                map.next_value::<IgnoredAny>()?;
            }
            Ok(seen)
        }
    }
    struct Key(u8);
    impl<'de> serde::Deserialize<'de> for Key {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
            struct Name;
            impl Visitor<'_> for Name {
                type Value = Key;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a key")
                }
                fn visit_str<E>(self, key: &str) -> Result<Key, E> {
                    Ok(Key(GRADE_KEYS
                        .iter()
                        .position(|k| *k == key)
                        .map_or(0, |i| 1 << i)))
                }
            }
            d.deserialize_str(Name)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(line);
    matches!(de.deserialize_map(Keys), Ok(0b111)) && de.end().is_ok()
}

/// Why `line` (without its line end) is not a grade, if it is not: read as `--list` reads a
/// line (a lone surrogate is no fault).
fn line_is_not_a_grade(line: &[u8]) -> Option<String> {
    if quick_grade(line) {
        return None;
    }
    match crate::json::from_slice_lenient::<Value>(line) {
        Ok((value, _)) => not_a_grade(&value),
        Err(e) => Some(format!("not JSON at column {}", e.column())),
    }
}

/// Whether `line` is blank, as the readers of grades files skip it.
fn blank(line: &[u8]) -> bool {
    std::str::from_utf8(line).is_ok_and(|text| text.trim().is_empty())
}

/// Whether a last line without its line end is a grade line cut short: the start of a JSON
/// object that is not finished, whose bytes so far are all valid.
fn cut_short(line: &[u8]) -> bool {
    let opens = line
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{');
    opens
        && match crate::json::from_slice_lenient::<IgnoredAny>(line) {
            Ok(_) => false,
            Err(e) => e.is_eof(),
        }
}

/// Checks the lines of a grades file read from `from` (which is at `at` in it, after the
/// line end of line `at.lines`), to its end. Every line must be a grade (blank lines aside);
/// a last line without its line end may be a grade or a grade line cut short.
pub(crate) fn check(from: &mut impl BufRead, at: Checked) -> Result<(Tail, Checked), NotAGrade> {
    let mut checked = at;
    let mut line = Vec::new();
    loop {
        line.clear();
        let number = checked.lines + 1;
        let read = from
            .by_ref()
            .take(MAX_GRADE_LINE + 1)
            .read_until(b'\n', &mut line);
        let fail = |why: String| NotAGrade { line: number, why };
        match read {
            Err(e) => return Err(fail(format!("cannot be read: {e}"))),
            Ok(0) => return Ok((Tail::Whole, checked)),
            Ok(_) => {}
        }
        let ended = line.last() == Some(&b'\n');
        if !ended && line.len() as u64 > MAX_GRADE_LINE {
            return Err(fail(format!("longer than {} MiB", MAX_GRADE_LINE >> 20)));
        }
        let mut text: &[u8] = &line;
        if number == 1 {
            // A byte-order mark (an editor on Windows saves one) is no part of the line.
            text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
        }
        if ended {
            text = &text[..text.len() - 1];
            text = text.strip_suffix(b"\r").unwrap_or(text);
        }
        if !blank(text) {
            if let Some(why) = line_is_not_a_grade(text) {
                if ended || !cut_short(text) {
                    return Err(fail(why));
                }
                return Ok((Tail::Torn(line.len() as u64), checked));
            }
        }
        if !ended {
            return Ok((Tail::NoLineEnd, checked));
        }
        checked = Checked {
            offset: checked.offset + line.len() as u64,
            lines: number,
        };
    }
}

/// [`check`] over a whole file's bytes.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn check_bytes(bytes: &[u8]) -> Result<Tail, NotAGrade> {
    check(&mut std::io::Cursor::new(bytes), Checked::default()).map(|(tail, _)| tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRADE: &str = r#"{"sessionId":"s","totalScore":1,"maxScore":2,"flags":["T\ud83d"]}"#;

    #[test]
    fn only_a_file_of_grades_is_a_grades_file() {
        let g = GRADE;
        assert_eq!(check_bytes(b""), Ok(Tail::Whole));
        assert_eq!(
            check_bytes(format!("{g}\n\n{g}\r\n").as_bytes()),
            Ok(Tail::Whole)
        );
        assert_eq!(
            check_bytes(format!("\u{feff}{g}\n{g}").as_bytes()),
            Ok(Tail::NoLineEnd)
        );
        let torn = r#"{"sessionId":"s","tot"#;
        assert_eq!(
            check_bytes(format!("{g}\n{torn}").as_bytes()),
            Ok(Tail::Torn(torn.len() as u64))
        );
        let refused = |text: &str| check_bytes(text.as_bytes()).unwrap_err();
        let notes = refused("# notes\nsome text\nlast line no end");
        assert_eq!(notes.line, 1);
        assert_eq!(notes.why, "not JSON at column 1");
        // Only the last line may be cut short, and only a grade line is.
        assert_eq!(refused(&format!("{torn}\n{g}\n")).line, 1);
        assert_eq!(refused(&format!("{g}\nlast line")).line, 2);
        assert_eq!(refused(&format!("{g}\n{{\"a\":1}}")).line, 2);
        assert_eq!(refused(&format!("{g}\n[1, 2")).line, 2);
        let entry = refused(&format!("{g}\n{{\"sessionId\":\"s\",\"op\":\"x\"}}\n"));
        assert_eq!(entry.line, 2);
        assert_eq!(entry.why, "missing fields `totalScore`, `maxScore`");
        assert_eq!(
            refused("[\"sessionId\",\"totalScore\",\"maxScore\"]\n").why,
            "an object with a `sessionId` was expected"
        );
    }
}
