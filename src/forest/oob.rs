//! Out-of-bag estimates: each training row predicted by the trees that did not draw it.
//!
//! In-bag sets are regenerated from the tree seeds (never stored in the model) into one
//! bitset per tree; each row sums its out-of-bag trees in the order of predictions
//! ([`Forest::sum_over_trees`]).

use super::sampling::in_bag_counts;
use super::Forest;
use crate::data::{Feature, Matrix};
use crate::error::{ForestError, Result};
use crate::parallel::map_ordered;

/// Bit `i` set when row `i` is in the bag of the tree.
pub(crate) fn in_bag_bits(forest: &Forest, tree: usize) -> Vec<u64> {
    let counts = in_bag_counts(&forest.params, tree);
    let mut bits = vec![0u64; counts.len().div_ceil(64)];
    for (i, &c) in counts.iter().enumerate() {
        if c > 0 {
            bits[i / 64] |= 1 << (i % 64);
        }
    }
    bits
}

impl Forest {
    /// The check every out-of-bag measure makes first: the forest has out-of-bag rows,
    /// `x` has the forest's features and exactly its training rows, and `n_targets` (when
    /// given) is one target per row. `what` names the measure in the messages.
    pub(crate) fn check_training<T: Feature>(
        &self,
        x: &Matrix<'_, T>,
        n_targets: Option<usize>,
        what: &str,
    ) -> Result<()> {
        if self.params.assembled {
            return Err(ForestError::Unsupported(format!(
                "{what} needs out-of-bag rows, which a forest assembled from patches does not \
                 have (each patch has its own)"
            )));
        }
        if !self.params.has_oob() {
            return Err(ForestError::Unsupported(format!(
                "{what} needs out-of-bag rows: bootstrap=True or max_samples < n_samples"
            )));
        }
        self.check_input(x)?;
        let n = self.params.n_samples;
        if x.n_rows() != n || n_targets.is_some_and(|m| m != n) {
            return Err(ForestError::Shape(format!(
                "{what} needs the {n} training rows and their targets, got X with {} rows{}",
                x.n_rows(),
                n_targets.map_or(String::new(), |m| format!(" and {m} targets")),
            )));
        }
        Ok(())
    }

    /// Out-of-bag prediction for the training matrix `x`: the mean leaf value over the trees
    /// for which each row is out of bag (`n_rows × width`, NaN where there is none), and
    /// that number of trees per row.
    pub fn oob_predict<T: Feature>(&self, x: Matrix<'_, T>) -> Result<(Vec<f64>, Vec<u32>)> {
        self.check_training(&x, None, "out-of-bag prediction")?;
        let bags = map_ordered(self.trees.len(), |t| in_bag_bits(self, t));
        let w = self.width();
        let n = x.n_rows();
        // Interleave the count with the values so one parallel pass fills both.
        let mut out = vec![0.0; n * (w + 1)];
        let out_of_bag = |t: usize, i: usize| bags[t][i / 64] >> (i % 64) & 1 == 0;
        let add = |acc: &mut [f64], t: usize, slot| {
            let value = self.trees[t].slot_value(slot);
            acc[..w].iter_mut().zip(value).for_each(|(a, v)| *a += v);
            acc[w] += 1.0;
        };
        self.sum_over_trees(&x, &mut out, w + 1, &out_of_bag, &add);
        let mut values = Vec::with_capacity(n * w);
        let mut counts = Vec::with_capacity(n);
        for row in out.chunks(w + 1) {
            let c = row[w];
            values.extend(
                row[..w]
                    .iter()
                    .map(|v| if c > 0.0 { v / c } else { f64::NAN }),
            );
            counts.push(c as u32);
        }
        Ok((values, counts))
    }
}
