//! How much a judge agrees with itself, or a panel's judges with each other:
//! Krippendorff's α over a batch of sessions, with the judge's repeated runs (or the
//! panel's judges) as the coders and the sessions as the units.
//!
//! α = 1 − D_o / D_e: the disagreement observed within sessions over the disagreement
//! expected by chance from all values pooled. 1 is perfect agreement, 0 is no better than
//! chance, below 0 is systematic disagreement. Numeric dimensions use the interval
//! metric (δ² = (c − k)²); categorical ones the ordinal metric, where the distance between
//! two categories grows with how many values lie between them. A missing value (a run
//! that gave none) is left out; a session with fewer than two values cannot be paired and
//! is left out as well. The computation follows Krippendorff (2011), "Computing
//! Krippendorff's Alpha-Reliability", through the coincidence matrix, and is checked
//! against the Python `krippendorff` package (`tests/fixtures/agreement/`).

/// How distances between two values are measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    /// Categories without order: δ² = 0 for the same value, 1 for any two others.
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "no dimension kind is nominal yet; the tests check it against the krippendorff package"
        )
    )]
    Nominal,
    /// Numbers on a scale: δ² = (c − k)².
    Interval,
    /// Ordered categories: δ² = (Σ_{g=c}^{k} n_g − (n_c + n_k) / 2)².
    Ordinal,
}

impl Metric {
    /// The metric's name, as the `krippendorff` package calls its level of measurement.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Metric::Nominal => "nominal",
            Metric::Interval => "interval",
            Metric::Ordinal => "ordinal",
        }
    }

    /// The metric of a judged dimension: ordinal for categories (their values are ordered),
    /// interval for numbers.
    pub(crate) fn of(kind: &crate::pack::DimensionKind) -> Metric {
        match kind {
            crate::pack::DimensionKind::Categorical { .. } => Metric::Ordinal,
            _ => Metric::Interval,
        }
    }
}

/// Why α has no value for some data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum AlphaUndefined {
    /// Fewer than two sessions have two or more values.
    #[error("fewer than two sessions have two or more values to compare")]
    TooFewPairs,
    /// Every value is the same.
    #[error("every value is the same, so there is no variation to agree on")]
    NoVariation,
}

/// Krippendorff's α of `units`: each unit (a session) holds the values its coders (the
/// runs) gave it, `None` where a coder gave none.
pub(crate) fn krippendorff_alpha(
    units: &[Vec<Option<f64>>],
    metric: Metric,
) -> Result<f64, AlphaUndefined> {
    // Only units with two or more values are pairable.
    let pairable: Vec<Vec<f64>> = units
        .iter()
        .map(|u| u.iter().flatten().copied().collect::<Vec<f64>>())
        .filter(|u| u.len() >= 2)
        .collect();
    if pairable.is_empty() {
        return Err(AlphaUndefined::TooFewPairs);
    }
    let mut values: Vec<f64> = pairable.iter().flatten().copied().collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    if values.len() < 2 {
        return Err(AlphaUndefined::NoVariation);
    }
    let index = |v: f64| values.partition_point(|x| *x < v);
    let k = values.len();
    // The coincidence matrix: each ordered pair of values within a unit, weighted 1/(m_u − 1).
    let mut coincidences = vec![0.0f64; k * k];
    for unit in &pairable {
        let weight = 1.0 / (unit.len() - 1) as f64;
        for (i, &a) in unit.iter().enumerate() {
            for (j, &b) in unit.iter().enumerate() {
                if i != j {
                    coincidences[index(a) * k + index(b)] += weight;
                }
            }
        }
    }
    let totals: Vec<f64> = (0..k)
        .map(|c| coincidences[c * k..(c + 1) * k].iter().sum())
        .collect();
    let n: f64 = totals.iter().sum();
    let delta = |c: usize, e: usize| -> f64 {
        match metric {
            Metric::Nominal => f64::from(u8::from(c != e)),
            Metric::Interval => (values[c] - values[e]).powi(2),
            Metric::Ordinal => {
                let (lo, hi) = if c <= e { (c, e) } else { (e, c) };
                let between: f64 = totals[lo..=hi].iter().sum();
                (between - (totals[c] + totals[e]) / 2.0).powi(2)
            }
        }
    };
    let mut observed = 0.0;
    let mut expected = 0.0;
    for c in 0..k {
        for e in 0..k {
            let d = delta(c, e);
            observed += coincidences[c * k + e] * d;
            expected += totals[c] * totals[e] * d;
        }
    }
    if expected == 0.0 {
        return Err(AlphaUndefined::NoVariation);
    }
    Ok(1.0 - (n - 1.0) * observed / expected)
}

/// The agreement of a judge with itself (its runs), or of a panel's judges with each other,
/// on one judged dimension over a batch.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DimensionAgreement {
    /// The judged dimension's id.
    pub dimension: String,
    /// `interval` (numeric dimensions) or `ordinal` (categorical ones).
    pub metric: &'static str,
    /// Krippendorff's α, or `None` when it is undefined (see `reason`).
    pub alpha: Option<f64>,
    /// Why α is undefined, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Sessions with two or more values (runs, or judges) to compare.
    pub sessions: usize,
}

/// Krippendorff's α per judged dimension of `pack`, over judgments of a batch of sessions
/// asked several times each (their `run_scores`; the runs are the coders).
pub fn judge_agreement(
    pack: &crate::CompiledPack,
    judgments: &[&crate::judgment::Judgment],
) -> Vec<DimensionAgreement> {
    agreement_of(pack, judgments, |j| {
        j.run_scores.iter().map(|s| Some(*s)).collect()
    })
}

/// Krippendorff's α per judged dimension of `pack` among the judges of a panel, over a
/// batch judged by it (each dimension's `panel`; the judges are the coders, each with the
/// score its runs combined into).
pub fn panel_agreement(
    pack: &crate::CompiledPack,
    judgments: &[&crate::judgment::Judgment],
) -> Vec<DimensionAgreement> {
    agreement_of(pack, judgments, |j| {
        j.panel.iter().map(|m| Some(m.score)).collect()
    })
}

/// α per judged dimension, each session's values (one per coder) given by `coders`.
fn agreement_of(
    pack: &crate::CompiledPack,
    judgments: &[&crate::judgment::Judgment],
    coders: impl Fn(&crate::judgment::DimensionJudgment) -> Vec<Option<f64>>,
) -> Vec<DimensionAgreement> {
    pack.judged_dimensions()
        .map(|d| {
            let metric = Metric::of(&d.kind);
            let units: Vec<Vec<Option<f64>>> = judgments
                .iter()
                .filter_map(|j| j.dimensions.get(&d.id))
                .map(&coders)
                .collect();
            let sessions = units
                .iter()
                .filter(|u| u.iter().flatten().count() >= 2)
                .count();
            let alpha = if sessions < 2 {
                Err(AlphaUndefined::TooFewPairs)
            } else {
                krippendorff_alpha(&units, metric)
            };
            DimensionAgreement {
                dimension: d.id.clone(),
                metric: metric.name(),
                alpha: alpha.ok(),
                reason: alpha.err().map(|e| e.to_string()),
                sessions,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Krippendorff (2011), section C: four coders, twelve units, values 1–5, missing data.
    /// His published results: α interval = 0.849, α ordinal = 0.815 (nominal 0.743).
    fn krippendorff_2011_units() -> Vec<Vec<Option<f64>>> {
        let coders: [[Option<f64>; 12]; 4] = [
            [
                Some(1.),
                Some(2.),
                Some(3.),
                Some(3.),
                Some(2.),
                Some(1.),
                Some(4.),
                Some(1.),
                Some(2.),
                None,
                None,
                None,
            ],
            [
                Some(1.),
                Some(2.),
                Some(3.),
                Some(3.),
                Some(2.),
                Some(2.),
                Some(4.),
                Some(1.),
                Some(2.),
                Some(5.),
                None,
                Some(3.),
            ],
            [
                None,
                Some(3.),
                Some(3.),
                Some(3.),
                Some(2.),
                Some(3.),
                Some(4.),
                Some(2.),
                Some(2.),
                Some(5.),
                Some(1.),
                None,
            ],
            [
                Some(1.),
                Some(2.),
                Some(3.),
                Some(3.),
                Some(2.),
                Some(4.),
                Some(4.),
                Some(1.),
                Some(2.),
                Some(5.),
                Some(1.),
                None,
            ],
        ];
        (0..12)
            .map(|u| coders.iter().map(|c| c[u]).collect())
            .collect()
    }

    #[test]
    fn the_published_example_gives_krippendorffs_own_values() {
        let units = krippendorff_2011_units();
        let interval = krippendorff_alpha(&units, Metric::Interval).unwrap();
        let ordinal = krippendorff_alpha(&units, Metric::Ordinal).unwrap();
        assert!((interval - 0.849).abs() < 5e-4, "{interval}");
        assert!((ordinal - 0.815).abs() < 5e-4, "{ordinal}");
    }

    /// Values from the Python `krippendorff` package and numpy, made by
    /// `tests/fixtures/agreement/make_reference.py`.
    #[test]
    fn alpha_and_spread_match_the_python_reference() {
        let reference: serde_json::Value = serde_json::from_str(include_str!(
            "../../tests/fixtures/agreement/reference.json"
        ))
        .unwrap();
        let cases = reference["cases"].as_array().unwrap();
        assert!(cases.len() >= 7);
        for case in cases {
            let name = case["name"].as_str().unwrap();
            let runs: Vec<Vec<Option<f64>>> = case["runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    r.as_array()
                        .unwrap()
                        .iter()
                        .map(serde_json::Value::as_f64)
                        .collect()
                })
                .collect();
            let units: Vec<Vec<Option<f64>>> = (0..runs[0].len())
                .map(|u| runs.iter().map(|r| r[u]).collect())
                .collect();
            let metric = match case["level"].as_str().unwrap() {
                "interval" => Metric::Interval,
                _ => Metric::Ordinal,
            };
            let alpha = krippendorff_alpha(&units, metric).unwrap();
            let want = case["alpha"].as_f64().unwrap();
            assert!(close(alpha, want), "{name}: alpha {alpha} vs {want}");
            for (u, want) in units.iter().zip(case["spread"].as_array().unwrap()) {
                let present: Vec<f64> = u.iter().flatten().copied().collect();
                let got = crate::judgment::Spread::of(&present);
                match got {
                    None => assert!(want.is_null(), "{name}"),
                    Some(s) => {
                        assert!(close(s.min, want["min"].as_f64().unwrap()), "{name}");
                        assert!(close(s.max, want["max"].as_f64().unwrap()), "{name}");
                        assert!(
                            close(s.sd, want["sd"].as_f64().unwrap()),
                            "{name}: sd {} vs {}",
                            s.sd,
                            want["sd"]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn perfect_agreement_is_one_and_undefined_cases_say_why() {
        let units = vec![vec![Some(0.2), Some(0.2)], vec![Some(0.9), Some(0.9)]];
        assert!(close(
            krippendorff_alpha(&units, Metric::Interval).unwrap(),
            1.0
        ));
        let same = vec![vec![Some(1.0), Some(1.0)], vec![Some(1.0), Some(1.0)]];
        assert_eq!(
            krippendorff_alpha(&same, Metric::Ordinal),
            Err(AlphaUndefined::NoVariation)
        );
        let lonely = vec![vec![Some(1.0), None], vec![None, Some(2.0)]];
        assert_eq!(
            krippendorff_alpha(&lonely, Metric::Interval),
            Err(AlphaUndefined::TooFewPairs)
        );
    }
}
