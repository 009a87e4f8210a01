//! Embeds the shipped packs (`rubrics/*/rubric.yaml`, `.rhai` scripts, `.prompt.md` templates
//! and `tests/` fixtures) into the
//! library, so `--rubric cleo-v1` works from any directory.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a build script reports failure by panicking with its message; there is no caller to return to"
)]

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let rubrics = Path::new(&manifest).join("../rubrics");
    println!("cargo:rerun-if-changed={}", rubrics.display());
    let mut packs: Vec<_> = std::fs::read_dir(&rubrics)
        .map(|dir| {
            dir.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.join("rubric.yaml").is_file())
                .collect()
        })
        .unwrap_or_default();
    packs.sort();
    let mut out = String::from("pub static BUILTIN_PACKS: &[(&str, &[(&str, &str)])] = &[\n");
    for pack in packs {
        println!("cargo:rerun-if-changed={}", pack.display());
        let id = pack
            .file_name()
            .and_then(|n| n.to_str())
            .expect("pack folder names are UTF-8");
        let mut files: Vec<_> = std::fs::read_dir(&pack)
            .expect("pack folder is readable")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.is_file()
                    && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n == "rubric.yaml" || n.ends_with(".rhai") || n.ends_with(".prompt.md")
                    })
            })
            .collect();
        // Test fixtures travel with the pack, so `grade rubric test cleo-v1` works anywhere.
        let tests = pack.join("tests");
        if tests.is_dir() {
            let mut stack = vec![tests];
            while let Some(dir) = stack.pop() {
                println!("cargo:rerun-if-changed={}", dir.display());
                for entry in std::fs::read_dir(&dir)
                    .expect("tests folder is readable")
                    .filter_map(Result::ok)
                {
                    let path = entry.path();
                    if path.is_dir() {
                        stack.push(path);
                    } else {
                        files.push(path);
                    }
                }
            }
        }
        files.sort();
        write!(out, "    ({id:?}, &[").unwrap();
        for file in files {
            println!("cargo:rerun-if-changed={}", file.display());
            let name = file
                .strip_prefix(&pack)
                .expect("inside the pack")
                .to_str()
                .expect("file names are UTF-8");
            let abs = file.canonicalize().expect("pack file exists");
            write!(
                out,
                "({name:?}, include_str!({:?})), ",
                abs.display().to_string()
            )
            .unwrap();
        }
        out.push_str("]),\n");
    }
    out.push_str("];\n");
    let dest =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("builtin_packs.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}
