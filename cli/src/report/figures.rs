//! The figures of a report page, computed from its rows: each rubric's distribution, letters,
//! dimension spreads and frequent flags ([`stats_of`]), and the trend of its mean over time
//! ([`trend_of`]).

use std::collections::HashMap;

use super::{Row, Rubric, Spread, Stats, Trend, TrendLine, BINS, TOP_FLAGS, TREND_POINTS};

/// The mean and the (population) standard deviation of `values`; `None` for none.
pub(super) fn mean_sd(values: &[f64]) -> (Option<f64>, Option<f64>) {
    if values.is_empty() {
        return (None, None);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (Some(mean), Some(var.sqrt()))
}

/// The `q` quantile of sorted values, by linear interpolation between the closest ranks
/// (NumPy's default).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

/// The five-number summary of `values` (sorted in place): least, quartiles, greatest.
pub(super) fn five(values: &mut [f64]) -> Option<[f64; 5]> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some([
        values[0],
        quantile(values, 0.25),
        quantile(values, 0.5),
        quantile(values, 0.75),
        values[values.len() - 1],
    ])
}

/// A rubric's figures over its rows that stand (the latest of each session): the
/// distribution of percentages, the letters, each dimension's spread, the most frequent flags.
pub(super) fn stats_of(
    rubric: &Rubric,
    index: u32,
    rows: &[Row],
    strings: &[String],
    flag_shape: &HashMap<u32, u32>,
) -> Stats {
    let standing: Vec<&Row> = rows.iter().filter(|r| r.1 == index && r.11).collect();
    let mut percents: Vec<f64> = standing.iter().filter_map(|r| r.2.map(|p| p.0)).collect();
    let (mean, sd) = mean_sd(&percents);
    let median = five(&mut percents).map(|f| f[2]);
    let mut histogram = [0usize; BINS];
    for p in &percents {
        let bin = ((p / 10.0).floor().max(0.0) as usize).min(BINS - 1);
        histogram[bin] += 1;
    }
    let mut letters = vec![0usize; rubric.letters.len()];
    let mut flags: HashMap<u32, (usize, usize)> = HashMap::new();
    for r in &standing {
        if r.2.is_some() {
            let letter = r.3.and_then(|g| strings.get(g as usize));
            if let Some(i) = letter.and_then(|l| rubric.letters.iter().position(|x| x == l)) {
                letters[i] += 1;
            }
        }
        let mut seen: Vec<u32> = Vec::new();
        for f in &r.9 {
            let shape = flag_shape.get(f).copied().unwrap_or(u32::MAX);
            let entry = flags.entry(shape).or_default();
            entry.0 += 1;
            if !seen.contains(&shape) {
                seen.push(shape);
                entry.1 += 1;
            }
        }
    }
    let flag_shapes = flags.len();
    let mut flags: Vec<[usize; 3]> = flags
        .into_iter()
        .map(|(shape, (n, sessions))| [shape as usize, n, sessions])
        .collect();
    flags.sort_by(|a, b| b[1].cmp(&a[1]).then(a[0].cmp(&b[0])));
    flags.truncate(TOP_FLAGS);
    let dimensions = (0..rubric.dimensions.len())
        .map(|d| {
            let mut values: Vec<f64> = standing
                .iter()
                .filter_map(|r| r.8.get(d).copied().flatten().map(|v| v.0))
                .collect();
            let (mean, sd) = mean_sd(&values);
            let max = rubric.dimensions[d].max;
            Spread {
                n: values.len(),
                not_applicable: standing.len() - values.len(),
                mean,
                sd,
                full: values.iter().filter(|v| **v >= max).count(),
                five: five(&mut values),
            }
        })
        .collect();
    Stats {
        sessions: standing.len(),
        graded: percents.len(),
        mean,
        sd,
        median,
        histogram,
        letters,
        dimensions,
        flags,
        flag_shapes,
    }
}

/// The trend of each rubric's mean percentage over time, when the graded results fall in
/// two buckets or more: one point per run (results recorded at one instant) while there are
/// few, else per day, else per month.
pub(super) fn trend_of(rubrics: &[Rubric], rows: &[Row], strings: &[String]) -> Option<Trend> {
    let stamp = |r: &Row| strings.get(r.6 as usize).map(String::as_str).unwrap_or("");
    let dated = |s: &str| s.len() >= 10 && s.as_bytes()[4] == b'-' && s.as_bytes()[7] == b'-';
    let graded: Vec<&Row> = rows.iter().filter(|r| r.2.is_some()).collect();
    let undated = graded.iter().filter(|r| !dated(stamp(r))).count();
    let mut chosen = None;
    for (bucket, len) in [("run", usize::MAX), ("day", 10), ("month", 7)] {
        let mut keys: Vec<&str> = graded
            .iter()
            .map(|r| stamp(r))
            .filter(|s| dated(s))
            .map(|s| &s[..len.min(s.len())])
            .collect();
        keys.sort_unstable();
        keys.dedup();
        if keys.len() <= TREND_POINTS || bucket == "month" {
            chosen = Some((bucket, len, keys));
            break;
        }
    }
    let (bucket, len, keys) = chosen?;
    if keys.len() < 2 {
        return None;
    }
    let mut ids: Vec<&str> = Vec::new();
    for r in rubrics {
        if !ids.contains(&r.id.as_str()) {
            ids.push(&r.id);
        }
    }
    let lines = ids
        .into_iter()
        .map(|id| {
            let mut sums = vec![(0.0, 0usize); keys.len()];
            for r in &graded {
                if rubrics[r.1 as usize].id != id {
                    continue;
                }
                let s = stamp(r);
                if !dated(s) {
                    continue;
                }
                if let Ok(k) = keys.binary_search(&&s[..len.min(s.len())]) {
                    sums[k].0 += r.2.map_or(0.0, |p| p.0);
                    sums[k].1 += 1;
                }
            }
            let mut versions: Vec<String> = rubrics
                .iter()
                .filter(|r| r.id == id)
                .map(|r| r.version.clone())
                .collect();
            versions.dedup();
            TrendLine {
                rubric: id.to_owned(),
                versions,
                points: sums
                    .into_iter()
                    .map(|(sum, n)| (n > 0).then(|| (sum / n as f64, n)))
                    .collect(),
            }
        })
        .collect();
    Some(Trend {
        bucket,
        at: keys.into_iter().map(str::to_owned).collect(),
        lines,
        undated,
    })
}
