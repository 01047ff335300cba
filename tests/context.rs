//! Context-dependent importances (Sutera, PhD ch. 6) on Context Problem 1: a forest of
//! totally randomized trees on the exhaustive data reproduces Table 6.2, `Imp` is the
//! forest's MDI, and the scores do not depend on the thread count.

use forestimp::importance::context::{ContextImportances, ContextOptions, EmptyContext};
use forestimp::parallel::install;
use forestimp::{CriterionKind, Forest, ForestError, ForestParams, Layout, Matrix, Targets};

/// Problem 1, every combination of (X1, X2, X3, Xc) `copies` times: Y = 2 if X1 = 0, else
/// X2 in context 0 and X3 in context 1. Returns X (row-major, 3 columns), Y and Xc.
fn problem1(copies: usize) -> (Vec<f64>, Vec<u32>, Vec<u32>) {
    let (mut x, mut y, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..copies {
        for code in 0..16u32 {
            let (xc, x1, x2, x3) = (code >> 3 & 1, code >> 2 & 1, code >> 1 & 1, code & 1);
            x.extend([x1, x2, x3].map(f64::from));
            y.push(match (x1, xc) {
                (0, _) => 2,
                (_, 0) => x2,
                _ => x3,
            });
            c.push(xc);
        }
    }
    (x, y, c)
}

fn scores(trees: usize, empty: EmptyContext, perms: usize) -> (ContextImportances, Forest) {
    // Replicated rows keep the scores (they depend on proportions only) and make the
    // permuted contexts nearly balanced in every node, so the null scores are small.
    let copies = if perms > 0 { 16 } else { 1 };
    let (x, y, c) = problem1(copies);
    let x = Matrix::new(&x, 16 * copies, 3, Layout::RowMajor).unwrap();
    let mut params = ForestParams::totally_randomized(CriterionKind::Entropy);
    params.n_estimators = trees;
    params.seed = 11;
    let t = Targets::classes(&y, 3).unwrap();
    let forest = Forest::fit(&params, x, t, None).unwrap();
    let options = ContextOptions {
        empty,
        n_permutations: perms,
        seed: 5,
    };
    let s = forest
        .context_importances(x, t, &c, 2, None, &options)
        .unwrap();
    (s, forest)
}

fn close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < tol, "{what}: {got:?} vs {want:?}");
    }
}

#[test]
fn problem1_reproduces_table_6_2() {
    let (s, forest) = scores(2000, EmptyContext::Zero, 0);
    close(&s.importances, &[1.0, 0.125, 0.125], 0.02, "Imp");
    // p × K, row-major: (X1|0, X1|1, X2|0, X2|1, X3|0, X3|1).
    close(
        &s.absolute,
        &[0.0, 0.0, 0.375, 0.125, 0.125, 0.375],
        0.02,
        "Imp^|",
    );
    close(
        &s.signed,
        &[0.0, 0.0, -0.375, 0.125, 0.125, -0.375],
        0.02,
        "Imp^Δ",
    );
    close(
        &s.global_signed,
        &[0.0, -0.125, -0.125],
        0.02,
        "global Imp^Δ",
    );
    // Imp is the forest's raw MDI when the data are its (whole) training set.
    close(
        &s.importances,
        &forest.importances(false),
        1e-12,
        "Imp = MDI",
    );
    assert!(s.pvalues_absolute.is_none() && s.null_absolute.is_empty());
}

#[test]
fn every_split_node_of_problem1_has_both_contexts() {
    // With all 16 combinations every node of depth ≤ 3 holds both context values, so the
    // zero-mass convention is never used and both conventions agree.
    let (zero, _) = scores(200, EmptyContext::Zero, 0);
    let (skip, _) = scores(200, EmptyContext::Skip, 0);
    assert_eq!(zero, skip);
}

#[test]
fn permutations_separate_context_dependent_features() {
    let (s, _) = scores(200, EmptyContext::Zero, 99);
    let p = s.pvalues_absolute.unwrap();
    assert_eq!(s.null_absolute.len(), 99 * 6);
    // X1 is context-independent: its observed score is 0, any permutation reaches it.
    assert!(p[0] > 0.5 && p[1] > 0.5, "{p:?}");
    for &q in &p[2..] {
        assert!(q <= 0.05, "{p:?}");
    }
    let ps = s.pvalues_signed.unwrap();
    assert!(ps[2] <= 0.05 && ps[5] <= 0.05, "{ps:?}");
}

#[test]
fn scores_do_not_depend_on_the_thread_count() {
    let one = install(1, || scores(64, EmptyContext::Zero, 20).0);
    let three = install(3, || scores(64, EmptyContext::Zero, 20).0);
    assert_eq!(one, three);
}

#[test]
fn bad_inputs_are_errors() {
    let (x, y, c) = problem1(1);
    let x = Matrix::new(&x, 16, 3, Layout::RowMajor).unwrap();
    let params = ForestParams {
        n_estimators: 3,
        ..ForestParams::totally_randomized(CriterionKind::Entropy)
    };
    let t = Targets::classes(&y, 3).unwrap();
    let forest = Forest::fit(&params, x, t, None).unwrap();
    let o = ContextOptions {
        empty: EmptyContext::Zero,
        n_permutations: 0,
        seed: 0,
    };
    let run = |c: &[u32], k: usize, w: Option<&[f64]>, t: Targets<'_>| {
        forest.context_importances(x, t, c, k, w, &o)
    };
    assert!(matches!(
        run(&c[1..], 2, None, t),
        Err(ForestError::Shape(_))
    ));
    let bad = vec![2u32; 16];
    assert!(matches!(
        run(&bad, 2, None, t),
        Err(ForestError::InvalidParameter { .. })
    ));
    assert!(run(&c, 300, None, t).is_err());
    assert!(run(&c, 0, None, t).is_err());
    let neg = vec![-1.0; 16];
    assert!(run(&c, 2, Some(&neg), t).is_err());
    let yr = vec![0.0; 16];
    assert!(run(&c, 2, None, Targets::regression(&yr).unwrap()).is_err());
    let y4 = Targets::classes(&y, 4).unwrap();
    assert!(run(&c, 2, None, y4).is_err());
}
