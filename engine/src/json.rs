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
