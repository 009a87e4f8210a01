//! Lines whose object repeats a field of the entry. CLEO's grader reads each line with
//! JavaScript's `JSON.parse`, and the conformance corpus's converter with Python's
//! `json.loads`: both keep a repeated key's last value, where serde refuses the field. Such a
//! line is read again with the earlier occurrences blanked out.
//!
//! Only a line serde refuses is looked at, so a line without repeats costs nothing more.

use serde::de::IgnoredAny;

use super::skim::Skim;

/// The entry's fields, each with its name in a warning: serde refuses a repeat of any.
const FIELDS: &[(&str, &str)] = &[
    ("timestamp", "timestamp"),
    ("sessionId", "sessionId"),
    ("domain", "domain"),
    ("operation", "operation"),
    ("params", "params"),
    ("result", "result"),
    ("metadata", "metadata"),
    ("error", "error"),
];
const RESULT: usize = 5;

/// The fields of `result`, which serde refuses a repeat of too.
const RESULT_FIELDS: &[(&str, &str)] = &[
    ("success", "result.success"),
    ("exitCode", "result.exitCode"),
    ("duration", "result.duration"),
];

/// `line` with every occurrence but the last of each repeated entry field (at the top level,
/// or in the last `result`) blanked to spaces, and the repeated field that comes first.
/// Blanking keeps every other byte where it was, so an error's column still points into
/// the line as written. `None` when the line is no JSON object (JavaScript would refuse it
/// whole) or repeats no entry field.
pub(super) fn keep_last(line: &[u8]) -> Option<(Vec<u8>, &'static str)> {
    serde_json::from_slice::<IgnoredAny>(line).ok()?;
    let mut s = Skim { b: line, i: 0 };
    s.ws();
    let top = members(line, s.i, FIELDS)?;
    let mut out = line.to_vec();
    let mut first = None;
    blank_repeats(&mut out, &top, FIELDS, &mut first);
    if let Some(result) = top.iter().rev().find(|m| m.field == Some(RESULT)) {
        if line.get(result.value) == Some(&b'{') {
            let inner = members(line, result.value, RESULT_FIELDS)?;
            blank_repeats(&mut out, &inner, RESULT_FIELDS, &mut first);
        }
    }
    first.map(|(_, name)| (out, name))
}

/// A member of an object: the field of `fields` its key is, where the member starts (its
/// key's quote), where its value starts, and where the member ends (after its comma).
struct Member {
    field: Option<usize>,
    start: usize,
    value: usize,
    end: usize,
}

/// The members of the object at `at` of `line`, which is valid JSON.
fn members(line: &[u8], at: usize, fields: &[(&str, &str)]) -> Option<Vec<Member>> {
    let mut s = Skim { b: line, i: at };
    s.eat(b'{')?;
    let mut out = Vec::new();
    s.ws();
    if s.eat(b'}').is_some() {
        return Some(out);
    }
    loop {
        s.ws();
        let start = s.i;
        let raw = s.string()?;
        let field = field_of(raw, &line[start..s.i], fields);
        s.ws();
        s.eat(b':')?;
        s.ws();
        let value = s.i;
        s.skip_value()?;
        s.ws();
        let more = s.eat(b',').is_some();
        out.push(Member {
            field,
            start,
            value,
            end: s.i,
        });
        if !more {
            s.eat(b'}')?;
            return Some(out);
        }
    }
}

/// Which of `fields` a key is, by its raw content and its text with quotes; escapes
/// (`"session\u0049d"`) are read as serde reads them.
fn field_of(raw: &[u8], quoted: &[u8], fields: &[(&str, &str)]) -> Option<usize> {
    let decoded;
    let key = if raw.contains(&b'\\') {
        decoded = serde_json::from_slice::<String>(quoted).ok()?;
        decoded.as_bytes()
    } else {
        raw
    };
    fields.iter().position(|(k, _)| k.as_bytes() == key)
}

/// Blanks in `out` every member of a field of `fields` but the field's last; `first` keeps
/// the blanked member that starts first, and its field's name.
fn blank_repeats(
    out: &mut [u8],
    members: &[Member],
    fields: &[(&str, &'static str)],
    first: &mut Option<(usize, &'static str)>,
) {
    let mut last = vec![None; fields.len()];
    for (i, m) in members.iter().enumerate() {
        if let Some(f) = m.field {
            last[f] = Some(i);
        }
    }
    for (i, m) in members.iter().enumerate() {
        let Some(f) = m.field else { continue };
        if last[f] == Some(i) {
            continue;
        }
        // Not the last member, so `end` is after its comma: what is left is still an object.
        out[m.start..m.end].fill(b' ');
        if first.is_none_or(|(at, _)| m.start < at) {
            *first = Some((m.start, fields[f].1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(line: &str) -> Option<(String, &'static str)> {
        keep_last(line.as_bytes()).map(|(out, key)| (String::from_utf8(out).unwrap(), key))
    }

    #[test]
    fn earlier_occurrences_are_blanked_in_place_and_the_first_repeated_field_is_named() {
        let line = r#"{"a": 1, "sessionId": "x", "domain": "d", "session\u0049d": "y", "result": {"success": true, "success": false, "o": 1}, "domain": "e"}"#;
        let (out, key) = kept(line).unwrap();
        assert_eq!(out.len(), line.len());
        assert_eq!(key, "sessionId");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v, serde_json::from_str::<serde_json::Value>(line).unwrap());
        assert!(!out.contains(r#""sessionId": "x""#), "{out}");
        assert!(!out.contains(r#""domain": "d""#), "{out}");
        assert!(!out.contains(r#""success": true"#), "{out}");
        assert_eq!(out.find(r#""a": 1"#), line.find(r#""a": 1"#));
        assert_eq!(out.find(r#""domain": "e""#), line.find(r#""domain": "e""#));
    }

    #[test]
    fn a_repeat_only_in_result_is_named_with_its_path() {
        let line = r#"{"result": {"exitCode": 1, "success": true, "exitCode": 2}}"#;
        let (out, key) = kept(line).unwrap();
        assert_eq!(key, "result.exitCode");
        assert_eq!(
            out,
            r#"{"result": {               "success": true, "exitCode": 2}}"#
        );
    }

    #[test]
    fn lines_without_repeated_entry_fields_or_that_are_no_json_are_left_alone() {
        for line in [
            r#"{"sessionId": "a", "x": 1, "x": 2, "params": {"p": 1, "p": 2}}"#,
            r#"{"result": {"success": true, "success": true}, "result": {"success": true}}x"#,
            r#"{"sessionId": "a", "sessionId": "b""#,
            r#"["sessionId", "sessionId"]"#,
            "\u{feff}{\"sessionId\": \"a\", \"sessionId\": \"b\"}",
        ] {
            assert_eq!(kept(line), None, "{line}");
        }
        // Only the last `result` counts; an earlier one is blanked whole.
        let line =
            r#"{"result": {"success": true, "success": true}, "result": {"success": false}}"#;
        let (out, key) = kept(line).unwrap();
        assert_eq!(key, "result");
        assert_eq!(
            out.trim_start_matches(['{', ' ']),
            r#""result": {"success": false}}"#
        );
    }
}
