//! The order-statistic split search of the absolute-error criterion: the exact and random
//! rules hand it a candidate when [`Criterion::order_statistic`] gives the node's targets as
//! real numbers. A cut is ranked by the proxy `−(AE_L + AE_R)`, where `AE = Σ w |y − m|`
//! about a child's weighted median `m` (the node's total `AE` is the same for every cut).
//!
//! The exact rule finds scikit-learn's cuts (1.8+, `_criterion.pyx::MAE`) by other means:
//! the node's targets are ranked, and the error of every prefix of the rows in the order of
//! the candidate's values comes from the pinball identity
//! `AE = (Σ_{≥m} w y − m Σ_{≥m} w) + (m Σ_{<m} w − Σ_{<m} w y)` with the sums below the
//! median `m`. scikit-learn adds the rows one at a time to a Fenwick tree over the ranks
//! and descends it for the median (`O(log n)` each); here the ranks present form a linked
//! list ([`RankList`]) from which the rows are *deleted* from the other end, each deletion
//! `O(1)` and the median moving by a rank or two (unit weights), so a candidate costs its
//! sorts and `O(n)` (measured: the passes were 3/4 of a fit with the Fenwick tree, see
//! BENCHMARKS.md). A second pass gives every suffix's error. Not the `O(n²)` of
//! recomputing medians either way. The random rule scores its one threshold by a walk over
//! the node's ranks (`O(n)`). A candidate with NaN at the node is scanned as in
//! `split::missing` ([`best_with_missing`]: NaN rows last, then first, in the row order).
//!
//! Invariant: the totals and the half weight are summed in row order as scikit-learn's, so
//! with whole weights (unit, bootstrap counts, integer sample weights) every median is
//! scikit-learn's exactly, the mid-point rule included; the sums below the median are kept
//! by additions and subtractions, so the errors agree to rounding (about `√n ε` of the
//! node's sums), far inside the relative 1e-12 under which two cuts tie. With unit weights
//! cuts of one feature often tie exactly (the error is piecewise linear in the rows
//! moved): the first wins, where scikit-learn's choice follows its rounding.

use super::exact::midpoint;
use super::gathered::SearchBufs;
use super::random::draw_threshold;
use super::sort::sort_packed;
use super::{better, Cut, NodeCtx};
use crate::data::{Feature, Packed};
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;
use crate::tree::{goes_left, Missing};

/// The ranks of a node's targets still present, as a doubly linked list in rank order
/// (index `n` is the sentinel), with the weighted median's rank and the sums of `w` and
/// `w·y` of the present ranks below it. Deleting a rank is `O(1)`; the median then moves by
/// the few ranks whose weight covers the change of the half weight.
#[derive(Default)]
struct RankList {
    prev: Vec<u32>,
    next: Vec<u32>,
    /// `w` and `w·y` by rank; the sentinel's weight is `+∞`, so no walk passes it.
    w: Vec<f64>,
    wy: Vec<f64>,
    median: usize,
    w_below: f64,
    wy_below: f64,
}

impl RankList {
    /// Every rank present, with the weights `w` (by rank) and the targets `y` (sorted).
    fn fill(&mut self, w: impl Iterator<Item = f64>, y: &[f64]) {
        let n = y.len();
        self.w.clear();
        self.w.extend(w);
        self.w.push(f64::INFINITY);
        self.wy.clear();
        self.wy.extend(self.w.iter().zip(y).map(|(w, y)| w * y));
        self.wy.push(0.0);
        self.prev.clear();
        self.prev
            .extend((0..=n as u32).map(|r| if r == 0 { n as u32 } else { r - 1 }));
        self.next.clear();
        self.next
            .extend((1..=n as u32 + 1).map(|r| r % (n as u32 + 1)));
        (self.median, self.w_below, self.wy_below) = (self.next[n] as usize, 0.0, 0.0);
    }

    /// Moves the median to the smallest present rank whose cumulative weight exceeds
    /// `half`: below it at most `half`, with it more. The walks never leave the present
    /// ranks, whatever the rounding of the running sums (weights of very different
    /// magnitudes), and the sums restart from 0 at the first rank.
    #[inline(always)]
    fn settle(&mut self, half: f64) {
        let sentinel = self.w.len() - 1;
        let mut p = self.median;
        if p == sentinel {
            // The median, the last present rank, was deleted.
            p = self.prev[p] as usize;
            self.w_below -= self.w[p];
            self.wy_below -= self.wy[p];
        }
        while self.w_below > half && self.prev[p] as usize != sentinel {
            p = self.prev[p] as usize;
            self.w_below -= self.w[p];
            self.wy_below -= self.wy[p];
        }
        if self.prev[p] as usize == sentinel {
            (self.w_below, self.wy_below) = (0.0, 0.0);
        }
        while self.w_below + self.w[p] <= half && self.next[p] as usize != sentinel {
            self.w_below += self.w[p];
            self.wy_below += self.wy[p];
            p = self.next[p] as usize;
        }
        self.median = p;
    }

    /// Removes rank `r`.
    #[inline(always)]
    fn delete(&mut self, r: usize) {
        let (pv, nx) = (self.prev[r], self.next[r]);
        self.next[pv as usize] = nx;
        self.prev[nx as usize] = pv;
        if r < self.median {
            self.w_below -= self.w[r];
            self.wy_below -= self.wy[r];
        } else if r == self.median {
            self.median = nx as usize;
        }
    }

    /// `Σ w |y − m|` of the present ranks, of total weight `w` and `w·y` sum `wy`, about
    /// their weighted median `m` (scikit-learn's: the mid-point of two targets when the
    /// weight below the median is exactly half), by the pinball identity.
    #[inline(always)]
    fn absolute_error(&mut self, (w, wy): (f64, f64), y: &[f64]) -> f64 {
        let half = 0.5 * w;
        self.settle(half);
        let p = self.median;
        let before = self.prev[p] as usize;
        let m = match self.w_below == half && before < y.len() {
            true => (y[before] + y[p]) / 2.0,
            false => y[p],
        };
        let (w_above, wy_above) = (w - self.w_below, wy - self.wy_below);
        (wy_above - m * w_above) + (m * self.w_below - self.wy_below)
    }
}

/// What the median search reuses from node to node (in [`SearchBufs`]).
#[derive(Default)]
pub(crate) struct MedianBufs {
    /// Whether `sorted_y`, `by_target` and `ranks` are the node's: they depend on its rows
    /// only, so its candidates share them until the next node ([`MedianBufs::forget`]).
    ranked: bool,
    /// The node's targets sorted, and each row's rank among them.
    sorted_y: Vec<f64>,
    by_target: Vec<u32>,
    ranks: Vec<u32>,
    /// Rows in the order of the candidate's values, and their ranks in that order.
    order: Vec<u32>,
    order_ranks: Vec<u32>,
    /// `AE` of the first `k + 1` rows of `order`, and of the rows from `k` on.
    prefix: Vec<f64>,
    suffix: Vec<f64>,
    list: RankList,
    /// The side (0 left, 1 right) of each row under a random threshold.
    side: Vec<u8>,
    /// Sums of `w` and `w·y` of each prefix, and of each suffix read backwards, of `order`.
    sums: [Vec<(f64, f64)>; 2],
}

impl MedianBufs {
    /// A new node begins: its targets are not ranked yet.
    pub(crate) fn forget(&mut self) {
        self.ranked = false;
    }

    /// Ranks the node's targets `ys` (ties in any order: they share a value, so medians
    /// and errors do not depend on it), unless done for this node already.
    fn rank(&mut self, ys: &[f64]) {
        if self.ranked && self.ranks.len() == ys.len() {
            return;
        }
        self.ranked = true;
        let n = ys.len();
        self.by_target.clear();
        self.by_target.extend(0..n as u32);
        self.by_target
            .sort_unstable_by(|&a, &b| ys[a as usize].total_cmp(&ys[b as usize]));
        self.sorted_y.clear();
        self.sorted_y
            .extend(self.by_target.iter().map(|&j| ys[j as usize]));
        self.ranks.resize(n, 0);
        for (r, &j) in self.by_target.iter().enumerate() {
            self.ranks[j as usize] = r as u32;
        }
    }

    /// `AE` of every prefix of `order` into `prefix`, and of every suffix into `suffix`:
    /// from all rows, the rows of the other end deleted one at a time. The totals of each
    /// prefix (suffix) are summed in row order, as scikit-learn's passes sum them.
    fn errors(&mut self, ys: &[f64], ws: &[f64]) {
        let n = self.order.len();
        self.order_ranks.clear();
        (self.order_ranks).extend(self.order.iter().map(|&j| self.ranks[j as usize]));
        let passes = [(&mut self.prefix, true), (&mut self.suffix, false)];
        for ((out, forward), sums) in passes.into_iter().zip(&mut self.sums) {
            out.resize(n, 0.0);
            let at = |k: usize| if forward { k } else { n - 1 - k };
            sums.clear();
            let (mut w, mut wy) = (0.0, 0.0);
            for k in 0..n {
                let j = self.order[at(k)] as usize;
                w += ws[j];
                wy += ws[j] * ys[j];
                sums.push((w, wy));
            }
            let by_rank = self.by_target.iter().map(|&j| ws[j as usize]);
            self.list.fill(by_rank, &self.sorted_y);
            for k in (0..n).rev() {
                out[at(k)] = self.list.absolute_error(sums[k], &self.sorted_y);
                self.list.delete(self.order_ranks[at(k)] as usize);
            }
        }
    }

    /// Scores the cut after `order[k]`, for every `k` in `cuts` where the candidate's
    /// value grows to `order[k + 1]`'s, by `−(AE_L + AE_R)`, and keeps it in `best` if
    /// better (ties keep the earlier); `missing` is where the NaN rows went.
    fn scan<T: Feature, C: Criterion>(
        &self,
        xf: &[T],
        ctx: &NodeCtx<'_, C>,
        cuts: std::ops::Range<usize>,
        missing: Missing,
        best: &mut Option<Cut>,
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
}

/// The exact rule: the best cut between consecutive distinct values of the candidate's
/// gathered values `xf`, for rows with targets `ys` and weights `ws`.
pub(super) fn best<T: Feature, C: Criterion>(
    xf: &[T],
    ys: &[f64],
    ws: &[f64],
    s: &mut SearchBufs<T>,
    ctx: &NodeCtx<'_, C>,
) -> Option<Cut> {
    sort_present(xf, s);
    let m = &mut s.median;
    m.order.clear();
    m.order.extend(s.packed.iter().map(|p| p.position()));
    m.rank(ys);
    m.errors(ys, ws);
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
pub(super) fn best_with_missing<T: Feature, C: Criterion>(
    xf: &[T],
    ys: &[f64],
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
    m.errors(ys, ws);
    let cuts = 0..present.saturating_sub(1);
    m.scan(xf, ctx, cuts, Missing::Right, &mut best);
    let wl = m.sums[0][present.max(1) - 1].0;
    let apart = (present >= ctx.min_samples_leaf.max(1)
        && n_miss >= ctx.min_samples_leaf
        && wl >= ctx.min_weight_leaf
        && ctx.total[0] - wl >= ctx.min_weight_leaf)
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
    m.errors(ys, ws);
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

/// The random rule: one threshold drawn uniformly in `[lo, hi)` (the draw of
/// [`super::RandomThreshold`], so the RNG stream is the same; `nan`: the node has NaN in
/// the candidate, `lo < hi` bounding the others), scored by the children's errors about
/// their medians. Both medians come from one walk over the node's ranked
/// targets (shared by its candidates), so a candidate costs `O(n)`, no sort.
#[allow(clippy::too_many_arguments)]
pub(super) fn random<T: Feature, C: Criterion>(
    xf: &[T],
    ys: &[f64],
    ws: &[f64],
    s: &mut SearchBufs<T>,
    ctx: &NodeCtx<'_, C>,
    (lo, hi, nan): (T, T, bool),
    rng: &mut TreeRng,
) -> Option<Cut> {
    let t = draw_threshold(lo.to_f64(), hi.to_f64(), rng);
    // With NaN at the node, one more draw sends them to one side (`split::missing`).
    let missing = match nan {
        true => Missing::seen(true, rng.below(2) == 1),
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
    if !ctx.admissible(n_left, xf.len(), &total[..1]) {
        return None;
    }
    // scikit-learn's weighted median of each side: the first target (in rank order) whose
    // cumulative weight exceeds half the side's, or the mid-point with the side's previous
    // target when the cumulative weight before it is exactly half.
    let half = [0.5 * total[0], 0.5 * total[1]];
    let (mut cumulative, mut last) = ([0.0; 2], [f64::NAN; 2]);
    let mut median: [Option<f64>; 2] = [None, None];
    for &j in &m.by_target {
        let j = j as usize;
        let side = usize::from(m.side[j]);
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
    let median = [median[0].unwrap_or(last[0]), median[1].unwrap_or(last[1])];
    let mut error = [0.0; 2];
    for ((&side, &y), &w) in m.side.iter().zip(ys).zip(ws) {
        let side = usize::from(side);
        error[side] += w * (y - median[side]).abs();
    }
    Some(Cut {
        proxy: -(error[0] + error[1]),
        threshold: t,
        n_left: Some(n_left),
        missing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::criterion::{median_and_deviation, AbsoluteError};

    /// `Σ w |y − m|` of `rows` by the definition (a direct sum about the median).
    fn brute(ys: &[f64], ws: &[f64], rows: &[u32]) -> f64 {
        let y: Vec<f64> = rows.iter().map(|&j| ys[j as usize]).collect();
        let w: Vec<f64> = rows.iter().map(|&j| ws[j as usize]).collect();
        median_and_deviation(&y, &w, &mut Vec::new()).1 * w.iter().sum::<f64>()
    }

    /// The deletion passes give every prefix's and suffix's error as the definition does,
    /// with ties among targets, whole weights that meet half the total exactly, and
    /// fractional weights over a long run of deletions.
    #[test]
    fn prefix_and_suffix_errors_are_the_definition() {
        let n = 37;
        let ys: Vec<f64> = (0..n).map(|i| ((i * 11) % 7) as f64 * 0.5 - 1.0).collect();
        let mut rng = crate::rng::TreeRng::new(3);
        let fractional: Vec<f64> = (0..n).map(|_| 0.01 + 3.0 * rng.unit()).collect();
        let whole = (0..n).map(|i| 1.0 + (i % 3) as f64).collect();
        // Magnitudes 10⁻¹² to 10⁶: the running sums' rounding must not move the median
        // off the present ranks.
        let extreme = (0..n).map(|i| 10f64.powi((i % 19) as i32 - 12)).collect();
        for weights in [vec![1.0; n], whole, fractional, extreme] {
            // The running sums round to about ε of the node's `Σ w |y|` (the module docs).
            let scale: f64 = ys.iter().zip(&weights).map(|(y, w)| w * y.abs()).sum();
            let mut m = MedianBufs {
                order: (0..n as u32).map(|i| (i * 5) % n as u32).collect(),
                ..MedianBufs::default()
            };
            m.rank(&ys);
            m.errors(&ys, &weights);
            for k in 0..n {
                let (head, tail) = (&m.order[..=k], &m.order[k..]);
                let (p, s) = (brute(&ys, &weights, head), brute(&ys, &weights, tail));
                let tol = 1e-12 * scale;
                assert!(
                    (m.prefix[k] - p).abs() < tol,
                    "prefix {k}: {}, {p}",
                    m.prefix[k]
                );
                assert!(
                    (m.suffix[k] - s).abs() < tol,
                    "suffix {k}: {}, {s}",
                    m.suffix[k]
                );
            }
        }
    }

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
        let cut = best(&xf, &ys, &ws, &mut s, &ctx).expect("a cut");
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
            let e = brute(&ys, &ws, &l) + brute(&ys, &ws, &r);
            if e < want.0 - 1e-9 {
                want = (e, t);
            }
        }
        assert_eq!(cut.threshold, want.1);
        assert!((-cut.proxy - want.0).abs() < 1e-9);
    }

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
                let cut =
                    random(&xf, &ys, &ws, &mut s, &ctx, (0.0, 3.0, false), &mut a).expect("a cut");
                assert_eq!(cut.threshold, draw_threshold(0.0, 3.0, &mut b));
                let (l, r): (Vec<u32>, Vec<u32>) =
                    (0..n as u32).partition(|&j| xf[j as usize] <= cut.threshold);
                assert_eq!(cut.n_left, Some(l.len()));
                let want = brute(&ys, &ws, &l) + brute(&ys, &ws, &r);
                assert!(
                    (-cut.proxy - want).abs() < 1e-12,
                    "{} vs {want}",
                    -cut.proxy
                );
            }
        }
    }
}
