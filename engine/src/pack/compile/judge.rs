//! The pack's letter bands and, for judged dimensions, how a judge is asked.

use crate::pack::codes::Code;
use std::collections::HashSet;

use super::Compiler;
use crate::pack::raw::RawPack;
use crate::pack::{Band, Dimension, Judge, Problem, Severity};

/// The placeholders [`crate::prompt::render_prompts`] fills in a judge's prompt template.
const PLACEHOLDERS: &[&str] = &[
    "session_id",
    "trace_count",
    "entry_count",
    "task_context",
    "session_summary",
    "chunk_number",
    "total_chunks",
    "dimensions",
    "output_format",
];

/// Reports the first placeholder the renderer does not know.
pub fn check_template(template: &str) -> Result<(), String> {
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err("unclosed `{{` in the prompt template".to_owned());
        };
        let name = after[..end].trim();
        if !PLACEHOLDERS.contains(&name) {
            return Err(format!(
                "unknown placeholder `{{{{{name}}}}}` in the prompt template (known: {})",
                PLACEHOLDERS
                    .iter()
                    .map(|p| format!("`{{{{{p}}}}}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        rest = &after[end + 2..];
    }
    Ok(())
}

impl Compiler<'_> {
    pub(super) fn judge(&mut self, raw: &RawPack, dimensions: &[Dimension]) -> Option<Judge> {
        let judged = dimensions.iter().any(|d| d.kind.is_judged());
        let Some(judge) = &raw.judge else {
            if judged {
                self.problem(Code::Judge, "dimensions", "the pack has judged dimensions, so it needs a `judge` with a `prompt` template");
            }
            return None;
        };
        if !judged {
            self.problem(Code::Judge, "judge", "`judge` asks for judged dimensions, and the pack has none (`type: numeric` or `categorical`)");
        }
        if judge.chunk_tokens == 0 || judge.chunk_tokens > judge.budget_tokens {
            self.problem(
                Code::Judge,
                "judge.chunk_tokens",
                format!(
                    "`chunk_tokens` must be between 1 and `budget_tokens` ({})",
                    judge.budget_tokens
                ),
            );
        }
        if let Some(t) = judge.temperature.filter(|t| !(0.0..=2.0).contains(t)) {
            self.problem(
                Code::Judge,
                "judge.temperature",
                format!(
                    "`temperature` must be between 0 and 2, not {}",
                    crate::entry::js_number(t)
                ),
            );
        }
        if judge.max_tokens == Some(0) {
            self.problem(
                Code::Judge,
                "judge.max_tokens",
                "`max_tokens` must be at least 1",
            );
        }
        let Some(template) = self.files.files.get(&judge.prompt) else {
            self.problem(
                Code::Judge,"judge.prompt",
                format!("prompt template `{}` is not in the pack (templates are files named `*.prompt.md`)", judge.prompt),
            );
            return None;
        };
        if let Err(problem) = check_template(template) {
            self.problems.push(Problem {
                severity: Severity::Error,
                code: Code::Judge,
                file: self.files.display_path(&judge.prompt),
                path: String::new(),
                line: None,
                column: None,
                message: problem,
            });
        }
        Some(Judge {
            prompt_file: judge.prompt.clone(),
            template: template.clone(),
            budget_tokens: judge.budget_tokens,
            chunk_tokens: judge.chunk_tokens,
            temperature: judge.temperature,
            max_tokens: judge.max_tokens,
            panel: judge.panel.unwrap_or_default(),
        })
    }

    pub(super) fn bands(&mut self, raw: &RawPack) -> Vec<Band> {
        let mut bands = Vec::new();
        let mut seen = HashSet::new();
        for (i, band) in raw.bands.iter().enumerate() {
            let path = format!("bands[{i}]");
            let Some(band) = self.lenient(band, &path) else {
                continue;
            };
            if !(0.0..=100.0).contains(&band.min_percent) {
                self.problem(
                    Code::Bands,
                    format!("{path}.min_percent"),
                    format!("`min_percent` {} is outside 0..=100", band.min_percent),
                );
            }
            if let Some(prev) = bands.last().map(|b: &Band| b.min_percent) {
                if band.min_percent >= prev {
                    self.problem(
                        Code::Bands,format!("{path}.min_percent"),
                        format!(
                            "score bands must be listed from the highest down, but `{}` ({}%) follows a band at {prev}%",
                            band.grade, band.min_percent
                        ),
                    );
                }
            }
            if !seen.insert(band.grade.clone()) {
                self.problem(
                    Code::DuplicateId,
                    format!("{path}.grade"),
                    format!("grade `{}` is used twice", band.grade),
                );
            }
            bands.push(Band {
                grade: band.grade.clone(),
                min_percent: band.min_percent,
            });
        }
        bands
    }
}

#[cfg(test)]
mod tests {
    use crate::pack::testing::errors;

    const RULES: &str =
        "dimensions:\n  - id: d\n    max: 10\n    rules:\n      - { id: r, doc: d, points: 10 }\n";

    #[test]
    fn bands_go_from_the_highest_down_with_distinct_grades() {
        let yaml = format!("id: t\nversion: '1'\nname: T\nbands:\n  - {{ grade: A, min_percent: 80 }}\n  - {{ grade: B, min_percent: 90 }}\n  - {{ grade: A, min_percent: 101 }}\n{RULES}");
        assert_eq!(
            errors(&yaml),
            [
                "bands[1].min_percent: score bands must be listed from the highest down, but `B` (90%) follows a band at 80%",
                "bands[2].min_percent: `min_percent` 101 is outside 0..=100",
                "bands[2].min_percent: score bands must be listed from the highest down, but `A` (101%) follows a band at 90%",
                "bands[2].grade: grade `A` is used twice",
            ]
        );
    }

    #[test]
    fn a_judge_needs_judged_dimensions_and_its_template() {
        let yaml = format!("id: t\nversion: '1'\nname: T\njudge: {{ prompt: missing.prompt.md, chunk_tokens: 0, temperature: 3, max_tokens: 0 }}\n{RULES}");
        assert_eq!(
            errors(&yaml),
            [
                "judge: `judge` asks for judged dimensions, and the pack has none (`type: numeric` or `categorical`)",
                "judge.chunk_tokens: `chunk_tokens` must be between 1 and `budget_tokens` (80000)",
                "judge.temperature: `temperature` must be between 0 and 2, not 3",
                "judge.max_tokens: `max_tokens` must be at least 1",
                "judge.prompt: prompt template `missing.prompt.md` is not in the pack (templates are files named `*.prompt.md`)",
            ]
        );
    }

    #[test]
    fn judged_dimensions_need_a_judge() {
        let yaml = "id: t\nversion: '1'\nname: T\nscoring: weighted\ndimensions:\n  - { id: q, type: numeric, weight: 1 }\n";
        assert_eq!(
            errors(yaml),
            ["dimensions: the pack has judged dimensions, so it needs a `judge` with a `prompt` template"]
        );
    }
}
