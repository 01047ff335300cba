//! One logical node's split: up to K candidates drawn among the unused variables, each
//! scored by its multiway decrease `Δi = i(t) − Σ_v (w_v / w_t) i(t_v)`, and the node's rows
//! reordered by the winner's values into one group per value.
//!
//! Invariant: a candidate's `(value, position)` pairs are sorted by a total key, so the
//! groups, their order and hence the tree are fully determined by the seed; ties between
//! decreases go to the first drawn.

use super::grow::MultiwayGrower;
use crate::data::midpoint;
use crate::data::Feature;
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;

/// Whether two values fall in one group: equal, or both missing (NaN is one more value,
/// whatever its bits).
#[inline]
pub(super) fn same_group<T: Feature>(a: T, b: T) -> bool {
    a.total_cmp(&b).is_eq() || (a.to_f64().is_nan() && b.to_f64().is_nan())
}

/// Whether a candidate decrease beats the best so far; `scale` is the node impurity, so
/// decreases that differ by rounding only (e.g. 0 and 1e-17) are ties. (The binary search
/// ranks proxies instead, with [`crate::tree::split::better`].)
#[inline]
fn decrease_beats(dec: f64, best: f64, scale: f64) -> bool {
    dec - best > 1e-12 * scale.max(dec.abs()).max(best.abs())
}

impl<T: Feature, C: Criterion> MultiwayGrower<'_, T, C> {
    /// Draws up to K candidates among `features[depth..]` and returns the winner's position
    /// in `features`, its decrease `Δi` and whether it is constant in the node; None when no
    /// candidate respects the leaf constraints. The winner's sorted values are left in
    /// `best_sorted`.
    pub(super) fn choose(
        &mut self,
        samples: &[u32],
        start: usize,
        features: &mut [u32],
        depth: usize,
        impurity: f64,
        rng: &mut TreeRng,
    ) -> Option<(usize, f64, bool)> {
        let mut undrawn = features.len(); // features[depth..undrawn] not drawn yet
        let mut visited = 0;
        let mut best: Option<(usize, f64, bool)> = None;
        while visited < self.params.max_features && undrawn > depth {
            let j = depth + rng.below(undrawn - depth);
            undrawn -= 1;
            features.swap(j, undrawn);
            visited += 1;
            // Later swaps only touch positions below `undrawn`: a kept position stays valid.
            let Some((dec, constant)) = self.score(features[undrawn], samples, start, impurity)
            else {
                continue;
            };
            if best.is_none_or(|(_, bd, _)| decrease_beats(dec, bd, impurity)) {
                best = Some((undrawn, dec, constant));
                std::mem::swap(&mut self.sorted, &mut self.best_sorted);
            }
        }
        best
    }

    /// Copies `(x_f, position)` of the node rows `samples` into `sorted`, sorted.
    fn gather_sorted(&mut self, f: u32, samples: &[u32]) {
        let (x, f) = (&self.x, f as usize);
        self.sorted.clear();
        match x.column(f) {
            Some(col) => self.sorted.extend(
                samples
                    .iter()
                    .enumerate()
                    .map(|(k, &i)| (col[i as usize], k as u32)),
            ),
            None => self.sorted.extend(
                samples
                    .iter()
                    .enumerate()
                    .map(|(k, &i)| (x.get(i as usize, f), k as u32)),
            ),
        }
        // (value, position) is a total key: the order, hence the tree, is fully determined.
        self.sorted
            .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        // NaN is one group, the last: `total_cmp` puts a NaN with the sign bit first (and
        // others last), so a leading run moves to the end. (A comparator testing NaN cost
        // multiway fits on complete data about 10 %.)
        let leading = self
            .sorted
            .iter()
            .take_while(|v| v.0.to_f64().is_nan())
            .count();
        self.sorted.rotate_left(leading);
    }

    /// Whether feature `f` takes a single value on the node rows `samples`.
    pub(super) fn is_constant(&self, f: u32, samples: &[u32]) -> bool {
        let f = f as usize;
        let mut values = samples.iter().map(|&i| self.x.get(i as usize, f));
        match values.next() {
            Some(first) => values.all(|v| same_group(v, first)),
            None => true,
        }
    }

    /// Scores feature `f` on the node `rows[start..end]` (the rows of `samples`): returns
    /// `Δi = i(t) − Σ_v (w_v / w_t) i(t_v)` and whether `f` is constant in the node, or None
    /// if a child would break `min_samples_leaf` or `min_weight_fraction_leaf`. Leaves the
    /// sorted values in `sorted`.
    fn score(
        &mut self,
        f: u32,
        samples: &[u32],
        start: usize,
        impurity: f64,
    ) -> Option<(f64, bool)> {
        self.gather_sorted(f, samples);
        let (lo, hi) = match (self.sorted.first(), self.sorted.last()) {
            (Some(a), Some(b)) => (a.0, b.0),
            _ => return None,
        };
        if same_group(lo, hi) {
            return Some((0.0, true));
        }
        let n = self.sorted.len();
        let (mut weighted, mut group_start, mut wv) = (0.0, 0usize, 0.0);
        self.child.fill(0.0);
        for i in 0..n {
            let (v, k) = self.sorted[i];
            let r = start + k as usize;
            let w = self.ws[r];
            self.crit.add(&mut self.child, self.ys[r], w);
            wv += w;
            if i + 1 < n && same_group(self.sorted[i + 1].0, v) {
                continue;
            }
            // End of the group of value v.
            self.child[0] = wv;
            if i + 1 - group_start < self.params.min_samples_leaf || wv < self.min_weight_leaf {
                return None;
            }
            weighted += wv * self.crit.impurity(&self.child);
            self.child.fill(0.0);
            wv = 0.0;
            group_start = i + 1;
        }
        Some((impurity - weighted / self.total[0], false))
    }

    /// Reorders `rows[start..end]` by the winner's values (stable: by value, then previous
    /// position) and appends its groups to `cuts`; returns the index of the first group.
    pub(super) fn apply_split(&mut self, samples: &mut [u32], start: usize, end: usize) -> usize {
        self.tmp_samples.clear();
        self.tmp_ys.clear();
        self.tmp_ws.clear();
        for &(_, k) in &self.best_sorted {
            let r = start + k as usize;
            self.tmp_samples.push(samples[r]);
            self.tmp_ys.push(self.ys[r]);
            self.tmp_ws.push(self.ws[r]);
        }
        samples[start..end].copy_from_slice(&self.tmp_samples);
        self.ys[start..end].copy_from_slice(&self.tmp_ys);
        self.ws[start..end].copy_from_slice(&self.tmp_ws);
        let first = self.cuts.len();
        for (i, pair) in self.best_sorted.windows(2).enumerate() {
            let (a, b) = (pair[0].0.to_f64(), pair[1].0.to_f64());
            if !same_group(pair[0].0, pair[1].0) {
                // The NaN group is last: "x ≤ +inf" keeps every value on the left.
                let t = if b.is_nan() {
                    f64::INFINITY
                } else {
                    midpoint(a, b)
                };
                self.cuts.push((start + i + 1, t));
            }
        }
        // The last group ends the node; its threshold is never read.
        self.cuts.push((end, f64::NAN));
        first
    }
}
