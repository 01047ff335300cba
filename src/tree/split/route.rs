//! Which candidate source splits a node: the one route table of the split search.
//!
//! A tree's plan is chosen once, before its root ([`Splitter::depth_first`],
//! [`Splitter::best_first`]); then every node takes the first row of this table that
//! applies ([`Splitter::route`]):
//!
//! | route      | when                                                       | source (in `source/`)    |
//! |------------|------------------------------------------------------------|--------------------------|
//! | `Ranked`   | the plan lists ranks: exact rule, booster, K ≥ p/2         | `listed`, rank lists     |
//! | `Pair`     | the plan lists lossless codes, the node has 2 rows         | `pair`                   |
//! | `Few`      | the plan lists lossless codes, the node has 3 or 4 rows    | `few`                    |
//! | `Listed`   | the plan lists codes, the node has at most `list_rows`     | `listed`, code lists     |
//! | `Binned`   | the histogram rule keeps node bins (K ≥ p/2)               | `binned`                 |
//! | `Kept`     | the exact rule keeps bins of lossless codes, larger nodes  | `gathered` + kept bins   |
//! | `Direct`   | random rule, complete dense X, small node or narrow rows   | `direct`                 |
//! | `Gathered` | otherwise                                                  | `gathered`               |
//!
//! A tree with a categorical feature plans no ranks; its categorical candidates are read
//! by category from the histogram search's lists and node bins as from gathered codes.
//!
//! Inside the gathered source each candidate still picks its reading (values sorted,
//! codes binned or counted, wide codes, sparse entries, NaN passes).
//!
//! The plan's thresholds: lists pay when K ≥ p/2 ([`lists_pay`]); they cover nodes of at
//! most [`list_rows`] rows (1024 rows depth first, 256 best first, at most 8 MiB of lists);
//! pairs and few rows: [`PAIR_ROWS`]..=[`FEW_ROWS`]; direct reads: [`reads_directly`].
//! Those that decide the lists and bins change how sums are rounded, so changing them
//! changes models; every other route gives the same bits as `Gathered` (each has a
//! path-against-path test).

use crate::data::{Feature, Levels, Matrix, Ranks};
use crate::tree::criterion::Criterion;
use crate::tree::split::draw::NodeDraw;
use crate::tree::split::source::binned::find_split_binned;
use crate::tree::split::source::direct::{find_split_direct, reads_directly};
use crate::tree::split::source::few::{find_split_few, FEW_ROWS};
use crate::tree::split::source::listed::find_split_listed;
use crate::tree::split::source::pair::{find_split_pair, PAIR_ROWS};
use crate::tree::split::source::Node;
use crate::tree::split::state::code_lists::{list_rows, lists_pay};
use crate::tree::split::state::kept_codes::{kept_stack, Kept};
use crate::tree::split::state::node_bins::{BinStack, CodeColumns};
use crate::tree::split::Splitter;
use crate::tree::split::{find_split, ChosenSplit, Columns, NodeCtx, NodeRows, ThresholdRule};
use crate::tree::Word;

/// The candidate source of one node: a row of the module's table, with the codes it reads.
#[derive(Clone, Copy)]
pub(crate) enum Route<'l> {
    Ranked(&'l Levels, &'l Ranks),
    Pair(&'l Levels),
    Few(&'l Levels),
    /// Lists of the lossless codes, or (None) of X's bin codes.
    Listed(Option<&'l Levels>),
    Binned,
    Kept(&'l Levels),
    Direct,
    Gathered,
}

/// What a tree's plan is chosen from.
#[derive(Clone, Copy)]
pub(crate) struct Planning<'l> {
    /// X's columns.
    pub n_cols: usize,
    /// The sums of the criterion's proxy (what bins hold).
    pub proxy_len: usize,
    /// K, the candidates a node draws.
    pub max_features: usize,
    /// The lossless codes of the columns that have them.
    pub levels: Option<&'l Levels>,
    /// Every sum of the tree is a whole number, or the tree accepts sums in any order
    /// (a booster), so bins may be subtracted.
    pub whole_sums: bool,
    /// The criterion reads the rows' targets in order (absolute error), not sums.
    pub order_statistic: bool,
}

impl<T: Feature, Y: Word> Splitter<T, Y> {
    /// Plans depth-first growth with the threshold rule `R` over `features`. A booster's
    /// exact search of ranked columns lists every node by their ranks, when that pays
    /// ([`Splitter::depth_first_ranked`]). Otherwise the exact search keeps the bins of the
    /// columns with lossless codes when every sum of the tree is whole (they subtract
    /// exactly, so the forests' trees are unchanged;
    /// [`crate::tree::split::state::kept_codes`]), or lists those codes when every feature
    /// has them and X no NaN (the order-statistic search reads the rows' values, not sums:
    /// never listed); see [`Splitter::lists_and_bins`].
    pub fn depth_first<R: ThresholdRule>(&mut self, features: &[u32], plan: Planning<'_>) {
        let sums = !plan.order_statistic;
        // A categorical column has no ranks, lists or node bins: its nodes are gathered.
        let categorical = self.categorical.iter().any(|&c| c);
        let ranked = R::KIND.lists_lossless_codes()
            && !categorical
            && sums
            && plan.levels.and_then(Levels::ranks).is_some()
            && self.depth_first_ranked(features, plan.max_features);
        if ranked {
            return;
        }
        let coded = plan.levels.filter(|_| plan.whole_sums);
        let listable = !plan.whole_sums
            && sums
            && plan.levels.is_some_and(|l| {
                let every = features.iter().all(|&f| l.column(f as usize).is_some());
                every && l.missing().is_none()
            });
        self.lists_and_bins::<R>(features, plan, coded, listable);
    }

    /// The lists and bins of a tree grown with the threshold rule `R` over `features`.
    /// The histogram search grows small subtrees from lists and keeps the bins of larger
    /// nodes when K is large enough for that to pay. The exact search keeps those of the
    /// columns with lossless codes `coded`; with `listable` (every feature has lossless
    /// codes, X no NaN, and the sums are not whole, so not subtracted) it grows small
    /// subtrees from lists of the codes, without bins.
    fn lists_and_bins<R: ThresholdRule>(
        &mut self,
        features: &[u32],
        plan: Planning<'_>,
        coded: Option<&Levels>,
        listable: bool,
    ) {
        let (n_cols, proxy_len, max_features) = (plan.n_cols, plan.proxy_len, plan.max_features);
        if let Some(levels) = coded.filter(|_| R::KIND.keeps_code_bins()) {
            self.bins = kept_stack(levels, features, n_cols, proxy_len, max_features);
            self.code_bins = self.bins.is_some();
        } else if R::KIND.lists_lossless_codes() {
            self.listed = listable && lists_pay(max_features, features.len());
            self.list_rows = list_rows(features.len(), self.any_order);
        } else {
            self.listed = R::KIND.lists_bin_codes() && lists_pay(max_features, features.len());
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

    /// Plans depth-first growth with the exact search of every column's ranks (X's
    /// [`crate::data::Ranks`]), drawing `max_features` of `features`: every node is split
    /// from the tree's rank lists, when K ≥ p/2 (every split partitions every list).
    /// Returns whether it is.
    fn depth_first_ranked(&mut self, features: &[u32], max_features: usize) -> bool {
        self.ranked = lists_pay(max_features, features.len());
        self.ranked
    }

    /// [`Splitter::depth_first`] for best-first growth, whose frontier nodes interleave:
    /// kept bins are then found by their rows among all pending ones, and the lists of a
    /// subtree are rebuilt whenever another subtree's replaced them, so fewer nodes are
    /// listed. The builder then keeps bins for every feature (no node inherits a constant
    /// prefix). Asked for by the booster only (`FitSession::grow_on`): forests keep their
    /// search, and their bytes.
    pub fn best_first<R: ThresholdRule>(&mut self, features: &[u32], plan: Planning<'_>) {
        self.any_order = true;
        self.lists_and_bins::<R>(features, plan, None, false);
    }

    /// The route of a node of `n` rows: the first row of the module's table that applies.
    /// `cols` are the node's columns, `ctx` and `rows` its context and rows.
    pub(super) fn route<'l, C: Criterion<Y = Y>, R: ThresholdRule>(
        &self,
        n: usize,
        cols: Columns<'l, T>,
        ctx: &NodeCtx<'_, C>,
        rows: &NodeRows<'_, Y>,
        max_features: usize,
    ) -> Route<'l> {
        let levels = cols.levels;
        let ranked = levels.filter(|_| self.ranked);
        if let Some((levels, ranks)) = ranked.and_then(|l| Some((l, l.ranks()?))) {
            return Route::Ranked(levels, ranks);
        }
        if self.listed && n <= self.list_rows {
            let lossless = levels.filter(|_| R::KIND.lists_lossless_codes());
            return match lossless {
                Some(levels) if n == PAIR_ROWS => Route::Pair(levels),
                Some(levels) if (PAIR_ROWS..=FEW_ROWS).contains(&n) => Route::Few(levels),
                _ => Route::Listed(lossless),
            };
        }
        match (&self.bins, levels) {
            (Some(_), _) if !self.code_bins => return Route::Binned,
            (Some(stack), Some(levels)) if n > stack.list_rows() => return Route::Kept(levels),
            _ => {}
        }
        // (The direct source reads ordered values only.)
        let ordered = cols.categorical.is_none();
        if R::KIND.reads_x_directly() && ordered && reads_directly(cols, ctx, rows, max_features) {
            return Route::Direct;
        }
        Route::Gathered
    }

    /// Draws candidates for the node `rows` (at `start` in the sample buffer) and returns
    /// the best split found, already applied to the rows, with the new length of the
    /// constant prefix of the draw's features (see [`super`]), from the source of the
    /// node's [`Route`]. `levels` are the lossless codes of the columns that have them;
    /// `split_rows` is the fewest rows a child needs to be split.
    #[allow(clippy::too_many_arguments)]
    pub fn find<C: Criterion<Y = Y>, R: ThresholdRule>(
        &mut self,
        x: &Matrix<'_, T>,
        levels: Option<&Levels>,
        ctx: &NodeCtx<'_, C>,
        rows: &mut NodeRows<'_, Y>,
        start: usize,
        draw: NodeDraw<'_>,
        split_rows: usize,
    ) -> (Option<ChosenSplit>, usize) {
        let n = rows.samples.len();
        let nan = (!self.nan_bins.is_empty()).then_some(&self.nan_bins[..]);
        let missing = levels.and_then(Levels::missing).or(nan);
        let categorical = (!self.categorical.is_empty()).then_some(&self.categorical[..]);
        let cols = Columns {
            x,
            levels,
            missing,
            categorical,
        };
        let route = self.route::<C, R>(n, cols, ctx, rows, draw.max_features);
        let s = &mut self.bufs;
        let node = Node { ctx, s, rows };
        match (route, self.bins.as_mut()) {
            (Route::Ranked(levels, ranks), _) => {
                let lists = &mut self.rank_lists;
                if !lists.covers(start, start + n) {
                    lists.build_ranked(ranks, x.n_rows(), node.rows, start, draw.varying());
                }
                let exact = Some(levels);
                find_split_listed(lists, node, start, draw, split_rows, (None, None), exact)
            }
            (Route::Pair(levels), _) => find_split_pair(levels, node, draw),
            (Route::Few(levels), _) => find_split_few(levels, node, draw),
            (Route::Listed(lossless), _) => {
                if !self.lists.covers(start, start + n) {
                    self.lists
                        .build(x, lossless, node.rows, start, draw.varying());
                }
                // The fewest rows a child needs for its lists to be written: children
                // split by `find_split_pair` and `find_split_few` read none either.
                let listed_child_rows = match lossless {
                    Some(_) => split_rows.max(FEW_ROWS + 1),
                    None => split_rows,
                };
                let (lists, sr) = (&mut self.lists, listed_child_rows);
                let flags = (nan, categorical);
                find_split_listed(lists, node, start, draw, sr, flags, lossless)
            }
            (Route::Binned, Some(stack)) => {
                let nb = self.node_bins.get_or_insert_with(|| {
                    let r = &node.rows;
                    let rows = (&r.samples[..], &r.ys[..], &r.ws[..]);
                    let (crit, varying) = (ctx.crit, draw.varying());
                    stack.fill(CodeColumns::X(x), crit, node.s, rows, start, varying)
                });
                find_split_binned(x, stack, nb, node, draw, (nan, categorical))
            }
            (Route::Kept(levels), Some(stack)) => {
                let nb = self.node_bins.get_or_insert_with(|| {
                    let r = &node.rows;
                    let rows = (&r.samples[..], &r.ys[..], &r.ws[..]);
                    let (crit, varying) = (ctx.crit, draw.varying());
                    stack.fill(
                        CodeColumns::Levels(levels),
                        crit,
                        node.s,
                        rows,
                        start,
                        varying,
                    )
                });
                let kept = Some(Kept::new(stack, nb));
                find_split::<T, C, R>(cols, node, draw, kept)
            }
            (Route::Direct, _) => find_split_direct(x, node, draw),
            // `Binned` and `Kept` are routed only with bins: this arm is `Gathered`.
            (Route::Gathered | Route::Binned | Route::Kept(_), _) => {
                find_split::<T, C, R>(cols, node, draw, None)
            }
        }
    }
}
