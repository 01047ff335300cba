//! The gathered search's buffers: those of a tree ([`SplitBufs`], kept from node to node)
//! and those of one candidate's search ([`SearchBufs`]).

use crate::data::{CodeKey, Feature};
use crate::tree::split::draw::MAX_BATCH;
use crate::tree::split::read::sparse_gather::{Entries, NodeFeatures, RowPositions};
use crate::tree::split::scan::median::MedianBufs;

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
    /// The partition's buffer (see [`crate::tree::split::read::partition::stable_partition`]).
    pub(crate) partition_buf: Vec<u64>,
    pub(crate) search: SearchBufs<T>,
    /// The features with an entry in the node, for a sparse X.
    pub(in crate::tree::split) node_features: NodeFeatures,
    /// Where a sparse X's rows are in the node.
    pub(in crate::tree::split) node_rows: RowPositions,
}

/// What the threshold searches reuse from node to node.
pub(crate) struct SearchBufs<T: Feature> {
    /// Packed sort keys (value, position), and the radix sort's second buffer.
    pub(crate) packed: Vec<T::Packed>,
    pub(crate) radix: Vec<T::Packed>,
    /// The same for codes, and for wide codes.
    pub(crate) code_keys: Vec<CodeKey>,
    pub(crate) code_radix: Vec<CodeKey>,
    pub(crate) wide_keys: Vec<u64>,
    pub(crate) wide_radix: Vec<u64>,
    /// The counts of a counting sort of codes.
    pub(crate) counts: Vec<u32>,
    pub(crate) left: Vec<f64>,
    /// The 256 bins of the histogram search, zero between searches
    /// ([`crate::tree::split::scan::bins::scan_occupied`]), or those of wide codes.
    pub(crate) bins: Vec<f64>,
    /// The bitmap of the wide codes a node occupies.
    pub(crate) occupied: Vec<u64>,
    /// A sparse candidate's values written out ([`crate::tree::split::ThresholdRule::search_entries`]), and
    /// the sums of its entries.
    pub(crate) dense: Vec<T>,
    pub(crate) stored: Vec<f64>,
    /// The absolute-error search's ranks, orders and prefix errors ([`crate::tree::split::scan::median`]).
    pub(crate) median: MedianBufs,
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
            partition_buf: Vec::with_capacity(n / 2 + 1),
            search: SearchBufs::new(stats_len),
            node_features: NodeFeatures::default(),
            node_rows: RowPositions::default(),
        }
    }
}

impl<T: Feature> SearchBufs<T> {
    pub(in crate::tree::split) fn new(stats_len: usize) -> Self {
        SearchBufs {
            packed: Vec::new(),
            radix: Vec::new(),
            code_keys: Vec::new(),
            code_radix: Vec::new(),
            wide_keys: Vec::new(),
            wide_radix: Vec::new(),
            counts: Vec::new(),
            left: vec![0.0; stats_len],
            bins: Vec::new(),
            occupied: Vec::new(),
            dense: Vec::new(),
            stored: vec![0.0; stats_len],
            median: MedianBufs::default(),
        }
    }
}
