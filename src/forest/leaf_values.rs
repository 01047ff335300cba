//! Leaf statistics of a regression forest and the conditional quantiles they give
//! (Meinshausen 2006, quantile regression forests).
//!
//! A forest's mean prediction keeps one number per leaf; the leaf's training targets keep
//! the whole conditional distribution. [`LeafValues`] holds, for every leaf of every tree,
//! the in-bag training rows that reached it with their weights (bootstrap count × sample
//! weight), built once from the training data ([`Forest::leaf_values`]), and the
//! out-of-bag prediction of every training row (what conformal intervals need). A row `x`
//! then weighs training row `i` by Meinshausen's
//!
//! `w_i(x) = (1/T) Σ_t c_ti / W_t(x)` over the trees `t` whose leaf reached by `x` holds `i`,
//!
//! `c_ti` its weight in that leaf and `W_t(x)` the leaf's total, and the quantiles of `x` are
//! those of the training targets under these weights (`quantiles.rs`).

use super::sampling::in_bag_counts;
use super::Forest;
use crate::data::{Feature, Matrix};
use crate::error::{ForestError, Result};
use crate::parallel::map_ordered;

mod quantiles;
pub use quantiles::{weighted_quantiles, Interpolation};

/// The in-bag training rows of every leaf of a forest, with their weights and targets.
#[derive(Clone, Debug, PartialEq)]
pub struct LeafValues {
    /// Training targets, `n × n_outputs` row-major.
    y: Vec<f64>,
    n_outputs: usize,
    /// Out-of-bag mean prediction of every training row (`n × n_outputs`), NaN where no
    /// tree left the row out.
    oob: Vec<f64>,
    trees: Vec<TreeLeaves>,
    /// Per output `o`, the targets in increasing order (ties by row) at `o·n..(o + 1)·n`
    /// (derived from `y`): the rank of an entry indexes them.
    sorted: Vec<f64>,
}

/// One tree's leaves as CSR over its leaf slots: leaf `s` holds `rows[start[s]..start[s+1]]`
/// (increasing) with their bootstrap counts and weights (count × sample weight).
#[derive(Clone, Debug, PartialEq)]
struct TreeLeaves {
    start: Vec<u32>,
    rows: Vec<u32>,
    counts: Vec<u32>,
    weights: Vec<f64>,
    /// Derived, what the quantiles read: per leaf slot, its entries and draws
    /// ([`Span`]); per output, the entries with their target's rank, `rows.len()` an
    /// output.
    spans: Vec<Span>,
    entries: Entries,
}

/// Where a leaf's entries start (they end where the next leaf's start: one more span than
/// leaves) and its number of in-bag draws, 0 when its weights sum to zero (the leaf then
/// takes no part in a quantile). Eight bytes: the spans of a forest stay in cache.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Span {
    start: u32,
    draws: u32,
}

/// The entries as the quantiles read them: their counts when every weight is the entry's
/// bootstrap count (no sample weights), in half the bytes, so a leaf takes fewer cache
/// lines; their shares of the leaf otherwise.
#[derive(Clone, Debug, PartialEq)]
enum Entries {
    Counted(Vec<Counted>),
    Weighted(Vec<Weighted>),
}

/// An entry whose weight is its count: its share of the leaf is `count / draws`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Counted {
    rank: u32,
    count: u32,
}

/// An entry's weight over its leaf's total, and its target's rank.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Weighted {
    share: f64,
    rank: u32,
}

/// What the quantiles read of an entry: its target's rank, and its share of its leaf
/// (`per_draw`: one over the leaf's draws).
trait Share: Copy {
    fn rank(self) -> u32;
    fn share(self, per_draw: f64) -> f64;
}

impl Share for Counted {
    #[inline]
    fn rank(self) -> u32 {
        self.rank
    }
    #[inline]
    fn share(self, per_draw: f64) -> f64 {
        f64::from(self.count) * per_draw
    }
}

impl Share for Weighted {
    #[inline]
    fn rank(self) -> u32 {
        self.rank
    }
    #[inline]
    fn share(self, _: f64) -> f64 {
        self.share
    }
}

/// A [`LeafValues`] as flat arrays (a model file's): the targets `y` (`n × n_outputs`); per
/// tree `t`, its leaves' starts `starts[tree_starts[t]..tree_starts[t + 1]]` (from 0, one
/// more than its leaves) into its entries, which follow the previous trees' in `rows`,
/// `counts` and `weights`; the out-of-bag predictions `oob` (as `y`, NaN for none).
#[derive(Clone, Debug, PartialEq)]
pub struct LeafParts {
    /// Training targets, `n × n_outputs` row-major.
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
    /// Out-of-bag prediction of each training row, as `y`.
    pub oob: Vec<f64>,
}

impl Forest {
    /// The leaf statistics of this regression forest from its training data `x`, `y`
    /// (`n × n_outputs` row-major) and `sample_weight` (the fit's: the in-bag rows are
    /// regenerated from the tree seeds).
    pub fn leaf_values<T: Feature>(
        &self,
        x: Matrix<'_, T>,
        y: &[f64],
        sample_weight: Option<&[f64]>,
    ) -> Result<LeafValues> {
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
        let (n, k) = (self.params.n_samples, self.n_outputs());
        let weights_ok = sample_weight.is_none_or(|w| w.len() == n);
        if x.n_rows() != n || y.len() != n * k || !weights_ok {
            return Err(ForestError::Shape(format!(
                "leaf values need the {n} training rows, their {k} target(s) each and weights"
            )));
        }
        if y.iter().any(|v| !v.is_finite()) {
            return Err(ForestError::InvalidTarget("y holds NaN or infinity".into()));
        }
        let oob = match self.params.has_oob() {
            true => self.oob_predict(x)?.0,
            false => vec![f64::NAN; n * k],
        };
        let trees = map_ordered(self.trees.len(), |t| {
            let counts = in_bag_counts(&self.params, t);
            let tree = &self.trees[t];
            let mut leaves = vec![0u32; n];
            tree.leaves(&x, 0, &mut leaves);
            let mut by_slot: Vec<Vec<(u32, u32, f64)>> = vec![Vec::new(); tree.n_leaves()];
            for (i, &c) in counts.iter().enumerate().filter(|(_, &c)| c > 0) {
                let w = f64::from(c) * sample_weight.map_or(1.0, |sw| sw[i]);
                by_slot[tree.leaf_slot(leaves[i] as usize)].push((i as u32, c, w));
            }
            TreeLeaves::of_slots(by_slot)
        });
        LeafValues::new(y.to_vec(), k, oob, trees)
    }
}

impl TreeLeaves {
    /// From each leaf slot's `(row, count, weight)` entries, rows increasing.
    fn of_slots(by_slot: Vec<Vec<(u32, u32, f64)>>) -> TreeLeaves {
        let mut leaves = TreeLeaves {
            start: vec![0],
            rows: Vec::new(),
            counts: Vec::new(),
            weights: Vec::new(),
            spans: Vec::new(),
            entries: Entries::Counted(Vec::new()),
        };
        for entries in by_slot {
            leaves.rows.extend(entries.iter().map(|e| e.0));
            leaves.counts.extend(entries.iter().map(|e| e.1));
            leaves.weights.extend(entries.iter().map(|e| e.2));
            leaves.start.push(leaves.rows.len() as u32);
        }
        leaves
    }

    /// Fills the derived `spans` and `entries` (`rank[o][row]`: row's rank in output `o`),
    /// [`Counted`] ones with `counts_only`.
    fn derive(&mut self, rank: &[Vec<u32>], counts_only: bool) {
        let leaves = || self.start.windows(2).map(|s| s[0] as usize..s[1] as usize);
        let totals: Vec<f64> = leaves().map(|r| self.weights[r].iter().sum()).collect();
        self.spans = (leaves().zip(&totals))
            .map(|(range, &total)| {
                let draws =
                    (self.counts[range.clone()].iter()).fold(0u32, |a, &c| a.saturating_add(c));
                let draws = if total > 0.0 { draws } else { 0 };
                Span {
                    start: range.start as u32,
                    draws,
                }
            })
            .collect();
        let end = self.start.last().copied().unwrap_or(0);
        self.spans.push(Span {
            start: end,
            draws: 0,
        });
        let (mut counted, mut weighted) = (Vec::new(), Vec::new());
        for rank in rank {
            for ((range, &total), span) in leaves().zip(&totals).zip(&self.spans) {
                for e in range {
                    let rank = rank[self.rows[e] as usize];
                    match counts_only {
                        true => counted.push(Counted {
                            rank,
                            count: self.counts[e],
                        }),
                        false => weighted.push(Weighted {
                            share: if span.draws > 0 {
                                self.weights[e] / total
                            } else {
                                0.0
                            },
                            rank,
                        }),
                    }
                }
            }
        }
        self.entries = match counts_only {
            true => Entries::Counted(counted),
            false => Entries::Weighted(weighted),
        };
    }

    /// Whether every weight is its entry's count.
    fn counts_only(&self) -> bool {
        (self.weights.iter().zip(&self.counts)).all(|(&w, &c)| w == f64::from(c))
    }
}

impl LeafValues {
    /// Derives the ranks and sorted targets of each output.
    fn new(
        y: Vec<f64>,
        n_outputs: usize,
        oob: Vec<f64>,
        mut trees: Vec<TreeLeaves>,
    ) -> Result<LeafValues> {
        let n = y.len() / n_outputs.max(1);
        if n > u32::MAX as usize {
            return Err(ForestError::Shape(
                "leaf values take at most 2³² rows".into(),
            ));
        }
        let mut sorted = Vec::with_capacity(y.len());
        let rank: Vec<Vec<u32>> = (0..n_outputs)
            .map(|o| {
                let target = |i: u32| y[i as usize * n_outputs + o];
                let mut order: Vec<u32> = (0..n as u32).collect();
                order.sort_by(|&a, &b| target(a).total_cmp(&target(b)).then(a.cmp(&b)));
                let mut rank = vec![0u32; n];
                for (r, &i) in order.iter().enumerate() {
                    rank[i as usize] = r as u32;
                }
                sorted.extend(order.iter().map(|&i| target(i)));
                rank
            })
            .collect();
        let counts_only = trees.iter().all(TreeLeaves::counts_only);
        trees.iter_mut().for_each(|t| t.derive(&rank, counts_only));
        Ok(LeafValues {
            y,
            n_outputs,
            oob,
            trees,
            sorted,
        })
    }

    /// Number of targets of each training row.
    pub fn n_outputs(&self) -> usize {
        self.n_outputs
    }

    /// The training targets, `n × n_outputs` row-major.
    pub fn y(&self) -> &[f64] {
        &self.y
    }

    /// The out-of-bag prediction of every training row, as [`LeafValues::y`]; NaN where no
    /// tree left the row out (every row, for a forest without bootstrap).
    pub fn oob_prediction(&self) -> &[f64] {
        &self.oob
    }

    /// Bytes it holds in memory: its arrays and what the quantiles read (derived).
    pub fn heap_bytes(&self) -> usize {
        let per_tree = |t: &TreeLeaves| {
            4 * (t.start.len() + t.rows.len() + t.counts.len())
                + 8 * t.weights.len()
                + std::mem::size_of::<Span>() * t.spans.len()
                + match &t.entries {
                    Entries::Counted(e) => std::mem::size_of::<Counted>() * e.len(),
                    Entries::Weighted(e) => std::mem::size_of::<Weighted>() * e.len(),
                }
        };
        8 * (self.y.len() + self.oob.len() + self.sorted.len())
            + self.trees.iter().map(per_tree).sum::<usize>()
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
            oob: self.oob.clone(),
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
        let (n, k) = (forest.params.n_samples, forest.n_outputs());
        let same = p.rows.len() == p.counts.len() && p.rows.len() == p.weights.len();
        let targets_ok = p.y.len() == n * k && p.y.iter().all(|v| v.is_finite());
        let oob_ok = p.oob.len() == n * k && p.oob.iter().all(|v| !v.is_infinite());
        if !same || !targets_ok || !oob_ok {
            return Err(bad("arrays of inconsistent lengths or targets"));
        }
        if p.tree_starts.len() != forest.trees.len() + 1 || p.tree_starts[0] != 0 {
            return Err(bad("not one list of leaves per tree"));
        }
        let mut trees = Vec::with_capacity(forest.trees.len());
        let mut entry = 0usize;
        for (t, s) in p.tree_starts.windows(2).enumerate() {
            let (a, b) = (s[0] as usize, s[1] as usize);
            let start = p.starts.get(a..b).ok_or_else(|| bad("leaf starts"))?;
            let ordered = start.first() == Some(&0) && start.windows(2).all(|w| w[0] <= w[1]);
            if !ordered || start.len() != forest.trees[t].n_leaves() + 1 {
                return Err(bad("leaf starts"));
            }
            let end = entry + *start.last().unwrap_or(&0) as usize;
            let rows = p.rows.get(entry..end).ok_or_else(|| bad("entries"))?;
            let (counts, weights) = (&p.counts[entry..end], &p.weights[entry..end]);
            let valid = rows.iter().all(|&r| (r as usize) < n)
                && counts.iter().all(|&c| c > 0)
                && weights.iter().all(|w| w.is_finite() && *w >= 0.0);
            if !valid {
                return Err(bad("entries out of range"));
            }
            let increasing = (start.windows(2))
                .all(|s| rows[s[0] as usize..s[1] as usize].is_sorted_by(|a, b| a < b));
            if !increasing {
                return Err(bad("a leaf's rows out of order"));
            }
            trees.push(TreeLeaves {
                start: start.to_vec(),
                rows: rows.to_vec(),
                counts: counts.to_vec(),
                weights: weights.to_vec(),
                spans: Vec::new(),
                entries: Entries::Counted(Vec::new()),
            });
            entry = end;
        }
        if entry != p.rows.len() {
            return Err(bad("entries left over"));
        }
        LeafValues::new(p.y, k, p.oob, trees)
    }
}

#[cfg(test)]
mod tests;
