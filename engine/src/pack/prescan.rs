//! Checks of `rubric.yaml` before serde reads it into the stage-1 structs: brackets nested too
//! deep for the YAML parser, and numbers no rubric can hold.

use super::codes::Code;

/// A top-level problem: its code, the key path and what is wrong there. Found here before
/// serde reads the pack, and by `raw` after: it lives in the lower module of the two.
pub type RawProblem = (Code, String, String);

/// How deep `[` and `{` may nest in `rubric.yaml`: the YAML parser takes time and stack in
/// proportion to the depth, and 100,000 levels took it 38 s to refuse.
pub(super) const MAX_FLOW_DEPTH: usize = 64;

/// The line where flow brackets first nest deeper than [`MAX_FLOW_DEPTH`], found in one
/// pass before the YAML parser sees the text. Quoted strings and comments are skipped.
pub(super) fn too_deep(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut line = 1;
    let mut quote: Option<char> = None;
    let mut comment = false;
    let mut previous = ' ';
    for c in text.chars() {
        if c == '\n' {
            line += 1;
            comment = false;
            // A single-quoted or double-quoted flow scalar may span lines; a plain one not.
        } else if comment {
        } else if let Some(q) = quote {
            if c == q && previous != '\\' {
                quote = None;
            }
        } else {
            match c {
                '#' if previous.is_whitespace() => comment = true,
                '"' | '\'' if depth > 0 => quote = Some(c),
                '[' | '{' => {
                    depth += 1;
                    if depth > MAX_FLOW_DEPTH {
                        return Some(line);
                    }
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        previous = c;
    }
    None
}

/// Every number in the document that is not finite (`.inf`, `-.inf`, `.nan`), with its
/// place: no score, weight or bound of a rubric can be one, and serde would take them.
pub(super) fn find_non_finite(
    value: &serde_yaml::Value,
    path: &mut String,
    out: &mut Vec<RawProblem>,
) {
    match value {
        serde_yaml::Value::Number(n) if n.as_f64().is_some_and(|f| !f.is_finite()) => {
            out.push((
                Code::NotFinite,
                path.clone(),
                format!("`{n}` is not a finite number"),
            ));
        }
        serde_yaml::Value::Sequence(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                find_non_finite(item, path, out);
                path.truncate(len);
            }
        }
        serde_yaml::Value::Mapping(map) => {
            for (key, item) in map {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                match key {
                    serde_yaml::Value::String(k) => path.push_str(k),
                    other => path.push_str(&format!("{other:?}")),
                }
                find_non_finite(item, path, out);
                path.truncate(len);
            }
        }
        serde_yaml::Value::Tagged(tagged) => find_non_finite(&tagged.value, path, out),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_too_deep_are_found_at_their_line_outside_quotes_and_comments() {
        let deep = format!("a: 1\nb: {}\n", "[".repeat(MAX_FLOW_DEPTH + 1));
        assert_eq!(too_deep(&deep), Some(2));
        let quoted = format!("a: ['{}']\n# {}\n", "[".repeat(100), "{".repeat(100));
        assert_eq!(too_deep(&quoted), None);
    }

    #[test]
    fn non_finite_numbers_are_named_with_their_path() {
        let value: serde_yaml::Value =
            serde_yaml::from_str("a: [1, .inf]\nb: { c: .nan }\n").expect("YAML");
        let mut found = Vec::new();
        find_non_finite(&value, &mut String::new(), &mut found);
        let paths: Vec<&str> = found.iter().map(|(_, p, _)| p.as_str()).collect();
        assert_eq!(paths, ["a[1]", "b.c"]);
        assert!(found.iter().all(|(code, _, _)| *code == Code::NotFinite));
    }
}
