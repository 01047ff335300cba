//! The Poisson criterion: statistics `[w, Σ w·y, Σ w·y·ln y]` scored by the half Poisson
//! deviance ([`Poisson`]), for non-negative targets with a positive sum (checked by the
//! caller, as scikit-learn's `"poisson"`).
//!
//! Invariants: the proxy reads only `w` and `Σ w·y`, so the split search may leave the
//! third sum out ([`Criterion::add_for_proxy`]); a cut leaving a child with
//! `Σ w·y ≤ max(10 ε, 10⁻¹⁰ Σ_t w·y)` gets the proxy `−∞`, which [`Criterion::allows`] refuses, so no child
//! of a split predicts 0 (the deviance of a positive `y` would be infinite). A node's
//! impurity comes from its sums unless they cancel (a nearly pure node), then from one
//! pass over its rows, as scikit-learn computes every node's.

use super::{by_lanes, merge, whole_terms, Criterion, LANES};

/// Below this sum of `w·y` a node predicts 0 (scikit-learn's Poisson `EPSILON`).
const ZERO_SUM: f64 = 10.0 * f64::EPSILON;
/// A child's sum is 0 below this fraction of its parent's too: the right child's sum is
/// `total − left`, whose rounding (about `√n ε` of the total, `n ε` at worst) an absolute
/// `10 ε` does not cover. scikit-learn sums the smaller child directly, so its zeros are
/// exact there; a legitimate child holding less than `10⁻¹⁰` of its parent's sum is
/// refused here and allowed there.
const ZERO_SHARE: f64 = 1e-10;

/// Below this fraction of the magnitude of its terms, the impurity from the sums is
/// recomputed from the rows: the sums' rounding (about `√n ε` of that magnitude) then
/// stays below `10⁻¹⁰` of the impurity for nodes of up to 10⁸ rows.
const NEAR_PURE: f64 = 1e-3;

/// `y · ln y`, with `0 · ln 0 = 0`.
#[inline(always)]
fn xlnx(y: f64) -> f64 {
    if y > 0.0 {
        y * y.ln()
    } else {
        0.0
    }
}

/// Half Poisson deviance `i(t) = Σ w y ln(y / ȳ) / Σ w` (the terms `ȳ − y` sum to 0),
/// in nats; 0 for a node whose targets are all 0 (scikit-learn stores `+∞` there; such a
/// node is a leaf in both).
pub struct Poisson<'a> {
    /// Output of every sample (all `≥ 0`).
    pub y: &'a [f64],
}

impl Poisson<'_> {
    /// `Σ_child Σ w·y · ln ȳ_child` over both children of the cut with sums `left`, or
    /// `−∞` when a child's sum is (numerically) 0.
    #[inline(always)]
    fn children_terms(total: &[f64], left: &[f64]) -> f64 {
        let (wl, wr) = (left[0], total[0] - left[0]);
        let (sl, sr) = (left[1], total[1] - left[1]);
        let zero = ZERO_SUM.max(ZERO_SHARE * total[1]);
        if sl <= zero || sr <= zero {
            return f64::NEG_INFINITY;
        }
        sl * (sl / wl).ln() + sr * (sr / wr).ln()
    }
}

impl Criterion for Poisson<'_> {
    type Y = f64;
    const LANED_BINS: bool = true;
    /// The weight and `Σ w·y`.
    const PROXY_LEN: Option<usize> = Some(2);
    #[inline(always)]
    fn target(&self, i: usize) -> f64 {
        self.y[i]
    }
    fn stats_len(&self) -> usize {
        3
    }
    #[inline(always)]
    fn add(&self, stats: &mut [f64], y: f64, w: f64) {
        stats[1] += w * y;
        stats[2] += w * xlnx(y);
    }
    /// The proxy reads no `Σ w·y·ln y`.
    #[inline(always)]
    fn add_for_proxy(&self, stats: &mut [f64], y: f64, w: f64) {
        stats[1] += w * y;
    }
    #[inline(always)]
    fn accumulate_weighted(
        &self,
        stats: &mut [f64],
        ys: &[f64],
        ws: &[f64],
        weight: impl Fn(usize, f64) -> f64,
    ) {
        let (mut w0, mut w1, mut w2) = ([0.0; LANES], [0.0; LANES], [0.0; LANES]);
        by_lanes(ys, ws, |lane, j, y, w| {
            let w = weight(j, w);
            w0[lane] += w;
            w1[lane] += w * y;
            w2[lane] += w * xlnx(y);
        });
        stats[0] = merge(&w0);
        stats[1] = merge(&w1);
        stats[2] = merge(&w2);
    }
    /// The proxy's sums: of `w` and of `w·y`.
    fn whole_sums(&self, ys: &[f64], ws: &[f64]) -> bool {
        // The targets first: a booster's residuals are rarely whole, and the first that is
        // not ends the test, where whole weights (all 1) were each read first.
        whole_terms(ys.iter().zip(ws).map(|(&y, &w)| (w * y).abs()))
            && whole_terms(ws.iter().copied())
    }
    /// From the sums: `(Σ w y ln y − Σ w·y · ln ȳ) / Σ w`.
    fn impurity(&self, stats: &[f64]) -> f64 {
        let (w, s) = (stats[0], stats[1]);
        if w <= 0.0 || s <= ZERO_SUM {
            return 0.0;
        }
        ((stats[2] - s * (s / w).ln()) / w).max(0.0)
    }
    /// From the sums while they are far from cancelling; for a node close to pure (where
    /// `Σ w y ln y − Σ w·y ln ȳ` loses its digits, and the builder's `i(t) ≤ ε` test
    /// decides whether it is a leaf), one pass over the rows, `Σ w y ln(y / ȳ) / Σ w`, as
    /// scikit-learn computes every node's.
    fn node_impurity(&self, stats: &[f64], ys: &[f64], ws: &[f64]) -> f64 {
        let (w, s) = (stats[0], stats[1]);
        if w <= 0.0 || s <= ZERO_SUM {
            return 0.0;
        }
        let mean = s / w;
        let between = s * mean.ln();
        let from_sums = (stats[2] - between) / w;
        if from_sums > NEAR_PURE * (stats[2].abs() + between.abs()) / w {
            return from_sums;
        }
        let mut loss = 0.0;
        for (&y, &wi) in ys.iter().zip(ws) {
            if y > 0.0 {
                loss += wi * (y * (y / mean).ln());
            }
        }
        (loss / w).max(0.0)
    }
    /// `Σ_L w·y ln ȳ_L + Σ_R w·y ln ȳ_R`: `Σ w y ln y` is the same for every cut.
    #[inline(always)]
    fn proxy(&self, total: &[f64], left: &[f64]) -> f64 {
        Self::children_terms(total, left)
    }
    #[inline(always)]
    fn allows(proxy: f64) -> bool {
        proxy > f64::NEG_INFINITY
    }
    fn value(&self, stats: &[f64], out: &mut [f64]) {
        out[0] = if stats[0] > 0.0 {
            stats[1] / stats[0]
        } else {
            0.0
        };
    }
}

/// Impurity of a node from its children's `(weight, impurity, mean)` and its own mean
/// `v_t` and weight `w_t`: `Σ_c (w_c / w_t) (i_c + v_c ln(v_c / v_t))`, exact since
/// `Σ_c w_c v_c = w_t v_t` (the deviance's analogue of the law of total variance).
pub(crate) fn deviance_of_children(children: [(f64, f64, f64); 2], vt: f64, wt: f64) -> f64 {
    let mut acc = 0.0;
    for (w, i, v) in children {
        let between = if v > 0.0 && vt > 0.0 {
            v * (v / vt).ln()
        } else {
            0.0
        };
        acc += w * (i + between);
    }
    (acc / wt).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Σ w y ln(y / ȳ) / Σ w` by the definition.
    fn deviance(ys: &[f64], ws: &[f64]) -> f64 {
        let w: f64 = ws.iter().sum();
        let mean = ys.iter().zip(ws).map(|(y, w)| y * w).sum::<f64>() / w;
        let d: f64 = ys
            .iter()
            .zip(ws)
            .filter(|(&y, _)| y > 0.0)
            .map(|(&y, &w)| w * y * (y / mean).ln())
            .sum();
        d / w
    }

    fn stats(c: &Poisson<'_>, ys: &[f64], ws: &[f64]) -> Vec<f64> {
        let mut s = vec![0.0; 3];
        c.accumulate(&mut s, ys, ws);
        s
    }

    /// The impurity from the sums, the one from the rows and the one derived from two
    /// children ([`deviance_of_children`]) are the definition; the proxy ranks the allowed
    /// cuts as the true decrease and forbids exactly the cuts with a child of sum 0.
    #[test]
    fn impurities_and_proxy_follow_the_definition() {
        let ys: Vec<f64> = (0..40)
            .map(|i| {
                if i % 7 == 3 {
                    0.0
                } else {
                    ((i * 13) % 11) as f64 * 0.7
                }
            })
            .collect();
        let ws: Vec<f64> = (0..40).map(|i| 0.5 + (i % 3) as f64).collect();
        let c = Poisson { y: &ys };
        let total = stats(&c, &ys, &ws);
        let it = deviance(&ys, &ws);
        assert!((c.impurity(&total) - it).abs() < 1e-12);
        assert!((c.node_impurity(&total, &ys, &ws) - it).abs() < 1e-14);
        let mut cands = Vec::new();
        for pos in 1..40 {
            let left = stats(&c, &ys[..pos], &ws[..pos]);
            let proxy = c.proxy(&total, &left);
            let zero_child =
                ys[..pos].iter().all(|&y| y == 0.0) || ys[pos..].iter().all(|&y| y == 0.0);
            assert_eq!(Poisson::allows(proxy), !zero_child, "pos {pos}");
            let (il, ir) = (
                deviance(&ys[..pos], &ws[..pos]),
                deviance(&ys[pos..], &ws[pos..]),
            );
            let (wl, wr) = (left[0], total[0] - left[0]);
            let mean = |s: &[f64], w: &[f64], wt: f64| {
                s.iter().zip(w).map(|(y, w)| y * w).sum::<f64>() / wt
            };
            let (vl, vr) = (
                mean(&ys[..pos], &ws[..pos], wl),
                mean(&ys[pos..], &ws[pos..], wr),
            );
            let derived =
                deviance_of_children([(wl, il, vl), (wr, ir, vr)], total[1] / total[0], total[0]);
            assert!((derived - it).abs() < 1e-12, "pos {pos}: {derived} vs {it}");
            if !zero_child {
                cands.push((proxy, it - (wl * il + wr * ir) / total[0]));
            }
        }
        for a in &cands {
            for b in &cands {
                if a.0 > b.0 + 1e-9 {
                    assert!(a.1 >= b.1 - 1e-9, "{a:?} vs {b:?}");
                }
            }
        }
    }
}
