//! The bins of a node kept for its children: per feature, per bin code, the weight, the
//! criterion's sums that its proxy reads and the row count ([`NodeBins`]), and the stack
//! of those of the pending nodes of one tree ([`BinStack`]).
//!
//! A split fills only its smaller child's bins; the larger child's are its parent's minus
//! its sibling's, bin by bin (LightGBM's subtraction), which saves gathering the larger
//! child's rows. Two searches keep them: the histogram search, for every feature of its
//! binned X when K ≥ p/2 ([`crate::tree::split::source::binned`]), and the exact search, for the columns
//! with lossless codes when every sum is whole ([`crate::tree::split::state::kept_codes`]).
//!
//! Subtracted sums of `w·y` round differently from sums over the rows, so a histogram
//! search's proxy may differ in its last bits from the gathered search's; a different cut
//! wins only where two candidates were within rounding of each other (ties within 1e-12
//! are ties anyway). Counts, integer weights and whole sums subtract exactly: the exact
//! search keeps bins only then, and grows the trees of its gathered search bit for bit.
//!
//! The booster grows one tree at a time, so its trees fill a large node's bins in parallel
//! over features ([`BinStack::in_parallel`]): each feature's bins are summed by one thread
//! in the rows' order, exactly as the sequential fill sums them, so the bins, and the
//! model bytes, do not depend on the number of threads.

use crate::data::{Feature, Levels, Matrix};
use crate::parallel::{current_threads, map_each_mut};
use crate::tree::criterion::Criterion;
use crate::tree::split::scan::bins::N_CODES;
use crate::tree::split::{Cut, NodeRows, SplitBufs};
use slots::trim;
pub(crate) use slots::{category_slot_bounds, slot_bounds, slot_cut, ChildScans};

/// Bytes of node bins a tree may hold at once. Each [`NodeBins`] takes
/// `p · 256 · (stats + 1) · 8` bytes (410 KB for 50 features and regression); a pending
/// node that would not fit gathers its own rows instead.
const BINS_BYTES: usize = 32 << 20;

/// Features whose bins one pass over a node's rows fills in place: each row's target and
/// weight are read once for all of them, and their bins (6 KB each for regression) stay in
/// the core's first-level cache together.
const IN_PLACE_GROUP: usize = 4;

/// The bins of every varying feature of one node (rows `start..end` of the tree's
/// sample buffer): feature slot `s`, code `c` at `(base[s] + c) · stride`, `base` being
/// the [`BinStack`]'s. Only the codes `range[s]` (the node's min and max, or a superset) are
/// meaningful.
pub(crate) struct NodeBins {
    start: usize,
    end: usize,
    bins: Vec<f64>,
    range: Vec<(usize, usize)>,
    /// Per slot, its best cut, when the node's bins were scanned as they were kept
    /// (`scanned`; [`ChildScans`]).
    cuts: Vec<Option<Cut>>,
    scanned: bool,
}

impl NodeBins {
    /// Feature slot `s`'s non-empty codes (its first bin at `at`), trimmed (a subtraction
    /// can empty the ends).
    fn trimmed(&mut self, s: usize, at: usize, stride: usize) -> (usize, usize) {
        trim(&self.bins[at * stride..], &mut self.range[s], stride)
    }

    /// Slot `sl`'s best cut, if the node's bins were scanned as they were kept.
    pub(in crate::tree::split) fn scanned(&self, sl: usize) -> Option<Option<Cut>> {
        self.scanned.then(|| self.cuts[sl])
    }
}

/// One feature slot's bins in a node, and its range of codes.
type SlotBins<'b> = (&'b mut [f64], &'b mut (usize, usize));

/// Where a node's bins read the codes of its features: X itself (the histogram search's
/// binned X), or the lossless codes of X's coded columns (the exact search's).
#[derive(Clone, Copy)]
pub(crate) enum CodeColumns<'a, T> {
    X(&'a Matrix<'a, T>),
    Levels(&'a Levels),
}

/// The bins of the pending nodes of one tree, innermost last, and spare buffers.
pub(crate) struct BinStack {
    /// Values per bin: the criterion's statistics and the row count.
    pub(in crate::tree::split) stride: usize,
    /// The slot of each feature of X among the tree's features (`u32::MAX`: none).
    pub(in crate::tree::split) slot: Vec<u32>,
    /// The first bin of each slot, and after the last slot the bins of a node: slot `s`
    /// has `base[s + 1] - base[s]` codes (256 for the histogram search, the column's
    /// levels for the exact search's).
    base: Vec<usize>,
    pending: Vec<NodeBins>,
    spare: Vec<NodeBins>,
    max_pending: usize,
    /// Nodes of at most this many rows keep no bins (the histogram search grows them from
    /// lists).
    list_rows: usize,
    /// Whether large nodes fill their bins in parallel over features.
    parallel: bool,
}

impl BinStack {
    /// Bins for the tree's `features` (of X's `n_cols`) with the criterion's `proxy_len`
    /// sums, for the nodes of more than `list_rows` rows, or None when fewer than three
    /// node bins fit in [`BINS_BYTES`] (very wide data).
    pub fn new(
        features: &[u32],
        n_cols: usize,
        proxy_len: usize,
        list_rows: usize,
    ) -> Option<Self> {
        let widths = vec![N_CODES; features.len()];
        Self::with_widths(features, &widths, n_cols, proxy_len, list_rows)
    }

    /// [`BinStack::new`] with `widths[s]` codes for the `s`-th feature.
    pub fn with_widths(
        features: &[u32],
        widths: &[usize],
        n_cols: usize,
        proxy_len: usize,
        list_rows: usize,
    ) -> Option<Self> {
        let stride = proxy_len + 1;
        let mut base = vec![0];
        base.extend(widths.iter().scan(0, |at, &w| {
            *at += w;
            Some(*at)
        }));
        let node_bytes = base[features.len()] * stride * 8;
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
            base,
            pending: Vec::new(),
            spare: Vec::new(),
            // The node being split and its smaller child's bins are held besides.
            max_pending: max_nodes - 2,
            list_rows,
            parallel: false,
        })
    }

    /// Fills the bins of nodes of at least `PARALLEL_FILL_WORK` (`fill.rs`) rows × features in
    /// parallel over features, on the pool the caller runs in (the same bins for any
    /// number of threads). Only for trees grown one at a time: a forest already keeps
    /// every thread busy with its trees.
    pub fn in_parallel(mut self) -> Self {
        self.parallel = true;
        self
    }

    /// The bins kept for the node `start..end`, if it is the innermost pending one (or,
    /// with `anywhere`, for best-first growth, any pending one).
    pub fn take(&mut self, start: usize, end: usize, anywhere: bool) -> Option<NodeBins> {
        let at = match anywhere {
            true => self
                .pending
                .iter()
                .rposition(|b| b.start == start && b.end == end)?,
            false => {
                let top = self.pending.last()?;
                (top.start == start && top.end == end).then_some(self.pending.len() - 1)?
            }
        };
        Some(self.pending.remove(at))
    }

    /// Slot `sl`'s non-empty codes in the node `nb`, trimmed (a subtraction can empty the
    /// ends).
    pub(in crate::tree::split) fn trimmed(&self, nb: &mut NodeBins, sl: usize) -> (usize, usize) {
        nb.trimmed(sl, self.base[sl], self.stride)
    }

    /// Slot `sl`'s bins in the node `nb`, from its code 0, and its range.
    pub(in crate::tree::split) fn slot_of<'b>(
        &self,
        nb: &'b mut NodeBins,
        sl: usize,
    ) -> (&'b [f64], &'b mut (usize, usize)) {
        let bins = &nb.bins[self.base[sl] * self.stride..self.base[sl + 1] * self.stride];
        (bins, &mut nb.range[sl])
    }

    /// Slot `sl`'s bins in the node `nb`, from its code 0.
    pub(in crate::tree::split) fn bins_of<'b>(&self, nb: &'b NodeBins, sl: usize) -> &'b [f64] {
        &nb.bins[self.base[sl] * self.stride..self.base[sl + 1] * self.stride]
    }

    /// The features with bins: one slot each.
    fn n_slots(&self) -> usize {
        self.base.len() - 1
    }

    /// Nodes of at most this many rows keep no bins.
    pub fn list_rows(&self) -> usize {
        self.list_rows
    }

    /// Keeps the bins of a node whose split was chosen, until it is split, if they fit.
    pub fn defer(&mut self, b: NodeBins) {
        match self.pending.len() < self.max_pending {
            true => self.pending.push(b),
            false => self.recycle(b),
        }
    }

    /// Gives back bins no longer needed.
    pub fn recycle(&mut self, b: NodeBins) {
        self.spare.push(b);
    }

    /// Each slot's bins and range in the node `nb`, borrowed apart (to fill them apart).
    fn slots<'b>(&self, nb: &'b mut NodeBins) -> Vec<SlotBins<'b>> {
        let mut slots = Vec::with_capacity(self.n_slots());
        let mut rest = &mut nb.bins[..];
        for (w, range) in self.base.windows(2).zip(nb.range.iter_mut()) {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut((w[1] - w[0]) * self.stride);
            slots.push((head, range));
            rest = tail;
        }
        slots
    }

    /// Keeps the bins of the children of a node just split (`nb`; its rows `rows`, the
    /// left child their first `n_left`) that will be split from bins: those above the list
    /// size with at least `split_rows` rows (the fewest a node needs to split). The smaller
    /// child's are filled for the features still `varying`, the larger's are the parent's
    /// minus those. With `scans`, when the bins are filled in parallel, each feature's
    /// subtraction and both children's scans of it run in one task ([`ChildScans`]). The
    /// right child's are pushed first: it is split after the left child's whole subtree.
    #[allow(clippy::too_many_arguments)]
    pub fn keep_children<T: Feature, C: Criterion>(
        &mut self,
        cols: CodeColumns<'_, T>,
        crit: &C,
        s: &mut SplitBufs<T>,
        mut nb: NodeBins,
        rows: &NodeRows<'_, C::Y>,
        n_left: usize,
        varying: &[u32],
        split_rows: usize,
        scans: Option<&ChildScans<'_, C>>,
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
        let mut sb = self.fill(cols, crit, s, small, at, varying);
        match scans.filter(|_| self.parallel && current_threads() > 1) {
            Some(scans) => {
                // Child 0 is the left one.
                let children = [usize::from(left_smaller), usize::from(!left_smaller)];
                self.subtract_and_scan(&mut nb, &mut sb, varying, scans, children);
            }
            None => {
                nb.scanned = false;
                self.subtract(&mut nb, &sb, varying);
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

    /// Subtracts the smaller child's bins `sb` from the parent's `nb` (for the features
    /// `varying` that have a slot): `nb` becomes the larger child's.
    fn subtract(&self, nb: &mut NodeBins, sb: &NodeBins, varying: &[u32]) {
        let stride = self.stride;
        for &f in varying {
            let sl = self.slot[f as usize];
            if sl == u32::MAX {
                continue; // not kept: an exact search's column without codes
            }
            let sl = sl as usize;
            let (lo, hi) = sb.range[sl];
            let at = self.base[sl];
            let codes = (at + lo) * stride..(at + hi + 1) * stride;
            for (p, c) in nb.bins[codes.clone()].iter_mut().zip(&sb.bins[codes]) {
                *p -= c;
            }
        }
    }

    /// [`BinStack::subtract`] and both children's scans ([`ChildScans`]), in parallel over
    /// groups of [`IN_PLACE_GROUP`] features. `children[0]` is the child of `nb` (the
    /// larger: 0 left, 1 right), `children[1]` that of `sb`.
    fn subtract_and_scan<C: Criterion>(
        &self,
        nb: &mut NodeBins,
        sb: &mut NodeBins,
        varying: &[u32],
        scans: &ChildScans<'_, C>,
        children: [usize; 2],
    ) {
        let stride = self.stride;
        let mut large: Vec<_> = self.slots(nb).into_iter().map(Some).collect();
        let mut small: Vec<_> = self.slots(sb).into_iter().map(Some).collect();
        let mut work: Vec<_> = (varying.iter())
            .filter_map(|&f| {
                let sl = *self.slot.get(f as usize).filter(|&&sl| sl != u32::MAX)? as usize;
                Some((f, sl, large[sl].take()?, small[sl].take()?))
            })
            .collect();
        let mut groups: Vec<_> = work.chunks_mut(IN_PLACE_GROUP).collect();
        let cuts = map_each_mut(&mut groups, |_, group| {
            let mut left = vec![0.0; stride - 1];
            let cuts = group.iter_mut().map(|(f, sl, (lb, lr), (sb, sr))| {
                let (lo, hi) = **sr;
                let codes = lo * stride..(hi + 1) * stride;
                for (p, c) in lb[codes.clone()].iter_mut().zip(&sb[codes]) {
                    *p -= c;
                }
                let large_cut = scans.cut(children[0], *f, (lb, lr), stride, &mut left);
                let small_cut = scans.cut(children[1], *f, (sb, sr), stride, &mut left);
                (*sl, large_cut, small_cut)
            });
            cuts.collect::<Vec<_>>()
        });
        // Slots not scanned here (constant prefix) are never drawn in these children.
        nb.cuts.fill(None);
        sb.cuts.fill(None);
        for (sl, large_cut, small_cut) in cuts.into_iter().flatten() {
            (nb.cuts[sl], sb.cuts[sl]) = (large_cut, small_cut);
        }
        (nb.scanned, sb.scanned) = (true, true);
    }
}

mod fill;
mod slots;
mod spare;
pub(crate) use spare::{Spare, SpareBins};

#[cfg(test)]
mod tests;
