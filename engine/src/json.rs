//! JSON text written and read by hand where serde_json's general path was a measurable
//! share of a run: finding the bytes a JSON string cannot hold as they are, and writing a
//! string exactly as `serde_json` escapes it.

/// Where the first quote, backslash or control character of `bytes` is: the end of a
/// string being read, or the next byte a string being written must escape. Eight bytes at a
/// time, since the byte-by-byte scan was a third of the CLEO line reader's time.
#[inline]
pub(crate) fn special_byte(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // A byte of `w` below `n` sets its high bit here; only bytes above the first one that
    // does can be set wrongly (a borrow), so the lowest set bit is always right.
    let below = |w: u64, n: u8| w.wrapping_sub(ONES * u64::from(n)) & !w & HIGHS;
    let mut at = 0;
    while let Some(word) = bytes.get(at..at + 8) {
        let mut eight = [0; 8];
        eight.copy_from_slice(word);
        let w = u64::from_le_bytes(eight);
        let found = below(w ^ (ONES * u64::from(b'"')), 1)
            | below(w ^ (ONES * u64::from(b'\\')), 1)
            | below(w, 0x20);
        if found != 0 {
            return Some(at + found.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    let tail = bytes.get(at..)?;
    tail.iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|i| at + i)
}

/// Appends `text` as a JSON string, byte for byte as `serde_json` writes it: `"` and `\`
/// escaped, the control characters with a short escape as such (`\n`) and the others as
/// `\u00XX` in lowercase hex, everything else (non-ASCII too) as it is.
pub(crate) fn write_str(out: &mut Vec<u8>, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(text.len() + 2);
    out.push(b'"');
    let mut rest = text.as_bytes();
    while let Some(at) = special_byte(rest) {
        let (plain, tail) = rest.split_at(at);
        out.extend_from_slice(plain);
        // `special_byte` finds a byte of `rest`, so `tail` starts with it.
        let Some((&byte, tail)) = tail.split_first() else {
            rest = tail;
            break;
        };
        match byte {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\x08' => out.extend_from_slice(b"\\b"),
            b'\x0c' => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]),
        }
        rest = tail;
    }
    out.extend_from_slice(rest);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4_000))]

        /// Eight bytes at a time finds what one at a time finds, whatever the bytes around.
        #[test]
        fn the_word_scan_finds_the_first_special_byte(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\\'), 0u8..0x21, 0x7fu8..=0xff, any::<u8>()],
                0..40,
            ),
            skip in 0usize..8,
        ) {
            let bytes = bytes.get(skip..).unwrap_or_default();
            let naive = bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
            prop_assert_eq!(special_byte(bytes), naive);
        }

        /// A string is written as serde_json writes it, escapes and all.
        #[test]
        fn a_string_is_written_as_serde_json_writes_it(
            text in proptest::collection::vec(
                prop_oneof![
                    Just('"'), Just('\\'), Just('\u{7f}'), Just('é'), Just('😀'),
                    proptest::char::range('\0', ' '), any::<char>(),
                    proptest::char::range('a', 'z'),
                ],
                0..40,
            ).prop_map(|chars| chars.into_iter().collect::<String>())
        ) {
            let mut ours = Vec::new();
            write_str(&mut ours, &text);
            prop_assert_eq!(ours, serde_json::to_vec(&text).unwrap());
        }
    }

    #[test]
    fn every_control_character_is_escaped_as_serde_json_escapes_it() {
        for byte in 0u8..0x80 {
            let text = char::from(byte).to_string();
            let mut ours = Vec::new();
            write_str(&mut ours, &text);
            assert_eq!(ours, serde_json::to_vec(&text).unwrap(), "byte {byte:#x}");
        }
    }
}

/// Appends `pretty` (serde_json's pretty printing of a value at the top level) to `out` as
/// the same value nested `indent` deeper: `indent` before each of its lines. Exact, because
/// pretty printing breaks lines only between tokens, never inside a string, where JSON
/// escapes a line break.
pub(crate) fn push_indented(out: &mut Vec<u8>, pretty: &[u8], indent: &[u8]) {
    out.reserve(pretty.len() + pretty.len() / 8);
    let mut start = 0;
    out.extend_from_slice(indent);
    for end in memchr::memchr_iter(b'\n', pretty) {
        out.extend_from_slice(&pretty[start..=end]);
        out.extend_from_slice(indent);
        start = end + 1;
    }
    out.extend_from_slice(&pretty[start..]);
}

/// What a source says of lines it read with [`lone_surrogates_replaced`].
pub(crate) const LONE_SURROGATE_READ: &str = "a string holds a lone UTF-16 surrogate (an escape such as `\\ud83d` without its other half, which JavaScript writes for a string cut inside a character); text cannot hold one, so it is read as U+FFFD (\u{fffd}): two texts that differ only there read as equal, and a message that prints one shows U+FFFD";

/// The warning of a source that read `count` lines (or rows: `unit`) with
/// [`lone_surrogates_replaced`].
pub(crate) fn lone_surrogates_read(count: u64, unit: &str) -> String {
    let plural = if count == 1 { "" } else { "s" };
    format!("{LONE_SURROGATE_READ} ({count} {unit}{plural})")
}

/// serde_json's reading of `json`, and `false`; or, where that fails and `json` holds a lone
/// surrogate, the reading of it with U+FFFD in the surrogate's place, and `true`.
pub(crate) fn from_slice_lenient<T: serde::de::DeserializeOwned>(
    json: &[u8],
) -> Result<(T, bool), serde_json::Error> {
    match serde_json::from_slice(json) {
        Ok(value) => Ok((value, false)),
        Err(err) => match lone_surrogates_replaced(json) {
            Some(fixed) => serde_json::from_slice(&fixed).map(|value| (value, true)),
            None => Err(err),
        },
    }
}

/// `json` with each `\u` escape of a lone UTF-16 surrogate (a high one not followed by the
/// escape of a low one, or a low one alone) replaced by `\ufffd`, of the same length; `None`
/// when it holds none. JSON allows them and serde_json refuses them; JavaScript's
/// `JSON.stringify` writes one for a string cut between the two halves of a character.
pub(crate) fn lone_surrogates_replaced(json: &[u8]) -> Option<Vec<u8>> {
    fn escape_at(json: &[u8], at: usize) -> Option<u16> {
        let hex = json.get(at..at + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' {
            return None;
        }
        let text = std::str::from_utf8(&hex[2..]).ok()?;
        u16::from_str_radix(text, 16).ok()
    }
    let mut fixed: Option<Vec<u8>> = None;
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'\\', &json[at..]) {
        let here = at + found;
        match escape_at(json, here) {
            Some(0xD800..=0xDBFF) if matches!(escape_at(json, here + 6), Some(0xDC00..=0xDFFF)) => {
                at = here + 12;
            }
            Some(0xD800..=0xDFFF) => {
                let out = fixed.get_or_insert_with(|| json.to_vec());
                out[here..here + 6].copy_from_slice(b"\\ufffd");
                at = here + 6;
            }
            // Any other escape is two bytes or more; skipping two is enough to step past an
            // escaped backslash, which must not start an escape of its own.
            _ => at = here + 2,
        }
        if at >= json.len() {
            break;
        }
    }
    fixed
}

#[cfg(test)]
mod lone_surrogate_tests {
    use super::lone_surrogates_replaced;

    fn fixed(json: &str) -> Option<String> {
        lone_surrogates_replaced(json.as_bytes()).map(|v| String::from_utf8(v).unwrap())
    }

    #[test]
    fn lone_surrogates_become_the_replacement_character_and_pairs_stay() {
        assert_eq!(
            fixed(r#"{"a":"\ud83d"}"#).as_deref(),
            Some(r#"{"a":"\ufffd"}"#)
        );
        assert_eq!(
            fixed(r#"{"a":"x\udc00y"}"#).as_deref(),
            Some(r#"{"a":"x\ufffdy"}"#)
        );
        assert_eq!(
            fixed(r#"["\ud83d\ud83d\ude00","\uDBFF"]"#).as_deref(),
            Some(r#"["\ufffd\ud83d\ude00","\ufffd"]"#)
        );
        assert_eq!(fixed(r#"{"a":"\ud83d\ude00"}"#), None);
        // An escaped backslash before `ud83d` is text, not an escape.
        assert_eq!(fixed(r#"{"a":"\\ud83d"}"#), None);
        assert_eq!(fixed(r#"{"a":"\n\u0041"}"#), None);
        assert_eq!(fixed("\\"), None);
        for text in [r#"{"a":"\ud83d"}"#, r#"["\udfff","\ud800x"]"#] {
            let value: serde_json::Value =
                serde_json::from_slice(&lone_surrogates_replaced(text.as_bytes()).unwrap())
                    .unwrap();
            assert!(value.to_string().contains('\u{fffd}'), "{value}");
        }
    }
}
