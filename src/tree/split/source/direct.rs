//! Extra-Trees nodes whose candidates are read straight from X.
//!
//! Most nodes of a fully grown tree are small: a third of the internal nodes of an
//! Extra-Trees regression tree have two rows. Gathering such a node's candidates into
//! columns (a batch of buffers resized and written, bounds kept per candidate) costs more
//! than the reads it saves, so the random-threshold search of a node of at most
//! [`DIRECT_ROWS`] rows reads a candidate's values at the node's rows from X itself: once
//! for its bounds, once for its cut's sums, and the best's once more to partition the
//! rows.
//!
//! Larger nodes of a narrow row-major X read X in place too, when they draw more than one
//! batch of candidates and their rows stay in the cache ([`reads_whole_rows`]). A row of
//! at most [`MAX_ROW_COLS`] values is one or two cache lines, so one pass takes every
//! column's bounds ([`row_bounds`]) where the gathers took a pass per batch of four; each
//! candidate's sums then read its values at the node's rows.
//!
//! The draws ([`draw_split`]), the threshold and the sums ([`random_cut`]) are those of the
//! gathered search, in the same order: the same trees, bit for bit.

use crate::data::widen;
use crate::data::{Feature, Matrix};
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;
use crate::tree::split::draw::MAX_BATCH;
use crate::tree::split::draw::{draw_split, CandidateSource, NodeDraw};
use crate::tree::split::read::gather::{row_bounds, MAX_ROW_COLS};
use crate::tree::split::read::partition::partition_rows_by_sample;
use crate::tree::split::rules::random::random_cut;
use crate::tree::split::source::Node;
use crate::tree::split::{ChosenSplit, Columns, Cut, NodeCtx, NodeRows, SplitBufs};
use crate::tree::{goes_left, Missing};

/// Rows of the largest node whose candidates are read straight from X (see
/// BENCHMARKS.md, real tables).
const DIRECT_ROWS: usize = 48;

/// The most bytes of X's rows a node may read whole ([`reads_whole_rows`]): its rows then
/// stay in the second-level cache between its passes (see BENCHMARKS.md, real tables).
const WHOLE_ROWS_BYTES: usize = 1 << 20;

/// Whether a node of the random-threshold search, drawing `max_features` candidates,
/// reads them from X: a node that is small, or [`reads_whole_rows`], of a dense X without
/// NaN, lossless codes, monotonic constraints, or a criterion of order statistics
/// (searched by [`crate::tree::split::scan::median`]).
#[inline(always)]
pub(in crate::tree::split) fn reads_directly<T: Feature, C: Criterion>(
    cols: Columns<'_, T>,
    ctx: &NodeCtx<'_, C>,
    rows: &NodeRows<'_, C::Y>,
    max_features: usize,
) -> bool {
    let (x, n) = (cols.x, rows.samples.len());
    let small = n <= DIRECT_ROWS && (x.row_major_data().is_some() || x.columns_are_slices());
    (small || reads_whole_rows(x, n, max_features))
        && cols.missing.is_none()
        && cols.levels.is_none()
        && ctx.mono.is_none()
        && ctx.crit.order_statistic(rows.ys).is_none()
}

/// Whether a node of `n` rows drawing `max_features` candidates takes their bounds from
/// X's rows read whole: X is row-major with at most [`MAX_ROW_COLS`] columns, the node's
/// rows fit in [`WHOLE_ROWS_BYTES`], and the gathers would pass over them more than once.
#[inline(always)]
fn reads_whole_rows<T: Feature>(x: &Matrix<'_, T>, n: usize, max_features: usize) -> bool {
    let row_bytes = x.n_cols() * std::mem::size_of::<T>();
    max_features > MAX_BATCH
        && x.n_cols() <= MAX_ROW_COLS
        && n * row_bytes <= WHOLE_ROWS_BYTES
        && x.row_major_data().is_some()
}

/// [`crate::tree::split::find_split`] of a node that [`reads_directly`], with the random-threshold
/// search: the best split found (already applied to `rows`) and the new length of the
/// constant prefix of `features`.
pub(in crate::tree::split) fn find_split_direct<T: Feature, C: Criterion>(
    x: &Matrix<'_, T>,
    node: Node<'_, '_, T, C>,
    draw: NodeDraw<'_>,
) -> (Option<ChosenSplit>, usize) {
    let Node { ctx, s, rows } = node;
    // A node above DIRECT_ROWS is here because `reads_whole_rows`.
    let whole = x
        .row_major_data()
        .filter(|_| rows.samples.len() > DIRECT_ROWS)
        .map(|data| row_bounds(data, x.n_cols(), rows.samples));
    let mut source = Direct {
        whole,
        rows_data: x.row_major_data(),
        x,
        ctx,
        s,
        rows,
    };
    draw_split(&mut source, draw)
}

/// A node's candidates, read from X at its rows.
struct Direct<'a, 'r, T: Feature, C: Criterion> {
    x: &'a Matrix<'a, T>,
    /// X's rows one after another, when it is row-major (else its columns are slices).
    rows_data: Option<&'a [T]>,
    /// Every column's (min, max) in the node, when its rows were read whole.
    whole: Option<([T; MAX_ROW_COLS], [T; MAX_ROW_COLS])>,
    ctx: &'a NodeCtx<'a, C>,
    s: &'a mut SplitBufs<T>,
    rows: &'a mut NodeRows<'r, C::Y>,
}

impl<'a, T: Feature, C: Criterion> Direct<'a, '_, T, C> {
    /// Feature `f` of X as a strided slice: `x[i, f]` is `base[i * stride]`.
    #[inline(always)]
    fn column(&self, f: u32) -> (&'a [T], usize) {
        match self.rows_data {
            Some(data) => (&data[f as usize..], self.x.n_cols()),
            None => (self.x.column(f as usize).unwrap_or_default(), 1),
        }
    }
}

impl<T: Feature, C: Criterion> CandidateSource for Direct<'_, '_, T, C> {
    /// The candidate's min and max in the node.
    type Bounds = (T, T);

    /// The gathered search's, so that the draws come in the same batches.
    type Value = T;

    #[inline(always)]
    fn node_rows(&self) -> usize {
        self.rows.samples.len()
    }

    #[inline(always)]
    fn bounds(&mut self, _k: usize, f: u32) -> Option<(T, T)> {
        if let Some((lo, hi)) = &self.whole {
            let (lo, hi) = (lo[f as usize], hi[f as usize]);
            return (hi > lo).then_some((lo, hi));
        }
        let (base, stride) = self.column(f);
        let samples = &*self.rows.samples;
        let first = base[samples[0] as usize * stride];
        let (mut lo, mut hi) = (first, first);
        for &i in &samples[1..] {
            widen(&mut lo, &mut hi, base[i as usize * stride]);
        }
        (hi > lo).then_some((lo, hi))
    }

    #[inline(always)]
    fn search(
        &mut self,
        _k: usize,
        f: u32,
        (lo, hi): (T, T),
        _bar: f64,
        rng: &mut TreeRng,
    ) -> Option<Cut> {
        let (base, stride) = self.column(f);
        let rows = &*self.rows;
        let value = |j: usize| base[rows.samples[j] as usize * stride].to_f64();
        let bounds = (lo.to_f64(), hi.to_f64());
        random_cut(value, &mut self.s.search, self.ctx, rows, bounds, rng)
    }

    fn apply(&mut self, feature: u32, cut: Cut, _unsettled: &[u32]) -> ChosenSplit {
        let (base, stride) = self.column(feature);
        let t = cut.threshold;
        let left = |i: u32| goes_left(base[i as usize * stride].to_f64(), t, false);
        let count = || self.rows.samples.iter().filter(|&&i| left(i)).count();
        let n_left = cut.n_left.unwrap_or_else(count);
        let (buf, unit) = (&mut self.s.partition_buf, self.ctx.unit_weights);
        partition_rows_by_sample(n_left, self.rows, buf, unit, left);
        ChosenSplit {
            feature,
            threshold: t,
            n_left,
            missing: Missing::Unseen,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::data::Layout;
    use crate::tree::criterion::{Gini, SquaredError};
    use crate::tree::split::source::direct::*;
    use crate::tree::split::source::gathered::draw_gathered;
    use crate::tree::split::RandomThreshold;

    /// Random small nodes (ties, signed zeros, constant columns, rows of X that are not
    /// the node's), in both layouts, and larger nodes of row-major X read whole, with and
    /// without weights, leaf sizes 1 to 3: the direct read draws, splits and partitions as
    /// the gathered search, bit for bit, and leaves the RNG and the feature order as it
    /// does.
    #[test]
    fn direct_reads_split_as_the_gathered_search() {
        let mut rng = TreeRng::new(11);
        for trial in 0..900 {
            let whole = trial % 3 == 2;
            let n_rows = 3 + rng.below(if whole { 170 } else { 70 });
            let n_cols = match whole {
                true => MAX_BATCH + 1 + rng.below(MAX_ROW_COLS - MAX_BATCH),
                false => 1 + rng.below(9),
            };
            let most = if whole {
                n_rows
            } else {
                n_rows.min(DIRECT_ROWS)
            };
            let n = 2 + rng.below(most - 1);
            let levels: Vec<usize> = (0..n_cols).map(|_| 1 + rng.below(6)).collect();
            let mut data = vec![0f32; n_rows * n_cols];
            for i in 0..n_rows {
                for (j, &k) in levels.iter().enumerate() {
                    data[i * n_cols + j] = match rng.below(k) {
                        0 if rng.below(2) == 0 => -0.0,
                        0 => 0.0,
                        level => (level as f32) * 0.75 - 1.0,
                    };
                }
            }
            let mut samples: Vec<u32> = (0..n_rows as u32).collect();
            for k in 0..n {
                samples.swap(k, k + rng.below(n_rows - k));
            }
            samples.truncate(n);
            samples.sort_unstable();
            let unit = trial % 2 == 0;
            let ws: Vec<f64> = (0..n)
                .map(|_| {
                    if unit {
                        1.0
                    } else {
                        f64::from(1 + rng.below(3) as u32)
                    }
                })
                .collect();
            let yr: Vec<f64> = (0..n).map(|_| rng.unit() * 4.0 - 1.0).collect();
            let yc: Vec<u32> = (0..n).map(|_| rng.below(3) as u32).collect();
            let column_major: Vec<f32> = (0..n_cols)
                .flat_map(|j| (0..n_rows).map(move |i| (i, j)))
                .map(|(i, j)| data[i * n_cols + j])
                .collect();
            let k = match whole {
                true => MAX_BATCH + 1 + rng.below(n_cols - MAX_BATCH),
                false => 1 + rng.below(n_cols),
            };
            let leaf = 1 + trial / 3 % 3;
            for x in [
                Matrix::new(&data, n_rows, n_cols, Layout::RowMajor).unwrap(),
                Matrix::new(&column_major, n_rows, n_cols, Layout::ColumnMajor).unwrap(),
            ] {
                let seed = rng.below(1 << 30) as u64;
                if n > DIRECT_ROWS && x.row_major_data().is_none() {
                    continue; // gathered
                }
                let case = Case {
                    x: &x,
                    samples: &samples,
                    ws: &ws,
                    k,
                    leaf,
                    unit,
                    seed,
                };
                case.check(&SquaredError { y: &yr }, &yr, trial);
                case.check(&Gini::new(&yc, 3), &yc, trial);
            }
        }
    }

    struct Case<'a> {
        x: &'a Matrix<'a, f32>,
        samples: &'a [u32],
        ws: &'a [f64],
        k: usize,
        leaf: usize,
        unit: bool,
        seed: u64,
    }

    impl Case<'_> {
        fn check<C: Criterion>(&self, crit: &C, ys: &[C::Y], trial: usize) {
            let mut total = vec![0.0; crit.stats_len()];
            crit.accumulate(&mut total, ys, self.ws);
            let ctx = NodeCtx {
                crit,
                total: &total,
                min_samples_leaf: self.leaf,
                min_weight_leaf: 0.0,
                unit_weights: self.unit,
                whole_sums: false,
                mono: None,
                sign: 0,
            };
            let cols = Columns {
                x: self.x,
                levels: None,
                missing: None,
                categorical: None,
            };
            let run = |direct: bool| {
                let (mut samples, mut ys, mut ws) =
                    (self.samples.to_vec(), ys.to_vec(), self.ws.to_vec());
                let mut rows = NodeRows {
                    samples: &mut samples,
                    ys: &mut ys,
                    ws: &mut ws,
                };
                assert!(reads_directly(cols, &ctx, &rows, self.k));
                let mut features: Vec<u32> = (0..self.x.n_cols() as u32).collect();
                let mut s = SplitBufs::new(self.x.n_rows(), crit.stats_len());
                let mut rng = TreeRng::new(self.seed);
                let node = Node {
                    ctx: &ctx,
                    s: &mut s,
                    rows: &mut rows,
                };
                let draw = NodeDraw {
                    features: &mut features,
                    n_constant: 0,
                    max_features: self.k,
                    rng: &mut rng,
                };
                let (split, n_constant) = match direct {
                    true => find_split_direct(self.x, node, draw),
                    false => {
                        draw_gathered::<f32, C, RandomThreshold, false>(cols, node, None, draw)
                    }
                };
                let split = split.map(|s| (s.feature, s.threshold.to_bits(), s.n_left));
                let ys: Vec<u64> = ys
                    .iter()
                    .map(|&y| crate::tree::split::Word::to_word(y))
                    .collect();
                let ws: Vec<u64> = ws.iter().map(|w| w.to_bits()).collect();
                (
                    split,
                    n_constant,
                    features,
                    samples,
                    ys,
                    ws,
                    rng.unit().to_bits(),
                )
            };
            assert_eq!(run(true), run(false), "trial {trial}");
        }
    }
}
