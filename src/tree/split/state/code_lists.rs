//! Small subtrees grown from code-ordered row lists: the histogram search's (bin codes), and
//! the exact search's when every column has lossless codes and the sums are not whole.
//!
//! Once a node has at most [`LIST_ROWS`] rows, its whole subtree is split from lists: for
//! every feature that can still split it, the node's rows in (code, position) order, each
//! row one `u32` (code above its *local* index, its position in the subtree root). A split
//! partitions every list stably, so each descendant's rows stay a contiguous, sorted range
//! of each list, and no node below needs a gather or a sort. Before lists, gathering and
//! sorting the codes of the nodes smaller than the bin count, for every candidate, were
//! most of a fully grown regression tree (K = p, leaves of one row).
//!
//! A booster's exact search of a table not all of byte codes lists whole trees by their
//! ranks ([`Ranks`]: every column sorted once per fit), eight bytes a row
//! ([`RankItem`]): a tree's root lists are read off those, and no node sorts.
//!
//! Lists of byte codes have two copies, and a node's lists are in one of them: a split
//! writes its children's lists into the other, each over the node's range (left child
//! first), one store per row and no copy back. A node's range in either copy is only ever
//! written by its ancestors (before it is searched) and its descendants (after), so the
//! copy a node reads is intact in any growth order. Rank lists, a whole tree's, are
//! partitioned in place in one copy, as memory is the limit there.
//!
//! The nodes of a listed subtree are split by [`crate::tree::split::source::listed`], which reads these lists.
//! A node's rows are in sample order (partitions are stable), so a list's (code, local
//! index) order is the (code, position) order of the exact search's sorted scan: its rows
//! are added in the same order, and the sums round the same.

use crate::data::set_len;
use crate::data::sort::sort_packed;
use crate::data::{Feature, Levels, Matrix, Packed, Ranks};
use crate::tree::criterion::Criterion;
use crate::tree::split::read::gather::gather;
use crate::tree::split::read::partition::Word;
use crate::tree::split::scan::rows::scan_rows;
use crate::tree::split::{with_left_sums, Cut, NodeCtx, NodeRows};

/// Rows of the largest node whose subtree is grown from lists (a broad optimum of the wall
/// time, see BENCHMARKS.md). Larger nodes gather their candidates into histograms.
const LIST_ROWS: usize = 1024;

/// [`LIST_ROWS`] of best-first growth (the booster's), whose frontier interleaves subtrees:
/// a subtree's lists are rebuilt whenever another's replaced them, so smaller nodes already
/// pay for bins (see BENCHMARKS.md, gradient boosting).
const BEST_FIRST_LIST_ROWS: usize = 256;

/// Each copy of the lists of a subtree takes at most this many bytes (4 per row and
/// feature), so wide data lists smaller subtrees.
const LIST_BYTES: usize = 8 << 20;

/// Rows of the largest node whose subtree is grown from lists, with `n_features` features,
/// growing depth first or (`best_first`) best first.
pub(crate) fn list_rows(n_features: usize, best_first: bool) -> usize {
    let rows = match best_first {
        true => BEST_FIRST_LIST_ROWS,
        false => LIST_ROWS,
    };
    rows.min(LIST_BYTES / (4 * n_features.max(1)))
}

/// Whether lists pay for a fit drawing `max_features` candidates among `n_features`: every
/// split partitions the list of every feature, so most of them must be read.
pub(crate) fn lists_pay(max_features: usize, n_features: usize) -> bool {
    2 * max_features >= n_features
}

/// One row of a list: its code above its local index (its position in the subtree root).
pub(crate) trait ListItem: Copy + Ord + Word + Packed {
    /// The copies of the lists (1 or 2, see the module's doc).
    const COPIES: usize;
    fn new(code: usize, local: usize) -> Self;
    fn code(self) -> usize;
    fn local(self) -> usize;
    /// Feature `f`'s increasing levels, which the codes of its list index, among `levels`
    /// (the exact search's lists: lossless codes or ranks).
    fn levels(levels: &Levels, f: usize) -> &[f64];
}

/// A row of a list of byte codes (bin codes or lossless codes): code above a 24-bit local
/// index, four bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Item(u32);

const LOCAL_BITS: u32 = 24;

impl ListItem for Item {
    const COPIES: usize = 2;
    #[inline(always)]
    fn new(code: usize, local: usize) -> Item {
        Item((code as u32) << LOCAL_BITS | local as u32)
    }
    #[inline(always)]
    fn code(self) -> usize {
        (self.0 >> LOCAL_BITS) as usize
    }
    #[inline(always)]
    fn local(self) -> usize {
        (self.0 & ((1 << LOCAL_BITS) - 1)) as usize
    }
    fn levels(levels: &Levels, f: usize) -> &[f64] {
        levels.column(f).map_or(&[][..], |c| &c.values)
    }
}

impl Packed for Item {
    const KEY_BYTES: usize = 1;
    #[inline(always)]
    fn key_byte(self, _b: usize) -> usize {
        self.code()
    }
    #[inline(always)]
    fn position(self) -> u32 {
        self.local() as u32
    }
}

impl Word for Item {
    #[inline(always)]
    fn to_word(self) -> u64 {
        u64::from(self.0)
    }
    #[inline(always)]
    fn from_word(w: u64) -> Self {
        Item(w as u32)
    }
}

/// A row of a list of ranks ([`Ranks`]): rank above a 32-bit local index, eight bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct RankItem(u64);

impl ListItem for RankItem {
    const COPIES: usize = 1;
    #[inline(always)]
    fn new(code: usize, local: usize) -> RankItem {
        RankItem((code as u64) << 32 | local as u64)
    }
    #[inline(always)]
    fn code(self) -> usize {
        (self.0 >> 32) as usize
    }
    #[inline(always)]
    fn local(self) -> usize {
        self.0 as u32 as usize
    }
    fn levels(levels: &Levels, f: usize) -> &[f64] {
        levels.ranks().map_or(&[][..], |r| &r.column(f).values)
    }
}

impl Packed for RankItem {
    const KEY_BYTES: usize = 4;
    #[inline(always)]
    fn key_byte(self, b: usize) -> usize {
        (self.0 >> (32 + 8 * b)) as usize & 255
    }
    #[inline(always)]
    fn position(self) -> u32 {
        self.0 as u32
    }
}

impl Word for RankItem {
    #[inline(always)]
    fn to_word(self) -> u64 {
        self.0
    }
    #[inline(always)]
    fn from_word(w: u64) -> Self {
        RankItem(w)
    }
}

/// The lists of the subtree being grown, and the buffers reused from subtree to subtree.
pub(crate) struct CodeLists<T, Y, I = Item> {
    /// The subtree root's rows `start..end` in the tree's sample buffer (empty: none).
    pub(in crate::tree::split) start: usize,
    pub(in crate::tree::split) end: usize,
    /// The list of feature `f` in copy `c` is `lists[h * c + s * n..][..n]`, with
    /// `s = slot[f]`, `n = end - start` and `h` the length of a copy.
    pub(in crate::tree::split) lists: Vec<I>,
    pub(in crate::tree::split) slot: Vec<u32>,
    /// The copy that holds the lists of the node starting at each local offset (the latest
    /// node there to be split into, the others above it being split already).
    pub(in crate::tree::split) copy: Vec<u8>,
    /// The local index of each row, aligned with the node rows and partitioned with them.
    pub(in crate::tree::split) locals: Vec<u32>,
    /// Targets and weights by local index.
    pub(in crate::tree::split) ys: Vec<Y>,
    pub(in crate::tree::split) ws: Vec<f64>,
    /// 1 for each local index that goes left in the split being applied.
    pub(in crate::tree::split) goes_left: Vec<u8>,
    /// The sums of the bin being scanned.
    pub(in crate::tree::split) run: Vec<f64>,
    column: Vec<T>,
    keys: Vec<I>,
    radix: Vec<I>,
    /// Per row of X, its local index in the subtree root (ranked lists only).
    local_of: Vec<u32>,
}

impl<T: Feature, Y: Word, I: ListItem> CodeLists<T, Y, I> {
    /// Empty: buffers are sized by the first subtree listed, so other splitters pay nothing.
    pub fn new() -> Self {
        CodeLists {
            start: 0,
            end: 0,
            lists: Vec::new(),
            slot: Vec::new(),
            copy: Vec::new(),
            locals: Vec::new(),
            ys: Vec::new(),
            ws: Vec::new(),
            goes_left: Vec::new(),
            run: Vec::new(),
            column: Vec::new(),
            keys: Vec::new(),
            radix: Vec::new(),
            local_of: Vec::new(),
        }
    }

    /// Whether the rows `start..end` are a node of the listed subtree. Depth-first growth
    /// splits every node of a subtree before any row outside it, so a node inside the range
    /// is always a descendant whose lists are up to date.
    pub fn covers(&self, start: usize, end: usize) -> bool {
        self.start <= start && end <= self.end && start < end
    }

    /// Lists the node `rows` (at `start` in the sample buffer) for the features `varying`,
    /// by their codes: X's (binned X), or with `lossless` their lossless codes, which every
    /// feature of `varying` then has.
    pub fn build(
        &mut self,
        x: &Matrix<'_, T>,
        lossless: Option<&Levels>,
        rows: &NodeRows<'_, Y>,
        start: usize,
        varying: &[u32],
    ) {
        let n = rows.samples.len();
        debug_assert!(n < 1 << LOCAL_BITS);
        self.begin(x.n_cols(), rows, start, varying.len());
        for (s, (&f, list)) in varying
            .iter()
            .zip(self.lists.chunks_exact_mut(n))
            .enumerate()
        {
            self.slot[f as usize] = s as u32;
            self.keys.clear();
            match lossless {
                None => {
                    gather(x, f as usize, rows.samples, &mut self.column);
                    let items = self.column.iter().enumerate();
                    self.keys.extend(items.map(|(k, v)| I::new(v.code(), k)));
                }
                Some(levels) => {
                    let codes = levels.column(f as usize).map_or(&[][..], |c| &c.codes);
                    let items = rows.samples.iter().enumerate();
                    let code = |i: u32| usize::from(codes[i as usize]);
                    self.keys.extend(items.map(|(k, &i)| I::new(code(i), k)));
                }
            }
            sort_packed(&mut self.keys, &mut self.radix);
            list.copy_from_slice(&self.keys);
        }
    }

    /// Sizes the lists of the node `rows` (at `start`) for `n_listed` features of X's
    /// `n_cols`, and copies its targets and weights by local index.
    fn begin(&mut self, n_cols: usize, rows: &NodeRows<'_, Y>, start: usize, n_listed: usize) {
        let n = rows.samples.len();
        self.start = start;
        self.end = start + n;
        set_len(&mut self.lists, I::COPIES * n_listed * n, I::new(0, 0));
        set_len(&mut self.slot, n_cols, u32::MAX);
        set_len(&mut self.copy, n, 0);
        self.copy[0] = 0;
        self.locals.clear();
        self.locals.extend(0..n as u32);
        self.ys.clear();
        self.ys.extend_from_slice(rows.ys);
        self.ws.clear();
        self.ws.extend_from_slice(rows.ws);
    }

    /// The rows of the node at `start..start + n`, in feature `f`'s list.
    pub(in crate::tree::split) fn list(
        &self,
        f: u32,
        start: usize,
        n: usize,
    ) -> std::ops::Range<usize> {
        let off = start - self.start;
        let copy = self.copy[off] as usize * self.lists.len() / I::COPIES;
        let s = copy + self.slot[f as usize] as usize * (self.end - self.start) + off;
        s..s + n
    }
}

impl<T: Feature, Y: Word> CodeLists<T, Y, RankItem> {
    /// Lists the node `rows` (at `start` in the sample buffer; distinct rows, increasing,
    /// as a booster's are) for the features `varying`, by their ranks: each list read off
    /// the column's rows sorted once per fit, keeping the node's rows. Rows in increasing
    /// order get increasing local indices, so (rank, row) order is (rank, local) order.
    pub fn build_ranked(
        &mut self,
        ranks: &Ranks,
        n_rows: usize,
        rows: &NodeRows<'_, Y>,
        start: usize,
        varying: &[u32],
    ) {
        let n = rows.samples.len();
        debug_assert!(rows.samples.windows(2).all(|w| w[0] < w[1]));
        self.begin(ranks.n_cols(), rows, start, varying.len());
        // Every row of X: each list is its sorted rows, as they are.
        let every = n == n_rows;
        if !every {
            set_len(&mut self.local_of, n_rows, u32::MAX);
            self.local_of.fill(u32::MAX);
            for (k, &i) in rows.samples.iter().enumerate() {
                self.local_of[i as usize] = k as u32;
            }
        }
        for (s, (&f, list)) in varying
            .iter()
            .zip(self.lists.chunks_exact_mut(n))
            .enumerate()
        {
            self.slot[f as usize] = s as u32;
            let sorted = &ranks.column(f as usize).sorted;
            if every {
                for (item, &r) in list.iter_mut().zip(sorted) {
                    *item = RankItem(r);
                }
                continue;
            }
            let mut at = 0;
            for &r in sorted {
                let local = self.local_of[r as u32 as usize];
                if local != u32::MAX {
                    list[at] = RankItem(r & !0xffff_ffff | u64::from(local));
                    at += 1;
                }
            }
            debug_assert_eq!(at, n);
        }
    }
}

/// The exact search's scan of a list (row by row) of rows `items` in (code,
/// local index) order, their targets and weights `ys` and `ws` by local index, with the
/// left sums in `left` (or in registers).
#[inline(always)]
pub(in crate::tree::split) fn search_rows<C: Criterion, I: ListItem>(
    items: &[I],
    ys: &[C::Y],
    ws: &[f64],
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
    cut: impl Fn(usize, usize) -> f64,
) -> Option<Cut> {
    // Row by row, the bin's sums are never read.
    with_left_sums!(ctx.crit, left => {
        scan_list::<C, I, false>(items, ys, ws, (left, &mut []), ctx, bar, cut)
    })
}

/// The one row scan ([`scan_rows`]) over a list's rows `items`, in (code, local index)
/// order, summed `BY_BIN` or row by row.
#[inline(always)]
pub(in crate::tree::split) fn scan_list<C: Criterion, I: ListItem, const BY_BIN: bool>(
    items: &[I],
    ys: &[C::Y],
    ws: &[f64],
    sums: (&mut [f64], &mut [f64]),
    ctx: &NodeCtx<'_, C>,
    bar: f64,
    cut: impl Fn(usize, usize) -> f64,
) -> Option<Cut> {
    let n = items.len();
    let at = |i: usize| (items[i].code(), items[i].local());
    scan_rows::<usize, C, BY_BIN>(n, at, (ys, ws), sums, ctx, bar, cut)
}
