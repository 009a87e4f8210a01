//! The grades-file mender: random bytes before and after whole grade lines. What appending
//! would do must either refuse the file or keep every whole grade: only bytes after the last
//! whole grade may be cut, what is left is a grades file with nothing to mend, and a grade
//! appended to it (after the line end a last line lacks) leaves a grades file too.
#![no_main]

use grade_engine::sink::grades_file_mend;
use libfuzzer_sys::fuzz_target;

/// Whole grade lines as `grade` and CLEO's grader write them: one with a lone surrogate
/// (CLEO's `JSON.stringify`), one with a Windows line end.
const GRADES: &[u8] = b"{\"sessionId\":\"s1\",\"totalScore\":60,\"maxScore\":100,\"dimensions\":{},\"flags\":[\"T\\ud83d\"],\"entryCount\":2}\n\
{\"sessionId\":\"s2\",\"totalScore\":1,\"maxScore\":2,\"rubric\":{\"id\":\"cleo-v1\"},\"grade\":\"F\"}\r\n\
\n\
{\"sessionId\":\"s\\u00e9\",\"totalScore\":0,\"maxScore\":0}\n";

const APPENDED: &[u8] = b"{\"sessionId\":\"new\",\"totalScore\":1,\"maxScore\":1}\n";

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let at = usize::from(split).min(rest.len());
    let (before, after) = rest.split_at(at);
    let mut file = before.to_vec();
    file.extend_from_slice(GRADES);
    file.extend_from_slice(after);
    if before.is_empty() && after.is_empty() {
        assert_eq!(
            grades_file_mend(&file),
            Ok(0),
            "a file of grades is refused"
        );
    }
    let Ok(cut) = grades_file_mend(&file) else {
        return;
    };
    let cut = usize::try_from(cut).unwrap();
    assert!(
        cut <= after.len(),
        "{cut} bytes cut, into the whole grades (only {} bytes follow them)",
        after.len()
    );
    let kept = &file[..file.len() - cut];
    assert_eq!(
        grades_file_mend(kept),
        Ok(0),
        "what is left after mending is mended again"
    );
    let mut appended = kept.to_vec();
    if !appended.is_empty() && !appended.ends_with(b"\n") {
        appended.push(b'\n');
    }
    appended.extend_from_slice(APPENDED);
    assert_eq!(
        grades_file_mend(&appended),
        Ok(0),
        "a grade appended to a mended file leaves a file that is not a grades file"
    );
});
