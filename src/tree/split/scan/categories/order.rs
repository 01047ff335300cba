//! The order of a node's categories that the exact rule cuts: rare categories pooled as one
//! group ([`pool_rare`]), the others by their value in the node ([`order_categories`]).

use super::bufs::{CategoryBins, CategoryBufs, POOLED};
use crate::tree::criterion::Criterion;
use crate::tree::split::NodeCtx;

/// Moves the node's categories of fewer than [`CategoryGuards::min_samples`] rows (NaN
/// aside) into `b.rare`, their bins summed into `b.pooled`, when there are two or more;
/// `b.rare` is left empty otherwise.
pub(super) fn pool_rare(table: &[f64], bins: CategoryBins, b: &mut CategoryBufs) {
    b.rare.clear();
    let count = |c: u32| bins.count(bins.bin(table, c));
    let mut min = b.guards.min_samples as f64;
    if b.guards.min_share > 0.0 {
        let rows: f64 = b.present.iter().map(|&c| count(c)).sum();
        min = min.max(b.guards.min_share * rows);
    }
    b.rare_below = min;
    if min <= 1.0 {
        return;
    }
    let rare = |c: &u32| *c != bins.nan_code && count(*c) < min;
    b.rare.extend(b.present.iter().copied().filter(rare));
    if b.rare.len() < 2 {
        b.rare.clear();
        return;
    }
    b.pooled.clear();
    b.pooled.resize(bins.stride, 0.0);
    for &c in &b.rare {
        for (p, x) in b.pooled.iter_mut().zip(bins.bin(table, c)) {
            *p += x;
        }
    }
}

/// Sorts the node's groups into `b.order` by their value (see the module docs), ties by
/// code: its categories (with NaN as `bins.nan_code`) but the rare ones, which are one
/// group ([`POOLED`]); `bin_of` reads a group's bin. With [`CategoryGuards::smoothing`] a
/// group's value is that of its sums plus that many rows of the node's mean.
pub(super) fn order_categories<'t, C: Criterion>(
    bin_of: &impl Fn(u32) -> &'t [f64],
    b: &mut CategoryBufs,
    bins: CategoryBins,
    ctx: &NodeCtx<'_, C>,
) {
    let stride = bins.stride;
    let width = (stride - 2).max(1);
    // (The rare categories, those `pool_rare` pooled, are read off their counts.)
    let pooling = !b.rare.is_empty();
    let min = b.rare_below;
    let rare = |c: u32| pooling && c != bins.nan_code && bins.count(bin_of(c)) < min;
    let groups = (b.present.iter().copied())
        .filter(|&c| !rare(c))
        .chain(pooling.then_some(POOLED));
    b.order.clear();
    b.order.extend(groups.map(|c| (0.0, c)));
    b.values.clear();
    b.values.resize(b.order.len() * width, 0.0);
    let s = b.guards.smoothing;
    b.smoothed.clear();
    b.smoothed.resize(stride - 1, 0.0);
    let total_w = ctx.total[0];
    for (v, &(_, c)) in b.values.chunks_mut(width).zip(&b.order) {
        let sums = &bin_of(c)[..stride - 1];
        if s > 0.0 && total_w > 0.0 {
            for ((m, x), t) in b.smoothed.iter_mut().zip(sums).zip(ctx.total) {
                *m = x + s * t / total_w;
            }
            ctx.crit.value(&b.smoothed, v);
        } else {
            ctx.crit.value(sums, v);
        }
    }
    match width {
        1 => (b.order.iter_mut().zip(&b.values)).for_each(|(o, &v)| o.0 = v),
        2 => (b.order.iter_mut().zip(b.values.chunks(2))).for_each(|(o, v)| o.0 = v[1] - v[0]),
        _ => {
            let weights: Vec<f64> = b.order.iter().map(|&(_, c)| bin_of(c)[0]).collect();
            let scores = principal_scores(&b.values, width, &weights);
            (b.order.iter_mut().zip(scores)).for_each(|(o, v)| o.0 = v);
        }
    }
    b.order
        .sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
}

/// The scores of the rows of `values` (`width` columns, weights `weights`) on their first
/// weighted principal component, by power iteration from a fixed start (so the order is
/// the same on every machine and thread count).
fn principal_scores(values: &[f64], width: usize, weights: &[f64]) -> Vec<f64> {
    let total: f64 = weights.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    let mut mean = vec![0.0; width];
    for (v, w) in values.chunks(width).zip(weights) {
        for (m, x) in mean.iter_mut().zip(v) {
            *m += w * x / total;
        }
    }
    let mut cov = vec![0.0; width * width];
    for (v, w) in values.chunks(width).zip(weights) {
        for a in 0..width {
            for b in 0..width {
                cov[a * width + b] += w * (v[a] - mean[a]) * (v[b] - mean[b]);
            }
        }
    }
    let mut dir: Vec<f64> = (0..width).map(|k| 1.0 + k as f64).collect();
    for _ in 0..64 {
        let next: Vec<f64> = (0..width)
            .map(|a| (0..width).map(|b| cov[a * width + b] * dir[b]).sum())
            .collect();
        let norm = next.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm.is_nan() || norm <= 0.0 || norm.is_infinite() {
            break;
        }
        dir = next.into_iter().map(|x| x / norm).collect();
    }
    values
        .chunks(width)
        .map(|v| {
            v.iter()
                .zip(&mean)
                .zip(&dir)
                .map(|((x, m), d)| (x - m) * d)
                .sum()
        })
        .collect()
}
