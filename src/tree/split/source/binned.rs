//! The histogram splitter's candidate source for a node with kept bins ([`NodeBins`]):
//! every candidate scored from the node's own bins by [`crate::tree::split::scan::bins::scan_bins`].
//!
//! A candidate of a node above the list size ([`crate::tree::split::state::code_lists`]) is scored from its
//! bins (`crate::tree::split::scan::bins`): the bins of the codes its gathered rows occupy, or the node's
//! own bins. When K ≥ p/2 ([`crate::tree::split::state::code_lists::lists_pay`]: most features are read at
//! every node anyway) the bins of *every* varying feature are kept with the node
//! ([`crate::tree::split::state::node_bins`]), and a split gathers only its smaller child's rows.

use crate::data::{Feature, Matrix};
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;
use crate::tree::split::draw::{draw_split, CandidateSource, NodeDraw};
use crate::tree::split::read::gather::gather;
use crate::tree::split::read::partition::{partition_rows, partition_rows_by_sample};
use crate::tree::split::read::side::{category_left, category_value};
use crate::tree::split::scan::categories::best_of_bins;
use crate::tree::split::scan::nan_bins::code_value;
use crate::tree::split::source::Node;
use crate::tree::split::state::node_bins::{
    category_slot_bounds, slot_bounds, slot_cut, BinStack, NodeBins,
};
use crate::tree::split::{ChosenSplit, Cut, NodeCtx, NodeRows, SplitBufs, CATEGORY_SET};
use crate::tree::{goes_left, Missing};

/// A node's candidates scored from its kept bins by [`crate::tree::split::scan::bins::scan_bins`].
struct Binned<'a, 'r, T: Feature, C: Criterion> {
    x: &'a Matrix<'a, T>,
    stack: &'a BinStack,
    nb: &'a mut NodeBins,
    ctx: &'a NodeCtx<'a, C>,
    s: &'a mut SplitBufs<T>,
    rows: &'a mut NodeRows<'r, C::Y>,
    /// The node's rows.
    n: usize,
    /// Per feature, whether code [`crate::data::NAN_CODE`] is its missing-values bin (None: no feature's).
    nan: Option<&'a [bool]>,
    /// Per feature, whether it is categorical (None: none is), and whether the last
    /// candidate searched was.
    categorical: Option<&'a [bool]>,
    searched_categorical: bool,
}

impl<T: Feature, C: Criterion> Binned<'_, '_, T, C> {
    fn is_categorical(&self, f: u32) -> bool {
        self.categorical.is_some_and(|c| c[f as usize])
    }

    fn nan_bin(&self, f: u32) -> bool {
        self.nan.is_some_and(|m| m[f as usize])
    }
}

impl<T: Feature, C: Criterion> CandidateSource for Binned<'_, '_, T, C> {
    /// The candidate's bin slot, its first and last non-empty non-missing codes, and
    /// whether its missing-values bin is not empty.
    type Bounds = (usize, usize, usize, bool);

    type Value = T;

    #[inline(always)]
    fn node_rows(&self) -> usize {
        self.n
    }

    #[inline(always)]
    fn bounds(&mut self, _k: usize, f: u32) -> Option<Self::Bounds> {
        let sl = self.stack.slot[f as usize] as usize;
        let nan = self.nan_bin(f);
        let categorical = self.is_categorical(f);
        let (bins, range) = self.stack.slot_of(self.nb, sl);
        if categorical {
            // Every non-empty code is a category, the missing-values bin too.
            let (lo, hi) = category_slot_bounds(bins, range, self.stack.stride)?;
            return Some((sl, lo, hi, nan));
        }
        let (lo, hi, nan) = slot_bounds(bins, range, self.stack.stride, nan)?;
        Some((sl, lo, hi, nan))
    }

    #[inline(always)]
    fn search(
        &mut self,
        _k: usize,
        f: u32,
        (sl, lo, hi, nan): Self::Bounds,
        bar: f64,
        _rng: &mut TreeRng,
    ) -> Option<Cut> {
        self.searched_categorical = self.is_categorical(f);
        if let Some(cut) = self.nb.scanned(sl) {
            return cut;
        }
        let bins = self.stack.bins_of(self.nb, sl);
        let stride = self.stack.stride;
        if self.searched_categorical {
            let b = &mut self.s.search.categories;
            return best_of_bins((bins, stride), (lo, hi, nan), b, self.ctx, self.n, bar);
        }
        let left = &mut self.s.search.left;
        slot_cut(bins, (lo, hi, nan), stride, self.ctx, self.n, f, bar, left)
    }

    #[inline(always)]
    fn new_best(&mut self, _k: usize, _cut: &Cut) {
        if self.searched_categorical {
            let s = &mut *self.s;
            s.best_categories.clone_from(&s.search.categories.left);
        }
    }

    fn apply(&mut self, feature: u32, cut: Cut, _unsettled: &[u32]) -> ChosenSplit {
        if self.is_categorical(feature) {
            return self.apply_categories(feature, cut);
        }
        let s = &mut *self.s;
        let (buf, t, unit) = (&mut s.partition_buf, cut.threshold, self.ctx.unit_weights);
        if let (Some(column), Some(n_left)) = (self.x.column(feature as usize), cut.n_left) {
            // The column read at each row's sample id as the row moves: no gathered copy.
            let side = cut.missing;
            match side {
                Missing::Unseen => partition_rows_by_sample(n_left, self.rows, buf, unit, |i| {
                    goes_left(column[i as usize].to_f64(), t, false)
                }),
                _ => partition_rows_by_sample(n_left, self.rows, buf, unit, |i| {
                    goes_left(code_value(column[i as usize]), t, side == Missing::Left)
                }),
            }
            return ChosenSplit {
                feature,
                threshold: t,
                n_left,
                missing: side,
            };
        }
        // A column that is not a slice (row-major or sparse X): gathered first.
        gather(self.x, feature as usize, self.rows.samples, &mut s.batch[0]);
        let col = &s.batch[0];
        let n_left = match cut.missing {
            Missing::Unseen => partition_rows(cut.n_left, self.rows, buf, unit, |r| {
                goes_left(col[r].to_f64(), t, false)
            }),
            // The node's rows include the missing-values bin.
            side => partition_rows(cut.n_left, self.rows, buf, unit, |r| {
                goes_left(code_value(col[r]), t, side == Missing::Left)
            }),
        };
        ChosenSplit {
            feature,
            threshold: t,
            n_left,
            missing: cut.missing,
        }
    }
}

impl<T: Feature, C: Criterion> Binned<'_, '_, T, C> {
    /// [`CandidateSource::apply`] of a categorical split: the rows whose category's code is
    /// in the best set go left (the missing-values bin to the cut's side).
    fn apply_categories(&mut self, feature: u32, cut: Cut) -> ChosenSplit {
        let nan_bin = self.nan_bin(feature);
        let s = &mut *self.s;
        let (buf, unit, set) = (
            &mut s.partition_buf,
            self.ctx.unit_weights,
            &s.best_categories,
        );
        let ml = cut.missing == Missing::Left;
        let goes = |v: T| category_left(category_value(v, nan_bin), set, ml);
        let n_left = match (self.x.column(feature as usize), cut.n_left) {
            (Some(column), Some(n_left)) => {
                partition_rows_by_sample(n_left, self.rows, buf, unit, |i| {
                    goes(column[i as usize])
                });
                n_left
            }
            _ => {
                gather(self.x, feature as usize, self.rows.samples, &mut s.batch[0]);
                let col = &s.batch[0];
                partition_rows(cut.n_left, self.rows, buf, unit, |r| goes(col[r]))
            }
        };
        ChosenSplit {
            feature,
            threshold: CATEGORY_SET,
            n_left,
            missing: cut.missing,
        }
    }
}

/// [`crate::tree::split::find_split`] for a node with bins `nb`: the same draws, every candidate
/// scored from its bins by [`crate::tree::split::scan::bins::scan_bins`]. Applies the split to the rows.
pub(crate) fn find_split_binned<T: Feature, C: Criterion>(
    x: &Matrix<'_, T>,
    stack: &BinStack,
    nb: &mut NodeBins,
    node: Node<'_, '_, T, C>,
    draw: NodeDraw<'_>,
    (nan, categorical): (Option<&[bool]>, Option<&[bool]>),
) -> (Option<ChosenSplit>, usize) {
    let Node { ctx, s, rows } = node;
    let mut source = Binned {
        x,
        stack,
        nb,
        ctx,
        s,
        n: rows.samples.len(),
        rows,
        nan,
        categorical,
        searched_categorical: false,
    };
    draw_split(&mut source, draw)
}
