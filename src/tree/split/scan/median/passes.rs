//! The node-level work of the exact median search: each output's targets ranked once per
//! node ([`Ranked`], shared by its candidates), and the two deletion passes that give the
//! error of every prefix and every suffix of the rows in a candidate's order
//! ([`MedianBufs::errors`]), summed over the outputs.
//!
//! A pass starts from all rows present in a linked list of their ranks ([`RankList`]) and
//! deletes them from the other end, each deletion `O(1)` and the median moving by a rank
//! or two (unit weights); the error comes from the pinball identity
//! `AE = (Σ_{≥m} w y − m Σ_{≥m} w) + (m Σ_{<m} w − Σ_{<m} w y)` with the sums below the
//! median `m`. Invariant: the totals and the half weight are summed in row order as
//! scikit-learn's, so with whole weights every median is scikit-learn's exactly, the
//! mid-point rule included; the outputs' errors are added in output order, as
//! scikit-learn's `MAE.reset` adds them.

use crate::tree::criterion::OrderTargets;

/// What the median search reuses from node to node (in the split search's `SearchBufs`).
#[derive(Default)]
pub(crate) struct MedianBufs {
    /// Whether `outputs[..n_outputs]` are the node's: they depend on its rows only, so its
    /// candidates share them until the next node ([`MedianBufs::forget`]).
    pub(super) ranked: bool,
    pub(super) n_outputs: usize,
    pub(super) outputs: Vec<Ranked>,
    /// Rows in the order of the candidate's values, and their ranks in that order (of the
    /// output being passed over).
    pub(super) order: Vec<u32>,
    pub(super) order_ranks: Vec<u32>,
    /// `AE` of the first `k + 1` rows of `order`, and of the rows from `k` on, summed over
    /// the outputs.
    pub(super) prefix: Vec<f64>,
    pub(super) suffix: Vec<f64>,
    /// The medians of the same prefixes and suffixes (constrained candidates only).
    pub(super) medians: [Vec<f64>; 2],
    pub(super) list: RankList,
    /// The side (0 left, 1 right) of each row under a random threshold.
    pub(super) side: Vec<u8>,
    /// Sums of `w` and `w·y` of each prefix, and of each suffix read backwards, of `order`.
    pub(super) sums: [Vec<(f64, f64)>; 2],
}

impl MedianBufs {
    /// A new node begins: its targets are not ranked yet.
    pub(crate) fn forget(&mut self) {
        self.ranked = false;
    }
}

/// The ranks of a node's targets still present, as a doubly linked list in rank order
/// (index `n` is the sentinel), with the weighted median's rank and the sums of `w` and
/// `w·y` of the present ranks below it. Deleting a rank is `O(1)`; the median then moves by
/// the few ranks whose weight covers the change of the half weight.
#[derive(Default)]
pub(super) struct RankList {
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

    /// `(Σ w |y − m|, m)` of the present ranks, of total weight `w` and `w·y` sum `wy`,
    /// about their weighted median `m` (scikit-learn's: the mid-point of two targets when
    /// the weight below the median is exactly half), by the pinball identity.
    #[inline(always)]
    fn absolute_error(&mut self, (w, wy): (f64, f64), y: &[f64]) -> (f64, f64) {
        let half = 0.5 * w;
        self.settle(half);
        let p = self.median;
        let before = self.prev[p] as usize;
        let m = match self.w_below == half && before < y.len() {
            true => (y[before] + y[p]) / 2.0,
            false => y[p],
        };
        let (w_above, wy_above) = (w - self.w_below, wy - self.wy_below);
        (
            (wy_above - m * w_above) + (m * self.w_below - self.wy_below),
            m,
        )
    }
}

/// One output's targets at a node, ranked.
#[derive(Default)]
pub(super) struct Ranked {
    /// The output's targets of the node's rows, aligned with them, gathered when there are
    /// several outputs (one output's are the criterion's own slice, [`Ranked::targets`]).
    pub y: Vec<f64>,
    /// The targets sorted, the row of each rank, and each row's rank (ties in any order:
    /// they share a value, so medians and errors do not depend on it).
    pub sorted_y: Vec<f64>,
    pub by_target: Vec<u32>,
    pub ranks: Vec<u32>,
}

impl Ranked {
    /// The output's targets of the node's rows, of the node's `targets`: one output's own
    /// slice (not copied: the copy slowed Extra-Trees fits by 6-8 %), or those gathered.
    #[inline(always)]
    pub fn targets<'b>(&'b self, targets: OrderTargets<'b>) -> &'b [f64] {
        match targets {
            OrderTargets::One(ys) => ys,
            OrderTargets::Rows { .. } => &self.y,
        }
    }

    /// Ranks the targets `ys`.
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
}

impl MedianBufs {
    /// Gathers and ranks each output's targets of the node (`targets`), unless done for
    /// this node already.
    pub(super) fn rank(&mut self, targets: OrderTargets<'_>) {
        let m = targets.n_outputs();
        let n = targets.len();
        if self.ranked && self.n_outputs == m && self.outputs[0].ranks.len() == n {
            return;
        }
        (self.ranked, self.n_outputs) = (true, m);
        if self.outputs.len() < m {
            self.outputs.resize_with(m, Ranked::default);
        }
        for (k, r) in self.outputs[..m].iter_mut().enumerate() {
            if let OrderTargets::One(ys) = targets {
                r.rank(ys);
                continue;
            }
            let mut y = std::mem::take(&mut r.y);
            targets.gather(k, &mut y);
            r.rank(&y);
            r.y = y;
        }
    }

    /// `AE` of every prefix of `order` into `prefix`, and of every suffix into `suffix`,
    /// summed over the outputs: from all rows, the rows of the other end deleted one at a
    /// time. The totals of each prefix (suffix) are summed in row order, as scikit-learn's
    /// passes sum them. With `MEDIANS` (a constrained candidate, one output), each
    /// prefix's and suffix's median too, into `medians`. `targets` are the node's, ranked.
    pub(super) fn errors<const MEDIANS: bool>(&mut self, targets: OrderTargets<'_>, ws: &[f64]) {
        let n = self.order.len();
        let MedianBufs {
            outputs,
            n_outputs,
            order,
            order_ranks,
            prefix,
            suffix,
            medians,
            list,
            sums,
            ..
        } = self;
        for out in [&mut *prefix, &mut *suffix] {
            out.resize(n, 0.0);
        }
        if MEDIANS {
            medians.iter_mut().for_each(|m| m.resize(n, 0.0));
        }
        for (output, r) in outputs[..*n_outputs].iter().enumerate() {
            let y = r.targets(targets);
            order_ranks.clear();
            order_ranks.extend(order.iter().map(|&j| r.ranks[j as usize]));
            let passes = [(&mut *prefix, true), (&mut *suffix, false)];
            for (((out, forward), sums), median) in
                passes.into_iter().zip(&mut *sums).zip(&mut *medians)
            {
                let at = |k: usize| if forward { k } else { n - 1 - k };
                sums.clear();
                let (mut w, mut wy) = (0.0, 0.0);
                for k in 0..n {
                    let j = order[at(k)] as usize;
                    w += ws[j];
                    wy += ws[j] * y[j];
                    sums.push((w, wy));
                }
                let by_rank = r.by_target.iter().map(|&j| ws[j as usize]);
                list.fill(by_rank, &r.sorted_y);
                let pass = (&r.sorted_y[..], &order_ranks[..], &sums[..]);
                // The first output's errors are written, the others' added to them.
                match output {
                    0 => list.delete_all::<MEDIANS, false>(pass, out, median, at),
                    _ => list.delete_all::<MEDIANS, true>(pass, out, median, at),
                }
            }
        }
    }
}

impl RankList {
    /// Deletes the ranks `order_ranks` from the last to the first in the order `at`, each
    /// after writing (`ADD`: adding) the error of the ranks present, of sums `sums`, at
    /// its position in `out` (and with `MEDIANS` their median in `median`).
    #[inline(always)]
    fn delete_all<const MEDIANS: bool, const ADD: bool>(
        &mut self,
        (sorted_y, order_ranks, sums): (&[f64], &[u32], &[(f64, f64)]),
        out: &mut [f64],
        median: &mut [f64],
        at: impl Fn(usize) -> usize,
    ) {
        for k in (0..order_ranks.len()).rev() {
            let (error, m) = self.absolute_error(sums[k], sorted_y);
            match ADD {
                true => out[at(k)] += error,
                false => out[at(k)] = error,
            }
            if MEDIANS {
                median[at(k)] = m;
            }
            self.delete(order_ranks[at(k)] as usize);
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use crate::tree::criterion::median_and_deviation;
    use crate::tree::split::scan::median::passes::*;

    /// `(Σ w |y − m|, m)` of `rows` by the definition (a direct sum about the median).
    pub(in super::super) fn brute(ys: &[f64], ws: &[f64], rows: &[u32]) -> (f64, f64) {
        let y: Vec<f64> = rows.iter().map(|&j| ys[j as usize]).collect();
        let w: Vec<f64> = rows.iter().map(|&j| ws[j as usize]).collect();
        let (m, d) = median_and_deviation(&y, &w, &mut Vec::new());
        (d * w.iter().sum::<f64>(), m)
    }

    /// The deletion passes give every prefix's and suffix's error (and median) as the
    /// definition does, with ties among targets, whole weights that meet half the total
    /// exactly, and fractional weights over a long run of deletions; with two outputs,
    /// the sum of the outputs' errors.
    #[test]
    fn prefix_and_suffix_errors_are_the_definition() {
        let n = 37;
        let ys: Vec<f64> = (0..n).map(|i| ((i * 11) % 7) as f64 * 0.5 - 1.0).collect();
        let zs: Vec<f64> = (0..n).map(|i| ((i * 5) % 9) as f64 * -0.25).collect();
        let rows: Vec<f64> = (0..n).flat_map(|i| [ys[i], zs[i]]).collect();
        let ids: Vec<u32> = (0..n as u32).collect();
        let mut rng = crate::rng::TreeRng::new(3);
        let fractional: Vec<f64> = (0..n).map(|_| 0.01 + 3.0 * rng.unit()).collect();
        let whole = (0..n).map(|i| 1.0 + (i % 3) as f64).collect();
        // Magnitudes 10⁻¹² to 10⁶: the running sums' rounding must not move the median
        // off the present ranks.
        let extreme = (0..n).map(|i| 10f64.powi((i % 19) as i32 - 12)).collect();
        for weights in [vec![1.0; n], whole, fractional, extreme] {
            // The running sums round to about ε of the node's `Σ w |y|` (the module docs).
            let scale: f64 = ys.iter().zip(&weights).map(|(y, w)| w * y.abs()).sum();
            let tol = 1e-12 * scale;
            let order: Vec<u32> = (0..n as u32).map(|i| (i * 5) % n as u32).collect();
            let mut m = MedianBufs {
                order: order.clone(),
                ..MedianBufs::default()
            };
            m.rank(OrderTargets::One(&ys));
            m.errors::<true>(OrderTargets::One(&ys), &weights);
            for k in 0..n {
                let (head, tail) = (&m.order[..=k], &m.order[k..]);
                let (p, s) = (brute(&ys, &weights, head), brute(&ys, &weights, tail));
                assert!(
                    (m.prefix[k] - p.0).abs() < tol,
                    "prefix {k}: {}, {p:?}",
                    m.prefix[k]
                );
                assert!(
                    (m.suffix[k] - s.0).abs() < tol,
                    "suffix {k}: {}, {s:?}",
                    m.suffix[k]
                );
                assert_eq!(
                    (m.medians[0][k], m.medians[1][k]),
                    (p.1, s.1),
                    "medians {k}"
                );
            }
            let mut two = MedianBufs {
                order,
                ..MedianBufs::default()
            };
            let targets = OrderTargets::Rows {
                rows: &ids,
                y: &rows,
                n_outputs: 2,
            };
            two.rank(targets);
            two.errors::<false>(targets, &weights);
            let tol = tol
                + 1e-12
                    * zs.iter()
                        .zip(&weights)
                        .map(|(z, w)| w * z.abs())
                        .sum::<f64>();
            for k in 0..n {
                let (head, tail) = (&two.order[..=k], &two.order[k..]);
                let p = brute(&ys, &weights, head).0 + brute(&zs, &weights, head).0;
                let s = brute(&ys, &weights, tail).0 + brute(&zs, &weights, tail).0;
                assert!((two.prefix[k] - p).abs() < tol, "two prefix {k}");
                assert!((two.suffix[k] - s).abs() < tol, "two suffix {k}");
            }
        }
    }
}
