//! One row through one tree: the path-dependent TreeSHAP values of that tree, by a single
//! depth-first walk that visits every node once (the parent module states the identity).
//!
//! The walk keeps, at each depth `d` of the current path, the product
//! `P_d(u_q) = Π_j g_j(u_q)` over the features met so far (one factor per *distinct*
//! feature, from its latest state), and on the way back the sum `R_d(u_q)` of
//! `v_leaf · P_leaf(u_q)` over the leaves below. When the edge into a node changes the state
//! of feature `j`, every leaf below owes `j` the amount `(o_j − z_j) ∫ P_leaf / g_j`, which
//! is `Σ_q w_q c_j(u_q) R(u_q)` with `c_j = (o_j − z_j) / g_j`: one dot product per edge.
//! A feature met again deeper down changes its state there: the deeper edge credits the
//! leaves below it with the new state and takes back what the earlier edge will credit
//! them with the old one (attributions are linear in `R`), so each leaf ends up credited
//! with its own final state.
//!
//! The explicit stack (no recursion) keeps deep, fully grown trees off the thread's stack.

use super::prepared::ShapTree;

/// The state of a feature on the current path: the product `z` of the cover fractions of
/// its edges, and whether the row followed every one of them (`hot`, `o = 1`).
#[derive(Clone, Copy, Debug)]
struct Player {
    z: f64,
    hot: bool,
}

impl Player {
    /// The state after one more edge of this feature, with cover fraction `z` and `hot`
    /// when the row takes it.
    fn then(before: Option<Player>, z: f64, hot: bool) -> Player {
        match before {
            None => Player { z, hot },
            Some(b) => Player {
                z: b.z * z,
                hot: b.hot && hot,
            },
        }
    }

    /// `g(u) = o·u + (1 − u)·z`: the feature's factor in the integrand.
    #[inline(always)]
    fn g(self, u: f64) -> f64 {
        if self.hot {
            u + (1.0 - u) * self.z
        } else {
            (1.0 - u) * self.z
        }
    }

    /// `(o − z) / g(u)`, the weight of the feature's attribution. A cold feature gives
    /// `−1 / (1 − u)` whatever its `z`, so no cover fraction is ever divided by.
    #[inline(always)]
    fn attribution_weight(self, u: f64) -> f64 {
        if self.hot {
            (1.0 - self.z) / (u + (1.0 - u) * self.z)
        } else {
            -1.0 / (1.0 - u)
        }
    }
}

/// Which game a walk computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Game {
    /// The Shapley values of every feature.
    Shapley,
    /// For SHAP interaction values: the Shapley values of the other features when
    /// `feature` is known (present) minus when it is unknown (absent). `feature` is no
    /// player; its edges only scale the two games by the constants `o` and `z`.
    PresentMinusAbsent(u32),
}

/// How a node was entered from its parent.
#[derive(Clone, Copy, Debug)]
struct Edge {
    feature: u32,
    /// Cover fraction of the edge.
    cover: f64,
    before: Option<Player>,
    after: Player,
}

/// A node on the current path.
#[derive(Clone, Copy, Debug)]
struct Frame {
    node: u32,
    /// Next child to enter: 0 (left), 1 (right), 2 (done).
    next: u8,
    /// The player edge into this node (None at the root and on the edges of the known
    /// feature of [`Game::PresentMinusAbsent`]).
    edge: Option<Edge>,
    /// Scale of the leaves below in the (present, absent) games; `[1, 0]` for
    /// [`Game::Shapley`], whose leaves count once.
    scale: [f64; 2],
}

/// Buffers of one thread's walks, reused across rows and trees.
#[derive(Default)]
pub(super) struct Scratch {
    /// `P_d`, `n_points` values per depth.
    products: Vec<f64>,
    /// `R_d`, `width × n_points` values per depth (output-major).
    sums: Vec<f64>,
    /// `w_q · Δc(u_q)` of the edge being credited.
    weights: Vec<f64>,
    frames: Vec<Frame>,
    players: Vec<Option<Player>>,
}

impl Scratch {
    fn reset(&mut self, tree: &ShapTree<'_>, width: usize, n_features: usize) {
        let (depths, n) = (tree.max_path + 1, tree.rule.len());
        self.products.clear();
        self.products.resize(depths * n, 0.0);
        self.sums.clear();
        self.sums.resize(depths * n * width, 0.0);
        self.weights.clear();
        self.weights.resize(n, 0.0);
        self.frames.clear();
        self.players.clear();
        self.players.resize(n_features, None);
    }
}

/// Adds this tree's values of `game` for one row to `phi` (`n_features × width`,
/// row-major); `value(f)` reads the row's feature `f`.
pub(super) fn walk(
    tree: &ShapTree<'_>,
    value: impl Fn(usize) -> f64,
    game: Game,
    width: usize,
    scratch: &mut Scratch,
    phi: &mut [f64],
) {
    let t = tree.tree;
    if t.is_leaf(0) {
        return;
    }
    if let Game::PresentMinusAbsent(c) = game {
        if !tree.subtree_splits_on(0, c as usize) {
            return;
        }
    }
    scratch.reset(tree, width, phi.len() / width.max(1));
    let n = tree.rule.len();
    scratch.products[..n].fill(1.0);
    let root_scale = match game {
        Game::Shapley => [1.0, 0.0],
        Game::PresentMinusAbsent(_) => [1.0, 1.0],
    };
    scratch.frames.push(Frame {
        node: 0,
        next: 0,
        edge: None,
        scale: root_scale,
    });
    while let Some(d) = scratch.frames.len().checked_sub(1) {
        let top = &mut scratch.frames[d];
        if top.next == 2 {
            let done = *top;
            scratch.frames.pop();
            if d > 0 {
                close_subtree(tree, done.edge, d, width, scratch, phi);
            }
            continue;
        }
        let (node, side) = (top.node as usize, top.next);
        top.next += 1;
        let parent_scale = top.scale;
        let Some((left, right)) = t.children(node) else {
            continue;
        };
        let child = if side == 0 { left } else { right };
        let f = t.feature(node);
        let hot = t.goes_left(node, value(f as usize)) == (side == 0);
        let z = tree.cover[node][side as usize];
        let (edge, scale) = match game {
            Game::PresentMinusAbsent(c) if c == f => {
                let scale = [
                    parent_scale[0] * f64::from(u8::from(hot)),
                    parent_scale[1] * z,
                ];
                if scale == [0.0, 0.0] {
                    continue;
                }
                (None, scale)
            }
            _ => {
                if let Game::PresentMinusAbsent(c) = game {
                    // Both games agree on every leaf below: their difference is 0 there.
                    if parent_scale[0] == parent_scale[1]
                        && !tree.subtree_splits_on(child, c as usize)
                    {
                        continue;
                    }
                }
                let before = scratch.players[f as usize];
                let after = Player::then(before, z, hot);
                if !after.hot && after.z == 0.0 {
                    continue; // a leaf below weighs nothing in any coalition
                }
                let edge = Edge {
                    feature: f,
                    cover: z,
                    before,
                    after,
                };
                (Some(edge), parent_scale)
            }
        };
        enter_products(tree, edge, d, scratch);
        if t.is_leaf(child) {
            let leaf = t.value(child);
            credit_leaf(
                tree,
                edge,
                leaf,
                scale[0] - scale[1],
                d,
                width,
                scratch,
                phi,
            );
        } else {
            if let Some(e) = edge {
                scratch.players[e.feature as usize] = Some(e.after);
            }
            let sums = &mut scratch.sums[(d + 1) * n * width..(d + 2) * n * width];
            sums.fill(0.0);
            scratch.frames.push(Frame {
                node: child as u32,
                next: 0,
                edge,
                scale,
            });
        }
    }
}

/// `P_{d+1} = P_d · g_after / g_before` for the edge into a child at depth `d + 1`.
fn enter_products(tree: &ShapTree<'_>, edge: Option<Edge>, d: usize, scratch: &mut Scratch) {
    let n = tree.rule.len();
    let (head, tail) = scratch.products.split_at_mut((d + 1) * n);
    let (parent, child) = (&head[d * n..], &mut tail[..n]);
    let Some(e) = edge else {
        child.copy_from_slice(parent);
        return;
    };
    let nodes = &tree.rule.nodes;
    match e.before {
        // A cold feature stays cold: its factor (1 − u)·z gains the edge's cover fraction.
        Some(b) if !b.hot => {
            child
                .iter_mut()
                .zip(parent)
                .for_each(|(c, p)| *c = p * e.cover);
        }
        Some(b) => {
            for q in 0..n {
                child[q] = parent[q] * e.after.g(nodes[q]) / b.g(nodes[q]);
            }
        }
        None => {
            for q in 0..n {
                child[q] = parent[q] * e.after.g(nodes[q]);
            }
        }
    }
}

/// `w_q (c_after(u_q) − c_before(u_q))` of `edge` into `scratch.weights`.
fn edge_weights(tree: &ShapTree<'_>, e: Edge, weights: &mut [f64]) {
    let rule = &tree.rule;
    for (q, w) in weights.iter_mut().enumerate() {
        let u = rule.nodes[q];
        let before = e.before.map_or(0.0, |b| b.attribution_weight(u));
        *w = rule.weights[q] * (e.after.attribution_weight(u) - before);
    }
}

/// A leaf child at depth `d + 1` with output `leaf`, counted `scale` times: credits its
/// edge's feature and adds `scale · leaf · P_{d+1}` to its parent's `R_d`.
#[allow(clippy::too_many_arguments)]
fn credit_leaf(
    tree: &ShapTree<'_>,
    edge: Option<Edge>,
    leaf: &[f64],
    scale: f64,
    d: usize,
    width: usize,
    scratch: &mut Scratch,
    phi: &mut [f64],
) {
    let n = tree.rule.len();
    let p = &scratch.products[(d + 1) * n..(d + 2) * n];
    if let Some(e) = edge {
        edge_weights(tree, e, &mut scratch.weights);
        let dot: f64 = scratch.weights.iter().zip(p).map(|(w, p)| w * p).sum();
        let out = &mut phi[e.feature as usize * width..][..width];
        out.iter_mut()
            .zip(leaf)
            .for_each(|(o, v)| *o += scale * v * dot);
    }
    let sums = &mut scratch.sums[d * n * width..(d + 1) * n * width];
    for (k, v) in leaf.iter().enumerate() {
        let sv = scale * v;
        let row = &mut sums[k * n..(k + 1) * n];
        row.iter_mut().zip(p).for_each(|(r, p)| *r += sv * p);
    }
}

/// The subtree at depth `d` is complete: credit the feature of the edge into it with
/// `R_d`, restore that feature's state, and add `R_d` to the parent's `R_{d−1}`.
fn close_subtree(
    tree: &ShapTree<'_>,
    edge: Option<Edge>,
    d: usize,
    width: usize,
    scratch: &mut Scratch,
    phi: &mut [f64],
) {
    let n = tree.rule.len();
    let (head, tail) = scratch.sums.split_at_mut(d * n * width);
    let (parent, sums) = (&mut head[(d - 1) * n * width..], &tail[..n * width]);
    if let Some(e) = edge {
        scratch.players[e.feature as usize] = e.before;
        edge_weights(tree, e, &mut scratch.weights);
        let out = &mut phi[e.feature as usize * width..][..width];
        for (k, o) in out.iter_mut().enumerate() {
            let r = &sums[k * n..(k + 1) * n];
            *o += scratch
                .weights
                .iter()
                .zip(r)
                .map(|(w, r)| w * r)
                .sum::<f64>();
        }
    }
    parent.iter_mut().zip(sums).for_each(|(a, s)| *a += s);
}
