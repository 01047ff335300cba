//! The summing passes of [`super`]: rows added to the bins of their codes, one bin per
//! code, several per code in lanes, or several features at once.

use crate::data::Feature;
use crate::tree::criterion::{by_lanes, Criterion, LANES};

/// Adds rows (codes `xf`, targets `ys`, weights `ws`) to one feature's bins, the first of
/// which holds code `lo`. A bin is `stride` values: the weight and the proxy's sums
/// ([`Criterion::proxy_len`] slots), then the row count.
#[inline(always)]
pub(crate) fn add_rows<T: Feature, C: Criterion>(
    bins: &mut [f64],
    lo: usize,
    xf: &[T],
    ys: &[C::Y],
    ws: &[f64],
    crit: &C,
) {
    let stride = crit.proxy_len() + 1;
    for ((v, &y), &w) in xf.iter().zip(ys).zip(ws) {
        let b = (v.code() - lo) * stride;
        add_row::<C, false>(&mut bins[b..b + stride], y, w, crit);
    }
}

/// Adds one row (target `y`, weight `w`) to its bin `stats`: the weight, the criterion's
/// sums and the row count. With `UNIT` weights (all 1) the weight is left out: the caller
/// sets it from the count, the same number.
#[inline(always)]
pub(crate) fn add_row<C: Criterion, const UNIT: bool>(
    stats: &mut [f64],
    y: C::Y,
    w: f64,
    crit: &C,
) {
    let count = stats.len() - 1;
    if UNIT {
        crit.add_for_proxy(stats, y, 1.0);
    } else {
        stats[0] += w;
        crit.add_for_proxy(stats, y, w);
    }
    stats[count] += 1.0;
}

/// [`add_rows`] of `G` features at once, their codes `columns` read at `samples` as they
/// are summed (no gathered copy, no bounds pass), into their `bins`, one per code from code
/// 0, zeroed first. Each row's target and weight are read once for the `G` features, and
/// every bin still sums its rows in their order. Unit weights (`unit`) are counted rather
/// than summed: a bin's weight is set to its row count, the same number. Returns each
/// feature's lowest and highest code met (`samples` is not empty).
pub(crate) fn add_rows_at<T: Feature, C: Criterion, const G: usize>(
    mut bins: [&mut [f64]; G],
    columns: [&[T]; G],
    samples: &[u32],
    (ys, ws, unit): (&[C::Y], &[f64], bool),
    crit: &C,
) -> [(usize, usize); G] {
    let stride = crit.proxy_len() + 1;
    for b in bins.iter_mut() {
        b.fill(0.0);
    }
    match unit {
        true => add_rows_at_as::<T, C, G, true>(&mut bins, &columns, samples, (ys, ws), crit),
        false => add_rows_at_as::<T, C, G, false>(&mut bins, &columns, samples, (ys, ws), crit),
    }
    if unit {
        for stats in bins.iter_mut().flat_map(|b| b.chunks_exact_mut(stride)) {
            stats[0] = stats[stride - 1];
        }
    }
    bins.map(|b| {
        let met = |stats: &[f64]| stats[stride - 1] > 0.0;
        let lo = b.chunks_exact(stride).position(met).unwrap_or(0);
        let hi = b.chunks_exact(stride).rposition(met).unwrap_or(0);
        (lo, hi)
    })
}

/// The summing pass of [`add_rows_at`], weights left out with `UNIT`.
#[inline(always)]
fn add_rows_at_as<T: Feature, C: Criterion, const G: usize, const UNIT: bool>(
    bins: &mut [&mut [f64]; G],
    columns: &[&[T]; G],
    samples: &[u32],
    (ys, ws): (&[C::Y], &[f64]),
    crit: &C,
) {
    let stride = crit.proxy_len() + 1;
    for ((&i, &y), &w) in samples.iter().zip(ys).zip(ws) {
        for (b, column) in bins.iter_mut().zip(columns) {
            let at = column[i as usize].code() * stride;
            add_row::<C, UNIT>(&mut b[at..at + stride], y, w, crit);
        }
    }
}

/// [`add_rows`] of codes between `lo` and `lo + 63`, from the first bin, returning the
/// bitmap of the codes met (bit `c - lo` for code `c`). Without `COUNTED`, only the
/// criterion's sums are added: no weight, no row count (see
/// [`scan_occupied`](crate::tree::split::scan::bins::scan_occupied)).
#[inline(always)]
pub(super) fn add_rows_marked<T: Feature, C: Criterion, const COUNTED: bool>(
    bins: &mut [f64],
    lo: usize,
    xf: &[T],
    ys: &[C::Y],
    ws: &[f64],
    crit: &C,
) -> u64 {
    let stride = crit.proxy_len() + 1;
    let mut bits = 0u64;
    for ((v, &y), &w) in xf.iter().zip(ys).zip(ws) {
        let c = v.code();
        bits |= 1 << (c - lo);
        let stats = &mut bins[c * stride..(c + 1) * stride];
        match COUNTED {
            true => add_row::<C, false>(stats, y, w, crit),
            false => crit.add_for_proxy(stats, y, w),
        }
    }
    bits
}

/// Rows per occupied code from which [`scan_occupied`](crate::tree::split::scan::bins::scan_occupied) sums whole
/// sums in lanes: below it, merging the lanes of every code costs more than the waits it
/// saves.
pub(super) const LANED_ROWS_PER_CODE: usize = 4;

/// [`add_rows`] of whole sums (exact in any order), the codes between `lo` and `lo +
/// bins.len() / stride - 1`: through [`LANES`] bins per code in `table` (zero between
/// calls, left zero) when the criterion allows it and the rows are several per code, as
/// [`scan_occupied`](crate::tree::split::scan::bins::scan_occupied) sums them, then merged into `bins`. With
/// `unit` weights (all 1) the lanes count the rows only, and the count is the weight.
pub(crate) fn add_whole_rows<T: Feature, C: Criterion>(
    bins: &mut [f64],
    lo: usize,
    table: &mut Vec<f64>,
    xf: &[T],
    (ys, ws, unit): (&[C::Y], &[f64], bool),
    crit: &C,
) {
    let stride = crit.proxy_len() + 1;
    let n_codes = bins.len() / stride;
    if !C::LANED_BINS || ys.len() < LANED_ROWS_PER_CODE * n_codes {
        add_rows(bins, lo, xf, ys, ws, crit);
        return;
    }
    let size = n_codes * LANES * stride;
    if table.len() < size {
        table.resize(size, 0.0);
    }
    let table = &mut table[..size];
    match unit {
        true => add_rows_laned::<T, C, true>(table, lo, xf, ys, ws, crit),
        false => add_rows_laned::<T, C, false>(table, lo, xf, ys, ws, crit),
    }
    let lanes_of_codes = table.chunks_exact_mut(LANES * stride);
    for (code, lanes) in bins.chunks_exact_mut(stride).zip(lanes_of_codes) {
        for stats in lanes.chunks_exact_mut(stride) {
            if unit {
                code[0] += stats[stride - 1];
            }
            for (b, h) in code.iter_mut().zip(stats.iter_mut()) {
                *b += *h;
                *h = 0.0;
            }
        }
    }
}

/// [`add_rows`] into [`LANES`] bins per code: row `j` into bin `(code - lo) · LANES + j %
/// LANES`; with `UNIT` weights (all 1), the weights are left out (their sum is the count).
#[inline(always)]
pub(super) fn add_rows_laned<T: Feature, C: Criterion, const UNIT: bool>(
    bins: &mut [f64],
    lo: usize,
    xf: &[T],
    ys: &[C::Y],
    ws: &[f64],
    crit: &C,
) {
    let stride = crit.proxy_len() + 1;
    let xf = &xf[..ys.len()];
    by_lanes(ys, ws, |lane, j, y, w| {
        let b = ((xf[j].code() - lo) * LANES + lane) * stride;
        add_row::<C, UNIT>(&mut bins[b..b + stride], y, w, crit);
    });
}
