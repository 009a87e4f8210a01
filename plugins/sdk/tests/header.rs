//! `plugins/grade_plugin.h` and `src/abi.rs` describe the same ABI: every struct has the
//! same fields in the same order, and every constant the same value. Layout follows from
//! that, since both sides use the platform's C layout.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use std::collections::BTreeMap;

const HEADER: &str = include_str!("../../grade_plugin.h");
const ABI: &str = include_str!("../src/abi.rs");

/// `grade_new_entry` → `GradeNewEntry`.
fn rust_name(c: &str) -> String {
    c.split('_')
        .map(|w| {
            let mut chars = w.chars();
            chars
                .next()
                .map(|f| f.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The header without its `/* … */` comments.
fn header_code() -> String {
    let mut code = String::new();
    let mut rest = HEADER;
    while let Some(start) = rest.find("/*") {
        code.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("comments are closed");
        rest = &rest[start + end + 2..];
    }
    code.push_str(rest);
    code
}

/// Struct name → field names, from `typedef struct NAME { TYPE FIELD; ... } NAME;`.
fn header_structs() -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let code = header_code();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("typedef struct ") {
        rest = &rest[at + "typedef struct ".len()..];
        let name = rest.split_whitespace().next().unwrap().to_owned();
        let body = &rest[rest.find('{').unwrap() + 1..rest.find('}').unwrap()];
        let fields = body
            .split(';')
            .map(|code| {
                // The last identifier, or `(*name)` for a callback.
                if let Some(start) = code.find("(*") {
                    code[start + 2..code[start..].find(')').unwrap() + start].to_owned()
                } else {
                    code.split_whitespace()
                        .last()
                        .unwrap_or("")
                        .trim_start_matches('*')
                        .to_owned()
                }
            })
            .filter(|f| !f.is_empty())
            .collect();
        out.insert(rust_name(&name), fields);
    }
    out
}

/// Struct name → field names, from `pub struct NAME { pub FIELD: TYPE, ... }`.
fn rust_structs() -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let mut rest = ABI;
    while let Some(at) = rest.find("pub struct ") {
        rest = &rest[at + "pub struct ".len()..];
        let name = rest.split_whitespace().next().unwrap().to_owned();
        let body = &rest[rest.find('{').unwrap() + 1..rest.find("\n}").unwrap()];
        let fields = body
            .lines()
            .filter_map(|l| l.trim().strip_prefix("pub "))
            .filter_map(|l| l.split(':').next())
            .map(str::to_owned)
            .collect();
        out.insert(name, fields);
    }
    out
}

#[test]
fn every_struct_has_the_same_fields_in_the_same_order() {
    let header = header_structs();
    let rust = rust_structs();
    assert_eq!(
        header.keys().collect::<Vec<_>>(),
        rust.keys().collect::<Vec<_>>(),
        "the same structs"
    );
    for (name, fields) in &header {
        assert_eq!(Some(fields), rust.get(name), "fields of {name}");
    }
}

#[test]
fn every_constant_has_the_same_value() {
    use grade_plugin::abi;
    let defines: BTreeMap<&str, i64> = HEADER
        .lines()
        .filter_map(|l| l.strip_prefix("#define GRADE_"))
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let name = parts.next()?;
            let value = parts.next()?.trim_end_matches('u').parse().ok()?;
            Some((name, value))
        })
        .collect();
    let rust: [(&str, i64); 14] = [
        ("PLUGIN_ABI_VERSION", abi::ABI_VERSION.into()),
        ("KIND_RULE", abi::KIND_RULE.into()),
        ("KIND_CONDITION", abi::KIND_CONDITION.into()),
        ("KIND_METRIC", abi::KIND_METRIC.into()),
        ("VALUE_MISSING", abi::VALUE_MISSING.into()),
        ("VALUE_BOOL", abi::VALUE_BOOL.into()),
        ("VALUE_NUMBER", abi::VALUE_NUMBER.into()),
        ("VALUE_STRING", abi::VALUE_STRING.into()),
        ("VALUE_JSON", abi::VALUE_JSON.into()),
        ("TEXT_EVIDENCE", abi::TEXT_EVIDENCE.into()),
        ("TEXT_FLAG", abi::TEXT_FLAG.into()),
        ("TEXT_ERROR", abi::TEXT_ERROR.into()),
        ("STATUS_OK", abi::STATUS_OK.into()),
        ("STATUS_ERROR", abi::STATUS_ERROR.into()),
    ];
    for (name, value) in rust {
        assert_eq!(defines.get(name), Some(&value), "GRADE_{name}");
    }
    assert_eq!(
        defines.len(),
        14,
        "no constant only in the header: {defines:?}"
    );
    assert!(HEADER.contains(&format!("uint32_t {}(void);", abi::ABI_VERSION_SYMBOL)));
    assert!(HEADER.contains(&format!(
        "const grade_plugin *{}(void);",
        abi::DESCRIBE_SYMBOL
    )));
}
