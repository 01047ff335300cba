//! The threshold rule: how one candidate feature's cut is searched once its values (or
//! codes, entries, kept bins) are at hand. Each rule is zero-sized and chosen once per fit:
//! the exact search ([`exact`]), the random threshold ([`random`]) and the histogram-code
//! search ([`histogram`]). The gathered source ([`crate::tree::split::source::gathered`])
//! calls it per candidate; its defaults read codes and entries back as values. What each
//! rule allows the route table ([`crate::tree::split::route`]) is its [`RuleKind`].

pub(crate) mod exact;
pub(crate) mod histogram;
pub(crate) mod random;

use crate::data::Feature;
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;
use crate::tree::split::read::sparse_gather::Entries;
use crate::tree::split::SearchBufs;
use crate::tree::split::{Cut, NodeCtx, NodeRows};

/// The threshold rules, as the route table sees them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum RuleKind {
    /// The exact (CART) search ([`crate::tree::split::BestThreshold`]).
    Best,
    /// The random threshold ([`crate::tree::split::RandomThreshold`]).
    Random,
    /// The search of X's bin codes ([`crate::tree::split::HistThreshold`]).
    Histogram,
}

impl RuleKind {
    /// Small subtrees may be grown from lists of X's bin codes ([`crate::tree::split::state::code_lists`]).
    pub(crate) const fn lists_bin_codes(self) -> bool {
        matches!(self, RuleKind::Histogram)
    }

    /// Small subtrees of a tree whose every column has lossless codes, and whose sums are
    /// not whole, may be grown from lists of those codes, whose order reproduces the sorted
    /// scans ([`crate::tree::split::source::listed`]); and a booster's trees from lists of ranks.
    pub(crate) const fn lists_lossless_codes(self) -> bool {
        matches!(self, RuleKind::Best)
    }

    /// The rule reads bin codes whose NaN rows hold the missing-values bin
    /// ([`crate::data::NAN_CODE`]) rather than NaN values ([`crate::tree::split::scan::nan_bins`]).
    pub(crate) const fn nan_bin(self) -> bool {
        matches!(self, RuleKind::Histogram)
    }

    /// A tree whose sums are whole may keep the bins of its columns with lossless codes
    /// ([`crate::tree::split::state::kept_codes`]), read as the gathered codes are.
    pub(crate) const fn keeps_code_bins(self) -> bool {
        matches!(self, RuleKind::Best)
    }

    /// Small nodes of complete dense data may read candidates straight from X
    /// ([`crate::tree::split::source::direct`]): the random threshold reads a candidate's values twice (bounds,
    /// sums) and never sorts them.
    pub(crate) const fn reads_x_directly(self) -> bool {
        matches!(self, RuleKind::Random)
    }
}

/// What a threshold rule scores a candidate with, besides its values and bounds: the
/// scans' buffers, the node's context and rows, the proxy a cut must beat to be scored
/// (`bar`, see [`crate::tree::split::floor`]) and the tree's RNG (random thresholds).
pub(crate) struct Scoring<'a, T: Feature, C: Criterion> {
    pub s: &'a mut SearchBufs<T>,
    pub ctx: &'a NodeCtx<'a, C>,
    pub rows: &'a NodeRows<'a, C::Y>,
    pub bar: f64,
    pub rng: &'a mut TreeRng,
}

/// Threshold search for one candidate feature; zero-sized, chosen once per fit.
pub(crate) trait ThresholdRule: Sync {
    /// Which rule this is, for the route table ([`crate::tree::split::route`]).
    const KIND: RuleKind;
    /// Best cut of the gathered values `xf` of the node, between `lo` and `hi`, or None
    /// when no threshold satisfies the leaf constraints. Searches that scan many cuts may
    /// skip those not above the scoring's `bar` (see [`crate::tree::split::floor`]).
    fn search<T: Feature, C: Criterion>(
        xf: &[T],
        lo_hi: (T, T),
        q: Scoring<'_, T, C>,
    ) -> Option<Cut>;
    /// [`ThresholdRule::search`] of a candidate with lossless codes: `codes` are the node's
    /// codes (between `lo` and `hi`), which index the column's increasing `levels`. The
    /// cut, its threshold and the RNG draws must be those of `search` on the values,
    /// which is what this default does, on the values read back from the codes. Only the
    /// exact search is given codes (see `forest::fit`): it saves a sort per candidate,
    /// where a random threshold's one pass over the values gained nothing.
    fn search_coded<T: Feature, C: Criterion>(
        codes: &[u8],
        levels: &[f64],
        (lo, hi): (u8, u8),
        q: Scoring<'_, T, C>,
    ) -> Option<Cut> {
        search_read_back::<Self, _, _, _>(codes, levels, (lo, hi), q)
    }
    /// [`ThresholdRule::search_coded`] of a candidate with wide codes ([`crate::data::Wide`]), given
    /// only to trees whose sums are whole ([`NodeCtx::whole_sums`]). This default reads
    /// the values back from the codes.
    fn search_wide<T: Feature, C: Criterion>(
        codes: &[u16],
        levels: &[f64],
        (lo, hi): (u16, u16),
        q: Scoring<'_, T, C>,
    ) -> Option<Cut> {
        search_read_back::<Self, _, _, _>(codes, levels, (lo, hi), q)
    }
    /// [`ThresholdRule::search`] of a sparse candidate, given by its stored `entries` at the
    /// node's rows (the others hold 0), between `lo` and `hi`. The cut, its threshold and
    /// the RNG draws must be those of `search` on the dense values, which is what this
    /// default does, on the values written out (in `s.dense`). A rule that reads the
    /// entries alone must fall back to it unless [`NodeCtx::whole_sums`].
    fn search_entries<T: Feature, C: Criterion>(
        entries: &Entries<T>,
        (lo, hi): (T, T),
        q: Scoring<'_, T, C>,
    ) -> Option<Cut> {
        search_written_out::<Self, T, C>(entries, (lo, hi), q)
    }
    /// The search of a categorical candidate, whose gathered values are category codes
    /// (NaN missing): the best cut between the categories ordered by their value
    /// ([`crate::tree::split::scan::categories`]), its set written into
    /// `q.s.categories`; with `nan_bin` the values are histogram codes whose
    /// [`crate::data::NAN_CODE`] is the missing-values bin. The random rule draws the set instead.
    fn search_categories<T: Feature, C: Criterion>(
        xf: &[T],
        nan_bin: bool,
        q: Scoring<'_, T, C>,
    ) -> Option<Cut> {
        let Scoring {
            s, ctx, rows, bar, ..
        } = q;
        crate::tree::split::scan::categories::best_categories(
            (xf, nan_bin),
            &mut s.categories,
            ctx,
            rows,
            bar,
        )
    }
    /// [`ThresholdRule::search`] of a candidate whose gathered values include NaN, `lo <
    /// hi` being the bounds of the others (see [`crate::tree::split::scan::missing`]; for a
    /// rule of [`RuleKind::nan_bin`], the NaN rows are those of the missing-values bin). Every
    /// rule of a fit overrides it; this default finds no cut.
    fn search_missing<T: Feature, C: Criterion>(
        _xf: &[T],
        (_lo, _hi): (T, T),
        _q: Scoring<'_, T, C>,
    ) -> Option<Cut> {
        None
    }
}

/// [`ThresholdRule::search`] of rule `R` on the values that `codes` (between `lo` and `hi`)
/// index in `levels`, read back (the default of [`ThresholdRule::search_coded`] and
/// [`ThresholdRule::search_wide`]).
fn search_read_back<R: ThresholdRule + ?Sized, T: Feature, C: Criterion, K: Copy + Into<usize>>(
    codes: &[K],
    levels: &[f64],
    (lo, hi): (K, K),
    q: Scoring<'_, T, C>,
) -> Option<Cut> {
    let values: Vec<f64> = codes.iter().map(|&c| levels[c.into()]).collect();
    let (lo, hi) = (levels[lo.into()], levels[hi.into()]);
    let Scoring {
        s,
        ctx,
        rows,
        bar,
        rng,
    } = q;
    let mut bufs = SearchBufs::new(s.left.len());
    let q = Scoring {
        s: &mut bufs,
        ctx,
        rows,
        bar,
        rng,
    };
    R::search(&values, (lo, hi), q)
}

/// [`ThresholdRule::search`] of rule `R` on a sparse candidate's values, written out from
/// its `entries` (the default of [`ThresholdRule::search_entries`]).
pub(super) fn search_written_out<R: ThresholdRule + ?Sized, T: Feature, C: Criterion>(
    entries: &Entries<T>,
    (lo, hi): (T, T),
    q: Scoring<'_, T, C>,
) -> Option<Cut> {
    let Scoring {
        s,
        ctx,
        rows,
        bar,
        rng,
    } = q;
    let mut xf = std::mem::take(&mut s.dense);
    entries.write_dense(rows.samples.len(), &mut xf);
    let q = Scoring {
        s: &mut *s,
        ctx,
        rows,
        bar,
        rng,
    };
    let cut = R::search(&xf, (lo, hi), q);
    s.dense = xf;
    cut
}
