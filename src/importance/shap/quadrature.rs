//! Gauss–Legendre quadrature on `[0, 1]`: the `n`-point rule integrates every polynomial of
//! degree `≤ 2n − 1` exactly, which is what turns TreeSHAP's sums over coalition sizes
//! into `n` evaluations of a product (see the parent module).
//!
//! Invariant: the nodes lie strictly inside `(0, 1)` (so `1 − u` and `u` never vanish) and
//! the weights are positive and sum to 1.

/// The `n`-point Gauss–Legendre rule on `[0, 1]`: nodes ascending, weights summing to 1.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Rule {
    /// Nodes `u_q`, ascending, in `(0, 1)`.
    pub nodes: Vec<f64>,
    /// `1 − u_q`, kept rather than recomputed in the walks' inner loops.
    pub one_minus: Vec<f64>,
    /// Weights `w_q > 0`, `Σ w_q = 1`.
    pub weights: Vec<f64>,
}

impl Rule {
    /// The rule of `n ≥ 1` points (`n = 0` is treated as 1).
    pub fn new(n: usize) -> Rule {
        let n = n.max(1);
        let mut nodes = vec![0.0; n];
        let mut weights = vec![0.0; n];
        // Roots of P_n come in ± pairs: find the positive half by Newton's method from
        // Tricomi's estimate, which converges in a few steps for every n.
        for i in 0..n.div_ceil(2) {
            let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
            for _ in 0..100 {
                let (value, slope) = legendre(n, x);
                let step = value / slope;
                x -= step;
                if step.abs() < 1e-15 {
                    break;
                }
            }
            let (_, derivative) = legendre(n, x);
            // Weight on [-1, 1] is 2 / ((1 − x²) P'_n(x)²); halved for [0, 1].
            let w = 1.0 / ((1.0 - x * x) * derivative * derivative);
            // x ∈ [0, 1) maps to u = (1 ± x) / 2; descending x gives the upper half.
            nodes[n - 1 - i] = 0.5 * (1.0 + x);
            nodes[i] = 0.5 * (1.0 - x);
            weights[n - 1 - i] = w;
            weights[i] = w;
        }
        // 1 − u_q computed from x, not by subtraction, so it keeps its relative precision
        // near u = 1.
        let mut one_minus = nodes.clone();
        one_minus.reverse();
        Rule {
            nodes,
            one_minus,
            weights,
        }
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
}

/// `(P_n(x), P'_n(x))` by the three-term recurrence.
fn legendre(n: usize, x: f64) -> (f64, f64) {
    let (mut p_prev, mut p) = (1.0, x);
    for k in 2..=n {
        let k = k as f64;
        let next = ((2.0 * k - 1.0) * x * p - (k - 1.0) * p_prev) / k;
        p_prev = p;
        p = next;
    }
    if n == 0 {
        return (1.0, 0.0);
    }
    let slope = n as f64 * (x * p - p_prev) / (x * x - 1.0);
    (p, slope)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrates_polynomials_up_to_degree_2n_minus_1_exactly() {
        for n in [1, 2, 3, 5, 8, 13, 32, 64] {
            let rule = Rule::new(n);
            assert_eq!(rule.len(), n);
            assert!(rule.nodes.iter().all(|&u| u > 0.0 && u < 1.0));
            assert!(rule.nodes.windows(2).all(|w| w[0] < w[1]));
            for degree in 0..2 * n {
                let integral: f64 = (0..n)
                    .map(|q| rule.weights[q] * rule.nodes[q].powi(degree as i32))
                    .sum();
                let exact = 1.0 / (degree as f64 + 1.0);
                assert!(
                    (integral - exact).abs() < 1e-14,
                    "n = {n}, degree {degree}: {integral} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn beta_integrals_are_shapley_weights() {
        // ∫ u^s (1 − u)^(d−1−s) du = s! (d−1−s)! / d!, the Shapley weight of a coalition
        // of size s among d players: the identity the TreeSHAP walk relies on.
        let d: usize = 9;
        let rule = Rule::new(d.div_ceil(2));
        let fact = |k: usize| (1..=k).map(|v| v as f64).product::<f64>();
        for s in 0..d {
            let integral: f64 = (0..rule.len())
                .map(|q| {
                    let u = rule.nodes[q];
                    rule.weights[q] * u.powi(s as i32) * (1.0 - u).powi((d - 1 - s) as i32)
                })
                .sum();
            let exact = fact(s) * fact(d - 1 - s) / fact(d);
            assert!((integral - exact).abs() < 1e-15, "s = {s}");
        }
    }
}
