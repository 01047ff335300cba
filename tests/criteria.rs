//! The Poisson criterion and cost-complexity pruning through the Rust API: scikit-learn's
//! rules on targets, no split leaving a child that predicts 0, pruned trees that are
//! subtrees of the grown ones, model bytes that load back the same.

use forestimp::{CriterionKind, Forest, ForestError, ForestParams, Layout, Matrix, Targets};

/// 400 rows × 3 features, row-major, and counts that are 0 wherever feature 2 is below 0.4.
fn data() -> (Vec<f64>, Vec<f64>) {
    let n = 400;
    let mut state = 7u64;
    let mut unit = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let x: Vec<f64> = (0..n * 3).map(|_| unit()).collect();
    let y = (0..n)
        .map(|i| {
            let r = &x[3 * i..3 * i + 3];
            if r[2] < 0.4 {
                0.0
            } else {
                (4.0 * r[0] + 2.0 * unit()).floor()
            }
        })
        .collect();
    (x, y)
}

fn fit(p: &ForestParams, x: &[f64], y: &[f64]) -> Result<Forest, ForestError> {
    let m = Matrix::new(x, y.len(), 3, Layout::RowMajor)?;
    Forest::fit(p, m, Targets::regression(y)?, None)
}

#[test]
fn poisson_splits_never_leave_a_child_predicting_zero() {
    let (x, y) = data();
    for mut p in [
        ForestParams::random_forest(CriterionKind::Poisson),
        ForestParams::extra_trees(CriterionKind::Poisson),
    ] {
        p.n_estimators = 10;
        let forest = fit(&p, &x, &y).unwrap();
        for tree in forest.trees() {
            let s = tree.node_stats();
            for t in 0..tree.len() {
                if let Some((l, r)) = tree.children(t) {
                    assert!(s.value(l)[0] > 0.0 && s.value(r)[0] > 0.0);
                    // MDI's decrease of the Poisson deviance is never negative.
                    let dec = s.weight[t] * s.impurity[t]
                        - s.weight[l] * s.impurity[l]
                        - s.weight[r] * s.impurity[r];
                    assert!(dec >= -1e-9 * s.weight[t] * s.impurity[t].max(1.0));
                }
            }
        }
        #[cfg(feature = "serde")]
        {
            let again = Forest::from_bytes(&forest.to_bytes().unwrap()).unwrap();
            assert_eq!(again.to_bytes().unwrap(), forest.to_bytes().unwrap());
            assert_eq!(again.params().criterion, CriterionKind::Poisson);
        }
    }
}

#[test]
fn poisson_targets_and_tasks_are_checked() {
    let (x, mut y) = data();
    let p = ForestParams::random_forest(CriterionKind::Poisson);
    y[5] = -1.0;
    assert!(matches!(
        fit(&p, &x, &y),
        Err(ForestError::InvalidTarget(_))
    ));
    let zeros = vec![0.0; y.len()];
    assert!(matches!(
        fit(&p, &x, &zeros),
        Err(ForestError::InvalidTarget(_))
    ));
    let codes = vec![0u32; y.len()];
    let m = Matrix::new(&x, y.len(), 3, Layout::RowMajor).unwrap();
    let classes = Targets::classes(&codes, 2).unwrap();
    assert!(Forest::fit(&p, m, classes, None).is_err());
}

#[test]
fn pruning_keeps_a_subtree_of_the_grown_tree() {
    let (x, y) = data();
    let mut p = ForestParams::random_forest(CriterionKind::SquaredError);
    p.n_estimators = 5;
    let grown = fit(&p, &x, &y).unwrap();
    p.ccp_alpha = 0.01;
    let pruned = fit(&p, &x, &y).unwrap();
    for (g, q) in grown.trees().iter().zip(pruned.trees()) {
        assert!(q.len() < g.len());
        // Walking both trees together: every kept split is the grown tree's, and the
        // root's statistics are unchanged.
        let (sg, sq) = (g.node_stats(), q.node_stats());
        assert_eq!(sq.weight[0], sg.weight[0]);
        let mut stack = vec![(0usize, 0usize)];
        while let Some((a, b)) = stack.pop() {
            if let Some((ql, qr)) = q.children(b) {
                let (gl, gr) = g.children(a).expect("a kept split was a split");
                assert_eq!(
                    (q.feature(b), q.threshold(b)),
                    (g.feature(a), g.threshold(a))
                );
                stack.extend([(gl, ql), (gr, qr)]);
            } else {
                assert!((sq.value(b)[0] - sg.value(a)[0]).abs() < 1e-9);
            }
        }
    }
    p.ccp_alpha = -1.0;
    assert!(matches!(
        fit(&p, &x, &y),
        Err(ForestError::InvalidParameter { .. })
    ));
}
