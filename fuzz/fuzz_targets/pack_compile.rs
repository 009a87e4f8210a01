//! The pack loader and compiler: `rubric.yaml`, then any number of further files.
//!
//! Input: the text of `rubric.yaml`, then for each other file a NUL byte, its name, a
//! newline and its content (`fuzz/seed.sh` writes the shipped and test packs this way).
//! A pack that compiles also grades a small session, so its rules and templates run.
#![no_main]

use std::collections::BTreeMap;

use grade_engine::{compile_pack, validate_pack, GradeOptions, PackFiles, PackOrigin};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.split('\0');
    let mut files = BTreeMap::new();
    files.insert(
        "rubric.yaml".to_owned(),
        parts.next().unwrap_or("").to_owned(),
    );
    for part in parts {
        let (name, content) = part.split_once('\n').unwrap_or((part, ""));
        files.insert(name.to_owned(), content.to_owned());
    }
    let pack = PackFiles {
        origin: PackOrigin::Builtin("fuzz".to_owned()),
        files,
    };
    let _ = validate_pack(&pack);
    if let Ok(compiled) = compile_pack(&pack) {
        let options = GradeOptions {
            now: 0,
            explain: true,
            references: None,
        };
        for session in grade_fuzz::example_sessions() {
            let _ = compiled.grade(session, &options);
        }
    }
});
