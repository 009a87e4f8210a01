//! A small shell parser: enough of POSIX `sh` (quotes, escapes, `;` `&&` `||` `|` `&`,
//! redirections, heredocs, `sh -c`) to tell a command that writes files from one that reads,
//! and to name the file work a command does that an agent's dedicated tool would do better.
//!
//! One copy serves both: `grade`'s scripts call it as `shell_file_work(command)` (the
//! shipped `coding-agent-v1` pack grades shell file work with it), and a plugin calls
//! [`writes_files`] and [`file_work`] here, so a plugin judges commands as the shipped packs
//! do (`plugins/examples/shell`).

/// A word or an operator of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    /// Ends a simple command: `;`, `&&`, `||`, `&`, a newline, `(`, `)`.
    Separator,
    /// `|` or `|&`: ends a simple command whose output the next one reads.
    Pipe,
    /// `>`, `>>`, `>|`, `&>`, `&>>` (with an optional file descriptor before it): the next
    /// word is a file written (appended to with `>>`), unless it is a descriptor (`2>&1`).
    WriteTo {
        append: bool,
    },
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
            '|' => {
                flush(&mut word, &mut in_word, &mut tokens);
                match chars.get(i + 1) {
                    Some('|') => {
                        i += 1;
                        tokens.push(Token::Separator);
                    }
                    Some('&') => {
                        i += 1;
                        tokens.push(Token::Pipe);
                    }
                    _ => tokens.push(Token::Pipe),
                }
            }
            ';' | '(' | ')' => {
                flush(&mut word, &mut in_word, &mut tokens);
                tokens.push(Token::Separator);
            }
            '&' => {
                flush(&mut word, &mut in_word, &mut tokens);
                if chars.get(i + 1) == Some(&'>') {
                    i += 1;
                    let append = chars.get(i + 1) == Some(&'>');
                    if append {
                        i += 1;
                    }
                    tokens.push(Token::WriteTo { append });
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
                    ">" | ">|" => Token::WriteTo { append: false },
                    ">>" => Token::WriteTo { append: true },
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
    simple_commands(&tokenize(command)).iter().any(|simple| {
        simple.targets.iter().any(|(target, _)| !is_device(target))
            || simple_writes(&simple.words, depth)
    })
}

/// One simple command of a line: its words, the files its output is redirected into (each
/// with whether it is appended to), and whether it reads the output of the one before (`|`).
struct Simple<'t> {
    words: Vec<&'t str>,
    targets: Vec<(&'t str, bool)>,
    piped: bool,
}

fn simple_commands(tokens: &[Token]) -> Vec<Simple<'_>> {
    let mut out = Vec::new();
    let mut current = Simple {
        words: Vec::new(),
        targets: Vec::new(),
        piped: false,
    };
    let mut iter = tokens.iter().peekable();
    while let Some(token) = iter.next() {
        match token {
            Token::Word(w) => current.words.push(w),
            Token::WriteTo { append } => {
                if let Some(Token::Word(target)) = iter.peek() {
                    current.targets.push((target, *append));
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
            Token::Separator | Token::Pipe => {
                let piped = *token == Token::Pipe;
                let next = Simple {
                    words: Vec::new(),
                    targets: Vec::new(),
                    piped,
                };
                out.push(std::mem::replace(&mut current, next));
            }
        }
    }
    out.push(current);
    out.retain(|simple| !simple.words.is_empty() || !simple.targets.is_empty());
    out
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

/// The command a simple command runs, by its file name (`/usr/bin/sed` is `sed`), and its
/// arguments: variable assignments and wrappers (`sudo -u root`, `env`, `nice -n 5`) come
/// before it and are not it.
fn command_of<'w, 'a>(words: &'w [&'a str]) -> Option<(&'a str, &'w [&'a str])> {
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
    let (&name, args) = rest.split_first()?;
    Some((name.rsplit('/').next().unwrap_or(name), args))
}

/// `-i`, `-i.bak`, `--in-place`, or `i` in a cluster of short options (`-pi`, `-Ei`): `sed`,
/// `perl` and `ruby` edit their files in place.
fn in_place(args: &[&str]) -> bool {
    args.iter().any(|a| {
        a.starts_with("-i")
            || a.starts_with("--in-place")
            || (a.len() > 1
                && a.starts_with('-')
                && !a.starts_with("--")
                && a[1..].chars().all(|c| c.is_ascii_alphabetic())
                && a.contains('i'))
    })
}

/// The script of `sh -c SCRIPT` (`bash -lc`, `zsh -c`): the word after the first cluster of
/// short options holding `c`.
fn shell_script<'a>(name: &str, args: &[&'a str]) -> Option<&'a str> {
    if !matches!(name, "sh" | "bash" | "zsh" | "dash") {
        return None;
    }
    args.windows(2)
        .find(|w| w[0].starts_with('-') && !w[0].starts_with("--") && w[0].contains('c'))
        .map(|w| w[1])
}

fn simple_writes(words: &[&str], depth: usize) -> bool {
    let Some((name, args)) = command_of(words) else {
        return false;
    };
    let has = |flag: &str| args.contains(&flag);
    match name {
        _ if WRITERS.contains(&name) => true,
        "tee" => args.iter().any(|a| !a.starts_with('-') && !is_device(a)),
        // `-i`, `-i.bak`, `--in-place`, or `i` in a cluster of short options (`-pi`, `-Ei`).
        "sed" | "perl" | "ruby" => in_place(args),
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
        "sh" | "bash" | "zsh" | "dash" if depth < 4 => {
            shell_script(name, args).is_some_and(|script| writes(script, depth + 1))
        }
        _ => false,
    }
}

/// What a step of a command does that an agent's dedicated tool does better: the same words
/// as the tool kinds of `grade`'s entries (`metadata.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileWorkKind {
    /// Prints a file (`cat`, `head`, `tail`, `sed -n`, `less`, `nl`).
    Read,
    /// Searches file names or contents (`grep`, `rg`, `find`, `ag`, `fd`).
    Search,
    /// Lists a folder (`ls`, `tree`).
    List,
    /// Changes a file in place (`sed -i`, `perl -pi`, `>>` from `echo`, `cat` or `printf`,
    /// `tee -a`).
    Edit,
    /// Writes a whole file (`>` from `echo`, `cat` or `printf`, `tee`).
    Write,
}

impl FileWorkKind {
    /// The kind as `metadata.kind` spells it (`read`).
    pub fn as_str(self) -> &'static str {
        match self {
            FileWorkKind::Read => "read",
            FileWorkKind::Search => "search",
            FileWorkKind::List => "list",
            FileWorkKind::Edit => "edit",
            FileWorkKind::Write => "write",
        }
    }
}

/// One step of a command that does file work: what it does, the program, and the files it
/// names (none for `ls` or `rg PATTERN` of the current folder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWork {
    /// What the step does.
    pub kind: FileWorkKind,
    /// The program, by its file name (`sed`), or the one whose output is redirected.
    pub program: String,
    /// The files (or folders) it reads, searches, lists or writes, as written.
    pub files: Vec<String>,
}

/// The steps of a command line that do file work, in order: a file printed, searched,
/// listed, edited in place or written through a redirection. A filter reading a pipe
/// (`cargo test | tail -30`, `ps | grep x`) and a here-document fed to a command
/// (`cat <<EOF | kubectl apply -f -`) do no file work; `sh -c SCRIPT` is read into.
pub fn file_work(command: &str) -> Vec<FileWork> {
    file_work_at(command, 0)
}

/// [`file_work`] of a command given as its words, as some agents record it
/// (`["bash", "-lc", "sed -n 1,20p go.mod"]`).
pub fn file_work_argv(argv: &[&str]) -> Vec<FileWork> {
    step_work(argv, &[], false, 0)
}

fn file_work_at(command: &str, depth: usize) -> Vec<FileWork> {
    simple_commands(&tokenize(command))
        .iter()
        .flat_map(|simple| step_work(&simple.words, &simple.targets, simple.piped, depth))
        .collect()
}

/// `grep`'s options that take the next word as their value; `rg` takes these too.
const GREP_VALUED: &[&str] = &[
    "-e",
    "-f",
    "-A",
    "-B",
    "-C",
    "-m",
    "--regexp",
    "--file",
    "--max-count",
];

/// Whether `option` of `program` takes the next word as its value (the value is no file).
fn takes_value(program: &str, option: &str) -> bool {
    let own: &[&str] = match program {
        "head" | "tail" => &["-n", "-c", "--lines", "--bytes"],
        "sed" => &["-e", "-f", "-l", "--expression", "--file"],
        "grep" | "egrep" | "fgrep" => GREP_VALUED,
        "rg" => &[
            "-g",
            "-t",
            "-T",
            "-j",
            "-M",
            "--glob",
            "--type",
            "--type-not",
        ],
        "ag" | "ack" => &["-A", "-B", "-C", "-m", "-G", "--ignore"],
        "fd" | "fdfind" => &["-e", "-t", "-d", "-E", "--extension", "--type", "--exclude"],
        "tree" => &["-L", "-I", "-P"],
        "nl" => &["-b", "-w", "-s"],
        _ => &[],
    };
    own.contains(&option) || (program == "rg" && GREP_VALUED.contains(&option))
}

/// The words of a command that are not options nor their values (`--` ends the options).
fn operands<'a>(program: &str, args: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if *word == "--" {
            out.extend(words.by_ref());
            break;
        }
        if word.starts_with('-') && word.len() > 1 {
            if takes_value(program, word) {
                words.next();
            }
            continue;
        }
        out.push(*word);
    }
    out
}

fn step_work(words: &[&str], targets: &[(&str, bool)], piped: bool, depth: usize) -> Vec<FileWork> {
    let files = |list: Vec<&str>| list.into_iter().map(str::to_owned).collect::<Vec<_>>();
    let work = |kind, program: &str, list: Vec<&str>| FileWork {
        kind,
        program: program.to_owned(),
        files: files(list),
    };
    let Some((name, args)) = command_of(words) else {
        return Vec::new();
    };
    let written: Vec<(&str, bool)> = targets
        .iter()
        .copied()
        .filter(|(target, _)| !is_device(target))
        .collect();
    if !written.is_empty() && matches!(name, "cat" | "echo" | "printf") {
        let kind = if written.iter().all(|(_, append)| *append) {
            FileWorkKind::Edit
        } else {
            FileWorkKind::Write
        };
        return vec![work(kind, name, written.iter().map(|(t, _)| *t).collect())];
    }
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(a));
    let operands = operands(name, args);
    let step = match name {
        "sh" | "bash" | "zsh" | "dash" => {
            return match shell_script(name, args) {
                Some(script) if depth < 4 => file_work_at(script, depth + 1),
                _ => Vec::new(),
            };
        }
        "cat" | "head" | "tail" | "less" | "more" | "nl" | "bat" | "batcat" => {
            (!operands.is_empty()).then(|| work(FileWorkKind::Read, name, operands))
        }
        "sed" => {
            // Without `-e` or `-f`, the first operand is the script.
            let scripted = has(&["-e", "-f", "--expression", "--file"]);
            let files = operands.get(usize::from(!scripted)..).unwrap_or_default();
            if files.is_empty() {
                None
            } else if in_place(args) {
                Some(work(FileWorkKind::Edit, name, files.to_vec()))
            } else {
                Some(work(FileWorkKind::Read, name, files.to_vec()))
            }
        }
        "perl" | "ruby" if in_place(args) => {
            let files = operands.get(1..).unwrap_or_default();
            Some(work(FileWorkKind::Edit, name, files.to_vec()))
        }
        "grep" | "egrep" | "fgrep" => {
            let patterned = has(&["-e", "-f", "--regexp", "--file"]);
            let files = operands.get(usize::from(!patterned)..).unwrap_or_default();
            let recursive = args.iter().any(|a| {
                matches!(*a, "--recursive" | "--dereference-recursive")
                    || (a.starts_with('-')
                        && !a.starts_with("--")
                        && (a.contains('r') || a.contains('R')))
            });
            (!files.is_empty() || recursive)
                .then(|| work(FileWorkKind::Search, name, files.to_vec()))
        }
        "rg" | "ag" | "ack" => {
            let listing = has(&["--files"]);
            let patterned = listing || has(&["-e", "-f", "--regexp", "--file"]);
            let files = operands.get(usize::from(!patterned)..).unwrap_or_default();
            // Reading a pipe, it filters the output before it; otherwise it searches the folder.
            (!piped || !files.is_empty()).then(|| work(FileWorkKind::Search, name, files.to_vec()))
        }
        "fd" | "fdfind" => {
            let files = operands.get(1..).unwrap_or_default();
            Some(work(FileWorkKind::Search, name, files.to_vec()))
        }
        "find" => {
            let paths: Vec<&str> = args
                .iter()
                .take_while(|a| !a.starts_with('-') && !matches!(**a, "(" | "!"))
                .copied()
                .collect();
            Some(work(FileWorkKind::Search, name, paths))
        }
        "ls" | "tree" | "dir" => Some(work(FileWorkKind::List, name, operands)),
        "tee" => {
            let files: Vec<&str> = operands.into_iter().filter(|f| !is_device(f)).collect();
            let kind = if has(&["-a", "--append"]) {
                FileWorkKind::Edit
            } else {
                FileWorkKind::Write
            };
            (!files.is_empty()).then(|| work(kind, name, files))
        }
        _ => None,
    };
    step.into_iter().collect()
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

    fn kinds(command: &str) -> Vec<(&'static str, String, Vec<String>)> {
        file_work(command)
            .into_iter()
            .map(|w| (w.kind.as_str(), w.program, w.files))
            .collect()
    }

    fn one(
        kind: &'static str,
        program: &str,
        files: &[&str],
    ) -> Vec<(&'static str, String, Vec<String>)> {
        vec![(
            kind,
            program.to_owned(),
            files.iter().map(|f| f.to_string()).collect(),
        )]
    }

    #[test]
    fn file_work_names_the_step_kind_and_files() {
        let table: &[(&str, &str, &str, &[&str])] = &[
            ("cat src/main.rs", "read", "cat", &["src/main.rs"]),
            ("sed -n '1,200p' go.mod", "read", "sed", &["go.mod"]),
            ("head -n 20 a.txt", "read", "head", &["a.txt"]),
            ("sed -i 's/a/b/' f.py", "edit", "sed", &["f.py"]),
            ("perl -pi -e 's/a/b/' f", "edit", "perl", &["f"]),
            (
                "grep -n 'fn main' src/lib.rs",
                "search",
                "grep",
                &["src/lib.rs"],
            ),
            ("grep -rn TODO", "search", "grep", &[]),
            ("rg -n x src", "search", "rg", &["src"]),
            ("find . -name '*.rs'", "search", "find", &["."]),
            ("ls -la", "list", "ls", &[]),
            ("echo hi > notes.txt", "write", "echo", &["notes.txt"]),
            (
                "cat >> CHANGELOG.md <<'EOF'\n## 1.2\nEOF",
                "edit",
                "cat",
                &["CHANGELOG.md"],
            ),
            ("printf x | tee out.log", "write", "tee", &["out.log"]),
        ];
        for (command, kind, program, files) in table {
            assert_eq!(kinds(command), one(kind, program, files), "{command}");
        }
        assert_eq!(
            kinds("cd /w && cat a && rg -n x | sed -n '1,5p'"),
            vec![
                ("read", "cat".to_owned(), vec!["a".to_owned()]),
                ("search", "rg".to_owned(), vec![]),
            ]
        );
    }

    #[test]
    fn filters_of_a_pipe_and_other_commands_do_no_file_work() {
        for command in [
            "cargo test 2>&1 | tail -30",
            "ps aux | grep foo",
            "git log | rg fix",
            "cat <<EOF | kubectl apply -f -\nkind: Pod\nEOF",
            "make 2>&1",
            "python3 gen.py",
            "echo done",
            "curl -s https://example.com",
            "applypatch << 'PATCH'\n*** Begin Patch\n*** Update File: go.mod\n*** End Patch\nPATCH",
        ] {
            assert_eq!(kinds(command), vec![], "{command}");
        }
    }

    #[test]
    fn a_shell_script_is_read_into_from_a_line_or_from_words() {
        assert_eq!(
            kinds("bash -lc 'cat a.txt'"),
            one("read", "cat", &["a.txt"])
        );
        let argv = file_work_argv(&["bash", "-lc", "sed -n '1,160p' README.md"]);
        assert_eq!(argv.len(), 1);
        assert_eq!(
            (argv[0].kind, argv[0].files.clone()),
            (FileWorkKind::Read, vec!["README.md".to_owned()])
        );
        assert_eq!(file_work_argv(&["ls", "-la"])[0].kind, FileWorkKind::List);
        assert!(file_work_argv(&[]).is_empty());
    }
}
