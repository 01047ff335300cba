//! Unit tests of the kept bins: subtraction, the parallel and in-place fills, and which
//! children keep bins.

use super::fill::{IN_PLACE_ROWS, PARALLEL_FILL_WORK};
use crate::data::Layout;
use crate::rng::TreeRng;
use crate::tree::criterion::SquaredError;
use crate::tree::split::read::gather::gather;
use crate::tree::split::scan::bins::add_rows;
use crate::tree::split::state::node_bins::*;

/// The bins of `samples` summed directly.
fn direct(
    stack: &mut BinStack,
    x: &Matrix<'_, u8>,
    crit: &SquaredError<'_>,
    rows: (&[u32], &[f64], &[f64]),
    start: usize,
    fs: &[u32],
) -> NodeBins {
    let mut s = SplitBufs::new(rows.0.len(), 3);
    stack.fill(CodeColumns::X(x), crit, &mut s, rows, start, fs)
}

/// A squared-error bin: the weight, `Σ w·y` and the row count.
const STRIDE: usize = 3;

#[test]
fn subtracted_bins_match_the_bins_summed_over_the_rows() {
    let (n, p) = (3000, 4);
    let mut rng = TreeRng::new(7);
    let codes: Vec<u8> = (0..n * p).map(|_| rng.below(40) as u8).collect();
    let x = Matrix::new(&codes, n, p, Layout::ColumnMajor).unwrap();
    let y: Vec<f64> = (0..n).map(|_| rng.unit() * 10.0 - 3.0).collect();
    let crit = SquaredError { y: &y };
    let fs: Vec<u32> = (0..p as u32).collect();
    let mut stack = BinStack::new(&fs, p, STRIDE - 1, 100).unwrap();
    // The node: every row, split on feature 0 at code 12 (the left rows first, each side
    // in its previous order, as the partition leaves them).
    let (mut samples, rest): (Vec<u32>, Vec<u32>) =
        (0..n as u32).partition(|&i| codes[i as usize] <= 12);
    let n_left = samples.len();
    samples.extend(rest);
    let mut ys: Vec<f64> = samples.iter().map(|&i| y[i as usize]).collect();
    let mut ws: Vec<f64> = samples.iter().map(|&i| f64::from(1 + i % 3)).collect();
    let mut s = SplitBufs::new(n, 3);
    let parent = stack.fill(
        CodeColumns::X(&x),
        &crit,
        &mut s,
        (&samples, &ys, &ws),
        10,
        &fs,
    );
    let rows = NodeRows {
        samples: &mut samples[..],
        ys: &mut ys[..],
        ws: &mut ws[..],
    };
    stack.keep_children(
        CodeColumns::X(&x),
        &crit,
        &mut s,
        parent,
        &rows,
        n_left,
        &fs,
        2,
        None,
    );
    let mut left = stack
        .take(10, 10 + n_left, false)
        .expect("left child kept last");
    let mut right = stack
        .take(10 + n_left, 10 + n, false)
        .expect("right child kept");
    assert!(stack.take(0, 1, false).is_none());
    let (l, r) = (0..n_left, n_left..n);
    let rows_of = |r: std::ops::Range<usize>| (&samples[r.clone()], &ys[r.clone()], &ws[r]);
    let mut want_l = direct(&mut stack, &x, &crit, rows_of(l), 10, &fs);
    let mut want_r = direct(&mut stack, &x, &crit, rows_of(r), 10 + n_left, &fs);
    // The smaller child (left: about 13 codes in 40) is summed: identical.
    assert!(n_left < n - n_left);
    for f in 0..p {
        assert_eq!(stack.trimmed(&mut left, f), stack.trimmed(&mut want_l, f));
        assert_eq!(stack.bins_of(&left, f), stack.bins_of(&want_l, f));
        // The larger is subtracted: the same counts and weights (integers), sums to
        // rounding.
        let (lo, hi) = stack.trimmed(&mut want_r, f);
        assert_eq!(stack.trimmed(&mut right, f), (lo, hi));
        let got = &stack.bins_of(&right, f)[lo * STRIDE..(hi + 1) * STRIDE];
        let want = &stack.bins_of(&want_r, f)[lo * STRIDE..(hi + 1) * STRIDE];
        for (b, (g, w)) in got.chunks(STRIDE).zip(want.chunks(STRIDE)).enumerate() {
            assert_eq!((g[0], g[2]), (w[0], w[2]), "feature {f} bin {b}");
            assert!(
                (g[1] - w[1]).abs() <= 1e-9 * (1.0 + w[1].abs()),
                "{g:?} {w:?}"
            );
        }
    }
}

#[test]
fn bins_filled_in_parallel_are_the_sequential_bins_bit_for_bit() {
    // 4 of 6 features over n rows: twice the work from which bins fill in parallel.
    let (n, p) = (PARALLEL_FILL_WORK / 2, 6);
    let mut rng = TreeRng::new(3);
    let codes: Vec<u8> = (0..n * p).map(|_| rng.below(200) as u8).collect();
    let x = Matrix::new(&codes, n, p, Layout::ColumnMajor).unwrap();
    let y: Vec<f64> = (0..n).map(|_| rng.unit() * 1e3 - 7.0).collect();
    let crit = SquaredError { y: &y };
    // Rows in a scrambled order, with weights whose sums round: a different summing
    // order would show in the last bits.
    let samples: Vec<u32> = (0..n as u32).map(|i| (i * 7919) % n as u32).collect();
    let ys: Vec<f64> = samples.iter().map(|&i| y[i as usize]).collect();
    let ws: Vec<f64> = (0..n).map(|_| 0.1 + rng.unit()).collect();
    let all: Vec<u32> = (0..p as u32).collect();
    let fs = [5, 0, 2, 3];
    let rows = (&samples[..], &ys[..], &ws[..]);
    let mut one = BinStack::new(&all, p, STRIDE - 1, 100).unwrap();
    let mut want = direct(&mut one, &x, &crit, rows, 0, &fs);
    let mut many = BinStack::new(&all, p, STRIDE - 1, 100)
        .unwrap()
        .in_parallel();
    let mut got = crate::parallel::install(3, || {
        #[cfg(feature = "parallel")]
        assert_eq!(current_threads(), 3, "the parallel fill is exercised");
        direct(&mut many, &x, &crit, rows, 0, &fs)
    });
    for f in fs.map(|f| f as usize) {
        let (lo, hi) = one.trimmed(&mut want, f);
        assert_eq!(many.trimmed(&mut got, f), (lo, hi));
        let bits = |b: &NodeBins| -> Vec<u64> {
            let codes = &one.bins_of(b, f)[lo * STRIDE..(hi + 1) * STRIDE];
            codes.iter().map(|v| v.to_bits()).collect()
        };
        assert_eq!(bits(&got), bits(&want), "feature {f}");
    }
}

#[test]
fn bins_summed_in_place_are_the_gathered_bins_bit_for_bit() {
    // Nodes of IN_PLACE_ROWS rows or more read their codes in place, IN_PLACE_GROUP
    // features per pass (6 features: a group and a remainder), unit weights counted: the
    // same sums, in the same order, as the gathered codes summed by `add_rows` (as smaller
    // nodes are), on one thread or in parallel over the groups.
    let (n, p) = (8 * IN_PLACE_ROWS, 6);
    let mut rng = TreeRng::new(5);
    let codes: Vec<u8> = (0..n * p).map(|_| 30 + rng.below(90) as u8).collect();
    let x = Matrix::new(&codes, n, p, Layout::ColumnMajor).unwrap();
    let y: Vec<f64> = (0..n).map(|_| rng.unit() * 1e3 - 7.0).collect();
    let crit = SquaredError { y: &y };
    let samples: Vec<u32> = (0..n as u32).filter(|i| i % 5 != 2).collect();
    assert!(samples.len() * p >= PARALLEL_FILL_WORK);
    let ys: Vec<f64> = samples.iter().map(|&i| y[i as usize]).collect();
    let fs: Vec<u32> = (0..p as u32).collect();
    let bits = |b: &[f64]| b.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    for unit in [false, true] {
        let ws: Vec<f64> = match unit {
            true => vec![1.0; samples.len()],
            false => samples.iter().map(|_| 0.1 + rng.unit()).collect(),
        };
        for parallel in [false, true] {
            let mut stack = BinStack::new(&fs, p, STRIDE - 1, 100).unwrap();
            if parallel {
                stack = stack.in_parallel();
            }
            let node = (&samples[..], &ys[..], &ws[..]);
            let mut got =
                crate::parallel::install(2, || direct(&mut stack, &x, &crit, node, 0, &fs));
            for f in 0..p {
                let mut xf = Vec::new();
                let (lo, hi) = gather(&x, f, &samples, &mut xf);
                let (lo, hi) = (usize::from(lo), usize::from(hi));
                assert_eq!(stack.trimmed(&mut got, f), (lo, hi));
                let mut want = vec![0.0; (hi - lo + 1) * STRIDE];
                add_rows(&mut want, lo, &xf, &ys, &ws, &crit);
                let in_place = &stack.bins_of(&got, f)[lo * STRIDE..(hi + 1) * STRIDE];
                let case = format!("feature {f}, unit weights {unit}, parallel {parallel}");
                assert_eq!(bits(in_place), bits(&want), "{case}");
            }
        }
    }
}

#[test]
fn children_too_small_for_bins_keep_none() {
    let codes: Vec<u8> = (0..400).map(|i| (i % 7) as u8).collect();
    let x = Matrix::new(&codes, 400, 1, Layout::ColumnMajor).unwrap();
    let y = vec![1.0; 400];
    let crit = SquaredError { y: &y };
    let mut stack = BinStack::new(&[0], 1, STRIDE - 1, 150).unwrap();
    let mut samples: Vec<u32> = (0..400).collect();
    let (mut ys, mut ws) = (y.clone(), vec![1.0; 400]);
    let mut s = SplitBufs::new(400, 3);
    // How many children of the 400-row node keep bins after a split at `n_left`.
    let mut kept_after = |n_left: usize, split_rows: usize| {
        let cols = CodeColumns::X(&x);
        let parent = stack.fill(cols, &crit, &mut s, (&samples, &ys, &ws), 0, &[0]);
        let rows = NodeRows {
            samples: &mut samples[..],
            ys: &mut ys[..],
            ws: &mut ws[..],
        };
        stack.keep_children(
            cols,
            &crit,
            &mut s,
            parent,
            &rows,
            n_left,
            &[0],
            split_rows,
            None,
        );
        let kept = stack.pending.len();
        stack.pending.clear();
        kept
    };
    for (n_left, kept) in [(100, 1), (300, 1), (200, 2), (150, 1)] {
        assert_eq!(kept_after(n_left, 2), kept, "n_left {n_left}");
    }
    // Children that cannot split (fewer than split_rows) keep none either.
    assert_eq!(kept_after(200, 201), 0);
}
