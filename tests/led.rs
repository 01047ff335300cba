//! The seeds' own numbers: totally randomized trees on the LED support converge to the
//! exact Thm-1 importances, and each fully grown tree's importances sum to I(X; Y).

mod common;

use common::{led, LED_EXACT};
use forestimp::{CriterionKind, Forest, ForestParams, Layout, Matrix, Targets};

fn fit(params: &ForestParams) -> Forest {
    let (x, y) = led();
    let x = Matrix::new(&x, 10, 7, Layout::RowMajor).unwrap();
    Forest::fit(params, x, Targets::classes(&y, 10).unwrap(), None).unwrap()
}

#[test]
fn totally_randomized_trees_reach_the_exact_led_importances() {
    let mut p = ForestParams::totally_randomized(CriterionKind::Entropy);
    p.n_estimators = 5000;
    p.seed = 3;
    let imp = fit(&p).importances(false);
    for (m, (got, want)) in imp.iter().zip(LED_EXACT).enumerate() {
        assert!(
            (got - want).abs() < 0.01,
            "X{}: {got:.4} vs exact {want}",
            m + 1
        );
    }
}

#[test]
fn every_fully_grown_tree_sums_to_the_mutual_information() {
    // The 10 digits are distinct, so I(X; Y) = H(Y) = log2(10), for any K.
    for k in 1..=7 {
        let mut p = ForestParams::extra_trees(CriterionKind::Entropy);
        p.max_features = forestimp::FeatureCount::Count(k);
        p.n_estimators = 50;
        for imp in fit(&p).tree_importances() {
            let s: f64 = imp.iter().sum();
            assert!((s - 10f64.log2()).abs() < 1e-12, "K={k}: sum {s}");
        }
    }
}

#[test]
fn an_irrelevant_variable_gets_exactly_zero_with_k_equal_one() {
    // Append a copy of every row with an extra bit flipped: the bit is independent of Y.
    let (x0, y0) = led();
    let mut x = Vec::new();
    let mut y = Vec::new();
    for bit in [0.0, 1.0] {
        for r in 0..10 {
            x.extend_from_slice(&x0[r * 7..(r + 1) * 7]);
            x.push(bit);
            y.push(y0[r]);
        }
    }
    let m = Matrix::new(&x, 20, 8, Layout::RowMajor).unwrap();
    let mut p = ForestParams::totally_randomized(CriterionKind::Entropy);
    p.n_estimators = 500;
    let imp = Forest::fit(&p, m, Targets::classes(&y, 10).unwrap(), None)
        .unwrap()
        .importances(false);
    assert_eq!(imp[7], 0.0);
    assert!((imp.iter().sum::<f64>() - 10f64.log2()).abs() < 1e-9);
}
