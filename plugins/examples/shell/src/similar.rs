//! How alike two commands are: 1 − (edit distance / length of the longer), over characters.

/// Commands longer than this are compared by their first this-many characters: a heredoc
/// of a thousand lines is not retried "nearly" anyway, and the cost stays bounded.
const MAX_CHARS: usize = 1024;

/// 1.0 for equal texts, 0.0 for texts with nothing in common (or one of them empty).
pub fn similarity(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.trim().chars().take(MAX_CHARS).collect();
    let b: Vec<char> = b.trim().chars().take(MAX_CHARS).collect();
    let longer = a.len().max(b.len());
    if longer == 0 {
        return 1.0;
    }
    1.0 - levenshtein(&a, &b) as f64 / longer as f64
}

fn levenshtein(a: &[char], b: &[char]) -> usize {
    if a == b {
        return 0;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_commands_are_fully_alike_and_a_flag_more_is_near() {
        assert_eq!(similarity("cargo test", "cargo test"), 1.0);
        assert!(similarity("pytest tests/test_api.py", "pytest tests/test_api.py -x") >= 0.85);
        assert!(similarity("npm test", "git status") < 0.5);
        assert_eq!(similarity("", ""), 1.0);
        assert_eq!(similarity("ls", ""), 0.0);
    }

    #[test]
    fn distance_counts_edits() {
        let chars = |s: &str| s.chars().collect::<Vec<_>>();
        assert_eq!(levenshtein(&chars("kitten"), &chars("sitting")), 3);
        assert_eq!(levenshtein(&chars(""), &chars("abc")), 3);
        assert_eq!(levenshtein(&chars("héllo"), &chars("hello")), 1);
    }
}
