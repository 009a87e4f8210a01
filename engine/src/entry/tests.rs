use super::*;
use serde_json::json;

/// Reference values are what `String(x)` gives in Node 22 (V8), the runtime of CLEO's grader.
#[test]
fn numbers_print_as_javascript_number_to_string() {
    for (x, js) in [
        (0.0, "0"),
        (-0.0, "0"),
        (5.0, "5"),
        (-17.0, "-17"),
        (0.5, "0.5"),
        (0.1 + 0.2, "0.30000000000000004"),
        (2f64.powi(53), "9007199254740992"),
        (1.2345678901234568e20, "123456789012345680000"),
        (1e21, "1e+21"),
        (-1e21, "-1e+21"),
        (1.2345678901234568e29, "1.2345678901234568e+29"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-10, "1.5e-10"),
        (5e-324, "5e-324"),
        (f64::MAX, "1.7976931348623157e+308"),
        (f64::NAN, "NaN"),
        (f64::INFINITY, "Infinity"),
        (f64::NEG_INFINITY, "-Infinity"),
    ] {
        assert_eq!(js_number(x), js, "{x:e}");
    }
}

proptest::proptest! {
    /// Whole numbers take a shortcut past `ryu_js`: it must print what `ryu_js` prints.
    #[test]
    fn whole_numbers_print_as_the_general_path_prints_them(
        n in -2_000_000_000_000_000i64..2_000_000_000_000_000i64,
        bits in proptest::num::u64::ANY,
    ) {
        for x in [n as f64, (n % 1_000) as f64, f64::from_bits(bits), (n as f64).trunc() / 8.0] {
            let mut general = ryu_js::Buffer::new();
            proptest::prop_assert_eq!(js_number(x), general.format(x), "{:e}", x);
        }
    }
}

#[test]
fn json_numbers_print_as_javascript_reads_them() {
    for (v, js) in [
        (json!(4), "4"),
        (json!(-0.0), "0"),
        (json!(1e21), "1e+21"),
        (json!(0.0000001), "1e-7"),
        (json!(9007199254740993u64), "9007199254740992"),
        (json!(i64::MIN), "-9223372036854776000"),
        (json!([1e21, null, 2]), "1e+21,,2"),
    ] {
        assert_eq!(js_string(&v).as_deref(), Some(js), "{v}");
    }
}

/// `${taskId}` in CLEO's flag throws a `TypeError` on an object whose own `toString` is no
/// function (a JSON value): printing `[object Object]` there graded a session CLEO does not.
/// Reference: Node 20, `` `${JSON.parse(text)}` ``.
#[test]
fn objects_with_their_own_to_string_have_no_javascript_text() {
    for (text, js) in [
        (r#"{"toString":1}"#, None),
        (r#"[1,{"toString":null}]"#, None),
        (r#"{"toString":1,"valueOf":2}"#, None),
        (r#"[[{"toString":"x"}]]"#, None),
        (r#"{"valueOf":1}"#, Some("[object Object]")),
        (r#"[null,{"a":1}]"#, Some(",[object Object]")),
        (r#"{"__proto__":1}"#, Some("[object Object]")),
        (r#"{"__proto__":{"toString":1}}"#, Some("[object Object]")),
    ] {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(js_string(&v).as_deref(), js, "{text}");
    }
}

#[test]
fn truthiness_follows_javascript() {
    for (v, t) in [
        (json!(""), false),
        (json!("0"), true),
        (json!(0), false),
        (json!(0.5), true),
        (json!(null), false),
        (json!([]), true),
        (json!({}), true),
        (json!(false), false),
    ] {
        assert_eq!(is_truthy(Some(&v)), t, "{v}");
    }
    assert!(!is_truthy(None));
}

#[test]
fn params_keep_the_last_of_a_repeated_key_and_iterate_in_key_order() {
    let params: Params = serde_json::from_str(r#"{"b": 1, "a": 2, "b": 3, "c": null}"#).unwrap();
    let map: Map<String, Value> =
        serde_json::from_str(r#"{"b": 1, "a": 2, "b": 3, "c": null}"#).unwrap();
    assert_eq!(params, Params::from(map.clone()));
    assert_eq!(params.to_map(), map, "what a serde_json map would hold");
    assert_eq!(
        serde_json::to_string(&params).unwrap(),
        r#"{"a":2,"b":3,"c":null}"#
    );
    assert_eq!(params["b"], json!(3));
    assert_eq!(params["missing"], Value::Null);
    assert_eq!(params.get("c"), Some(&Value::Null));
    let mut more = params.clone();
    more.insert("aa", json!("x"));
    more.insert("a", json!(5));
    let keys: Vec<&str> = more.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["a", "aa", "b", "c"]);
    assert_eq!(more["a"], json!(5));
}

#[test]
fn trim_follows_javascript_not_rust() {
    assert_eq!(js_trim("\u{FEFF} a \t\n"), "a");
    assert_eq!(js_trim("\u{0085}a"), "\u{0085}a");
}

#[test]
fn half_is_rounded_up_like_to_fixed() {
    assert_eq!(round_half_up(82.5), 83.0);
    assert_eq!(round_half_up(87.5), 88.0);
    assert_eq!(round_half_up(7.4999), 7.0);
    assert_eq!(
        format!("{:.0}", 82.5),
        "82",
        "the Rust behaviour this guards against"
    );
}

fn entry_at(origin: Origin) -> Entry {
    Entry {
        timestamp: "2026-03-01T00:00:00Z".into(),
        instant: 0,
        session_id: "s".into(),
        domain: "tasks".into(),
        operation: "show".into(),
        params: Params::new(),
        result: Outcome {
            success: true,
            exit_code: 0,
            duration: 0.0,
        },
        metadata: Metadata::with_source("mcp"),
        error: None,
        origin,
    }
}

#[test]
fn an_origin_keeps_its_line_or_row_and_file_in_one_u64() {
    assert_eq!(std::mem::size_of::<Origin>(), 8);
    let log = SourceFile::named(std::path::Path::new("logs/audit.jsonl"));
    let db = SourceFile::named(std::path::Path::new(".cleo/tasks.db"));
    assert_eq!(
        log,
        SourceFile::named(std::path::Path::new("logs/audit.jsonl"))
    );
    let line = Origin::line(log, 12);
    assert_eq!(line.kind(), Some(OriginKind::Line(12)));
    assert_eq!(line.file().as_deref(), Some("logs/audit.jsonl"));
    let row = Origin::row(db, (1 << 40) - 1);
    assert_eq!(row.kind(), Some(OriginKind::Row((1 << 40) - 1)));
    assert_eq!(row.file().as_deref(), Some(".cleo/tasks.db"));
    assert_eq!(Origin::UNKNOWN.kind(), None);
    assert_eq!(Origin::UNKNOWN.file(), None);
}

#[test]
fn an_origin_that_does_not_fit_is_unknown_rather_than_wrong() {
    let db = SourceFile::named(std::path::Path::new("big.db"));
    assert_eq!(Origin::row(db, 1 << 40), Origin::UNKNOWN);
    assert_eq!(Origin::row(db, -3), Origin::UNKNOWN);
    assert_eq!(Origin::line(SourceFile(u32::MAX), 1), Origin::UNKNOWN);
}

#[test]
fn a_cleo_entry_is_placed_by_its_line_or_row() {
    let log = SourceFile::named(std::path::Path::new("/tmp/x/audit.jsonl"));
    let db = SourceFile::named(std::path::Path::new(".cleo/tasks.db"));
    let at_line = entry_at(Origin::line(log, 7));
    assert_eq!(place_of(3, &at_line), "#3 (audit.jsonl:7)");
    assert_eq!(
        at_line.source_place(),
        SourcePlace {
            file: Some("/tmp/x/audit.jsonl".to_owned()),
            line: Some(7),
            ..SourcePlace::default()
        }
    );
    let at_row = entry_at(Origin::row(db, 42));
    assert_eq!(place_of(1, &at_row), "#1 (tasks.db row 42)");
    assert_eq!(at_row.source_place().row_id, Some(42));
    assert_eq!(place_of(5, &entry_at(Origin::UNKNOWN)), "#5");
}

#[test]
fn where_an_entry_was_read_is_not_part_of_its_json() {
    let log = SourceFile::named(std::path::Path::new("audit.jsonl"));
    let json = serde_json::to_string(&entry_at(Origin::line(log, 9))).unwrap();
    assert_eq!(
        json,
        serde_json::to_string(&entry_at(Origin::UNKNOWN)).unwrap()
    );
    assert!(!json.contains("origin"), "{json}");
}
