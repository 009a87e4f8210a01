//! A comparison as JSON (`grade compare --format json`), written on every core.

use std::io::Write;

use rayon::prelude::*;

use super::Comparison;

/// Writes `report` as `serde_json::to_writer_pretty` writes it (`grade compare --format
/// json`), with its sessions (megabytes of it with `--all` over a large log, written after
/// the pool that graded them went idle: 7% of the wall time of comparing two packs over a
/// million entries) rendered on every core. The rest of the report is written with its
/// sessions taken out (and put back after), as `"sessions": []` at the first level (two
/// spaces in, after a line break no JSON string holds); the sessions array goes there, each
/// element pretty-printed alone and moved in to the array's depth.
pub fn write_json(out: &mut dyn Write, report: &mut Comparison) -> serde_json::Result<()> {
    write_json_in(out, report, 256)
}

/// [`write_json`], its sessions rendered `chunk` at a time.
fn write_json_in(
    out: &mut dyn Write,
    report: &mut Comparison,
    chunk: usize,
) -> serde_json::Result<()> {
    const EMPTY: &[u8] = b"\n  \"sessions\": []";
    let sessions = std::mem::take(&mut report.sessions);
    let mut shell = Vec::new();
    let written = serde_json::to_writer_pretty(&mut shell, &*report);
    report.sessions = sessions;
    written?;
    let at = match shell.windows(EMPTY.len()).position(|w| w == EMPTY) {
        Some(at) if !report.sessions.is_empty() => at + EMPTY.len() - 1,
        // No session, or a report laid out otherwise than this expects: as serde writes it.
        _ => return serde_json::to_writer_pretty(out, &*report),
    };
    let pieces: Vec<Vec<u8>> = report
        .sessions
        .par_chunks(chunk.max(1))
        .map(|chunk| -> serde_json::Result<Vec<u8>> {
            let mut piece = Vec::new();
            let mut element = Vec::new();
            for session in chunk {
                element.clear();
                serde_json::to_writer_pretty(&mut element, session)?;
                piece.extend_from_slice(b",\n");
                crate::json::push_indented(&mut piece, &element, b"    ");
            }
            Ok(piece)
        })
        .collect::<serde_json::Result<_>>()?;
    out.write_all(&shell[..at]).map_err(serde_json::Error::io)?;
    // Every piece starts with its elements' separator; the array's first has none.
    let mut first = true;
    for piece in &pieces {
        let piece = if first { &piece[1..] } else { &piece[..] };
        first = false;
        out.write_all(piece).map_err(serde_json::Error::io)?;
    }
    out.write_all(b"\n  ]").map_err(serde_json::Error::io)?;
    out.write_all(&shell[at + 1..])
        .map_err(serde_json::Error::io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{CompareOptions, Layout, Pairing};

    /// The sessions of a comparison rendered by every core and set into the rest of the
    /// report are byte for byte what serde writes of the whole: for no session, one, and
    /// many across several chunks (with rule changes, failed sessions and odd ids).
    #[test]
    fn the_report_written_on_every_core_is_what_serde_writes() {
        let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/odd-sessions/audit.jsonl");
        let (a, b) = (
            crate::load_pack("cleo-v1", &[]).unwrap(),
            crate::load_pack("cleo-v2", &[]).unwrap(),
        );
        let (la, lb) = (Layout::of_pack(&a), Layout::of_pack(&b));
        let mut graded = crate::compare::grade_source(
            &[(&a, &la), (&b, &lb)],
            &log,
            None,
            &crate::SessionFilter::All,
            None,
            false,
            None,
        )
        .unwrap()
        .results;
        let (sa, _) = crate::compare::sides_of("cleo-v1", &la, &mut graded, 0);
        let (sb, _) = crate::compare::sides_of("cleo-v2", &lb, &mut graded, 1);
        let whole = crate::compare::compare(
            &sa,
            &sb,
            &Pairing::BySessionId,
            None,
            &CompareOptions::default(),
        );
        assert!(whole.sessions.len() > 100);
        assert!(whole.sessions.iter().any(|s| !s.rules.is_empty()));
        for n in [0, 1, 2, whole.sessions.len()] {
            let mut report = whole.clone();
            report.sessions.truncate(n);
            let expected = serde_json::to_vec_pretty(&report).unwrap();
            for chunk in [1, 7, 256] {
                let mut written = Vec::new();
                write_json_in(&mut written, &mut report, chunk).unwrap();
                assert_eq!(
                    String::from_utf8(written).unwrap(),
                    String::from_utf8(expected.clone()).unwrap(),
                    "{n} sessions, {chunk} a chunk"
                );
            }
        }
    }
}
