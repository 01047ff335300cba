//! Filling a node's bins from its rows: in the rows' order (so a node's bins sum exactly
//! as the gathered histogram search sums one candidate), over features in parallel for the
//! booster's large nodes, or from X's columns in place for large nodes.

use super::{BinStack, CodeColumns, NodeBins, SlotBins, IN_PLACE_GROUP};
use crate::data::{Feature, Levels, Matrix};
use crate::parallel::{current_threads, map_each_mut};
use crate::tree::criterion::Criterion;
use crate::tree::split::draw::{batch_len, MAX_BATCH};
use crate::tree::split::read::gather::{gather, gather_many, node_codes};
use crate::tree::split::scan::bins::{add_rows, add_rows_at, add_whole_rows, N_CODES};
use crate::tree::split::SplitBufs;

/// Rows × features from which a node's bins are filled in parallel over features (when
/// asked for), about 15 µs of sequential summing. A boosting fit keeps the pool's other
/// threads awake ([`crate::parallel::keep_awake`]), so a parallel fill pays no wake-up and
/// pays off down to nodes of about 160 rows × 50 features; with threads woken per fill the
/// bar was four times higher. See `BENCHMARKS.md` (gradient boosting, "Parallel
/// histograms" and "The second thread kept awake").
pub(super) const PARALLEL_FILL_WORK: usize = 1 << 13;

/// Rows from which a node's bins of X's codes are summed from the columns in place
/// ([`add_rows_at`], which zeroes every code's bin, not only the node's range).
pub(super) const IN_PLACE_ROWS: usize = 4 * N_CODES;

impl BinStack {
    /// The bins of the rows `samples` (at `start` in the tree's sample buffer, with their
    /// targets `ys` and weights `ws`) for the features `fs`: of X's bin codes summed in the
    /// rows' order (as [`crate::tree::split::HistThreshold`] sums one candidate), of lossless codes as
    /// [`BinStack::fill_coded`] sums them.
    #[allow(clippy::too_many_arguments)]
    pub fn fill<T: Feature, C: Criterion>(
        &mut self,
        cols: CodeColumns<'_, T>,
        crit: &C,
        s: &mut SplitBufs<T>,
        (samples, ys, ws): (&[u32], &[C::Y], &[f64]),
        start: usize,
        fs: &[u32],
    ) -> NodeBins {
        let stride = self.stride;
        let mut nb = self.spare.pop().unwrap_or_else(|| NodeBins {
            start: 0,
            end: 0,
            bins: vec![0.0; self.base[self.n_slots()] * stride],
            range: vec![(0, 0); self.n_slots()],
            cuts: vec![None; self.n_slots()],
            scanned: false,
        });
        (nb.start, nb.end) = (start, start + samples.len());
        nb.scanned = false;
        let x = match cols {
            CodeColumns::X(x) => x,
            CodeColumns::Levels(levels) => {
                self.fill_coded(levels, crit, s, (samples, ys, ws), fs, &mut nb);
                return nb;
            }
        };
        let parallel = self.parallel
            && samples.len() * fs.len() >= PARALLEL_FILL_WORK
            && fs.len() > 1
            && current_threads() > 1;
        if samples.len() >= IN_PLACE_ROWS && fs.iter().all(|&f| x.column(f as usize).is_some()) {
            self.fill_in_place(x, crit, (samples, ys, ws), fs, &mut nb, parallel);
            return nb;
        }
        if parallel && !x.is_sparse() {
            self.fill_each(x, crit, (samples, ys, ws), fs, &mut nb);
            return nb;
        }
        let mut bounds = [(T::default(), T::default()); MAX_BATCH];
        for batch in fs.chunks(batch_len::<T>(samples.len())) {
            gather_many(x, batch, samples, &mut s.batch, &mut bounds);
            for ((&f, xf), &(lo, hi)) in batch.iter().zip(&s.batch).zip(&bounds) {
                let sl = self.slot[f as usize] as usize;
                let (lo, hi) = (lo.code(), hi.code());
                nb.range[sl] = (lo, hi);
                let at = self.base[sl];
                let bins = &mut nb.bins[(at + lo) * stride..(at + hi + 1) * stride];
                bins.fill(0.0);
                add_rows(bins, lo, xf, ys, ws, crit);
            }
        }
        nb
    }

    /// [`BinStack::fill`] of the features of `fs` that have a slot, from their lossless
    /// codes (bytes or wide). Only trees whose sums are whole keep these bins, or the
    /// booster's, which accepts sums in any order: they are summed in lanes
    /// ([`add_whole_rows`]).
    fn fill_coded<T: Feature, C: Criterion>(
        &self,
        levels: &Levels,
        crit: &C,
        s: &mut SplitBufs<T>,
        (samples, ys, ws): (&[u32], &[C::Y], &[f64]),
        fs: &[u32],
        nb: &mut NodeBins,
    ) {
        let unit = ws.iter().all(|&w| w == 1.0);
        for &f in fs {
            let sl = self.slot[f as usize];
            if sl == u32::MAX {
                continue;
            }
            let (sl, f) = (sl as usize, f as usize);
            let table = &mut s.search.bins;
            if let Some(column) = levels.column(f) {
                let (codes, lo, hi) = node_codes(&column.codes, samples, &mut s.codes[0]);
                let (lo, hi) = (usize::from(lo), usize::from(hi));
                let bins = self.zeroed(nb, sl, lo, hi);
                add_whole_rows(bins, lo, table, codes, (ys, ws, unit), crit);
            } else if let Some(wide) = levels.wide(f) {
                let (codes, lo, hi) = node_codes(&wide.codes, samples, &mut s.wide[0]);
                let (lo, hi) = (usize::from(lo), usize::from(hi));
                let bins = self.zeroed(nb, sl, lo, hi);
                add_whole_rows(bins, lo, table, codes, (ys, ws, unit), crit);
            }
        }
    }

    /// Slot `sl`'s bins of codes `lo..=hi` in the node `nb`, zeroed, now its range.
    fn zeroed<'b>(&self, nb: &'b mut NodeBins, sl: usize, lo: usize, hi: usize) -> &'b mut [f64] {
        let (at, stride) = (self.base[sl], self.stride);
        nb.range[sl] = (lo, hi);
        let bins = &mut nb.bins[(at + lo) * stride..(at + hi + 1) * stride];
        bins.fill(0.0);
        bins
    }

    /// [`BinStack::fill`] of a node of at least [`IN_PLACE_ROWS`] rows from X's code
    /// columns in place ([`add_rows_at`]), [`IN_PLACE_GROUP`] features per pass over the
    /// rows, the groups in parallel with `parallel`. Every bin sums its rows in their order,
    /// however the features are grouped or the groups run.
    fn fill_in_place<T: Feature, C: Criterion>(
        &self,
        x: &Matrix<'_, T>,
        crit: &C,
        (samples, ys, ws): (&[u32], &[C::Y], &[f64]),
        fs: &[u32],
        nb: &mut NodeBins,
        parallel: bool,
    ) {
        let rows = (ys, ws, ws.iter().all(|&w| w == 1.0));
        let mut slots: Vec<_> = self.slots(nb).into_iter().map(Some).collect();
        let mut groups: Vec<Vec<_>> = fs
            .chunks(IN_PLACE_GROUP)
            .map(|group| {
                let of = |f: &u32| slots[self.slot[*f as usize] as usize].take();
                let columns = group
                    .iter()
                    .map(|&f| x.column(f as usize).unwrap_or_default());
                columns
                    .zip(group.iter().map(of))
                    .filter_map(|(c, s)| Some((c, s?)))
                    .collect()
            })
            .collect();
        let sum = |_: usize, group: &mut Vec<(&[T], SlotBins<'_>)>| {
            if let [(a, (ab, ar)), (b, (bb, br)), (c, (cb, cr)), (d, (db, dr))] = &mut group[..] {
                let bins = [&mut **ab, &mut **bb, &mut **cb, &mut **db];
                let [ra, rb, rc, rd] = add_rows_at(bins, [*a, *b, *c, *d], samples, rows, crit);
                (**ar, **br, **cr, **dr) = (ra, rb, rc, rd);
                return;
            }
            for (column, (bins, range)) in group.iter_mut() {
                [**range] = add_rows_at([&mut **bins], [*column], samples, rows, crit);
            }
        };
        match parallel {
            true => drop(map_each_mut(&mut groups, sum)),
            false => groups.iter_mut().enumerate().for_each(|(k, g)| sum(k, g)),
        }
    }

    /// [`BinStack::fill`] in parallel, of a node smaller than [`IN_PLACE_ROWS`]: one task
    /// per feature of `fs`, each gathering its codes into its own buffer and summing them
    /// in the rows' order into the feature's own bins, so every bin is the sequential
    /// fill's, bit for bit.
    fn fill_each<T: Feature, C: Criterion>(
        &self,
        x: &Matrix<'_, T>,
        crit: &C,
        (samples, ys, ws): (&[u32], &[C::Y], &[f64]),
        fs: &[u32],
        nb: &mut NodeBins,
    ) {
        let stride = self.stride;
        let mut feature_of = vec![u32::MAX; self.n_slots()];
        for &f in fs {
            feature_of[self.slot[f as usize] as usize] = f;
        }
        let mut slots = self.slots(nb);
        map_each_mut(&mut slots, |sl, (bins, range)| {
            let f = feature_of[sl];
            if f == u32::MAX {
                return;
            }
            let mut xf = Vec::new();
            let (lo, hi) = gather(x, f as usize, samples, &mut xf);
            let (lo, hi) = (lo.code(), hi.code());
            **range = (lo, hi);
            let bins = &mut bins[lo * stride..(hi + 1) * stride];
            bins.fill(0.0);
            add_rows(bins, lo, &xf, ys, ws, crit);
        });
    }
}
