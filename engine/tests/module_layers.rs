//! The top-level modules of `engine/src` depend on each other in one direction only (see
//! "Layers" in `docs/architecture.md`): this test reads the sources, collects every
//! `crate::module` reference of non-test code, and fails on any cycle, naming the edges that
//! close it and the files that make each edge; and on any import the diagram of layers in the
//! doc does not allow.
//!
//! What counts as a reference from module `m` (the file `m.rs` and everything under `m/`):
//! a path starting `crate::` (or `$crate::`), a `use crate::{…}` group, or a `super::` chain
//! that climbs to the crate root. A name the crate root re-exports (`crate::CompiledPack`)
//! counts as its module; a name defined in `lib.rs` (`crate::load_pack`) counts as `lib`,
//! the root. Comments, strings, `#[cfg(test)]` items and test-only files are left out: tests
//! may reach anywhere.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `pub use` lines that keep an old public path for embedders although the item now lives
/// in a module above: (file under `engine/src`, module re-exported from, why). A facade
/// re-export adds nothing to what the file's code depends on; every other reference in the
/// file still counts, and an entry whose re-export is gone fails the test.
const FACADE_REEXPORTS: &[(&str, &str, &str)] = &[(
    "pack/mod.rs",
    "validate",
    "`pack::validate_pack` and `pack::validate_pack_with` are public paths; validation runs \
     the dry run, which grades, so it lives above `eval`",
)];

/// The root node: `lib.rs` and the items it defines.
const ROOT: &str = "lib";

#[test]
fn top_level_modules_import_each_other_in_one_direction_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = Graph::read(&src);
    let cycles = graph.cycles();
    assert!(
        cycles.is_empty(),
        "the top-level modules of engine/src import each other in a cycle \
         (move the shared part down a layer; see docs/architecture.md, \"Layers\"):\n{}",
        cycles.join("\n")
    );
}

/// The diagram under "Layers" in `docs/architecture.md` names every top-level module, and
/// each module imports only modules on lines under its own.
#[test]
fn the_layers_in_the_architecture_doc_match_the_imports() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let docs = std::fs::read_to_string(src.join("../../docs/architecture.md"))
        .expect("docs/architecture.md is readable");
    let section = docs
        .split_once("## Layers")
        .and_then(|(_, rest)| rest.split_once("```text\n"))
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(diagram, _)| diagram)
        .expect("docs/architecture.md has a \"Layers\" section with a ```text diagram");
    // Line by line from the top; a line that starts with spaces continues the one above.
    let mut line_of: BTreeMap<String, usize> = BTreeMap::new();
    for (i, line) in section.lines().filter(|l| !l.starts_with(' ')).enumerate() {
        let names = line.split("  ").next().unwrap_or_default();
        for name in names.split('·').map(str::trim).filter(|n| !n.is_empty()) {
            line_of.insert(name.trim_end_matches(".rs").to_owned(), i);
        }
    }
    let graph = Graph::read(&src);
    let mut problems = Vec::new();
    for module in graph.modules() {
        if !line_of.contains_key(module) {
            problems.push(format!("`{module}` is not in the diagram"));
        }
    }
    for (from, to, files) in graph.edge_list() {
        if let (Some(a), Some(b)) = (line_of.get(from), line_of.get(to)) {
            if a >= b {
                problems.push(format!(
                    "`{from}` imports `{to}`, which is not on a line under it ({files})"
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "the \"Layers\" diagram of docs/architecture.md does not match the imports:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn the_scanner_reads_paths_and_skips_comments_strings_and_test_code() {
    let text = r##"
        use crate::entry::Entry;
        use crate::{field::Field, pack::{self, CompiledPack}};
        // crate::comment::Ignored
        /* crate::block /* nested */ crate::also */
        const S: &str = "crate::string::Ignored";
        const R: &str = r#"crate::raw "quoted" string"#;
        const C: char = '{';
        fn f<'a>(x: &'a str) -> crate::result::GradeResult { todo!() }
        #[cfg(test)]
        mod tests {
            use crate::eval::Ctx;
            fn g() { let _ = '}'; }
        }
        #[cfg(test)]
        use crate::run::grade_source;
        #[cfg(test)]
        mod testing;
        fn h() { super::super::source::Registry::builtin(); }
        fn i() { crate::load_pack("x", &[]); }
    "##;
    let tops: BTreeSet<String> = [
        "entry", "field", "pack", "result", "eval", "run", "source", "comment", "block", "string",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    let stripped = strip(text);
    assert!(!stripped.contains("Ignored") && !stripped.contains("also"));
    let mut found = BTreeSet::new();
    for name in referenced_names(&stripped, 2) {
        found.insert(resolve(&name, &tops, &BTreeMap::new()));
    }
    let expected: BTreeSet<String> = ["entry", "field", "pack", "result", "source", ROOT]
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(found, expected);
    assert_eq!(
        test_only_modules(&stripped_test_decls(text)),
        vec!["testing"]
    );
}

/// Module → module it references → the files (under `engine/src`) that reference it.
struct Graph {
    /// Every top-level module, and `lib`.
    nodes: BTreeSet<String>,
    edges: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

impl Graph {
    fn read(src: &Path) -> Graph {
        let mut tops = BTreeSet::new();
        for item in std::fs::read_dir(src)
            .expect("engine/src is readable")
            .flatten()
        {
            let path = item.path();
            let Some(name) = path.file_stem().and_then(|n| n.to_str()) else {
                continue;
            };
            if path.is_dir() || (path.extension().is_some_and(|e| e == "rs") && name != "lib") {
                tops.insert(name.to_owned());
            }
        }
        let lib_text = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs is readable");
        let reexports = root_reexports(&strip(&lib_text), &tops);

        let mut edges: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
        let mut facade_seen = vec![false; FACADE_REEXPORTS.len()];
        let mut files: Vec<(String, PathBuf)> = vec![(ROOT.to_owned(), src.join("lib.rs"))];
        for top in &tops {
            let file = src.join(format!("{top}.rs"));
            if file.is_file() {
                files.push((top.clone(), file));
            }
            let mut under = Vec::new();
            collect_rs(&src.join(top), &mut under);
            files.extend(under.into_iter().map(|f| (top.clone(), f)));
        }
        let test_only = test_only_files(&files);
        for (module, file) in &files {
            if test_only.iter().any(|t| file.starts_with(t)) {
                continue;
            }
            let rel = file
                .strip_prefix(src)
                .unwrap_or(file)
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(file).expect("source file is readable");
            let mut stripped = strip(&text);
            for (i, (facade_file, from, _why)) in FACADE_REEXPORTS.iter().enumerate() {
                if *facade_file == rel {
                    let (rest, found) = drop_reexports(&stripped, from);
                    stripped = rest;
                    facade_seen[i] |= found;
                }
            }
            let mut names = referenced_names(&stripped, module_depth(&rel));
            if module == ROOT {
                names.extend(root_relative_names(&stripped, &tops));
            }
            for name in names {
                let target = resolve(&name, &tops, &reexports);
                if target != *module {
                    edges
                        .entry(module.clone())
                        .or_default()
                        .entry(target)
                        .or_default()
                        .insert(rel.clone());
                }
            }
        }
        for (seen, (file, from, _)) in facade_seen.iter().zip(FACADE_REEXPORTS) {
            assert!(
                seen,
                "FACADE_REEXPORTS names `pub use crate::{from}::…` in {file}, which is gone: \
                 remove the entry"
            );
        }
        let mut nodes = tops;
        nodes.insert(ROOT.to_owned());
        Graph { nodes, edges }
    }

    /// Every module, as a name in the graph (`lib` for the root).
    fn modules(&self) -> BTreeSet<&str> {
        self.nodes.iter().map(String::as_str).collect()
    }

    /// Every edge, with the files that make it.
    fn edge_list(&self) -> Vec<(&str, &str, String)> {
        let mut out = Vec::new();
        for (from, to) in &self.edges {
            for (target, files) in to {
                let files: Vec<&str> = files.iter().map(String::as_str).collect();
                out.push((from.as_str(), target.as_str(), files.join(", ")));
            }
        }
        out
    }

    /// Each strongly connected set of two or more modules, with the edges inside it.
    fn cycles(&self) -> Vec<String> {
        let nodes = self.modules();
        let mut out = Vec::new();
        let mut done: BTreeSet<&str> = BTreeSet::new();
        for &node in &nodes {
            if done.contains(node) {
                continue;
            }
            // The modules `node` reaches and that reach it back.
            let down = self.reach(node, false);
            let up = self.reach(node, true);
            let component: BTreeSet<&str> = down.intersection(&up).copied().collect();
            done.extend(component.iter().copied());
            if component.len() < 2 {
                continue;
            }
            let mut text = format!(
                "  {} import each other:",
                component.iter().copied().collect::<Vec<_>>().join(", ")
            );
            for &from in &component {
                for (to, files) in &self.edges[from] {
                    if component.contains(to.as_str()) {
                        text.push_str(&format!(
                            "\n    {from} -> {to}: {}",
                            files.iter().cloned().collect::<Vec<_>>().join(", ")
                        ));
                    }
                }
            }
            out.push(text);
        }
        out
    }

    fn reach<'a>(&'a self, start: &'a str, backwards: bool) -> BTreeSet<&'a str> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start];
        while let Some(node) = todo.pop() {
            if !seen.insert(node) {
                continue;
            }
            for (from, to) in &self.edges {
                for target in to.keys() {
                    let (a, b) = if backwards {
                        (target.as_str(), from.as_str())
                    } else {
                        (from.as_str(), target.as_str())
                    };
                    if a == node {
                        todo.push(b);
                    }
                }
            }
        }
        seen
    }
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    let mut items: Vec<PathBuf> = listing.flatten().map(|i| i.path()).collect();
    items.sort();
    for path in items {
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// How many `super::` climb from a file's module to the crate root.
fn module_depth(rel: &str) -> usize {
    let parts: Vec<&str> = rel.split('/').collect();
    match parts.last() {
        Some(&"lib.rs") => 0,
        Some(&"mod.rs") => parts.len() - 1,
        _ => parts.len(),
    }
}

/// The files and folders declared `#[cfg(test)] mod name;`.
fn test_only_files(files: &[(String, PathBuf)]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (_, file) in files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let Some(parent) = file.parent() else {
            continue;
        };
        let dir = match file.file_name().and_then(|n| n.to_str()) {
            Some("mod.rs" | "lib.rs") => parent.to_owned(),
            _ => file.with_extension(""),
        };
        for name in test_only_modules(&stripped_test_decls(&text)) {
            out.push(dir.join(format!("{name}.rs")));
            out.push(dir.join(name));
        }
    }
    out
}

/// The text without comments and literals, keeping `#[cfg(test)]` items (to find the test-only
/// module declarations).
fn stripped_test_decls(text: &str) -> String {
    strip_literals(text)
}

/// The names in `#[cfg(test)] mod name;` declarations.
fn test_only_modules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        rest = &rest[at + "#[cfg(test)]".len()..];
        let tokens = tokens(rest, 12);
        let mut t = tokens.iter().map(String::as_str);
        let mut word = t.next();
        if word == Some("pub") {
            word = t.next();
            if word == Some("(") {
                for w in t.by_ref() {
                    if w == ")" {
                        break;
                    }
                }
                word = t.next();
            }
        }
        if word == Some("mod") {
            if let (Some(name), Some(";")) = (t.next(), t.next()) {
                out.push(name.to_owned());
            }
        }
    }
    out
}

/// The first `limit` tokens of `text`: identifiers, `::`, and single punctuation characters.
fn tokens(text: &str, limit: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() && out.len() < limit {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if is_ident(c) {
            let start = i;
            while i < chars.len() && is_ident(chars[i]) {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push("::".to_owned());
            i += 2;
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The code without comments, string and character literals, and `#[cfg(test)]` items.
fn strip(text: &str) -> String {
    drop_test_items(&strip_literals(text))
}

fn strip_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let prev_ident = |i: usize| i > 0 && is_ident(chars[i - 1]);
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && next == Some('r'))) && !prev_ident(i) && {
            let mut j = i + if c == 'b' { 2 } else { 1 };
            while chars.get(j) == Some(&'#') {
                j += 1;
            }
            chars.get(j) == Some(&'"')
        } {
            // A raw string: `r#"…"#`.
            let mut j = i + if c == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while chars[j] == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            while j < chars.len() {
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i = j + 1;
        } else if c == '\'' && next == Some('\\') {
            // An escaped character: `'\n'`, `'\''`, `'\u{7f}'`.
            let mut j = i + 3;
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            out.push_str("' '");
            i = j + 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            out.push_str("' '");
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Removes each item under `#[cfg(test)]`: a `use` to its `;`, anything else to its `;` or
/// to the end of its `{…}` body, whichever comes first.
fn drop_test_items(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at + "#[cfg(test)]".len()..];
        let is_use = tokens(item, 1).first().is_some_and(|t| t == "use");
        let semi = item.find(';');
        let brace = if is_use { None } else { item.find('{') };
        let end = match (semi, brace) {
            (Some(s), Some(b)) if b < s => matching_brace(item, b),
            (Some(s), _) => s + 1,
            (None, Some(b)) => matching_brace(item, b),
            (None, None) => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The byte just past the `}` that closes the `{` at `open`.
fn matching_brace(text: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + i + 1;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// Drops each `pub use crate::from::…;` statement; whether there was one.
fn drop_reexports(text: &str, from: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut found = false;
    let mut rest = text;
    while let Some(at) = rest.find("pub use crate::") {
        let after = &rest[at + "pub use crate::".len()..];
        let names_from = tokens(after, 2);
        if names_from.first().map(String::as_str) == Some(from)
            && names_from.get(1).map(String::as_str) == Some("::")
        {
            out.push_str(&rest[..at]);
            let end = after.find(';').map_or(after.len(), |s| s + 1);
            rest = &after[end..];
            found = true;
        } else {
            out.push_str(&rest[..at + "pub use crate::".len()]);
            rest = after;
        }
    }
    out.push_str(rest);
    (out, found)
}

/// The first name after `crate::` in each path (each name of a `crate::{…}` group), and the
/// name after a `super::` chain of `depth` steps (which reaches the crate root).
fn referenced_names(text: &str, depth: usize) -> Vec<String> {
    let toks = tokens(text, usize::MAX);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let at_path_start = i == 0 || toks[i - 1] != "::";
        if toks[i] == "crate" && at_path_start && toks.get(i + 1).map(String::as_str) == Some("::")
        {
            i += 2;
            if toks.get(i).map(String::as_str) == Some("{") {
                // `crate::{a::b, c, d::{e, f}}`: a, c and d.
                let mut level = 0;
                let mut expect = true;
                while i < toks.len() {
                    match toks[i].as_str() {
                        "{" => level += 1,
                        "}" => {
                            level -= 1;
                            if level == 0 {
                                break;
                            }
                        }
                        "," if level == 1 => expect = true,
                        word if expect && level == 1 && word.chars().all(is_ident) => {
                            if word != "self" {
                                out.push(word.to_owned());
                            }
                            expect = false;
                        }
                        _ => {}
                    }
                    i += 1;
                }
            } else if let Some(word) = toks.get(i) {
                out.push(word.clone());
            }
        } else if toks[i] == "super" && at_path_start && depth > 0 {
            let mut j = i;
            let mut climbed = 0;
            while toks.get(j).map(String::as_str) == Some("super")
                && toks.get(j + 1).map(String::as_str) == Some("::")
            {
                climbed += 1;
                j += 2;
            }
            if climbed == depth {
                if let Some(word) = toks.get(j) {
                    out.push(word.clone());
                }
            }
            i = j;
        }
        i += 1;
    }
    out
}

/// In `lib.rs`, paths need no `crate::`: `pack::compile_pack_with`.
fn root_relative_names(text: &str, tops: &BTreeSet<String>) -> Vec<String> {
    let toks = tokens(text, usize::MAX);
    let mut out = Vec::new();
    for i in 0..toks.len() {
        let at_path_start = i == 0 || toks[i - 1] != "::";
        if at_path_start
            && tops.contains(&toks[i])
            && toks.get(i + 1).map(String::as_str) == Some("::")
        {
            out.push(toks[i].clone());
        }
    }
    out
}

/// The names `lib.rs` re-exports (`pub use pack::{CompiledPack, …}`) → their module.
fn root_reexports(lib: &str, tops: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = lib;
    while let Some(at) = rest.find("pub use ") {
        let after = &rest[at + "pub use ".len()..];
        let end = after.find(';').unwrap_or(after.len());
        let toks = tokens(&after[..end], usize::MAX);
        rest = &after[end..];
        let mut t = toks.iter().map(String::as_str).peekable();
        if t.peek() == Some(&"crate") {
            t.next();
            t.next();
        }
        let Some(module) = t.next().filter(|m| tops.contains(*m)) else {
            continue;
        };
        // The leaves: a name not followed by `::`, or the new name after `as`.
        for i in 0..toks.len() {
            let next = toks.get(i + 1).map(String::as_str);
            let word = toks[i].as_str();
            if word.chars().all(is_ident)
                && next != Some("::")
                && next != Some("as")
                && word != "self"
                && word != "as"
            {
                out.insert(word.to_owned(), module.to_owned());
            }
        }
    }
    out
}

/// The module a name after `crate::` stands for.
fn resolve(name: &str, tops: &BTreeSet<String>, reexports: &BTreeMap<String, String>) -> String {
    if tops.contains(name) {
        name.to_owned()
    } else if let Some(module) = reexports.get(name) {
        module.clone()
    } else {
        ROOT.to_owned()
    }
}
