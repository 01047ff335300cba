//! The scans of one candidate: its cuts offered in order to [`crate::tree::split::BestCut`],
//! from rows in the order of their values, codes or ranks ([`rows`]), from bins
//! ([`bins`]), with NaN rows on either side ([`missing`] for values, [`nan_bins`] for
//! bins), or, for absolute error, by the children's medians ([`median`]).

pub(crate) mod bins;
pub(crate) mod bufs;
pub(crate) mod categories;
pub(crate) mod median;
pub(crate) mod missing;
pub(crate) mod nan_bins;
pub(crate) mod rows;
