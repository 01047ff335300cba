//! The buffers and bins of the categorical searches.

use crate::params::CategoryGuards;

/// The group of a node's rare categories in an order ([`CategoryGuards::min_samples`]).
pub(in crate::tree::split::scan::categories) const POOLED: u32 = u32::MAX;

/// What the categorical searches reuse from node to node.
#[derive(Default)]
pub(crate) struct CategoryBufs {
    /// The guards of the exact rule, set once per tree.
    pub(crate) guards: CategoryGuards,
    /// The bins, one per category, laid out as the histogram's (the proxy's sums, the
    /// weight first, then the rows' count: `add_row`), zero between searches: `clear`
    /// zeroes those of the categories present.
    pub(in crate::tree::split::scan::categories) table: Vec<f64>,
    /// The set of the last cut (bit `c` of word `c / 64`: category `c` goes left).
    pub(crate) left: Vec<u64>,
    /// The node's categories in code order (NaN last, as one more code).
    pub(in crate::tree::split::scan::categories) present: Vec<u32>,
    /// The categories' values, and their sort keys with codes (`order_categories`).
    pub(in crate::tree::split::scan::categories) values: Vec<f64>,
    pub(in crate::tree::split::scan::categories) order: Vec<(f64, u32)>,
    /// The rare categories ordered as one group, their summed bin, and a bin smoothed.
    pub(in crate::tree::split::scan::categories) rare: Vec<u32>,
    pub(in crate::tree::split::scan::categories) rare_below: f64,
    pub(in crate::tree::split::scan::categories) pooled: Vec<f64>,
    pub(in crate::tree::split::scan::categories) smoothed: Vec<f64>,
    /// The left side's sums, and the random rule's sides of the categories present.
    pub(in crate::tree::split::scan::categories) sums: Vec<f64>,
    pub(in crate::tree::split::scan::categories) goes: Vec<bool>,
}

/// The shape of one candidate's bins: `stride` numbers a bin, NaN's code `nan_code`.
#[derive(Clone, Copy)]
pub(in crate::tree::split::scan::categories) struct CategoryBins {
    pub(in crate::tree::split::scan::categories) stride: usize,
    pub(in crate::tree::split::scan::categories) nan_code: u32,
}

impl CategoryBins {
    pub(in crate::tree::split::scan::categories) fn bin<'t>(
        &self,
        table: &'t [f64],
        c: u32,
    ) -> &'t [f64] {
        &table[c as usize * self.stride..(c as usize + 1) * self.stride]
    }

    /// The rows of bin `bin`.
    pub(in crate::tree::split::scan::categories) fn count(&self, bin: &[f64]) -> f64 {
        bin[self.stride - 1]
    }
}
