//! The comparison's p-values against SciPy's, from `engine/tests/fixtures/stats/reference.json`
//! (made by `make_reference.py` beside it, which CI does not run). A unit test, as the tests
//! are of functions internal to the engine.

use serde_json::Value;

fn reference() -> Value {
    let text = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/stats/reference.json"
    ));
    serde_json::from_str(text).expect("reference.json parses")
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

fn close(name: &str, ours: f64, scipy: f64) {
    assert!(
        (ours - scipy).abs() <= 1e-6,
        "{name}: ours {ours}, scipy {scipy}"
    );
}

#[test]
fn wilcoxon_matches_scipy() {
    let r = reference();
    let cases = r["wilcoxon"].as_array().expect("cases");
    assert!(cases.len() >= 10);
    for case in cases {
        let name = case["name"].as_str().unwrap_or_default();
        let ours = super::wilcoxon(&numbers(&case["d"])).expect("a p-value");
        close(name, ours, case["p"].as_f64().expect("scipy's p"));
    }
}

#[test]
fn binomtest_matches_scipy() {
    let r = reference();
    for case in r["binomtest"].as_array().expect("cases") {
        let (k, n) = (
            case["k"].as_u64().unwrap_or(0),
            case["n"].as_u64().unwrap_or(0),
        );
        close(
            &format!("binomtest({k}, {n})"),
            super::binom_test(k, n),
            case["p"].as_f64().expect("scipy's p"),
        );
    }
}

#[test]
fn mannwhitneyu_matches_scipy() {
    let r = reference();
    for case in r["mannwhitneyu"].as_array().expect("cases") {
        let name = case["name"].as_str().unwrap_or_default();
        let ours =
            super::mann_whitney_u(&numbers(&case["x"]), &numbers(&case["y"])).expect("a p-value");
        close(name, ours, case["p"].as_f64().expect("scipy's p"));
    }
}

/// SciPy gives `nan` here (more than 13 differences, all zero); no change is no evidence.
#[test]
fn wilcoxon_of_no_change_is_one() {
    assert_eq!(super::wilcoxon(&[0.0; 40]), Some(1.0));
    assert_eq!(super::wilcoxon(&[]), None);
}
