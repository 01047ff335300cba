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
//!   practice, not always the best. Compared with the node's other candidates, the cut
//!   gives up what `L` groups gain over one cut by chance ([`chance_gain`]): an ordered
//!   search over many levels finds a large decrease even on noise (Louppe 2014 §7.2).
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
pub(crate) use bufs::CategoryBufs;
use bufs::{CategoryBins, POOLED};
use order::{order_categories, pool_rare};

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
    pool_rare(table, bins, b);
    let pooled = std::mem::take(&mut b.pooled);
    let bin_of = |c: u32| match c {
        POOLED => &pooled[..],
        c => bins.bin(table, c),
    };
    order_categories(&bin_of, b, bins, ctx);
    let groups = b.order.len();
    let max_side = match b.guards.max_side {
        0 => groups,
        m => m,
    };
    let chance = chance_gain(groups, b.guards.penalty, ctx, n);
    let mut n_left = 0usize;
    let mut best = BestCut::above(bar + chance);
    for (i, &(_, c)) in b.order[..groups - 1].iter().enumerate() {
        let bin = bin_of(c);
        n_left += bins.count(bin) as usize;
        for (l, x) in b.sums.iter_mut().zip(bin) {
            *l += x;
        }
        let small_side = (i + 1).min(groups - 1 - i) <= max_side;
        let right_ok = n - n_left >= ctx.min_samples_leaf;
        if small_side && right_ok && best.worth(ctx, n_left, &b.sums) {
            best.offer(ctx, &b.sums, i as f64, n_left);
        }
    }
    b.pooled = pooled;
    let mut cut = best.cut()?;
    cut.proxy -= chance;
    start_set(b, bins, (cut.n_left?, n));
    let mut nan_left = false;
    for &(_, c) in &b.order[..cut.threshold as usize + 1] {
        match c {
            POOLED => b.rare.iter().for_each(|&r| {
                send_left(&mut b.left, bins, r);
            }),
            c => nan_left |= send_left(&mut b.left, bins, c),
        }
    }
    cut.missing = missing_side(b, bins, nan_left);
    Some(cut)
}

/// What the best cut of `groups` ordered groups of the node's `n` rows gains over one cut
/// of an ordered column by chance alone, in the proxy's units, times `penalty`
/// ([`CategoryGuards::penalty`](crate::params::CategoryGuards)): the
/// [`Criterion::ORDERED_SHARE`] of `L − 2` more groups' [`Criterion::independent_gain`],
/// scaled by the node's mean weight (bootstrap counts, sample weights).
fn chance_gain<C: Criterion>(groups: usize, penalty: f64, ctx: &NodeCtx<'_, C>, n: usize) -> f64 {
    if penalty == 0.0 || groups <= 2 || n == 0 {
        return 0.0;
    }
    let mean_weight = ctx.total[0] / n as f64;
    let per_group = C::ORDERED_SHARE * ctx.crit.independent_gain(ctx.total);
    penalty * (groups - 2) as f64 * per_group * mean_weight
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

mod bufs;
mod order;
#[cfg(test)]
mod tests;
