//! The regression criterion: statistics `[w, Σ w·y, Σ w·y²]` scored by the weighted
//! variance ([`SquaredError`]).
//!
//! Invariant: the proxy reads only `w` and `Σ w·y`, so the split search may leave the sum of
//! squares out ([`Criterion::add_for_proxy`]); impurities and values read all three.

use super::{by_lanes, merge, whole_terms, Criterion, EPSILON, LANES};

/// Weighted variance `i(t) = Σ w (y − ȳ)² / Σ w` (regression).
pub struct SquaredError<'a> {
    /// Output of every sample.
    pub y: &'a [f64],
}

impl Criterion for SquaredError<'_> {
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
        stats[2] += w * y * y;
    }
    /// The proxy reads no sum of squares.
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
            w2[lane] += w * y * y;
        });
        stats[0] = merge(&w0);
        stats[1] = merge(&w1);
        stats[2] = merge(&w2);
    }
    /// Only the proxy's sums (the sum of squares is left 0): the Extra-Trees scan, its one
    /// caller, paid a multiply-add per row for it.
    #[inline(always)]
    fn count_left(&self, stats: &mut [f64], ys: &[f64], ws: &[f64], left: impl Fn(usize) -> bool) {
        let (mut w0, mut w1) = ([0.0; LANES], [0.0; LANES]);
        by_lanes(ys, ws, |lane, j, y, _| {
            let w = f64::from(u8::from(left(j)));
            w0[lane] += w;
            w1[lane] += w * y;
        });
        stats[0] = merge(&w0);
        stats[1] = merge(&w1);
        stats[2] = 0.0;
    }
    /// The proxy's sums: of `w` and of `w·y`.
    fn whole_sums(&self, ys: &[f64], ws: &[f64]) -> bool {
        // The targets first: a booster's residuals are rarely whole, and the first that is
        // not ends the test, where whole weights (all 1) were each read first.
        whole_terms(ys.iter().zip(ws).map(|(&y, &w)| (w * y).abs()))
            && whole_terms(ws.iter().copied())
    }
    fn impurity(&self, stats: &[f64]) -> f64 {
        let w = stats[0];
        if w <= 0.0 {
            return 0.0;
        }
        let mean = stats[1] / w;
        (stats[2] / w - mean * mean).max(0.0)
    }
    /// Equal targets can leave `Σwy²/w − ȳ²` a few ulps of `ȳ²` above 0, more than
    /// [`EPSILON`] once `ȳ²` or the node is large: a booster's residuals, equal over
    /// thousands of rows, were then split one row at a time (depth 5 000 where
    /// scikit-learn stopped at 100). When the one-pass value is within its rounding error,
    /// the spread is summed again around the mean, where nothing cancels.
    fn is_pure(&self, stats: &[f64], ys: &[f64], ws: &[f64], impurity: f64) -> bool {
        let w = stats[0];
        if impurity <= EPSILON {
            return true;
        }
        let rounding = 4.0 * ys.len() as f64 * f64::EPSILON * (stats[2] / w);
        if impurity > rounding {
            return false;
        }
        let mean = stats[1] / w;
        let spread: f64 = ys
            .iter()
            .zip(ws)
            .map(|(&y, &v)| v * (y - mean) * (y - mean))
            .sum();
        spread / w <= EPSILON
    }
    /// `(Σ_L wy)²/w_L + (Σ_R wy)²/w_R`: the sums of squares cancel between candidates.
    #[inline(always)]
    fn proxy(&self, total: &[f64], left: &[f64]) -> f64 {
        let (wl, wr) = (left[0], total[0] - left[0]);
        let (sl, sr) = (left[1], total[1] - left[1]);
        sl * sl / wl + sr * sr / wr
    }
    #[inline(always)]
    fn may_beat(&self, total: &[f64], left: &[f64], bar: f64) -> bool {
        // `proxy > bar` multiplied by `wl·wr > 0`: every term is non-negative, so rounding
        // moves both sides by a few ulps, far inside `better`'s 1e-12.
        let (wl, wr) = (left[0], total[0] - left[0]);
        let (sl, sr) = (left[1], total[1] - left[1]);
        sl * sl * wr + sr * sr * wl > bar * (wl * wr)
    }
    fn value(&self, stats: &[f64], out: &mut [f64]) {
        out[0] = if stats[0] > 0.0 {
            stats[1] / stats[0]
        } else {
            0.0
        };
    }
}
