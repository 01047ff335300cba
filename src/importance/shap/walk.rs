//! A block of rows through one tree: the path-dependent TreeSHAP values of that tree, by a
//! single depth-first walk that visits every node once (the parent module states the
//! identity).
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
//! The walk serves [`BLOCK`] rows at once, one lane each: the path, the cover fractions and
//! the features met are the same for every row, only whether a row takes an edge (`o`)
//! differs. So the traversal is paid once per block and the arithmetic runs across lanes,
//! where it vectorizes. A lane's row goes down every edge, hot or cold, like any other.
//!
//! The explicit stack (no recursion) keeps deep, fully grown trees off the thread's stack.

use super::prepared::ShapTree;

/// Rows served by one walk.
pub(super) const BLOCK: usize = 4;

/// One value per row of the block.
type Lanes = [f64; BLOCK];

/// `[f(0), …, f(BLOCK − 1)]`.
#[inline(always)]
fn lanes(f: impl Fn(usize) -> f64) -> Lanes {
    std::array::from_fn(f)
}

/// The state of a feature on the current path: the product `z` of the cover fractions of
/// its edges (the same for every row), and per row `o = 1` when the row followed every one
/// of them ("hot"), else `o = 0`.
#[derive(Clone, Copy, Debug)]
struct Player {
    z: f64,
    o: Lanes,
}

impl Player {
    /// The state after one more edge of this feature, with cover fraction `z`, which the
    /// rows with `hot = 1` take.
    #[inline(always)]
    fn then(before: Option<Player>, z: f64, hot: Lanes) -> Player {
        match before {
            None => Player { z, o: hot },
            Some(b) => Player {
                z: b.z * z,
                o: lanes(|r| b.o[r] * hot[r]),
            },
        }
    }

    /// `g(u) = o·u + (1 − u)·z`, the feature's factor in the integrand, at a point `u`
    /// given with `1 − u`; arithmetic rather than a branch on `o`, as rows differ.
    #[inline(always)]
    fn g(&self, r: usize, u: f64, one_minus_u: f64) -> f64 {
        self.o[r] * u + one_minus_u * self.z
    }

    /// `g(u)`, floored at the smallest normal number: it divides, and it is 0 only for a
    /// row cold with `z = 0`, whose products are 0 already (`0 / floor = 0`, no NaN). A
    /// floor rather than a branch keeps the lanes' loops vectorized.
    #[inline(always)]
    fn g_divisor(&self, r: usize, u: f64, one_minus_u: f64) -> f64 {
        self.g(r, u, one_minus_u).max(f64::MIN_POSITIVE)
    }

    /// `(o − z) / g(u)`, the weight of the feature's attribution (0 for a row cold with
    /// `z = 0`, whose leaves below weigh nothing).
    #[inline(always)]
    fn attribution_weight(&self, r: usize, u: f64, one_minus_u: f64) -> f64 {
        (self.o[r] - self.z) / self.g_divisor(r, u, one_minus_u)
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
    /// Per row, the scale of the leaves below in the (present, absent) games; `[1, 0]`
    /// for [`Game::Shapley`], whose leaves count once.
    scale: [Lanes; 2],
}

/// Buffers of one thread's walks, reused across blocks and trees.
#[derive(Default)]
pub(super) struct Scratch {
    /// `P_d`: per depth, `n_points` lanes.
    products: Vec<Lanes>,
    /// `Σ_q w_q P_d(u_q)` per depth.
    weighted: Vec<Lanes>,
    /// `R_d`: per depth, `width × n_points` lanes (output-major).
    sums: Vec<Lanes>,
    /// `w_q · Δc(u_q)` of the edge being credited.
    weights: Vec<Lanes>,
    frames: Vec<Frame>,
    players: Vec<Option<Player>>,
}

impl Scratch {
    fn reset(&mut self, tree: &ShapTree<'_>, width: usize, n_features: usize) {
        let (depths, n) = (tree.max_path + 1, tree.rule.len());
        let zero = [0.0; BLOCK];
        self.products.clear();
        self.products.resize(depths * n, zero);
        self.weighted.clear();
        self.weighted.resize(depths, zero);
        self.sums.clear();
        self.sums.resize(depths * n * width, zero);
        self.weights.clear();
        self.weights.resize(n, zero);
        self.frames.clear();
        self.players.clear();
        self.players.resize(n_features, None);
    }
}

/// Adds this tree's values of `game` for a block of rows to `phi`
/// (`BLOCK × n_features × width`, row-major); `value(r, f)` reads feature `f` of the
/// block's row `r`.
pub(super) fn walk(
    tree: &ShapTree<'_>,
    value: impl Fn(usize, usize) -> f64,
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
    let row_len = phi.len() / BLOCK;
    scratch.reset(tree, width, row_len / width.max(1));
    let n = tree.rule.len();
    scratch.products[..n].fill([1.0; BLOCK]);
    weigh_products(tree, 0, scratch);
    let root_scale = match game {
        Game::Shapley => [[1.0; BLOCK], [0.0; BLOCK]],
        Game::PresentMinusAbsent(_) => [[1.0; BLOCK], [1.0; BLOCK]],
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
        let hot = lanes(|r| {
            let left = t.goes_left(node, value(r, f as usize));
            f64::from(u8::from(left == (side == 0)))
        });
        let z = tree.cover[node][side as usize];
        let (edge, scale) = match game {
            Game::PresentMinusAbsent(c) if c == f => {
                let scale = [
                    lanes(|r| parent_scale[0][r] * hot[r]),
                    lanes(|r| parent_scale[1][r] * z),
                ];
                if scale.iter().flatten().all(|&s| s == 0.0) {
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
                if after.z == 0.0 && after.o == [0.0; BLOCK] {
                    continue; // a leaf below weighs nothing in any coalition
                }
                let edge = Edge {
                    feature: f,
                    before,
                    after,
                };
                (Some(edge), parent_scale)
            }
        };
        enter_products(tree, edge, d, scratch);
        if t.is_leaf(child) {
            let leaf = tree.leaf_output(child);
            let scale = lanes(|r| scale[0][r] - scale[1][r]);
            credit_leaf(tree, edge, leaf, scale, d, width, scratch, phi);
        } else {
            if let Some(e) = edge {
                scratch.players[e.feature as usize] = Some(e.after);
            }
            weigh_products(tree, d + 1, scratch);
            let sums = &mut scratch.sums[(d + 1) * n * width..(d + 2) * n * width];
            sums.fill([0.0; BLOCK]);
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
    let (u, v) = (&tree.rule.nodes, &tree.rule.one_minus);
    let a = &e.after;
    match &e.before {
        None => {
            for q in 0..n {
                child[q] = lanes(|r| parent[q][r] * a.g(r, u[q], v[q]));
            }
        }
        Some(b) => {
            // For a row cold before (and so after), g_after / g_before is the edge's cover
            // fraction; when g_before is 0, so is the parent's product.
            for q in 0..n {
                child[q] =
                    lanes(|r| parent[q][r] * a.g(r, u[q], v[q]) / b.g_divisor(r, u[q], v[q]));
            }
        }
    }
}

/// `w_q (c_after(u_q) − c_before(u_q))` of `edge` into `weights`.
fn edge_weights(tree: &ShapTree<'_>, e: &Edge, weights: &mut [Lanes]) {
    let rule = &tree.rule;
    let (u, v, w) = (&rule.nodes, &rule.one_minus, &rule.weights);
    let a = &e.after;
    for q in 0..weights.len() {
        weights[q] = match &e.before {
            None => lanes(|r| w[q] * a.attribution_weight(r, u[q], v[q])),
            Some(b) => lanes(|r| {
                let after = a.attribution_weight(r, u[q], v[q]);
                w[q] * (after - b.attribution_weight(r, u[q], v[q]))
            }),
        };
    }
}

/// Adds `amount[r] · leaf` to the `width` outputs of `feature` in row `r`'s `phi`.
fn credit(phi: &mut [f64], feature: u32, width: usize, leaf: &[f64], amount: Lanes) {
    let row_len = phi.len() / BLOCK;
    for (r, row) in phi.chunks_mut(row_len).enumerate() {
        let out = &mut row[feature as usize * width..][..width];
        out.iter_mut()
            .zip(leaf)
            .for_each(|(o, v)| *o += v * amount[r]);
    }
}

/// A leaf child at depth `d + 1` with output `leaf`, counted `scale` times: credits its
/// edge's feature and adds `scale · leaf · P_{d+1}` to its parent's `R_d`.
#[allow(clippy::too_many_arguments)]
fn credit_leaf(
    tree: &ShapTree<'_>,
    edge: Option<Edge>,
    leaf: &[f64],
    scale: Lanes,
    d: usize,
    width: usize,
    scratch: &mut Scratch,
    phi: &mut [f64],
) {
    let n = tree.rule.len();
    let p = &scratch.products[(d + 1) * n..(d + 2) * n];
    if let Some(e) = edge {
        let dot = if e.before.is_none() {
            // P_{d+1} · c = P_d · g · (o − z) / g: the parent's weighted sum, no division.
            let parent = scratch.weighted[d];
            lanes(|r| scale[r] * (e.after.o[r] - e.after.z) * parent[r])
        } else {
            edge_weights(tree, &e, &mut scratch.weights);
            let mut dot = [0.0; BLOCK];
            for (w, p) in scratch.weights.iter().zip(p) {
                dot = lanes(|r| dot[r] + w[r] * p[r]);
            }
            lanes(|r| scale[r] * dot[r])
        };
        credit(phi, e.feature, width, leaf, dot);
    }
    let sums = &mut scratch.sums[d * n * width..(d + 1) * n * width];
    for (k, v) in leaf.iter().enumerate() {
        let sv = lanes(|r| scale[r] * v);
        for (s, p) in sums[k * n..(k + 1) * n].iter_mut().zip(p) {
            *s = lanes(|r| s[r] + sv[r] * p[r]);
        }
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
        edge_weights(tree, &e, &mut scratch.weights);
        let mut dots = [[0.0; BLOCK]; 8];
        // Outputs in groups of 8 keep the dot products on the stack for any class count.
        for group in 0..width.div_ceil(8) {
            let ks = group * 8..(width).min(group * 8 + 8);
            for (slot, k) in ks.clone().enumerate() {
                let mut dot = [0.0; BLOCK];
                for (w, s) in scratch.weights.iter().zip(&sums[k * n..(k + 1) * n]) {
                    dot = lanes(|r| dot[r] + w[r] * s[r]);
                }
                dots[slot] = dot;
            }
            credit_outputs(phi, e.feature, width, ks.start, &dots[..ks.len()]);
        }
    }
    for (a, s) in parent.iter_mut().zip(sums) {
        *a = lanes(|r| a[r] + s[r]);
    }
}

/// Adds `dots[j][r]` to output `first + j` of `feature` in row `r`'s `phi`.
fn credit_outputs(phi: &mut [f64], feature: u32, width: usize, first: usize, dots: &[Lanes]) {
    let row_len = phi.len() / BLOCK;
    for (r, row) in phi.chunks_mut(row_len).enumerate() {
        let out = &mut row[feature as usize * width + first..][..dots.len()];
        out.iter_mut().zip(dots).for_each(|(o, d)| *o += d[r]);
    }
}

/// `Σ_q w_q P_d(u_q)` of the node just entered at depth `d`, which its leaf children
/// with a first-met feature credit in O(1).
fn weigh_products(tree: &ShapTree<'_>, d: usize, scratch: &mut Scratch) {
    let n = tree.rule.len();
    let mut sum = [0.0; BLOCK];
    for (w, p) in tree
        .rule
        .weights
        .iter()
        .zip(&scratch.products[d * n..(d + 1) * n])
    {
        sum = lanes(|r| sum[r] + w * p[r]);
    }
    scratch.weighted[d] = sum;
}
