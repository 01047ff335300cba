//! The targets a fit's parameters accept, refused with scikit-learn's typed errors and
//! messages before anything is grown.

use crate::data::Targets;
use crate::error::{ForestError, Result};
use crate::params::{CriterionKind, ForestParams};

/// What the multi-output path does not do yet, refused with a typed error: the Poisson
/// criterion.
pub(super) fn check_multi_output(targets: &Targets<'_>, params: &ForestParams) -> Result<()> {
    let multi = matches!(
        targets,
        Targets::MultiClasses { .. } | Targets::MultiRegression { .. }
    );
    if multi && params.criterion == CriterionKind::Poisson {
        return Err(ForestError::Unsupported(
            "criterion=\"poisson\" does not support multi-output targets yet; use \
             \"squared_error\" or \"absolute_error\""
                .into(),
        ));
    }
    Ok(())
}

/// scikit-learn's conditions on the targets of the Poisson criterion, with its messages.
pub(super) fn check_poisson_targets(y: &[f64]) -> Result<()> {
    if y.iter().any(|&v| v < 0.0) {
        return Err(ForestError::InvalidTarget(
            "Some value(s) of y are negative which is not allowed for Poisson regression.".into(),
        ));
    }
    if y.iter().sum::<f64>() <= 0.0 {
        return Err(ForestError::InvalidTarget(
            "Sum of y is not strictly positive which is necessary for Poisson regression.".into(),
        ));
    }
    Ok(())
}
