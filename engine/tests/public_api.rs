//! The engine's public API, listed: every `pub` declaration reachable from `lib.rs` through
//! `pub mod` (the items of a module, their public fields and methods, and `pub use`
//! re-exports), one a line in `engine/tests/public-api.txt`. A change to the facade changes
//! that file, so review sees it; `UPDATE_PUBLIC_API=1 cargo test -p grade-engine --test
//! public_api` writes the file anew.
//!
//! It reads the sources as text, as `module_layers.rs` does, rather than rustdoc's JSON:
//! that needs a nightly toolchain, which CI does not have, and `cargo public-api` and
//! `cargo semver-checks` are not installed there. The listing is a line per declaration,
//! not a resolved API: a public item of a private module is counted only where a `pub use`
//! names it, and a signature is shown up to its first line. That is enough to see the
//! facade move in a diff; semver checking proper is left to those tools. Test code
//! (`#[cfg(test)]` items) is left out, and a `pub use` over several lines is one line.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The file of module `name` declared in `file` (`x.rs`, `x/mod.rs`, or beside a `mod.rs`).
fn module_file(file: &Path, name: &str) -> Option<PathBuf> {
    let dir = match file.file_name().and_then(|n| n.to_str()) {
        Some("lib.rs" | "mod.rs") => file.parent()?.to_owned(),
        _ => file.with_extension(""),
    };
    [
        dir.join(format!("{name}.rs")),
        dir.join(name).join("mod.rs"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// The non-test text of a source file: each `#[cfg(test)]` item left out (a `mod x;` line, or
/// an item to the end of its braces), and a `pub use` that spans lines joined into one.
fn code_of(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            let mut depth: i64 = 0;
            for item in lines.by_ref() {
                depth += item.matches('{').count() as i64 - item.matches('}').count() as i64;
                let end = item.trim_end();
                if depth <= 0 && (end.ends_with(';') || end.ends_with('}')) {
                    break;
                }
            }
            continue;
        }
        out.push_str(line);
        if line.trim_start().starts_with("pub use ") && !line.contains(';') {
            for more in lines.by_ref() {
                out.push(' ');
                out.push_str(more.trim());
                if more.contains(';') {
                    break;
                }
            }
            out = out.replace("{ ", "{").replace(", }", "}");
        }
        out.push('\n');
    }
    out
}

/// The public declarations of the module in `file` (its path `module`), and of its public
/// submodules, into `out`.
fn collect(file: &Path, module: &str, out: &mut Vec<String>) {
    let text = code_of(file);
    let mut depth: i64 = 0;
    // The depth of an inline module that is not public: nothing in it is.
    let mut hidden_from: Option<i64> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let opens = line.matches('{').count() as i64;
        let closes = line.matches('}').count() as i64;
        let public = trimmed.starts_with("pub ") && hidden_from.is_none();
        if hidden_from.is_none()
            && trimmed.starts_with("mod ")
            && trimmed.ends_with('{')
            && !trimmed.starts_with("mod tests")
        {
            hidden_from = Some(depth);
        }
        if public {
            let declaration = trimmed
                .trim_end_matches('{')
                .trim_end_matches(';')
                .trim_end();
            if let Some(name) = declaration
                .strip_prefix("pub mod ")
                .filter(|n| !n.contains(' '))
            {
                if let Some(child) = module_file(file, name) {
                    collect(&child, &format!("{module}::{name}"), out);
                    out.push(format!("{module}: pub mod {name}"));
                    depth += opens - closes;
                    continue;
                }
            }
            out.push(format!("{module}: {declaration}"));
        }
        depth += opens - closes;
        if hidden_from.is_some_and(|d| depth <= d) {
            hidden_from = None;
        }
    }
}

fn listing() -> String {
    let mut out = Vec::new();
    collect(&src().join("lib.rs"), "grade_engine", &mut out);
    out.sort();
    out.dedup();
    let mut text = out.join("\n");
    text.push('\n');
    text
}

#[test]
fn the_public_api_is_the_one_listed() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/public-api.txt");
    let now = listing();
    if std::env::var_os("UPDATE_PUBLIC_API").is_some() {
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let listed = std::fs::read_to_string(&path).unwrap_or_default();
    if listed != now {
        let gone: Vec<&str> = listed
            .lines()
            .filter(|l| !now.lines().any(|n| n == *l))
            .collect();
        let new: Vec<&str> = now
            .lines()
            .filter(|l| !listed.lines().any(|o| o == *l))
            .collect();
        panic!(
            "the engine's public API changed: write engine/tests/public-api.txt anew with \
             `UPDATE_PUBLIC_API=1 cargo test -p grade-engine --test public_api` if that is meant\n\
             gone: {gone:#?}\nnew: {new:#?}"
        );
    }
}
