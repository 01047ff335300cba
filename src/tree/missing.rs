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
//! A multiway tree (`multiway`) derives its sides per logical split instead: NaN goes to
//! the child (group) with most training samples, ties to the last, by the sides of the
//! split's chain of binary nodes (`crate::tree::multiway`). Multiway models fitted on
//! complete data derive every side, so they store no exception either way.
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
    /// samples, ties to the right; in a `multiway` tree, along each logical split's chain,
    /// towards its group with most samples. Meaningless at leaves.
    fn default_missing_left(&self, multiway: bool) -> Vec<bool> {
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
        if multiway {
            self.towards_largest_groups(&count, &mut left);
        }
        left
    }

    /// Sets the sides of the chain nodes of every multiway split (a head and its links, the
    /// right children splitting on its feature, which no real child can) so that NaN ends in
    /// the group with most samples (`count` per node), ties to the last group. Chain nodes
    /// after that group's keep their binary side (NaN never reaches them).
    fn towards_largest_groups(&self, count: &[u64], left: &mut [bool]) {
        let n = self.len();
        let mut is_link = vec![false; n];
        for t in 0..n {
            if let Some((_, r)) = self.children(t) {
                is_link[r] = !self.is_leaf(r) && self.feature(r) == self.feature(t);
            }
        }
        let mut chain = Vec::new();
        for head in (0..n).filter(|&t| !self.is_leaf(t) && !is_link[t]) {
            chain.clear();
            let mut c = head;
            let last_right = loop {
                chain.push(c);
                match self.children(c) {
                    Some((_, r)) if is_link[r] => c = r,
                    Some((_, r)) => break r,
                    None => return, // a split node has children
                }
            };
            // Group j < chain.len() is the left child of chain[j]; the last is last_right.
            let mut best = (count[last_right], chain.len());
            for (j, &c) in chain.iter().enumerate().rev() {
                if let Some((l, _)) = self.children(c) {
                    if count[l] > best.0 {
                        best = (count[l], j);
                    }
                }
            }
            for (j, &c) in chain.iter().enumerate().take(best.1 + 1) {
                left[c] = j == best.1;
            }
        }
    }

    /// Sets the missing-value side of every split node: `side(t)` where it is known (learned,
    /// or derived by the builder from its counts), the derived side elsewhere (computed from
    /// the leaf counts only if some node needs it; `multiway`: per logical split).
    pub(crate) fn route_missing(&mut self, side: impl Fn(usize) -> Option<bool>, multiway: bool) {
        let mut derived: Option<Vec<bool>> = None;
        let mut bits = vec![0u64; self.len().div_ceil(64)];
        for t in (0..self.len()).filter(|&t| !self.is_leaf(t)) {
            let left = match side(t) {
                Some(left) => left,
                None => derived.get_or_insert_with(|| self.default_missing_left(multiway))[t],
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
    pub(crate) fn missing_exceptions(&self, multiway: bool) -> Vec<u32> {
        let derived = self.default_missing_left(multiway);
        (0..self.len())
            .filter(|&t| !self.is_leaf(t) && self.missing_left(t) != derived[t])
            .map(|t| t as u32)
            .collect()
    }

    #[cfg(feature = "serde")]
    /// Sets the sides from the stored exceptions (split nodes, increasing); false when one
    /// is not a split node of this tree or the list is not increasing.
    pub(crate) fn route_missing_except(&mut self, exceptions: &[u32], multiway: bool) -> bool {
        let ok = exceptions.windows(2).all(|w| w[0] < w[1])
            && exceptions
                .iter()
                .all(|&t| (t as usize) < self.len() && !self.is_leaf(t as usize));
        if ok {
            self.route_missing(|_| None, multiway);
            for &t in exceptions {
                // The stored nodes take the side opposite to the derived one.
                let t = t as usize;
                self.missing_left[t / 64] ^= 1 << (t % 64);
            }
        }
        ok
    }
}
