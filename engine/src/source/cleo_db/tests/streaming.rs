//! The second pass of the `tasks.db` reader, streamed in batches, against the whole read:
//! rowid gaps, rowids at `i64::MAX`, more rows than a batch, rows changed between the passes.

use super::*;
use crate::source::cleo_db::chunks::BATCH_ROWS;

/// `--all` once stepped through every rowid between the least and the greatest, so a
/// gap hung it and rowids near `i64::MAX` overflowed into a false "changed while read".
#[test]
fn a_rowid_gap_or_a_rowid_at_i64_max_streams_as_the_whole_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = database(
        dir.path(),
        &[
            (i64::MIN, "a"),
            (1, "s"),
            (1_000_000_000_000, "a"),
            (i64::MAX - 1, "s"),
            (i64::MAX, "b"),
        ],
    );
    let whole = read_whole(&path, &SessionFilter::All).unwrap();
    assert_eq!(whole.len(), 3);
    assert_eq!(read_streamed(&path).unwrap(), whole);
}

#[test]
fn streamed_batches_read_every_row_of_a_database_larger_than_a_batch() {
    let dir = tempfile::tempdir().unwrap();
    // Rowids spread out, sessions interleaved, more rows than a batch holds.
    let ids: Vec<String> = (0..97).map(|k| format!("session-{k}")).collect();
    let rows: Vec<(i64, &str)> = (0..(BATCH_ROWS as i64 + 5_000))
        .map(|n| (n * 1_000_003 - 7, ids[(n % 97) as usize].as_str()))
        .collect();
    let path = database(dir.path(), &rows);
    let whole = read_whole(&path, &SessionFilter::All).unwrap();
    assert_eq!(whole.len(), 97);
    assert_eq!(read_streamed(&path).unwrap(), whole);
}

/// A row removed between the passes once left its session graded short, in silence.
#[test]
fn a_row_removed_or_added_between_the_passes_is_a_change() {
    for change in [
        "DELETE FROM audit_log WHERE rowid = 3",
        "INSERT INTO audit_log (rowid, id, timestamp, action, task_id, session_id) \
         SELECT 4, 'new', timestamp, action, task_id, session_id FROM audit_log WHERE rowid = 5",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = database(dir.path(), &[(1, "a"), (3, "b"), (5, "a"), (7, "c")]);
        let stream = open(&path).unwrap();
        execute(&path, change);
        let err = drain(stream).unwrap_err().to_string();
        assert!(err.contains("changed while it was read"), "{change}: {err}");
    }
}
