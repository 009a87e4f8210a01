//! `shell_file_work(command)`: the file work a shell command does that an agent's dedicated
//! tool does better, for scripts of any pack (the shipped `coding-agent-v1` grades shell
//! file work with it). The parsing is the plugin SDK's [`grade_plugin::shell`], so a
//! plugin judging commands and a shipped pack agree on every command. Beside it, the file
//! work of an `apply_patch` patch (`patch_file_work`) and a path made comparable
//! (`fold_path`): written in Rhai, the two were most of `coding-agent-v1`'s run.

use rhai::{Array, Dynamic, Engine, ImmutableString};

use grade_plugin::shell::{file_work, file_work_argv, FileWork, FileWorkKind};

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
    engine.register_fn("patch_file_work", |patch: &str| {
        to_array(patch_file_work(patch))
    });
    engine.register_fn("patch_file_work", |_: ()| Array::new());
    engine.register_fn("fold_path", |path: &str, cwd: Dynamic| -> ImmutableString {
        let cwd = cwd.read_lock::<ImmutableString>();
        fold_path(path, cwd.as_deref().map(ImmutableString::as_str)).into()
    });
}

/// The files an `apply_patch` patch (`*** Begin Patch` … `*** End Patch`, as Codex CLI
/// writes it) changes, a step each in the patch's order: `*** Update File: F` edits `F`,
/// `*** Add File: F` and `*** Move to: F` write it. A deleted file is no file work of these
/// kinds. The path is the rest of the line, as written.
fn patch_file_work(patch: &str) -> Vec<FileWork> {
    const HEADERS: [(&str, FileWorkKind); 3] = [
        ("*** Update File: ", FileWorkKind::Edit),
        ("*** Add File: ", FileWorkKind::Write),
        ("*** Move to: ", FileWorkKind::Write),
    ];
    patch
        .split('\n')
        .filter_map(|line| {
            HEADERS.iter().find_map(|(header, kind)| {
                line.strip_prefix(header).map(|file| FileWork {
                    kind: *kind,
                    program: "apply_patch".to_owned(),
                    files: vec![file.to_owned()],
                })
            })
        })
        .collect()
}

/// `path` as a key two calls naming one file share: trimmed, made absolute with `cwd` when
/// it is relative (not `/…` nor `~…`) and `cwd` is given and not empty, its empty, `.` and
/// `..` segments folded (`..` at the top stays there). A path that is not absolute stays
/// relative, as `./…`. Empty when nothing is left: a blank path, or `/`.
fn fold_path(path: &str, cwd: Option<&str>) -> String {
    let path = path.trim();
    if path.is_empty() {
        return String::new();
    }
    let joined;
    let path = match cwd {
        Some(cwd) if !cwd.is_empty() && !path.starts_with('/') && !path.starts_with('~') => {
            joined = format!("{cwd}/{path}");
            joined.as_str()
        }
        _ => path,
    };
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(segment),
        }
    }
    if parts.is_empty() && path.starts_with('/') {
        return String::new();
    }
    let mut out = String::with_capacity(path.len() + 1);
    if !path.starts_with('/') {
        out.push('.');
    }
    for segment in parts {
        out.push('/');
        out.push_str(segment);
    }
    out
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

    #[test]
    fn scripts_get_a_patchs_files_and_a_folded_path() {
        let patch = "*** Begin Patch\\n*** Update File: a.go\\n@@\\n-x\\n+y\\n*** Add File: docs/b.md\\n+z\\n*** Update File: c.go\\n*** Move to: d.go\\n*** Delete File: e.go\\n*** End Patch";
        assert_eq!(
            run(&format!(
                r#"patch_file_work("{patch}").map(|s| [s.kind, s.program, s.files])"#
            )),
            r#"[["edit", "apply_patch", ["a.go"]], ["write", "apply_patch", ["docs/b.md"]], ["edit", "apply_patch", ["c.go"]], ["write", "apply_patch", ["d.go"]]]"#
        );
        assert_eq!(run("patch_file_work(())"), "[]");
        assert_eq!(
            run(
                r#"[fold_path(" src/../lib/./x.rs ", "/w"), fold_path("a", ()), fold_path("/", "/w"), fold_path("~/x", "/w"), fold_path("", "/w")]"#
            ),
            r#"["/w/lib/x.rs", "./a", "", "./~/x", ""]"#
        );
    }

    /// The Rhai `fold` and patch loop `coding-agent-v1` had before the native functions:
    /// the native ones must give what they gave, or the pack's verdicts change.
    const RHAI_FOLD: &str = r#"
        fn fold(path, cwd) {
            let p = path;
            p.trim();
            if p == "" { return ""; }
            if !p.starts_with("/") && !p.starts_with("~") && type_of(cwd) == "string" && cwd != "" {
                p = cwd + "/" + p;
            }
            let parts = [];
            for seg in p.split("/") {
                if seg == "" || seg == "." { continue; }
                if seg == ".." { if parts.len() > 0 { parts.pop(); } continue; }
                parts.push(seg);
            }
            let out = if p.starts_with("/") { "" } else { "." };
            for seg in parts { out += "/" + seg; }
            out
        }
        fn patch_files(patch) {
            let edited = [];
            let written = [];
            for line in patch.split("\n") {
                if line.starts_with("*** Update File: ") { edited.push(line.sub_string(17)); }
                else if line.starts_with("*** Add File: ") { written.push(line.sub_string(14)); }
                else if line.starts_with("*** Move to: ") { written.push(line.sub_string(13)); }
            }
            [edited, written]
        }
    "#;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
        #[test]
        fn fold_path_and_patch_file_work_give_what_the_rhai_they_replaced_gave(
            path in "[ ./a~é\t]{0,12}",
            cwd in proptest::option::of("[ ./b~]{0,6}"),
            lines in proptest::collection::vec(
                "(\\*\\*\\* (Update File|Add File|Move to|Delete File): ?)?[ a./é\r]{0,6}", 0..6),
        ) {
            let mut engine = Engine::new();
            // A debug build's default nesting limits are lower than the host's.
            engine.set_max_expr_depths(64, 32);
            register(&mut engine);
            let ast = engine.compile(RHAI_FOLD).unwrap();
            let cwd_value = cwd.clone().map_or(Dynamic::UNIT, Dynamic::from);
            let old: String = engine
                .call_fn(&mut rhai::Scope::new(), &ast, "fold", (path.clone(), cwd_value))
                .unwrap();
            proptest::prop_assert_eq!(fold_path(&path, cwd.as_deref()), old);
            let patch = lines.join("\n");
            let old: Array = engine
                .call_fn(&mut rhai::Scope::new(), &ast, "patch_files", (patch.clone(),))
                .unwrap();
            let work = patch_file_work(&patch);
            let of = |kind: FileWorkKind| -> Vec<String> {
                work.iter().filter(|w| w.kind == kind).flat_map(|w| w.files.clone()).collect()
            };
            let strings = |d: &Dynamic| -> Vec<String> {
                d.clone().into_array().unwrap().into_iter().map(|s| s.into_string().unwrap()).collect()
            };
            proptest::prop_assert_eq!(of(FileWorkKind::Edit), strings(&old[0]));
            proptest::prop_assert_eq!(of(FileWorkKind::Write), strings(&old[1]));
        }
    }
}
