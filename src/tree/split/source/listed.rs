//! The search of the nodes of a listed subtree ([`crate::tree::split::state::code_lists`]): every candidate's
//! rows read, in code order, from its list, with the cuts of the gathered histogram search,
//! or of the exact search when the lists hold lossless codes.
//!
//! The exact search sums the rows one by one in list order, which is its sorted scan's
//! (value, position) order, and cuts at the mid-points of the levels: the same sums, cuts
//! and thresholds as the gathered search, bit for bit.
//!
//! Stable partitions keep local indices in the nodes' position order, so a search here
//! sums each bin's rows in the order the gathered search would. Nodes with fewer rows
//! than bins are summed row by row in code order (cheaper than bin by bin), which differs
//! from the gathered search's bins by rounding only: counts and integer weights add up
//! exactly, so classification grows the same tree either way, bit for bit.

use crate::data::midpoint;
use crate::data::set_len;
use crate::data::{Feature, Levels, NAN_CODE};
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;
use crate::tree::split::draw::{draw_split, CandidateSource, NodeDraw};
use crate::tree::split::read::partition::{partition_rows, stable_partition};
use crate::tree::split::read::side::{category_left, category_value};
use crate::tree::split::scan::bins::{add_row, N_CODES};
use crate::tree::split::scan::categories::best_of_codes;
use crate::tree::split::scan::nan_bins::{self, nan_in_node};
use crate::tree::split::source::Node;
use crate::tree::split::state::code_lists::{scan_list, search_rows, CodeLists, ListItem};
use crate::tree::split::CATEGORY_SET;
use crate::tree::split::{with_left_sums, ChosenSplit, Cut, NodeCtx, NodeRows, SplitBufs};
use crate::tree::Missing;
use std::ops::Range;

/// A node of the listed subtree (at `start` in the sample buffer), its candidates scored
/// from the lists.
struct Listed<'a, 'r, T: Feature, C: Criterion, I> {
    lists: &'a mut CodeLists<T, C::Y, I>,
    ctx: &'a NodeCtx<'a, C>,
    s: &'a mut SplitBufs<T>,
    rows: &'a mut NodeRows<'r, C::Y>,
    start: usize,
    /// The node's rows.
    n: usize,
    /// The fewest rows a child needs for its lists to be read: the fewest a node needs to
    /// be split, or more when nodes of two to four rows are split without lists
    /// ([`crate::tree::split::source::pair`], [`crate::tree::split::source::few`]).
    split_rows: usize,
    /// Per feature, whether code [`NAN_CODE`] is its missing-values bin (None: no feature's).
    nan: Option<&'a [bool]>,
    /// The lossless codes or ranks the lists hold, for the exact search (None: the
    /// histogram search's bin codes).
    exact: Option<&'a Levels>,
    /// Per feature, whether it is categorical (None: none is), and whether the last
    /// candidate searched was.
    categorical: Option<&'a [bool]>,
    searched_categorical: bool,
}

impl<T: Feature, C: Criterion, I: ListItem> Listed<'_, '_, T, C, I> {
    fn is_categorical(&self, f: u32) -> bool {
        self.categorical.is_some_and(|c| c[f as usize])
    }

    /// [`feature_bounds`] of feature `f`.
    fn bounds_of(&self, items: &[I], f: u32) -> Option<(usize, usize, usize)> {
        let flag = |m: Option<&[bool]>| m.is_some_and(|m| m[f as usize]);
        feature_bounds(items, flag(self.nan), flag(self.categorical))
    }
}

/// [`list_bounds`] of a feature (`nan`: its code [`NAN_CODE`] is the missing-values bin),
/// whose every code, the missing-values bin's too, is a category when `categorical`.
#[inline(always)]
fn feature_bounds<I: ListItem>(
    items: &[I],
    nan: bool,
    categorical: bool,
) -> Option<(usize, usize, usize)> {
    if categorical {
        let (lo, hi) = (items[0].code(), items[items.len() - 1].code());
        return (hi > lo).then_some((lo, hi, items.len()));
    }
    list_bounds(items, nan)
}

impl<T: Feature, C: Criterion, I: ListItem> CandidateSource for Listed<'_, '_, T, C, I> {
    /// Where the candidate's rows start in the lists, its first and last non-missing codes,
    /// and its rows that are not missing (the others end its list).
    type Bounds = (usize, usize, usize, usize);

    /// The batches of the gathered search, so that a constant feature is met at the same
    /// point of the draws.
    type Value = T;

    #[inline(always)]
    fn node_rows(&self) -> usize {
        self.n
    }

    #[inline(always)]
    fn bounds(&mut self, _k: usize, f: u32) -> Option<Self::Bounds> {
        let range = self.lists.list(f, self.start, self.n);
        let items = &self.lists.lists[range.clone()];
        let (lo, hi, present) = self.bounds_of(items, f)?;
        Some((range.start, lo, hi, present))
    }

    #[inline(always)]
    fn search(
        &mut self,
        _k: usize,
        f: u32,
        (at, lo, hi, present): Self::Bounds,
        bar: f64,
        _rng: &mut TreeRng,
    ) -> Option<Cut> {
        self.searched_categorical = self.is_categorical(f);
        let lists = &mut *self.lists;
        let items = &lists.lists[at..at + self.n];
        if self.searched_categorical {
            let (ys, ws) = (&lists.ys[..], &lists.ws[..]);
            let rows = items
                .iter()
                .map(|it| (it.code(), ys[it.local()], ws[it.local()]));
            let nan = self.nan.is_some_and(|m| m[f as usize]);
            let b = &mut self.s.search.categories;
            return best_of_codes(rows, (lo, hi, nan), b, self.ctx, self.n, bar);
        }
        let constrained = self.ctx.for_feature(f);
        let ctx = constrained.as_ref().unwrap_or(self.ctx);
        if present < self.n {
            let (table, left) = (&mut self.s.search.bins, &mut self.s.search.left[..]);
            let (ys, ws) = (&lists.ys[..], &lists.ws[..]);
            return search_missing(items, (lo, hi), ys, ws, table, left, ctx, bar);
        }
        let (ys, ws) = (&lists.ys[..], &lists.ws[..]);
        match self.exact {
            Some(levels) => {
                let values = I::levels(levels, f as usize);
                let cut = |a: usize, b: usize| midpoint(values[a], values[b]);
                search_rows(items, ys, ws, &mut self.s.search.left, ctx, bar, cut)
            }
            None => {
                set_len(&mut lists.run, self.s.search.left.len(), 0.0);
                let sums = (&mut self.s.search.left[..], &mut lists.run[..]);
                // The histogram search's threshold is the last code on the left.
                let by_row = items.len() < hi - lo + 1;
                search(items, by_row, ys, ws, sums, ctx, bar, |a, _| a as f64)
            }
        }
    }

    #[inline(always)]
    fn new_best(&mut self, _k: usize, _cut: &Cut) {
        if self.searched_categorical {
            let s = &mut *self.s;
            s.best_categories.clone_from(&s.search.categories.left);
        }
    }

    /// Applies the split to the rows, and to every list unless neither child reaches
    /// `split_rows` (no list of a leaf, or of a node of two rows split from its codes, is
    /// read): the children's lists are written into the other copy ([`ListItem::COPIES`]).
    fn apply(&mut self, feature: u32, cut: Cut, unsettled: &[u32]) -> ChosenSplit {
        let (n, start) = (self.n, self.start);
        let n_left = cut.n_left.expect("histogram cuts count their rows");
        let flags = (self.nan, self.categorical);
        let flag = |m: Option<&[bool]>, f: u32| m.is_some_and(|m| m[f as usize]);
        let constant = |items: &[I], f: u32| {
            feature_bounds(items, flag(flags.0, f), flag(flags.1, f)).is_none()
        };
        let lists = &mut *self.lists;
        let (len, off) = (lists.end - lists.start, start - lists.start);
        let CodeLists {
            lists: all,
            slot,
            copy,
            locals,
            goes_left,
            ..
        } = lists;
        // The node's lists are in copy `from`, its children's go to copy `to`.
        let (from, copy_len) = (copy[off] as usize, all.len() / I::COPIES);
        let to = (from + 1) % I::COPIES;
        let range = |f: u32, c: usize| {
            let s = c * copy_len + slot[f as usize] as usize * len + off;
            s..s + n
        };
        set_len(goes_left, len, 0);
        let categorical = flag(flags.1, feature);
        if categorical {
            // The codes of the best set go left, the missing-values bin to the cut's side.
            let (set, ml) = (&self.s.best_categories, cut.missing == Missing::Left);
            let nan_bin = flag(flags.0, feature);
            for it in &all[range(feature, from)] {
                let v = category_value(it.code() as u8, nan_bin);
                goes_left[it.local()] = u8::from(category_left(v, set, ml));
            }
        } else if cut.missing == Missing::Unseen {
            // The best candidate's list is already split: its first n_left rows go left.
            for (i, it) in all[range(feature, from)].iter().enumerate() {
                goes_left[it.local()] = u8::from(i < n_left);
            }
        } else {
            // Its missing-values bin ends the list and goes to the cut's side (the list is
            // then partitioned with the others').
            let (t, ml) = (cut.threshold, cut.missing == Missing::Left);
            for it in &all[range(feature, from)] {
                let v = nan_bins::code_value(it.code() as u8);
                goes_left[it.local()] = u8::from(crate::tree::goes_left(v, t, ml));
            }
        }
        let goes_left = &goes_left[..];
        let buf = &mut self.s.partition_buf;
        let node_locals = &mut locals[off..off + n];
        let node_locals_now = &*node_locals;
        partition_rows(Some(n_left), self.rows, buf, self.ctx.unit_weights, |r| {
            goes_left[node_locals_now[r] as usize] != 0
        });
        let split = ChosenSplit {
            feature,
            threshold: if categorical {
                CATEGORY_SET
            } else {
                cut.threshold
            },
            n_left,
            missing: cut.missing,
        };
        if n_left.max(n - n_left) < self.split_rows {
            return split;
        }
        stable_partition(node_locals, buf, n_left, |_, w| goes_left[w as usize] != 0);
        copy[off] = to as u8;
        copy[off + n_left] = to as u8;
        // The best candidate's list is split already unless NaN rows, which end it, go left
        // (a categorical one's sides are sets of codes, not a prefix).
        let split_already = cut.missing != Missing::Left && !categorical;
        // The features found constant here too: best-first growth, whose nodes inherit no
        // constant prefix, reads their lists again.
        for &f in unsettled {
            // A list split already or constant in the node goes to the children as it is
            // (a constant one's children's ranges may then hold other rows of its one code).
            let (src, dst) = (range(f, from), range(f, to));
            let as_is = f == feature && split_already;
            let as_is = as_is || constant(&all[src.clone()], f);
            if I::COPIES == 1 {
                if !as_is {
                    stable_partition(&mut all[src], buf, n_left, |_, w| {
                        goes_left[I::from_word(w).local()] != 0
                    });
                }
                continue;
            }
            let (src, dst) = read_write(all, src, dst);
            match as_is {
                true => dst.copy_from_slice(src),
                false => partition_into(src, dst, n_left, goes_left),
            }
        }
        split
    }
}

/// The disjoint ranges `src` of `all`, to read, and `dst`, to write.
fn read_write<I>(all: &mut [I], src: Range<usize>, dst: Range<usize>) -> (&[I], &mut [I]) {
    if src.start < dst.start {
        let (below, above) = all.split_at_mut(dst.start);
        (&below[src], &mut above[..dst.len()])
    } else {
        let (below, above) = all.split_at_mut(src.start);
        (&above[..src.len()], &mut below[dst])
    }
}

/// Writes the `items` of a node's list into `dst`, the `n_left` whose local index
/// `goes_left` first, both sides in their order: one store per row, to the next slot of
/// its side (branch-free, as a row's side is unpredictable).
#[inline(never)]
fn partition_into<I: ListItem>(items: &[I], dst: &mut [I], n_left: usize, goes_left: &[u8]) {
    let (mut l, mut r) = (0, n_left);
    for &it in items {
        let left = goes_left[it.local()] != 0;
        dst[if left { l } else { r }] = it;
        l += usize::from(left);
        r += usize::from(!left);
    }
}

/// A node's `items` of one list: its first and last non-missing codes and its rows that
/// are not missing (with `nan`, the missing ones end the list), or None when the feature is
/// constant in the node.
#[inline(always)]
fn list_bounds<I: ListItem>(items: &[I], nan: bool) -> Option<(usize, usize, usize)> {
    let n = items.len();
    let (lo, hi) = (items[0].code(), items[n - 1].code());
    let (lo, hi, present) = match nan {
        true => {
            let present = items.partition_point(|it| it.code() < usize::from(NAN_CODE));
            let top = || present.checked_sub(1).map(|i| items[i].code());
            let (lo, hi, _) = nan_in_node(lo, hi, top);
            (lo, hi, present)
        }
        false => (lo, hi, n),
    };
    (hi > lo).then_some((lo, hi, present))
}

/// [`crate::tree::split::find_split`] for a node of the listed subtree (at `start` in the sample
/// buffer) with the histogram search: the same draws, the same cuts, read from the lists.
/// Applies the split to the rows, and to the lists (see [`Listed::apply`]).
pub(crate) fn find_split_listed<T: Feature, C: Criterion, I: ListItem>(
    lists: &mut CodeLists<T, C::Y, I>,
    node: Node<'_, '_, T, C>,
    start: usize,
    draw: NodeDraw<'_>,
    split_rows: usize,
    (nan, categorical): (Option<&[bool]>, Option<&[bool]>),
    exact: Option<&Levels>,
) -> (Option<ChosenSplit>, usize) {
    let Node { ctx, s, rows } = node;
    let mut source = Listed {
        lists,
        ctx,
        s,
        n: rows.samples.len(),
        rows,
        start,
        split_rows,
        nan,
        exact,
        categorical,
        searched_categorical: false,
    };
    draw_split(&mut source, draw)
}

/// The search of one candidate's listed rows: summed row by row into the left side
/// (`by_row`: the exact search, and the histogram search's nodes with fewer rows than
/// bins) or bin by bin (as the gathered histogram search does), the cut between codes `a`
/// and `b` at threshold `cut(a, b)`. The rows of a bin are consecutive here, so one bin's
/// sums (`run`) stand for the whole histogram.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn search<C: Criterion, I: ListItem>(
    items: &[I],
    by_row: bool,
    ys: &[C::Y],
    ws: &[f64],
    sums: (&mut [f64], &mut [f64]),
    ctx: &NodeCtx<'_, C>,
    bar: f64,
    cut: impl Fn(usize, usize) -> f64,
) -> Option<Cut> {
    // The left side's sums and the bin's (`run`): local arrays when few.
    let (left, run) = sums;
    with_left_sums!(ctx.crit, left, run => match by_row {
        true => scan_list::<C, I, false>(items, ys, ws, (left, run), ctx, bar, cut),
        false => scan_list::<C, I, true>(items, ys, ws, (left, run), ctx, bar, cut),
    })
}

/// The search of a candidate whose listed rows end with the missing-values bin, `lo..=hi`
/// the codes of the others: the rows summed by code into `table` (zero between calls, and
/// left so), each bin's in list order, then scanned by [`nan_bins::scan_missing`].
#[allow(clippy::too_many_arguments)]
fn search_missing<C: Criterion, I: ListItem>(
    items: &[I],
    (lo, hi): (usize, usize),
    ys: &[C::Y],
    ws: &[f64],
    table: &mut Vec<f64>,
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
) -> Option<Cut> {
    let left = &mut left[..ctx.crit.proxy_len()];
    let stride = left.len() + 1;
    if table.len() < N_CODES * stride {
        table.resize(N_CODES * stride, 0.0);
    }
    for it in items {
        let (y, w) = (ys[it.local()], ws[it.local()]);
        let stats = &mut table[it.code() * stride..(it.code() + 1) * stride];
        add_row::<C, false>(stats, y, w, ctx.crit);
    }
    let nan_at = usize::from(NAN_CODE) * stride;
    let (bins, nan) = table.split_at(nan_at);
    let bins = &bins[lo * stride..(hi + 1) * stride];
    let cut = nan_bins::scan_missing(bins, lo, &nan[..stride], items.len(), left, ctx, bar);
    table[lo * stride..(hi + 1) * stride].fill(0.0);
    table[nan_at..nan_at + stride].fill(0.0);
    cut
}

#[cfg(test)]
mod tests;
