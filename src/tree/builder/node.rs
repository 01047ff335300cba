//! One node of the tree being grown: its leaf, the stopping rules, the choice and
//! application of its split, and the bins its children keep.

use std::sync::atomic::Ordering::Relaxed;

use super::{Grower, Pending};
use crate::data::Feature;
use crate::rng::TreeRng;
use crate::tree::criterion::{Criterion, EPSILON};
use crate::tree::monotone::Bounds;
use crate::tree::split::{NodeCtx, NodeDraw, NodeRows, ThresholdRule};

impl<'a, T: Feature, C: Criterion> Grower<'a, T, C> {
    /// Adds the node `samples[start..end]` (`node_rows`: start, end, depth and the length
    /// of its constant prefix) to the tree as a leaf and, unless a stopping rule holds,
    /// chooses and applies its split. `bounds` are the node's under the monotonic
    /// constraints (unbounded without).
    pub(super) fn evaluate<R: ThresholdRule>(
        &mut self,
        samples: &mut [u32],
        features: &mut [u32],
        node_rows: (usize, usize, usize, usize),
        bounds: Bounds,
        rng: &mut TreeRng,
    ) -> (u32, Option<Pending>) {
        let (start, end, ..) = node_rows;
        self.splitter.begin_node(start, end);
        let evaluated = self.evaluate_node::<R>(samples, features, node_rows, bounds, rng);
        self.splitter.end_node();
        evaluated
    }

    /// [`Grower::evaluate`] between the splitter's `begin_node` and `end_node`.
    fn evaluate_node<R: ThresholdRule>(
        &mut self,
        samples: &mut [u32],
        features: &mut [u32],
        (start, end, depth, n_constant): (usize, usize, usize, usize),
        bounds: Bounds,
        rng: &mut TreeRng,
    ) -> (u32, Option<Pending>) {
        let (rules, split_rows) = (self.rules(), self.split_rows(depth));
        let mut rows = NodeRows {
            samples: &mut samples[start..end],
            ys: &mut self.ys[start..end],
            ws: &mut self.ws[start..end],
        };
        if self.left_rows == (start, end) {
            // Nothing has moved these rows since their parent summed them.
            self.total.copy_from_slice(&self.left);
        } else if self.right_rows == (start, end) {
            self.total.copy_from_slice(&self.right_sums);
        } else {
            self.crit.accumulate(&mut self.total, rows.ys, rows.ws);
        }
        let impurity = self.crit.node_impurity(&self.total, rows.ys, rows.ws);
        (self.crit).node_value(&self.total, rows.ys, rows.ws, &mut self.value);
        let mono = self.params.monotonic_cst.as_deref();
        if mono.is_some() {
            bounds.clip(&mut self.value);
        }
        let n = end - start;
        let node = self
            .tree
            .push_leaf(impurity, self.total[0], n as u32, &self.value);
        let p = self.params;
        let w = self.total[0];
        if depth >= p.max_depth
            || n < p.min_samples_split
            || n < p.min_samples_leaf.saturating_mul(2)
            || w < 2.0 * self.min_weight_leaf
            || self.crit.is_pure(&self.total, rows.ys, rows.ws, impurity)
            || self.stop.is_some_and(|s| s.load(Relaxed))
        {
            return (node, None);
        }
        let ctx = NodeCtx {
            total: &self.total,
            mono: mono.map(|cst| (cst, bounds)),
            ..rules
        };
        let draw = NodeDraw {
            features: &mut *features,
            n_constant,
            max_features: p.max_features,
            rng,
        };
        let (split, n_constant) = (self.splitter).find::<C, R>(
            &self.x,
            self.levels,
            &ctx,
            &mut rows,
            start,
            draw,
            split_rows,
        );
        let split = match split {
            Some(s) => s,
            None => return (node, None),
        };
        let categories = match split.is_categorical() {
            true => self.splitter.chosen_categories().to_vec(),
            false => Vec::new(),
        };
        self.crit.accumulate(
            &mut self.left,
            &rows.ys[..split.n_left],
            &rows.ws[..split.n_left],
        );
        self.left_rows = (start, start + split.n_left);
        for ((r, t), l) in self.right.iter_mut().zip(&self.total).zip(&self.left) {
            *r = t - l;
        }
        let (wl, wr, nl) = (self.left[0], self.right[0], split.n_left);
        let (ys, ws) = (&rows.ys, &rows.ws);
        let improvement = (w / self.root_weight)
            * (impurity
                - wl / w * self.crit.node_impurity(&self.left, &ys[..nl], &ws[..nl])
                - wr / w * self.crit.node_impurity(&self.right, &ys[nl..], &ws[nl..]));
        if improvement + EPSILON < p.min_impurity_decrease {
            return (node, None);
        }
        let bounds = match mono {
            Some(cst) => {
                let sign = cst.get(split.feature as usize).copied().unwrap_or(0);
                let (left, right) = (&self.left, &self.right);
                bounds.children(sign, || self.crit.middle_value(left, right, ys, ws, nl))
            }
            None => (bounds, bounds),
        };
        let left = match self.defer_children {
            // The children's bins are kept when the node is split, if it is.
            true => {
                self.splitter.defer_children();
                self.left.clone()
            }
            false => {
                let node_rows = (start, end, split.n_left);
                self.keep_children(samples, features, node_rows, n_constant, split_rows);
                Vec::new()
            }
        };
        (
            node,
            Some(Pending {
                node,
                start,
                end,
                depth,
                split,
                improvement,
                n_constant,
                bounds,
                left,
                categories,
            }),
        )
    }

    /// The fewest rows a child of a node at `depth` needs to be split (the others are
    /// leaves by size).
    pub(super) fn split_rows(&self, depth: usize) -> usize {
        let p = self.params;
        match depth + 1 >= p.max_depth {
            true => usize::MAX,
            false => p
                .min_samples_split
                .max(p.min_samples_leaf.saturating_mul(2)),
        }
    }

    /// Has the splitter keep the bins of the children of the node `start..end` just split
    /// (`node_rows`: start, end and the left child's rows; the rows partitioned, the left
    /// child's statistics in `self.left`) for the features after the constant prefix
    /// `n_constant` (every feature in best-first growth, whose children inherit none). The
    /// children are scanned as they are kept when the splitter does that
    /// ([`Splitter::scans_children`]; not under monotonic constraints, whose children's
    /// bounds follow from the split).
    pub(super) fn keep_children(
        &mut self,
        samples: &mut [u32],
        features: &[u32],
        (start, end, n_left): (usize, usize, usize),
        n_constant: usize,
        split_rows: usize,
    ) {
        let rules = self.rules();
        let scanned = self.params.monotonic_cst.is_none() && self.splitter.scans_children();
        self.right_rows = match scanned {
            true => (start + n_left, end),
            false => (0, 0),
        };
        if scanned {
            // As the right child's own node will sum them.
            let (ys, ws) = (&self.ys[start + n_left..end], &self.ws[start + n_left..end]);
            self.crit.accumulate(&mut self.right_sums, ys, ws);
        }
        let child = |total| NodeCtx { total, ..rules };
        let n = end - start;
        let children = scanned.then(|| {
            [
                (child(&self.left), n_left),
                (child(&self.right_sums), n - n_left),
            ]
        });
        let varying = match self.best_first_bins {
            true => features,
            false => &features[n_constant..],
        };
        let rows = NodeRows {
            samples: &mut samples[start..end],
            ys: &mut self.ys[start..end],
            ws: &mut self.ws[start..end],
        };
        let (x, levels) = (&self.x, self.levels);
        (self.splitter).keep_children(
            x, levels, self.crit, &rows, n_left, varying, split_rows, children,
        );
    }
}
