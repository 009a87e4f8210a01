//! Template rendering: the first line is an evidence/flag template parsed against a scope
//! of selectors and metrics and rendered with values taken from the input; the rest is a
//! judge's prompt template, checked and rendered for the example sessions with a budget
//! small enough that they are cut into chunks.
#![no_main]

use grade_engine::pack::Field;
use grade_engine::fuzzing::{Template, TemplateScope, TemplateValues};
use grade_engine::pack::Judge;
use grade_engine::prompt::{check_template, render_prompts};
use libfuzzer_sys::fuzz_target;

struct Scope;

impl TemplateScope for Scope {
    fn selector(&mut self, name: &str) -> Option<usize> {
        ["a", "b", "writes"].iter().position(|s| *s == name)
    }
    fn metric(&self, name: &str) -> Option<usize> {
        ["ratio", "big", "tiny", "neg", "nan"]
            .iter()
            .position(|s| *s == name)
    }
    fn has_entry(&self) -> bool {
        true
    }
}

struct Values<'a> {
    seed: &'a [u8],
}

impl TemplateValues for Values<'_> {
    fn count(&self, selector: usize) -> usize {
        self.seed.get(selector).copied().unwrap_or(0) as usize
    }
    fn metric(&self, metric: usize) -> Option<f64> {
        let byte = *self.seed.get(metric)?;
        Some(match metric {
            0 => f64::from(byte) / 7.0,
            1 => f64::from(byte) * 1e20,
            2 => f64::from(byte) * 1e-9,
            3 => -f64::from(byte) / 3.0,
            _ => f64::from_bits(u64::from(byte) << 56 | 0x7ff0_0000_0000_0001),
        })
    }
    fn score(&self) -> f64 {
        f64::from(self.seed.first().copied().unwrap_or(0)) / 10.0 - 5.0
    }
    fn entry_field(&self, field: &Field) -> Option<String> {
        let _ = field;
        (self.seed.len() % 3 != 0).then(|| "value".to_owned())
    }
    fn entry_position(&self) -> Option<usize> {
        Some(self.seed.len())
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (evidence, prompt) = text.split_once('\n').unwrap_or((text, ""));
    if let Ok(template) = Template::parse(evidence, &mut Scope) {
        let _ = template.render(&Values { seed: data });
    }
    if check_template(prompt).is_ok() {
        let pack = grade_fuzz::builtin("langfuse-v1");
        let judge = Judge {
            prompt_file: "fuzz.prompt.md".to_owned(),
            template: prompt.to_owned(),
            budget_tokens: 64,
            chunk_tokens: 32,
            temperature: None,
            max_tokens: None,
            panel: Default::default(),
        };
        for session in grade_fuzz::example_sessions().iter().take(2) {
            let _ = render_prompts(pack, &judge, session);
        }
    }
});
