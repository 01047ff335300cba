//! Node bins and rank lists buffers kept from one tree for the next ([`SpareBins`]).

use crate::tree::split::state::code_lists::RankItem;
use crate::tree::split::state::node_bins::{BinStack, NodeBins};
use std::sync::{Mutex, PoisonError};

/// Node bins kept from one tree for the next: a booster grows hundreds of trees one after
/// another, each holding dozens of node bins of hundreds of KB, which made afresh were
/// zeroed or faulted in page by page every tree; so were the rank lists of its exact trees
/// (8 bytes per row and column, [`RankItem`]). Shared by the trees of a round grown in
/// parallel; dropped with the fit.
#[derive(Default)]
pub(crate) struct SpareBins(Mutex<Spare>);

/// The buffers of grown trees, for the next ones.
#[derive(Default)]
pub(crate) struct Spare {
    pub bins: Vec<NodeBins>,
    pub lists: Vec<Vec<RankItem>>,
}

impl SpareBins {
    /// Every spare buffer, for a tree about to grow.
    pub fn take(&self) -> Spare {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Gives back a grown tree's buffers.
    pub fn give(&self, mut grown: Spare) {
        let mut spare = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        spare.bins.append(&mut grown.bins);
        spare.lists.append(&mut grown.lists);
    }
}

impl BinStack {
    /// Takes, among `spare` (another tree's, [`SpareBins`]), the bins buffers of this
    /// stack's node size, as many as it may hold.
    pub fn reuse(&mut self, spare: Vec<NodeBins>) {
        let (len, slots) = (self.base[self.n_slots()] * self.stride, self.n_slots());
        let fits = spare
            .into_iter()
            .filter(|b| b.bins.len() == len && b.range.len() == slots);
        self.spare.extend(fits.take(self.max_pending + 2));
    }

    /// Every bins buffer of the stack, for another tree ([`BinStack::reuse`]).
    pub fn into_spare(mut self) -> Vec<NodeBins> {
        self.spare.append(&mut self.pending);
        self.spare
    }
}
