//! Unit tests of the source registry: formats registered at run time, claiming before
//! detection, and packs that list the formats they grade.

use super::*;
use crate::entry::{Entry, Metadata, Outcome, Params};

/// Lines of `session<TAB>operation`, recognised by a `#toy` first line.
struct Toy;

impl SourceFormat for Toy {
    fn name(&self) -> &str {
        "toy"
    }
    fn noun(&self) -> &str {
        "a toy log"
    }
    fn about(&self) -> &str {
        "A toy log"
    }
    fn sniff(&self, evidence: &Evidence<'_>) -> Sniff {
        match evidence {
            Evidence::Head(head) if head.starts_with(b"#toy") => Sniff::Certain,
            _ => Sniff::No,
        }
    }
    fn read(
        &self,
        input: &Input<'_>,
        filter: &SessionFilter,
        _: &ReadOptions,
    ) -> Result<SourceRead, SourceError> {
        let bytes = input.bytes()?;
        let mut groups = super::super::common::SessionGroups::default();
        for line in String::from_utf8_lossy(&bytes).lines().skip(1) {
            let (session, operation) =
                line.split_once('\t').ok_or_else(|| SourceError::Format {
                    path: input.name().to_owned(),
                    message: format!("no tab in `{line}`"),
                })?;
            if filter.wants(session) {
                groups.push(Entry {
                    timestamp: "2026-01-01T00:00:00Z".into(),
                    instant: 0,
                    session_id: session.into(),
                    domain: "toy".into(),
                    operation: operation.into(),
                    params: Params::new(),
                    result: Outcome {
                        success: true,
                        exit_code: 0,
                        duration: 0.0,
                    },
                    metadata: Metadata::with_source("toy"),
                    error: None,
                    origin: crate::entry::Origin::UNKNOWN,
                });
            }
        }
        Ok(SourceRead {
            sessions: groups.into_sessions().0,
            ..SourceRead::default()
        })
    }
}

/// The built-in formats and the toy, registered after them.
fn with_toy() -> Registry {
    let mut registry = Registry::builtin().clone();
    registry.register(Arc::new(Toy)).unwrap();
    registry
}

#[test]
fn a_format_registered_at_run_time_is_detected_and_read_from_bytes() {
    let mut registry = with_toy();
    let input = Input::Bytes {
        name: Path::new("-"),
        bytes: b"#toy\ns1\tfind\ns2\tshow\ns1\tadd\n",
    };
    assert_eq!(registry.detect(&input).unwrap().name(), "toy");
    let read = registry
        .read(&input, None, &SessionFilter::All, &ReadOptions::default())
        .unwrap();
    let ops: Vec<Vec<&str>> = read
        .sessions
        .iter()
        .map(|s| s.entries.iter().map(|e| e.operation.as_str()).collect())
        .collect();
    assert_eq!(ops, [vec!["find", "add"], vec!["show"]]);
    assert!(
        registry.register(Arc::new(Toy)).is_err(),
        "a name is taken once"
    );
    // The builtin registry does not know it, and says what it tried.
    let err = Registry::builtin().detect(&input).unwrap_err().to_string();
    // The list is the registry's own (every format's noun, in detection order), so a new
    // format changes no test: checked here for its shape, built from the formats.
    let tried = Registry::builtin().tried();
    assert!(err.contains(&format!("(tried {tried})")), "{err}");
    let nouns: Vec<&str> = Registry::builtin().formats().map(|f| f.noun()).collect();
    if let Some((last, rest)) = nouns.split_last() {
        assert_eq!(tried, format!("{} and {last}", rest.join(", ")));
    }
    assert!(
        tried.starts_with("a CLEO database, a CLEO audit log, "),
        "{tried}"
    );
    let err = registry
        .detect(&Input::Bytes {
            name: Path::new("-"),
            bytes: b"nope\n",
        })
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("a SWE-agent trajectory and a toy log)"),
        "{err}"
    );
}

/// A toy log that claims any file whose first bytes mention `toy-claim`, as a plugin's
/// detector does, even one a built-in format would take for its own.
struct Claiming;

impl SourceFormat for Claiming {
    fn name(&self) -> &str {
        "claiming"
    }
    fn noun(&self) -> &str {
        "a claiming log"
    }
    fn about(&self) -> &str {
        "A log claimed by its first bytes"
    }
    fn claim_bytes(&self) -> usize {
        64
    }
    fn claims(&self, head: &[u8]) -> bool {
        assert!(head.len() <= 64, "a claim sees only the bytes it asked for");
        head.windows(9).any(|w| w == b"toy-claim")
    }
    fn read(
        &self,
        input: &Input<'_>,
        filter: &SessionFilter,
        options: &ReadOptions,
    ) -> Result<SourceRead, SourceError> {
        Toy.read(input, filter, options)
    }
}

#[test]
fn a_claiming_format_is_asked_before_content_detection() {
    let cleo_line = br#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"toy-claim","domain":"tasks","operation":"show","result":{"success":true}}"#;
    let input = Input::Bytes {
        name: Path::new("-"),
        bytes: cleo_line,
    };
    assert_eq!(
        Registry::builtin().detect(&input).unwrap().name(),
        "cleo-jsonl"
    );
    let mut registry = Registry::builtin().clone();
    registry.register(Arc::new(Claiming)).unwrap();
    assert_eq!(registry.detect(&input).unwrap().name(), "claiming");
    // Past the bytes it asked for, a mention does not count.
    let mut late = vec![b' '; 100];
    late.extend_from_slice(cleo_line);
    let late = Input::Bytes {
        name: Path::new("-"),
        bytes: &late,
    };
    assert_eq!(registry.detect(&late).unwrap().name(), "cleo-jsonl");
}

#[test]
fn bytes_read_as_the_file_does() {
    let log = concat!(
        r#"{"timestamp":"2026-03-01T00:00:01Z","sessionId":"b","domain":"tasks","operation":"find","result":{"success":true}}"#,
        "\n",
        r#"{"timestamp":"2026-03-01T00:00:00Z","sessionId":"a","domain":"tasks","operation":"show","result":{"success":false}}"#,
        "\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    std::fs::write(&path, log).unwrap();
    let registry = Registry::builtin();
    let from_file = registry
        .read(
            &Input::File(&path),
            None,
            &SessionFilter::All,
            &ReadOptions::default(),
        )
        .unwrap();
    let from_bytes = registry
        .read(
            &Input::Bytes {
                name: &path,
                bytes: log.as_bytes(),
            },
            None,
            &SessionFilter::All,
            &ReadOptions::default(),
        )
        .unwrap();
    assert_eq!(from_file, from_bytes);
    assert_eq!(from_file.sessions.len(), 2);
}

/// What keeps `cleo-v1` from grading a Claude Code transcript 50/100 D: every read
/// through the pack's registry (whole, streamed, forced format, folder) refuses it.
#[test]
fn a_pack_that_lists_its_sources_refuses_other_formats_on_every_read() {
    let cleo = crate::load_pack("cleo-v1", &[]).unwrap();
    let registry = Registry::with_plugins_of(&cleo).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("t.jsonl");
    std::fs::write(
            &transcript,
            r#"{"type":"user","sessionId":"s","uuid":"u","timestamp":"2026-03-01T00:00:00Z","message":{"role":"user","content":"hi"}}"#,
        )
        .unwrap();
    let expected = format!(
            "`{}` reads as a Claude Code transcript (`claude-code`), and rubric `cleo-v1` grades only `cleo-db` and `cleo-jsonl` sources",
            transcript.display()
        );
    let all = SessionFilter::All;
    let options = ReadOptions::default();
    let whole = registry.read(&Input::File(&transcript), None, &all, &options);
    assert_eq!(whole.unwrap_err().to_string(), expected);
    let forced = registry.read(
        &Input::File(&transcript),
        registry.get("claude-code").map(|f| f.as_ref()),
        &all,
        &options,
    );
    assert_eq!(forced.unwrap_err().to_string(), expected);
    let mapped = registry.map_sessions(&transcript, None, &all, &options, None, |s| {
        Ok::<_, ()>(s.id)
    });
    assert!(
        matches!(mapped, Err(StreamError::Source(SourceError::NotGraded(_)))),
        "{mapped:?}"
    );
    let folder = registry.read(&Input::File(dir.path()), None, &all, &options);
    assert!(
        matches!(folder, Err(SourceError::NotGraded(_))),
        "{folder:?}"
    );
    // The registry of a pack that lists no sources, and the built-in one, read it.
    let any = crate::load_pack("langfuse-v1", &[]).unwrap();
    for registry in [
        &Registry::with_plugins_of(&any).unwrap(),
        Registry::builtin(),
    ] {
        let read = registry.read(&Input::File(&transcript), None, &all, &options);
        assert_eq!(read.unwrap().sessions.len(), 1);
    }
    // A log the pack grades, and an empty file (no format of its own), read as before.
    let log = dir.path().join("audit.jsonl");
    std::fs::write(&log, "\n  \n").unwrap();
    assert!(registry
        .read(&Input::File(&log), None, &all, &options)
        .is_ok());
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cleo-audit.jsonl");
    assert!(registry
        .read(&Input::File(&example), None, &all, &options)
        .is_ok());
}

#[test]
fn packs_graded_together_must_each_grade_the_format() {
    let cleo = crate::load_pack("cleo-v1", &[]).unwrap();
    let tools = crate::load_pack("claude-code-v1", &[]).unwrap();
    let both = tools.grading(cleo.grading(Registry::builtin().clone()));
    let format = both.get("cleo-jsonl").unwrap().as_ref();
    let refused = both
        .refusal(format, Path::new("a.jsonl"))
        .unwrap()
        .to_string();
    assert_eq!(
            refused,
            "`a.jsonl` reads as a CLEO audit log (`cleo-jsonl`), and rubric `claude-code-v1` grades only `claude-code` and `langfuse` sources"
        );
    let cleo_only = cleo.grading(Registry::builtin().clone());
    assert!(cleo_only.refusal(format, Path::new("a.jsonl")).is_none());
}

/// What `docs/sources.md` (its `--source-format` line and a section per format) and the
/// `sources` description of `schemas/rubric.schema.json` lack of `registry`'s formats.
fn unlisted(registry: &Registry, sources_md: &str, schema_sources: &str) -> Vec<String> {
    let names: Vec<&str> = registry.names().collect();
    let mut missing = Vec::new();
    let flag = format!("`--source-format auto|{}`", names.join("|"));
    if !sources_md.contains(&flag) {
        missing.push(format!("docs/sources.md's line {flag}"));
    }
    for name in &names {
        let heading = format!("(`{name}`)");
        if !sources_md
            .lines()
            .any(|l| l.starts_with("## ") && l.contains(&heading))
        {
            missing.push(format!("docs/sources.md's section `## … {heading}`"));
        }
    }
    let listed: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    if !schema_sources.contains(&listed.join(", ")) {
        missing.push(format!("the schema's `sources` list {}", listed.join(", ")));
    }
    missing
}

/// The repository's `docs/sources.md` and the `sources` description of its pack schema.
fn listed_docs() -> (String, String) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let sources = std::fs::read_to_string(repo.join("docs/sources.md")).unwrap();
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join("schemas/rubric.schema.json")).unwrap(),
    )
    .unwrap();
    let described = schema["properties"]["sources"]["description"]
        .as_str()
        .unwrap()
        .to_owned();
    (sources, described)
}

/// The names and sections a reader finds in `docs/sources.md` and the schema of
/// `rubric.yaml` are the registry's: a format added to it without them fails here, not in a
/// reader's hands.
#[test]
fn the_docs_and_the_pack_schema_list_every_format_of_the_registry() {
    let (sources, described) = listed_docs();
    let missing = unlisted(Registry::builtin(), &sources, &described);
    assert!(missing.is_empty(), "not listed: {missing:#?}");
}

/// What adding a format asks, shown with the toy format: its file (here, `Toy` above), its
/// line in the registry (here, registered after the built-in ones, where `Registry::default`
/// would put it), a fixture, and a docs row. Every message and list that names the formats
/// then names it with no other change; only the docs ask for their row.
#[test]
fn a_new_format_needs_its_file_its_registry_line_a_fixture_and_a_docs_row() {
    let registry = with_toy();
    // The fixture.
    let fixture = Input::Bytes {
        name: Path::new("toy.log"),
        bytes: b"#toy\ns1\tfind\n",
    };
    assert_eq!(registry.detect(&fixture).unwrap().name(), "toy");
    assert!(registry.get("toy").is_some() && registry.names().any(|n| n == "toy"));
    assert!(
        registry.tried().ends_with(" and a toy log"),
        "{}",
        registry.tried()
    );
    let last = Registry::builtin().names().last().unwrap();
    let unknown = registry.format_named("toys").unwrap_err();
    assert!(
        unknown.ends_with(&format!(", `{last}`, `toy`)")),
        "{unknown}"
    );
    // The docs as they are lack its row, and say exactly which.
    let (sources, described) = listed_docs();
    let missing = unlisted(&registry, &sources, &described);
    assert_eq!(missing.len(), 3, "{missing:#?}");
    assert!(missing.iter().all(|m| m.contains("toy")), "{missing:#?}");
    // With its row (the name in the line and the schema's list, a section), nothing lacks.
    let sources =
        sources.replace(&format!("|{last}`"), &format!("|{last}|toy`")) + "\n## Toy logs (`toy`)\n";
    let described = described.replace(&format!("`{last}`"), &format!("`{last}`, `toy`"));
    assert_eq!(
        unlisted(&registry, &sources, &described),
        Vec::<String>::new()
    );
}
