//! The weighted quantiles of a row's training targets under Meinshausen's weights.
//!
//! A row's weights go into a histogram over target ranks ([`RankHistogram`]): each entry of
//! each leaf the row reaches adds its share to its rank, in a fine array (one cell per
//! rank) and a coarse one (one cell per run of about `√(n / q)` ranks, for `q` quantiles).
//! The quantiles are then read in one walk along the coarse cells, into the fine cells
//! where the cumulative weight passes a position: no sort, and work in the row's entries
//! plus `√(nq)`, whatever the number of training rows.

use super::{Entries, Forest, LeafValues, Share, TreeLeaves};
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
            // Rows in the order of their leaves in the first two trees: rows that share a
            // leaf there are near each other and share leaves in the other trees too, which
            // are then still in cache for the next row.
            let at = |r: usize| &slots[r * n_trees..(r + 1) * n_trees];
            let mut order: Vec<usize> = (0..end - first).collect();
            order.sort_by_key(|&r| (at(r).first().copied(), at(r).get(1).copied()));
            for r in order {
                let i = first + r;
                let skip = |t: usize| oob && in_bag[t][i / 64] >> (i % 64) & 1 == 1;
                let row_out = &mut out[r * k * nq..(r + 1) * k * nq];
                for (o, out) in row_out.chunks_mut(nq).enumerate() {
                    let (draws, trees) = self.add_leaves(&mut hist, at(r), o, &skip);
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
        match self.trees.first().map(|t| &t.entries) {
            Some(Entries::Weighted(_)) => {
                self.add_entries(hist, slots, o, skip, |t| match &t.entries {
                    Entries::Weighted(e) => e,
                    Entries::Counted(_) => &[],
                })
            }
            _ => self.add_entries(hist, slots, o, skip, |t| match &t.entries {
                Entries::Counted(e) => e,
                Entries::Weighted(_) => &[],
            }),
        }
    }

    /// [`LeafValues::add_leaves`] with the entries of each tree `entries(tree)`.
    fn add_entries<'e, E: Share + 'e>(
        &'e self,
        hist: &mut RankHistogram,
        slots: &[u32],
        o: usize,
        skip: &impl Fn(usize) -> bool,
        entries: impl Fn(&'e TreeLeaves) -> &'e [E],
    ) -> (f64, usize) {
        let (mut draws, mut trees) = (0.0, 0usize);
        let at = |t: usize| {
            let (leaves, slot) = (&self.trees[t], slots[t] as usize);
            let base = o * leaves.rows.len();
            let (span, end) = (leaves.spans[slot], leaves.spans[slot + 1].start);
            (
                entries(leaves),
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
                let (leaf_entries, _, range) = at(t + AHEAD / 2);
                let ends = [range.start, range.end.max(1) - 1];
                for e in ends.map(|e| leaf_entries.get(e)).into_iter().flatten() {
                    prefetch(e);
                }
            }
            let (leaf_entries, span, range) = at(t);
            if span.draws == 0 || skip(t) {
                continue;
            }
            let d = f64::from(span.draws);
            let per_draw = 1.0 / d;
            for &e in &leaf_entries[range] {
                hist.add(e.rank(), e.share(per_draw));
            }
            (draws, trees) = (draws + d, trees + 1);
        }
        (draws, trees)
    }
}

/// How many trees ahead a row's leaf is asked for (see [`LeafValues::add_leaves`]).
const AHEAD: usize = 16;

/// A cumulative weight within this share of the total of a position counts as reaching
/// it: a position that falls exactly on the boundary between two values (whole
/// frequencies) reads as numpy does, whatever order the weights were summed in.
const TIE: f64 = 1e-12;

/// One row's weights over the target ranks `0..n` (see the module's comment).
struct RankHistogram {
    fine: Vec<f64>,
    /// `coarse[b]`: the sum of `fine[b << shift..(b + 1) << shift]`.
    coarse: Vec<f64>,
    shift: u32,
    /// The ranks added to since the last clear (repeats allowed).
    touched: Vec<u32>,
    /// The positions of the quantiles (with their index), and what [`Self::locate`] found
    /// at each.
    targets: Vec<(f64, usize)>,
    found: Vec<Found>,
}

/// Around a position `x`: the last rank whose cumulative weight is at most `x` (`floor`,
/// none before the first), that weight, and the next rank with weight (`ceil`, none
/// after the last).
#[derive(Clone, Copy, Default)]
struct Found {
    floor: Option<usize>,
    cum: f64,
    ceil: Option<usize>,
}

impl RankHistogram {
    /// For `n` ranks read `nq` quantiles at a time: a reading walks the coarse cells once
    /// (`n / 2^shift`) and a run of fine cells a quantile (`2^shift` at most), least work
    /// at `2^shift ≈ √(n / nq)`.
    fn new(n: usize, nq: usize) -> RankHistogram {
        let cells = (n / nq.max(1)).max(1) as f64;
        let shift = (cells.sqrt().log2().round() as u32).clamp(3, 20);
        RankHistogram {
            fine: vec![0.0; n],
            coarse: vec![0.0; (n >> shift) + 1],
            shift,
            touched: Vec::new(),
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
    /// to `total`, where `scale` times a weight is a frequency ([`weighted_quantiles`]'s
    /// rule).
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
        // Positions on the scale of the weights (a frequency of one is `1 / scale`).
        let frequency = total * scale;
        self.targets.clear();
        let rank = |q: f64| (1.0 + q * (frequency - 1.0).max(0.0)) / scale;
        (self.targets).extend(quantiles.iter().enumerate().map(|(j, &q)| (rank(q), j)));
        self.locate(lo as usize, hi as usize, total * TIE);
        for (&(x, j), found) in self.targets.iter().zip(&self.found) {
            out[j] = read_at(
                x * scale,
                found.cum * scale,
                found.floor,
                found.ceil,
                sorted,
                how,
            );
        }
    }

    /// [`Found`] at each target position (sorted here), in `found` in that order: one walk
    /// along the coarse cells, into the fine ones of the cell where the weight passes it.
    fn locate(&mut self, lo: usize, hi: usize, tie: f64) {
        self.targets.sort_by(|a, b| a.0.total_cmp(&b.0));
        self.found.clear();
        let (mut bucket, last) = (lo >> self.shift, hi >> self.shift);
        let mut cum = 0.0;
        for &(x, _) in &self.targets {
            let x = x + tie;
            // Eight cells at a time first: their sum is a tree of independent additions,
            // where one cell at a time is a chain of dependent ones.
            while let Some(cells) =
                (self.coarse.get(bucket..bucket + 8)).filter(|_| bucket + 8 <= last)
            {
                let sum = ((cells[0] + cells[1]) + (cells[2] + cells[3]))
                    + ((cells[4] + cells[5]) + (cells[6] + cells[7]));
                if cum + sum > x {
                    break;
                }
                (cum, bucket) = (cum + sum, bucket + 8);
            }
            while bucket < last && cum + self.coarse[bucket] <= x {
                cum += self.coarse[bucket];
                bucket += 1;
            }
            // The first rank whose cumulative weight passes x, and the one with weight
            // before it (in an earlier cell when none is in this one).
            let cells = (bucket << self.shift).max(lo)..((bucket + 1) << self.shift).min(hi + 1);
            let mut found = Found {
                floor: None,
                cum,
                ceil: None,
            };
            for r in cells {
                let w = self.fine[r];
                if w > 0.0 {
                    if found.cum + w > x {
                        found.ceil = Some(r);
                        break;
                    }
                    (found.floor, found.cum) = (Some(r), found.cum + w);
                }
            }
            if found.floor.is_none() {
                found.floor = self.last_before(bucket, lo);
            }
            if found.ceil.is_none() && bucket < last {
                // (Only where rounding left the cell's fine sum short of its coarse one.)
                found.ceil = self.first_after(bucket, hi);
            }
            self.found.push(found);
        }
    }

    /// The first rank with weight in the cells after `bucket`, up to rank `hi`.
    fn first_after(&self, bucket: usize, hi: usize) -> Option<usize> {
        let cell = (bucket + 1..=hi >> self.shift).find(|&b| self.coarse[b] > 0.0)?;
        let ranks = cell << self.shift..((cell + 1) << self.shift).min(hi + 1);
        ranks.into_iter().find(|&r| self.fine[r] > 0.0)
    }

    /// The last rank with weight in the cells before `bucket`, down to rank `lo`.
    fn last_before(&self, bucket: usize, lo: usize) -> Option<usize> {
        let cell = (lo >> self.shift..bucket)
            .rev()
            .find(|&b| self.coarse[b] > 0.0)?;
        let ranks = (cell << self.shift).max(lo)..(cell + 1) << self.shift;
        ranks.rev().find(|&r| self.fine[r] > 0.0)
    }
}

/// The value at position `x` (1-based, in frequencies) of the sample in which each value
/// appears as often as its frequency, from what lies around it ([`Found`], `cum` in
/// frequencies): within one unit past a value's last position, between it and the next
/// value, read by `how`; further on, the next value. (quantile-forest's rule; numpy's
/// `quantile(method=...)` of the repeated sample when the frequencies are whole.)
fn read_at(
    x: f64,
    cum: f64,
    floor: Option<usize>,
    ceil: Option<usize>,
    values: &[f64],
    how: Interpolation,
) -> f64 {
    let (lo, hi) = match (floor, ceil) {
        (Some(f), Some(c)) => (values[f], values[c]),
        (Some(v), None) | (None, Some(v)) => return values[v],
        (None, None) => return f64::NAN,
    };
    let frac = x - cum;
    if frac >= 1.0 || lo == hi {
        return if frac >= 1.0 { hi } else { lo };
    }
    let between = frac > 0.0;
    match how {
        Interpolation::Linear => lo + frac.max(0.0) * (hi - lo),
        Interpolation::Lower => lo,
        Interpolation::Higher if between => hi,
        Interpolation::Midpoint if between => 0.5 * (lo + hi),
        Interpolation::Higher | Interpolation::Midpoint => lo,
        Interpolation::Nearest => match frac.partial_cmp(&0.5) {
            Some(std::cmp::Ordering::Less) => lo,
            Some(std::cmp::Ordering::Greater) => hi,
            // numpy rounds the 0-based position half to even: the lower value when its
            // last position (1-based) is odd.
            _ if cum.round() % 2.0 == 1.0 => lo,
            _ => hi,
        },
    }
}

/// The quantiles of `values` (sorted `(value, frequency)` pairs, frequencies > 0) as those
/// of the sample in which each value appears as often as its frequency: the value at
/// position `x = 1 + q·(F − 1)` of the `F` (total frequency) positions, value `j` at
/// `(cum_{j−1}, cum_j]`, read as [`read_at`] does. This is quantile-forest's rule and,
/// when the frequencies are whole, numpy's `quantile(method=...)` of the repeated sample;
/// `q = 1` is the largest value, `q = 0` the smallest when its frequency is at least one.
/// NaN for each quantile when `values` is empty. (The reference the histogram's reading
/// is tested against.)
pub fn weighted_quantiles(
    values: &[(f64, f64)],
    quantiles: &[f64],
    how: Interpolation,
) -> Vec<f64> {
    let total: f64 = values.iter().map(|v| v.1).sum();
    if values.is_empty() || total <= 0.0 {
        return vec![f64::NAN; quantiles.len()];
    }
    let cum: Vec<f64> = (values.iter())
        .scan(0.0, |c, v| {
            *c += v.1;
            Some(*c)
        })
        .collect();
    let sorted: Vec<f64> = values.iter().map(|v| v.0).collect();
    let tie = total * TIE;
    (quantiles.iter())
        .map(|&q| {
            let x = 1.0 + q * (total - 1.0).max(0.0);
            // The values whose last position is at most x.
            let passed = cum.partition_point(|&c| c <= x + tie);
            let floor = passed.checked_sub(1);
            let at = floor.map_or(0.0, |f| cum[f]);
            let ceil = Some(passed).filter(|&c| c < values.len());
            read_at(x, at, floor, ceil, &sorted, how)
        })
        .collect()
}
