//! A small shell parser: enough of POSIX `sh` (quotes, escapes, `;` `&&` `||` `|` `&`,
//! redirections, heredocs, `sh -c`) to tell a command that writes files from one that reads.

/// A word or an operator of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    /// Ends a simple command: `;`, `&&`, `||`, `|`, `&`, a newline, `(`, `)`.
    Separator,
    /// `>`, `>>`, `>|`, `&>`, `&>>` (with an optional file descriptor before it): the next
    /// word is a file written, unless the operator ends in `&` (`2>&1`).
    WriteTo,
    /// `<`, `<<<`, `>&`, `<&`: the next word is read from, or a descriptor.
    Other,
    /// `<<DELIM` / `<<-DELIM`: the lines up to `DELIM` are data, not commands.
    Heredoc,
}

fn tokenize(line: &str) -> Vec<Token> {
    let chars: Vec<char> = line.chars().collect();
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut pending_heredocs: Vec<String> = Vec::new();
    let mut i = 0;
    let flush = |word: &mut String, in_word: &mut bool, tokens: &mut Vec<Token>| {
        if *in_word {
            tokens.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    word.push(chars[i]);
                    i += 1;
                }
            }
            '"' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                    }
                    word.push(chars[i]);
                    i += 1;
                }
            }
            '\\' => {
                in_word = true;
                if let Some(&next) = chars.get(i + 1) {
                    if next != '\n' {
                        word.push(next);
                    }
                    i += 1;
                }
            }
            '#' if !in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            ' ' | '\t' => flush(&mut word, &mut in_word, &mut tokens),
            '\n' => {
                flush(&mut word, &mut in_word, &mut tokens);
                tokens.push(Token::Separator);
                // Heredoc bodies start on the next line: skip them whole.
                for delimiter in pending_heredocs.drain(..) {
                    loop {
                        let start = i + 1;
                        let end = chars[start.min(chars.len())..]
                            .iter()
                            .position(|&c| c == '\n')
                            .map_or(chars.len(), |p| start + p);
                        let body: String = chars[start.min(end)..end].iter().collect();
                        i = end;
                        if body.trim() == delimiter || end >= chars.len() {
                            break;
                        }
                    }
                }
            }
            ';' | '|' | '(' | ')' => {
                flush(&mut word, &mut in_word, &mut tokens);
                tokens.push(Token::Separator);
            }
            '&' => {
                flush(&mut word, &mut in_word, &mut tokens);
                if chars.get(i + 1) == Some(&'>') {
                    i += 1;
                    if chars.get(i + 1) == Some(&'>') {
                        i += 1;
                    }
                    tokens.push(Token::WriteTo);
                } else {
                    tokens.push(Token::Separator);
                }
            }
            '>' | '<' => {
                // A descriptor number just before belongs to the operator (`2>`), not a word.
                if in_word && !word.is_empty() && word.chars().all(|c| c.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                flush(&mut word, &mut in_word, &mut tokens);
                let mut op = String::from(c);
                while let Some(&next) = chars.get(i + 1) {
                    if matches!(next, '>' | '<' | '&' | '|' | '-') && op.len() < 3 {
                        op.push(next);
                        i += 1;
                    } else {
                        break;
                    }
                }
                let token = match op.as_str() {
                    ">" | ">>" | ">|" => Token::WriteTo,
                    "<<" | "<<-" => Token::Heredoc,
                    _ => Token::Other,
                };
                if token == Token::Heredoc {
                    // The delimiter is the next word, quotes removed.
                    let mut j = i + 1;
                    while j < chars.len() && (chars[j] == ' ' || chars[j] == '\t') {
                        j += 1;
                    }
                    let mut delimiter = String::new();
                    while j < chars.len()
                        && !chars[j].is_whitespace()
                        && !";|&<>()".contains(chars[j])
                    {
                        if !matches!(chars[j], '\'' | '"' | '\\') {
                            delimiter.push(chars[j]);
                        }
                        j += 1;
                    }
                    pending_heredocs.push(delimiter);
                    i = j;
                    tokens.push(Token::Heredoc);
                    continue;
                }
                tokens.push(token);
            }
            _ => {
                in_word = true;
                word.push(c);
            }
        }
        i += 1;
    }
    flush(&mut word, &mut in_word, &mut tokens);
    tokens
}

/// Targets of an output redirection that are not files.
fn is_device(target: &str) -> bool {
    target.starts_with("/dev/") || target.starts_with('&')
}

/// Whether any simple command of the line writes a file.
pub fn writes_files(command: &str) -> bool {
    writes(command, 0)
}

fn writes(command: &str, depth: usize) -> bool {
    let tokens = tokenize(command);
    let mut words: Vec<&str> = Vec::new();
    let mut iter = tokens.iter().peekable();
    while let Some(token) = iter.next() {
        match token {
            Token::Word(w) => words.push(w),
            Token::WriteTo => {
                if let Some(Token::Word(target)) = iter.peek() {
                    if !is_device(target) {
                        return true;
                    }
                    iter.next();
                }
            }
            Token::Other => {
                // The operand of `<` or `>&` is not an argument of the command.
                if let Some(Token::Word(_)) = iter.peek() {
                    iter.next();
                }
            }
            Token::Heredoc => {}
            Token::Separator => {
                if simple_writes(&words, depth) {
                    return true;
                }
                words.clear();
            }
        }
    }
    simple_writes(&words, depth)
}

/// Commands that change files whatever their arguments.
const WRITERS: [&str; 16] = [
    "cp", "mv", "rm", "rmdir", "mkdir", "touch", "ln", "chmod", "chown", "truncate", "install",
    "patch", "rsync", "unzip", "shred", "mkfifo",
];

/// `git` subcommands that change the working tree.
const GIT_WRITERS: [&str; 15] = [
    "apply",
    "checkout",
    "restore",
    "rm",
    "mv",
    "clean",
    "stash",
    "merge",
    "rebase",
    "pull",
    "cherry-pick",
    "revert",
    "am",
    "init",
    "clone",
];

/// Commands that run the rest of their words as another command.
const WRAPPERS: [&str; 8] = [
    "sudo", "env", "time", "nice", "nohup", "command", "exec", "xargs",
];

/// Options of the wrappers that take a value (`sudo -u USER`, `nice -n 5`, `xargs -I {}`).
const WRAPPER_VALUES: [&str; 8] = ["-u", "-g", "-n", "-C", "-h", "-I", "-P", "-L"];

fn simple_writes(words: &[&str], depth: usize) -> bool {
    // Variable assignments and wrappers come before the command itself.
    let mut rest = words;
    while let Some((first, tail)) = rest.split_first() {
        let assignment = first.contains('=')
            && first.split('=').next().is_some_and(|n| {
                !n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_')
            });
        if assignment || WRAPPERS.contains(first) {
            rest = tail;
            // A wrapper's own options (`sudo -u root`, `nice -n 5`) are not the command.
            while let Some((opt, tail)) = rest.split_first() {
                if !opt.starts_with('-') {
                    break;
                }
                rest = if WRAPPER_VALUES.contains(opt) {
                    tail.get(1..).unwrap_or_default()
                } else {
                    tail
                };
            }
        } else {
            break;
        }
    }
    let Some((&name, args)) = rest.split_first() else {
        return false;
    };
    let name = name.rsplit('/').next().unwrap_or(name);
    let has = |flag: &str| args.contains(&flag);
    match name {
        _ if WRITERS.contains(&name) => true,
        "tee" => args.iter().any(|a| !a.starts_with('-') && !is_device(a)),
        // `-i`, `-i.bak`, `--in-place`, or `i` in a cluster of short options (`-pi`, `-Ei`).
        "sed" | "perl" | "ruby" => args.iter().any(|a| {
            a.starts_with("-i")
                || a.starts_with("--in-place")
                || (a.len() > 1
                    && a.starts_with('-')
                    && !a.starts_with("--")
                    && a[1..].chars().all(|c| c.is_ascii_alphabetic())
                    && a.contains('i'))
        }),
        "dd" => args.iter().any(|a| a.starts_with("of=")),
        "tar" => {
            args.first().is_some_and(|mode| {
                let mode = mode.trim_start_matches('-');
                !mode.starts_with('-') && (mode.contains('x') || mode.contains('c'))
            }) || has("--extract")
                || has("--create")
                || has("-x")
                || has("-c")
        }
        "find" => {
            has("-delete")
                || args.windows(2).any(|w| {
                    (w[0] == "-exec" || w[0] == "-execdir") && simple_writes(&w[1..], depth)
                })
        }
        "git" => args
            .iter()
            .find(|a| !a.starts_with('-'))
            .is_some_and(|sub| GIT_WRITERS.contains(sub) || (*sub == "reset" && has("--hard"))),
        "sh" | "bash" | "zsh" | "dash" if depth < 4 => args
            .windows(2)
            .find(|w| w[0].starts_with('-') && !w[0].starts_with("--") && w[0].contains('c'))
            .is_some_and(|w| writes(w[1], depth + 1)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_not_writes() {
        for command in [
            "cat src/main.rs",
            "grep -rn 'fn main' src | head -20",
            "sed -n '1,40p' Cargo.toml",
            "ls -la && git status",
            "git diff HEAD~1 -- src/",
            "find . -name '*.rs' -type f",
            "cargo test 2>&1 | tail -30",
            "rg TODO > /dev/null && echo found",
            "echo 'a > b' && printf '%s\\n' \"x >> y\"",
            "tar -tzf archive.tgz",
            "perl -ne 'print if /x/' file",
            "wc -l < input.txt",
            "ls # > not-a-file",
        ] {
            assert!(!writes_files(command), "{command}");
        }
    }

    #[test]
    fn writes_are_found() {
        for command in [
            "echo hi > notes.txt",
            "cat >> CHANGELOG.md <<'EOF'\n## 1.2\n- fixed\nEOF",
            "printf x | tee out.log",
            "sed -i 's/foo/bar/g' src/lib.rs",
            "sed -i.bak -e 's/a/b/' f",
            "perl -pi -e 's/a/b/' f",
            "cp a.txt b.txt",
            "sudo -u root rm -rf build",
            "FOO=1 touch marker",
            "mkdir -p out && ls out",
            "git checkout -- src/lib.rs",
            "git reset --hard HEAD",
            "tar xzf release.tgz",
            "dd if=/dev/zero of=disk.img bs=1M count=1",
            "find . -name '*.orig' -delete",
            "bash -lc 'echo x > y'",
            "cargo test &> test.log",
            "python3 gen.py 2> errors.txt",
        ] {
            assert!(writes_files(command), "{command}");
        }
    }

    #[test]
    fn a_heredoc_body_is_data_not_commands() {
        assert!(!writes_files("cat <<EOF\nrm -rf /\necho x > y\nEOF\nls"));
        assert!(writes_files("cat <<EOF\nhello\nEOF\ntouch after"));
    }

    #[test]
    fn descriptor_redirections_are_not_files() {
        assert!(!writes_files("make 2>&1"));
        assert!(!writes_files("make >&2"));
        assert!(!writes_files("ls 1>/dev/null 2>/dev/stderr"));
    }
}
