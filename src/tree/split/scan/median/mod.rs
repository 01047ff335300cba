//! The order-statistic split search of the absolute-error criteria: the exact and random
//! rules hand it a candidate when [`Criterion::order_statistic`] gives the node's targets
//! ([`OrderTargets`], one output or several). A cut is ranked by the proxy
//! `−Σ_k (AE_{L,k} + AE_{R,k})`, where `AE = Σ w |y − m|` about a child's weighted median `m`
//! of output `k` (the node's total `AE` is the same for every cut; scikit-learn's proxy
//! divides this sum by the number of outputs).
//!
//! The exact rule finds scikit-learn's cuts (1.8+, `_criterion.pyx::MAE`) by other means:
//! the node's targets are ranked once per output ([`passes`]), and the error of every
//! prefix of the rows in the order of the candidate's values comes from the pinball
//! identity. scikit-learn adds the rows one at a time to a Fenwick tree over the ranks and
//! descends it for the median (`O(log n)` each); here the ranks present form a linked
//! list from which the rows are *deleted* from the other end, each deletion `O(1)`, so a
//! candidate costs its sort and `O(n)` per output (measured: the passes were 3/4 of a fit
//! with the Fenwick tree, see BENCHMARKS.md). A second pass gives every suffix's error.
//! The random rule scores its one threshold by a walk over the node's ranks (`O(n)` per
//! output, [`random()`]). A candidate with NaN at the node is scanned as in `split::missing`
//! ([`best_with_missing`]: NaN rows last, then first, in the row order).
//!
//! Monotonic constraints (one output) compare the children's medians, as scikit-learn's
//! `MAE.check_monotonicity`: the passes keep every prefix's and suffix's median for a
//! constrained candidate only, so a free candidate, or an unconstrained tree, scans as
//! without constraints.
//!
//! Invariant: the sums below the median are kept by additions and subtractions, so the
//! errors agree with scikit-learn's to rounding (about `√n ε` of the node's sums), far
//! inside the relative 1e-12 under which two cuts tie. With unit weights cuts of one
//! feature often tie exactly (the error is piecewise linear in the rows moved): the first
//! wins, where scikit-learn's choice follows its rounding.

mod passes;
mod random;

pub(in crate::tree::split) use self::random::random;

pub(crate) use self::passes::MedianBufs;
use crate::data::midpoint;
use crate::data::sort::sort_packed;
use crate::data::{Feature, Packed};
use crate::tree::criterion::{Criterion, OrderTargets};
use crate::tree::monotone::Bounds;
use crate::tree::split::SearchBufs;
use crate::tree::split::{better, Cut, NodeCtx};
use crate::tree::Missing;

impl MedianBufs {
    /// The passes of `order` ([`MedianBufs::errors`]), with the medians when the candidate
    /// is constrained.
    fn pass<C: Criterion>(&mut self, ys: OrderTargets<'_>, ws: &[f64], ctx: &NodeCtx<'_, C>) {
        match ctx.constraint() {
            Some(_) => self.errors::<true>(ys, ws),
            None => self.errors::<false>(ys, ws),
        }
    }

    /// Scores the cut after `order[k]`, for every `k` in `cuts` where the candidate's
    /// value grows to `order[k + 1]`'s, by `−(AE_L + AE_R)`, and keeps it in `best` if
    /// better (ties keep the earlier); `missing` is where the NaN rows went. A constrained
    /// candidate's cuts must keep its constraint ([`MedianBufs::monotone`]); a free one's
    /// scan has no test of it.
    fn scan<T: Feature, C: Criterion>(
        &self,
        xf: &[T],
        ctx: &NodeCtx<'_, C>,
        cuts: std::ops::Range<usize>,
        missing: Missing,
        best: &mut Option<Cut>,
    ) {
        match ctx.constraint() {
            None => self.scan_admitted(xf, ctx, cuts, missing, best, |_| true),
            constraint => {
                let admits = |k| self.monotone(constraint, k);
                self.scan_admitted(xf, ctx, cuts, missing, best, admits)
            }
        }
    }

    /// [`MedianBufs::scan`] of the cuts `k` that `admits(k)`.
    #[inline(always)]
    fn scan_admitted<T: Feature, C: Criterion>(
        &self,
        xf: &[T],
        ctx: &NodeCtx<'_, C>,
        cuts: std::ops::Range<usize>,
        missing: Missing,
        best: &mut Option<Cut>,
        admits: impl Fn(usize) -> bool,
    ) {
        let (n, total) = (self.order.len(), ctx.total[0]);
        for k in cuts {
            let (j, next) = (self.order[k] as usize, self.order[k + 1] as usize);
            let (v, w) = (xf[j].to_f64(), xf[next].to_f64());
            let (n_left, wl) = (k + 1, self.sums[0][k].0);
            if w <= v
                || n_left < ctx.min_samples_leaf
                || n - n_left < ctx.min_samples_leaf
                || wl < ctx.min_weight_leaf
                || total - wl < ctx.min_weight_leaf
                || !admits(k)
            {
                continue;
            }
            let proxy = -(self.prefix[k] + self.suffix[k + 1]);
            if best.is_none_or(|b| better(proxy, b.proxy)) {
                *best = Some(Cut {
                    proxy,
                    threshold: midpoint(v, w),
                    n_left: Some(n_left),
                    missing,
                });
            }
        }
    }

    /// Whether the cut after `order[k]` keeps the candidate's `constraint` (always when
    /// free): the medians of `order[..=k]` and `order[k + 1..]` in the node's bounds and
    /// ordered by the sign.
    #[inline(always)]
    fn monotone(&self, constraint: Option<(i8, Bounds)>, k: usize) -> bool {
        constraint.is_none_or(|(sign, bounds)| {
            bounds.admits_values(sign, self.medians[0][k], self.medians[1][k + 1])
        })
    }
}

/// The exact rule: the best cut between consecutive distinct values of the candidate's
/// gathered values `xf`, for rows with targets `ys` and weights `ws`.
pub(in crate::tree::split) fn best<T: Feature, C: Criterion>(
    xf: &[T],
    ys: OrderTargets<'_>,
    ws: &[f64],
    s: &mut SearchBufs<T>,
    ctx: &NodeCtx<'_, C>,
) -> Option<Cut> {
    sort_present(xf, s);
    let m = &mut s.median;
    m.order.clear();
    m.order.extend(s.packed.iter().map(|p| p.position()));
    m.rank(ys);
    m.pass(ys, ws, ctx);
    let mut best = None;
    m.scan(
        xf,
        ctx,
        0..xf.len().saturating_sub(1),
        Missing::Unseen,
        &mut best,
    );
    best
}

/// The exact rule of a candidate with NaN at the node, in the order of `split::missing`
/// (scikit-learn's): the cuts with every NaN row on the right, then on the left, then
/// "non-missing left, missing right" (threshold `+∞`); ties keep the first.
pub(in crate::tree::split) fn best_with_missing<T: Feature, C: Criterion>(
    xf: &[T],
    ys: OrderTargets<'_>,
    ws: &[f64],
    s: &mut SearchBufs<T>,
    ctx: &NodeCtx<'_, C>,
) -> Option<Cut> {
    sort_present(xf, s);
    let (n, present) = (xf.len(), s.packed.len());
    let n_miss = n - present;
    let m = &mut s.median;
    m.rank(ys);
    let missing = (0..n as u32).filter(|&k| xf[k as usize].to_f64().is_nan());
    let mut best = None;
    // NaN rows last: the cuts with NaN right, and the cut before the first NaN row.
    m.order.clear();
    m.order.extend(s.packed.iter().map(|p| p.position()));
    m.order.extend(missing.clone());
    m.pass(ys, ws, ctx);
    let cuts = 0..present.saturating_sub(1);
    m.scan(xf, ctx, cuts, Missing::Right, &mut best);
    let wl = m.sums[0][present.max(1) - 1].0;
    let apart = (present >= ctx.min_samples_leaf.max(1)
        && n_miss >= ctx.min_samples_leaf
        && wl >= ctx.min_weight_leaf
        && ctx.total[0] - wl >= ctx.min_weight_leaf
        && m.monotone(ctx.constraint(), present - 1))
    .then(|| Cut {
        proxy: -(m.prefix[present - 1] + m.suffix[present]),
        threshold: f64::INFINITY,
        n_left: Some(present),
        missing: Missing::Right,
    });
    // NaN rows first: the cuts with NaN left.
    m.order.clear();
    m.order.extend(missing);
    m.order.extend(s.packed.iter().map(|p| p.position()));
    m.pass(ys, ws, ctx);
    let cuts = n_miss..(n_miss + present).saturating_sub(1);
    m.scan(xf, ctx, cuts, Missing::Left, &mut best);
    if let Some(c) = apart {
        if best.is_none_or(|b| better(c.proxy, b.proxy)) {
            best = Some(c);
        }
    }
    best
}

/// The candidate's non-missing values sorted into `s.packed` (with their positions).
fn sort_present<T: Feature>(xf: &[T], s: &mut SearchBufs<T>) {
    s.packed.clear();
    let present = xf.iter().enumerate().filter(|(_, v)| !v.to_f64().is_nan());
    s.packed.extend(present.map(|(k, v)| v.pack(k as u32)));
    sort_packed(&mut s.packed, &mut s.radix);
}

#[cfg(test)]
mod tests {
    use crate::tree::criterion::AbsoluteError;
    use crate::tree::split::scan::median::passes::tests::brute;
    use crate::tree::split::scan::median::*;

    /// The exact rule's cut is the one of least total error among all cuts between
    /// distinct values, found by brute force.
    #[test]
    fn the_exact_rule_finds_the_least_error_cut() {
        let n = 60;
        let xf: Vec<f64> = (0..n).map(|i| ((i * 37) % 23) as f64).collect();
        let ys: Vec<f64> = (0..n)
            .map(|i| ((i * 13) % 17) as f64 + if i % 23 < 9 { 10.0 } else { 0.0 })
            .collect();
        let ws: Vec<f64> = (0..n).map(|i| 0.5 + (i % 4) as f64 * 0.75).collect();
        let crit = AbsoluteError { y: &ys };
        let total = [ws.iter().sum::<f64>()];
        let ctx = NodeCtx {
            crit: &crit,
            total: &total,
            min_samples_leaf: 3,
            min_weight_leaf: 0.0,
            unit_weights: false,
            whole_sums: false,
            mono: None,
            sign: 0,
        };
        let mut s = SearchBufs::<f64>::new(1);
        let cut = best(&xf, OrderTargets::One(&ys), &ws, &mut s, &ctx).expect("a cut");
        let mut want = (f64::INFINITY, 0.0);
        let mut values = xf.clone();
        values.sort_by(f64::total_cmp);
        values.dedup();
        for pair in values.windows(2) {
            let t = midpoint(pair[0], pair[1]);
            let (l, r): (Vec<u32>, Vec<u32>) = (0..n as u32).partition(|&j| xf[j as usize] <= t);
            if l.len() < 3 || r.len() < 3 {
                continue;
            }
            let e = brute(&ys, &ws, &l).0 + brute(&ys, &ws, &r).0;
            if e < want.0 - 1e-9 {
                want = (e, t);
            }
        }
        assert_eq!(cut.threshold, want.1);
        assert!((-cut.proxy - want.0).abs() < 1e-9);
    }

    /// Under a monotonic constraint the exact rule's cut is the one of least error among
    /// the cuts whose children's medians lie in the bounds and are ordered by the sign, by
    /// brute force; the unconstrained best cut is not among them (else this tests nothing).
    #[test]
    fn a_constrained_cut_keeps_the_medians_ordered_and_bounded() {
        let n = 80;
        let xf: Vec<f64> = (0..n).map(|i| ((i * 37) % 41) as f64).collect();
        // Decreasing in x on the whole, with a bump.
        let ys: Vec<f64> = (0..n)
            .map(|i| 40.0 - xf[i] + ((i * 13) % 7) as f64 + if xf[i] > 30.0 { 25.0 } else { 0.0 })
            .collect();
        let ws: Vec<f64> = (0..n).map(|i| 0.5 + (i % 4) as f64 * 0.75).collect();
        let crit = AbsoluteError { y: &ys };
        let total = [ws.iter().sum::<f64>()];
        let cst = [1i8];
        let inf = f64::INFINITY;
        // Signs and bounds that each exclude the unconstrained best cut.
        for (sign, lower, upper) in [(1, -inf, inf), (-1, -inf, 38.0), (-1, 28.0, inf)] {
            let bounds = Bounds { lower, upper };
            let ctx = NodeCtx {
                crit: &crit,
                total: &total,
                min_samples_leaf: 3,
                min_weight_leaf: 0.0,
                unit_weights: false,
                whole_sums: false,
                mono: Some((&cst, bounds)),
                sign,
            };
            let mut s = SearchBufs::<f64>::new(1);
            let cut = best(&xf, OrderTargets::One(&ys), &ws, &mut s, &ctx);
            let (mut want, mut free) = (None::<(f64, f64)>, f64::INFINITY);
            let mut values = xf.clone();
            values.sort_by(f64::total_cmp);
            values.dedup();
            for pair in values.windows(2) {
                let t = midpoint(pair[0], pair[1]);
                let (l, r): (Vec<u32>, Vec<u32>) =
                    (0..n as u32).partition(|&j| xf[j as usize] <= t);
                if l.len() < 3 || r.len() < 3 {
                    continue;
                }
                let ((el, ml), (er, mr)) = (brute(&ys, &ws, &l), brute(&ys, &ws, &r));
                free = free.min(el + er);
                if bounds.admits_values(sign, ml, mr)
                    && want.is_none_or(|(e, _)| el + er < e - 1e-9)
                {
                    want = Some((el + er, t));
                }
            }
            let (cut, want) = (cut.expect("an admitted cut"), want.expect("a cut"));
            assert_eq!(cut.threshold, want.1, "sign {sign}");
            assert!((-cut.proxy - want.0).abs() < 1e-9);
            assert!(
                want.0 > free + 1e-6,
                "the constraint binds ({sign}, {lower}, {upper})"
            );
        }
    }
}
