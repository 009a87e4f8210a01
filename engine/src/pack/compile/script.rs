//! Script rules: the Rhai file compiled once, and the selector and metric names it passes as
//! literals checked against the pack.

use super::Compiler;
use crate::pack::codes::Code;
use crate::pack::{Problem, RuleKind, Severity};
use crate::script::ScriptHost;

impl Compiler<'_> {
    pub(super) fn script(&mut self, file: &str, path: &str) -> Option<RuleKind> {
        let Some(source) = self.files.files.get(file) else {
            let known: Vec<String> = self
                .files
                .files
                .keys()
                .filter(|k| k.ends_with(".rhai"))
                .map(|k| format!("`{k}`"))
                .collect();
            self.problem(
                Code::ScriptMissing,
                path,
                format!(
                    "script `{file}` is not in the pack ({})",
                    if known.is_empty() {
                        "it has no `.rhai` files".to_owned()
                    } else {
                        format!("it has {}", known.join(", "))
                    }
                ),
            );
            return None;
        };
        let plugins = self.plugins.loaded();
        let host = self.scripts.get_or_insert_with(|| {
            let mut host = ScriptHost::new();
            host.add_plugins(&plugins);
            host
        });
        match host.compile(file, source) {
            Ok(index) => {
                self.check_script_names(file, source);
                Some(RuleKind::Script { index })
            }
            Err(err) => {
                self.problems.push(Problem {
                    severity: Severity::Error,
                    code: Code::ScriptCompile,
                    file: self.files.display_path(file),
                    path: String::new(),
                    line: err.line,
                    column: err.column,
                    message: err.message,
                });
                None
            }
        }
    }
}

impl Compiler<'_> {
    /// Selector and metric names a script passes as literals (`session.count("task_op")`,
    /// `e.matches("lookup")`, `e.followed_by("find", 2)`, `session.metric("ratio")`) must
    /// exist: at run time an unknown name fails every session, so it is an error of the pack,
    /// reported at its place in the script.
    fn check_script_names(&mut self, file: &str, source: &str) {
        const CALLS: [(&str, bool); 7] = [
            ("count", true),
            ("first", true),
            ("matching", true),
            ("matches", true),
            ("followed_by", true),
            ("preceded_by", true),
            ("metric", false),
        ];
        for (line_no, line) in source.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            for (call, is_selector) in CALLS {
                let needle = format!(".{call}(\"");
                let mut from = 0;
                while let Some(at) = code[from..].find(&needle) {
                    let start = from + at + needle.len();
                    from = start;
                    let Some(len) = code[start..].find('"') else {
                        break;
                    };
                    let name = &code[start..start + len];
                    let known = if is_selector {
                        self.selector_ids.contains_key(name)
                    } else {
                        self.metric_ids.contains_key(name)
                    };
                    if !known {
                        let (kind, names): (&str, Vec<&String>) = if is_selector {
                            ("selector", self.selector_ids.keys().collect())
                        } else {
                            ("metric", self.metric_ids.keys().collect())
                        };
                        let declared = if names.is_empty() {
                            "the pack declares none".to_owned()
                        } else {
                            format!(
                                "declared: {}",
                                names
                                    .iter()
                                    .map(|n| format!("`{n}`"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        };
                        self.problems.push(Problem {
                            severity: Severity::Error,
                            code: if is_selector {
                                Code::UnknownSelector
                            } else {
                                Code::UnknownMetric
                            },
                            file: self.files.display_path(file),
                            path: String::new(),
                            line: Some(line_no + 1),
                            column: Some(code[..start - 1].chars().count() + 1),
                            message: format!(
                                "unknown {kind} `{name}` in `.{call}(\"{name}\")` ({declared})"
                            ),
                        });
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::files;
    use crate::pack::Severity;

    fn problems(script: &str) -> Vec<String> {
        let yaml = "id: t\nversion: '1'\nname: T\nselectors:\n  tasks: { domain: tasks }\nmetrics:\n  share: { ratio: { of: tasks, over: tasks } }\ndimensions:\n  - id: d\n    max: 10\n    rules:\n      - { id: r, doc: d, script: r.rhai }\n";
        let mut files = files(yaml);
        files.files.insert("r.rhai".to_owned(), script.to_owned());
        crate::pack::validate_pack(&files)
            .problems
            .into_iter()
            .filter(|p| p.severity == Severity::Error)
            .map(|p| format!("{}:{:?}:{:?}: {}", p.file, p.line, p.column, p.message))
            .collect()
    }

    #[test]
    fn names_passed_as_literals_must_exist() {
        let script = "let n = session.count(\"tasks\");\n// session.count(\"commented\")\nif session.metric(\"shar\") > 0 { n += session.count(\"task\"); }\n#{ points: 0 }\n";
        assert_eq!(
            problems(script),
            [
                // At the quoted name; the calls are scanned kind by kind.
                "rubrics/t/r.rhai:Some(3):Some(52): unknown selector `task` in `.count(\"task\")` (declared: `tasks`)",
                "rubrics/t/r.rhai:Some(3):Some(19): unknown metric `shar` in `.metric(\"shar\")` (declared: `share`)",
            ]
        );
    }

    /// `matches`, `followed_by` and `preceded_by` take a selector's name too; the last two
    /// were not checked, and a misspelt name failed every session when it ran.
    #[test]
    fn entry_calls_naming_a_selector_are_checked_too() {
        let script = "for e in session.entries {\n  if e.matches(\"tasks\") && e.followed_by(\"task\", 2) { }\n  if e.preceded_by(\"taks\", 1) || e.matches(\"tsks\") { }\n}\n#{ points: 0 }\n";
        assert_eq!(
            problems(script),
            [
                "rubrics/t/r.rhai:Some(2):Some(42): unknown selector `task` in `.followed_by(\"task\")` (declared: `tasks`)",
                "rubrics/t/r.rhai:Some(3):Some(44): unknown selector `tsks` in `.matches(\"tsks\")` (declared: `tasks`)",
                "rubrics/t/r.rhai:Some(3):Some(20): unknown selector `taks` in `.preceded_by(\"taks\")` (declared: `tasks`)",
            ]
        );
    }

    #[test]
    fn a_missing_script_names_the_ones_there() {
        let yaml = "id: t\nversion: '1'\nname: T\ndimensions:\n  - id: d\n    max: 10\n    rules:\n      - { id: r, doc: d, script: r.rhai }\n";
        let mut files = files(yaml);
        files.files.insert("other.rhai".to_owned(), "0".to_owned());
        let problems = crate::pack::validate_pack(&files).problems;
        assert_eq!(problems.len(), 1);
        assert_eq!(
            problems[0].message,
            "script `r.rhai` is not in the pack (it has `other.rhai`)"
        );
        assert_eq!(problems[0].path, "dimensions[0].rules[0].script");
    }

    #[test]
    fn a_script_rule_sees_the_whole_session() {
        let yaml = "id: t\nversion: '1'\nname: T\ndimensions:\n  - id: d\n    max: 10\n    rules:\n      - { id: r, doc: d, script: r.rhai, for_each: { all: [] } }\n";
        let problems = crate::pack::validate_pack(&files(yaml)).problems;
        assert_eq!(
            problems[0].message,
            "a script rule sees the whole session; drop `for_each` and loop in the script"
        );
    }
}
