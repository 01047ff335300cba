//! Multiway totally randomized trees on integer-coded categorical inputs (the trees of
//! Louppe et al. 2013, Thm 1, and Louppe 2014, §6.2).
//!
//! A node conditioned on the variables `B` used on its branch draws `K = max_features`
//! candidates uniformly **without replacement among the variables not yet used** (those
//! constant in the node included, as the theory requires) and keeps the one with the largest
//! multiway impurity decrease `Δi = i(t) − Σ_v (w_v / w_t) i(t_v)`, one child per observed
//! value `v`. Ties (within a relative 1e-12 of `i(t)`) go to the first drawn, so they are
//! broken uniformly at random.
//!
//! Storage keeps the binary node arrays of [`Tree`](super::Tree), so prediction, `apply`,
//! persistence and [`Tree::mdi`](super::Tree::mdi) work unchanged:
//! * a split on `X_m` with observed values `v_1 < … < v_k` is a right-leaning **chain** of
//!   `k − 1` binary nodes on `X_m`: `x ≤ (v_j + v_{j+1})/2` goes to the child of `v_j`,
//!   otherwise to the next chain node. The chain's weighted decreases telescope to the
//!   multiway `w_t Δi`. A chain node after the first is a *link*: it splits on the same
//!   feature as its parent, which no real child can do (its variable is used).
//!   Values unseen at fit go to the nearest observed value (ties to the lower one);
//! * a winner constant in the node (one child, `Δi = 0`) is a **no-op level**: the variable
//!   joins `B` and the node's rows continue, one level deeper, in the left child of a node
//!   with threshold `f64::MAX`; its right child is an empty leaf (weight 0, the node's
//!   value) that no finite input reaches. It is stored because it is a level of the
//!   theory's tree: the logical depth of a node is then exactly `|B|`, which makes MDI by
//!   depth the decomposition by interaction degree of Thm 1 (`crate::importance::mdi`).
//!   A no-op whose continuation could not split (depth limit, no non-constant unused
//!   variable left) is not stored: the node is a leaf, which changes no importance.
//!
//! Invariant: `features[..depth]` are the variables used on the current branch (the
//! logical depth equals their number); descendants only permute `features[depth..]`, so
//! siblings grown one after the other see the same used set.

use super::criterion::Criterion;
use super::growing::GrowingTree;
use super::split::midpoint;
use super::LEAF;
use crate::data::{Feature, Matrix};
use crate::error::{ForestError, Result};
use crate::params::Resolved;
use crate::rng::TreeRng;

/// Below this impurity a node is pure (as in the binary builder).
const EPSILON: f64 = f64::EPSILON;
/// Threshold of a no-op node: every finite value goes left.
pub const NO_OP_THRESHOLD: f64 = f64::MAX;

/// Fails with [`ForestError::NonInteger`] on the first value of `x` with a fractional part.
pub(crate) fn check_integer_codes<T: Feature>(x: &Matrix<'_, T>) -> Result<()> {
    for col in 0..x.n_cols() {
        for row in 0..x.n_rows() {
            let value = x.get(row, col).to_f64();
            if value.fract() != 0.0 {
                return Err(ForestError::NonInteger { row, col, value });
            }
        }
    }
    Ok(())
}

/// Work left on the explicit stack; popping in stack order yields pre-order node ids.
enum Item {
    /// A logical node on `rows[start..end]`, conditioned on `features[..depth]`.
    Node {
        start: usize,
        end: usize,
        depth: usize,
        parent: u32,
        is_left: bool,
    },
    /// Chain node for the groups `cuts[first..=last]` (rows `start..cuts[last].0`), right
    /// child of `parent`; its children are logical nodes at `child_depth`.
    Link {
        start: usize,
        first: usize,
        last: usize,
        feature: u32,
        child_depth: usize,
        parent: u32,
    },
    /// The unreachable right leaf of the no-op node `parent`, which predicts as its parent
    /// (whose own statistics are not kept once it splits).
    Empty {
        parent: u32,
        impurity: f64,
        value: Box<[f64]>,
    },
}

/// Whether a candidate decrease beats the best so far; `scale` is the node impurity, so
/// decreases that differ by rounding only (e.g. 0 and 1e-17) are ties. (The binary search
/// ranks proxies instead, with [`super::split::better`].)
#[inline]
fn decrease_beats(dec: f64, best: f64, scale: f64) -> bool {
    dec - best > 1e-12 * scale.max(dec.abs()).max(best.abs())
}

/// The multiway tree being grown and the buffers reused across its nodes.
struct MultiwayGrower<'a, T, C: Criterion> {
    x: Matrix<'a, T>,
    crit: &'a C,
    /// Targets and weights aligned with `samples`, permuted with it.
    ys: Vec<C::Y>,
    ws: Vec<f64>,
    params: &'a Resolved,
    root_weight: f64,
    min_weight_leaf: f64,
    total: Vec<f64>,
    child: Vec<f64>,
    value: Vec<f64>,
    /// `(value, position in the node)` of the candidate being scored and of the best one.
    sorted: Vec<(T, u32)>,
    best_sorted: Vec<(T, u32)>,
    tmp_samples: Vec<u32>,
    tmp_ys: Vec<C::Y>,
    tmp_ws: Vec<f64>,
    /// Groups of every multiway split: `(end row, threshold to the next group)`.
    cuts: Vec<(usize, f64)>,
    tree: GrowingTree,
}

/// Grows one multiway tree over `samples` (the in-bag rows with positive weight, `ws` their
/// weights), drawing candidates among `features` (the tree's feature subset).
#[allow(clippy::too_many_arguments)]
pub(crate) fn grow<T: Feature, C: Criterion>(
    x: Matrix<'_, T>,
    crit: &C,
    ws: Vec<f64>,
    samples: &mut [u32],
    features: &mut [u32],
    params: &Resolved,
    width: usize,
    rng: &mut TreeRng,
) -> GrowingTree {
    let root_weight: f64 = ws.iter().sum();
    let k = crit.stats_len();
    let n = samples.len();
    let mut g = MultiwayGrower {
        x,
        crit,
        ys: samples.iter().map(|&i| crit.target(i as usize)).collect(),
        ws,
        params,
        root_weight,
        min_weight_leaf: params.min_weight_fraction_leaf * root_weight,
        total: vec![0.0; k],
        child: vec![0.0; k],
        value: vec![0.0; width],
        sorted: Vec::with_capacity(n),
        best_sorted: Vec::with_capacity(n),
        tmp_samples: Vec::with_capacity(n),
        tmp_ys: Vec::with_capacity(n),
        tmp_ws: Vec::with_capacity(n),
        cuts: Vec::new(),
        tree: GrowingTree::with_capacity(width, 2 * n.min(1 << 16), params.criterion),
    };
    let mut stack = vec![Item::Node {
        start: 0,
        end: n,
        depth: 0,
        parent: LEAF,
        is_left: false,
    }];
    while let Some(item) = stack.pop() {
        match item {
            Item::Node {
                start,
                end,
                depth,
                parent,
                is_left,
            } => g.node(
                samples, features, start, end, depth, parent, is_left, rng, &mut stack,
            ),
            Item::Link {
                start,
                first,
                last,
                feature,
                child_depth,
                parent,
            } => g.link(start, first, last, feature, child_depth, parent, &mut stack),
            Item::Empty {
                parent,
                impurity,
                value,
            } => {
                let leaf = g.tree.push_leaf(impurity, 0.0, 0, &value);
                g.tree.link(parent, false, leaf);
            }
        }
    }
    g.tree
}

impl<T: Feature, C: Criterion> MultiwayGrower<'_, T, C> {
    /// Pushes a node with the statistics of `rows[start..end]`, linked to `parent`.
    fn push_node(&mut self, start: usize, end: usize, parent: u32, is_left: bool) -> (u32, f64) {
        self.crit
            .accumulate(&mut self.total, &self.ys[start..end], &self.ws[start..end]);
        let impurity = self.crit.impurity(&self.total);
        self.crit.value(&self.total, &mut self.value);
        let id = self
            .tree
            .push_leaf(impurity, self.total[0], (end - start) as u32, &self.value);
        if parent != LEAF {
            self.tree.link(parent, is_left, id);
        }
        (id, impurity)
    }

    /// Adds the logical node `rows[start..end]` and, unless a stopping rule holds, splits it.
    #[allow(clippy::too_many_arguments)]
    fn node(
        &mut self,
        samples: &mut [u32],
        features: &mut [u32],
        start: usize,
        end: usize,
        depth: usize,
        parent: u32,
        is_left: bool,
        rng: &mut TreeRng,
        stack: &mut Vec<Item>,
    ) {
        let (node, impurity) = self.push_node(start, end, parent, is_left);
        let p = self.params;
        let (n, w) = (end - start, self.total[0]);
        if depth >= p.max_depth
            || depth >= features.len()
            || n < p.min_samples_split
            || n < p.min_samples_leaf.saturating_mul(2)
            || w < 2.0 * self.min_weight_leaf
            || impurity <= EPSILON
        {
            return;
        }
        let Some((pos, dec, constant)) =
            self.choose(&samples[start..end], start, features, depth, impurity, rng)
        else {
            return;
        };
        features.swap(pos, depth);
        let feature = features[depth];
        if constant {
            // A no-op level is stored only if its continuation can still split.
            let can_split = depth + 1 < p.max_depth
                && features[depth + 1..]
                    .iter()
                    .any(|&f| !self.is_constant(f, &samples[start..end]));
            if can_split {
                self.tree.set_split(node, feature, NO_OP_THRESHOLD);
                stack.push(Item::Empty {
                    parent: node,
                    impurity,
                    value: self.value.clone().into_boxed_slice(),
                });
                stack.push(Item::Node {
                    start,
                    end,
                    depth: depth + 1,
                    parent: node,
                    is_left: true,
                });
            }
            return;
        }
        if (w / self.root_weight) * dec + EPSILON < p.min_impurity_decrease {
            return;
        }
        let first = self.apply_split(samples, start, end);
        let last = self.cuts.len() - 1;
        self.tree.set_split(node, feature, self.cuts[first].1);
        self.push_chain(start, first, last, feature, depth + 1, node, stack);
    }

    /// Pushes the children of the chain node `node` covering the groups `first..=last`: the
    /// group `first` on its left, the rest (one group, or the next link) on its right.
    #[allow(clippy::too_many_arguments)]
    fn push_chain(
        &self,
        start: usize,
        first: usize,
        last: usize,
        feature: u32,
        child_depth: usize,
        node: u32,
        stack: &mut Vec<Item>,
    ) {
        let mid = self.cuts[first].0;
        if last == first + 1 {
            stack.push(Item::Node {
                start: mid,
                end: self.cuts[last].0,
                depth: child_depth,
                parent: node,
                is_left: false,
            });
        } else {
            stack.push(Item::Link {
                start: mid,
                first: first + 1,
                last,
                feature,
                child_depth,
                parent: node,
            });
        }
        stack.push(Item::Node {
            start,
            end: mid,
            depth: child_depth,
            parent: node,
            is_left: true,
        });
    }

    /// Adds a chain link (a node of an ongoing multiway split) and pushes its children.
    #[allow(clippy::too_many_arguments)]
    fn link(
        &mut self,
        start: usize,
        first: usize,
        last: usize,
        feature: u32,
        child_depth: usize,
        parent: u32,
        stack: &mut Vec<Item>,
    ) {
        let end = self.cuts[last].0;
        let (node, _) = self.push_node(start, end, parent, false);
        self.tree.set_split(node, feature, self.cuts[first].1);
        self.push_chain(start, first, last, feature, child_depth, node, stack);
    }

    /// Draws up to K candidates among `features[depth..]` and returns the winner's position
    /// in `features`, its decrease `Δi` and whether it is constant in the node; None when no
    /// candidate respects the leaf constraints. The winner's sorted values are left in
    /// `best_sorted`.
    fn choose(
        &mut self,
        samples: &[u32],
        start: usize,
        features: &mut [u32],
        depth: usize,
        impurity: f64,
        rng: &mut TreeRng,
    ) -> Option<(usize, f64, bool)> {
        let mut undrawn = features.len(); // features[depth..undrawn] not drawn yet
        let mut visited = 0;
        let mut best: Option<(usize, f64, bool)> = None;
        while visited < self.params.max_features && undrawn > depth {
            let j = depth + rng.below(undrawn - depth);
            undrawn -= 1;
            features.swap(j, undrawn);
            visited += 1;
            // Later swaps only touch positions below `undrawn`: a kept position stays valid.
            let Some((dec, constant)) = self.score(features[undrawn], samples, start, impurity)
            else {
                continue;
            };
            if best.is_none_or(|(_, bd, _)| decrease_beats(dec, bd, impurity)) {
                best = Some((undrawn, dec, constant));
                std::mem::swap(&mut self.sorted, &mut self.best_sorted);
            }
        }
        best
    }

    /// Copies `(x_f, position)` of the node rows `samples` into `sorted`, sorted.
    fn gather_sorted(&mut self, f: u32, samples: &[u32]) {
        let (x, f) = (&self.x, f as usize);
        self.sorted.clear();
        match x.column(f) {
            Some(col) => self.sorted.extend(
                samples
                    .iter()
                    .enumerate()
                    .map(|(k, &i)| (col[i as usize], k as u32)),
            ),
            None => self.sorted.extend(
                samples
                    .iter()
                    .enumerate()
                    .map(|(k, &i)| (x.get(i as usize, f), k as u32)),
            ),
        }
        // (value, position) is a total key: the order, hence the tree, is fully determined.
        self.sorted
            .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    }

    /// Whether feature `f` takes a single value on the node rows `samples`.
    fn is_constant(&self, f: u32, samples: &[u32]) -> bool {
        let f = f as usize;
        let mut values = samples.iter().map(|&i| self.x.get(i as usize, f));
        match values.next() {
            Some(first) => values.all(|v| v.total_cmp(&first).is_eq()),
            None => true,
        }
    }

    /// Scores feature `f` on the node `rows[start..end]` (the rows of `samples`): returns
    /// `Δi = i(t) − Σ_v (w_v / w_t) i(t_v)` and whether `f` is constant in the node, or None
    /// if a child would break `min_samples_leaf` or `min_weight_fraction_leaf`. Leaves the
    /// sorted values in `sorted`.
    fn score(
        &mut self,
        f: u32,
        samples: &[u32],
        start: usize,
        impurity: f64,
    ) -> Option<(f64, bool)> {
        self.gather_sorted(f, samples);
        let (lo, hi) = match (self.sorted.first(), self.sorted.last()) {
            (Some(a), Some(b)) => (a.0, b.0),
            _ => return None,
        };
        if hi.total_cmp(&lo).is_le() {
            return Some((0.0, true));
        }
        let n = self.sorted.len();
        let (mut weighted, mut group_start, mut wv) = (0.0, 0usize, 0.0);
        self.child.fill(0.0);
        for i in 0..n {
            let (v, k) = self.sorted[i];
            let r = start + k as usize;
            let w = self.ws[r];
            self.crit.add(&mut self.child, self.ys[r], w);
            wv += w;
            if i + 1 < n && self.sorted[i + 1].0.total_cmp(&v).is_le() {
                continue;
            }
            // End of the group of value v.
            self.child[0] = wv;
            if i + 1 - group_start < self.params.min_samples_leaf || wv < self.min_weight_leaf {
                return None;
            }
            weighted += wv * self.crit.impurity(&self.child);
            self.child.fill(0.0);
            wv = 0.0;
            group_start = i + 1;
        }
        Some((impurity - weighted / self.total[0], false))
    }

    /// Reorders `rows[start..end]` by the winner's values (stable: by value, then previous
    /// position) and appends its groups to `cuts`; returns the index of the first group.
    fn apply_split(&mut self, samples: &mut [u32], start: usize, end: usize) -> usize {
        self.tmp_samples.clear();
        self.tmp_ys.clear();
        self.tmp_ws.clear();
        for &(_, k) in &self.best_sorted {
            let r = start + k as usize;
            self.tmp_samples.push(samples[r]);
            self.tmp_ys.push(self.ys[r]);
            self.tmp_ws.push(self.ws[r]);
        }
        samples[start..end].copy_from_slice(&self.tmp_samples);
        self.ys[start..end].copy_from_slice(&self.tmp_ys);
        self.ws[start..end].copy_from_slice(&self.tmp_ws);
        let first = self.cuts.len();
        for (i, pair) in self.best_sorted.windows(2).enumerate() {
            let (a, b) = (pair[0].0, pair[1].0);
            if b.total_cmp(&a).is_gt() {
                self.cuts
                    .push((start + i + 1, midpoint(a.to_f64(), b.to_f64())));
            }
        }
        // The last group ends the node; its threshold is never read.
        self.cuts.push((end, f64::NAN));
        first
    }
}
