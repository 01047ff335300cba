//! Monotonic constraints on the features (scikit-learn 1.9's `monotonic_cst`): what a
//! constrained tree's split search admits, which bounds a node hands its children, and how
//! a node's value is clipped to its bounds.
//!
//! A constraint is a sign per feature: `1` (the prediction may only increase with the
//! feature), `-1` (only decrease) or `0` (free). It applies to single-output regression
//! (the mean) and to binary classification, where scikit-learn constrains the frequency of
//! the *first* class (stats slot 1, value slot 0) with the signs flipped, so that a user's
//! `1` still means "the probability of the positive class increases". Both read the same
//! statistics slot: `stats[1] / stats[0]` is the mean (`Σ w·y / Σ w`) of a regression node
//! and the first class's frequency of a classification node. Under
//! `criterion="absolute_error"` the value is the node's weighted median, which no sums
//! give: its search (`split::median`) tests the children's medians
//! ([`Bounds::admits_values`]) and its middle value is the mean of the two medians.
//!
//! The rules, as scikit-learn's splitter and builder apply them:
//! * a cut on a constrained feature is admitted only when both children's values lie in
//!   the node's bounds `[lower, upper]` and are ordered by the sign (`(v_L − v_R)·sign ≤ 0`);
//!   cuts on free features are not tested;
//! * the children of a cut on a free feature inherit the node's bounds; those of a cut on a
//!   constrained feature split them at the middle value, the mean of `v_L` and `v_R` (the
//!   left child gets the lower half for sign `1`, the upper half for `−1`);
//! * every node's value is clipped to its bounds (a class frequency, the other class's
//!   being `1 − p`).
//!
//! Without a constraint (every sign 0, or none given) none of this runs: the parameters
//! carry `None`, and a fit's trees are bit for bit those of a fit without the parameter.

use crate::error::{invalid, Result};
use crate::params::SplitterKind;

/// The values a node's children may take: `[lower, upper]`, `(−∞, +∞)` at the root.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Bounds {
    pub lower: f64,
    pub upper: f64,
}

impl Bounds {
    /// No bound: the root's, and every node's of an unconstrained tree.
    pub(crate) const NONE: Bounds = Bounds {
        lower: f64::NEG_INFINITY,
        upper: f64::INFINITY,
    };

    /// The bounds of the two children of a cut on a feature of sign `sign` (internal
    /// sign, flipped for classifiers): split at the cut's middle value, `middle()`
    /// (scikit-learn's `middle_value`, [`crate::tree::criterion::Criterion::middle_value`]:
    /// the mean of the children's values), asked for a constrained feature only.
    pub(crate) fn children(self, sign: i8, middle: impl FnOnce() -> f64) -> (Bounds, Bounds) {
        if sign == 0 {
            return (self, self);
        }
        let middle = middle();
        let (low, high) = (
            Bounds {
                lower: self.lower,
                upper: middle,
            },
            Bounds {
                lower: middle,
                upper: self.upper,
            },
        );
        match sign {
            1 => (low, high),
            _ => (high, low),
        }
    }

    /// Clips a node's value (`width` 1: a mean; 2: the two class frequencies) to the
    /// bounds, as scikit-learn's `clip_node_value` does: slot 0, and for two classes the
    /// second frequency rewritten as `1 − p₀`.
    pub(crate) fn clip(self, value: &mut [f64]) {
        let Some(v) = value.first().copied() else {
            return;
        };
        value[0] = if v < self.lower {
            self.lower
        } else if v > self.upper {
            self.upper
        } else {
            v
        };
        if value.len() == 2 {
            value[1] = 1.0 - value[0];
        }
    }

    /// Whether the cut whose left child has statistics `left` (the node's: `total`) keeps
    /// both children's means (or first-class frequencies) in the bounds and ordered by
    /// `sign` (nonzero): scikit-learn's `check_monotonicity` of the sums' criteria.
    #[inline]
    pub(crate) fn admits(self, sign: i8, total: &[f64], left: &[f64]) -> bool {
        let (wl, wr) = (left[0], total[0] - left[0]);
        let (vl, vr) = (left[1] / wl, (total[1] - left[1]) / wr);
        self.admits_values(sign, vl, vr)
    }

    /// Whether children of values `vl` (left) and `vr` lie in the bounds and are ordered by
    /// `sign` (nonzero): scikit-learn's `_check_monotonicity`, which the absolute-error
    /// search asks of the children's medians.
    #[inline]
    pub(crate) fn admits_values(self, sign: i8, vl: f64, vr: f64) -> bool {
        (vl >= self.lower)
            & (vr >= self.lower)
            & (vl <= self.upper)
            & (vr <= self.upper)
            & ((vl - vr) * f64::from(sign) <= 0.0)
    }
}

/// The constraint a fit runs with, from the user's signs: `None` when no sign is nonzero
/// (the unconstrained fit, unchanged), else the internal signs (flipped for a classifier,
/// see the module docs). Refuses a length other than `n_features`, a sign outside
/// {−1, 0, 1}, and a constraint on multiway splits (a categorical variable has no order
/// to keep).
pub(crate) fn resolve(
    cst: Option<&[i8]>,
    n_features: usize,
    classification: bool,
    splitter: SplitterKind,
) -> Result<Option<Vec<i8>>> {
    let Some(cst) = cst else {
        return Ok(None);
    };
    if cst.len() != n_features {
        return Err(invalid(
            "monotonic_cst",
            format!(
                "has shape ({},) but the input data X has {n_features} features",
                cst.len()
            ),
        ));
    }
    if let Some(bad) = cst.iter().find(|s| !(-1..=1).contains(*s)) {
        return Err(invalid(
            "monotonic_cst",
            format!("must be an array-like of -1, 0 or 1, got {bad}"),
        ));
    }
    if cst.iter().all(|&s| s == 0) {
        return Ok(None);
    }
    if splitter == SplitterKind::Multiway {
        return Err(invalid(
            "monotonic_cst",
            "constraints are not available with multiway splits (their children are the \
             categories of a variable, which have no order to keep)",
        ));
    }
    let flip = if classification { -1 } else { 1 };
    Ok(Some(cst.iter().map(|&s| s * flip).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_split_the_bounds_at_the_middle_value() {
        let b = Bounds {
            lower: 0.0,
            upper: 10.0,
        };
        let (l, r) = b.children(1, || 2.0);
        assert_eq!((l.lower, l.upper, r.lower, r.upper), (0.0, 2.0, 2.0, 10.0));
        let (l, r) = b.children(-1, || 2.0);
        assert_eq!((l.lower, l.upper, r.lower, r.upper), (2.0, 10.0, 0.0, 2.0));
        // A free feature's children inherit the bounds, no middle value asked.
        assert_eq!(b.children(0, || unreachable!()), (b, b));
    }

    #[test]
    fn admission_follows_sign_and_bounds() {
        // Node: 4 rows of weight 1, Σy = 8; left 2 rows Σy = 2 (mean 1), right mean 3.
        let (total, left) = ([4.0, 8.0, 0.0], [2.0, 2.0, 0.0]);
        assert!(Bounds::NONE.admits(1, &total, &left));
        assert!(!Bounds::NONE.admits(-1, &total, &left));
        let tight = Bounds {
            lower: 1.5,
            upper: f64::INFINITY,
        };
        assert!(!tight.admits(1, &total, &left));
        let touching = Bounds {
            lower: 1.0,
            upper: 3.0,
        };
        assert!(touching.admits(1, &total, &left));
        // Equal children satisfy either sign (scikit-learn's `≤ 0`).
        assert!(Bounds::NONE.admits(-1, &[4.0, 8.0, 0.0], &[2.0, 4.0, 0.0]));
    }

    #[test]
    fn clipping_keeps_frequencies_summing_to_one() {
        let b = Bounds {
            lower: 0.25,
            upper: 0.5,
        };
        let mut v = [0.75, 0.25];
        b.clip(&mut v);
        assert_eq!(v, [0.5, 0.5]);
        let mut m = [-3.0];
        b.clip(&mut m);
        assert_eq!(m, [0.25]);
    }

    #[test]
    fn resolution_validates_and_flips_for_classifiers() {
        let best = SplitterKind::Best;
        assert_eq!(resolve(None, 3, false, best).ok(), Some(None));
        assert_eq!(resolve(Some(&[0, 0]), 2, true, best).ok(), Some(None));
        assert_eq!(
            resolve(Some(&[1, 0, -1]), 3, true, best).ok(),
            Some(Some(vec![-1, 0, 1]))
        );
        assert_eq!(
            resolve(Some(&[1, 0, -1]), 3, false, best).ok(),
            Some(Some(vec![1, 0, -1]))
        );
        assert!(resolve(Some(&[1, 0]), 3, false, best).is_err());
        assert!(resolve(Some(&[2, 0]), 2, false, best).is_err());
        assert!(resolve(Some(&[1, 0]), 2, false, SplitterKind::Multiway).is_err());
        assert_eq!(
            resolve(Some(&[0, 0]), 2, false, SplitterKind::Multiway).ok(),
            Some(None)
        );
    }
}
