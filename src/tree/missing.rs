//! Where missing values (NaN) go at each split node: the side a fit learned where the
//! node's rows had NaN in its feature, and otherwise a side derived from the tree.
//!
//! scikit-learn's rule, which this module keeps: a split that saw NaN sends it to the side
//! its search chose; a split that saw none sends it to the child with more training
//! samples (distinct in-bag rows, not weight), ties to the right. The derived side follows
//! from the leaf counts, so the model format stores only the nodes whose side differs from
//! it ([`Tree::missing_exceptions`]): a model fitted without NaN stores none, and its bytes
//! are those of the format before missing values.
//!
//! Invariant: the bits of [`Tree::missing_left`] are set by [`Tree::route_missing`] once
//! the tree is complete (fit or load), and only there (with the stored exceptions).

use super::Tree;

/// A split node's missing-value side as the fit saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum Missing {
    /// No row of the node had NaN in the split feature: the side is derived.
    #[default]
    Unseen,
    /// NaN rows went left (or, given to [`super::growing::GrowingTree::set_split`], the
    /// side derived from the node's counts is left).
    Left,
    /// NaN rows went right (or the derived side is right).
    Right,
}

impl Missing {
    /// `Left` or `Right`.
    pub(crate) fn side(left: bool) -> Missing {
        Missing::seen(true, left)
    }

    /// The side chosen by a search that saw NaN (`left`), or `Unseen` when it saw none.
    pub(crate) fn seen(any: bool, left: bool) -> Missing {
        match (any, left) {
            (false, _) => Missing::Unseen,
            (true, true) => Missing::Left,
            (true, false) => Missing::Right,
        }
    }
}

impl Tree {
    /// The derived side of every node (`true`: left): the child with more distinct training
    /// samples, ties to the right. Meaningless at leaves.
    fn default_missing_left(&self) -> Vec<bool> {
        let n = self.len();
        let mut count = vec![0u64; n];
        let mut left = vec![false; n];
        for t in (0..n).rev() {
            match self.children(t) {
                None => count[t] = u64::from(self.leaf_count[self.nodes[t].feature()]),
                Some((l, r)) => {
                    count[t] = count[l] + count[r];
                    left[t] = count[l] > count[r];
                }
            }
        }
        left
    }

    /// Sets the missing-value side of every split node: `side(t)` where it is known (learned,
    /// or derived by the builder from its counts), the derived side elsewhere (computed from
    /// the leaf counts only if some node needs it).
    pub(crate) fn route_missing(&mut self, side: impl Fn(usize) -> Option<bool>) {
        let mut derived: Option<Vec<bool>> = None;
        let mut bits = vec![0u64; self.len().div_ceil(64)];
        for t in (0..self.len()).filter(|&t| !self.is_leaf(t)) {
            let left = match side(t) {
                Some(left) => left,
                None => derived.get_or_insert_with(|| self.default_missing_left())[t],
            };
            if left {
                bits[t / 64] |= 1 << (t % 64);
            }
        }
        self.missing_left = bits;
    }

    #[cfg(feature = "serde")]
    /// The split nodes whose missing-value side is not the derived one, in increasing
    /// order: what the model format stores.
    pub(crate) fn missing_exceptions(&self) -> Vec<u32> {
        let derived = self.default_missing_left();
        (0..self.len())
            .filter(|&t| !self.is_leaf(t) && self.missing_left(t) != derived[t])
            .map(|t| t as u32)
            .collect()
    }

    #[cfg(feature = "serde")]
    /// Sets the sides from the stored exceptions (split nodes, increasing); false when one
    /// is not a split node of this tree or the list is not increasing.
    pub(crate) fn route_missing_except(&mut self, exceptions: &[u32]) -> bool {
        let ok = exceptions.windows(2).all(|w| w[0] < w[1])
            && exceptions
                .iter()
                .all(|&t| (t as usize) < self.len() && !self.is_leaf(t as usize));
        if ok {
            self.route_missing(|_| None);
            for &t in exceptions {
                // The stored nodes take the side opposite to the derived one.
                let t = t as usize;
                self.missing_left[t / 64] ^= 1 << (t % 64);
            }
        }
        ok
    }
}
