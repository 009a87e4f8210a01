//! Where a block a script never closes opens: what a "missing `}`" points at.

/// Where the last `{` that is never closed opens (1-based line and column, in characters), or
/// `None` when every one is closed. Rhai reports a missing `}` where the file ends, which
/// sends an author to the last line; the open brace is where the mistake is. Strings, the
/// characters of `'x'`, comments and the text of backtick strings are skipped; a `${` inside
/// a backtick string opens a brace its `}` closes.
pub(super) fn unclosed_brace(source: &str) -> Option<(usize, usize)> {
    #[derive(Clone, Copy, PartialEq)]
    enum Open {
        Brace((usize, usize)),
        Interpolation,
    }
    let mut open: Vec<Open> = Vec::new();
    let chars: Vec<char> = source.chars().collect();
    let (mut line, mut column) = (1usize, 0usize);
    let mut i = 0;
    let mut text_mode = false; // inside a backtick string's text
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let advance = |i: &mut usize, line: &mut usize, column: &mut usize| {
            if chars[*i] == '\n' {
                *line += 1;
                *column = 0;
            } else {
                *column += 1;
            }
            *i += 1;
        };
        if text_mode {
            match (c, next) {
                ('\\', Some(_)) => {
                    advance(&mut i, &mut line, &mut column);
                }
                ('`', _) => text_mode = false,
                ('$', Some('{')) => {
                    advance(&mut i, &mut line, &mut column);
                    open.push(Open::Interpolation);
                    text_mode = false;
                }
                _ => {}
            }
            advance(&mut i, &mut line, &mut column);
            continue;
        }
        match (c, next) {
            ('/', Some('/')) => {
                while i < chars.len() && chars[i] != '\n' {
                    advance(&mut i, &mut line, &mut column);
                }
                continue;
            }
            ('/', Some('*')) => {
                advance(&mut i, &mut line, &mut column);
                advance(&mut i, &mut line, &mut column);
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    advance(&mut i, &mut line, &mut column);
                }
                advance(&mut i, &mut line, &mut column);
                advance(&mut i, &mut line, &mut column);
                continue;
            }
            ('"', _) | ('\'', _) => {
                advance(&mut i, &mut line, &mut column);
                while i < chars.len() && chars[i] != c && chars[i] != '\n' {
                    if chars[i] == '\\' {
                        advance(&mut i, &mut line, &mut column);
                    }
                    advance(&mut i, &mut line, &mut column);
                }
            }
            ('`', _) => text_mode = true,
            ('{', _) => open.push(Open::Brace((line, column + 1))),
            // The `}` of an interpolation goes back to its backtick string's text.
            ('}', _) => text_mode = open.pop() == Some(Open::Interpolation),
            _ => {}
        }
        advance(&mut i, &mut line, &mut column);
    }
    open.iter().rev().find_map(|o| match o {
        Open::Brace(at) => Some(*at),
        Open::Interpolation => None,
    })
}

#[cfg(test)]
mod tests {
    use super::unclosed_brace;

    #[test]
    fn an_unclosed_brace_is_found_where_it_opens() {
        assert_eq!(unclosed_brace("let x = 1;\n#{ points: 10\n"), Some((2, 2)));
        assert_eq!(
            unclosed_brace("if a {\n    if b {\n        1\n    }\n"),
            Some((1, 6))
        );
        assert_eq!(unclosed_brace("if a { 1 } else { 2 }"), None);
    }

    #[test]
    fn braces_in_strings_comments_and_backtick_text_do_not_count() {
        let source = "let s = \"{\"; // {\n/* { */ let c = '{';\nlet t = `{ ${ s } }`;\n";
        assert_eq!(unclosed_brace(source), None);
        assert_eq!(unclosed_brace("let t = `${ 1 + {`;"), Some((1, 17)));
        assert_eq!(unclosed_brace("let é = \"é\"; {"), Some((1, 14)));
    }
}
