//! Multiway totally randomized trees on integer-coded categorical inputs (the trees of
//! Louppe et al. 2013, Thm 1, and Louppe 2014, §6.2).
//!
//! A node conditioned on the variables `B` used on its branch draws `K = max_features`
//! candidates uniformly **without replacement among the variables not yet used** (those
//! constant in the node included, as the theory requires) and keeps the one with the largest
//! multiway impurity decrease `Δi = i(t) − Σ_v (w_v / w_t) i(t_v)`, one child per observed
//! value `v`. Ties (within a relative 1e-12 of `i(t)`) go to the first drawn, so they are
//! broken uniformly at random.
//!
//! Storage keeps the binary node arrays of [`Tree`](super::Tree), so prediction, `apply`,
//! persistence and MDI (`crate::importance::mdi`) work unchanged:
//! * a split on `X_m` with observed values `v_1 < … < v_k` is a right-leaning **chain** of
//!   `k − 1` binary nodes on `X_m`: `x ≤ (v_j + v_{j+1})/2` goes to the child of `v_j`,
//!   otherwise to the next chain node. The chain's weighted decreases telescope to the
//!   multiway `w_t Δi`. A chain node after the first is a *link*: it splits on the same
//!   feature as its parent, which no real child can do (its variable is used).
//!   Values unseen at fit go to the nearest observed value (ties to the lower one);
//! * missing values (NaN) are one more value, whose group is the chain's last (NaN sorts
//!   after every value): its link has threshold `+inf` ("x ≤ +inf" keeps the values left),
//!   and every node of the chain sends NaN right, so NaN rows reach their own child. A
//!   split that saw no NaN sends one met at predict time to its child with most training
//!   samples (ties to the last): sides the model format derives from the counts
//!   (`crate::tree::missing`), so models fitted on complete data store none and keep their
//!   bytes. The chain's weighted decreases still telescope to the multiway `w_t Δi` with
//!   the NaN group as one child;
//! * a winner constant in the node (one child, `Δi = 0`) is a **no-op level**: the variable
//!   joins `B` and the node's rows continue, one level deeper, in the left child of a node
//!   with threshold `f64::MAX`; its right child is an empty leaf (weight 0, the node's
//!   value) that no finite input reaches. It is stored because it is a level of the
//!   theory's tree: the logical depth of a node is then exactly `|B|`, which makes MDI by
//!   depth the decomposition by interaction degree of Thm 1 (`crate::importance::mdi`).
//!   A no-op whose continuation could not split (depth limit, no non-constant unused
//!   variable left) is not stored: the node is a leaf, which changes no importance.
//!
//! Invariant: `features[..depth]` are the variables used on the current branch (the
//! logical depth equals their number); descendants only permute `features[depth..]`, so
//! siblings grown one after the other see the same used set.
//!
//! This module owns the public face (the no-op threshold, the integer-code check of the
//! input); `grow` owns the growth of one tree (the explicit stack, the chains, the stopping
//! rules) and `choose` one logical node's split (the draw of candidates, their multiway
//! decrease, the reordering of the node's rows by the winner).

mod choose;
mod grow;

pub(crate) use grow::grow;

use crate::data::{Feature, Matrix};
use crate::error::{ForestError, Result};

/// Threshold of a no-op node: every finite value goes left.
pub const NO_OP_THRESHOLD: f64 = f64::MAX;

/// Fails with [`ForestError::NonInteger`] on the first value of `x` with a fractional part
/// (NaN, a missing value, is a category of its own).
pub(crate) fn check_integer_codes<T: Feature>(x: &Matrix<'_, T>) -> Result<()> {
    for col in 0..x.n_cols() {
        for row in 0..x.n_rows() {
            let value = x.get(row, col).to_f64();
            if value.fract() != 0.0 && !value.is_nan() {
                return Err(ForestError::NonInteger { row, col, value });
            }
        }
    }
    Ok(())
}
