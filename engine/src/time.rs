//! Instants of audit timestamps.
//!
//! Rules compare instants, never strings: CLEO writes ISO-8601 with `Z` or an offset,
//! and SQLite's `datetime('now')` writes `YYYY-MM-DD HH:MM:SS` in UTC. JavaScript's
//! `Date.getTime()` (what CLEO's grader compares) has millisecond resolution, so finer
//! fractions are truncated to keep `<=` between close instants identical to the reference.

use std::fmt::Write as _;

/// Milliseconds since the Unix epoch, UTC.
pub type InstantMs = i64;

/// Why a timestamp could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a timestamp (expected ISO-8601 like `2026-03-01T12:00:00Z` or `2026-03-01 12:00:00`): {reason}")]
pub struct TimestampError {
    /// The text that is not a timestamp.
    pub text: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// Parses `YYYY-MM-DD[T| ]HH:MM[:SS[.fff…]][Z|±HH:MM|±HHMM]`; no zone means UTC.
pub fn parse_timestamp(text: &str) -> Result<InstantMs, TimestampError> {
    if let Some(instant) = iso_millis_z(text.as_bytes()) {
        return Ok(instant);
    }
    let fail = |reason| TimestampError {
        text: text.to_owned(),
        reason,
    };
    let b = text.as_bytes();
    let mut cur = Cursor { b, pos: 0 };
    let year = cur
        .digits(4)
        .ok_or_else(|| fail("the year needs four digits"))?;
    cur.expect(b'-')
        .ok_or_else(|| fail("a `-` must follow the year"))?;
    let month = cur
        .digits(2)
        .ok_or_else(|| fail("the month needs two digits"))?;
    cur.expect(b'-')
        .ok_or_else(|| fail("a `-` must follow the month"))?;
    let day = cur
        .digits(2)
        .ok_or_else(|| fail("the day needs two digits"))?;
    if !(1..=12).contains(&month) {
        return Err(fail("the month is out of range"));
    }
    if day < 1 || day > days_in_month(year, month) {
        return Err(fail("the day is out of range"));
    }
    let (mut hour, mut minute, mut second, mut millis) = (0, 0, 0, 0);
    if cur.pos < b.len() {
        match b[cur.pos] {
            b'T' | b't' | b' ' => cur.pos += 1,
            _ => return Err(fail("the date must be followed by `T` or a space")),
        }
        hour = cur
            .digits(2)
            .ok_or_else(|| fail("the hour needs two digits"))?;
        cur.expect(b':')
            .ok_or_else(|| fail("a `:` must follow the hour"))?;
        minute = cur
            .digits(2)
            .ok_or_else(|| fail("the minute needs two digits"))?;
        if cur.peek() == Some(b':') {
            cur.pos += 1;
            second = cur
                .digits(2)
                .ok_or_else(|| fail("the second needs two digits"))?;
            if cur.peek() == Some(b'.') || cur.peek() == Some(b',') {
                cur.pos += 1;
                let start = cur.pos;
                let mut scale = 100;
                while let Some(d) = cur.peek().filter(u8::is_ascii_digit) {
                    millis += i64::from(d - b'0') * scale;
                    scale /= 10;
                    cur.pos += 1;
                }
                if cur.pos == start {
                    return Err(fail("a fraction of a second needs digits"));
                }
            }
        }
        if hour > 23 || minute > 59 || second > 60 {
            return Err(fail("the time of day is out of range"));
        }
    }
    let offset_minutes = match cur.peek() {
        None => 0,
        Some(b'Z' | b'z') => {
            cur.pos += 1;
            0
        }
        Some(sign @ (b'+' | b'-')) => {
            cur.pos += 1;
            let hours = cur
                .digits(2)
                .ok_or_else(|| fail("the offset needs two-digit hours"))?;
            if cur.peek() == Some(b':') {
                cur.pos += 1;
            }
            let minutes = cur
                .digits(2)
                .ok_or_else(|| fail("the offset needs two-digit minutes"))?;
            if hours > 23 || minutes > 59 {
                return Err(fail("the offset is out of range"));
            }
            let total = hours * 60 + minutes;
            if sign == b'-' {
                -total
            } else {
                total
            }
        }
        Some(_) => return Err(fail("unexpected text after the time")),
    };
    if cur.pos != b.len() {
        return Err(fail("unexpected text after the time"));
    }
    // A second of 60 is a leap second, which only ever ends a UTC day; at any other minute
    // it names no instant, and reading it as the next minute would be a guess.
    if second == 60 && (hour * 60 + minute - offset_minutes).rem_euclid(1_440) != 1_439 {
        return Err(fail(
            "a second of 60 is a leap second, which only ends a UTC day (`23:59:60Z`)",
        ));
    }
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset_minutes * 60;
    Ok(seconds * 1_000 + millis)
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`, what JavaScript's `toISOString()` writes and so nearly every
/// CLEO line holds, read at fixed places: a third of the general reading's instructions
/// (which were 3% of grading the bench log). `None` for anything else, and for a leap
/// second, which the general reading then reads or refuses.
#[inline]
fn iso_millis_z(b: &[u8]) -> Option<InstantMs> {
    let b: &[u8; 24] = b.try_into().ok()?;
    if b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[19] != b'.'
        || b[23] != b'Z'
    {
        return None;
    }
    let digit = |i: usize| {
        let d = b[i].wrapping_sub(b'0');
        (d < 10).then_some(i64::from(d))
    };
    let two = |i: usize| Some(digit(i)? * 10 + digit(i + 1)?);
    let year = two(0)? * 100 + two(2)?;
    let (month, day) = (two(5)?, two(8)?);
    let (hour, minute, second) = (two(11)?, two(14)?, two(17)?);
    let millis = two(20)? * 10 + digit(22)?;
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some((days * 86_400 + hour * 3_600 + minute * 60 + second) * 1_000 + millis)
}

/// Formats an instant as JavaScript's `Date.toISOString()` does: `2026-03-01T12:00:00.000Z`.
pub fn format_iso_millis(instant: InstantMs) -> String {
    let millis = instant.rem_euclid(1_000);
    let total_seconds = instant.div_euclid(1_000);
    let days = total_seconds.div_euclid(86_400);
    let secs_of_day = total_seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let mut out = String::with_capacity(24);
    if !(0..=9_999).contains(&year) {
        // Writing to a String cannot fail.
        let _ = write!(
            out,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
            secs_of_day / 3_600,
            secs_of_day % 3_600 / 60,
            secs_of_day % 60
        );
        return out;
    }
    // Digit by digit: `write!`'s formatting machinery was 2,000 instructions a grade, 1% of
    // grading the bench log (every result carries the time it was made).
    fn digits(out: &mut String, n: i64, width: u32, then: char) {
        for place in (0..width).rev() {
            let digit = n / 10_i64.pow(place) % 10;
            out.push(char::from(b'0' + digit as u8));
        }
        out.push(then);
    }
    digits(&mut out, year, 4, '-');
    digits(&mut out, month, 2, '-');
    digits(&mut out, day, 2, 'T');
    digits(&mut out, secs_of_day / 3_600, 2, ':');
    digits(&mut out, secs_of_day % 3_600 / 60, 2, ':');
    digits(&mut out, secs_of_day % 60, 2, '.');
    digits(&mut out, millis, 3, 'Z');
    out
}

/// The current instant, for the `timestamp` of a grade.
pub(crate) fn now_ms() -> InstantMs {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(_) => 0,
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }
    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek() == Some(byte)).then(|| self.pos += 1)
    }
    fn digits(&mut self, n: usize) -> Option<i64> {
        let slice = self.b.get(self.pos..self.pos + n)?;
        let mut value = 0i64;
        for &d in slice {
            if !d.is_ascii_digit() {
                return None;
            }
            value = value * 10 + i64::from(d - b'0');
        }
        self.pos += n;
        Some(value)
    }
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's algorithms (public domain): exact for the proleptic Gregorian calendar.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_corpus_spellings_of_one_instant_agree() {
        let z = parse_timestamp("2026-03-01T10:00:00.000Z").unwrap();
        assert_eq!(parse_timestamp("2026-03-01T12:00:00.000+02:00").unwrap(), z);
        assert_eq!(parse_timestamp("2026-03-01 10:00:00").unwrap(), z);
        assert_eq!(format_iso_millis(z), "2026-03-01T10:00:00.000Z");
    }

    #[test]
    fn fractions_finer_than_a_millisecond_are_truncated_like_javascript() {
        let a = parse_timestamp("2026-03-01T10:00:00.0019Z").unwrap();
        let b = parse_timestamp("2026-03-01T10:00:00.001Z").unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn offsets_without_colon_and_negative_offsets_are_understood() {
        let z = parse_timestamp("2026-03-01T10:00:00Z").unwrap();
        assert_eq!(parse_timestamp("2026-03-01T05:30:00-0430").unwrap(), z);
    }

    #[test]
    fn malformed_timestamps_are_refused() {
        for bad in [
            "",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-02-30 00:00:00",
            "2026-03-01T25:00:00Z",
            "2026-03-01T10:00:00Zjunk",
            "2026-03-01T10:00:00.Z",
        ] {
            assert!(parse_timestamp(bad).is_err(), "{bad:?} was accepted");
        }
    }

    /// `10:00:60Z` was read as `10:01:00Z`: a second of 60 that is no leap second named an
    /// instant nobody wrote.
    #[test]
    fn a_second_of_60_is_read_only_where_a_leap_second_can_be() {
        let next_day = parse_timestamp("2027-01-01T00:00:00Z").unwrap();
        for leap in [
            "2026-12-31T23:59:60Z",
            "2027-01-01T01:59:60+02:00",
            "2026-12-31T18:29:60-0530",
            "2026-12-31 23:59:60",
        ] {
            assert_eq!(parse_timestamp(leap), Ok(next_day), "{leap}");
        }
        for bad in [
            "2026-03-01T10:00:60Z",
            "2026-12-31T23:58:60Z",
            "2026-12-31T23:59:60+01:00",
            "2026-03-01 10:00:60",
        ] {
            let err = parse_timestamp(bad).unwrap_err();
            assert!(err.reason.contains("leap second"), "{bad}: {err}");
        }
    }

    proptest::proptest! {
        /// Read at fixed places, a `toISOString()` timestamp is what the general reading
        /// makes of it (here of the same time with `+00:00`, which only it reads).
        #[test]
        fn the_fixed_layout_reads_what_the_general_reading_reads(
            (year, month, day) in (0i64..=9_999, 0i64..=13, 0i64..=32),
            (hour, minute, second, millis) in (0i64..=24, 0i64..=60, 0i64..=60, 0i64..=999),
            noise in proptest::option::of((0usize..24, proptest::char::range(' ', '~'))),
        ) {
            let mut text = format!(
                "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z"
            );
            if let Some((at, c)) = noise {
                text.replace_range(at..at + 1, &c.to_string());
            }
            let general = parse_timestamp(&format!("{}+00:00", &text[..23]));
            // Declining is always safe: `parse_timestamp` then reads the text the general way.
            if let Some(fast) = iso_millis_z(text.as_bytes()) {
                proptest::prop_assert_eq!(Ok(fast), general, "{}", text);
            }
        }

        /// Written digit by digit, a timestamp is what `write!` made of it: in the years
        /// 0 to 9999, and (by `write!` itself) outside them.
        #[test]
        fn formatting_by_hand_is_what_write_made(ms in proptest::prop_oneof![
            -62_200_000_000_000i64..253_500_000_000_000,
            proptest::prelude::Strategy::prop_map(proptest::prelude::any::<i64>(), |n| n / 4),
        ]) {
            let days = ms.div_euclid(1_000).div_euclid(86_400);
            let secs = ms.div_euclid(1_000).rem_euclid(86_400);
            let (year, month, day) = civil_from_days(days);
            let written = format!(
                "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
                secs / 3_600,
                secs % 3_600 / 60,
                secs % 60,
                ms.rem_euclid(1_000)
            );
            proptest::prop_assert_eq!(format_iso_millis(ms), written);
        }
    }

    #[test]
    fn formatting_round_trips_across_eras() {
        for ms in [0, -1, 951_782_400_000, 1_772_400_000_123, 4_102_444_800_000] {
            let text = format_iso_millis(ms);
            assert_eq!(parse_timestamp(&text).unwrap(), ms, "{text}");
        }
    }
}
