//! The gathered candidate source: each drawn candidate's values at the node's rows are
//! copied into a column ([`gather_many`]) and searched there by a [`ThresholdRule`]
//! (exact, random threshold, or histogram codes).
//!
//! Columns are gathered a batch at a time into the per-tree [`SplitBufs`]. The best
//! candidate's column is needed again to partition the rows, so before a new gather
//! overwrites it, its rows' sides are kept as one flag a row.

use super::draw::{draw_split, CandidateSource};
use super::gather::{batch_len, gather_many, MAX_BATCH};
use super::partition::partition_rows;
use super::{ChosenSplit, Cut, NodeCtx, NodeRows};
use crate::data::{Feature, Matrix};
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;
use crate::tree::goes_left;

/// Threshold search for one candidate feature; zero-sized, chosen once per fit.
pub(crate) trait ThresholdRule: Sync {
    /// Whether small subtrees may be grown from code-ordered lists instead
    /// ([`super::code_lists`]): for the histogram search only, which reads bin codes.
    const LISTED: bool = false;
    /// Best cut of the gathered values `xf` of the node, or None when no threshold
    /// satisfies the leaf constraints. Searches that scan many cuts may skip those not
    /// above `bar` (see [`super::floor`]).
    #[allow(clippy::too_many_arguments)]
    fn search<T: Feature, C: Criterion>(
        xf: &[T],
        s: &mut SearchBufs<T>,
        ctx: &NodeCtx<'_, C>,
        rows: &NodeRows<'_, C::Y>,
        bar: f64,
        lo: T,
        hi: T,
        rng: &mut TreeRng,
    ) -> Option<Cut>;
}

/// Per-tree buffers of the split search, allocated once and reused by every node.
pub(crate) struct SplitBufs<T: Feature> {
    /// Candidates gathered together (see [`gather_many`]), each scored where it lies.
    pub(crate) batch: Vec<Vec<T>>,
    /// 1 for each row of the node that goes left under the best cut so far, written only
    /// when a new gather is about to overwrite the best candidate's column: one byte a row
    /// instead of another buffer of the root's size.
    best_left: Vec<u8>,
    /// The partition's buffer (see [`super::partition::stable_partition`]).
    pub(crate) partition_buf: Vec<u64>,
    pub(crate) search: SearchBufs<T>,
}

/// What the threshold searches reuse from node to node.
pub(crate) struct SearchBufs<T: Feature> {
    /// Packed sort keys (value, position), and the radix sort's second buffer.
    pub(crate) packed: Vec<T::Packed>,
    pub(crate) radix: Vec<T::Packed>,
    pub(crate) left: Vec<f64>,
    /// The 256 bins of the histogram search, zero between searches
    /// ([`super::bin_scans::scan_occupied`]).
    pub(crate) bins: Vec<f64>,
}

impl<T: Feature> SplitBufs<T> {
    /// Buffers for trees of up to `n` rows and a criterion of `stats_len` statistics.
    pub fn new(n: usize, stats_len: usize) -> Self {
        SplitBufs {
            batch: (0..MAX_BATCH).map(|_| Vec::new()).collect(),
            best_left: Vec::new(),
            partition_buf: Vec::with_capacity(n / 2 + 1),
            search: SearchBufs {
                packed: Vec::new(),
                radix: Vec::new(),
                left: vec![0.0; stats_len],
                bins: Vec::new(),
            },
        }
    }
}

/// A node's candidates gathered into columns and searched by `R`.
struct Gathered<'a, 'r, T: Feature, C: Criterion, R> {
    x: &'a Matrix<'a, T>,
    ctx: &'a NodeCtx<'a, C>,
    s: &'a mut SplitBufs<T>,
    rows: &'a mut NodeRows<'r, C::Y>,
    bounds: [(T, T); MAX_BATCH],
    /// The batch column holding the best candidate's values, until a new gather would
    /// overwrite them: they are then kept as flags in `best_left`.
    best_in_batch: Option<usize>,
    best_threshold: f64,
    rule: std::marker::PhantomData<R>,
}

impl<T: Feature, C: Criterion, R: ThresholdRule> CandidateSource for Gathered<'_, '_, T, C, R> {
    type Bounds = (T, T);

    #[inline(always)]
    fn batch_len(&self) -> usize {
        batch_len::<T>(self.rows.samples.len())
    }

    #[inline(always)]
    fn prepare(&mut self, drawn: &[u32]) {
        if let Some(k) = self.best_in_batch.take() {
            mark_left(&self.s.batch[k], self.best_threshold, &mut self.s.best_left);
        }
        let (samples, s) = (&*self.rows.samples, &mut *self.s);
        gather_many(self.x, drawn, samples, &mut s.batch, &mut self.bounds);
    }

    #[inline(always)]
    fn bounds(&mut self, k: usize, _f: u32) -> Option<(T, T)> {
        let (lo, hi) = self.bounds[k];
        if hi <= lo {
            return None;
        }
        Some((lo, hi))
    }

    #[inline(always)]
    fn search(
        &mut self,
        k: usize,
        _f: u32,
        (lo, hi): (T, T),
        bar: f64,
        rng: &mut TreeRng,
    ) -> Option<Cut> {
        let s = &mut *self.s;
        R::search(
            &s.batch[k],
            &mut s.search,
            self.ctx,
            self.rows,
            bar,
            lo,
            hi,
            rng,
        )
    }

    #[inline(always)]
    fn new_best(&mut self, k: usize, cut: &Cut) {
        self.best_in_batch = Some(k);
        self.best_threshold = cut.threshold;
    }

    fn apply(&mut self, feature: u32, cut: Cut, _varying: &[u32]) -> ChosenSplit {
        let (s, unit) = (&mut *self.s, self.ctx.unit_weights);
        let buf = &mut s.partition_buf;
        let n_left = match self.best_in_batch {
            Some(k) => {
                let (xf, t) = (&s.batch[k], cut.threshold);
                partition_rows(cut.n_left, self.rows, buf, unit, |r| {
                    goes_left(xf[r].to_f64(), t)
                })
            }
            None => {
                let flags = &s.best_left;
                partition_rows(cut.n_left, self.rows, buf, unit, |r| flags[r] != 0)
            }
        };
        ChosenSplit {
            feature,
            threshold: cut.threshold,
            n_left,
        }
    }
}

/// Draws candidate features for the node, gathers and searches them with `R`, and returns
/// the best split found (already applied to `rows`), with the new length of the constant
/// prefix of `features`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn find_split<T: Feature, C: Criterion, R: ThresholdRule>(
    x: &Matrix<'_, T>,
    ctx: &NodeCtx<'_, C>,
    s: &mut SplitBufs<T>,
    rows: &mut NodeRows<'_, C::Y>,
    features: &mut [u32],
    n_constant: usize,
    max_features: usize,
    rng: &mut TreeRng,
) -> (Option<ChosenSplit>, usize) {
    let mut source = Gathered::<T, C, R> {
        x,
        ctx,
        s,
        rows,
        bounds: [(T::default(), T::default()); MAX_BATCH],
        best_in_batch: None,
        best_threshold: 0.0,
        rule: std::marker::PhantomData,
    };
    draw_split(&mut source, features, n_constant, max_features, rng)
}

/// Flags the rows that go left (`xf[k] ≤ threshold`).
fn mark_left<T: Feature>(xf: &[T], threshold: f64, flags: &mut Vec<u8>) {
    flags.clear();
    flags.extend(
        xf.iter()
            .map(|v| u8::from(goes_left(v.to_f64(), threshold))),
    );
}
