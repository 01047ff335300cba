//! The statistics of every node of a tree (weight, count, value, impurity), derived from
//! its leaves: only the leaves' are stored ([`super`]'s module doc).

use crate::tree::{criterion, Tree};

/// Statistics of every node of a tree, derived from its leaves by [`Tree::node_stats`].
#[derive(Clone, Debug, PartialEq)]
pub struct NodeStats {
    /// Impurity `i(t)` (in bits for entropy).
    pub impurity: Vec<f64>,
    /// Weighted number of (in-bag) samples.
    pub weight: Vec<f64>,
    /// Number of distinct in-bag samples.
    pub n_samples: Vec<u32>,
    /// `n_nodes × width`: class frequencies, or the mean output.
    pub value: Vec<f64>,
    width: usize,
}

impl NodeStats {
    /// Value of `node` (class frequencies, or the mean output).
    pub fn value(&self, node: usize) -> &[f64] {
        &self.value[node * self.width..(node + 1) * self.width]
    }
}

impl Tree {
    /// Every node's statistics. An internal node's weight, count and value are
    /// combinations of its children's; its impurity is computed from its value
    /// (classification) or from its children's (regression: the law of total variance,
    /// or its analogue for the Poisson deviance, [`criterion::impurity_of_children`]), so
    /// the decrease `i(t) − (w_l i_l + w_r i_r)/w_t` is never negative. An absolute-error
    /// tree's internal nodes keep their median and deviation as grown (`Tree::grown`);
    /// their decrease is not negative either (a child's median errs no more than its
    /// parent's), up to rounding.
    pub fn node_stats(&self) -> NodeStats {
        let (n, w) = (self.len(), self.width);
        let mut s = NodeStats {
            impurity: vec![0.0; n],
            weight: vec![0.0; n],
            n_samples: vec![0; n],
            value: vec![0.0; n * w],
            width: w,
        };
        let regression = self.criterion.is_regression();
        for t in (0..n).rev() {
            let Some((l, r)) = self.children(t) else {
                let k = self.nodes[t].feature as usize;
                s.weight[t] = self.leaf_weight[k];
                s.n_samples[t] = self.leaf_count[k];
                s.value[t * w..(t + 1) * w].copy_from_slice(self.value(t));
                if regression {
                    s.impurity[t] = self.leaf_impurity[k];
                }
                if let Some(g) = self.grown.get(t * (1 + w)..(t + 1) * (1 + w)) {
                    s.impurity[t] = g[0];
                }
                continue;
            };
            let (wl, wr) = (s.weight[l], s.weight[r]);
            let wt = wl + wr;
            s.weight[t] = wt;
            // Saturating: counts come from model bytes too, and must not overflow.
            s.n_samples[t] = s.n_samples[l].saturating_add(s.n_samples[r]);
            if let Some(g) = self.grown.get(t * (1 + w)..(t + 1) * (1 + w)) {
                s.impurity[t] = g[0];
                s.value[t * w..(t + 1) * w].copy_from_slice(&g[1..]);
                continue;
            }
            for k in 0..w {
                s.value[t * w + k] = if wt > 0.0 {
                    (wl * s.value[l * w + k] + wr * s.value[r * w + k]) / wt
                } else {
                    0.0
                };
            }
            if regression && wt > 0.0 && !self.outputs.is_empty() {
                let values = [s.value(t), s.value(l), s.value(r)];
                s.impurity[t] = criterion::impurity_of_children_outputs(
                    [(wl, s.impurity[l]), (wr, s.impurity[r])],
                    values,
                    wt,
                );
            } else if regression && wt > 0.0 {
                let (vt, vl, vr) = (s.value[t], s.value[l], s.value[r]);
                s.impurity[t] = criterion::impurity_of_children(
                    self.criterion,
                    [(wl, s.impurity[l], vl), (wr, s.impurity[r], vr)],
                    vt,
                    wt,
                );
            }
        }
        if !regression && self.grown.is_empty() {
            for t in 0..n {
                s.impurity[t] = match self.outputs.is_empty() {
                    true => criterion::impurity_of_frequencies(self.criterion, s.value(t)),
                    false => self.mean_over_outputs(s.value(t), |p| {
                        criterion::impurity_of_frequencies(self.criterion, p)
                    }),
                };
            }
        }
        s
    }

    /// `(1/m) Σ_k f(value of output k)` for a node value of a multi-output tree.
    fn mean_over_outputs(&self, value: &[f64], f: impl Fn(&[f64]) -> f64) -> f64 {
        let mut start = 0;
        let mut sum = 0.0;
        for &w in &self.outputs {
            sum += f(&value[start..start + w]);
            start += w;
        }
        sum / self.outputs.len() as f64
    }
}
