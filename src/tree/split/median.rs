//! The order-statistic split search of the absolute-error criterion: the exact and random
//! rules hand it a candidate when [`Criterion::order_statistic`] gives the node's targets as
//! real numbers. A cut is ranked by the proxy `−(AE_L + AE_R)`, where `AE = Σ w |y − m|`
//! about a child's weighted median `m` (the node's total `AE` is the same for every cut).
//!
//! The exact rule is scikit-learn's (1.8+, `_criterion.pyx::MAE`): the node's targets are
//! ranked once per candidate, the rows are added in the order of the candidate's values to
//! a Fenwick tree over those ranks that keeps prefix sums of `w` and `w·y` ([`Fenwick`]),
//! and after each row a descent finds the weighted median and the pinball identity
//! `AE = (Σ_{≥m} w y − m Σ_{≥m} w) + (m Σ_{<m} w − Σ_{<m} w y)` gives the prefix's error; a
//! second pass from the other end gives every suffix's. A candidate costs `O(n log n)`
//! (the sorts and `2n` updates and descents), not the `O(n²)` of recomputing medians.
//!
//! Invariant: the Fenwick tree is a line-by-line port of scikit-learn's
//! `WeightedFenwickTree` (the same sums in the same order), so medians at an exact half
//! weight, and the errors, round as scikit-learn's do.

use super::exact::midpoint;
use super::gathered::SearchBufs;
use super::random::draw_threshold;
use super::sort::sort_packed;
use super::{better, Cut, NodeCtx};
use crate::data::{Feature, Packed};
use crate::rng::TreeRng;
use crate::tree::criterion::{median_and_deviation, Criterion};
use crate::tree::{goes_left, Missing};

/// Prefix sums of `w` and `w·y` over the ranks of a node's targets (1-based inside).
#[derive(Default)]
pub(crate) struct Fenwick {
    w: Vec<f64>,
    wy: Vec<f64>,
    size: usize,
    max_pow2: usize,
    total_w: f64,
    total_wy: f64,
}

/// Where half the weight falls: the median's rank, the rank before it when the half is
/// met exactly (else the same rank), and the sums of `w` and `w·y` below the median's rank.
struct Half {
    rank: usize,
    prev: usize,
    w_below: f64,
    wy_below: f64,
}

impl Fenwick {
    fn reset(&mut self, size: usize) {
        self.w.clear();
        self.w.resize(size + 1, 0.0);
        self.wy.clear();
        self.wy.resize(size + 1, 0.0);
        self.size = size;
        self.total_w = 0.0;
        self.total_wy = 0.0;
        let mut p = 1;
        while p <= size {
            p <<= 1;
        }
        self.max_pow2 = p >> 1;
    }

    fn add(&mut self, rank: usize, y: f64, w: f64) {
        let wy = w * y;
        let mut i = rank + 1;
        while i <= self.size {
            self.w[i] += w;
            self.wy[i] += wy;
            i += i & i.wrapping_neg();
        }
        self.total_w += w;
        self.total_wy += wy;
    }

    /// The smallest rank whose cumulative weight exceeds `target` (scikit-learn's
    /// `search`, with its three phases when a prefix meets `target` exactly).
    fn search(&self, mut target: f64) -> Half {
        let (mut current, mut cw, mut cwy) = (0usize, 0.0, 0.0);
        let mut bit = self.max_pow2;
        let mut equal = None;
        while bit != 0 {
            let next = current + bit;
            if next <= self.size {
                let nw = self.w[next];
                if target == nw {
                    equal = Some((target, bit));
                    break;
                } else if target > nw {
                    target -= nw;
                    current = next;
                    cw += nw;
                    cwy += self.wy[next];
                }
            }
            bit >>= 1;
        }
        let Some((equal_target, equal_bit)) = equal else {
            return Half {
                rank: current,
                prev: current,
                w_below: cw,
                wy_below: cwy,
            };
        };
        let mut prev = current;
        while bit != 0 {
            let next = prev + bit;
            if next <= self.size {
                let nw = self.w[next];
                if target > nw {
                    target -= nw;
                    prev = next;
                }
            }
            bit >>= 1;
        }
        let (mut bit, mut target) = (equal_bit, equal_target);
        while bit != 0 {
            let next = current + bit;
            if next <= self.size {
                let nw = self.w[next];
                if target >= nw {
                    target -= nw;
                    current = next;
                    cw += nw;
                    cwy += self.wy[next];
                }
            }
            bit >>= 1;
        }
        Half {
            rank: current,
            prev,
            w_below: cw,
            wy_below: cwy,
        }
    }

    /// `Σ w |y − m|` of the rows added so far, about their weighted median `m`.
    fn absolute_error(&self, sorted_y: &[f64]) -> f64 {
        let h = self.search(0.5 * self.total_w);
        let m = match h.rank != h.prev {
            true => (sorted_y[h.prev] + sorted_y[h.rank]) / 2.0,
            false => sorted_y[h.rank],
        };
        let (w_above, wy_above) = (self.total_w - h.w_below, self.total_wy - h.wy_below);
        (wy_above - m * w_above) + (m * h.w_below - h.wy_below)
    }
}

/// What the median search reuses from node to node (in [`SearchBufs`]).
#[derive(Default)]
pub(crate) struct MedianBufs {
    /// The node's targets sorted, and each row's rank among them.
    sorted_y: Vec<f64>,
    by_target: Vec<u32>,
    ranks: Vec<u32>,
    /// Rows in the order of the candidate's values.
    order: Vec<u32>,
    /// `AE` of the first `k + 1` rows of `order`, and of the rows from `k` on.
    prefix: Vec<f64>,
    suffix: Vec<f64>,
    fenwick: Fenwick,
    pairs: Vec<(f64, f64)>,
}

impl MedianBufs {
    /// Ranks the node's targets `ys` (ties in any order: they share a value, so medians
    /// and errors do not depend on it).
    fn rank(&mut self, ys: &[f64]) {
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

    /// `AE` of every prefix of `order` into `prefix`, and of every suffix into `suffix`.
    fn errors(&mut self, ws: &[f64]) {
        let n = self.order.len();
        for (out, forward) in [(&mut self.prefix, true), (&mut self.suffix, false)] {
            out.resize(n, 0.0);
            self.fenwick.reset(n);
            for step in 0..n {
                let k = if forward { step } else { n - 1 - step };
                let j = self.order[k] as usize;
                let r = self.ranks[j] as usize;
                self.fenwick.add(r, self.sorted_y[r], ws[j]);
                out[k] = self.fenwick.absolute_error(&self.sorted_y);
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
    let n = xf.len();
    let (packed, radix) = (&mut s.packed, &mut s.radix);
    packed.clear();
    packed.extend(xf.iter().enumerate().map(|(k, v)| v.pack(k as u32)));
    sort_packed(packed, radix);
    let m = &mut s.median;
    m.order.clear();
    m.order.extend(packed.iter().map(|p| p.position()));
    m.rank(ys);
    m.errors(ws);
    let total = ctx.total[0];
    let mut best: Option<Cut> = None;
    let mut wl = 0.0;
    for i in 0..n.saturating_sub(1) {
        let (j, next) = (m.order[i] as usize, m.order[i + 1] as usize);
        wl += ws[j];
        let (v, w) = (xf[j].to_f64(), xf[next].to_f64());
        let n_left = i + 1;
        if !(w > v)
            || n_left < ctx.min_samples_leaf
            || n - n_left < ctx.min_samples_leaf
            || wl < ctx.min_weight_leaf
            || total - wl < ctx.min_weight_leaf
        {
            continue;
        }
        let proxy = -(m.prefix[i] + m.suffix[i + 1]);
        if best.is_none_or(|b| better(proxy, b.proxy)) {
            best = Some(Cut {
                proxy,
                threshold: midpoint(v, w),
                n_left: Some(n_left),
                missing: Missing::Unseen,
            });
        }
    }
    best
}

/// The random rule: one threshold drawn uniformly in `[lo, hi)` (the draw of
/// [`super::RandomThreshold`], so the RNG stream is the same), scored by the children's
/// errors about their medians.
#[allow(clippy::too_many_arguments)]
pub(super) fn random<T: Feature, C: Criterion>(
    xf: &[T],
    ys: &[f64],
    ws: &[f64],
    s: &mut SearchBufs<T>,
    ctx: &NodeCtx<'_, C>,
    lo: T,
    hi: T,
    rng: &mut TreeRng,
) -> Option<Cut> {
    let t = draw_threshold(lo.to_f64(), hi.to_f64(), rng);
    let m = &mut s.median;
    let mut error = [0.0; 2];
    let mut n_left = 0;
    let mut wl = 0.0;
    for (side, error) in error.iter_mut().enumerate() {
        let (mut ys_side, mut ws_side) = (Vec::new(), Vec::new());
        for (k, v) in xf.iter().enumerate() {
            if goes_left(v.to_f64(), t, false) == (side == 0) {
                ys_side.push(ys[k]);
                ws_side.push(ws[k]);
            }
        }
        let (_, deviation) = median_and_deviation(&ys_side, &ws_side, &mut m.pairs);
        let w: f64 = ws_side.iter().sum();
        *error = deviation * w;
        if side == 0 {
            (n_left, wl) = (ys_side.len(), w);
        }
    }
    if !ctx.admissible(n_left, xf.len(), &[wl]) {
        return None;
    }
    Some(Cut {
        proxy: -(error[0] + error[1]),
        threshold: t,
        n_left: Some(n_left),
        missing: Missing::Unseen,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::criterion::AbsoluteError;

    /// `Σ w |y − m|` of `rows` by the definition (a direct sum about the median).
    fn brute(ys: &[f64], ws: &[f64], rows: &[u32]) -> f64 {
        let y: Vec<f64> = rows.iter().map(|&j| ys[j as usize]).collect();
        let w: Vec<f64> = rows.iter().map(|&j| ws[j as usize]).collect();
        median_and_deviation(&y, &w, &mut Vec::new()).1 * w.iter().sum::<f64>()
    }

    /// The Fenwick passes give every prefix's and suffix's error as the definition does,
    /// with ties among targets and weights that meet half the total exactly.
    #[test]
    fn prefix_and_suffix_errors_are_the_definition() {
        let n = 37;
        let ys: Vec<f64> = (0..n).map(|i| ((i * 11) % 7) as f64 * 0.5 - 1.0).collect();
        for weights in [vec![1.0; n], (0..n).map(|i| 1.0 + (i % 3) as f64).collect()] {
            let mut m = MedianBufs::default();
            m.order = (0..n as u32).map(|i| (i * 5) % n as u32).collect();
            m.rank(&ys);
            m.errors(&weights);
            for k in 0..n {
                let (head, tail) = (&m.order[..=k], &m.order[k..]);
                let (p, s) = (brute(&ys, &weights, head), brute(&ys, &weights, tail));
                assert!(
                    (m.prefix[k] - p).abs() < 1e-12,
                    "prefix {k}: {} vs {p}",
                    m.prefix[k]
                );
                assert!(
                    (m.suffix[k] - s).abs() < 1e-12,
                    "suffix {k}: {} vs {s}",
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
}
