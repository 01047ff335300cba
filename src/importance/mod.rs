//! Variable importances derived from fitted forests and gradient-boosting models.
//!
//! Module map: `mdi` (mean decrease of impurity: raw, per tree, by depth), `permutation`
//! (Breiman's OOB and held-out MDA, casewise), `local` (per-sample MDI and MDI-oob),
//! `corrected` (shadow-feature "actual impurity reduction"), `context` (context-dependent
//! scores from totally randomized trees), `shap` (path-dependent TreeSHAP values and
//! interaction values, of forests and boosters), `boosted_oob` (out-of-bag permutation
//! importance of a subsampled booster). Local MDI and TreeSHAP read boosters too. Every
//! measure is a function of a fitted [`crate::Forest`] or [`crate::boosting::Booster`]
//! and, where needed, data; none needs Python.

pub mod boosted_oob;
pub mod context;
pub mod corrected;
pub mod local;
pub mod mdi;
pub mod permutation;
pub mod shap;
pub mod walk;
