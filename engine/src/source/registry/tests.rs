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

#[test]
fn a_format_registered_at_run_time_is_detected_and_read_from_bytes() {
    let mut registry = Registry::builtin().clone();
    registry.register(Arc::new(Toy)).unwrap();
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
    assert!(err.contains("(tried a CLEO database, a CLEO audit log, a Claude Code transcript, a Langfuse trace, an inspect_ai eval log, an ATIF trajectory, an OpenTelemetry trace, a Codex CLI rollout, a Gemini CLI chat recording, an OpenHands event stream and a SWE-agent trajectory)"), "{err}");
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
