//! Finding the split of one node: which candidate features, which threshold.
//!
//! Invariants kept for the builder:
//! * the node's samples are the contiguous slice `samples[start..end]`; after a split they
//!   are partitioned in place, left child first (`x ≤ threshold`), right child after `pos`;
//! * `features[..n_constant]` are known to be constant in the node (so in all its
//!   descendants) and are never drawn. Candidates are drawn uniformly **without replacement
//!   among the features not constant in the node**: a drawn feature found constant joins the
//!   constant prefix and does not count towards K. With K = 1 this is exactly the totally
//!   randomized tree of Louppe et al. (2013, Thm 1): one variable chosen uniformly among
//!   those that can still split the node.
//! * ties between candidates keep the first one drawn (strict `>`), so a fixed RNG stream
//!   gives a fixed tree.

use super::criterion::Criterion;
use crate::data::{Feature, Matrix};
use crate::rng::TreeRng;

/// A chosen split of a node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Split {
    pub feature: u32,
    pub threshold: f64,
    /// Samples in the left child (`x ≤ threshold`), counted from the node start.
    pub n_left: usize,
}

/// Threshold search for one candidate feature; zero-sized, chosen once per fit.
pub(crate) trait ThresholdRule: Sync {
    /// Best `(proxy, threshold)` for the gathered values `xf` of `samples`, or None when no
    /// threshold satisfies the leaf constraints.
    fn search<T: Feature, C: Criterion>(
        s: &mut Scratch<T>,
        ctx: &NodeCtx<'_, C>,
        samples: &[u32],
        lo: T,
        hi: T,
        rng: &mut TreeRng,
    ) -> Option<(f64, f64)>;
}

/// CART: every mid-point between consecutive distinct sorted values.
pub(crate) struct BestThreshold;
/// Extra-Trees: one threshold uniform in `[min, max)` of the node values.
pub(crate) struct RandomThreshold;

/// What a search needs about the node besides its samples.
pub(crate) struct NodeCtx<'a, C> {
    pub crit: &'a C,
    pub weights: &'a [f64],
    pub total: &'a [f64],
    pub min_samples_leaf: usize,
    pub min_weight_leaf: f64,
}

impl<C: Criterion> NodeCtx<'_, C> {
    #[inline(always)]
    fn admissible(&self, n_left: usize, n: usize, left: &[f64]) -> bool {
        n_left >= self.min_samples_leaf
            && n - n_left >= self.min_samples_leaf
            && left[0] >= self.min_weight_leaf
            && self.total[0] - left[0] >= self.min_weight_leaf
    }
}

/// Per-tree buffers, allocated once and reused by every node.
pub(crate) struct Scratch<T> {
    xf: Vec<T>,
    sorted: Vec<(T, u32)>,
    left: Vec<f64>,
}

impl<T: Feature> Scratch<T> {
    pub fn new(n: usize, stats_len: usize) -> Self {
        Scratch { xf: Vec::with_capacity(n), sorted: Vec::with_capacity(n), left: vec![0.0; stats_len] }
    }
}

/// Mid-point of two consecutive distinct values, never equal to the upper one.
#[inline]
fn midpoint(a: f64, b: f64) -> f64 {
    let m = a / 2.0 + b / 2.0;
    if m >= b || !m.is_finite() {
        a
    } else {
        m
    }
}

impl ThresholdRule for BestThreshold {
    fn search<T: Feature, C: Criterion>(
        s: &mut Scratch<T>,
        ctx: &NodeCtx<'_, C>,
        samples: &[u32],
        _lo: T,
        _hi: T,
        _rng: &mut TreeRng,
    ) -> Option<(f64, f64)> {
        s.sorted.clear();
        s.sorted.extend(s.xf.iter().copied().zip(samples.iter().copied()));
        // (value, sample) is a total key: the sorted order is unique.
        s.sorted.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        s.left.fill(0.0);
        let n = samples.len();
        let mut best: Option<(f64, f64)> = None;
        for i in 0..n - 1 {
            let (v, idx) = s.sorted[i];
            ctx.crit.add(&mut s.left, idx as usize, ctx.weights[idx as usize]);
            let next = s.sorted[i + 1].0;
            if next <= v {
                continue;
            }
            let n_left = i + 1;
            if n - n_left < ctx.min_samples_leaf {
                break;
            }
            if !ctx.admissible(n_left, n, &s.left) {
                continue;
            }
            let proxy = ctx.crit.proxy(ctx.total, &s.left);
            if best.is_none_or(|(bp, _)| proxy > bp) {
                best = Some((proxy, midpoint(v.to_f64(), next.to_f64())));
            }
        }
        best
    }
}

impl ThresholdRule for RandomThreshold {
    fn search<T: Feature, C: Criterion>(
        s: &mut Scratch<T>,
        ctx: &NodeCtx<'_, C>,
        samples: &[u32],
        lo: T,
        hi: T,
        rng: &mut TreeRng,
    ) -> Option<(f64, f64)> {
        let (lo, hi) = (lo.to_f64(), hi.to_f64());
        let mut t = lo + rng.unit() * (hi - lo);
        if !t.is_finite() {
            t = lo / 2.0 + hi / 2.0;
        }
        if t >= hi {
            t = lo;
        }
        s.left.fill(0.0);
        let mut n_left = 0;
        for (v, &idx) in s.xf.iter().zip(samples) {
            if v.to_f64() <= t {
                ctx.crit.add(&mut s.left, idx as usize, ctx.weights[idx as usize]);
                n_left += 1;
            }
        }
        if !ctx.admissible(n_left, samples.len(), &s.left) {
            return None;
        }
        Some((ctx.crit.proxy(ctx.total, &s.left), t))
    }
}

/// Draws candidate features for the node `samples` and returns the best split found, with
/// the new length of the constant prefix of `features`.
pub(crate) fn find_split<T: Feature, C: Criterion, R: ThresholdRule>(
    x: &Matrix<'_, T>,
    ctx: &NodeCtx<'_, C>,
    s: &mut Scratch<T>,
    samples: &mut [u32],
    features: &mut [u32],
    n_constant: usize,
    max_features: usize,
    rng: &mut TreeRng,
) -> (Option<Split>, usize) {
    let mut constant = n_constant; // features[..constant] are constant here
    let mut undrawn = features.len(); // features[constant..undrawn] not drawn yet
    let mut visited = 0;
    let mut best: Option<(f64, Split)> = None;
    while visited < max_features && constant < undrawn {
        let j = constant + rng.below(undrawn - constant);
        let f = features[j];
        let (lo, hi) = gather(x, f as usize, samples, &mut s.xf);
        if hi <= lo {
            features.swap(j, constant);
            constant += 1;
            continue;
        }
        undrawn -= 1;
        features.swap(j, undrawn);
        visited += 1;
        if let Some((proxy, threshold)) = R::search(s, ctx, samples, lo, hi, rng) {
            if best.as_ref().is_none_or(|(bp, _)| proxy > *bp) {
                best = Some((proxy, Split { feature: f, threshold, n_left: 0 }));
            }
        }
    }
    let split = best.map(|(_, mut sp)| {
        sp.n_left = partition(x, sp.feature as usize, sp.threshold, samples);
        sp
    });
    (split, constant)
}

/// Copies feature `f` of `samples` into `xf`; returns its (min, max).
#[inline]
fn gather<T: Feature>(x: &Matrix<'_, T>, f: usize, samples: &[u32], xf: &mut Vec<T>) -> (T, T) {
    xf.clear();
    match x.column(f) {
        Some(col) => xf.extend(samples.iter().map(|&i| col[i as usize])),
        None => xf.extend(samples.iter().map(|&i| x.get(i as usize, f))),
    }
    let mut lo = xf[0];
    let mut hi = xf[0];
    for &v in xf.iter() {
        if v < lo {
            lo = v;
        }
        if v > hi {
            hi = v;
        }
    }
    (lo, hi)
}

/// Moves samples with `x[., f] ≤ threshold` to the front; returns how many there are.
fn partition<T: Feature>(x: &Matrix<'_, T>, f: usize, threshold: f64, samples: &mut [u32]) -> usize {
    let (mut i, mut j) = (0, samples.len());
    while i < j {
        if x.get(samples[i] as usize, f).to_f64() <= threshold {
            i += 1;
        } else {
            j -= 1;
            samples.swap(i, j);
        }
    }
    i
}
