//! What the split search keeps between nodes: its buffers ([`bufs`]), the code and rank
//! lists of a listed subtree ([`code_lists`]), the bins of pending nodes ([`node_bins`])
//! and the exact search's bins of lossless codes ([`kept_codes`]).

pub(crate) mod bufs;
pub(crate) mod code_lists;
pub(crate) mod kept_codes;
pub(crate) mod node_bins;
