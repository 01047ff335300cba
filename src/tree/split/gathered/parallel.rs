//! The parallel search of a gathered batch, for trees grown one at a time (the booster's):
//! each candidate of the batch is searched by one task in its own buffers
//! (`SplitBufs::slots`), and the draw loop reduces their cuts in draw order with the
//! same tie rule ([`crate::tree::split::better`]) as the sequential search, so the tree is
//! the same for any number of threads. Only rules that draw nothing while searching take
//! this path ([`ThresholdRule::PARALLEL`]): the RNG stream is then consumed by the feature
//! draws alone, which stay in the draw loop.

use super::{search_span, Gathered, SearchBufs, ThresholdRule};
use crate::data::Feature;
use crate::parallel::map_each_mut;
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;
use crate::tree::split::floor;

/// Nodes of at least this many rows search the candidates of a batch in parallel, when
/// their tree asks for it (`find_split`'s `parallel`): sorting and scanning 2 048 values
/// takes over ten microseconds, well above the cost of handing a task to another thread,
/// and below it the nodes are small and many. Of the order of the histogram fill's threshold
/// (`histograms::PARALLEL_FILL_WORK`, 32 768 rows × features); not tuned on a quiet
/// machine (BENCHMARKS.md, "Parallel exact search inside a tree").
pub(super) const PARALLEL_MIN_ROWS: usize = 2048;

impl<T: Feature, C: Criterion, R: ThresholdRule> Gathered<'_, '_, T, C, R> {
    /// Searches the candidates `drawn` of the batch just gathered in parallel, one task
    /// per candidate in its own buffers, and keeps their cuts for the draw loop, which
    /// then reduces them in draw order with the same tie rule (`super::better`) as if it
    /// had searched them itself. Each search's bar is the node's best before the batch:
    /// no higher than the bar of the sequential search, so its cut is the same whenever
    /// it can become the best (`ThresholdRule::PARALLEL`); the tree is the same for any
    /// number of threads.
    pub(super) fn search_batch(&mut self, drawn: &[u32]) {
        let s = &mut *self.s;
        let stats_len = s.search.left.len();
        if s.slots.len() < drawn.len() {
            s.slots
                .resize_with(drawn.len(), || SearchBufs::new(stats_len));
        }
        let gathered = (&s.batch[..], &s.codes[..], &s.wide[..], &s.entries[..]);
        let (cols, ctx, rows, spans) = (self.cols, self.ctx, &*self.rows, &self.spans);
        let bar = floor(self.best_proxy);
        let found = map_each_mut(&mut s.slots[..drawn.len()], |k, bufs| {
            let span = spans[k];
            if span.constant() {
                return None;
            }
            // `R` draws nothing (`ThresholdRule::PARALLEL`): the stream is never read.
            let mut unused = TreeRng::new(0);
            search_span::<T, C, R>(
                cols,
                gathered,
                k,
                drawn[k],
                span,
                ctx,
                rows,
                bufs,
                bar,
                &mut unused,
            )
        });
        self.found[..found.len()].copy_from_slice(&found);
    }
}
