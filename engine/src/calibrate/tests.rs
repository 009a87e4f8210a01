use super::*;
use crate::pack::{PackFiles, PackOrigin};

/// A pack with one judged dimension `d`: categorical over `categories` (values), or numeric 0–1.
fn pack(categories: Option<&[f64]>) -> CompiledPack {
    let dimension = match categories {
        Some(values) => {
            let list: Vec<String> = values
                .iter()
                .map(|v| format!("      - {{ label: c{v}, value: {v} }}"))
                .collect();
            format!(
                "    type: categorical\n    categories:\n{}\n",
                list.join("\n")
            )
        }
        None => "    type: numeric\n    min: 0\n    max: 1\n".to_owned(),
    };
    let manifest = format!(
        "id: cal\nversion: '1'\nname: Cal\nscoring: weighted\njudge:\n  prompt: p.md\ndimensions:\n  - id: d\n    name: D\n{dimension}    weight: 1\n"
    );
    let files = PackFiles {
        origin: PackOrigin::Builtin("cal".to_owned()),
        files: [
            ("rubric.yaml".to_owned(), manifest),
            (
                "p.md".to_owned(),
                "Judge {{session_id}}.\n{{session_summary}}\n{{output_format}}\n".to_owned(),
            ),
        ]
        .into_iter()
        .collect(),
    };
    match crate::compile_pack(&files) {
        Ok(pack) => pack,
        Err(e) => panic!("{e}"),
    }
}

fn judge_of(scores: &serde_json::Map<String, Value>) -> JudgeResults {
    JudgeResults {
        judge: "judge".to_owned(),
        sessions: scores
            .iter()
            .map(|(s, v)| {
                let judged = Judged {
                    score: v.as_f64().unwrap(),
                    rationale: format!("why {s}"),
                    evidence: vec![format!("seen in {s}")],
                };
                (s.clone(), [("d".to_owned(), judged)].into_iter().collect())
            })
            .collect(),
    }
}

fn labels_of(labels: &[Value]) -> Vec<Label> {
    labels
        .iter()
        .enumerate()
        .map(|(i, l)| Label {
            session_id: l["sessionId"].as_str().unwrap().to_owned(),
            trace_id: None,
            annotator: l["annotator"].as_str().unwrap().to_owned(),
            scores: [(
                "d".to_owned(),
                LabelScore::Number(l["score"].as_f64().unwrap()),
            )]
            .into_iter()
            .collect(),
            origin: format!("case:{}", i + 1),
        })
        .collect()
}

fn check(name: &str, what: &str, got: Option<f64>, want: &Value) {
    match (got, want.as_f64()) {
        (None, None) => {}
        (Some(g), Some(w)) => assert!((g - w).abs() < 1e-9, "{name} {what}: {g} vs {w}"),
        (g, _) => panic!("{name} {what}: {g:?} vs {want}"),
    }
}

/// Every figure of every case reproduces scikit-learn, SciPy and `krippendorff`
/// (`tests/fixtures/calibrate/make_reference.py`), and undefined ones are `null` with a reason.
#[test]
fn calibration_figures_match_scikit_learn_scipy_and_krippendorff() {
    let reference: Value = serde_json::from_str(include_str!(
        "../../../tests/fixtures/calibrate/reference.json"
    ))
    .unwrap();
    let cases = reference["cases"].as_array().unwrap();
    assert!(cases.len() >= 9);
    let mut figures = 0;
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let categories: Option<Vec<f64>> = case["categories"]
            .as_array()
            .map(|c| c.iter().map(|v| v.as_f64().unwrap()).collect());
        let pack = pack(categories.as_deref());
        let judge = judge_of(case["judge"].as_object().unwrap());
        let labels = labels_of(case["labels"].as_array().unwrap());
        let options = Options {
            resamples: 200,
            ..Options::default()
        };
        let calibration = calibrate(&pack, std::slice::from_ref(&judge), &labels, &options);
        let d = &calibration.judges[0].dimensions[0];
        let want = &case["expected"];
        assert_eq!(d.pairs as u64, want["n"].as_u64().unwrap(), "{name}");
        assert_eq!(
            d.sessions as u64,
            want["sessions"].as_u64().unwrap(),
            "{name}"
        );
        check(name, "mae", d.mae, &want["mae"]);
        check(name, "bias", d.bias, &want["bias"]);
        let mut all = vec![&d.alpha, &d.alpha_annotators];
        if let Some(c) = &d.categorical {
            all.extend([&c.kappa, &c.kappa_quadratic]);
        }
        if let Some(n) = &d.numeric {
            all.extend([&n.pearson, &n.spearman]);
        }
        for f in all {
            // Undefined figures say why; defined ones have no reason.
            assert_eq!(f.value.is_none(), f.reason.is_some(), "{name}: {f:?}");
            assert!(f.value.is_none_or(f64::is_finite), "{name}");
        }
        let metric = d.metric;
        check(name, "alpha", d.alpha.value, &want["alphaAll"][metric]);
        check(
            name,
            "alpha annotators",
            d.alpha_annotators.value,
            &want["alphaAnnotators"][metric],
        );
        if let Some(c) = &d.categorical {
            check(name, "kappa", c.kappa.value, &want["kappa"]);
            check(
                name,
                "kappa quadratic",
                c.kappa_quadratic.value,
                &want["kappaQuadratic"],
            );
            check(name, "exact", c.exact, &want["exact"]);
            check(name, "within one", c.within_one, &want["withinOne"]);
            let matrix: Vec<Vec<u64>> = serde_json::from_value(want["confusion"].clone()).unwrap();
            assert_eq!(c.confusion.matrix, matrix, "{name}");
            figures += 9;
            // The other levels of α, through the statistic itself.
            for (level, metric) in [("nominal", Metric::Nominal), ("interval", Metric::Interval)] {
                let mut sessions: Vec<&String> = labels
                    .iter()
                    .map(|l| &l.session_id)
                    .filter(|s| judge.sessions.contains_key(*s))
                    .collect();
                sessions.sort();
                sessions.dedup();
                let units: Vec<Vec<Option<f64>>> = sessions
                    .iter()
                    .map(|s| {
                        let mut row = vec![Some(judge.sessions[*s]["d"].score)];
                        for a in &calibration.annotators {
                            row.push(
                                labels
                                    .iter()
                                    .find(|l| &l.session_id == *s && &l.annotator == a)
                                    .map(|l| match l.scores["d"] {
                                        LabelScore::Number(v) => v,
                                        LabelScore::Category(_) => unreachable!(),
                                    }),
                            );
                        }
                        row
                    })
                    .collect();
                check(
                    name,
                    level,
                    stats::alpha(&units, metric).ok(),
                    &want["alphaAll"][level],
                );
                figures += 1;
            }
        } else {
            let n = d.numeric.as_ref().unwrap();
            check(name, "pearson", n.pearson.value, &want["pearson"]);
            check(name, "spearman", n.spearman.value, &want["spearman"]);
            figures += 6;
        }
    }
    assert!(figures >= 70, "{figures}");
}

#[test]
fn bad_labels_are_counted_and_named_and_the_rest_still_pair() {
    let pack = pack(Some(&[0.0, 1.0, 2.0]));
    let judge = JudgeResults {
        judge: "j".to_owned(),
        sessions: ["a", "b", "c", "unlabelled"]
            .iter()
            .map(|s| {
                (
                    (*s).to_owned(),
                    [(
                        "d".to_owned(),
                        Judged {
                            score: 1.0,
                            rationale: String::new(),
                            evidence: Vec::new(),
                        },
                    )]
                    .into_iter()
                    .collect(),
                )
            })
            .collect(),
    };
    let text = [
        r#"{"sessionId":"a","annotator":"x","scores":{"d":"c1","nope":1}}"#,
        r#"{"sessionId":"a","annotator":"x","scores":{"d":2}}"#,
        r#"{"sessionId":"b","annotator":"x","scores":{"d":7}}"#,
        r#"{"sessionId":"b","annotator":"y","scores":{"d":"c0"}}"#,
        r#"{"sessionId":"c","annotator":"x","scores":{"d":"c2"}}"#,
        r#"{"sessionId":"ghost","annotator":"x","scores":{"d":0}}"#,
    ]
    .join("\n");
    let labels = parse_labels(&text, "l.jsonl").unwrap();
    let c = calibrate(&pack, &[judge], &labels, &Options::default());
    let kinds: Vec<(&str, usize, Vec<String>)> = c
        .warnings
        .iter()
        .map(|w| (w.kind, w.count, w.names.clone()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("labels-without-result", 1, vec!["ghost".to_owned()]),
            ("results-without-labels", 1, vec!["unlabelled".to_owned()]),
            ("unknown-dimension", 1, vec!["nope".to_owned()]),
            ("score-outside-dimension", 1, vec!["b/x/d = 7".to_owned()]),
            ("duplicate-label", 1, vec!["a/x/d (l.jsonl:2)".to_owned()]),
        ]
    );
    let d = &c.judges[0].dimensions[0];
    assert_eq!((d.pairs, d.sessions), (3, 3));
    // The first label of `a` by `x` (c1) is kept: the judge's 1 agrees there.
    assert_eq!(d.categorical.as_ref().unwrap().exact, Some(1.0 / 3.0));
    assert_eq!(c.disagreements.len(), 2);
    assert_eq!(c.disagreements[0].session_id, "b");
}

#[test]
fn results_of_grade_give_the_graded_judge_and_each_judge_of_a_panel() {
    let pack = pack(None);
    let line = serde_json::json!({
        "sessionId": "s1", "rubric": {"id": "cal"}, "totalScore": 0.5,
        "dimensions": {"d": {"score": 0.5, "rationale": "r", "evidence": ["e"],
            "panel": [{"judge": "openai:a", "score": 0.4, "rationale": "ra"}, {"judge": "openai:b", "score": 0.6}]}}
    });
    let judges = judges_from_results(&[("r.jsonl:1".to_owned(), line)], &pack, "panel").unwrap();
    let names: Vec<&str> = judges.iter().map(|j| j.judge.as_str()).collect();
    assert_eq!(names, ["panel", "openai:a", "openai:b"]);
    assert_eq!(judges[1].sessions["s1"]["d"].score, 0.4);
    assert_eq!(judges[1].sessions["s1"]["d"].rationale, "ra");
    let other =
        serde_json::json!({"sessionId": "s1", "rubric": {"id": "cleo-v1"}, "dimensions": {}});
    let err = judges_from_results(&[("r.jsonl:2".to_owned(), other)], &pack, "x").unwrap_err();
    assert_eq!(
        err.to_string(),
        "r.jsonl:2: session `s1` was graded with rubric `cleo-v1`, not `cal`"
    );
}
