//! A node of three or four rows ([`FEW_ROWS`]) in a subtree listed with lossless codes
//! ([`crate::tree::split::source::listed`]): each candidate's codes read at the rows'
//! sample ids and sorted there, from no list. So a split whose children have at most
//! [`FEW_ROWS`] rows writes no lists for them (`Listed::apply`); nodes of two rows are
//! [`crate::tree::split::source::pair`]'s.
//!
//! The codes are sorted by (code, position in the node). A node's positions are in the
//! order of its local indices (partitions are stable), so that is its list's order, and
//! the listed scan sums the same rows in the same order: the same cuts, bit for bit.
//! Larger nodes stay listed: gathering and sorting six candidates' codes cost more than
//! the list partitions saved from six rows on (see BENCHMARKS.md, real tables).

use crate::data::midpoint;
use crate::data::{Feature, Levels};
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;
use crate::tree::split::draw::{draw_split, CandidateSource, NodeDraw};
use crate::tree::split::read::partition::partition_rows_by_sample;
use crate::tree::split::source::Node;
use crate::tree::split::state::code_lists::{search_rows, Item, ListItem};
use crate::tree::split::{ChosenSplit, Cut, NodeCtx, NodeRows, SplitBufs};

/// The most rows of a node split here.
pub(crate) const FEW_ROWS: usize = 4;

/// A candidate's rows in the node, each its code above its position; padded past the
/// node's rows with an item that sorts last.
type Rows = [Item; FEW_ROWS];

/// The node's rows, their candidates read from the lossless codes `levels`.
struct Few<'a, 'r, T: Feature, C: Criterion> {
    levels: &'a Levels,
    ctx: &'a NodeCtx<'a, C>,
    s: &'a mut SplitBufs<T>,
    rows: &'a mut NodeRows<'r, C::Y>,
}

impl<T: Feature, C: Criterion> Few<'_, '_, T, C> {
    /// Feature `f`'s rows in the node's order, and its lowest and highest codes.
    #[inline(always)]
    fn rows_of(&self, f: u32) -> Option<(Rows, u8, u8)> {
        let codes = &self.levels.column(f as usize)?.codes;
        let mut items = [Item::new(usize::from(u8::MAX), (1 << 24) - 1); FEW_ROWS];
        let (mut lo, mut hi) = (u8::MAX, u8::MIN);
        for (j, (item, &i)) in items.iter_mut().zip(&*self.rows.samples).enumerate() {
            let code = codes[i as usize];
            (lo, hi) = (lo.min(code), hi.max(code));
            *item = Item::new(usize::from(code), j);
        }
        Some((items, lo, hi))
    }
}

impl<T: Feature, C: Criterion> CandidateSource for Few<'_, '_, T, C> {
    /// The candidate's rows ([`Rows`]).
    type Bounds = Rows;

    /// The listed source's batches, so that the draws are the same.
    type Value = T;

    #[inline(always)]
    fn node_rows(&self) -> usize {
        self.rows.samples.len()
    }

    #[inline(always)]
    fn bounds(&mut self, _k: usize, f: u32) -> Option<Rows> {
        let (items, lo, hi) = self.rows_of(f)?;
        (lo < hi).then_some(items)
    }

    #[inline(always)]
    fn search(
        &mut self,
        _k: usize,
        f: u32,
        mut items: Rows,
        bar: f64,
        _rng: &mut TreeRng,
    ) -> Option<Cut> {
        let items = sorted(&mut items, self.rows.samples.len());
        let constrained = self.ctx.for_feature(f);
        let ctx = constrained.as_ref().unwrap_or(self.ctx);
        let values = &self.levels.column(f as usize)?.values;
        let cut = |a: usize, b: usize| midpoint(values[a], values[b]);
        let (ys, ws) = (&self.rows.ys[..], &self.rows.ws[..]);
        search_rows(items, ys, ws, &mut self.s.search.left, ctx, bar, cut)
    }

    fn apply(&mut self, feature: u32, cut: Cut, _unsettled: &[u32]) -> ChosenSplit {
        let n_left = cut.n_left.expect("listed cuts count their rows");
        let (mut items, _, _) = self.rows_of(feature).expect("the split feature is coded");
        // Rows of codes up to the last one on the left go left.
        let last = sorted(&mut items, self.rows.samples.len())[n_left - 1].code();
        let codes = &self.levels.column(feature as usize).expect("coded").codes;
        let (buf, unit) = (&mut self.s.partition_buf, self.ctx.unit_weights);
        let goes_left = |i: u32| usize::from(codes[i as usize]) <= last;
        partition_rows_by_sample(n_left, self.rows, buf, unit, goes_left);
        ChosenSplit {
            feature,
            threshold: cut.threshold,
            n_left,
            missing: cut.missing,
        }
    }
}

/// The node's `n` rows of `items`, sorted (the padding sorts last): a sorting network,
/// branch-free, where the rows' code order was a coin toss for an insertion sort's
/// branches.
#[inline(always)]
fn sorted(items: &mut Rows, n: usize) -> &[Item] {
    for (i, j) in [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2)] {
        let (a, b) = (items[i], items[j]);
        (items[i], items[j]) = (a.min(b), a.max(b));
    }
    &items[..n]
}

/// [`crate::tree::split::find_split`] for a node of 3 to [`FEW_ROWS`] rows of a subtree
/// listed with the lossless codes `levels` (every feature has them): the same draws and
/// cuts as from its lists.
pub(crate) fn find_split_few<T: Feature, C: Criterion>(
    levels: &Levels,
    node: Node<'_, '_, T, C>,
    draw: NodeDraw<'_>,
) -> (Option<ChosenSplit>, usize) {
    let Node { ctx, s, rows } = node;
    debug_assert!((FEW_ROWS - 1..=FEW_ROWS).contains(&rows.samples.len()));
    let mut source = Few {
        levels,
        ctx,
        s,
        rows,
    };
    draw_split(&mut source, draw)
}

#[cfg(test)]
mod tests {
    use crate::data::{Layout, Matrix};
    use crate::tree::criterion::{Entropy, Gini, SquaredError};
    use crate::tree::split::source::few::*;
    use crate::tree::split::source::pair::tests::{search, Outcome};
    use crate::tree::split::source::pair::PAIR_ROWS;

    /// A node of three or four rows split from their codes as the sorted search of their
    /// values splits it, bit for bit, draws and rows included: with ties of codes, targets
    /// and weights whose proxies tie up to rounding only (zeros, tiny and huge targets,
    /// weights 10⁴⁰ apart), regression and two to four classes (sums in registers and in
    /// a slice).
    #[test]
    fn few_rows_split_as_the_sorted_search() {
        let mut rng = TreeRng::new(12);
        let targets = [0.0, -0.0, 1e-300, -3e-310, 1.5, -2.25, 1e200, 7.0];
        let weights = [1.0, 0.3, 1e-20, 1e20, 7.0, 2.0];
        for trial in 0..3000 {
            let (n, p, m) = (12, 1 + rng.below(6), PAIR_ROWS + 1 + trial % 2);
            let levels_of = |j: usize| 1 + j % 4;
            let data: Vec<f32> = (0..n * p)
                .map(|i| (rng.below(levels_of(i % p)) as f32) * 0.7 - 1.0)
                .collect();
            let x = Matrix::new(&data, n, p, Layout::RowMajor).unwrap();
            let Some(levels) = Levels::new(&x, false) else {
                continue;
            };
            let mut all: Vec<u32> = (0..n as u32).collect();
            for j in (1..n).rev() {
                all.swap(j, rng.below(j + 1));
            }
            let samples = &all[..m];
            let ws: Vec<f64> = (0..m).map(|_| weights[rng.below(6)]).collect();
            let mut features: Vec<u32> = (0..p as u32).collect();
            for j in (1..p).rev() {
                features.swap(j, rng.below(j + 1));
            }
            let (k, seed) = (1 + rng.below(p), trial as u64);
            let both = |f: &dyn Fn(bool) -> Outcome| assert_eq!(f(true), f(false), "{trial}");
            let ys: Vec<f64> = (0..m).map(|_| targets[rng.below(8)]).collect();
            let mse = SquaredError { y: &[] };
            let rows = (samples, &ys[..], &ws[..]);
            both(&|codes| search(codes, &x, &levels, &mse, rows, k, &features, seed));
            let n_classes = 2 + trial % 3;
            let classes: Vec<u32> = (0..m).map(|_| rng.below(n_classes) as u32).collect();
            let rows = (samples, &classes[..], &ws[..]);
            let gini = Gini::new(&[], n_classes);
            both(&|codes| search(codes, &x, &levels, &gini, rows, k, &features, seed));
            let entropy = Entropy::new(&[], n_classes);
            both(&|codes| search(codes, &x, &levels, &entropy, rows, k, &features, seed));
        }
    }
}
