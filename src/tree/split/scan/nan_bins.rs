//! The histogram search of a candidate whose node rows include missing values: its NaN
//! rows hold the missing-values bin ([`NAN_CODE`], see [`crate::data::Binned`]), and the
//! cuts are those of the exact search's ([`crate::tree::split::scan::missing`]), in the same order, with the
//! same tie rule: every boundary between non-empty non-missing bins with all NaN rows on
//! the right, then on the left, then "non-missing left, missing right" (threshold +∞, kept
//! as such when the codes' thresholds become real ones). A tree grown on one bin per
//! distinct value is therefore the exact splitter's tree wherever the sums are whole.
//!
//! Every histogram candidate source (gathered codes, a node's kept bins, code lists) asks
//! [`nan_in_node`] for the bounds of the non-missing codes and, when the node has NaN,
//! scores the candidate with [`scan_missing`]; a candidate constant on its non-missing
//! codes (or all NaN) is constant, as with the exact search. Code 255 is a missing value
//! only in a column the fit flagged as holding NaN: the others keep 256 value bins, and
//! their searches never come here.

use crate::data::widen;
use crate::data::{Feature, NAN_CODE};
use crate::tree::criterion::Criterion;
use crate::tree::split::scan::bins::{add_rows, scan_dense, N_CODES};
use crate::tree::split::scan::missing::three_way;
use crate::tree::split::scan::rows::Start;
use crate::tree::split::{BestCut, Cut, NodeCtx};

/// The value routing sees for the code `v` of a column whose NaN bin is [`NAN_CODE`]:
/// NaN for that code, the code itself otherwise (the scale of the thresholds while
/// growing).
#[inline(always)]
pub(crate) fn code_value<T: Feature>(v: T) -> f64 {
    match v.code() == usize::from(NAN_CODE) {
        true => f64::NAN,
        false => v.to_f64(),
    }
}

/// The non-missing bounds of a candidate of a flagged column whose node codes run from
/// `lo` to `hi`: `hi` is the missing-values bin when the node has NaN, and then the last
/// non-missing code is `last_present()` (None: every row is missing). Returns `(lo, hi,
/// any_nan)`; `hi <= lo` means the candidate is constant.
#[inline(always)]
pub(crate) fn nan_in_node(
    lo: usize,
    hi: usize,
    last_present: impl FnOnce() -> Option<usize>,
) -> (usize, usize, bool) {
    if hi != usize::from(NAN_CODE) {
        return (lo, hi, false);
    }
    match last_present() {
        Some(top) => (lo, top, true),
        None => (lo, lo, true),
    }
}

/// The bounds of gathered codes `xf` of a flagged column: `(lo, hi, any_nan)` of the
/// non-missing codes (see [`nan_in_node`]).
pub(crate) fn code_bounds<T: Feature>(xf: &[T]) -> (T, T, bool) {
    let nan = usize::from(NAN_CODE);
    let mut it = xf.iter().copied().filter(|v| v.code() != nan);
    let Some(first) = it.next() else {
        return (T::default(), T::default(), !xf.is_empty());
    };
    let (mut lo, mut hi) = (first, first);
    for v in it {
        widen(&mut lo, &mut hi, v);
    }
    let any = xf.iter().any(|v| v.code() == nan);
    (lo, hi, any)
}

/// The best cut of one candidate of a node of `n` rows from its bins: `bins` holds the
/// non-missing codes `lo..=hi` (`stride` = the proxy's sums + row count, as
/// [`crate::tree::split::scan::bins::add_rows`] fills them), `nan` the missing-values bin. The cuts and
/// their order are the exact search's with NaN ([`crate::tree::split::scan::missing`]); empty bins are not
/// cuts. `left` is scratch of the bins' sums' length (`stride - 1`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_missing<C: Criterion>(
    bins: &[f64],
    lo: usize,
    nan: &[f64],
    n: usize,
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
) -> Option<Cut> {
    let k = left.len();
    let stride = k + 1;
    let n_miss = nan[k] as usize;
    let n_bins = bins.len() / stride;
    let pass = |left: &mut [f64], missing_left: bool, bar: f64| {
        let start = match missing_left {
            true => Start {
                rows: n_miss,
                sums: Some(&nan[..k]),
            },
            false => Start::EMPTY,
        };
        // The last non-missing bin is never a cut's left side's top.
        scan_dense::<C, false>((bins, lo, n_bins), n, start, left, ctx, bar)
    };
    // Every non-missing row left, every NaN row right: summed in code order.
    let apart = |left: &mut [f64], bar: f64| {
        let mut scan = BestCut::above(bar);
        left.fill(0.0);
        let mut n_left = 0;
        for stats in bins.chunks_exact(stride).filter(|s| s[k] > 0.0) {
            n_left += stats[k] as usize;
            for (l, h) in left.iter_mut().zip(stats) {
                *l += h;
            }
        }
        if n_miss >= ctx.min_samples_leaf && scan.worth(ctx, n_left, left) {
            scan.offer(ctx, left, f64::INFINITY, n_left);
        }
        scan.cut()
    };
    three_way(left, bar, pass, apart)
}

/// The histogram search of gathered codes `xf` of a flagged column whose node rows include
/// NaN, `lo < hi` being the bounds of the non-missing codes ([`code_bounds`]): the rows
/// are summed into `table` (zero between calls, and left so) by code, then scanned.
#[allow(clippy::too_many_arguments)]
pub(crate) fn search_gathered<T: Feature, C: Criterion>(
    table: &mut Vec<f64>,
    left: &mut [f64],
    xf: &[T],
    (lo, hi): (usize, usize),
    ys: &[C::Y],
    ws: &[f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
) -> Option<Cut> {
    let left = &mut left[..ctx.crit.proxy_len()];
    let stride = left.len() + 1;
    let size = N_CODES * stride;
    if table.len() < size {
        table.resize(size, 0.0);
    }
    add_rows(table, 0, xf, ys, ws, ctx.crit);
    let nan_at = usize::from(NAN_CODE) * stride;
    let (bins, nan) = table.split_at(nan_at);
    let bins = &bins[lo * stride..(hi + 1) * stride];
    let cut = scan_missing(bins, lo, &nan[..stride], xf.len(), left, ctx, bar);
    table[lo * stride..(hi + 1) * stride].fill(0.0);
    table[nan_at..nan_at + stride].fill(0.0);
    cut
}

#[cfg(test)]
mod tests {
    use crate::rng::TreeRng;
    use crate::tree::criterion::{Gini, SquaredError};
    use crate::tree::split::better;
    use crate::tree::split::scan::nan_bins::*;
    use crate::tree::{goes_left, Missing};

    /// The best cut by brute force over the exact search's candidates with NaN, in its
    /// order: each code threshold with NaN right, then left, then (+∞, NaN right); rows
    /// summed in position order, the first best kept.
    fn brute_force<C: Criterion>(
        codes: &[u8],
        ys: &[C::Y],
        ws: &[f64],
        ctx: &NodeCtx<'_, C>,
    ) -> Option<(f64, f64, usize, Missing)> {
        let mut present: Vec<u8> = codes.iter().copied().filter(|&c| c != NAN_CODE).collect();
        present.sort_unstable();
        present.dedup();
        let mut cands: Vec<(f64, bool)> = Vec::new();
        for ml in [false, true] {
            let top = present.len().saturating_sub(1);
            cands.extend(present[..top].iter().map(|&c| (f64::from(c), ml)));
        }
        cands.push((f64::INFINITY, false));
        let mut best: Option<(f64, f64, usize, Missing)> = None;
        for (t, ml) in cands {
            let mut left = vec![0.0; ctx.total.len()];
            let mut n_left = 0;
            for ((&v, &y), &w) in codes.iter().zip(ys).zip(ws) {
                if goes_left(code_value(v), t, ml) {
                    left[0] += w;
                    ctx.crit.add_for_proxy(&mut left, y, w);
                    n_left += 1;
                }
            }
            if !ctx.admissible(n_left, codes.len(), &left) {
                continue;
            }
            let proxy = ctx.crit.proxy(ctx.total, &left);
            if C::allows(proxy) && best.is_none_or(|(b, ..)| better(proxy, b)) {
                best = Some((proxy, t, n_left, Missing::side(ml)));
            }
        }
        best
    }

    fn check<C: Criterion>(crit: &C, ys_of: impl Fn(&mut TreeRng) -> C::Y) {
        let mut rng = TreeRng::new(5);
        let mut checked = 0;
        for trial in 0..300 {
            let n = 2 + rng.below(60);
            let spread = 2 + rng.below(12);
            let p_nan = rng.below(4);
            let codes: Vec<u8> = (0..n)
                .map(|_| match rng.below(4) < p_nan {
                    true => NAN_CODE,
                    false => rng.below(spread) as u8,
                })
                .collect();
            let ys: Vec<C::Y> = (0..n).map(|_| ys_of(&mut rng)).collect();
            let ws: Vec<f64> = (0..n).map(|_| (1 + rng.below(3)) as f64).collect();
            let mut total = vec![0.0; crit.stats_len()];
            for (&y, &w) in ys.iter().zip(&ws) {
                total[0] += w;
                crit.add_for_proxy(&mut total, y, w);
            }
            let ctx = NodeCtx {
                crit,
                total: &total,
                min_samples_leaf: 1 + trial % 3,
                min_weight_leaf: (trial % 4) as f64,
                unit_weights: false,
                whole_sums: true,
                mono: None,
                sign: 0,
            };
            let (lo, hi, any) = code_bounds(&codes);
            let (lo, hi) = (usize::from(lo), usize::from(hi));
            if !any || hi <= lo {
                continue;
            }
            let stride = crit.proxy_len() + 1;
            let mut table = vec![0.0; 256 * stride];
            add_rows(&mut table, 0, &codes, &ys, &ws, crit);
            let nan = &table[255 * stride..];
            let bins = &table[lo * stride..(hi + 1) * stride];
            let mut left = vec![0.0; crit.proxy_len()];
            let got = scan_missing(bins, lo, nan, n, &mut left, &ctx, f64::NEG_INFINITY)
                .map(|c| (c.proxy, c.threshold, c.n_left.unwrap_or(0), c.missing));
            let want = brute_force(&codes, &ys, &ws, &ctx);
            assert_eq!(got, want, "trial {trial}");
            checked += usize::from(want.is_some());
        }
        assert!(checked > 100, "{checked} trials found a cut");
    }

    #[test]
    fn missing_bin_scans_score_the_exact_searchs_cuts_in_its_order() {
        let none: Vec<u32> = Vec::new();
        check(&Gini::new(&none, 3), |r| r.below(3) as u32);
        check(&SquaredError { y: &[] }, |r| r.below(9) as f64 - 3.0);
    }
}
