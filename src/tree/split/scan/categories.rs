//! The searches of a categorical candidate: which categories go left.
//!
//! A candidate's values are category codes (NaN missing; in the histogram search, codes
//! of category bins whose [`crate::data::NAN_CODE`] is NaN's in a column holding NaN). Each category present in the
//! node is summed into its own bin ([`CategoryBins`]); NaN rows into one more, which the
//! searches treat as one more category, so the side of the missing values is learned with
//! the split (scikit-learn's categorical trees do the same).
//!
//! * [`best_categories`], the exact rule: the categories ordered by their value in the
//!   node, then the one bin scan's cuts between consecutive categories of that order. For
//!   binary classification (by the probability of the second class) and a single-output
//!   regression (by the mean), one of those cuts is the best of all `2^(L−1) − 1`
//!   partitions (Fisher 1958; Breiman et al. 1984, Thm 3.4 of Louppe 2014). With more
//!   classes the order is the first principal component of the categories' class
//!   frequencies (Coppersmith, Hong and Hosking 1999, ranger's `"order"`): good in
//!   practice, not always the best.
//! * [`random_categories`], the Extra-Trees rule (Geurts et al. 2006): each category
//!   present sent left or right by one draw, redrawn until both sides have one.
//!
//! Both write the chosen set into [`CategoryBufs::left`] (bit `c` of word `c / 64`)
//! in a form [`crate::tree::categories`] stores as is: the categories absent from the node
//! take the side with more of its rows, as values unseen in training do.

use crate::data::Feature;
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;
use crate::tree::split::draw::draw_left;
use crate::tree::split::read::side::category_value;
use crate::tree::split::scan::bins::add_row;
use crate::tree::split::{unseen_go_left, BestCut, Cut, NodeCtx, NodeRows};
use crate::tree::Missing;

/// What the categorical searches reuse from node to node.
#[derive(Default)]
pub(crate) struct CategoryBufs {
    /// The bins, one per category, laid out as the histogram's (the proxy's sums, the
    /// weight first, then the rows' count: [`add_row`]), zero between searches: [`clear`]
    /// zeroes those of the categories present.
    table: Vec<f64>,
    /// The set of the last cut (bit `c` of word `c / 64`: category `c` goes left).
    pub(crate) left: Vec<u64>,
    /// The node's categories in code order (NaN last, as one more code).
    present: Vec<u32>,
    /// The categories' values, and their sort keys with codes ([`order_categories`]).
    values: Vec<f64>,
    order: Vec<(f64, u32)>,
    /// The left side's sums, and the random rule's sides of the categories present.
    sums: Vec<f64>,
    goes: Vec<bool>,
}

/// The shape of one candidate's bins: `stride` numbers a bin, NaN's code `nan_code`.
#[derive(Clone, Copy)]
struct CategoryBins {
    stride: usize,
    nan_code: u32,
}

impl CategoryBins {
    fn bin<'t>(&self, table: &'t [f64], c: u32) -> &'t [f64] {
        &table[c as usize * self.stride..(c as usize + 1) * self.stride]
    }

    /// The rows of bin `bin`.
    fn count(&self, bin: &[f64]) -> f64 {
        bin[self.stride - 1]
    }
}

/// Sums the rows of `xf` into `b.table` by category, the categories present into
/// `b.present`; None, with the table zero, when fewer than two categories (NaN counting as
/// one) are present. The work grows with the node's rows and categories, not with the
/// feature's largest code.
fn sum_categories<T: Feature, C: Criterion>(
    (xf, nan_bin): (&[T], bool),
    b: &mut CategoryBufs,
    ctx: &NodeCtx<'_, C>,
    rows: &NodeRows<'_, C::Y>,
) -> Option<CategoryBins> {
    let stride = 1 + ctx.crit.proxy_len();
    // Codes are checked whole and in range by the fit: the largest is read as is.
    let max_code = xf
        .iter()
        .map(|&v| category_value(v, nan_bin))
        .filter(|v| !v.is_nan())
        .fold(-1.0, f64::max);
    let bins = CategoryBins {
        stride,
        nan_code: (max_code + 1.0) as u32,
    };
    let len = (bins.nan_code as usize + 1) * stride;
    if b.table.len() < len {
        b.table.resize(len, 0.0);
    }
    b.present.clear();
    for (j, &v) in xf.iter().enumerate() {
        let v = category_value(v, nan_bin);
        let c = if v.is_nan() { bins.nan_code } else { v as u32 };
        let bin = &mut b.table[c as usize * stride..(c as usize + 1) * stride];
        if bins.count(bin) == 0.0 {
            b.present.push(c);
        }
        add_row::<C, false>(bin, rows.ys[j], rows.ws[j], ctx.crit);
    }
    b.present.sort_unstable();
    if b.present.len() < 2 {
        clear(b, bins);
        return None;
    }
    b.sums.clear();
    b.sums.resize(stride - 1, 0.0);
    Some(bins)
}

/// Zeroes the bins of the categories present (the table is zero between searches).
fn clear(b: &mut CategoryBufs, bins: CategoryBins) {
    let stride = bins.stride;
    for &c in &b.present {
        b.table[c as usize * stride..(c as usize + 1) * stride].fill(0.0);
    }
}

/// Starts the set of a cut of `n_left` of the node's `n` rows in `b.left`: every category
/// present on the right, every other up to the node's largest where unseen values go (left
/// when `n_left` is more than half of `n`). [`send_left`] then moves the left ones.
fn start_set(b: &mut CategoryBufs, bins: CategoryBins, (n_left, n): (usize, usize)) {
    let unseen_left = unseen_go_left(n_left, n);
    let words = (bins.nan_code as usize).div_ceil(64);
    b.left.clear();
    b.left.resize(words, if unseen_left { u64::MAX } else { 0 });
    for &c in &b.present {
        if c != bins.nan_code {
            b.left[c as usize / 64] &= !(1 << (c % 64));
        }
    }
}

/// Sends category `c` left in `set`; true for NaN's code (the missing side, not a bit).
fn send_left(set: &mut [u64], bins: CategoryBins, c: u32) -> bool {
    if c == bins.nan_code {
        return true;
    }
    set[c as usize / 64] |= 1 << (c % 64);
    false
}

/// The side of the node's NaN rows, `nan_left` when it has some.
fn missing_side(b: &CategoryBufs, bins: CategoryBins, nan_left: bool) -> Missing {
    match b.present.last() == Some(&bins.nan_code) {
        false => Missing::Unseen,
        true => Missing::seen(true, nan_left),
    }
}

/// The exact search of a categorical candidate (see the module docs); its set in `b.left`.
pub(in crate::tree::split) fn best_categories<T: Feature, C: Criterion>(
    values: (&[T], bool),
    b: &mut CategoryBufs,
    ctx: &NodeCtx<'_, C>,
    rows: &NodeRows<'_, C::Y>,
    bar: f64,
) -> Option<Cut> {
    let bins = sum_categories(values, b, ctx, rows)?;
    let table = std::mem::take(&mut b.table);
    let cut = best_of_present(&table, bins, b, ctx, values.0.len(), bar);
    b.table = table;
    clear(b, bins);
    cut
}

/// [`best_categories`] from a slot's histogram bins `slot` (from code 0, `stride` numbers
/// a code; [`crate::tree::split::state::node_bins`]): its non-empty codes between `lo` and
/// `hi`, code [`crate::data::NAN_CODE`] standing for NaN with `nan` (the column's
/// missing-values bin). Its set in `b.left`, of codes.
pub(in crate::tree::split) fn best_of_bins<C: Criterion>(
    (slot, stride): (&[f64], usize),
    (lo, hi, nan): (usize, usize, bool),
    b: &mut CategoryBufs,
    ctx: &NodeCtx<'_, C>,
    n: usize,
    bar: f64,
) -> Option<Cut> {
    let nan_code = match nan {
        true => u32::from(crate::data::NAN_CODE),
        false => 1 + u32::from(crate::data::NAN_CODE),
    };
    let bins = CategoryBins { stride, nan_code };
    b.present.clear();
    let codes = (lo..=hi).filter(|&c| bins.count(bins.bin(slot, c as u32)) > 0.0);
    b.present.extend(codes.map(|c| c as u32));
    if b.present.len() < 2 {
        return None;
    }
    b.sums.clear();
    b.sums.resize(stride - 1, 0.0);
    best_of_present(slot, bins, b, ctx, n, bar)
}

/// [`best_of_bins`] of a node's `rows` given by code (NaN's [`crate::data::NAN_CODE`] with
/// `nan`), target and weight, between codes `lo` and `hi`, in the node's order within each
/// code (so that each bin sums its rows as the gathered search does): summed into
/// `b.table`, which is left zero.
#[allow(clippy::type_complexity)]
pub(in crate::tree::split) fn best_of_codes<C: Criterion>(
    rows: impl Iterator<Item = (usize, C::Y, f64)>,
    (lo, hi, nan): (usize, usize, bool),
    b: &mut CategoryBufs,
    ctx: &NodeCtx<'_, C>,
    n: usize,
    bar: f64,
) -> Option<Cut> {
    let stride = 1 + ctx.crit.proxy_len();
    if b.table.len() < (hi + 1) * stride {
        b.table.resize((hi + 1) * stride, 0.0);
    }
    for (c, y, w) in rows {
        add_row::<C, false>(&mut b.table[c * stride..(c + 1) * stride], y, w, ctx.crit);
    }
    let mut table = std::mem::take(&mut b.table);
    let cut = best_of_bins((&table, stride), (lo, hi, nan), b, ctx, n, bar);
    table[lo * stride..(hi + 1) * stride].fill(0.0);
    b.table = table;
    cut
}

/// The best cut above `bar` between the categories `b.present` of `table` ordered by their
/// value, its set written into `b.left`; `n` is the node's rows and `b.sums` zero.
fn best_of_present<C: Criterion>(
    table: &[f64],
    bins: CategoryBins,
    b: &mut CategoryBufs,
    ctx: &NodeCtx<'_, C>,
    n: usize,
    bar: f64,
) -> Option<Cut> {
    order_categories(table, b, bins, ctx);
    let mut n_left = 0usize;
    let mut best = BestCut::above(bar);
    for (i, &(_, c)) in b.order[..b.order.len() - 1].iter().enumerate() {
        let bin = bins.bin(table, c);
        n_left += bins.count(bin) as usize;
        for (l, x) in b.sums.iter_mut().zip(bin) {
            *l += x;
        }
        let right_ok = n - n_left >= ctx.min_samples_leaf;
        if right_ok && best.worth(ctx, n_left, &b.sums) {
            best.offer(ctx, &b.sums, i as f64, n_left);
        }
    }
    let mut cut = best.cut()?;
    start_set(b, bins, (cut.n_left?, n));
    let mut nan_left = false;
    for &(_, c) in &b.order[..cut.threshold as usize + 1] {
        nan_left |= send_left(&mut b.left, bins, c);
    }
    cut.missing = missing_side(b, bins, nan_left);
    Some(cut)
}

/// Sorts the node's categories (with NaN as `bins.nan_code`) of `table` into `b.order` by
/// their value (see the module docs), ties by code.
fn order_categories<C: Criterion>(
    table: &[f64],
    b: &mut CategoryBufs,
    bins: CategoryBins,
    ctx: &NodeCtx<'_, C>,
) {
    let stride = bins.stride;
    let width = (stride - 2).max(1);
    b.values.clear();
    b.values.resize(b.present.len() * width, 0.0);
    for (v, &c) in b.values.chunks_mut(width).zip(&b.present) {
        ctx.crit.value(&bins.bin(table, c)[..stride - 1], v);
    }
    b.order.clear();
    let codes = b.present.iter().copied();
    match width {
        1 => b.order.extend(b.values.iter().copied().zip(codes)),
        2 => b
            .order
            .extend(b.values.chunks(2).map(|v| v[1] - v[0]).zip(codes)),
        _ => {
            let weights: Vec<f64> = (b.present.iter()).map(|&c| bins.bin(table, c)[0]).collect();
            let scores = principal_scores(&b.values, width, &weights);
            b.order.extend(scores.into_iter().zip(codes));
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

/// The Extra-Trees search of a categorical candidate (see the module docs): draws from
/// `rng` one bit per category present (NaN included, as one more category), again until
/// both sides have one; its set in `b.left`.
pub(in crate::tree::split) fn random_categories<T: Feature, C: Criterion>(
    values: (&[T], bool),
    b: &mut CategoryBufs,
    ctx: &NodeCtx<'_, C>,
    rows: &NodeRows<'_, C::Y>,
    rng: &mut TreeRng,
) -> Option<Cut> {
    let bins = sum_categories(values, b, ctx, rows)?;
    let m = b.present.len();
    b.goes.clear();
    b.goes.resize(m, false);
    loop {
        for g in b.goes.iter_mut() {
            *g = draw_left(rng);
        }
        let n_true = b.goes.iter().filter(|&&g| g).count();
        if n_true > 0 && n_true < m {
            break;
        }
    }
    let n = values.0.len();
    let mut n_left = 0usize;
    for (&c, _) in b.present.iter().zip(&b.goes).filter(|(_, &g)| g) {
        let bin = bins.bin(&b.table, c);
        n_left += bins.count(bin) as usize;
        for (l, x) in b.sums.iter_mut().zip(bin) {
            *l += x;
        }
    }
    clear(b, bins);
    if !ctx.admissible(n_left, n, &b.sums) {
        return None;
    }
    let proxy = ctx.crit.proxy(ctx.total, &b.sums);
    if !C::allows(proxy) {
        return None;
    }
    start_set(b, bins, (n_left, n));
    let mut nan_left = false;
    for (&c, _) in b.present.iter().zip(&b.goes).filter(|(_, &g)| g) {
        nan_left |= send_left(&mut b.left, bins, c);
    }
    Some(Cut {
        proxy,
        threshold: 0.0,
        n_left: Some(n_left),
        missing: missing_side(b, bins, nan_left),
    })
}

#[cfg(test)]
mod tests;
