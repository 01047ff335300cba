//! The split search of one tree, and what it keeps from node to node: the buffers of
//! every search, the code lists of the small subtree being grown ([`super::code_lists`];
//! the histogram search's, and the exact search's of lossless codes) and the bins kept for
//! pending nodes ([`super::histograms`], [`super::kept_codes`]). The builder only says
//! which node to split and whether a
//! split is kept; which candidate source scores a node is decided here.

use super::code_lists::{list_rows, lists_pay, CodeLists, RankItem};
use super::few::{find_split_few, FEW_ROWS};
use super::histograms::find_split_binned;
use super::kept_codes::{kept_stack, Kept};
use super::listed::find_split_listed;
use super::node_bins::{BinStack, ChildScans, CodeColumns, NodeBins, Spare};
use super::pair::PAIR_ROWS;
use super::{find_split, ChosenSplit, Columns, NodeCtx, NodeRows, SplitBufs, ThresholdRule};
use crate::data::{Feature, Levels, Matrix};
use crate::parallel::current_threads;
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;
use crate::tree::Word;

/// The split search of one tree (rows of type `T`, targets of type `Y`).
pub(crate) struct Splitter<T: Feature, Y> {
    bufs: SplitBufs<T>,
    /// The listed subtree of the histogram search, or of the exact search (unused by the
    /// other searches).
    lists: CodeLists<T, Y>,
    /// Whether nodes of at most `list_rows` rows are split from lists (of lossless codes
    /// for a rule that [`ThresholdRule::LISTS_CODES`], of X's bin codes otherwise).
    listed: bool,
    list_rows: usize,
    /// The lists of the exact search of ranked columns ([`crate::data::Ranks`]), which
    /// list every node of the tree when `ranked`.
    rank_lists: CodeLists<T, Y, RankItem>,
    ranked: bool,
    /// The bins of the histogram search's pending nodes, when they are subtracted.
    bins: Option<BinStack>,
    /// The bins of the node being split, when kept.
    node_bins: Option<NodeBins>,
    /// Bins buffers of an earlier tree, for this tree's stack once it is made.
    spare: Vec<NodeBins>,
    /// The bins are the exact search's, of the columns with lossless codes
    /// ([`super::kept_codes`]), not the histogram search's.
    code_bins: bool,
    /// Best-first growth: kept bins are looked up among all pending ones.
    any_order: bool,
    /// Large nodes fill their bins in parallel over features ([`BinStack::in_parallel`]).
    parallel_bins: bool,
    /// Per feature, whether its bin code [`crate::data::NAN_CODE`] is the missing-values
    /// bin (the histogram search of X with NaN); empty when no feature's is.
    nan_bins: Vec<bool>,
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
        }
    }

    /// Reads bin code [`crate::data::NAN_CODE`] of the features flagged in `missing` as
    /// their missing-values bin ([`super::nan_bins`]): for the histogram search of X with
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

    /// Prepares depth-first growth with the threshold rule `R` over `features` (of X's
    /// `n_cols`): the histogram search then grows small subtrees from lists and keeps the
    /// bins of larger nodes, when K (`max_features`) is large enough for that to pay. The
    /// exact search keeps those of the columns with lossless codes `coded`, given only when
    /// every sum of the tree is whole ([`super::kept_codes`]); with `listable` (every
    /// feature has lossless codes, X no NaN, and the sums are not whole, so not
    /// subtracted) it grows small subtrees from lists of the codes, without bins.
    pub fn depth_first<R: ThresholdRule>(
        &mut self,
        features: &[u32],
        n_cols: usize,
        proxy_len: usize,
        max_features: usize,
        coded: Option<&Levels>,
        listable: bool,
    ) {
        if let Some(levels) = coded.filter(|_| R::KEEPS_CODE_BINS) {
            self.bins = kept_stack(levels, features, n_cols, proxy_len, max_features);
            self.code_bins = self.bins.is_some();
        } else if R::LISTS_CODES {
            self.listed = listable && lists_pay(max_features, features.len());
            self.list_rows = list_rows(features.len(), self.any_order);
        } else {
            self.listed = R::LISTED && lists_pay(max_features, features.len());
            self.list_rows = list_rows(features.len(), self.any_order);
            if self.listed {
                let parallel = self.parallel_bins;
                self.bins = BinStack::new(features, n_cols, proxy_len, self.list_rows).map(|b| {
                    if parallel {
                        b.in_parallel()
                    } else {
                        b
                    }
                });
            }
        }
        if let Some(stack) = self.bins.as_mut() {
            stack.reuse(std::mem::take(&mut self.spare));
        }
    }

    /// Prepares depth-first growth with the exact search of every column's ranks (X's
    /// [`crate::data::Ranks`]), drawing `max_features` of `features`: every node is split
    /// from the tree's rank lists, when K ≥ p/2 (every split partitions every list).
    /// Returns whether it is; [`Splitter::depth_first`] is to be called otherwise.
    pub fn depth_first_ranked(&mut self, features: &[u32], max_features: usize) -> bool {
        self.ranked = lists_pay(max_features, features.len());
        self.ranked
    }

    /// Lets this tree's bins and rank lists reuse `spare`, an earlier tree's buffers
    /// ([`super::SpareBins`]); before [`Splitter::depth_first`] or [`Splitter::best_first`].
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

    /// [`Splitter::depth_first`] for best-first growth, whose frontier nodes interleave:
    /// kept bins are then found by their rows among all pending ones, and the lists of a
    /// subtree are rebuilt whenever another subtree's replaced them, so fewer nodes are
    /// listed. The builder then keeps bins for every feature (no node inherits a constant
    /// prefix). Asked for by the booster only (`FitSession::grow_on`): forests keep their
    /// search, and their bytes.
    pub fn best_first<R: ThresholdRule>(
        &mut self,
        features: &[u32],
        n_cols: usize,
        proxy_len: usize,
        max_features: usize,
    ) {
        self.any_order = true;
        self.depth_first::<R>(features, n_cols, proxy_len, max_features, None, false);
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

    /// Draws candidates for the node `rows` (at `start` in the sample buffer) and returns
    /// the best split found, already applied to the rows, with the new length of the
    /// constant prefix of `features` (see [`super`]). Nodes of a ranked tree and of the
    /// listed subtree are split from lists, nodes with kept bins from their bins, others from gathered
    /// columns (of X, or of the lossless codes `levels` for the columns that have them, or
    /// of their kept bins). `split_rows` is the fewest rows a child needs to be split.
    #[allow(clippy::too_many_arguments)]
    pub fn find<C: Criterion<Y = Y>, R: ThresholdRule>(
        &mut self,
        x: &Matrix<'_, T>,
        levels: Option<&Levels>,
        ctx: &NodeCtx<'_, C>,
        rows: &mut NodeRows<'_, Y>,
        start: usize,
        features: &mut [u32],
        n_constant: usize,
        max_features: usize,
        split_rows: usize,
        rng: &mut TreeRng,
    ) -> (Option<ChosenSplit>, usize) {
        let n = rows.samples.len();
        let bufs = &mut self.bufs;
        let nan = (!self.nan_bins.is_empty()).then_some(&self.nan_bins[..]);
        let ranked = levels.filter(|_| self.ranked);
        if let Some((levels, ranks)) = ranked.and_then(|l| Some((l, l.ranks()?))) {
            let lists = &mut self.rank_lists;
            if !lists.covers(start, start + n) {
                let varying = &features[n_constant..];
                lists.build_ranked(ranks, x.n_rows(), rows, start, varying);
            }
            find_split_listed(
                lists,
                ctx,
                bufs,
                rows,
                start,
                features,
                n_constant,
                max_features,
                split_rows,
                None,
                Some(levels),
                rng,
            )
        } else if self.listed && n <= self.list_rows {
            let lossless = levels.filter(|_| R::LISTS_CODES);
            if let Some(levels) = lossless.filter(|_| (PAIR_ROWS..=FEW_ROWS).contains(&n)) {
                return find_split_few(
                    levels,
                    ctx,
                    bufs,
                    rows,
                    features,
                    n_constant,
                    max_features,
                    rng,
                );
            }
            if !self.lists.covers(start, start + n) {
                let varying = &features[n_constant..];
                self.lists.build(x, lossless, rows, start, varying);
            }
            // The fewest rows a child needs for its lists to be written: children split
            // by `find_split_few` read none either.
            let listed_child_rows = match lossless {
                Some(_) => split_rows.max(FEW_ROWS + 1),
                None => split_rows,
            };
            find_split_listed(
                &mut self.lists,
                ctx,
                bufs,
                rows,
                start,
                features,
                n_constant,
                max_features,
                listed_child_rows,
                nan,
                lossless,
                rng,
            )
        } else if let (Some(stack), false) = (self.bins.as_mut(), self.code_bins) {
            let nb = self.node_bins.get_or_insert_with(|| {
                let node = (&rows.samples[..], &rows.ys[..], &rows.ws[..]);
                let varying = &features[n_constant..];
                stack.fill(CodeColumns::X(x), ctx.crit, bufs, node, start, varying)
            });
            find_split_binned(
                x,
                stack,
                nb,
                ctx,
                bufs,
                rows,
                features,
                n_constant,
                max_features,
                nan,
                rng,
            )
        } else {
            // The exact search's kept bins (`code_bins`), for the nodes large enough.
            let kept = match (self.bins.as_mut(), levels) {
                (Some(stack), Some(levels)) if n > stack.list_rows() => {
                    let nb = self.node_bins.get_or_insert_with(|| {
                        let node = (&rows.samples[..], &rows.ys[..], &rows.ws[..]);
                        let varying = &features[n_constant..];
                        let codes = CodeColumns::Levels(levels);
                        stack.fill(codes, ctx.crit, bufs, node, start, varying)
                    });
                    Some(Kept::new(stack, nb))
                }
                _ => None,
            };
            let missing = levels.and_then(Levels::missing).or(nan);
            let cols = Columns { x, levels, missing };
            find_split::<T, C, R>(
                cols,
                ctx,
                bufs,
                rows,
                features,
                n_constant,
                max_features,
                kept,
                rng,
            )
        }
    }

    /// Whether the children of a split may be scanned as their bins are kept: when the
    /// histogram search fills them in parallel ([`ChildScans`]).
    pub fn scans_children(&self) -> bool {
        self.parallel_bins && !self.code_bins && self.bins.is_some() && current_threads() > 1
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
