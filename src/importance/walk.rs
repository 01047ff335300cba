//! Tree walks in which one feature of a row is read from another row (or value), so
//! permutation importances never copy X (ranger's `dropDownSamplePermuted`).
//!
//! Invariant used throughout: replacing `x[i, m]` by `v` can only change the leaf of row `i`
//! if `v` turns the other way at some node on `m` of the row's original path, and the two
//! walks agree down to the first such node. Each row's path is therefore walked once, and a
//! substituted walk starts only where it diverges; features absent from the path leave the
//! leaf, hence the loss, exactly unchanged. For losses, walks also stop at nodes whose
//! subtree predicts one class (or value) throughout ([`NodeLoss`]).

use crate::data::{Feature, Matrix, Targets};
use crate::tree::Tree;

/// Leaf reached by row `i` of `x` when its feature `m` is replaced by `x[j, m]`.
#[inline]
pub fn leaf_with<T: Feature>(
    tree: &Tree,
    x: &Matrix<'_, T>,
    i: usize,
    m: usize,
    j: usize,
) -> usize {
    descend_with(tree, x, 0, i, m, j)
}

/// Leaves reached by row `i` when its feature `m` is replaced by each of `values`, written
/// to `out` (same length). The row's path is walked once: a substituted walk only leaves it
/// at the first node on `m` where the value turns the other way.
pub fn leaves_with_values<T: Feature>(
    tree: &Tree,
    x: &Matrix<'_, T>,
    i: usize,
    m: usize,
    values: &[f64],
    out: &mut [usize],
    chain: &mut Vec<(usize, bool)>,
) {
    chain.clear();
    let mut t = 0usize;
    while !tree.is_leaf(t) {
        let f = tree.feature(t) as usize;
        let left = tree.goes_left(t, x.get(i, f).to_f64());
        if f == m {
            chain.push((t, left));
        }
        t = tree.child(t, left);
    }
    for (leaf, &vm) in out.iter_mut().zip(values) {
        *leaf = t;
        for &(s, left) in chain.iter() {
            let go_left = tree.goes_left(s, vm);
            if go_left != left {
                *leaf = descend_value(tree, x, tree.child(s, go_left), i, m, vm);
                break;
            }
        }
    }
}

/// Same walk as [`leaf_with`], started at node `start`.
#[inline]
fn descend_with<T: Feature>(
    tree: &Tree,
    x: &Matrix<'_, T>,
    start: usize,
    i: usize,
    m: usize,
    j: usize,
) -> usize {
    descend_value(tree, x, start, i, m, x.get(j, m).to_f64())
}

/// Leaf reached from node `start` by row `i` whose feature `m` reads `vm`.
#[inline]
fn descend_value<T: Feature>(
    tree: &Tree,
    x: &Matrix<'_, T>,
    start: usize,
    i: usize,
    m: usize,
    vm: f64,
) -> usize {
    let mut t = start;
    while !tree.is_leaf(t) {
        t = tree.next(t, value_with(x, i, tree.feature(t) as usize, m, vm));
    }
    t
}

/// Row `i`'s value of feature `f`, feature `m` reading `vm` instead.
#[inline(always)]
fn value_with<T: Feature>(x: &Matrix<'_, T>, i: usize, f: usize, m: usize, vm: f64) -> f64 {
    if f == m {
        vm
    } else {
        x.get(i, f).to_f64()
    }
}

/// `used[m]`: whether some node of `tree` splits on feature `m`.
pub fn used_features(tree: &Tree, n_features: usize) -> Vec<bool> {
    let mut used = vec![false; n_features];
    for t in 0..tree.len() {
        if !tree.is_leaf(t) {
            if let Some(u) = used.get_mut(tree.feature(t) as usize) {
                *u = true;
            }
        }
    }
    used
}

/// The loss of one tree's prediction for one row: 0/1 loss of the leaf's majority class
/// (first class on ties, as `predict`) or the squared error of the leaf's mean.
///
/// A node whose leaves all predict the same class (or value) is a *stop* node: every row
/// that reaches it has the same loss whatever happens below, so walks end there. In fully
/// grown classification trees most deep subtrees are pure, which makes the walks short.
pub(crate) struct NodeLoss<'a> {
    targets: Targets<'a>,
    /// Per stop node: the predicted class (as f64) or value; NaN elsewhere.
    prediction: Vec<f64>,
    stop: Vec<bool>,
}

impl<'a> NodeLoss<'a> {
    pub(crate) fn new(tree: &Tree, targets: Targets<'a>) -> Self {
        let mut prediction: Vec<f64> = (0..tree.len())
            .map(|t| {
                if !tree.is_leaf(t) {
                    return f64::NAN; // set by the scan below
                }
                let v = tree.value(t);
                match targets {
                    Targets::Classes { .. } => {
                        let mut best = 0;
                        for (k, &p) in v.iter().enumerate() {
                            if p > v[best] {
                                best = k;
                            }
                        }
                        best as f64
                    }
                    Targets::Regression(_) => v.first().copied().unwrap_or(0.0),
                    // Refused by the permutation measures' checks (one target column).
                    Targets::MultiClasses { .. } | Targets::MultiRegression { .. } => f64::NAN,
                }
            })
            .collect();
        let mut stop = vec![true; tree.len()];
        // Children have larger ids than their parent: a reverse scan sees them first.
        for t in (0..tree.len()).rev() {
            if let Some((l, r)) = tree.children(t) {
                let same = stop[l] && stop[r] && prediction[l] == prediction[r];
                stop[t] = same;
                prediction[t] = if same { prediction[l] } else { f64::NAN };
            }
        }
        NodeLoss {
            targets,
            prediction,
            stop,
        }
    }

    /// Loss of the prediction of stop node `node` for row `i`.
    #[inline]
    pub(crate) fn loss(&self, i: usize, node: usize) -> f64 {
        let p = self.prediction[node];
        match self.targets {
            Targets::Classes { y, .. } => f64::from(u8::from(f64::from(y[i]) != p)),
            Targets::Regression(y) => (y[i] - p) * (y[i] - p),
            Targets::MultiClasses { .. } | Targets::MultiRegression { .. } => f64::NAN,
        }
    }

    /// Stop node reached from `start` by row `i` whose feature `m` reads `vm`.
    #[inline]
    fn descend<T: Feature>(
        &self,
        tree: &Tree,
        x: &Matrix<'_, T>,
        start: usize,
        i: usize,
        m: usize,
        vm: f64,
    ) -> usize {
        let mut t = start;
        while !self.stop[t] {
            t = tree.next(t, value_with(x, i, tree.feature(t) as usize, m, vm));
        }
        t
    }
}

/// One node of a row's path: the node, whether the row went left, and the path position of
/// the next node that splits on the same feature.
#[derive(Clone, Copy)]
struct Step {
    node: u32,
    left: bool,
    next_same: u32,
}

const NONE: u32 = u32::MAX;

/// For each evaluation row `rows[k]` and each feature `f` the tree splits on, the loss
/// change when `x[rows[k], f]` is replaced by `x[subst[f][k], f]`:
/// `emit(f, k, L(leaf') − L(leaf))`, called only when it is not 0. `subst[f]` must hold
/// `rows.len()` rows for every feature the tree splits on. Returns `Σ_k L(leaf_k)`, the
/// tree's total loss on the unpermuted rows.
///
/// The substituted walk follows the original path until the first node on `f` where the
/// substituted value turns the other way, so only that divergence is walked: features
/// absent from the path, or whose nodes all agree, cost one comparison per node on `f`.
pub(crate) fn path_deltas<T: Feature>(
    tree: &Tree,
    x: &Matrix<'_, T>,
    rows: &[u32],
    subst: &[Vec<u32>],
    loss: &NodeLoss<'_>,
    mut emit: impl FnMut(usize, usize, f64),
) -> f64 {
    let p = subst.len();
    let mut seen = vec![usize::MAX; p];
    let mut last = vec![0u32; p];
    let mut path: Vec<Step> = Vec::with_capacity(64);
    let mut firsts: Vec<u32> = Vec::with_capacity(64);
    let mut total = 0.0;
    for (k, &row) in rows.iter().enumerate() {
        let i = row as usize;
        path.clear();
        firsts.clear();
        let mut t = 0usize;
        while !loss.stop[t] {
            let f = tree.feature(t) as usize;
            let left = tree.goes_left(t, x.get(i, f).to_f64());
            let q = path.len() as u32;
            if seen[f] == k {
                path[last[f] as usize].next_same = q;
            } else {
                seen[f] = k;
                firsts.push(q);
            }
            last[f] = q;
            path.push(Step {
                node: t as u32,
                left,
                next_same: NONE,
            });
            t = tree.child(t, left);
        }
        let base = loss.loss(i, t);
        total += base;
        for &q0 in &firsts {
            let f = tree.feature(path[q0 as usize].node as usize) as usize;
            let vm = x.get(subst[f][k] as usize, f).to_f64();
            let mut q = q0;
            while q != NONE {
                let step = path[q as usize];
                let left = tree.goes_left(step.node as usize, vm);
                if left != step.left {
                    let child = tree.child(step.node as usize, left);
                    let d = loss.loss(i, loss.descend(tree, x, child, i, f, vm)) - base;
                    if d != 0.0 {
                        emit(f, k, d);
                    }
                    break;
                }
                q = step.next_same;
            }
        }
    }
    total
}
