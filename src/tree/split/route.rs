//! Which candidate source splits a node: the one route table of the split search.
//!
//! A tree's plan is chosen once, before its root ([`Splitter::depth_first`],
//! [`Splitter::best_first`]); then every node takes the first row of this table that
//! applies ([`Splitter::route`]):
//!
//! | route      | when                                                       | source (in `source/`)    |
//! |------------|------------------------------------------------------------|--------------------------|
//! | `Ranked`   | the plan lists ranks: exact rule, booster, K ≥ p/2         | `listed`, rank lists     |
//! | `Few`      | the plan lists lossless codes, the node has 2 to 4 rows    | `pair` (2 rows), `few`   |
//! | `Listed`   | the plan lists codes, the node has at most `list_rows`     | `listed`, code lists     |
//! | `Binned`   | the histogram rule keeps node bins (K ≥ p/2)               | `binned`                 |
//! | `Kept`     | the exact rule keeps bins of lossless codes, larger nodes  | `gathered` + kept bins   |
//! | `Direct`   | random rule, complete dense X, small node or narrow rows   | `direct`                 |
//! | `Gathered` | otherwise                                                  | `gathered`               |
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
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;
use crate::tree::split::source::binned::find_split_binned;
use crate::tree::split::source::direct::{find_split_direct, reads_directly};
use crate::tree::split::source::few::{find_split_few, FEW_ROWS};
use crate::tree::split::source::listed::find_split_listed;
use crate::tree::split::source::pair::PAIR_ROWS;
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
    Few(&'l Levels),
    /// Lists of the lossless codes, or (None) of X's bin codes.
    Listed(Option<&'l Levels>),
    Binned,
    Kept(&'l Levels),
    Direct,
    Gathered,
}

impl<T: Feature, Y: Word> Splitter<T, Y> {
    /// Plans depth-first growth with the threshold rule `R` over `features` (of X's
    /// `n_cols`), a criterion of `proxy_len` sums and `max_features` candidates a node.
    /// The histogram search grows small subtrees from lists and keeps the bins of larger
    /// nodes when K is large enough for that to pay. The exact search keeps those of the
    /// columns with lossless codes `coded`, given only when every sum of the tree is whole
    /// ([`crate::tree::split::state::kept_codes`]); with `listable` (every feature has lossless codes, X no
    /// NaN, and the sums are not whole, so not subtracted) it grows small subtrees from
    /// lists of the codes, without bins.
    pub fn depth_first<R: ThresholdRule>(
        &mut self,
        features: &[u32],
        n_cols: usize,
        proxy_len: usize,
        max_features: usize,
        coded: Option<&Levels>,
        listable: bool,
    ) {
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
    /// Returns whether it is; [`Splitter::depth_first`] is to be called otherwise.
    pub fn depth_first_ranked(&mut self, features: &[u32], max_features: usize) -> bool {
        self.ranked = lists_pay(max_features, features.len());
        self.ranked
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
                Some(levels) if (PAIR_ROWS..=FEW_ROWS).contains(&n) => Route::Few(levels),
                _ => Route::Listed(lossless),
            };
        }
        match (&self.bins, levels) {
            (Some(_), _) if !self.code_bins => return Route::Binned,
            (Some(stack), Some(levels)) if n > stack.list_rows() => return Route::Kept(levels),
            _ => {}
        }
        if R::KIND.reads_x_directly() && reads_directly(cols, ctx, rows, max_features) {
            return Route::Direct;
        }
        Route::Gathered
    }

    /// Draws candidates for the node `rows` (at `start` in the sample buffer) and returns
    /// the best split found, already applied to the rows, with the new length of the
    /// constant prefix of `features` (see [`super`]), from the source of the node's
    /// [`Route`]. `levels` are the lossless codes of the columns that have them;
    /// `split_rows` is the fewest rows a child needs to be split.
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
        let nan = (!self.nan_bins.is_empty()).then_some(&self.nan_bins[..]);
        let missing = levels.and_then(Levels::missing).or(nan);
        let cols = Columns { x, levels, missing };
        let route = self.route::<C, R>(n, cols, ctx, rows, max_features);
        let (bufs, k) = (&mut self.bufs, max_features);
        match (route, self.bins.as_mut()) {
            (Route::Ranked(levels, ranks), _) => {
                let lists = &mut self.rank_lists;
                if !lists.covers(start, start + n) {
                    let varying = &features[n_constant..];
                    lists.build_ranked(ranks, x.n_rows(), rows, start, varying);
                }
                let (sr, lv) = (split_rows, Some(levels));
                find_split_listed(
                    lists, ctx, bufs, rows, start, features, n_constant, k, sr, None, lv, rng,
                )
            }
            (Route::Few(levels), _) => {
                find_split_few(levels, ctx, bufs, rows, features, n_constant, k, rng)
            }
            (Route::Listed(lossless), _) => {
                if !self.lists.covers(start, start + n) {
                    let varying = &features[n_constant..];
                    self.lists.build(x, lossless, rows, start, varying);
                }
                // The fewest rows a child needs for its lists to be written: children
                // split by `find_split_few` read none either.
                let listed_child_rows = match lossless {
                    Some(_) => split_rows.max(FEW_ROWS + 1),
                    None => split_rows,
                };
                let (lists, sr) = (&mut self.lists, listed_child_rows);
                find_split_listed(
                    lists, ctx, bufs, rows, start, features, n_constant, k, sr, nan, lossless, rng,
                )
            }
            (Route::Binned, Some(stack)) => {
                let nb = self.node_bins.get_or_insert_with(|| {
                    let node = (&rows.samples[..], &rows.ys[..], &rows.ws[..]);
                    let varying = &features[n_constant..];
                    stack.fill(CodeColumns::X(x), ctx.crit, bufs, node, start, varying)
                });
                find_split_binned(
                    x, stack, nb, ctx, bufs, rows, features, n_constant, k, nan, rng,
                )
            }
            (Route::Kept(levels), Some(stack)) => {
                let nb = self.node_bins.get_or_insert_with(|| {
                    let node = (&rows.samples[..], &rows.ys[..], &rows.ws[..]);
                    let varying = &features[n_constant..];
                    let codes = CodeColumns::Levels(levels);
                    stack.fill(codes, ctx.crit, bufs, node, start, varying)
                });
                let kept = Some(Kept::new(stack, nb));
                find_split::<T, C, R>(cols, ctx, bufs, rows, features, n_constant, k, kept, rng)
            }
            (Route::Direct, _) => {
                find_split_direct(x, ctx, bufs, rows, features, n_constant, k, rng)
            }
            // `Binned` and `Kept` are routed only with bins: this arm is `Gathered`.
            (Route::Gathered | Route::Binned | Route::Kept(_), _) => {
                find_split::<T, C, R>(cols, ctx, bufs, rows, features, n_constant, k, None, rng)
            }
        }
    }
}
