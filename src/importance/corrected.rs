//! Impurity importance corrected with shadow features: the "actual impurity reduction"
//! (AIR) of Nembrini, König & Wright (2018), ranger's `importance = "impurity_corrected"`.
//!
//! The forest is grown on `2p` features, the `p` real ones and `p` *shadows*: shadow `j` is
//! feature `j` read at a permuted row, so it has the same marginal distribution (the same
//! cardinality, hence the same MDI bias) but no relation to the output. The corrected
//! importance `AIR(X_j) = MDI(X_j) − MDI(shadow_j)` is ≈ 0 in expectation for an irrelevant
//! feature, and may be negative. Shadows are virtual ([`Shadows::shared`]): X is never
//! copied.

use crate::data::{Feature, Matrix, Shadows, Targets};
use crate::error::{ForestError, Result};
use crate::forest::Forest;
use crate::params::ForestParams;

/// Grows `params` on `x` plus its `p` shadow columns (permutation from `params.seed`).
/// The result has `2p` features: use [`Forest::actual_impurity_reduction`] on it.
pub fn fit_with_shadows<T: Feature>(
    params: &ForestParams,
    x: Matrix<'_, T>,
    targets: Targets<'_>,
    sample_weight: Option<&[f64]>,
) -> Result<Forest> {
    let shadows = Shadows::shared(x.n_rows(), (0..x.n_cols() as u32).collect(), params.seed);
    Forest::fit(params, x.with_shadows(&shadows)?, targets, sample_weight)
}

impl Forest {
    /// `MDI(X_j) − MDI(shadow_j)` for `j < p`, from a forest grown with shadows (raw MDI,
    /// in bits for entropy), averaged over the trees.
    pub fn actual_impurity_reduction(&self) -> Result<Vec<f64>> {
        let p2 = self.n_features();
        if p2 % 2 != 0 {
            return Err(ForestError::Unsupported(
                "the forest was not grown with shadow features (odd feature count)".into(),
            ));
        }
        let imp = self.importances(false);
        let (real, shadow) = imp.split_at(p2 / 2);
        Ok(real.iter().zip(shadow).map(|(r, s)| r - s).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Layout;
    use crate::params::CriterionKind;
    use crate::rng::TreeRng;

    #[test]
    fn irrelevant_high_cardinality_feature_is_corrected_to_about_zero() {
        // y depends on a binary x0; x1 is noise with 200 distinct values.
        let n = 400;
        let mut rng = TreeRng::new(3);
        let mut x = Vec::with_capacity(2 * n);
        let mut y = Vec::with_capacity(n);
        for i in 0..n {
            let x0 = (i % 2) as f64;
            x.push(x0);
            x.push(rng.below(200) as f64);
            y.push(if rng.unit() < 0.75 {
                x0 as u32
            } else {
                1 - x0 as u32
            });
        }
        let m = Matrix::new(&x, n, 2, Layout::RowMajor).unwrap();
        let mut params = ForestParams::random_forest(CriterionKind::Gini);
        params.n_estimators = 100;
        let targets = Targets::classes(&y, 2).unwrap();
        let plain = Forest::fit(&params, m, targets, None).unwrap();
        let raw = plain.importances(false);
        assert!(raw[1] > raw[0], "raw MDI should favour the noise: {raw:?}");
        let shadowed = fit_with_shadows(&params, m, targets, None).unwrap();
        assert_eq!(shadowed.n_features(), 4);
        let air = shadowed.actual_impurity_reduction().unwrap();
        assert!(air[0] > 0.05 && air[1].abs() < 0.02, "{air:?}");
    }
}
