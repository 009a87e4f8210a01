//! The tests behind a comparison, each giving the p-value SciPy 1.17 gives with its defaults.
//!
//! statrs supplies the normal and binomial distributions; no crate offers the rank tests with
//! SciPy's choice of method (exact, permutation or normal approximation, and how zeros and ties
//! decide it), so they are written here, step for step after `scipy.stats`. The reference values
//! they are tested against come from `engine/tests/fixtures/stats/make_reference.py`.
//!
//! Where SciPy has no answer this module gives one, and says so: `wilcoxon` of differences
//! that are all zero is `nan` in SciPy for more than 13 of them and 1 here (no change is no
//! evidence of one); `binomtest` with `n = 0` raises in SciPy and is 1 here.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Binomial as BinomialSampler, Distribution};
use rayon::prelude::*;
use statrs::distribution::{Binomial, ContinuousCDF, Discrete, DiscreteCDF, Normal};

/// `2·sf(|z|)` of the standard normal.
fn normal_two_sided(z: f64) -> f64 {
    // The standard normal's parameters are valid, so `new` cannot fail; the fallback is the
    // p-value of "no evidence".
    match Normal::new(0.0, 1.0) {
        Ok(n) => 2.0 * n.sf(z.abs()),
        Err(_) => 1.0,
    }
}

/// Average ranks (1-based) of `values` and the sizes of their groups of ties. Values within
/// [`TIE`] of the first of a group tie: the same score reached by another sum (`0.1 + 0.2` and
/// `0.3`, a weighted pack's percent) differs in its last bits, and ranking those apart would
/// make a tie into evidence of a shift.
pub(crate) fn rank_average(values: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut groups = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && values[order[j]] - values[order[i]] < TIE {
            j += 1;
        }
        // Positions i..j (0-based) share the average of ranks i+1..=j.
        let rank = (i + 1 + j) as f64 / 2.0;
        for &k in &order[i..j] {
            ranks[k] = rank;
        }
        groups.push(j - i);
        i = j;
    }
    (ranks, groups)
}

/// How close two values are to count as a tie: far below the 0.01 of a reported percent, far
/// above what the arithmetic of a score leaves behind.
const TIE: f64 = 1e-9;

fn tie_term(groups: &[usize]) -> f64 {
    groups
        .iter()
        .map(|&t| {
            let t = t as f64;
            t * t * t - t
        })
        .sum()
}

/// `scipy.stats.wilcoxon(d)`: the two-sided signed-rank test of paired differences, with
/// SciPy's defaults (`zero_method="wilcox"`: zeros are dropped; no continuity correction;
/// `method="auto"`). SciPy's `auto` decides on the length of `d` counting its zeros: more
/// than 50 → normal approximation; otherwise the exact distribution when there are neither
/// ties nor zeros, an exact permutation test (all 2ⁿ signs) when n ≤ 13, else the normal
/// approximation with the tie correction. `None` for no differences at all.
pub fn wilcoxon(d: &[f64]) -> Option<f64> {
    let n = d.len();
    if n == 0 {
        return None;
    }
    let nonzero: Vec<f64> = d.iter().copied().filter(|&v| v != 0.0).collect();
    let zeros = n - nonzero.len();
    if nonzero.is_empty() {
        return Some(1.0);
    }
    let abs: Vec<f64> = nonzero.iter().map(|v| v.abs()).collect();
    let (ranks, groups) = rank_average(&abs);
    let r_plus: f64 = nonzero
        .iter()
        .zip(&ranks)
        .filter(|(v, _)| **v > 0.0)
        .map(|(_, r)| r)
        .sum();
    let count = nonzero.len() as f64;
    let has_ties = groups.iter().any(|&g| g > 1);

    let p = if n <= 50 && !has_ties && zeros == 0 {
        let dist = SignedRankDistribution::new(nonzero.len());
        2.0 * dist.sf(r_plus.floor()).min(dist.cdf(r_plus.ceil()))
    } else if n <= 13 {
        signed_rank_permutation(&ranks, r_plus)
    } else {
        let mean = count * (count + 1.0) * 0.25;
        let var = (count * (count + 1.0) * (2.0 * count + 1.0) - tie_term(&groups) / 2.0) / 24.0;
        normal_two_sided((r_plus - mean) / var.sqrt())
    };
    Some(p.clamp(0.0, 1.0))
}

/// The null distribution of the signed-rank statistic for n differences without ties.
struct SignedRankDistribution {
    pmf: Vec<f64>,
    mean: f64,
}

impl SignedRankDistribution {
    fn new(n: usize) -> Self {
        let max = n * (n + 1) / 2;
        // Subsets of 1..=n by their sum; n ≤ 50 keeps every count below 2⁵⁰, exact in u64.
        let mut counts = vec![0u64; max + 1];
        counts[0] = 1;
        for k in 1..=n {
            for s in (k..=max).rev() {
                counts[s] += counts[s - k];
            }
        }
        let total = 2f64.powi(n as i32);
        SignedRankDistribution {
            pmf: counts.iter().map(|&c| c as f64 / total).collect(),
            mean: (n * (n + 1)) as f64 / 4.0,
        }
    }

    fn sum(&self, from: f64, to: f64) -> f64 {
        let last = self.pmf.len() as f64 - 1.0;
        let (from, to) = (from.max(0.0), to.min(last));
        if from > to {
            return 0.0;
        }
        self.pmf[from as usize..=to as usize].iter().sum()
    }

    /// P(T ≤ k), summed on the side of the mean SciPy sums on.
    fn cdf(&self, k: f64) -> f64 {
        if k <= self.mean {
            self.sum(0.0, k)
        } else {
            1.0 - self.sum(k + 1.0, f64::INFINITY)
        }
    }

    /// P(T ≥ k).
    fn sf(&self, k: f64) -> f64 {
        if k <= self.mean {
            self.sum(k, f64::INFINITY)
        } else {
            1.0 - self.sum(0.0, k - 1.0)
        }
    }
}

/// SciPy's `permutation_test` for the signed-rank statistic with every sign assignment: the
/// share of assignments at least as extreme on each side, doubled. Zeros are left out here;
/// their signs only repeat each assignment, which leaves the shares unchanged.
fn signed_rank_permutation(ranks: &[f64], observed: f64) -> f64 {
    let m = ranks.len();
    let total = 1usize << m;
    let gamma = (f64::EPSILON * 100.0 * observed).abs();
    let (mut less, mut greater) = (0usize, 0usize);
    for signs in 0..total {
        let t: f64 = (0..m)
            .filter(|i| signs >> i & 1 == 1)
            .map(|i| ranks[i])
            .sum();
        if t <= observed + gamma {
            less += 1;
        }
        if t >= observed - gamma {
            greater += 1;
        }
    }
    2.0 * (less.min(greater) as f64 / total as f64)
}

/// `scipy.stats.binomtest(k, n, p=0.5).pvalue`, two-sided: the probability of outcomes no
/// likelier than `k` (within SciPy's relative tolerance of 1e-7). The sign test and the exact
/// McNemar test are this test on the changed sessions.
pub fn binom_test(k: u64, n: u64) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let p = 0.5;
    let Ok(binom) = Binomial::new(p, n) else {
        return 1.0;
    };
    let pmf = |x: i64| {
        if x < 0 || x as u64 > n {
            0.0
        } else {
            binom.pmf(x as u64)
        }
    };
    let cdf = |x: i64| {
        if x < 0 {
            0.0
        } else if x as u64 >= n {
            1.0
        } else {
            binom.cdf(x as u64)
        }
    };
    let sf = |x: i64| 1.0_f64.min(if x < 0 { 1.0 } else { binom.sf(x as u64) });
    let (k, n_i) = (k as i64, n as i64);
    let d = pmf(k);
    let rerr = 1.0 + 1e-7;
    let pn = p * n as f64;
    let pval = if k as f64 == pn {
        1.0
    } else if (k as f64) < pn {
        let ix = binary_search_pmf(&|x| -pmf(x), -d * rerr, pn.ceil() as i64, n_i);
        let y = n_i - ix + i64::from(d * rerr == pmf(ix));
        cdf(k) + sf(n_i - y)
    } else {
        let ix = binary_search_pmf(&pmf, d * rerr, 0, pn.floor() as i64);
        let y = ix + 1;
        cdf(y - 1) + sf(k - 1)
    };
    pval.min(1.0)
}

/// SciPy's `_binary_search_for_binom_tst`: the i in `lo..=hi` with `a(i) <= d < a(i+1)`,
/// for `a` ascending on that range.
fn binary_search_pmf(a: &dyn Fn(i64) -> f64, d: f64, mut lo: i64, mut hi: i64) -> i64 {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let v = a(mid);
        if v < d {
            lo = mid + 1;
        } else if v > d {
            hi = mid - 1;
        } else {
            return mid;
        }
    }
    if a(lo) <= d {
        lo
    } else {
        lo - 1
    }
}

/// `scipy.stats.mannwhitneyu(x, y).pvalue` with its defaults: two-sided, continuity
/// correction, and `method="auto"` (exact when either sample has at most 8 values and no
/// value is tied, else the normal approximation with the tie correction). `None` when a
/// sample is empty.
pub fn mann_whitney_u(x: &[f64], y: &[f64]) -> Option<f64> {
    let (n1, n2) = (x.len(), y.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let all: Vec<f64> = x.iter().chain(y).copied().collect();
    let (ranks, groups) = rank_average(&all);
    let r1: f64 = ranks[..n1].iter().sum();
    let (f1, f2) = (n1 as f64, n2 as f64);
    let u1 = r1 - f1 * (f1 + 1.0) / 2.0;
    let u = u1.max(f1 * f2 - u1);
    let ties = groups.iter().any(|&g| g > 1);
    let p = if (n1 > 8 && n2 > 8) || ties {
        let n = f1 + f2;
        let s = (f1 * f2 / 12.0 * ((n + 1.0) - tie_term(&groups) / (n * (n - 1.0)))).sqrt();
        let z = (u - f1 * f2 / 2.0 - 0.5) / s;
        // z is +∞ or NaN only when every value is tied (s = 0): no evidence of a shift.
        let sf = match Normal::new(0.0, 1.0) {
            Ok(normal) if z.is_finite() => normal.sf(z),
            _ if z == f64::INFINITY => 0.0,
            _ => 1.0,
        };
        2.0 * sf
    } else {
        // Without ties U is whole, and by symmetry P(U ≥ u) = P(U ≤ n1·n2 − u).
        2.0 * mann_whitney_cdf(n1.min(n2), n1.max(n2), (f1 * f2 - u) as usize)
    };
    Some(p.clamp(0.0, 1.0))
}

/// P(U ≤ k) for samples of `m ≤ n` values without ties: the coefficients of the Gaussian
/// binomial [m+n choose m]_q = Π_{i=1..m} (1 − q^{n+i}) / (1 − q^i), built factor by factor
/// (each partial product is a polynomial), over C(m+n, m).
fn mann_whitney_cdf(m: usize, n: usize, k: usize) -> f64 {
    let len = m * n + 1;
    let mut c = vec![0.0f64; len];
    c[0] = 1.0;
    for i in 1..=m {
        let up = n + i;
        for u in (up..len).rev() {
            c[u] -= c[u - up];
        }
        for u in i..len {
            c[u] += c[u - i];
        }
    }
    let total: f64 = c.iter().sum();
    c[..=k.min(len - 1)].iter().sum::<f64>() / total
}

/// Cliff's delta of `y` over `x`: P(y > x) − P(y < x) over all pairs, from the rank sum
/// (so in O(n log n)). `None` when a sample is empty.
pub fn cliffs_delta(x: &[f64], y: &[f64]) -> Option<f64> {
    let (n1, n2) = (x.len() as f64, y.len() as f64);
    if x.is_empty() || y.is_empty() {
        return None;
    }
    let all: Vec<f64> = x.iter().chain(y).copied().collect();
    let (ranks, _) = rank_average(&all);
    let r2: f64 = ranks[x.len()..].iter().sum();
    // U of y counts the pairs where y is larger, ties counting a half.
    let u2 = r2 - n2 * (n2 + 1.0) / 2.0;
    Some((2.0 * u2 - n1 * n2) / (n1 * n2))
}

/// Resamples in one block of the bootstrap: each block has its own generator, seeded from the
/// seed and the block's number, so the interval does not depend on the number of threads.
const BLOCK: usize = 250;

/// Values with how often each occurs: a resample of n draws is one multinomial draw over
/// them, made as a chain of binomial draws.
struct Counted {
    values: Vec<f64>,
    counts: Vec<u64>,
    n: u64,
}

impl Counted {
    fn new(sample: &[f64]) -> Self {
        let mut sorted = sample.to_vec();
        sorted.sort_by(f64::total_cmp);
        let (mut values, mut counts) = (Vec::new(), Vec::new());
        for v in sorted {
            match values.last() {
                Some(&last) if last == v => {
                    if let Some(c) = counts.last_mut() {
                        *c += 1;
                    }
                }
                _ => {
                    values.push(v);
                    counts.push(1);
                }
            }
        }
        Counted {
            values,
            counts,
            n: sample.len() as u64,
        }
    }

    /// The mean of one resample of n values drawn with replacement.
    fn resample_mean<R: Rng>(&self, rng: &mut R) -> f64 {
        let (mut left, mut mass) = (self.n, self.n);
        let mut sum = 0.0;
        for (i, (&v, &c)) in self.values.iter().zip(&self.counts).enumerate() {
            if left == 0 {
                break;
            }
            let drawn = if i + 1 == self.values.len() {
                left
            } else {
                // c ≤ mass and mass > 0 here, so the probability is within [0, 1].
                BinomialSampler::new(left, c as f64 / mass as f64)
                    .map(|b| b.sample(rng))
                    .unwrap_or(0)
            };
            sum += v * drawn as f64;
            left -= drawn;
            mass -= c;
        }
        sum / self.n as f64
    }
}

/// The statistic of every resample, in block order.
pub(crate) fn resampled(
    resamples: usize,
    seed: u64,
    each: &(dyn Fn(&mut ChaCha8Rng) -> f64 + Sync),
) -> Vec<f64> {
    let blocks = resamples.div_ceil(BLOCK);
    let mut out: Vec<f64> = (0..blocks)
        .into_par_iter()
        .flat_map_iter(|b| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(b as u64);
            let len = BLOCK.min(resamples - b * BLOCK);
            (0..len).map(move |_| each(&mut rng)).collect::<Vec<_>>()
        })
        .collect();
    out.sort_by(f64::total_cmp);
    out
}

/// The fewest values a sample needs for a bootstrap interval.
const MIN_BOOTSTRAP: usize = 2;

/// numpy's default (linear) percentile of sorted values.
pub(crate) fn percentile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// The 95% percentile interval of the mean of `d` over `resamples` bootstrap resamples (pairs
/// resampled with replacement), seeded. `None` for fewer than two values: every resample of
/// one value is that value, and an interval of width 0 would claim a certainty one session
/// cannot give (SciPy's `bootstrap` refuses such a sample too).
pub fn bootstrap_mean_ci(d: &[f64], resamples: usize, seed: u64) -> Option<[f64; 2]> {
    if d.len() < MIN_BOOTSTRAP || resamples == 0 {
        return None;
    }
    let counted = Counted::new(d);
    let means = resampled(resamples, seed, &|rng| counted.resample_mean(rng));
    Some([percentile(&means, 0.025), percentile(&means, 0.975)])
}

/// The 95% percentile interval of `mean(y) − mean(x)`, each sample resampled on its own.
/// `None` when either sample has fewer than two values: that side's spread is unknown.
pub fn bootstrap_diff_ci(x: &[f64], y: &[f64], resamples: usize, seed: u64) -> Option<[f64; 2]> {
    if x.len() < MIN_BOOTSTRAP || y.len() < MIN_BOOTSTRAP || resamples == 0 {
        return None;
    }
    let (cx, cy) = (Counted::new(x), Counted::new(y));
    let diffs = resampled(resamples, seed, &|rng| {
        let mx = cx.resample_mean(rng);
        cy.resample_mean(rng) - mx
    });
    Some([percentile(&diffs, 0.025), percentile(&diffs, 0.975)])
}

/// The arithmetic mean; 0 for no values.
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

#[cfg(test)]
mod scipy_reference;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_that_differ_only_in_their_last_bits_tie_in_rank() {
        let (ranks, groups) = rank_average(&[0.1 + 0.2, 1.0, 0.3]);
        assert_eq!(ranks, [1.5, 3.0, 1.5]);
        assert_eq!(groups, [2, 1]);
    }

    #[test]
    fn signed_rank_distribution_sums_to_one() {
        let d = SignedRankDistribution::new(10);
        let total: f64 = d.pmf.iter().sum();
        assert!((total - 1.0).abs() < 1e-12);
        assert!((d.cdf(27.0) + d.sf(28.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn mann_whitney_cdf_is_a_distribution() {
        // m = 2, n = 2: U takes 0,1,2,2,3,4 over the 6 arrangements.
        assert!((mann_whitney_cdf(2, 2, 0) - 1.0 / 6.0).abs() < 1e-12);
        assert!((mann_whitney_cdf(2, 2, 2) - 4.0 / 6.0).abs() < 1e-12);
        assert!((mann_whitney_cdf(2, 2, 4) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn bootstrap_is_seeded() {
        let d: Vec<f64> = (0..500).map(|i| ((i * 37) % 11) as f64 - 5.0).collect();
        let a = bootstrap_mean_ci(&d, 2000, 7);
        assert_eq!(a, bootstrap_mean_ci(&d, 2000, 7));
        assert_ne!(a, bootstrap_mean_ci(&d, 2000, 8));
        let [lo, hi] = a.unwrap_or([f64::NAN; 2]);
        let m = mean(&d);
        assert!(lo < m && m < hi, "{lo} {m} {hi}");
    }

    #[test]
    fn bootstrap_of_a_constant_is_that_constant() {
        assert_eq!(bootstrap_mean_ci(&[0.0; 40], 100, 1), Some([0.0, 0.0]));
        assert_eq!(
            bootstrap_diff_ci(&[2.0; 5], &[3.0; 9], 100, 1),
            Some([1.0, 1.0])
        );
    }

    #[test]
    fn one_session_gives_no_bootstrap_interval_rather_than_one_of_width_zero() {
        assert_eq!(bootstrap_mean_ci(&[-80.0], 100, 1), None);
        assert_eq!(bootstrap_diff_ci(&[100.0], &[20.0, 30.0], 100, 1), None);
        assert_eq!(bootstrap_diff_ci(&[100.0, 90.0], &[20.0], 100, 1), None);
        assert!(bootstrap_mean_ci(&[-80.0, -70.0], 100, 1).is_some());
    }

    #[test]
    fn cliffs_delta_counts_pairs() {
        assert_eq!(cliffs_delta(&[1.0, 2.0], &[3.0, 4.0]), Some(1.0));
        assert_eq!(cliffs_delta(&[3.0, 4.0], &[1.0, 2.0]), Some(-1.0));
        assert_eq!(cliffs_delta(&[1.0, 2.0], &[1.0, 2.0]), Some(0.0));
    }
}
