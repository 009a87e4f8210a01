//! Unit tests of the fast CLEO JSONL line reader, each checked against serde's reading of
//! the same line.

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
        assert_eq!(
            params_document(text, None).map(|p| p.len()),
            expected,
            "{text}"
        );
    }
}

#[test]
fn lines_of_the_corpus_and_the_bench_shape_are_read_fast_and_as_serde_reads_them() {
    let corpus = include_str!("../../../../../tests/fixtures/conformance/audit.jsonl");
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
        let entry =
            super::super::parse_line_kept(line.as_bytes(), Some(line), checked, skim, &mut notes);
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
    let corpus = include_str!("../../../../../tests/fixtures/conformance/audit.jsonl");
    for id in ["cleo-v1", "cleo-v2", "claude-code-v1", "langfuse-v1"] {
        let pack = crate::load_pack(id, &[]).unwrap();
        let (kept, checked) = (pack.projection(), pack.fields_read());
        for line in corpus.lines() {
            projected_agrees_with_serde(line, &kept, checked).unwrap();
        }
    }
}
