//! `shell_file_work(command)`: the file work a shell command does that an agent's dedicated
//! tool does better, for scripts of any pack (the shipped `coding-agent-v1` grades shell
//! file work with it). The parsing is the plugin SDK's [`grade_plugin::shell`], so a
//! plugin judging commands and a shipped pack agree on every command.

use rhai::{Array, Dynamic, Engine, ImmutableString};

use grade_plugin::shell::{file_work, file_work_argv, FileWork};

/// Each step as a map: `#{ kind: "read", program: "sed", files: ["go.mod"] }`.
fn to_array(work: Vec<FileWork>) -> Array {
    work.into_iter()
        .map(|w| {
            let mut map = rhai::Map::new();
            map.insert("kind".into(), Dynamic::from(w.kind.as_str()));
            map.insert("program".into(), Dynamic::from(w.program));
            map.insert(
                "files".into(),
                Dynamic::from_array(w.files.into_iter().map(Dynamic::from).collect()),
            );
            Dynamic::from_map(map)
        })
        .collect()
}

pub(super) fn register(engine: &mut Engine) {
    // A command line (`cat a && rg x`).
    engine.register_fn("shell_file_work", |command: ImmutableString| {
        to_array(file_work(&command))
    });
    // A command as its words (`["bash", "-lc", "sed -n 1,9p a"]`, as Codex records it); a
    // word that is not text makes it no command.
    engine.register_fn("shell_file_work", |argv: Array| {
        let words: Option<Vec<ImmutableString>> = argv
            .into_iter()
            .map(|w| w.into_immutable_string().ok())
            .collect();
        let words = words.unwrap_or_default();
        let words: Vec<&str> = words.iter().map(ImmutableString::as_str).collect();
        to_array(file_work_argv(&words))
    });
    // Anything else (a missing `params.command`, a number) does no file work.
    engine.register_fn("shell_file_work", |_: ()| Array::new());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(script: &str) -> String {
        let mut engine = Engine::new();
        register(&mut engine);
        engine
            .eval::<Dynamic>(script)
            .map(|d| d.to_string())
            .unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn scripts_get_each_steps_file_work_from_a_line_or_from_words() {
        assert_eq!(
            run(
                r#"let w = shell_file_work("cd x && sed -n '1,9p' go.mod | head"); [w.len(), w[0].kind, w[0].program, w[0].files]"#
            ),
            r#"[1, "read", "sed", ["go.mod"]]"#
        );
        assert_eq!(
            run(
                r#"let w = shell_file_work(["bash", "-lc", "ls -la && echo x > out.txt"]); [w[0].kind, w[1].kind, w[1].files]"#
            ),
            r#"["list", "write", ["out.txt"]]"#
        );
        assert_eq!(run("shell_file_work(())"), "[]");
        assert_eq!(run(r#"shell_file_work(["ls", 3])"#), "[]");
    }
}
