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
//! Both write the chosen set into [`SearchBufs::category_left`] (bit `c` of word `c / 64`)
//! in a form [`crate::tree::categories`] stores as is: the categories absent from the node
//! take the side with more of its rows, as values unseen in training do.

use crate::data::Feature;
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;
use crate::tree::split::draw::draw_left;
use crate::tree::split::read::side::category_value;
use crate::tree::split::scan::bufs::SearchBufs;
use crate::tree::split::{unseen_go_left, BestCut, Cut, NodeCtx, NodeRows};
use crate::tree::Missing;

/// The node's categories of one candidate, summed: bins of `stride` numbers (the rows'
/// count, then the proxy's sums, the weight first), and the present ones in code order,
/// NaN last as code `nan_code`.
struct CategoryBins {
    stride: usize,
    present: Vec<u32>,
    nan_code: u32,
}

/// Sums the rows of `xf` into `s.category_table` by category (the table is zero between
/// searches: [`clear`] zeroes the bins of the categories present after each); None, with
/// the table zero, when fewer than two categories (NaN counting as one) are present. The
/// work grows with the node's rows and categories, not with the feature's largest code.
fn sum_categories<T: Feature, C: Criterion>(
    (xf, nan_bin): (&[T], bool),
    s: &mut SearchBufs<T>,
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
    let nan_code = (max_code + 1.0) as u32;
    let table = &mut s.category_table;
    let len = (nan_code as usize + 1) * stride;
    if table.len() < len {
        table.resize(len, 0.0);
    }
    let mut present = Vec::new();
    for (j, &v) in xf.iter().enumerate() {
        let v = category_value(v, nan_bin);
        let c = if v.is_nan() { nan_code } else { v as u32 };
        let bin = &mut table[c as usize * stride..(c as usize + 1) * stride];
        if bin[0] == 0.0 {
            present.push(c);
        }
        let w = rows.ws[j];
        bin[0] += 1.0;
        bin[1] += w;
        ctx.crit.add_for_proxy(&mut bin[1..], rows.ys[j], w);
    }
    present.sort_unstable();
    let bins = CategoryBins {
        stride,
        present,
        nan_code,
    };
    if bins.present.len() < 2 {
        clear(table, &bins);
        return None;
    }
    Some(bins)
}

/// Zeroes the bins of the categories present (the table is zero between searches).
fn clear(table: &mut [f64], bins: &CategoryBins) {
    let stride = bins.stride;
    for &c in &bins.present {
        table[c as usize * stride..(c as usize + 1) * stride].fill(0.0);
    }
}

/// Writes the set that sends the categories `left` (codes; `nan_code` stands for NaN) to
/// the left child into `s.category_left`, every other category up to the node's largest
/// going where unseen values go: left when `n_left` is more than half the node's `n` rows.
/// Returns the side of the NaN rows.
fn write_set<T: Feature>(
    s: &mut SearchBufs<T>,
    bins: &CategoryBins,
    left: impl Iterator<Item = u32>,
    (n_left, n): (usize, usize),
) -> Missing {
    let unseen_left = unseen_go_left(n_left, n);
    let words = (bins.nan_code as usize).div_ceil(64);
    let set = &mut s.category_left;
    set.clear();
    set.resize(words, if unseen_left { u64::MAX } else { 0 });
    // The node's categories take their side, the others stay unseen.
    for &c in &bins.present {
        if c != bins.nan_code {
            set[c as usize / 64] &= !(1 << (c % 64));
        }
    }
    let mut nan_left = false;
    for c in left {
        match c == bins.nan_code {
            true => nan_left = true,
            false => set[c as usize / 64] |= 1 << (c % 64),
        }
    }
    let has_nan = bins.present.last() == Some(&bins.nan_code);
    match (has_nan, nan_left) {
        (false, _) => Missing::Unseen,
        (true, left) => Missing::seen(true, left),
    }
}

/// The exact search of a categorical candidate (see the module docs).
pub(in crate::tree::split) fn best_categories<T: Feature, C: Criterion>(
    (xf, nan_bin): (&[T], bool),
    s: &mut SearchBufs<T>,
    ctx: &NodeCtx<'_, C>,
    rows: &NodeRows<'_, C::Y>,
    bar: f64,
) -> Option<Cut> {
    let bins = sum_categories((xf, nan_bin), s, ctx, rows)?;
    let order = order_categories(&s.category_table, &bins, ctx);
    let (stride, n) = (bins.stride, xf.len());
    let table = &s.category_table;
    let mut left = vec![0.0; stride - 1];
    let mut n_left = 0usize;
    let mut best = BestCut::above(bar);
    for (i, &c) in order[..order.len() - 1].iter().enumerate() {
        let bin = &table[c as usize * stride..(c as usize + 1) * stride];
        n_left += bin[0] as usize;
        for (l, b) in left.iter_mut().zip(&bin[1..]) {
            *l += b;
        }
        let right_ok = n - n_left >= ctx.min_samples_leaf;
        if right_ok && best.worth(ctx, n_left, &left) {
            best.offer(ctx, &left, i as f64, n_left);
        }
    }
    clear(&mut s.category_table, &bins);
    let mut cut = best.cut()?;
    let k = cut.threshold as usize + 1;
    cut.missing = write_set(s, &bins, order[..k].iter().copied(), (cut.n_left?, n));
    Some(cut)
}

/// The node's categories (with NaN as `bins.nan_code`) in the order of their values (see
/// the module docs), ties by code.
fn order_categories<C: Criterion>(
    table: &[f64],
    bins: &CategoryBins,
    ctx: &NodeCtx<'_, C>,
) -> Vec<u32> {
    let stride = bins.stride;
    let width = (stride - 2).max(1);
    let mut values = vec![0.0; bins.present.len() * width];
    for (v, &c) in values.chunks_mut(width).zip(&bins.present) {
        ctx.crit.value(
            &table[c as usize * stride + 1..(c as usize + 1) * stride],
            v,
        );
    }
    let keys: Vec<f64> = match width {
        1 => values,
        2 => values.chunks(2).map(|v| v[1] - v[0]).collect(),
        _ => {
            let weights: Vec<f64> = bins
                .present
                .iter()
                .map(|&c| table[c as usize * stride + 1])
                .collect();
            principal_scores(&values, width, &weights)
        }
    };
    let mut order: Vec<(f64, u32)> = keys.into_iter().zip(bins.present.iter().copied()).collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    order.into_iter().map(|(_, c)| c).collect()
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
/// both sides have one.
pub(in crate::tree::split) fn random_categories<T: Feature, C: Criterion>(
    (xf, nan_bin): (&[T], bool),
    s: &mut SearchBufs<T>,
    ctx: &NodeCtx<'_, C>,
    rows: &NodeRows<'_, C::Y>,
    rng: &mut TreeRng,
) -> Option<Cut> {
    let bins = sum_categories((xf, nan_bin), s, ctx, rows)?;
    let m = bins.present.len();
    let mut goes = vec![false; m];
    loop {
        for g in goes.iter_mut() {
            *g = draw_left(rng);
        }
        let n_true = goes.iter().filter(|&&g| g).count();
        if n_true > 0 && n_true < m {
            break;
        }
    }
    let (stride, n) = (bins.stride, xf.len());
    let mut left = vec![0.0; stride - 1];
    let mut n_left = 0usize;
    for (&c, _) in bins.present.iter().zip(&goes).filter(|(_, &g)| g) {
        let bin = &s.category_table[c as usize * stride..(c as usize + 1) * stride];
        n_left += bin[0] as usize;
        for (l, b) in left.iter_mut().zip(&bin[1..]) {
            *l += b;
        }
    }
    clear(&mut s.category_table, &bins);
    if !ctx.admissible(n_left, n, &left) {
        return None;
    }
    let proxy = ctx.crit.proxy(ctx.total, &left);
    if !C::allows(proxy) {
        return None;
    }
    let chosen: Vec<u32> = bins
        .present
        .iter()
        .zip(&goes)
        .filter(|(_, &g)| g)
        .map(|(&c, _)| c)
        .collect();
    let missing = write_set(s, &bins, chosen.into_iter(), (n_left, n));
    Some(Cut {
        proxy,
        threshold: 0.0,
        n_left: Some(n_left),
        missing,
    })
}
