//! Unit tests of the losses (against closed forms and finite differences) and of the loop's
//! invariants: thread-count independence, exact warm starts, model bytes.

use std::sync::atomic::{AtomicBool, AtomicUsize};

use super::loss::{percentile_linear, weighted_percentile, RoundLoss};
use super::{BoostParams, Booster, Loss};
use crate::data::Levels;
use crate::params::{CriterionKind, FeatureCount, ForestParams};
use crate::{Layout, Matrix};

#[test]
fn weighted_percentile_is_the_inverted_cdf() {
    let v = [4.0, 1.0, 3.0, 2.0];
    // Cumulative weights 1 2 3 4 of 1 2 3 4: rank 50 reaches 2 exactly at value 2.
    assert_eq!(weighted_percentile(&v, &[1.0; 4], 50.0), 2.0);
    assert_eq!(weighted_percentile(&v, &[1.0; 4], 50.1), 3.0);
    assert_eq!(
        weighted_percentile(&[1.0, 2.0, 3.0, 4.0, 5.0], &[1.0; 5], 50.0),
        3.0
    );
    // Value 4 carries 7 of the 10 units of weight.
    assert_eq!(weighted_percentile(&v, &[7.0, 1.0, 1.0, 1.0], 40.0), 4.0);
    // Rank 0 skips leading zero weights.
    assert_eq!(weighted_percentile(&v, &[1.0, 0.0, 1.0, 1.0], 0.0), 2.0);
}

#[test]
fn linear_percentile_interpolates_as_numpy() {
    let v = [10.0, 0.0, 20.0, 30.0];
    assert_eq!(percentile_linear(&v, 50.0), 15.0);
    assert_eq!(percentile_linear(&v, 90.0), 27.0);
    assert_eq!(percentile_linear(&v, 100.0), 30.0);
}

/// `−∂loss/∂raw_k` by central differences.
fn numeric_neg_gradient(round: &RoundLoss, y: f64, raw: &[f64], k: usize) -> f64 {
    let h = 1e-6;
    let mut p = vec![0.0; raw.len()];
    let (mut up, mut down) = (raw.to_vec(), raw.to_vec());
    up[k] += h;
    down[k] -= h;
    -(round.loss(y, &up, &mut p) - round.loss(y, &down, &mut p)) / (2.0 * h)
}

#[test]
fn negative_gradients_are_the_derivatives_of_the_losses() {
    let cases: [(Loss, usize, f64); 6] = [
        (Loss::SquaredError, 1, 0.0),
        (Loss::AbsoluteError, 1, 0.0),
        (Loss::Huber { alpha: 0.9 }, 1, 0.8),
        (Loss::Quantile { alpha: 0.3 }, 1, 0.0),
        (Loss::LogLoss, 1, 0.0),
        (Loss::Exponential, 1, 0.0),
    ];
    let mut p = vec![0.0; 3];
    for (loss, k, delta) in cases {
        let round = RoundLoss { loss, k, delta };
        for (y, r) in [(1.0, 0.3), (0.0, -0.7), (1.0, -1.2), (0.0, 0.4)] {
            let y = if loss.is_classification() {
                y
            } else {
                y * 2.5 - 0.4
            };
            let got = round.neg_gradient(y, &[r], 0, &mut p);
            let want = numeric_neg_gradient(&round, y, &[r], 0);
            assert!(
                (got - want).abs() < 1e-6,
                "{loss:?} y={y} r={r}: {got} vs {want}"
            );
        }
    }
    let round = RoundLoss {
        loss: Loss::LogLoss,
        k: 3,
        delta: 0.0,
    };
    let raw = [0.2, -0.5, 1.1];
    for y in [0.0, 1.0, 2.0] {
        for k in 0..3 {
            let got = round.neg_gradient(y, &raw, k, &mut p);
            let want = numeric_neg_gradient(&round, y, &raw, k);
            assert!((got - want).abs() < 1e-6, "multinomial y={y} k={k}");
        }
    }
}

fn data() -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (n, p) = (120, 4);
    let mut state = 7u64;
    let mut next = move || {
        state = crate::rng::splitmix64(state);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let x: Vec<f64> = (0..n * p).map(|_| next() * 4.0 - 2.0).collect();
    let y: Vec<f64> = (0..n)
        .map(|i| x[i * p] * 2.0 + (x[i * p + 1] * 3.0).sin())
        .collect();
    let classes: Vec<f64> = y
        .iter()
        .map(|&v| f64::from(u8::from(v > 0.5) + u8::from(v > 2.0)))
        .collect();
    (x, y, classes)
}

fn params(loss: Loss, n_estimators: usize) -> BoostParams {
    let mut tree = ForestParams::random_forest(CriterionKind::SquaredError);
    tree.max_depth = Some(3);
    tree.max_features = FeatureCount::Count(2);
    tree.seed = 9;
    BoostParams {
        loss,
        learning_rate: 0.2,
        n_estimators,
        subsample: 0.7,
        init_zero: false,
        n_iter_no_change: None,
        tol: 1e-4,
        tree,
    }
}

fn fit(p: &BoostParams, y: &[f64], n_classes: usize, previous: Option<&Booster>) -> Booster {
    let (x, _, _) = data();
    let m = Matrix::new(&x, 120, 4, Layout::RowMajor).unwrap();
    let (stop, done) = (AtomicBool::new(false), AtomicUsize::new(0));
    Booster::fit(p, m, y, n_classes, None, None, None, previous, &stop, &done).unwrap()
}

#[test]
fn the_model_does_not_depend_on_the_thread_count() {
    let (_, y, classes) = data();
    for (loss, target, n_classes) in [
        (Loss::Huber { alpha: 0.8 }, &y, 0),
        (Loss::LogLoss, &classes, 3),
    ] {
        let p = params(loss, 6);
        let one = crate::parallel::install(1, || fit(&p, target, n_classes, None));
        let three = crate::parallel::install(3, || fit(&p, target, n_classes, None));
        assert_eq!(one, three);
        assert_eq!(one.trees().len(), 6 * if n_classes == 3 { 3 } else { 1 });
    }
}

#[test]
fn a_warm_start_continues_the_same_sequence() {
    let (_, _, classes) = data();
    let first = fit(&params(Loss::LogLoss, 3), &classes, 3, None);
    let more = fit(&params(Loss::LogLoss, 7), &classes, 3, Some(&first));
    let once = fit(&params(Loss::LogLoss, 7), &classes, 3, None);
    assert_eq!(more, once);
    assert_eq!(once.oob_scores().len(), 7);
}

#[test]
fn a_warm_start_may_change_the_size_rules_and_a_subsample_below_one() {
    let (_, y, _) = data();
    let first = fit(&params(Loss::SquaredError, 3), &y, 0, None);
    let mut next = params(Loss::SquaredError, 6);
    next.subsample = 0.4;
    next.tree.max_depth = Some(1);
    let more = fit(&next, &y, 0, Some(&first));
    assert_eq!(more.round_subsample, [0.7, 0.7, 0.7, 0.4, 0.4, 0.4]);
    assert_eq!(more.trees[..3], first.trees[..3]);
    assert!(more.trees[3..].iter().all(|t| t.max_depth() <= 1));
    // Each round's rows are drawn again as the fit drew them: the out-of-bag losses agree.
    let (x, _, _) = data();
    let m = Matrix::new(&x, 120, 4, Layout::RowMajor).unwrap();
    let never = AtomicBool::new(false);
    let res = more
        .oob_permutation_importance_until(m, &y, None, None, 1, 3, &never)
        .unwrap();
    assert_eq!(res.oob_loss, more.oob_scores());
    // Crossing 1 would leave rounds without out-of-bag rows: refused.
    let mut every = params(Loss::SquaredError, 6);
    every.subsample = 1.0;
    let (stop, done) = (AtomicBool::new(false), AtomicUsize::new(0));
    let got = Booster::fit(
        &every,
        m,
        &y,
        0,
        None,
        None,
        None,
        Some(&first),
        &stop,
        &done,
    );
    assert!(got.is_err());
}

#[cfg(feature = "serde")]
#[test]
fn a_changed_subsample_is_written_as_version_2_and_one_subsample_as_version_1() {
    let (_, y, _) = data();
    let first = fit(&params(Loss::SquaredError, 3), &y, 0, None);
    let bytes = first.to_bytes().unwrap();
    assert_eq!(bytes[4..6], 1u16.to_le_bytes());
    let mut next = params(Loss::SquaredError, 5);
    next.subsample = 0.5;
    let more = fit(&next, &y, 0, Some(&first));
    let bytes = more.to_bytes().unwrap();
    assert_eq!(bytes[4..6], 2u16.to_le_bytes());
    assert_eq!(Booster::from_bytes(&bytes).unwrap(), more);
}

#[test]
fn stopping_is_reported() {
    let (x, y, _) = data();
    let m = Matrix::new(&x, 120, 4, Layout::RowMajor).unwrap();
    let (stop, done) = (AtomicBool::new(true), AtomicUsize::new(0));
    let p = params(Loss::SquaredError, 5);
    let got = Booster::fit(&p, m, &y, 0, None, None, None, None, &stop, &done);
    assert!(matches!(got, Err(crate::ForestError::Stopped)));
}

#[cfg(feature = "serde")]
#[test]
fn model_bytes_round_trip_and_refuse_damage() {
    let (_, _, classes) = data();
    let b = fit(&params(Loss::LogLoss, 4), &classes, 3, None);
    let bytes = b.to_bytes().unwrap();
    assert_eq!(Booster::from_bytes(&bytes).unwrap(), b);
    for cut in [0, 10, 25, bytes.len() - 1] {
        assert!(Booster::from_bytes(&bytes[..cut]).is_err());
    }
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x40;
    assert!(Booster::from_bytes(&flipped).is_err());
    // Sealed with a valid checksum, a NaN or infinite leaf value is still refused.
    for bad in [f64::NAN, f64::INFINITY] {
        let mut lying = b.clone();
        lying.leaf_values[1][0] = bad;
        let err = Booster::from_bytes(&lying.to_bytes().unwrap()).unwrap_err();
        assert!(matches!(err, crate::ForestError::Decode(_)), "{err}");
    }
}

#[test]
fn best_first_histogram_trees_keep_bins_without_changing_the_tree() {
    // The booster's trees keep node bins in best-first growth (subtraction); the forests'
    // search gathers every node. On continuous targets the two grow the same tree. With
    // 20 000 rows the large nodes are split from kept bins and the small ones from lists.
    let (n, p) = (20_000, 6);
    let mut state = 3u64;
    let mut next = move || {
        state = crate::rng::splitmix64(state);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let x: Vec<f64> = (0..n * p).map(|_| next()).collect();
    let y: Vec<f64> = (0..n)
        .map(|i| (x[i * p] * 6.0).sin() + x[i * p + 1] * x[i * p + 2] + 0.1 * next())
        .collect();
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    // Each tree reuses the bins buffers of the trees before it.
    let spare = crate::tree::split::SpareBins::default();
    let never = AtomicBool::new(false);
    for leaves in [2, 9, 31, 200] {
        let mut params = ForestParams::random_forest(CriterionKind::SquaredError);
        params.splitter = crate::SplitterKind::Histogram { max_bins: 64 };
        params.bootstrap = false;
        params.max_features = FeatureCount::All;
        params.max_leaf_nodes = Some(leaves);
        let targets = crate::Targets::regression(&y).unwrap();
        let session = crate::FitSession::new(&params, m, targets, None).unwrap();
        // On more than one thread, the children of a node are scanned as their bins are
        // kept, in parallel, once the node is split.
        for threads in [1, 3] {
            let grow = || {
                session.grow_on(
                    &y,
                    (0..n as u32).collect(),
                    vec![1.0; n],
                    0,
                    (&spare, &never),
                )
            };
            let (with_bins, _) = crate::parallel::install(threads, grow);
            let case = format!("max_leaf_nodes = {leaves}, {threads} threads");
            assert_eq!(with_bins, session.fit_tree(0), "{case}");
            assert_eq!(with_bins.n_leaves(), leaves);
        }
    }
    // A set stop flag (Ctrl-C in the round) ends the tree at once: every node left is a
    // leaf, depth-first and best-first alike.
    let stopped = AtomicBool::new(true);
    for leaves in [None, Some(31)] {
        let mut params = ForestParams::random_forest(CriterionKind::SquaredError);
        (params.bootstrap, params.max_leaf_nodes) = (false, leaves);
        let targets = crate::Targets::regression(&y).unwrap();
        let session = crate::FitSession::new(&params, m, targets, None).unwrap();
        let rows = (0..n as u32).collect();
        let (tree, _) = session.grow_on(&y, rows, vec![1.0; n], 0, (&spare, &stopped));
        assert_eq!(tree.n_leaves(), 1);
    }
}

#[test]
fn grown_rows_come_back_leaf_by_leaf() {
    let never = AtomicBool::new(false);
    // The booster reads each row's leaf from the rows as growth left them: each leaf's
    // rows, in `leaves_in_order`, are those that walk to it. Exact (coded and NaN columns)
    // and histogram trees, depth-first and best-first, pruned, on a subset of the rows.
    let (n, p) = (3_000, 6);
    let (x, y, _) = wide_data(n, p);
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    let rows: Vec<u32> = (0..n as u32).filter(|i| i % 7 != 3).collect();
    let splitters = [
        crate::SplitterKind::Best,
        crate::SplitterKind::Histogram { max_bins: 64 },
    ];
    for splitter in splitters {
        for (max_depth, leaves, ccp_alpha) in [(3, None, 0.0), (12, Some(40), 0.0), (8, None, 0.02)]
        {
            let mut params = ForestParams::random_forest(CriterionKind::SquaredError);
            (params.splitter, params.bootstrap) = (splitter, false);
            params.max_features = FeatureCount::All;
            (params.max_depth, params.max_leaf_nodes) = (Some(max_depth), leaves);
            params.ccp_alpha = ccp_alpha;
            let targets = crate::Targets::regression(&y).unwrap();
            let session = crate::FitSession::new(&params, m, targets, None).unwrap();
            let ws = vec![1.0; rows.len()];
            let (tree, by_leaf) =
                session.grow_on(&y, rows.clone(), ws, 0, (&Default::default(), &never));
            let mut rest = &by_leaf[..];
            let mut n_leaves = 0;
            for (slot, count) in tree.leaves_in_order() {
                let (mine, tail) = rest.split_at(count);
                for &i in mine {
                    assert_eq!(
                        tree.leaf_slot(tree.leaf(&m, i as usize)),
                        slot,
                        "{splitter:?}"
                    );
                }
                (rest, n_leaves) = (tail, n_leaves + 1);
            }
            assert!(
                rest.is_empty() && n_leaves > 3,
                "{splitter:?} depth {max_depth}"
            );
            let mut sorted = by_leaf.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, rows);
        }
    }
}

#[test]
fn ranked_trees_are_the_sorted_search_trees() {
    // A booster's depth-first exact trees read ranked columns from lists partitioned at
    // each split; a forest's session sorts each node's values. The same rows in the same
    // (value, row) order: the same trees, bit for bit. Columns with ties (more levels than
    // byte or wide codes take) and without, a column of byte codes (which the forest
    // orders by counting), every row or a subset, real weights, K = p and
    // K = p/2 (below it, nothing is listed), leaves and depths, 1 and 3 threads.
    let (n, p) = (2_500, 6);
    let mut state = 5u64;
    let mut next = move || {
        state = crate::rng::splitmix64(state);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut x = vec![0.0; n * p];
    for (k, v) in x.iter_mut().enumerate() {
        *v = match k % p {
            1 => (next() * 900.0).floor() / 7.0,
            2 => (next() * 5.0).floor() * 0.3,
            3 => -(next() * 2000.0).floor(),
            _ => next() * 4.0 - 2.0,
        };
    }
    let y: Vec<f64> = (0..n)
        .map(|i| {
            (x[i * p] * 3.0).sin()
                + x[i * p + 1] * 0.01
                + x[i * p + 2]
                + x[i * p + 3] * 0.002
                + next()
        })
        .collect();
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    let every: Vec<u32> = (0..n as u32).collect();
    let some: Vec<u32> = (0..n as u32).filter(|i| i % 5 != 2).collect();
    let spare = crate::tree::split::SpareBins::default();
    let never = AtomicBool::new(false);
    for (max_depth, min_leaf, max_features) in [(3, 1, 6), (7, 3, 3), (40, 1, 6), (5, 20, 4)] {
        let mut params = ForestParams::random_forest(CriterionKind::SquaredError);
        (params.bootstrap, params.max_depth) = (false, Some(max_depth));
        params.min_samples_leaf = min_leaf;
        params.max_features = FeatureCount::Count(max_features);
        let booster = crate::FitSession::for_booster(&params, m, &y, None).unwrap();
        assert!(booster.levels().and_then(Levels::ranks).is_some());
        let targets = crate::Targets::regression(&y).unwrap();
        let forest = crate::FitSession::new(&params, m, targets, None).unwrap();
        assert!(forest.levels().and_then(Levels::ranks).is_none());
        for (rows, index) in [(&every, 0), (&some, 1), (&some, 2)] {
            for threads in [1, 3] {
                let ws: Vec<f64> = rows.iter().map(|&i| 0.5 + f64::from(i % 3)).collect();
                let grow = |s: &crate::FitSession<'_, f64>| {
                    s.grow_on(&y, rows.clone(), ws.clone(), index, (&spare, &never))
                };
                let ranked = crate::parallel::install(threads, || grow(&booster));
                let sorted = crate::parallel::install(threads, || grow(&forest));
                let case = format!("depth {max_depth} leaf {min_leaf} K {max_features}");
                // (Not assert_eq: a tree and its rows print thousands of lines.)
                let rows = rows.len();
                assert!(ranked == sorted, "{case}, {rows} rows, {threads} threads");
                assert!(ranked.0.n_leaves() > 4, "{case}");
            }
        }
    }
}

/// Rows enough for the hist search's parallel fill: a continuous column, one with NaN, one
/// of 7 integer codes, one of 600 levels (wide codes), and noise columns.
fn wide_data(n: usize, p: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut state = 11u64;
    let mut next = move || {
        state = crate::rng::splitmix64(state);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut x = vec![0.0; n * p];
    for i in 0..n {
        let row = &mut x[i * p..(i + 1) * p];
        for (j, v) in row.iter_mut().enumerate() {
            *v = match j {
                1 if next() < 0.1 => f64::NAN,
                2 => (next() * 7.0).floor(),
                3 => (next() * 600.0).floor() / 10.0,
                _ => next() * 4.0 - 2.0,
            };
        }
    }
    let y: Vec<f64> = (0..n)
        .map(|i| {
            let r = &x[i * p..(i + 1) * p];
            let nan_part = if r[1].is_nan() { 1.5 } else { r[1] };
            r[0] * 2.0 + nan_part + (r[2] - 3.0).abs() + (r[3] * 0.3).sin() + next()
        })
        .collect();
    let classes: Vec<f64> = y
        .iter()
        .map(|&v| f64::from(u8::from(v > 3.0) + u8::from(v > 5.0)))
        .collect();
    (x, y, classes)
}

#[test]
fn the_model_bytes_do_not_depend_on_the_thread_count() {
    // Rounds, class trees and large hist nodes run in parallel; every reduction is in a
    // fixed order, so the model of one thread is kept bit for bit.
    let (n, p) = (6000, 7);
    let (x, y, classes) = wide_data(n, p);
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    let cases = [
        (Loss::SquaredError, &y, 0, 1.0, FeatureCount::All),
        (
            Loss::Huber { alpha: 0.8 },
            &y,
            0,
            0.7,
            FeatureCount::Count(4),
        ),
        (Loss::Quantile { alpha: 0.3 }, &y, 0, 0.8, FeatureCount::All),
        (Loss::LogLoss, &classes, 3, 0.6, FeatureCount::Count(5)),
    ];
    let growths = [None, Some(9)];
    let splitters = [
        crate::SplitterKind::Best,
        crate::SplitterKind::Histogram { max_bins: 255 },
    ];
    let settings = growths.into_iter().flat_map(|l| splitters.map(|s| (l, s)));
    for ((loss, target, n_classes, subsample, max_features), (leaves, splitter)) in cases
        .into_iter()
        .flat_map(|case| settings.clone().map(move |setting| (case, setting)))
    {
        let mut bp = params(loss, 4);
        bp.tree.splitter = splitter;
        bp.subsample = subsample;
        bp.tree.max_features = max_features;
        // Depth-first, or best-first (its nodes' children kept once they are split).
        if leaves.is_some() {
            (bp.tree.max_depth, bp.tree.max_leaf_nodes) = (None, leaves);
        }
        let run = |threads: usize| {
            crate::parallel::install(threads, || {
                let (stop, done) = (AtomicBool::new(false), AtomicUsize::new(0));
                let b = Booster::fit(
                    &bp, m, target, n_classes, None, None, None, None, &stop, &done,
                );
                b.unwrap()
            })
        };
        let one = run(1);
        assert!(
            one.trees()
                .iter()
                .any(|t| t.n_leaves() == leaves.unwrap_or(8)),
            "{loss:?} {splitter:?}: depth-3 trees or {leaves:?} leaves"
        );
        for threads in [2, 4] {
            assert!(
                run(threads) == one,
                "{loss:?} {splitter:?} {leaves:?} leaves: {threads} threads changed the model"
            );
        }
    }
}

#[test]
fn a_monitor_ends_the_fit_after_the_round_it_returns_true() {
    // scikit-learn's monitor(i, est, locals()): called after round i with its i + 1
    // rounds; True keeps those rounds and ends the fit.
    let (x, y, _) = data();
    let m = Matrix::new(&x, 120, 4, Layout::RowMajor).unwrap();
    let seen = std::sync::Mutex::new(Vec::new());
    let monitor = |i: usize, b: &Booster| {
        seen.lock()
            .unwrap()
            .push((i, b.n_rounds(), b.train_score().len()));
        i == 3
    };
    let (stop, done) = (AtomicBool::new(false), AtomicUsize::new(0));
    let control = super::Control {
        stop: &stop,
        done: &done,
        monitor: Some(&monitor),
    };
    let p = params(Loss::Huber { alpha: 0.8 }, 9);
    let stopped = Booster::fit_controlled(&p, m, &y, 0, None, None, None, None, control).unwrap();
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen, (0..4).map(|i| (i, i + 1, i + 1)).collect::<Vec<_>>());
    let four = fit(&params(Loss::Huber { alpha: 0.8 }, 4), &y, 0, None);
    assert_eq!(stopped.n_rounds(), 4);
    assert_eq!(stopped.trees(), four.trees());
    assert_eq!(stopped.leaf_values, four.leaf_values);
    assert_eq!(stopped.train_score(), four.train_score());
    assert_eq!(stopped.oob_scores(), four.oob_scores());
}
