//! Monotonic constraints through the crate's API: every splitter and both growth orders give
//! predictions monotone along the constrained features (which the free forest's are not), and
//! the targets a constraint cannot order are refused with a typed error.

use forestimp::{
    CriterionKind, Forest, ForestError, ForestParams, Layout, Matrix, SplitterKind, Targets,
};

const N: usize = 400;
const P: usize = 3;
/// Increasing in x0, decreasing in x1, x2 free.
const CST: [i8; P] = [1, -1, 0];

/// Row-major X in [0, 1) from a fixed LCG, and y = sin(6 x0) − 2 x1 + x2 + noise: not
/// monotone in x0.
fn data() -> (Vec<f32>, Vec<f64>) {
    let mut state = 12_345u64;
    let mut unit = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let x: Vec<f32> = (0..N * P).map(|_| unit() as f32).collect();
    let y = (0..N)
        .map(|i| {
            let r = &x[i * P..(i + 1) * P];
            (6.0 * f64::from(r[0])).sin() - 2.0 * f64::from(r[1])
                + f64::from(r[2])
                + 0.3 * (unit() - 0.5)
        })
        .collect();
    (x, y)
}

/// The most negative step of `sign · prediction` (column `out` of `width`) along feature
/// `j`, over a grid from 20 rows of X.
fn worst_step(forest: &Forest, x: &[f32], j: usize, sign: i8, width: usize, out: usize) -> f64 {
    let steps = 41;
    let mut worst = f64::INFINITY;
    for row in x.chunks(P).take(20) {
        let mut grid = Vec::with_capacity(steps * P);
        for s in 0..steps {
            let mut r = row.to_vec();
            r[j] = -0.1 + 1.2 * s as f32 / (steps - 1) as f32;
            grid.extend(r);
        }
        let m = Matrix::new(&grid, steps, P, Layout::RowMajor).unwrap();
        let pred = forest.predict(m).unwrap();
        for s in 1..steps {
            let d = pred[s * width + out] - pred[(s - 1) * width + out];
            worst = worst.min(d * f64::from(sign));
        }
    }
    worst
}

#[test]
fn every_splitter_and_growth_order_keeps_the_constraint() {
    let (x, y) = data();
    let yc: Vec<u32> = y.iter().map(|&v| u32::from(v > -0.8)).collect();
    let splitters = [
        SplitterKind::Best,
        SplitterKind::Random,
        SplitterKind::Histogram { max_bins: 64 },
    ];
    for splitter in splitters {
        for max_leaf_nodes in [None, Some(30)] {
            for classification in [false, true] {
                let criterion = match classification {
                    true => CriterionKind::Gini,
                    false => CriterionKind::SquaredError,
                };
                let mut p = ForestParams::random_forest(criterion);
                p.n_estimators = 10;
                p.splitter = splitter;
                p.max_leaf_nodes = max_leaf_nodes;
                let m = Matrix::new(&x, N, P, Layout::RowMajor).unwrap();
                let (targets, width) = match classification {
                    true => (Targets::classes(&yc, 2).unwrap(), 2),
                    false => (Targets::regression(&y).unwrap(), 1),
                };
                // Classifiers: the probability of class 1 (the last column).
                let out = width - 1;
                let free = Forest::fit(&p, m, targets, None).unwrap();
                let free_worst = worst_step(&free, &x, 0, 1, width, out);
                p.monotonic_cst = Some(CST.to_vec());
                let m = Matrix::new(&x, N, P, Layout::RowMajor).unwrap();
                let targets = match classification {
                    true => Targets::classes(&yc, 2).unwrap(),
                    false => Targets::regression(&y).unwrap(),
                };
                let constrained = Forest::fit(&p, m, targets, None).unwrap();
                let case = format!("{splitter:?} {max_leaf_nodes:?} {classification}");
                assert!(free_worst < -1e-3, "{case}: the free forest is monotone");
                for (j, &sign) in CST.iter().enumerate().filter(|(_, &s)| s != 0) {
                    let w = worst_step(&constrained, &x, j, sign, width, out);
                    assert!(w >= 0.0, "{case}: feature {j} steps by {w}");
                }
            }
        }
    }
}

#[test]
fn unorderable_targets_and_bad_signs_are_refused() {
    let (x, y) = data();
    let m = || Matrix::new(&x, N, P, Layout::RowMajor).unwrap();
    let three: Vec<u32> = (0..N as u32).map(|i| i % 3).collect();
    let mut p = ForestParams::random_forest(CriterionKind::Gini);
    p.n_estimators = 2;
    p.monotonic_cst = Some(CST.to_vec());
    let refused = |r: Result<Forest, ForestError>| {
        matches!(
            r,
            Err(ForestError::InvalidParameter {
                name: "monotonic_cst",
                ..
            })
        )
    };
    assert!(refused(Forest::fit(
        &p,
        m(),
        Targets::classes(&three, 3).unwrap(),
        None
    )));
    let mut p = ForestParams::random_forest(CriterionKind::SquaredError);
    p.n_estimators = 2;
    for bad in [vec![1, 0], vec![1, 0, 2]] {
        p.monotonic_cst = Some(bad);
        assert!(refused(Forest::fit(
            &p,
            m(),
            Targets::regression(&y).unwrap(),
            None
        )));
    }
}
