//! Reading a node's rows: its candidates' values gathered from X ([`gather`]; of a sparse
//! X, [`sparse_gather`]), which side of a cut each row goes to ([`side`]), and its rows
//! partitioned between the children ([`partition`]).

pub(crate) mod gather;
pub(crate) mod partition;
pub(crate) mod side;
pub(crate) mod sparse_gather;
