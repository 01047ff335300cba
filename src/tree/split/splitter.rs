//! The split search of one tree, and what it keeps from node to node: the buffers of
//! every search, the code lists of the small subtree being grown ([`crate::tree::split::state::code_lists`];
//! the histogram search's, and the exact search's of lossless codes) and the bins kept for
//! pending nodes ([`crate::tree::split::source::binned`], [`crate::tree::split::state::kept_codes`]), through each node's life
//! (begun, split, its children's bins kept, ended). The builder only says which node to
//! split and whether a split is kept; which candidate source scores a node is decided by
//! the route table ([`crate::tree::split::route`]).

use crate::data::{Feature, Levels, Matrix};
use crate::parallel::current_threads;
use crate::params::CategoryGuards;
use crate::tree::criterion::Criterion;
use crate::tree::split::state::code_lists::{CodeLists, RankItem};
use crate::tree::split::state::node_bins::{BinStack, ChildScans, CodeColumns, NodeBins, Spare};
use crate::tree::split::{NodeCtx, NodeRows, SplitBufs};
use crate::tree::Word;

/// The split search of one tree (rows of type `T`, targets of type `Y`).
pub(crate) struct Splitter<T: Feature, Y> {
    pub(super) bufs: SplitBufs<T>,
    /// The listed subtree of the histogram search, or of the exact search (unused by the
    /// other searches).
    pub(super) lists: CodeLists<T, Y>,
    /// Whether nodes of at most `list_rows` rows are split from lists (of lossless codes
    /// for the exact rule, of X's bin codes otherwise: [`crate::tree::split::route`]).
    pub(super) listed: bool,
    pub(super) list_rows: usize,
    /// The lists of the exact search of ranked columns ([`crate::data::Ranks`]), which
    /// list every node of the tree when `ranked`.
    pub(super) rank_lists: CodeLists<T, Y, RankItem>,
    pub(super) ranked: bool,
    /// The bins of the histogram search's pending nodes, when they are subtracted.
    pub(super) bins: Option<BinStack>,
    /// The bins of the node being split, when kept.
    pub(super) node_bins: Option<NodeBins>,
    /// Bins buffers of an earlier tree, for this tree's stack once it is made.
    pub(super) spare: Vec<NodeBins>,
    /// The bins are the exact search's, of the columns with lossless codes
    /// ([`crate::tree::split::state::kept_codes`]), not the histogram search's.
    pub(super) code_bins: bool,
    /// Best-first growth: kept bins are looked up among all pending ones.
    pub(super) any_order: bool,
    /// Large nodes fill their bins in parallel over features ([`BinStack::in_parallel`]).
    pub(super) parallel_bins: bool,
    /// Per feature, whether its bin code [`crate::data::NAN_CODE`] is the missing-values
    /// bin (the histogram search of X with NaN); empty when no feature's is.
    pub(super) nan_bins: Vec<bool>,
    /// Per feature, whether it is categorical; empty when none is.
    pub(super) categorical: Vec<bool>,
}

impl<T: Feature, Y: Word> Splitter<T, Y> {
    /// A search for trees of up to `n` rows and a criterion of `stats_len` statistics,
    /// reading every node's candidates from gathered columns.
    pub fn new(n: usize, stats_len: usize) -> Self {
        Splitter {
            bufs: SplitBufs::new(n, stats_len),
            lists: CodeLists::new(),
            listed: false,
            list_rows: 0,
            rank_lists: CodeLists::new(),
            ranked: false,
            bins: None,
            node_bins: None,
            spare: Vec::new(),
            code_bins: false,
            any_order: false,
            parallel_bins: false,
            nan_bins: Vec::new(),
            categorical: Vec::new(),
        }
    }

    /// Splits the features flagged in `categorical` by sets of their categories
    /// ([`crate::tree::split::scan::categories`], the best split within `guards`); their
    /// values are category codes.
    pub fn with_categorical(&mut self, categorical: &[bool], guards: CategoryGuards) {
        self.categorical = categorical.to_vec();
        self.bufs.search.categories.guards = guards;
    }

    /// The set of the last categorical split chosen ([`super::ChosenSplit::is_categorical`]):
    /// bit `c` of word `c / 64` for each category that goes left, every category up to the
    /// node's largest given a side.
    pub fn chosen_categories(&self) -> &[u64] {
        &self.bufs.best_categories
    }

    /// Reads bin code [`crate::data::NAN_CODE`] of the features flagged in `missing` as
    /// their missing-values bin ([`crate::tree::split::scan::nan_bins`]): for the histogram search of X with
    /// NaN, whose flags these are.
    pub fn with_nan_bins(&mut self, missing: &[bool]) {
        self.nan_bins = missing.to_vec();
    }

    /// Lets large nodes fill their histogram bins in parallel over features, on the pool
    /// the caller runs in ([`BinStack::in_parallel`]): for trees grown one at a time (the
    /// booster's); the bins, so the trees, are the same for any number of threads.
    pub fn fill_bins_in_parallel(&mut self) {
        self.parallel_bins = true;
    }

    /// Lets this tree's bins and rank lists reuse `spare`, an earlier tree's buffers
    /// ([`crate::tree::split::SpareBins`]); before [`Splitter::depth_first`] or [`Splitter::best_first`].
    pub fn reuse_bins(&mut self, mut spare: Spare) {
        self.spare = spare.bins;
        if let Some(lists) = spare.lists.pop() {
            self.rank_lists.lists = lists;
        }
    }

    /// The tree's bins and rank lists buffers, for a later tree ([`Splitter::reuse_bins`]).
    pub fn spare_bins(&mut self) -> Spare {
        let mut bins = self
            .bins
            .take()
            .map(BinStack::into_spare)
            .unwrap_or_default();
        bins.extend(self.node_bins.take());
        let lists = std::mem::take(&mut self.rank_lists.lists);
        Spare {
            bins,
            lists: (lists.capacity() > 0)
                .then_some(lists)
                .into_iter()
                .collect(),
        }
    }

    /// Starts the node `start..end`. Bins kept for it by its parent are the innermost
    /// pending ones: taken now, so that a node that turns out a leaf leaves none behind.
    /// The median search's ranks of the last node's targets are forgotten.
    pub fn begin_node(&mut self, start: usize, end: usize) {
        self.bufs.search.median.forget();
        let any_order = self.any_order;
        self.node_bins = self
            .bins
            .as_mut()
            .and_then(|b| b.take(start, end, any_order));
    }

    /// The node started last keeps its bins until it is split ([`Splitter::resume_node`]),
    /// or while they fit.
    pub fn defer_children(&mut self) {
        if let (Some(stack), Some(b)) = (self.bins.as_mut(), self.node_bins.take()) {
            stack.defer(b);
        }
    }

    /// Takes back the bins of the node `start..end` that deferred its children's, if they
    /// were kept, to split it ([`Splitter::keep_children`], then [`Splitter::end_node`]).
    pub fn resume_node(&mut self, start: usize, end: usize) {
        self.node_bins = self.bins.as_mut().and_then(|b| b.take(start, end, true));
    }

    /// Ends the node started last: its bins, unless handed to its children, are recycled.
    pub fn end_node(&mut self) {
        if let (Some(stack), Some(b)) = (self.bins.as_mut(), self.node_bins.take()) {
            stack.recycle(b);
        }
    }

    /// Whether the children of a split may be scanned as their bins are kept: when the
    /// histogram search fills them in parallel ([`ChildScans`]).
    pub fn scans_children(&self) -> bool {
        // (A categorical candidate's scan writes its set, which a slot's cut cannot keep.)
        let ordered = self.categorical.is_empty();
        ordered
            && self.parallel_bins
            && !self.code_bins
            && self.bins.is_some()
            && current_threads() > 1
    }

    /// The builder keeps the split of the node: the bins of its children that will be
    /// split from bins are kept (see [`BinStack::keep_children`]), and scanned with
    /// `children`, their contexts and rows (left, right), when
    /// [`Splitter::scans_children`].
    #[allow(clippy::too_many_arguments)]
    pub fn keep_children<C: Criterion<Y = Y>>(
        &mut self,
        x: &Matrix<'_, T>,
        levels: Option<&Levels>,
        crit: &C,
        rows: &NodeRows<'_, Y>,
        n_left: usize,
        varying: &[u32],
        split_rows: usize,
        children: Option<[(NodeCtx<'_, C>, usize); 2]>,
    ) {
        if let (Some(stack), Some(nb)) = (self.bins.as_mut(), self.node_bins.take()) {
            let bufs = &mut self.bufs;
            let cols = match (self.code_bins, levels) {
                (true, Some(levels)) => CodeColumns::Levels(levels),
                _ => CodeColumns::X(x),
            };
            let nan = (!self.nan_bins.is_empty()).then_some(&self.nan_bins[..]);
            let scans = children.map(|[(l, nl), (r, nr)]| ChildScans {
                ctx: [l, r],
                n: [nl, nr],
                nan,
            });
            let scans = scans.as_ref();
            stack.keep_children(
                cols, crit, bufs, nb, rows, n_left, varying, split_rows, scans,
            );
        }
    }
}
