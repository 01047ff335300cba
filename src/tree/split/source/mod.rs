//! The candidate sources: where a node's candidates are read from, one file each, each
//! drawn by [`crate::tree::split::draw`] and chosen by [`crate::tree::split::route`].
//!
//! [`gathered`] reads X (or its lossless codes, or a sparse X's entries) at the node's
//! rows; [`listed`] reads code or rank lists kept in the order of their codes; [`binned`]
//! reads a node's kept histogram bins; [`direct`] reads X in place at small nodes;
//! [`pair`] and [`few`] read the codes of nodes of two to four rows.

pub(crate) mod binned;
pub(crate) mod direct;
pub(crate) mod few;
pub(crate) mod gathered;
pub(crate) mod listed;
pub(crate) mod pair;

use crate::data::Feature;
use crate::tree::criterion::Criterion;
use crate::tree::split::{NodeCtx, NodeRows, SplitBufs};

/// The node every source splits: its search context, the tree's buffers and its rows.
pub(crate) struct Node<'a, 'r, T: Feature, C: Criterion> {
    pub ctx: &'a NodeCtx<'a, C>,
    pub s: &'a mut SplitBufs<T>,
    pub rows: &'a mut NodeRows<'r, C::Y>,
}
