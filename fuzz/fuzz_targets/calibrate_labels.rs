//! The labels reader of `grade calibrate`, then the calibration of a judge against what it
//! read (`langfuse-v1`): no input may panic, and every figure is a finite number or `null`
//! with its reason.
#![no_main]

use grade_engine::calibrate::{calibrate, parse_labels, Figure, JudgeResults, Judged, Options};
use libfuzzer_sys::fuzz_target;

fn sound(f: &Figure) -> bool {
    match f.value {
        Some(v) => v.is_finite() && f.reason.is_none(),
        None => f.reason.is_some(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(labels) = parse_labels(text, "fuzz") else {
        return;
    };
    let pack = grade_fuzz::builtin("langfuse-v1");
    // A judge that scored every labelled session: 1 on each categorical dimension, 0.5 on
    // each numeric one, so every label that fits the pack pairs.
    let mut judge = JudgeResults {
        judge: "fuzz".to_owned(),
        ..JudgeResults::default()
    };
    for label in &labels {
        let dimensions = pack
            .judged_dimensions()
            .map(|d| {
                let score = match d.kind {
                    grade_engine::pack::DimensionKind::Categorical { .. } => 1.0,
                    _ => 0.5,
                };
                let judged = Judged {
                    score,
                    rationale: String::new(),
                    evidence: Vec::new(),
                };
                (d.id.clone(), judged)
            })
            .collect();
        judge.sessions.insert(label.session_id.clone(), dimensions);
    }
    let options = Options {
        resamples: 20,
        seed: 1,
        disagreements: 5,
    };
    let report = calibrate(pack, &[judge], &labels, &options);
    for d in &report.judges[0].dimensions {
        assert!(sound(&d.alpha) && sound(&d.alpha_annotators), "{d:?}");
        if let Some(c) = &d.categorical {
            assert!(sound(&c.kappa) && sound(&c.kappa_quadratic), "{d:?}");
        }
        if let Some(n) = &d.numeric {
            assert!(sound(&n.pearson) && sound(&n.spearman), "{d:?}");
        }
    }
});
