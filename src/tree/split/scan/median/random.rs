//! The random rule of the median search (Extra-Trees under absolute error): one threshold
//! drawn as the sums' rule draws it, scored by the children's errors about their medians,
//! summed over the outputs.

use crate::data::Feature;
use crate::rng::TreeRng;
use crate::tree::criterion::{Criterion, OrderTargets};
use crate::tree::split::draw::{draw_missing_left, draw_threshold};
use crate::tree::split::SearchBufs;
use crate::tree::split::{Cut, NodeCtx};
use crate::tree::{goes_left, Missing};

/// One threshold drawn uniformly in `[lo, hi)` (the draw of
/// [`crate::tree::split::RandomThreshold`], so the RNG stream is the same; `nan`: the node has NaN in
/// the candidate, `lo < hi` bounding the others), scored by the children's errors about
/// their medians. Both medians of an output come from one walk over the node's ranked
/// targets of that output (shared by its candidates), so a candidate costs `O(n)` per
/// output, no sort. A constrained candidate (one output) must keep its children's medians
/// in the node's bounds and ordered by its sign.
#[allow(clippy::too_many_arguments)]
pub(in crate::tree::split) fn random<T: Feature, C: Criterion>(
    xf: &[T],
    ys: OrderTargets<'_>,
    ws: &[f64],
    s: &mut SearchBufs<T>,
    ctx: &NodeCtx<'_, C>,
    (lo, hi, nan): (T, T, bool),
    rng: &mut TreeRng,
) -> Option<Cut> {
    let t = draw_threshold(lo.to_f64(), hi.to_f64(), rng);
    // With NaN at the node, one more draw sends them to one side (`split::missing`).
    let missing = match nan {
        true => Missing::seen(true, draw_missing_left(rng)),
        false => Missing::Unseen,
    };
    let missing_left = missing == Missing::Left;
    let m = &mut s.median;
    m.rank(ys);
    // Side 0 is the left child (`goes_left`), 1 the right.
    m.side.clear();
    let (mut total, mut n_right) = ([0.0; 2], 0);
    for (v, &w) in xf.iter().zip(ws) {
        let side = usize::from(!goes_left(v.to_f64(), t, missing_left));
        m.side.push(side as u8);
        total[side] += w;
        n_right += side;
    }
    let n_left = xf.len() - n_right;
    if !ctx.leaves_fit(n_left, xf.len(), total[0]) {
        return None;
    }
    // The first output (the only one under a constraint) decides admission; the others
    // add their errors.
    let (first, others) = m.outputs[..m.n_outputs].split_first()?;
    let y = first.targets(ys);
    let median = side_medians(&first.by_target, &m.side, y, ws, total);
    if let Some((sign, bounds)) = ctx.constraint() {
        if !bounds.admits_values(sign, median[0], median[1]) {
            return None;
        }
    }
    let mut error = side_errors(&m.side, y, ws, median);
    for r in others {
        let y = r.targets(ys);
        let median = side_medians(&r.by_target, &m.side, y, ws, total);
        let e = side_errors(&m.side, y, ws, median);
        error = [error[0] + e[0], error[1] + e[1]];
    }
    Some(Cut {
        proxy: -(error[0] + error[1]),
        threshold: t,
        n_left: Some(n_left),
        missing,
    })
}

/// `Σ w |y − m_side|` of each side (`side[j]`: 0 left, 1 right) about its `median`.
#[inline(always)]
fn side_errors(side: &[u8], ys: &[f64], ws: &[f64], median: [f64; 2]) -> [f64; 2] {
    let mut error = [0.0; 2];
    for ((&side, &y), &w) in side.iter().zip(ys).zip(ws) {
        let side = usize::from(side);
        error[side] += w * (y - median[side]).abs();
    }
    error
}

/// scikit-learn's weighted median of each side (`side[j]`: 0 left, 1 right) of the rows
/// with targets `ys`, weights `ws` and side weights `total`, from the rows in rank order
/// (`by_target`): the first target whose cumulative weight exceeds half the side's, or the
/// mid-point with the side's previous target when the cumulative weight before it is
/// exactly half. Inlined: called apart, the walk cost +8 % of an Extra-Trees fit (perf).
#[inline(always)]
fn side_medians(
    by_target: &[u32],
    side: &[u8],
    ys: &[f64],
    ws: &[f64],
    total: [f64; 2],
) -> [f64; 2] {
    let half = [0.5 * total[0], 0.5 * total[1]];
    let (mut cumulative, mut last) = ([0.0; 2], [f64::NAN; 2]);
    let mut median: [Option<f64>; 2] = [None, None];
    for &j in by_target {
        let j = j as usize;
        let side = usize::from(side[j]);
        if median[side].is_some() {
            continue;
        }
        let (before, y) = (cumulative[side], ys[j]);
        cumulative[side] += ws[j];
        if cumulative[side] > half[side] {
            median[side] = Some(match before == half[side] && !last[side].is_nan() {
                true => (last[side] + y) / 2.0,
                false => y,
            });
            if median[1 - side].is_some() {
                break;
            }
        }
        last[side] = y;
    }
    // Found unless rounding kept a side's cumulative weight at or below its half.
    [median[0].unwrap_or(last[0]), median[1].unwrap_or(last[1])]
}

#[cfg(test)]
mod tests {
    use crate::tree::criterion::AbsoluteError;
    use crate::tree::split::scan::median::passes::tests::brute;
    use crate::tree::split::scan::median::random::*;

    /// The random rule draws the threshold of the sums' rule and scores it by the
    /// children's errors, medians of whole and fractional weights included.
    #[test]
    fn the_random_rule_scores_the_drawn_threshold() {
        let n = 45;
        let xf: Vec<f64> = (0..n).map(|i| ((i * 29) % 31) as f64 * 0.1).collect();
        let ys: Vec<f64> = (0..n)
            .map(|i| ((i * 7) % 10) as f64 - (i % 4) as f64)
            .collect();
        let crit = AbsoluteError { y: &ys };
        let mut rng = crate::rng::TreeRng::new(8);
        let fractional: Vec<f64> = (0..n).map(|_| 0.1 + rng.unit()).collect();
        for ws in [
            vec![1.0; n],
            (0..n).map(|i| (1 + i % 2) as f64).collect(),
            fractional,
        ] {
            let total = [ws.iter().sum::<f64>()];
            let ctx = NodeCtx {
                crit: &crit,
                total: &total,
                min_samples_leaf: 1,
                min_weight_leaf: 0.0,
                unit_weights: false,
                whole_sums: false,
                mono: None,
                sign: 0,
            };
            let mut s = SearchBufs::<f64>::new(1);
            for seed in 0..20 {
                let (mut a, mut b) = (TreeRng::new(seed), TreeRng::new(seed));
                let cut = random(
                    &xf,
                    OrderTargets::One(&ys),
                    &ws,
                    &mut s,
                    &ctx,
                    (0.0, 3.0, false),
                    &mut a,
                )
                .expect("a cut");
                assert_eq!(cut.threshold, draw_threshold(0.0, 3.0, &mut b));
                let (l, r): (Vec<u32>, Vec<u32>) =
                    (0..n as u32).partition(|&j| xf[j as usize] <= cut.threshold);
                assert_eq!(cut.n_left, Some(l.len()));
                let want = brute(&ys, &ws, &l).0 + brute(&ys, &ws, &r).0;
                assert!(
                    (-cut.proxy - want).abs() < 1e-12,
                    "{} vs {want}",
                    -cut.proxy
                );
            }
        }
    }
}
