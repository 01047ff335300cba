//! The histogram splitter's bins: per feature, per bin code, the weight, the criterion's
//! sums and the row count of a node, and their subtraction.
//!
//! Every candidate of a node above the list size ([`super::code_lists`]) is scored from its
//! bins ([`scan_bins`]). When K ≥ p/2 ([`super::code_lists::lists_pay`]: most features are
//! read at every node anyway) the bins of *every* varying feature are kept with the node
//! ([`NodeBins`]), and a split gathers only its smaller child's rows: the larger child's
//! bins are its parent's minus its sibling's, bin by bin (LightGBM's subtraction). That
//! halves the gathers above the lists, which were most of the remaining time there.
//!
//! Subtracted sums of `w·y` round differently from sums over the rows, so a proxy may
//! differ in its last bits from the gathered search's; a different cut wins only where two
//! candidates were within rounding of each other (ties within 1e-12 are ties anyway).
//! Counts and integer weights subtract exactly.

use super::criterion::Criterion;
use super::gather::{batch_len, gather, gather_many, MAX_BATCH};
use super::splitter::{better, partition, Cut, Draws, NodeCtx, NodeRows, Scratch, Split};
use crate::data::{Feature, Matrix};
use crate::rng::TreeRng;

/// Bin codes are bytes.
const BINS: usize = 256;

/// Bytes of node bins a tree may hold at once. Each [`NodeBins`] takes
/// `p · 256 · (stats + 1) · 8` bytes (410 KB for 50 features and regression); a pending
/// node that would not fit gathers its own rows instead.
const BINS_BYTES: usize = 32 << 20;

/// Adds rows (codes `xf`, targets `ys`, weights `ws`) to one feature's bins, the first of
/// which holds code `lo`. A bin is `stride` values: weight, criterion sums, row count.
#[inline(always)]
pub(crate) fn add_rows<T: Feature, C: Criterion>(
    bins: &mut [f64],
    lo: usize,
    xf: &[T],
    ys: &[C::Y],
    ws: &[f64],
    crit: &C,
) {
    let stride = crit.stats_len() + 1;
    for ((v, &y), &w) in xf.iter().zip(ys).zip(ws) {
        let b = (v.code() - lo) * stride;
        let stats = &mut bins[b..b + stride];
        stats[0] += w;
        crit.add_for_proxy(stats, y, w);
        stats[stride - 1] += 1.0;
    }
}

/// The best cut between the `n_bins` bins of one feature (codes `lo..`) of a node of `n`
/// rows: every boundary between non-empty bins is scored, and the threshold is the code
/// below it.
pub(crate) fn scan_bins<C: Criterion>(
    bins: &[f64],
    lo: usize,
    n_bins: usize,
    n: usize,
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
) -> Option<Cut> {
    let k = left.len();
    let stride = k + 1;
    left.fill(0.0);
    let mut n_left = 0;
    let mut best: Option<Cut> = None;
    for (b, stats) in bins.chunks_exact(stride).take(n_bins - 1).enumerate() {
        let count = stats[k] as usize;
        if count == 0 {
            continue; // same partition as the previous boundary
        }
        n_left += count;
        for (l, h) in left.iter_mut().zip(stats) {
            *l += h;
        }
        if n - n_left < ctx.min_samples_leaf {
            break;
        }
        if !ctx.admissible(n_left, n, left) {
            continue;
        }
        let proxy = ctx.crit.proxy(ctx.total, left);
        if best.is_none_or(|c| better(proxy, c.proxy)) {
            best = Some(Cut {
                proxy,
                threshold: (lo + b) as f64,
                n_left: Some(n_left),
            });
        }
    }
    best
}

/// The bins of every varying feature of one node (rows `start..end` of the tree's
/// sample buffer): feature slot `s`, code `c` at `(s · 256 + c) · stride`. Only the codes
/// `range[s]` (the node's min and max, or a superset) are meaningful.
pub(crate) struct NodeBins {
    start: usize,
    end: usize,
    bins: Vec<f64>,
    range: Vec<(usize, usize)>,
}

impl NodeBins {
    /// Feature slot `s`'s non-empty codes, trimmed (a subtraction can empty the ends).
    fn trimmed(&mut self, s: usize, stride: usize) -> (usize, usize) {
        let (mut lo, mut hi) = self.range[s];
        let count = |c: usize| self.bins[(s * BINS + c) * stride + stride - 1];
        while lo < hi && count(lo) == 0.0 {
            lo += 1;
        }
        while hi > lo && count(hi) == 0.0 {
            hi -= 1;
        }
        self.range[s] = (lo, hi);
        (lo, hi)
    }

    fn feature(&self, s: usize, stride: usize) -> &[f64] {
        &self.bins[s * BINS * stride..(s + 1) * BINS * stride]
    }
}

/// The bins of the pending nodes of one tree, innermost last, and spare buffers.
pub(crate) struct BinStack {
    /// Values per bin: the criterion's statistics and the row count.
    stride: usize,
    /// The slot of each feature of X among the tree's features (`u32::MAX`: none).
    slot: Vec<u32>,
    n_slots: usize,
    pending: Vec<NodeBins>,
    spare: Vec<NodeBins>,
    max_pending: usize,
    /// Nodes of at most this many rows are grown from lists and need no bins.
    list_rows: usize,
}

impl BinStack {
    /// Bins for the tree's `features` (of X's `n_cols`) with `stats_len` statistics, for
    /// the nodes of more than `list_rows` rows, or None when fewer than three node bins
    /// fit in [`BINS_BYTES`] (very wide data).
    pub fn new(
        features: &[u32],
        n_cols: usize,
        stats_len: usize,
        list_rows: usize,
    ) -> Option<Self> {
        let stride = stats_len + 1;
        let node_bytes = features.len() * BINS * stride * 8;
        let max_nodes = BINS_BYTES / node_bytes.max(1);
        if max_nodes < 3 {
            return None;
        }
        let mut slot = vec![u32::MAX; n_cols];
        for (s, &f) in features.iter().enumerate() {
            slot[f as usize] = s as u32;
        }
        Some(BinStack {
            stride,
            slot,
            n_slots: features.len(),
            pending: Vec::new(),
            spare: Vec::new(),
            // The node being split and its smaller child's bins are held besides.
            max_pending: max_nodes - 2,
            list_rows,
        })
    }

    /// The bins kept for the node `start..end`, if it is the innermost pending one.
    pub fn take(&mut self, start: usize, end: usize) -> Option<NodeBins> {
        let top = self.pending.last()?;
        (top.start == start && top.end == end)
            .then(|| self.pending.pop())
            .flatten()
    }

    /// Gives back bins no longer needed.
    pub fn recycle(&mut self, b: NodeBins) {
        self.spare.push(b);
    }

    /// The bins of the rows `samples` (at `start` in the tree's sample buffer, with their
    /// targets `ys` and weights `ws`) for the features `fs`, summed in the rows' order (as
    /// [`super::splitter::HistThreshold`] sums one candidate).
    #[allow(clippy::too_many_arguments)]
    pub fn fill<T: Feature, C: Criterion>(
        &mut self,
        x: &Matrix<'_, T>,
        crit: &C,
        s: &mut Scratch<T>,
        (samples, ys, ws): (&[u32], &[C::Y], &[f64]),
        start: usize,
        fs: &[u32],
    ) -> NodeBins {
        let stride = self.stride;
        let mut nb = self.spare.pop().unwrap_or_else(|| NodeBins {
            start: 0,
            end: 0,
            bins: vec![0.0; self.n_slots * BINS * stride],
            range: vec![(0, 0); self.n_slots],
        });
        (nb.start, nb.end) = (start, start + samples.len());
        let mut bounds = [(T::default(), T::default()); MAX_BATCH];
        for batch in fs.chunks(batch_len::<T>(samples.len())) {
            gather_many(x, batch, samples, &mut s.batch, &mut bounds);
            for ((&f, xf), &(lo, hi)) in batch.iter().zip(&s.batch).zip(&bounds) {
                let sl = self.slot[f as usize] as usize;
                let (lo, hi) = (lo.code(), hi.code());
                nb.range[sl] = (lo, hi);
                let bins = &mut nb.bins[(sl * BINS + lo) * stride..(sl * BINS + hi + 1) * stride];
                bins.fill(0.0);
                add_rows(bins, lo, xf, ys, ws, crit);
            }
        }
        nb
    }

    /// Keeps the bins of the children of a node just split (`nb`; its rows `rows`, the
    /// left child their first `n_left`) that will be split from bins: those above the list
    /// size with at least `split_rows` rows (the fewest a node needs to split). The smaller child's are filled for the features still `varying`,
    /// the larger's are the parent's minus those. The right child's are pushed first: it
    /// is split after the left child's whole subtree.
    #[allow(clippy::too_many_arguments)]
    pub fn keep_children<T: Feature, C: Criterion>(
        &mut self,
        x: &Matrix<'_, T>,
        crit: &C,
        s: &mut Scratch<T>,
        mut nb: NodeBins,
        rows: &NodeRows<'_, C::Y>,
        n_left: usize,
        varying: &[u32],
        split_rows: usize,
    ) {
        let (start, n) = (nb.start, rows.samples.len());
        let mid = start + n_left;
        let list_rows = self.list_rows;
        let kept = move |m: usize| m > list_rows && m >= split_rows;
        if !kept(n_left) && !kept(n - n_left) {
            return self.recycle(nb);
        }
        let left_smaller = n_left <= n - n_left;
        let (at, part) = match left_smaller {
            true => (start, 0..n_left),
            false => (mid, n_left..n),
        };
        let small = (
            &rows.samples[part.clone()],
            &rows.ys[part.clone()],
            &rows.ws[part],
        );
        let sb = self.fill(x, crit, s, small, at, varying);
        let stride = self.stride;
        for &f in varying {
            let sl = self.slot[f as usize] as usize;
            let (lo, hi) = sb.range[sl];
            let codes = (sl * BINS + lo) * stride..(sl * BINS + hi + 1) * stride;
            for (p, c) in nb.bins[codes.clone()].iter_mut().zip(&sb.bins[codes]) {
                *p -= c;
            }
        }
        let (mut lb, mut rb) = match left_smaller {
            true => (sb, nb),
            false => (nb, sb),
        };
        (lb.start, lb.end) = (start, mid);
        (rb.start, rb.end) = (mid, start + n);
        for (b, m) in [(rb, n - n_left), (lb, n_left)] {
            match kept(m) && self.pending.len() < self.max_pending {
                true => self.pending.push(b),
                false => self.recycle(b),
            }
        }
    }
}

/// [`super::splitter::find_split`] for a node with bins `nb`: the same draws, every
/// candidate scored from its bins by [`scan_bins`]. Applies the split to the rows.
#[allow(clippy::too_many_arguments)]
pub(crate) fn find_split_binned<T: Feature, C: Criterion>(
    x: &Matrix<'_, T>,
    stack: &BinStack,
    nb: &mut NodeBins,
    ctx: &NodeCtx<'_, C>,
    s: &mut Scratch<T>,
    rows: &mut NodeRows<'_, C::Y>,
    features: &mut [u32],
    n_constant: usize,
    max_features: usize,
    rng: &mut TreeRng,
) -> (Option<Split>, usize) {
    let n = rows.samples.len();
    let stride = stack.stride;
    let mut draws = Draws::new(features, n_constant, max_features);
    let mut best: Option<(u32, Cut)> = None;
    let mut drawn = [0u32; MAX_BATCH];
    // The batches of the gathered search, so that a constant feature is met at the same
    // point of the draws.
    let cap = batch_len::<T>(n);
    loop {
        let b = draws.next_batch(cap, &mut drawn, rng);
        if b == 0 {
            break;
        }
        for &f in &drawn[..b] {
            let sl = stack.slot[f as usize] as usize;
            let (lo, hi) = nb.trimmed(sl, stride);
            if hi <= lo {
                draws.constant(f);
                continue;
            }
            draws.visited();
            let bins = &nb.feature(sl, stride)[lo * stride..(hi + 1) * stride];
            let Some(cut) = scan_bins(bins, lo, hi - lo + 1, n, &mut s.search.left, ctx) else {
                continue;
            };
            if best.is_none_or(|(_, b)| better(cut.proxy, b.proxy)) {
                best = Some((f, cut));
            }
        }
    }
    let split = best.map(|(feature, cut)| {
        gather(x, feature as usize, rows.samples, &mut s.batch[0]);
        let (col, buf, t) = (&s.batch[0], &mut s.partition_buf, cut.threshold);
        let n_left = partition(cut.n_left, rows, buf, ctx.unit_weights, |r| {
            col[r].to_f64() <= t
        });
        Split {
            feature,
            threshold: t,
            n_left,
        }
    });
    (split, draws.varying().0)
}
