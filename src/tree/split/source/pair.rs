//! A node of two rows in a subtree listed with lossless codes ([`crate::tree::split::source::listed`]): each
//! candidate's two codes read at the rows' sample ids, from no list. Its children are
//! leaves by size, so a split whose children are such nodes or leaves writes no lists
//! for them (`Listed::apply`).
//!
//! A candidate's one cut leaves the row of the lesser code left, at the mid-point of the
//! two levels: the listed scan's cut, scored from the same sums of that one row, with the
//! same leaf constraints, so the node splits the same way, bit for bit. Each row's cut is
//! scored once (see `Pair::search`): the two rows' proxies are the same up to rounding
//! only, which can tip a proxy near 0 (or one of weights 2⁵³ apart) past the tie rule, so
//! both are offered.

use crate::data::midpoint;
use crate::data::{Feature, Levels};
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;
use crate::tree::split::draw::{draw_split, CandidateSource, NodeDraw};
use crate::tree::split::read::partition::partition_rows;
use crate::tree::split::scan::rows::scan_rows;
use crate::tree::split::source::Node;
use crate::tree::split::{with_left_sums, ChosenSplit, Cut, NodeCtx, NodeRows, SplitBufs};
use std::cmp::Ordering;

/// The rows of the nodes split here; their children are leaves.
pub(crate) const PAIR_ROWS: usize = 2;

/// The node's two rows, their candidates read from the lossless codes `levels`.
struct Pair<'a, 'r, T: Feature, C: Criterion> {
    levels: &'a Levels,
    ctx: &'a NodeCtx<'a, C>,
    s: &'a mut SplitBufs<T>,
    rows: &'a mut NodeRows<'r, C::Y>,
    /// Per row, whether the cut that leaves it alone on the left was scored.
    scored: [bool; 2],
}

impl<T: Feature, C: Criterion> Pair<'_, '_, T, C> {
    /// Feature `f`'s codes at the node's two rows.
    #[inline(always)]
    fn codes(&self, f: u32) -> Option<(u8, u8)> {
        let codes = &self.levels.column(f as usize)?.codes;
        let row = |j: usize| codes[self.rows.samples[j] as usize];
        Some((row(0), row(1)))
    }
}

impl<T: Feature, C: Criterion> CandidateSource for Pair<'_, '_, T, C> {
    /// The row of the lesser code (0 or 1), and the lesser and greater codes.
    type Bounds = (usize, u8, u8);

    /// The listed source's batches, so that the draws are the same.
    type Value = T;

    #[inline(always)]
    fn node_rows(&self) -> usize {
        PAIR_ROWS
    }

    #[inline(always)]
    fn bounds(&mut self, _k: usize, f: u32) -> Option<Self::Bounds> {
        let (a, b) = self.codes(f)?;
        match a.cmp(&b) {
            Ordering::Less => Some((0, a, b)),
            Ordering::Greater => Some((1, b, a)),
            Ordering::Equal => None,
        }
    }

    #[inline(always)]
    fn search(
        &mut self,
        _k: usize,
        f: u32,
        (first, lo, hi): Self::Bounds,
        bar: f64,
        _rng: &mut TreeRng,
    ) -> Option<Cut> {
        // A cut that leaves the same row left as one scored already sums that row alone
        // again (only monotonic constraints, which differ by feature, tell them apart): the
        // same proxy, bit for bit, which cannot beat the best. That cut failed the
        // constraints or the bar, as this one would under a bar no lower; or it became the
        // best, which only better cuts replaced since; or it was no better than the best
        // then, and the tie rule keeps it so against any best since, as each replacement
        // rose by more than the rule's tolerance.
        if std::mem::replace(&mut self.scored[first], true) && self.ctx.mono.is_none() {
            return None;
        }
        let constrained = self.ctx.for_feature(f);
        let ctx = constrained.as_ref().unwrap_or(self.ctx);
        if ctx.min_samples_leaf > 1 {
            return None; // (a node of two rows is then never searched)
        }
        let values = &self.levels.column(f as usize)?.values;
        let (lo, hi) = (usize::from(lo), usize::from(hi));
        // The listed scan of the pair: the first row, then the cut before the other.
        let at = |i: usize| [(lo, first), (hi, 1 - first)][i];
        let cut = |a: usize, b: usize| midpoint(values[a], values[b]);
        let (ys, ws) = (&*self.rows.ys, &*self.rows.ws);
        let left = &mut self.s.search.left;
        with_left_sums!(ctx.crit, left => {
            let sums = (left, &mut [][..]);
            scan_rows::<usize, C, false>(2, at, (ys, ws), sums, ctx, bar, cut)
        })
    }

    fn apply(&mut self, feature: u32, cut: Cut, _unsettled: &[u32]) -> ChosenSplit {
        let first_left = self.codes(feature).is_some_and(|(a, b)| a < b);
        let (buf, unit) = (&mut self.s.partition_buf, self.ctx.unit_weights);
        partition_rows(Some(1), self.rows, buf, unit, |r| (r == 0) == first_left);
        ChosenSplit {
            feature,
            threshold: cut.threshold,
            n_left: 1,
            missing: cut.missing,
        }
    }
}

/// [`crate::tree::split::find_split`] for a node of [`PAIR_ROWS`] rows of a subtree listed
/// with the lossless codes `levels` (every feature has them): the same draws and cuts as
/// from its lists.
pub(crate) fn find_split_pair<T: Feature, C: Criterion>(
    levels: &Levels,
    node: Node<'_, '_, T, C>,
    draw: NodeDraw<'_>,
) -> (Option<ChosenSplit>, usize) {
    let Node { ctx, s, rows } = node;
    debug_assert_eq!(rows.samples.len(), PAIR_ROWS);
    let mut source = Pair {
        levels,
        ctx,
        s,
        rows,
        scored: [false; 2],
    };
    draw_split(&mut source, draw)
}

#[cfg(test)]
pub(in crate::tree::split) mod tests {
    use crate::data::{Layout, Matrix};
    use crate::tree::criterion::{Entropy, Gini, SquaredError};
    use crate::tree::split::source::pair::*;
    use crate::tree::split::{find_split, BestThreshold, Columns};

    /// What a node's search leaves: the split, the constant prefix, the drawn order of
    /// the features, the rows' order and the RNG's next draw.
    pub(in crate::tree::split) type Outcome =
        (Option<(u32, u64, usize)>, usize, Vec<u32>, Vec<u32>, u64);

    /// Searches the node of `samples` of `x` with `crit` (targets `ys`, weights `ws` of
    /// those rows), from the rows' codes (`from_codes`:
    /// [`crate::tree::split::source::few::find_split_few`]) or else from the gathered values.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::tree::split) fn search<C: Criterion>(
        from_codes: bool,
        x: &Matrix<'_, f32>,
        levels: &Levels,
        crit: &C,
        (samples, ys, ws): (&[u32], &[C::Y], &[f64]),
        k: usize,
        features: &[u32],
        seed: u64,
    ) -> Outcome {
        let mut total = vec![0.0; crit.stats_len()];
        crit.accumulate(&mut total, ys, ws);
        let ctx = NodeCtx {
            crit,
            total: &total,
            min_samples_leaf: 1,
            min_weight_leaf: 0.0,
            unit_weights: false,
            whole_sums: false,
            mono: None,
            sign: 0,
        };
        let (mut samples, mut ys, mut ws) = (samples.to_vec(), ys.to_vec(), ws.to_vec());
        let mut rows = NodeRows {
            samples: &mut samples,
            ys: &mut ys,
            ws: &mut ws,
        };
        let (mut s, mut features) = (SplitBufs::new(2, crit.stats_len()), features.to_vec());
        let mut rng = TreeRng::new(seed);
        let pair = rows.samples.len() == PAIR_ROWS;
        let node = Node {
            ctx: &ctx,
            s: &mut s,
            rows: &mut rows,
        };
        let draw = NodeDraw {
            features: &mut features,
            n_constant: 0,
            max_features: k,
            rng: &mut rng,
        };
        let (split, n_constant) = match from_codes {
            true if pair => find_split_pair(levels, node, draw),
            true => crate::tree::split::source::few::find_split_few(levels, node, draw),
            false => {
                let cols = Columns {
                    x,
                    levels: None,
                    missing: None,
                    categorical: None,
                };
                find_split::<f32, C, BestThreshold>(cols, node, draw, None)
            }
        };
        let split = split.map(|s| (s.feature, s.threshold.to_bits(), s.n_left));
        (
            split,
            n_constant,
            features,
            samples,
            rng.below(1 << 30) as u64,
        )
    }

    /// A node of two rows split from their codes as the sorted search of their values
    /// splits it, bit for bit, draws and rows included: with targets and weights whose
    /// proxies tie up to rounding only (zeros, tiny and huge targets, weights 10⁴⁰ apart),
    /// regression, Gini and entropy.
    #[test]
    fn pairs_split_as_the_sorted_search() {
        let mut rng = TreeRng::new(11);
        let targets = [0.0, -0.0, 1e-300, -3e-310, 1.5, -2.25, 1e200, 7.0];
        let weights = [1.0, 0.3, 1e-20, 1e20, 7.0, 2.0];
        for trial in 0..3000 {
            let (n, p) = (12, 1 + rng.below(6));
            let levels_of = |j: usize| 1 + j % 4;
            let data: Vec<f32> = (0..n * p)
                .map(|i| (rng.below(levels_of(i % p)) as f32) * 0.7 - 1.0)
                .collect();
            let x = Matrix::new(&data, n, p, Layout::RowMajor).unwrap();
            let Some(levels) = Levels::new(&x, false) else {
                continue;
            };
            let a = rng.below(n) as u32;
            let samples = [a, (a + 1 + rng.below(n - 1) as u32) % n as u32];
            let ws = [weights[rng.below(6)], weights[rng.below(6)]];
            let mut features: Vec<u32> = (0..p as u32).collect();
            for j in (1..p).rev() {
                features.swap(j, rng.below(j + 1));
            }
            let (k, seed) = (1 + rng.below(p), trial as u64);
            let both = |f: &dyn Fn(bool) -> Outcome| assert_eq!(f(true), f(false), "{trial}");
            let ys = [targets[rng.below(8)], targets[rng.below(8)]];
            let mse = SquaredError { y: &[] };
            both(&|pair| {
                search(
                    pair,
                    &x,
                    &levels,
                    &mse,
                    (&samples, &ys, &ws),
                    k,
                    &features,
                    seed,
                )
            });
            let classes = [rng.below(3) as u32, rng.below(3) as u32];
            let gini = Gini::new(&[], 3);
            let rows = (&samples[..], &classes[..], &ws[..]);
            both(&|pair| search(pair, &x, &levels, &gini, rows, k, &features, seed));
            let entropy = Entropy::new(&[], 3);
            both(&|pair| search(pair, &x, &levels, &entropy, rows, k, &features, seed));
        }
    }
}
