//! The losses of gradient boosting: their optimal constant (the initial raw prediction),
//! negative gradients, Friedman's terminal-region update of a leaf, and the loss value
//! reported as `train_score_`, all with scikit-learn's `GradientBoosting*` semantics
//! (`sklearn/ensemble/_gb.py` and `sklearn/_loss`, version 1.9).
//!
//! Raw predictions live on the link scale: the identity for regression, the logit for
//! binomial log loss, half the logit for the exponential loss, and the symmetric
//! multinomial logit (log of `p_k` over the geometric mean of the `p`) for K classes.

use crate::parallel::map_ordered;

/// A boosting loss. `alpha` is the quantile of the quantile loss, or the quantile of the
/// absolute residuals that sets Huber's `delta` at every round.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Loss {
    /// `(y − F)²`, reported as the mean squared error.
    SquaredError,
    /// `|y − F|`.
    AbsoluteError,
    /// `½r²` for `|r| ≤ δ`, `δ(|r| − δ/2)` beyond, δ the `alpha`-quantile of `|y − F|`.
    Huber {
        /// Quantile of the absolute residuals that sets δ.
        alpha: f64,
    },
    /// Pinball loss `ρ_α(y − F)`.
    Quantile {
        /// The quantile estimated.
        alpha: f64,
    },
    /// Binomial (`n_classes == 2`, one tree per round) or multinomial (K trees) log loss.
    LogLoss,
    /// `y e^{−F} + (1 − y) e^{F}` (AdaBoost's loss), binary only.
    Exponential,
}

impl Loss {
    /// Whether the loss is a classification loss.
    pub fn is_classification(self) -> bool {
        matches!(self, Loss::LogLoss | Loss::Exponential)
    }

    /// scikit-learn's name of the loss.
    pub fn name(self) -> &'static str {
        match self {
            Loss::SquaredError => "squared_error",
            Loss::AbsoluteError => "absolute_error",
            Loss::Huber { .. } => "huber",
            Loss::Quantile { .. } => "quantile",
            Loss::LogLoss => "log_loss",
            Loss::Exponential => "exponential",
        }
    }
}

/// What the per-row formulas of a round read: the loss, the number of raw columns and
/// Huber's δ of the round.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RoundLoss {
    pub loss: Loss,
    /// Raw columns (trees per round): K for multinomial log loss, else 1.
    pub k: usize,
    pub delta: f64,
}

/// The logistic function, computed on the side where `exp` cannot overflow.
#[inline]
pub(crate) fn expit(r: f64) -> f64 {
    if r >= 0.0 {
        1.0 / (1.0 + (-r).exp())
    } else {
        let e = r.exp();
        e / (1.0 + e)
    }
}

/// `log(1 + e^r)` without overflow.
#[inline]
fn log1pexp(r: f64) -> f64 {
    if r > 0.0 {
        r + (-r).exp().ln_1p()
    } else {
        r.exp().ln_1p()
    }
}

/// Softmax of one row of raw predictions into `p`.
#[inline]
pub(crate) fn softmax(raw: &[f64], p: &mut [f64]) {
    let max = raw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut sum = 0.0;
    for (q, &r) in p.iter_mut().zip(raw) {
        *q = (r - max).exp();
        sum += *q;
    }
    for q in p.iter_mut() {
        *q /= sum;
    }
}

impl RoundLoss {
    /// Negative gradient for tree `k` of a row whose target is `y` (the class code for
    /// classification) and whose raw predictions are `raw` (`k` columns).
    #[inline]
    pub fn neg_gradient(&self, y: f64, raw: &[f64], k: usize, p: &mut [f64]) -> f64 {
        let r = raw[k.min(raw.len() - 1)];
        match self.loss {
            Loss::SquaredError => y - r,
            Loss::AbsoluteError => match r > y {
                true => -1.0,
                false => 1.0,
            },
            Loss::Huber { .. } => {
                let d = y - r;
                match d.abs() <= self.delta {
                    true => d,
                    false => self.delta * d.signum(),
                }
            }
            Loss::Quantile { alpha } => match y >= r {
                true => alpha,
                false => alpha - 1.0,
            },
            Loss::LogLoss if self.k == 1 => y - expit(r),
            Loss::LogLoss => {
                softmax(raw, p);
                f64::from(u8::from(y as usize == k)) - p[k]
            }
            Loss::Exponential => match y > 0.5 {
                true => (-r).exp(),
                false => -r.exp(),
            },
        }
    }

    /// The loss of one row (before the factor of 2 scikit-learn applies to the squared
    /// error and binomial log loss in its scores, see [`RoundLoss::score_factor`]).
    #[inline(always)] // (per row of every round's scores: a call per row otherwise)
    pub fn loss(&self, y: f64, raw: &[f64], p: &mut [f64]) -> f64 {
        let r = raw[0];
        match self.loss {
            Loss::SquaredError => 0.5 * (y - r) * (y - r),
            Loss::AbsoluteError => (y - r).abs(),
            Loss::Huber { .. } => {
                let d = (y - r).abs();
                match d <= self.delta {
                    true => 0.5 * d * d,
                    false => self.delta * (d - 0.5 * self.delta),
                }
            }
            Loss::Quantile { alpha } => {
                let d = y - r;
                match d >= 0.0 {
                    true => alpha * d,
                    false => (alpha - 1.0) * d,
                }
            }
            Loss::LogLoss if self.k == 1 => log1pexp(r) - y * r,
            Loss::LogLoss => {
                let max = raw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let lse = max + raw.iter().map(|&v| (v - max).exp()).sum::<f64>().ln();
                let _ = p;
                lse - raw[y as usize]
            }
            Loss::Exponential => match y > 0.5 {
                true => (-r).exp(),
                false => r.exp(),
            },
        }
    }

    /// scikit-learn reports twice its half squared error and half binomial deviance.
    pub fn score_factor(&self) -> f64 {
        match (self.loss, self.k) {
            (Loss::SquaredError, _) | (Loss::LogLoss, 1) => 2.0,
            _ => 1.0,
        }
    }
}

/// `_weighted_percentile(values, weights, rank)` of scikit-learn (numpy's `inverted_cdf`):
/// the smallest value whose cumulative weight, in increasing value order, reaches
/// `rank / 100` of the total weight. `order` is scratch space.
pub(crate) fn weighted_percentile(values: &[f64], weights: &[f64], rank: f64) -> f64 {
    if values.is_empty() || !weights.iter().any(|&w| w > 0.0) {
        return 0.0;
    }
    let mut order: Vec<u32> = (0..values.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| values[a as usize].total_cmp(&values[b as usize]));
    let mut cdf = Vec::with_capacity(values.len());
    let mut acc = 0.0;
    for &i in &order {
        acc += weights[i as usize];
        cdf.push(acc);
    }
    let total = acc;
    let mut target = rank / 100.0 * total;
    if target == 0.0 {
        // Leading zero weights are skipped at rank 0 (scikit-learn #20528).
        target = f64::from_bits(1);
    }
    let at = cdf.partition_point(|&c| c < target).min(values.len() - 1);
    values[order[at] as usize]
}

/// `np.percentile(values, q)` with linear interpolation (the unweighted default).
pub(crate) fn percentile_linear(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    let pos = q / 100.0 * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    let frac = pos - lo as f64;
    // numpy's _lerp: a + (b − a)·t, switched to b − (b − a)(1 − t) for t ≥ ½.
    let (a, b) = (v[lo], v[hi]);
    match frac >= 0.5 {
        true => b - (b - a) * (1.0 - frac),
        false => a + (b - a) * frac,
    }
}

/// `safe_divide` of scikit-learn's leaf update: 0 when the denominator vanishes.
fn safe_divide(num: f64, den: f64) -> f64 {
    match den.abs() < 1e-150 {
        true => 0.0,
        false => num / den,
    }
}

/// The rows of one leaf, as the terminal-region update reads them.
pub(crate) struct LeafRows<'a> {
    /// Targets (class codes for classification).
    pub y: &'a [f64],
    /// Negative gradients of the tree's column.
    pub neg_g: &'a [f64],
    /// Raw predictions of the tree's column before the round.
    pub raw: &'a [f64],
    pub w: &'a [f64],
}

/// `Σ w x / Σ w` (numpy's `average`); 0 when every weight is 0 (a leaf reached only by
/// zero-weight rows of the round then adds nothing).
fn average(x: impl Iterator<Item = f64>, w: &[f64]) -> f64 {
    let (mut s, mut sw) = (0.0, 0.0);
    for (v, &wi) in x.zip(w) {
        s += v * wi;
        sw += wi;
    }
    match sw > 0.0 {
        true => s / sw,
        false => 0.0,
    }
}

/// A leaf's weighted sums for the Newton-step losses (log and exponential): their leaf
/// value is a ratio of two weighted means, so one pass over the rows in row order gives
/// it, with no grouping of the rows by leaf ([`RoundLoss::add_newton`]).
#[derive(Clone, Copy, Default)]
pub(crate) struct NewtonSums {
    /// `Σ w g` (negative gradients).
    num: f64,
    /// `Σ w h` (the loss's second-order term).
    den: f64,
    w: f64,
}

/// Rows whose losses one task sums ([`RoundLoss::mean_loss`]): a fixed size, so that the
/// sum does not depend on the number of threads.
const LOSS_BLOCK: usize = 4096;

impl RoundLoss {
    /// `Σ w loss / Σ w` over the rows `keep` selects (raw predictions `raw`, `k` per row):
    /// each block of [`LOSS_BLOCK`] rows summed in row order (the blocks in parallel), the
    /// blocks' sums in block order, so the same bits for any number of threads.
    pub fn mean_loss(
        &self,
        raw: &[f64],
        y: &[f64],
        w: &[f64],
        keep: impl Fn(usize) -> bool + Sync,
    ) -> f64 {
        let (k, n) = (self.k, y.len());
        let blocks = map_ordered(n.div_ceil(LOSS_BLOCK), |b| {
            let mut p = vec![0.0; k];
            let (mut s, mut sw) = (0.0, 0.0);
            for i in (b * LOSS_BLOCK..n.min((b + 1) * LOSS_BLOCK)).filter(|&i| keep(i)) {
                s += w[i] * self.loss(y[i], &raw[i * k..(i + 1) * k], &mut p);
                sw += w[i];
            }
            (s, sw)
        });
        let (s, sw) = blocks
            .into_iter()
            .fold((0.0, 0.0), |(s, sw), (bs, bw)| (s + bs, sw + bw));
        s / sw
    }

    /// Friedman's line search for one leaf (scikit-learn's `_update_terminal_regions`):
    /// a Newton step for the log and exponential losses, the weighted median (percentile)
    /// of the residuals for absolute error (quantile), and Huber's one-step formula
    /// `m + Σ w sign(r − m) min(δ, |r − m|) / Σ w` with `m` their weighted median. The
    /// squared error keeps the tree's mean, `mean`.
    pub fn leaf_value(&self, rows: &LeafRows<'_>, class: usize, mean: f64) -> f64 {
        let residuals = || rows.y.iter().zip(rows.raw).map(|(y, r)| y - r);
        match self.loss {
            Loss::SquaredError => mean,
            Loss::AbsoluteError => {
                weighted_percentile(&residuals().collect::<Vec<_>>(), rows.w, 50.0)
            }
            Loss::Quantile { alpha } => {
                weighted_percentile(&residuals().collect::<Vec<_>>(), rows.w, 100.0 * alpha)
            }
            Loss::Huber { .. } => {
                let d: Vec<f64> = residuals().collect();
                let m = weighted_percentile(&d, rows.w, 50.0);
                let term = d.iter().map(|&v| {
                    let e = v - m;
                    e.signum() * self.delta.min(e.abs()) * f64::from(u8::from(e != 0.0))
                });
                m + average(term, rows.w)
            }
            Loss::LogLoss | Loss::Exponential => {
                let mut sums = NewtonSums::default();
                for ((&y, &g), &w) in rows.y.iter().zip(rows.neg_g).zip(rows.w) {
                    self.add_newton(&mut sums, y, g, w, class);
                }
                self.newton_value(&sums)
            }
        }
    }

    /// Whether the leaf value is a Newton step ([`NewtonSums`]) rather than a percentile.
    pub fn is_newton(&self) -> bool {
        matches!(self.loss, Loss::LogLoss | Loss::Exponential)
    }

    /// Adds a row (target `y`, negative gradient `g` of tree column `class`, weight `w`)
    /// to a leaf's [`NewtonSums`].
    pub fn add_newton(&self, sums: &mut NewtonSums, y: f64, g: f64, w: f64, class: usize) {
        let hess = match self.loss {
            Loss::Exponential => match y > 0.5 {
                true => g,
                false => -g,
            },
            _ => {
                let target = match self.k {
                    1 => y,
                    _ => f64::from(u8::from(y as usize == class)),
                };
                let p = target - g;
                p * (1.0 - p)
            }
        };
        sums.num += g * w;
        sums.den += hess * w;
        sums.w += w;
    }

    /// The Newton step of a leaf's sums: `Σ w g / Σ w h`, times `(K − 1) / K` for the
    /// multinomial log-loss; 0 for a leaf of weight 0 or of vanishing curvature.
    pub fn newton_value(&self, sums: &NewtonSums) -> f64 {
        let mean = |s: f64| match sums.w > 0.0 {
            true => s / sums.w,
            false => 0.0,
        };
        let num = match (self.loss, self.k) {
            (Loss::LogLoss, k) if k > 1 => mean(sums.num) * ((k as f64 - 1.0) / k as f64),
            _ => mean(sums.num),
        };
        safe_divide(num, mean(sums.den))
    }
}

/// The initial raw prediction: the loss's optimal constant as scikit-learn's default
/// `init` estimator gives it (a weighted mean, median or quantile for regression, the
/// link of the weighted class priors, clipped to `[ε, 1 − ε]`, for classification).
/// `weighted` is whether the user passed sample weights (scikit-learn then uses the
/// weighted percentile, else numpy's interpolated one).
pub(crate) fn initial_raw(
    loss: Loss,
    y: &[f64],
    w: &[f64],
    weighted: bool,
    n_classes: usize,
) -> Vec<f64> {
    let quantile = |q: f64| match weighted {
        true => weighted_percentile(y, w, 100.0 * q),
        false => percentile_linear(y, 100.0 * q),
    };
    match loss {
        Loss::SquaredError => vec![average(y.iter().copied(), w)],
        Loss::AbsoluteError | Loss::Huber { .. } => vec![quantile(0.5)],
        Loss::Quantile { alpha } => vec![quantile(alpha)],
        Loss::LogLoss | Loss::Exponential => {
            let mut prior = vec![0.0; n_classes];
            for (&c, &wi) in y.iter().zip(w) {
                prior[c as usize] += wi;
            }
            let total: f64 = prior.iter().sum();
            let eps = f64::EPSILON;
            let p: Vec<f64> = prior
                .iter()
                .map(|&v| (v / total).clamp(eps, 1.0 - eps))
                .collect();
            let logit = |q: f64| (q / (1.0 - q)).ln();
            match (loss, n_classes) {
                (Loss::Exponential, _) => vec![0.5 * logit(p[1])],
                (_, 2) => vec![logit(p[1])],
                _ => {
                    let mean_log = p.iter().map(|q| q.ln()).sum::<f64>() / p.len() as f64;
                    p.iter().map(|q| q.ln() - mean_log).collect()
                }
            }
        }
    }
}
