//! What one candidate's scans reuse from node to node ([`SearchBufs`]): sort keys, bins,
//! the left side's sums and the absolute-error search's orders. A tree's split search
//! holds one in its [`crate::tree::split::SplitBufs`].

use crate::data::{CodeKey, Feature};
use crate::tree::split::scan::categories::CategoryBufs;
use crate::tree::split::scan::median::MedianBufs;

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
    /// A categorical candidate's bins and orders, and the set of its cut
    /// ([`crate::tree::split::scan::categories`]).
    pub(crate) categories: CategoryBufs,
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
            categories: CategoryBufs::default(),
        }
    }
}
