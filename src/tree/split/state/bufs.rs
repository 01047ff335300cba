//! The buffers of a tree's split search ([`SplitBufs`]), kept from node to node; those of
//! one candidate's scan ([`SearchBufs`]) live with the scans.

use crate::data::Feature;
use crate::tree::split::draw::MAX_BATCH;
use crate::tree::split::read::sparse_gather::{Entries, NodeFeatures, RowPositions};
use crate::tree::split::scan::bufs::SearchBufs;

/// Per-tree buffers of the split search, allocated once and reused by every node.
pub(crate) struct SplitBufs<T: Feature> {
    /// Candidates gathered together (see [`crate::tree::split::read::gather::gather_many`]), each scored where it lies.
    pub(crate) batch: Vec<Vec<T>>,
    /// The codes of the batch's coded candidates, at the candidate's place in the batch.
    pub(in crate::tree::split) codes: Vec<Vec<u8>>,
    /// The same for wide codes.
    pub(in crate::tree::split) wide: Vec<Vec<u16>>,
    /// The same for the stored entries of sparse candidates.
    pub(in crate::tree::split) entries: Vec<Entries<T>>,
    /// 1 for each row of the node that goes left under the best cut so far, written only
    /// when a new gather is about to overwrite the best candidate's column: one byte a row
    /// instead of another buffer of the root's size.
    pub(in crate::tree::split) best_left: Vec<u8>,
    /// The set of the best categorical cut so far (see
    /// [`crate::tree::split::scan::categories`]).
    pub(in crate::tree::split) best_categories: Vec<u64>,
    /// The partition's buffer (see [`crate::tree::split::read::partition::stable_partition`]).
    pub(crate) partition_buf: Vec<u64>,
    pub(crate) search: SearchBufs<T>,
    /// The features with an entry in the node, for a sparse X.
    pub(in crate::tree::split) node_features: NodeFeatures,
    /// Where a sparse X's rows are in the node.
    pub(in crate::tree::split) node_rows: RowPositions,
}

impl<T: Feature> SplitBufs<T> {
    /// Buffers for trees of up to `n` rows and a criterion of `stats_len` statistics.
    pub fn new(n: usize, stats_len: usize) -> Self {
        SplitBufs {
            batch: (0..MAX_BATCH).map(|_| Vec::new()).collect(),
            codes: (0..MAX_BATCH).map(|_| Vec::new()).collect(),
            wide: (0..MAX_BATCH).map(|_| Vec::new()).collect(),
            entries: (0..MAX_BATCH).map(|_| Entries::default()).collect(),
            best_left: Vec::new(),
            best_categories: Vec::new(),
            partition_buf: Vec::with_capacity(n / 2 + 1),
            search: SearchBufs::new(stats_len),
            node_features: NodeFeatures::default(),
            node_rows: RowPositions::default(),
        }
    }
}
