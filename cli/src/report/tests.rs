//! Unit tests of the run report's figures: quartiles, spread, the trend by day and which
//! grade of a session stands.

use super::*;

fn result(id: &str, percent: f64, timestamp: &str) -> GradeResult {
    serde_json::from_value(serde_json::json!({
        "sessionId": id, "totalScore": percent, "maxScore": 100,
        "dimensions": {"d": {"score": percent, "max": 100, "evidence": []}},
        "flags": [], "timestamp": timestamp, "entryCount": 1, "evaluator": "t",
        "rubric": {"id": "p", "version": "1", "digest": "x"}, "percent": percent
    }))
    .unwrap()
}

fn builder() -> ReportBuilder {
    ReportBuilder::new("t".into(), "test".into(), vec![], Box::new(|_| None))
}

#[test]
fn quartiles_interpolate_between_ranks_as_numpy_does() {
    // np.percentile([1, 2, 3, 4], [0, 25, 50, 75, 100]) = [1, 1.75, 2.5, 3.25, 4]
    assert_eq!(
        five(&mut [4.0, 1.0, 3.0, 2.0]),
        Some([1.0, 1.75, 2.5, 3.25, 4.0])
    );
    assert_eq!(five(&mut [7.0]), Some([7.0; 5]));
    assert_eq!(five(&mut []), None);
}

#[test]
fn the_spread_is_the_population_standard_deviation() {
    let (mean, sd) = mean_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
    assert_eq!((mean, sd), (Some(5.0), Some(2.0)));
    assert_eq!(mean_sd(&[]), (None, None));
}

#[test]
fn a_trend_of_many_runs_is_drawn_per_day() {
    let mut page = builder();
    // 61 runs over two days: too many points for one a run.
    for i in 0..61 {
        let day = if i < 30 { 20 } else { 21 };
        let stamp = format!("2026-11-{day}T10:{:02}:00.000Z", i % 60);
        page.add(&result(
            &format!("s{i}"),
            if day == 20 { 50.0 } else { 70.0 },
            &stamp,
        ));
    }
    let data = page.finish();
    let trend = data.trend.expect("a trend");
    assert_eq!(trend.bucket, "day");
    assert_eq!(trend.at, ["2026-11-20", "2026-11-21"]);
    assert_eq!(trend.lines[0].points, [Some((50.0, 30)), Some((70.0, 31))]);
}

#[test]
fn one_run_has_no_trend_and_undated_results_are_counted_out() {
    let mut page = builder();
    page.add(&result("a", 50.0, "2026-11-20T10:00:00.000Z"));
    page.add(&result("b", 60.0, ""));
    assert!(page.finish().trend.is_none());
    let mut page = builder();
    page.add(&result("a", 50.0, "2026-11-20T10:00:00.000Z"));
    page.add(&result("b", 60.0, "2026-11-21T10:00:00.000Z"));
    page.add(&result("c", 60.0, ""));
    assert_eq!(page.finish().trend.map(|t| t.undated), Some(1));
}

#[test]
fn a_later_grade_of_a_session_stands_in_the_figures() {
    let mut page = builder();
    page.add(&result("a", 20.0, "2026-11-20T10:00:00.000Z"));
    page.add(&result("a", 80.0, "2026-11-21T10:00:00.000Z"));
    let data = page.finish();
    let stats = data.rubrics[0].stats.as_ref().expect("figures");
    assert_eq!((stats.sessions, stats.mean), (1, Some(80.0)));
    assert!(data.history);
    assert_eq!(data.sessions.iter().filter(|r| r.11).count(), 1);
}
