//! The figures of a calibration: how far a judge's scores agree with people's.
//!
//! Each figure is computed as the reference implementation computes it, and is checked
//! against it (`tests/fixtures/calibrate/make_reference.py`): Cohen's κ and the confusion
//! matrix as scikit-learn's `cohen_kappa_score` and `confusion_matrix` with `labels` the
//! pack's categories (so a quadratic weight is the squared distance between two categories'
//! positions), Pearson's r and Spearman's ρ (average ranks for ties) as SciPy's `pearsonr`
//! and `spearmanr`, Krippendorff's α as the `krippendorff` package ([`crate::agreement`]).
//!
//! A figure that has no value says why ([`Undefined`]) where those libraries give `nan`
//! or raise: fewer than two pairs, or no variation for it to measure.

use rand::RngExt;

use crate::agreement::{krippendorff_alpha, AlphaUndefined, Metric};
use crate::compare::stats::{percentile, rank_average, resampled};

/// Why a figure has no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Undefined {
    /// Fewer than two pairs of a judge's score and a person's.
    #[error("fewer than two pairs of a judge's score and a person's")]
    TooFewPairs,
    /// Every pair has the judge and the people in one and the same category.
    #[error("the judge and the people used one and the same category throughout, so agreement by chance is already complete")]
    OneCategory,
    /// The judge gave every pair the same score.
    #[error("the judge gave every pair the same score, so there is no variation to correlate")]
    ConstantJudge,
    /// The people gave every pair the same score.
    #[error("the people gave every pair the same score, so there is no variation to correlate")]
    ConstantHuman,
    /// Krippendorff's α has no value.
    #[error(transparent)]
    Alpha(#[from] AlphaUndefined),
}

/// How Cohen's κ weighs a disagreement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weights {
    /// Any disagreement counts 1.
    Unweighted,
    /// A disagreement counts the squared distance between the categories' positions.
    Quadratic,
}

/// The confusion matrix of `pairs` of category positions `(human, judge)` over `k`
/// categories: row the human's category, column the judge's.
pub fn confusion(pairs: &[(usize, usize)], k: usize) -> Vec<Vec<u64>> {
    let mut matrix = vec![vec![0u64; k]; k];
    for &(h, j) in pairs {
        if h < k && j < k {
            matrix[h][j] += 1;
        }
    }
    matrix
}

/// Cohen's κ of `pairs` of category positions `(human, judge)` over `k` categories:
/// 1 − Σ w·observed / Σ w·expected, the expected counts from the two raters' margins.
pub fn cohen_kappa(pairs: &[(usize, usize)], k: usize, weights: Weights) -> Result<f64, Undefined> {
    if pairs.len() < 2 {
        return Err(Undefined::TooFewPairs);
    }
    let matrix = confusion(pairs, k);
    let n = pairs.len() as f64;
    let rows: Vec<f64> = matrix
        .iter()
        .map(|r| r.iter().sum::<u64>() as f64)
        .collect();
    let columns: Vec<f64> = (0..k)
        .map(|j| matrix.iter().map(|r| r[j]).sum::<u64>() as f64)
        .collect();
    let weight = |i: usize, j: usize| match weights {
        Weights::Unweighted => f64::from(u8::from(i != j)),
        Weights::Quadratic => (i as f64 - j as f64).powi(2),
    };
    let (mut observed, mut expected) = (0.0, 0.0);
    for i in 0..k {
        for j in 0..k {
            let w = weight(i, j);
            observed += w * matrix[i][j] as f64;
            expected += w * rows[i] * columns[j] / n;
        }
    }
    if expected == 0.0 {
        return Err(Undefined::OneCategory);
    }
    Ok(1.0 - observed / expected)
}

/// The share of `pairs` of category positions whose two categories are at most `within`
/// apart (0: exact agreement); `None` for no pairs.
pub fn agreement_within(pairs: &[(usize, usize)], within: usize) -> Option<f64> {
    if pairs.is_empty() {
        return None;
    }
    let close = pairs
        .iter()
        .filter(|(h, j)| h.abs_diff(*j) <= within)
        .count();
    Some(close as f64 / pairs.len() as f64)
}

/// Pearson's r of `(judge, human)` scores.
pub fn pearson(pairs: &[(f64, f64)]) -> Result<f64, Undefined> {
    if pairs.len() < 2 {
        return Err(Undefined::TooFewPairs);
    }
    let n = pairs.len() as f64;
    let (mx, my) = (
        pairs.iter().map(|p| p.0).sum::<f64>() / n,
        pairs.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for &(x, y) in pairs {
        let (dx, dy) = (x - mx, y - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    // Equal scores are equal floats, so a constant side sums to exactly zero.
    if pairs.iter().all(|p| p.0 == pairs[0].0) || sxx == 0.0 {
        return Err(Undefined::ConstantJudge);
    }
    if pairs.iter().all(|p| p.1 == pairs[0].1) || syy == 0.0 {
        return Err(Undefined::ConstantHuman);
    }
    let r = sxy / (sxx.sqrt() * syy.sqrt());
    // Differences so small that their squares underflow leave nothing to divide by.
    if !r.is_finite() {
        return Err(Undefined::ConstantJudge);
    }
    Ok(r.clamp(-1.0, 1.0))
}

/// Spearman's ρ of `(judge, human)` scores: Pearson's r of their ranks, ties given the
/// average of the ranks they span.
pub fn spearman(pairs: &[(f64, f64)]) -> Result<f64, Undefined> {
    if pairs.len() < 2 {
        return Err(Undefined::TooFewPairs);
    }
    let (x, _) = rank_average(&pairs.iter().map(|p| p.0).collect::<Vec<_>>());
    let (y, _) = rank_average(&pairs.iter().map(|p| p.1).collect::<Vec<_>>());
    let ranked: Vec<(f64, f64)> = x.into_iter().zip(y).collect();
    pearson(&ranked)
}

/// The mean absolute difference of `(judge, human)` scores; `None` for no pairs.
pub fn mean_absolute_difference(pairs: &[(f64, f64)]) -> Option<f64> {
    mean(pairs.iter().map(|(j, h)| (j - h).abs()), pairs.len())
}

/// The mean signed difference judge − human (the judge's bias); `None` for no pairs.
pub fn mean_signed_difference(pairs: &[(f64, f64)]) -> Option<f64> {
    mean(pairs.iter().map(|(j, h)| j - h), pairs.len())
}

fn mean(values: impl Iterator<Item = f64>, n: usize) -> Option<f64> {
    (n > 0).then(|| values.sum::<f64>() / n as f64)
}

/// Krippendorff's α of `units` (sessions, each with its coders' values, `None` where a
/// coder gave none), defined only when at least two units hold two or more values.
pub fn alpha(units: &[Vec<Option<f64>>], metric: Metric) -> Result<f64, Undefined> {
    let pairable = units
        .iter()
        .filter(|u| u.iter().flatten().count() >= 2)
        .count();
    if pairable < 2 {
        return Err(AlphaUndefined::TooFewPairs.into());
    }
    Ok(krippendorff_alpha(units, metric)?)
}

/// A 95% bootstrap interval: the 2.5th and 97.5th percentiles of a figure over resamples.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Interval {
    /// The 2.5th percentile.
    pub low: f64,
    /// The 97.5th percentile.
    pub high: f64,
    /// How many resamples gave the figure a value (one that drew a single session, or only
    /// equal scores, gives none and is left out).
    pub resamples: usize,
}

/// The 95% percentile interval of `figure` over `resamples` bootstrap resamples of `units`
/// units (sessions) drawn with replacement, seeded: `figure` gets the drawn units' indices
/// and gives the figure or `None`. `None` for fewer than two units, or when fewer than
/// half the resamples give the figure a value (an interval over the rest would describe
/// other data).
pub fn bootstrap(
    units: usize,
    resamples: usize,
    seed: u64,
    figure: &(dyn Fn(&[usize]) -> Option<f64> + Sync),
) -> Option<Interval> {
    if units < 2 || resamples == 0 {
        return None;
    }
    let values = resampled(resamples, seed, &|rng| {
        let drawn: Vec<usize> = (0..units).map(|_| rng.random_range(0..units)).collect();
        // `resampled` sorts plain numbers; an undefined figure is set apart as NaN and left out below.
        figure(&drawn).unwrap_or(f64::NAN)
    });
    let defined: Vec<f64> = values.into_iter().filter(|v| !v.is_nan()).collect();
    if defined.len() * 2 < resamples {
        return None;
    }
    Some(Interval {
        low: percentile(&defined, 0.025),
        high: percentile(&defined, 0.975),
        resamples: defined.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kappa_of_perfect_agreement_is_one_and_of_one_category_is_undefined() {
        let pairs = [(0, 0), (1, 1), (2, 2), (1, 1)];
        assert_eq!(cohen_kappa(&pairs, 3, Weights::Unweighted), Ok(1.0));
        assert_eq!(cohen_kappa(&pairs, 3, Weights::Quadratic), Ok(1.0));
        assert_eq!(
            cohen_kappa(&[(1, 1), (1, 1)], 3, Weights::Quadratic),
            Err(Undefined::OneCategory)
        );
        assert_eq!(
            cohen_kappa(&[(1, 2)], 3, Weights::Unweighted),
            Err(Undefined::TooFewPairs)
        );
    }

    #[test]
    fn correlations_of_a_constant_side_say_which_side() {
        assert_eq!(
            pearson(&[(0.5, 0.1), (0.5, 0.9)]),
            Err(Undefined::ConstantJudge)
        );
        assert_eq!(
            spearman(&[(0.1, 0.5), (0.9, 0.5)]),
            Err(Undefined::ConstantHuman)
        );
        assert_eq!(pearson(&[(0.1, 0.5)]), Err(Undefined::TooFewPairs));
    }

    #[test]
    fn the_bootstrap_is_seeded_and_brackets_a_stable_figure() {
        let pairs: Vec<(f64, f64)> = (0..30)
            .map(|i| {
                (
                    f64::from(i) / 30.0,
                    f64::from(i) / 30.0 + f64::from(i % 3) * 0.05,
                )
            })
            .collect();
        let figure = |drawn: &[usize]| -> Option<f64> {
            let sample: Vec<(f64, f64)> = drawn.iter().map(|&i| pairs[i]).collect();
            pearson(&sample).ok()
        };
        let a = bootstrap(pairs.len(), 1000, 7, &figure).unwrap();
        let b = bootstrap(pairs.len(), 1000, 7, &figure).unwrap();
        assert_eq!(a, b);
        let r = pearson(&pairs).unwrap();
        assert!(a.low <= r && r <= a.high, "{a:?} vs {r}");
        assert_eq!(a.resamples, 1000);
        assert!(bootstrap(1, 1000, 7, &figure).is_none());
        // A figure undefined in most resamples has no interval.
        assert!(bootstrap(5, 100, 7, &|d: &[usize]| (d[0] == 0).then_some(1.0)).is_none());
    }
}
