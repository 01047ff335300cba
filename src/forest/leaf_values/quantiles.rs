//! The weighted quantiles of a row's training targets under Meinshausen's weights.
//!
//! A row's weights go into a histogram over target ranks ([`RankHistogram`]): each entry of
//! each leaf the row reaches adds its share to its rank, in a fine array (one cell per
//! rank) and a coarse one (one cell per run of about `√(n / 2q)` ranks, for `q` quantiles).
//! The quantiles are then read in one walk along the coarse cells, into the fine cells
//! where the cumulative weight crosses a position: no sort, and work in the row's entries
//! plus `√(2nq)`, whatever the number of training rows.

use super::{Forest, LeafValues};
use crate::data::{prefetch, Feature, Matrix};
use crate::error::{invalid, ForestError, Result};
use crate::forest::{oob::in_bag_bits, row_chunk};
use crate::parallel::map_ordered;

/// How a quantile between two training values is read, as numpy's and quantile-forest's
/// `interpolation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    /// `v_lo + frac · (v_hi − v_lo)`.
    Linear,
    /// `v_lo`.
    Lower,
    /// `v_hi`.
    Higher,
    /// Whichever of `v_lo`, `v_hi` is nearer (the even rank on a tie, as numpy).
    Nearest,
    /// `(v_lo + v_hi) / 2`.
    Midpoint,
}

impl LeafValues {
    /// The `quantiles` (each in `[0, 1]`) of every row of `x` under `forest`'s leaves:
    /// `n_rows × n_outputs × n_quantiles`, row-major. With `oob`, `x` is the training
    /// matrix and each row uses only the trees it was out of bag for (NaN where none).
    pub fn quantiles<T: Feature>(
        &self,
        forest: &Forest,
        x: Matrix<'_, T>,
        quantiles: &[f64],
        how: Interpolation,
        oob: bool,
    ) -> Result<Vec<f64>> {
        if quantiles.iter().any(|q| !(0.0..=1.0).contains(q)) {
            return Err(invalid("quantiles", "must be in [0, 1], not NaN"));
        }
        let mismatch =
            (self.trees.iter().zip(&forest.trees)).any(|(l, t)| l.spans.len() != t.n_leaves() + 1);
        if forest.trees.len() != self.trees.len() || mismatch {
            return Err(ForestError::Shape(
                "the leaf values are not this forest's".into(),
            ));
        }
        let (nan, in_bag) = match oob {
            true => {
                forest.check_training(&x, None, "out-of-bag quantiles")?;
                (
                    true,
                    map_ordered(forest.trees.len(), |t| in_bag_bits(forest, t)),
                )
            }
            false => (forest.check_input(&x)?, Vec::new()),
        };
        let (n_rows, n_trees, k, nq) = (
            x.n_rows(),
            forest.trees.len(),
            self.n_outputs,
            quantiles.len(),
        );
        let n = self.sorted.len() / k;
        let chunk = row_chunk(n_rows);
        let rows = map_ordered(n_rows.div_ceil(chunk), |c| {
            let (first, end) = (c * chunk, ((c + 1) * chunk).min(n_rows));
            // The chunk's leaves tree by tree, each tree's nodes read once.
            let mut slots = vec![0u32; (end - first) * n_trees];
            for (t, tree) in forest.trees.iter().enumerate() {
                let rows = (0..(end - first) as u32).collect();
                tree.descend(&x, first, rows, nan, |leaf, r| {
                    slots[r * n_trees + t] = tree.leaf_slot(leaf) as u32;
                });
            }
            let mut hist = RankHistogram::new(n, nq);
            let mut out = vec![0.0; (end - first) * k * nq];
            for (r, (slots, out)) in slots
                .chunks(n_trees)
                .zip(out.chunks_mut(k * nq))
                .enumerate()
            {
                let i = first + r;
                let skip = |t: usize| oob && in_bag[t][i / 64] >> (i % 64) & 1 == 1;
                for (o, out) in out.chunks_mut(nq).enumerate() {
                    let (draws, trees) = self.add_leaves(&mut hist, slots, o, &skip);
                    // On the scale of the draws: as if each target were drawn that often.
                    let scale = draws / trees.max(1) as f64;
                    let sorted = &self.sorted[o * n..(o + 1) * n];
                    // Each tree's shares sum to 1.
                    hist.read(sorted, trees as f64, scale, quantiles, how, out);
                    hist.clear();
                }
            }
            out
        });
        Ok(rows.into_iter().flatten().collect())
    }

    /// Adds to `hist` output `o`'s entries of the leaves `slots` (one per tree) but those
    /// of the trees `skip(t)`; returns their draws and number of trees.
    fn add_leaves(
        &self,
        hist: &mut RankHistogram,
        slots: &[u32],
        o: usize,
        skip: &impl Fn(usize) -> bool,
    ) -> (f64, usize) {
        let (mut draws, mut trees) = (0.0, 0usize);
        let at = |t: usize| {
            let (leaves, slot) = (&self.trees[t], slots[t] as usize);
            let base = o * leaves.rows.len();
            let (span, end) = (leaves.spans[slot], leaves.spans[slot + 1].start);
            (
                leaves,
                span,
                base + span.start as usize..base + end as usize,
            )
        };
        for t in 0..slots.len() {
            // Each tree's leaf is elsewhere in memory: its span is asked for AHEAD trees
            // before it is read, its entries half as far ahead (the span then in cache).
            if let Some(&slot) = slots.get(t + AHEAD) {
                prefetch(&self.trees[t + AHEAD].spans[slot as usize]);
            }
            if t + AHEAD / 2 < slots.len() {
                let (leaves, _, range) = at(t + AHEAD / 2);
                let ends = [range.start, range.end.max(1) - 1];
                for e in ends.map(|e| leaves.entries.get(e)).into_iter().flatten() {
                    prefetch(e);
                }
            }
            let (leaves, span, range) = at(t);
            if span.draws == 0 || skip(t) {
                continue;
            }
            for e in &leaves.entries[range] {
                hist.add(e.rank, e.share);
            }
            (draws, trees) = (draws + f64::from(span.draws), trees + 1);
        }
        (draws, trees)
    }
}

/// How many trees ahead a row's leaf is asked for (see [`LeafValues::add_leaves`]).
const AHEAD: usize = 8;

/// A position within this share of the total weight of a cumulative weight counts as
/// reaching it: a position that falls exactly on the boundary between two values
/// (whole frequencies) reads the lower one, as numpy does, whatever order the weights
/// were summed in.
const TIE: f64 = 1e-12;

/// One row's weights over the target ranks `0..n` (see the module's comment).
struct RankHistogram {
    fine: Vec<f64>,
    /// `coarse[b]`: the sum of `fine[b << shift..(b + 1) << shift]`.
    coarse: Vec<f64>,
    shift: u32,
    /// The ranks added to since the last clear (repeats allowed).
    touched: Vec<u32>,
    /// The quantiles' readings, the positions they locate (with their index in `found`).
    readings: Vec<Reading>,
    targets: Vec<(f64, usize)>,
    found: Vec<usize>,
}

impl RankHistogram {
    /// For `n` ranks read `nq` quantiles at a time: a reading walks the coarse cells once
    /// (`n / 2^shift`) and two runs of fine cells a quantile (`2^shift` at most), least
    /// work at `2^shift ≈ √(n / 2nq)`.
    fn new(n: usize, nq: usize) -> RankHistogram {
        let cells = (n / (2 * nq).max(1)).max(1) as f64;
        let shift = (cells.sqrt().log2().round() as u32).clamp(3, 20);
        RankHistogram {
            fine: vec![0.0; n],
            coarse: vec![0.0; (n >> shift) + 1],
            shift,
            touched: Vec::new(),
            readings: Vec::new(),
            targets: Vec::new(),
            found: Vec::new(),
        }
    }

    #[inline]
    fn add(&mut self, rank: u32, w: f64) {
        if w > 0.0 {
            self.fine[rank as usize] += w;
            self.coarse[(rank >> self.shift) as usize] += w;
            self.touched.push(rank);
        }
    }

    fn clear(&mut self) {
        for &r in &self.touched {
            self.fine[r as usize] = 0.0;
            self.coarse[(r >> self.shift) as usize] = 0.0;
        }
        self.touched.clear();
    }

    /// Writes the `quantiles` of the targets `sorted` (by rank) under the weights, which sum
    /// to `total`, on the scale where `scale` times a weight is a frequency
    /// ([`weighted_quantiles`]'s rule).
    fn read(
        &mut self,
        sorted: &[f64],
        total: f64,
        scale: f64,
        quantiles: &[f64],
        how: Interpolation,
        out: &mut [f64],
    ) {
        let (Some(&lo), Some(&hi)) = (self.touched.iter().min(), self.touched.iter().max()) else {
            out.fill(f64::NAN);
            return;
        };
        let (lo, hi) = (lo as usize, hi as usize);
        // The weight of one draw; the smallest and largest values' weights (ties included).
        let unit = 1.0 / scale;
        let first_weight: f64 = (lo..=hi)
            .take_while(|&r| sorted[r] == sorted[lo])
            .map(|r| self.fine[r])
            .sum();
        let last_weight: f64 = (lo..=hi)
            .rev()
            .take_while(|&r| sorted[r] == sorted[hi])
            .map(|r| self.fine[r])
            .sum();
        let (first, end) = (first_weight.min(unit), total - unit + last_weight.min(unit));
        self.readings.clear();
        (self.readings).extend(quantiles.iter().map(|&q| Reading::at(first, end, unit, q)));
        self.targets.clear();
        for (j, r) in self.readings.iter().enumerate() {
            self.targets.extend([(r.lo, 2 * j), (r.hi, 2 * j + 1)]);
        }
        self.locate(lo, hi, total * TIE);
        for (j, r) in self.readings.iter().enumerate() {
            let (a, b) = (sorted[self.found[2 * j]], sorted[self.found[2 * j + 1]]);
            out[j] = r.interpolate(how, a, b);
        }
    }

    /// For each target position `p`, the first rank in `lo..=hi` whose cumulative weight
    /// reaches `p` within `tie` (the last rank with weight where rounding leaves `p` past
    /// the total).
    fn locate(&mut self, lo: usize, hi: usize, tie: f64) {
        self.targets.sort_by(|a, b| a.0.total_cmp(&b.0));
        self.found.resize(self.targets.len(), hi);
        let (mut bucket, last) = (lo >> self.shift, hi >> self.shift);
        let mut cum = 0.0;
        for &(p, slot) in &self.targets {
            let p = p - tie;
            // Eight cells at a time first: their sum is a tree of independent additions,
            // where one cell at a time is a chain of dependent ones.
            while let Some(cells) = self
                .coarse
                .get(bucket..bucket + 8)
                .filter(|_| bucket + 8 <= last)
            {
                let sum = ((cells[0] + cells[1]) + (cells[2] + cells[3]))
                    + ((cells[4] + cells[5]) + (cells[6] + cells[7]));
                if cum + sum >= p {
                    break;
                }
                (cum, bucket) = (cum + sum, bucket + 8);
            }
            while bucket < last && cum + self.coarse[bucket] < p {
                cum += self.coarse[bucket];
                bucket += 1;
            }
            let cells = (bucket << self.shift).max(lo)..((bucket + 1) << self.shift).min(hi + 1);
            let (mut c, mut at) = (cum, cells.start);
            for r in cells {
                if self.fine[r] > 0.0 {
                    (c, at) = (c + self.fine[r], r);
                    if c >= p {
                        break;
                    }
                }
            }
            self.found[slot] = at;
        }
    }
}

/// Where a quantile reads the sorted sample: between the values at cumulative positions
/// `lo` and `hi`, `frac` of the way; `even` tells numpy's tie rule of `"nearest"`.
struct Reading {
    lo: f64,
    hi: f64,
    frac: f64,
    even: bool,
}

impl Reading {
    /// Quantile `q` of a sample read from position `first` to `end` by steps of `unit`
    /// ([`weighted_quantiles`]).
    fn at(first: f64, end: f64, unit: f64, q: f64) -> Reading {
        let pos = first + q * (end - first).max(0.0);
        let steps = ((pos - first) / unit).floor();
        let lo = first + steps * unit;
        let hi = (lo + unit).min(end);
        let frac = match hi > lo {
            true => (pos - lo) / (hi - lo),
            false => 0.0,
        };
        let even = (steps as u64) % 2 == 0;
        Reading { lo, hi, frac, even }
    }

    fn interpolate(&self, how: Interpolation, lo: f64, hi: f64) -> f64 {
        let between = self.frac > 0.0;
        match how {
            Interpolation::Linear => lo + self.frac * (hi - lo),
            Interpolation::Lower => lo,
            Interpolation::Higher if between => hi,
            Interpolation::Midpoint if between => 0.5 * (lo + hi),
            Interpolation::Higher | Interpolation::Midpoint => lo,
            Interpolation::Nearest => match self.frac.partial_cmp(&0.5) {
                Some(std::cmp::Ordering::Less) => lo,
                Some(std::cmp::Ordering::Greater) => hi,
                // numpy rounds the 0-based index half to even.
                _ if self.even => lo,
                _ => hi,
            },
        }
    }
}

/// The quantiles of `values` (sorted `(value, frequency)` pairs, frequencies > 0) as those of
/// the sample in which each value appears as often as its frequency: numpy's
/// `quantile(method=...)` when the frequencies are whole, on the rank `1 + q·(F − 1)` of
/// the `F` values. Continued to any positive frequencies with value `j` at the ranks
/// `(cum_{j−1}, cum_j]`, read from `s = min(1, f_first)` to `e = F − 1 + min(1, f_last)`
/// (`f_first`, `f_last`: the frequencies of the smallest and largest values) by unit steps
/// from `s`, the last step ending at `e`: `q = 0` and `q = 1` are the smallest and largest
/// values. NaN for each quantile when `values` is empty. (The reference the histogram's
/// reading is tested against.)
pub fn weighted_quantiles(
    values: &[(f64, f64)],
    quantiles: &[f64],
    how: Interpolation,
) -> Vec<f64> {
    let total: f64 = values.iter().map(|v| v.1).sum();
    if values.is_empty() || total <= 0.0 {
        return vec![f64::NAN; quantiles.len()];
    }
    // The value at position `p`: the first whose cumulative frequency reaches it.
    let cum: Vec<f64> = (values.iter())
        .scan(0.0, |c, v| {
            *c += v.1;
            Some(*c)
        })
        .collect();
    let tie = total * TIE;
    let at = |p: f64| values[cum.partition_point(|&c| c < p - tie).min(values.len() - 1)].0;
    let frequency_of = |v: f64| values.iter().filter(|w| w.0 == v).map(|w| w.1).sum::<f64>();
    let first = frequency_of(values[0].0).min(1.0);
    let end = total - 1.0 + frequency_of(values[values.len() - 1].0).min(1.0);
    (quantiles.iter())
        .map(|&q| {
            let r = Reading::at(first, end, 1.0, q);
            r.interpolate(how, at(r.lo), at(r.hi))
        })
        .collect()
}
