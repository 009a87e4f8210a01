//! The code registry's own checks: unique ids, names and docs; lookup by id or name; every
//! code written in the sources registered; the docs' table listing every code.

use super::*;

#[test]
fn every_code_has_a_unique_id_name_and_a_doc() {
    let mut ids = std::collections::HashSet::new();
    let mut names = std::collections::HashSet::new();
    for &code in ALL {
        let info = code.info();
        assert_eq!(info.code, code);
        assert!(ids.insert(info.id), "{} is used twice", info.id);
        assert!(names.insert(info.name), "{} is used twice", info.name);
        let prefix = match info.severity {
            Severity::Error => 'E',
            Severity::Warning => 'W',
        };
        assert!(
            info.id.starts_with(prefix) && info.id.len() == 4,
            "{}: an error is `E0xx`, a warning `W1xx`",
            info.id
        );
        assert!(
            !info.summary.is_empty() && !info.summary.ends_with('.'),
            "{}",
            info.id
        );
        assert!(info.doc.len() > 40, "{} needs a doc", info.id);
        assert!(
            info.severity == Severity::Error || code.scope() == Scope::Pack,
            "{}: only a pack has warnings",
            info.id
        );
    }
    let mut sorted: Vec<&str> = ALL.iter().map(|c| c.info().id).collect();
    sorted.sort_unstable();
    assert_eq!(sorted, ALL.iter().map(|c| c.info().id).collect::<Vec<_>>());
}

#[test]
fn codes_are_found_by_id_or_name_and_suggested_when_close() {
    assert_eq!(Code::parse("e012"), Some(Code::UnknownSelector));
    assert_eq!(Code::parse("no-outcome"), Some(Code::NoOutcome));
    assert_eq!(Code::parse("E999"), None);
    assert_eq!(Code::close_to("E12").first(), Some(&Code::UnknownSelector));
    assert_eq!(Code::close_to("unknown-selectr"), [Code::UnknownSelector]);
    assert!(Code::close_to("something else entirely").is_empty());
}

/// Every `E0xx`/`W1xx` written in the code (tests aside) and the docs names a registered code.
#[test]
fn every_code_written_anywhere_is_registered() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut texts = Vec::new();
    collect(&root.join("engine/src"), &mut texts);
    collect(&root.join("cli/src"), &mut texts);
    collect(&root.join("docs"), &mut texts);
    let known: std::collections::HashSet<&str> = ALL.iter().map(|c| c.info().id).collect();
    let mut seen = 0;
    for (path, text) in &texts {
        let bytes = text.as_bytes();
        for (i, window) in bytes.windows(4).enumerate() {
            let boundary = |at: usize| bytes.get(at).is_none_or(|b| !b.is_ascii_alphanumeric());
            if (window.starts_with(b"E0")
                || window.starts_with(b"E1")
                || window.starts_with(b"E2")
                || window.starts_with(b"W1"))
                && window[1..].iter().all(u8::is_ascii_digit)
                && (i == 0 || boundary(i - 1))
                && boundary(i + 4)
            {
                let word = std::str::from_utf8(window).unwrap_or_default();
                seen += 1;
                assert!(
                    known.contains(word),
                    "{}: `{word}` is not in the registry",
                    path.display()
                );
            }
        }
    }
    assert!(seen > ALL.len(), "the scan found the registry itself");
}

/// `docs/rubric-packs.md` lists every code with its name and summary.
#[test]
fn the_docs_table_lists_every_code() {
    let docs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rubric-packs.md"),
    )
    .expect("docs/rubric-packs.md is readable");
    for &code in ALL {
        let info = code.info();
        let row = format!("| {} | {} | ", info.id, info.name);
        assert!(
            docs.contains(&row),
            "docs/rubric-packs.md has no row `{row}`"
        );
    }
}

fn collect(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, String)>) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    for item in listing.flatten() {
        let path = item.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "md") {
            if let Ok(mut text) = std::fs::read_to_string(&path) {
                // Tests name unknown codes on purpose.
                if let Some(at) = text.find("#[cfg(test)]") {
                    text.truncate(at);
                }
                out.push((path, text));
            }
        }
    }
}
