//! Leaf statistics of a regression forest and the conditional quantiles they give
//! (Meinshausen 2006, quantile regression forests).
//!
//! A forest's mean prediction keeps one number per leaf; the leaf's training targets keep
//! the whole conditional distribution. [`LeafValues`] holds, for every leaf of every tree,
//! the in-bag training rows that reached it with their weights (bootstrap count × sample
//! weight), built once from the training data ([`Forest::leaf_values`]). A row `x` then
//! weighs training row `i` by Meinshausen's
//!
//! `w_i(x) = (1/T) Σ_t c_ti / W_t(x)` over the trees `t` whose leaf reached by `x` holds `i`,
//!
//! `c_ti` its weight in that leaf and `W_t(x)` the leaf's total, and the quantiles of `x` are
//! those of the training targets under these weights ([`weighted_quantiles`]).

use super::sampling::in_bag_counts;
use super::Forest;
use crate::data::{Feature, Matrix};
use crate::error::{invalid, ForestError, Result};
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

/// The in-bag training rows of every leaf of a forest, with their weights and targets.
#[derive(Clone, Debug, PartialEq)]
pub struct LeafValues {
    /// Training target of each row.
    y: Vec<f64>,
    trees: Vec<TreeLeaves>,
    /// Rank of each row's target among all (by target, then row: a leaf's order), and the
    /// targets in that order (derived from `y`).
    rank: Vec<u32>,
    sorted: Vec<f64>,
}

/// One tree's leaves as CSR over its leaf slots: leaf `s` holds `rows[start[s]..start[s+1]]`
/// (sorted by target, then row) with their bootstrap counts and weights (count × sample
/// weight).
#[derive(Clone, Debug, PartialEq)]
struct TreeLeaves {
    start: Vec<u32>,
    rows: Vec<u32>,
    counts: Vec<u32>,
    weights: Vec<f64>,
    /// Per leaf slot: the sum of its weights, and of its bootstrap counts.
    totals: Vec<(f64, f64)>,
}

/// A [`LeafValues`] as flat arrays (a model file's): the targets `y`; per tree `t`, its
/// leaves' starts `starts[tree_starts[t]..tree_starts[t + 1]]` (from 0, one more than its
/// leaves) into its entries, which follow the previous trees' in `rows`, `counts` and
/// `weights`.
#[derive(Clone, Debug, PartialEq)]
pub struct LeafParts {
    /// Training target of each row.
    pub y: Vec<f64>,
    /// Per tree, where its leaf starts begin in `starts` (one more than the trees).
    pub tree_starts: Vec<u32>,
    /// Per tree, its leaves' starts into its entries.
    pub starts: Vec<u32>,
    /// Entries: training row.
    pub rows: Vec<u32>,
    /// Entries: bootstrap count.
    pub counts: Vec<u32>,
    /// Entries: count × sample weight.
    pub weights: Vec<f64>,
}

impl Forest {
    /// The leaf statistics of this regression forest from its training data `x`, `y` and
    /// `sample_weight` (the fit's: the in-bag rows are regenerated from the tree seeds).
    pub fn leaf_values<T: Feature>(
        &self,
        x: Matrix<'_, T>,
        y: &[f64],
        sample_weight: Option<&[f64]>,
    ) -> Result<LeafValues> {
        self.check_single_output("leaf values")?;
        if !self.params.criterion.is_regression() {
            return Err(ForestError::Unsupported(
                "leaf values and quantiles are for regression forests".into(),
            ));
        }
        if self.params.assembled {
            return Err(ForestError::Unsupported(
                "a forest assembled from patches has no single set of training rows; \
                 build the leaf values of each patch"
                    .into(),
            ));
        }
        self.check_input(&x)?;
        let n = self.params.n_samples;
        let weights_ok = sample_weight.is_none_or(|w| w.len() == n);
        if x.n_rows() != n || y.len() != n || !weights_ok {
            return Err(ForestError::Shape(format!(
                "leaf values need the {n} training rows, their targets and weights"
            )));
        }
        if y.iter().any(|v| !v.is_finite()) {
            return Err(ForestError::InvalidTarget("y holds NaN or infinity".into()));
        }
        let trees = map_ordered(self.trees.len(), |t| {
            let counts = in_bag_counts(&self.params, t);
            let tree = &self.trees[t];
            let mut by_slot: Vec<Vec<(u32, u32, f64)>> = vec![Vec::new(); tree.n_leaves()];
            for (i, &c) in counts.iter().enumerate().filter(|(_, &c)| c > 0) {
                let slot = tree.leaf_slot(tree.leaf(&x, i));
                let w = f64::from(c) * sample_weight.map_or(1.0, |sw| sw[i]);
                by_slot[slot].push((i as u32, c, w));
            }
            TreeLeaves::of_slots(by_slot, y)
        });
        Ok(LeafValues::new(y.to_vec(), trees))
    }
}

impl TreeLeaves {
    /// From each leaf slot's `(row, count, weight)` entries, in any order.
    fn of_slots(by_slot: Vec<Vec<(u32, u32, f64)>>, y: &[f64]) -> TreeLeaves {
        let mut leaves = TreeLeaves {
            start: vec![0],
            rows: Vec::new(),
            counts: Vec::new(),
            weights: Vec::new(),
            totals: Vec::with_capacity(by_slot.len()),
        };
        for mut entries in by_slot {
            entries.sort_by(|a, b| by_target(y, a.0, b.0));
            leaves.rows.extend(entries.iter().map(|e| e.0));
            leaves.counts.extend(entries.iter().map(|e| e.1));
            leaves.weights.extend(entries.iter().map(|e| e.2));
            leaves.start.push(leaves.rows.len() as u32);
        }
        leaves.sum_totals();
        leaves
    }

    fn sum_totals(&mut self) {
        self.totals = (self.start.windows(2))
            .map(|s| {
                let range = s[0] as usize..s[1] as usize;
                let w = self.weights[range.clone()].iter().sum();
                let c = self.counts[range].iter().map(|&c| f64::from(c)).sum();
                (w, c)
            })
            .collect();
    }
}

/// The order of a leaf's entries: by target, then row.
fn by_target(y: &[f64], a: u32, b: u32) -> std::cmp::Ordering {
    y[a as usize].total_cmp(&y[b as usize]).then(a.cmp(&b))
}

impl LeafValues {
    fn new(y: Vec<f64>, trees: Vec<TreeLeaves>) -> LeafValues {
        let mut order: Vec<u32> = (0..y.len() as u32).collect();
        order.sort_by(|&a, &b| by_target(&y, a, b));
        let mut rank = vec![0u32; y.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        let sorted = order.iter().map(|&i| y[i as usize]).collect();
        LeafValues {
            y,
            trees,
            rank,
            sorted,
        }
    }

    /// Its arrays ([`LeafParts`]).
    pub fn parts(&self) -> LeafParts {
        let mut p = LeafParts {
            y: self.y.clone(),
            tree_starts: vec![0],
            starts: Vec::new(),
            rows: Vec::new(),
            counts: Vec::new(),
            weights: Vec::new(),
        };
        for t in &self.trees {
            p.starts.extend(&t.start);
            p.tree_starts.push(p.starts.len() as u32);
            p.rows.extend(&t.rows);
            p.counts.extend(&t.counts);
            p.weights.extend(&t.weights);
        }
        p
    }

    /// The leaf values of `forest` from their arrays ([`LeafValues::parts`]), checked: any
    /// inconsistency (with each other or with the forest's leaves) is an error, never a
    /// panic later.
    pub fn from_parts(forest: &Forest, p: LeafParts) -> Result<LeafValues> {
        let bad = |what: &str| ForestError::Decode(format!("leaf values: {what}"));
        let n = p.y.len();
        let same = p.rows.len() == p.counts.len() && p.rows.len() == p.weights.len();
        if !same || p.y.iter().any(|v| !v.is_finite()) || n != forest.params.n_samples {
            return Err(bad("arrays of inconsistent lengths or targets"));
        }
        if p.tree_starts.len() != forest.trees.len() + 1 || p.tree_starts[0] != 0 {
            return Err(bad("not one list of leaves per tree"));
        }
        let mut trees = Vec::with_capacity(forest.trees.len());
        let mut entry = 0usize;
        for (t, s) in p.tree_starts.windows(2).enumerate() {
            let (a, b) = (s[0] as usize, s[1] as usize);
            let start = p
                .starts
                .get(a..b)
                .ok_or_else(|| bad("leaf starts"))?
                .to_vec();
            let ordered = start.first() == Some(&0) && start.windows(2).all(|w| w[0] <= w[1]);
            if !ordered || start.len() != forest.trees[t].n_leaves() + 1 {
                return Err(bad("leaf starts"));
            }
            let end = entry + *start.last().unwrap_or(&0) as usize;
            let rows = p
                .rows
                .get(entry..end)
                .ok_or_else(|| bad("entries"))?
                .to_vec();
            let counts = p.counts[entry..end].to_vec();
            let weights = p.weights[entry..end].to_vec();
            let valid = rows.iter().all(|&r| (r as usize) < n)
                && counts.iter().all(|&c| c > 0)
                && weights.iter().all(|w| w.is_finite() && *w >= 0.0);
            if !valid {
                return Err(bad("entries out of range"));
            }
            let sorted = start.windows(2).all(|s| {
                let leaf = &rows[s[0] as usize..s[1] as usize];
                leaf.windows(2).all(|r| by_target(&p.y, r[0], r[1]).is_lt())
            });
            if !sorted {
                return Err(bad("a leaf's entries out of order"));
            }
            let mut leaves = TreeLeaves {
                start,
                rows,
                counts,
                weights,
                totals: Vec::new(),
            };
            leaves.sum_totals();
            trees.push(leaves);
            entry = end;
        }
        if entry != p.rows.len() {
            return Err(bad("entries left over"));
        }
        Ok(LeafValues::new(p.y, trees))
    }

    /// The `quantiles` (each in `[0, 1]`) of every row of `x` under `forest`'s leaves:
    /// `n_rows × n_quantiles`, row-major. With `oob`, `x` is the training matrix and each
    /// row uses only the trees it was out of bag for (NaN where there is none).
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
        if forest.trees.len() != self.trees.len()
            || (self.trees.iter().zip(&forest.trees)).any(|(l, t)| l.totals.len() != t.n_leaves())
        {
            return Err(ForestError::Shape(
                "the leaf values are not this forest's".into(),
            ));
        }
        let in_bag = match oob {
            true => {
                forest.check_training(&x, None, "out-of-bag quantiles")?;
                (0..forest.trees.len())
                    .map(|t| super::oob::in_bag_bits(forest, t))
                    .collect()
            }
            false => {
                forest.check_input(&x)?;
                Vec::new()
            }
        };
        let n_rows = x.n_rows();
        let chunk = super::row_chunk(n_rows);
        let rows = map_ordered(n_rows.div_ceil(chunk), |c| {
            // Each row's leaf entries by rank (so by target), the same rank merged.
            let (mut gathered, mut values) = (Vec::<(u32, f64)>::new(), Vec::new());
            let mut out = Vec::with_capacity(chunk * quantiles.len());
            let (first, end) = (c * chunk, ((c + 1) * chunk).min(n_rows));
            // The chunk's leaves tree by tree, while each tree's nodes are in cache.
            let n_trees = forest.trees.len();
            let mut slots = vec![0u32; (end - first) * n_trees];
            for (t, tree) in forest.trees.iter().enumerate() {
                for i in first..end {
                    slots[(i - first) * n_trees + t] = tree.leaf_slot(tree.leaf(&x, i)) as u32;
                }
            }
            for i in first..end {
                gathered.clear();
                let (mut draws, mut trees) = (0.0, 0usize);
                for (t, leaves) in self.trees.iter().enumerate() {
                    if oob && in_bag[t][i / 64] >> (i % 64) & 1 == 1 {
                        continue;
                    }
                    let slot = slots[(i - first) * n_trees + t] as usize;
                    let (total, count) = leaves.totals[slot];
                    if total <= 0.0 {
                        continue;
                    }
                    let range = leaves.start[slot] as usize..leaves.start[slot + 1] as usize;
                    let entries = leaves.rows[range.clone()]
                        .iter()
                        .zip(&leaves.weights[range]);
                    let positive = entries.filter(|e| *e.1 > 0.0);
                    gathered
                        .extend(positive.map(|(&row, &w)| (self.rank[row as usize], w / total)));
                    (draws, trees) = (draws + count, trees + 1);
                }
                // (Stable: a row's weights from several trees add in tree order.)
                gathered.sort_by_key(|g| g.0);
                // On the scale of the draws: as if each target were drawn that often.
                let scale = draws / trees.max(1) as f64;
                values.clear();
                let mut last = None;
                for &(r, w) in &gathered {
                    match values.last_mut() {
                        Some((_, f)) if last == Some(r) => *f += w * scale,
                        _ => values.push((self.sorted[r as usize], w * scale)),
                    }
                    last = Some(r);
                }
                out.extend(weighted_quantiles(&values, quantiles, how));
            }
            out
        });
        Ok(rows.into_iter().flatten().collect())
    }
}

/// The quantiles of `values` (sorted `(value, frequency)` pairs, frequencies > 0) as those of
/// the sample in which each value appears as often as its frequency: numpy's
/// `quantile(method=...)` when the frequencies are whole, on the rank `1 + q·(F − 1)` of
/// the `F` values. Continued to any positive frequencies with value `j` at the ranks
/// `(cum_{j−1}, cum_j]`, read from `s = min(1, f_first)` to `e = F − 1 + min(1, f_last)`
/// (`f_first`, `f_last`: the frequencies of the smallest and largest values) by unit steps
/// from `s`, the last step ending at `e`: `q = 0` and `q = 1` are the smallest and largest
/// values. NaN for each quantile when `values` is empty.
pub fn weighted_quantiles(
    values: &[(f64, f64)],
    quantiles: &[f64],
    how: Interpolation,
) -> Vec<f64> {
    let total: f64 = values.iter().map(|v| v.1).sum();
    if values.is_empty() || total <= 0.0 {
        return vec![f64::NAN; quantiles.len()];
    }
    // The value at rank `r` (1-based, real): the first whose cumulative frequency reaches it.
    let cum: Vec<f64> = (values.iter())
        .scan(0.0, |c, v| {
            *c += v.1;
            Some(*c)
        })
        .collect();
    let at = |r: f64| values[cum.partition_point(|&c| c < r).min(values.len() - 1)].0;
    // The ranks read: from the smallest value's first to the largest value's last.
    let frequency_of = |v: f64| values.iter().filter(|w| w.0 == v).map(|w| w.1).sum::<f64>();
    let first = frequency_of(values[0].0).min(1.0);
    let end = total - 1.0 + frequency_of(values[values.len() - 1].0).min(1.0);
    quantiles
        .iter()
        .map(|&q| {
            let pos = first + q * (end - first).max(0.0);
            let lo_pos = first + (pos - first).floor();
            let hi_pos = (lo_pos + 1.0).min(end);
            let frac = match hi_pos > lo_pos {
                true => (pos - lo_pos) / (hi_pos - lo_pos),
                false => 0.0,
            };
            let (lo, hi) = (at(lo_pos), at(hi_pos));
            match how {
                Interpolation::Linear => lo + frac * (hi - lo),
                Interpolation::Lower => lo,
                Interpolation::Higher => {
                    if frac > 0.0 {
                        hi
                    } else {
                        lo
                    }
                }
                Interpolation::Midpoint => {
                    if frac > 0.0 {
                        0.5 * (lo + hi)
                    } else {
                        lo
                    }
                }
                Interpolation::Nearest => match frac.partial_cmp(&0.5) {
                    Some(std::cmp::Ordering::Less) => lo,
                    Some(std::cmp::Ordering::Greater) => hi,
                    // numpy rounds the 0-based index half to even.
                    _ if ((lo_pos - first) as u64) % 2 == 0 => lo,
                    _ => hi,
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
