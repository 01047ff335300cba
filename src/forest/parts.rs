//! Parts of a forest: the trees `a..b` of a forest grown apart (in another process or on
//! another machine) and put back together.
//!
//! Tree `i` of a forest depends only on the data and `(seed, i)`, so its trees can be grown
//! anywhere in any grouping: [`FitSession::finish_part`] makes the trees `a..b` a forest of
//! their own, with `Resolved::first_tree = a`, and [`Forest::concat`] of parts that cover
//! `0..n` in order is the forest of `n` trees grown at once, bit for bit (the same model
//! bytes). A part is a forest in its own right: it predicts with its trees, and its
//! out-of-bag rows are those its trees have in the whole forest. [`Forest::part`] cuts one
//! from a fitted forest, so that work on its trees can be shared out the same way.
//!
//! [`Forest::assemble`] puts together forests grown on *different* data: Random Patches
//! grown block by block, each on some rows and some columns of a matrix too large for one
//! machine (`forestimp.dask.fit_patches`). Their trees are read again over all the columns;
//! the result predicts and has importances like any forest, but no out-of-bag rows.
//!
//! Invariant: a forest's trees are the consecutive trees `first_tree..first_tree + n` of
//! the sequence its seed defines, unless it is `assembled`.

use std::ops::Range;

use super::{FitSession, Forest};
use crate::error::{invalid, Result};
use crate::tree::Tree;

impl<T: crate::data::Feature> FitSession<'_, T> {
    /// The part of the session's forest made of `trees`, the trees with indices
    /// `first..first + trees.len()` (grown by [`FitSession::fit_range`] on that range).
    pub fn finish_part(&self, first: usize, trees: Vec<Tree>) -> Result<Forest> {
        let total = self.params().n_estimators;
        if trees.is_empty() || first + trees.len() > total {
            return Err(invalid(
                "trees",
                format!(
                    "a part is a non-empty range of the {total} trees, got {first}..{}",
                    first + trees.len()
                ),
            ));
        }
        let mut forest = self.finish_unchecked(trees);
        forest.params.first_tree = first;
        forest.params.n_estimators = forest.trees.len();
        Ok(forest)
    }
}

impl Forest {
    /// Index of the forest's first tree in its seed's sequence: 0 for a whole forest.
    pub fn first_tree(&self) -> usize {
        self.params.first_tree
    }

    /// The forest of the consecutive `parts`, in order: the parts of one forest (the same
    /// parameters, seed and training data shape, the same classes), each starting where the
    /// last one ended. Parts covering `0..n` give the forest of `n` trees grown at once.
    pub fn concat(parts: Vec<Forest>) -> Result<Forest> {
        let mut parts = parts.into_iter();
        let Some(mut forest) = parts.next() else {
            return Err(invalid("parts", "no part to put together"));
        };
        for part in parts {
            let next = forest.params.first_tree + forest.trees.len();
            let mut same = part.params.clone();
            same.first_tree = forest.params.first_tree;
            same.n_estimators = forest.params.n_estimators;
            if same != forest.params
                || part.n_classes != forest.n_classes
                || part.outputs != forest.outputs
            {
                return Err(invalid(
                    "parts",
                    "parts of different forests (parameters, seed, data shape or classes)",
                ));
            }
            if part.params.first_tree != next {
                return Err(invalid(
                    "parts",
                    format!(
                        "parts must follow each other: expected trees from {next}, got {}",
                        part.params.first_tree
                    ),
                ));
            }
            forest.trees.extend(part.trees);
            forest.params.n_estimators = forest.trees.len();
        }
        Ok(forest)
    }

    /// The forest of all the trees of `parts`, in order, each part grown on the columns
    /// `columns` (as many as its features, distinct, below `n_features`) of a matrix of
    /// `n_features` columns: its splits are read as splits on those columns. The parts must
    /// share the task and classes, criterion and splitter. The result is `assembled`: its
    /// trees' rows are not known, so it has no out-of-bag estimates.
    pub fn assemble(parts: Vec<(Forest, Vec<u32>)>, n_features: usize) -> Result<Forest> {
        let Some((first, _)) = parts.first() else {
            return Err(invalid("parts", "no forest to assemble"));
        };
        if n_features > u32::MAX as usize {
            return Err(invalid("n_features", "feature ids are 32-bit"));
        }
        let mut params = first.params.clone();
        let n_classes = first.n_classes;
        let first_outputs = first.outputs.clone();
        let mut trees = Vec::new();
        for (k, (part, columns)) in parts.into_iter().enumerate() {
            let p = &part.params;
            if (p.criterion, p.splitter, part.n_classes)
                != (params.criterion, params.splitter, n_classes)
                || part.outputs != first_outputs
            {
                return Err(invalid(
                    "parts",
                    format!(
                        "forest {k} differs from the first in task, classes, criterion or splitter"
                    ),
                ));
            }
            let mut sorted = columns.clone();
            sorted.sort_unstable();
            sorted.dedup();
            let valid = columns.len() == p.n_features
                && sorted.len() == columns.len()
                && sorted.last().is_some_and(|&c| (c as usize) < n_features);
            if !valid {
                return Err(invalid(
                    "columns",
                    format!(
                        "forest {k} has {} features: it needs as many distinct columns below {n_features}",
                        p.n_features
                    ),
                ));
            }
            trees.extend(part.trees.into_iter().map(|mut t| {
                t.remap_features(&columns);
                t
            }));
        }
        params.n_features = n_features;
        params.tree_features = n_features;
        params.max_features = params.max_features.min(n_features);
        params.n_estimators = trees.len();
        params.first_tree = 0;
        params.assembled = true;
        Ok(Forest {
            params,
            n_classes,
            outputs: first_outputs,
            trees,
        })
    }

    /// The part made of this forest's trees at the positions `range`.
    pub fn part(&self, range: Range<usize>) -> Result<Forest> {
        if range.is_empty() || range.end > self.trees.len() {
            return Err(invalid(
                "trees",
                format!(
                    "a part is a non-empty range of the {} trees, got {range:?}",
                    self.trees.len()
                ),
            ));
        }
        let mut params = self.params.clone();
        params.first_tree += range.start;
        params.n_estimators = range.len();
        Ok(Forest {
            params,
            n_classes: self.n_classes,
            outputs: self.outputs.clone(),
            trees: self.trees[range].to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{CriterionKind, Forest, ForestParams, Layout, Matrix, Targets};

    fn data() -> (Vec<f64>, Vec<u32>) {
        let x: Vec<f64> = (0..400).map(|i| ((i * 37) % 101) as f64).collect();
        let y = (0..100).map(|i| (x[i * 4] > 50.0) as u32).collect();
        (x, y)
    }

    #[test]
    fn parts_grown_apart_are_the_forest_grown_at_once() {
        let (x, y) = data();
        let m = Matrix::new(&x, 100, 4, Layout::RowMajor).unwrap();
        let mut params = ForestParams::random_forest(CriterionKind::Gini);
        params.n_estimators = 7;
        params.seed = 11;
        let t = Targets::classes(&y, 2).unwrap();
        let whole = Forest::fit(&params, m, t, None).unwrap();
        let session = crate::FitSession::new(&params, m, t, None).unwrap();
        let parts: Vec<Forest> = [0..3, 3..4, 4..7]
            .into_iter()
            .map(|r| session.finish_part(r.start, session.fit_range(r)).unwrap())
            .collect();
        assert_eq!(parts[1].first_tree(), 3);
        assert_eq!(parts[1].trees(), &whole.trees()[3..4]);
        // The part's out-of-bag rows are its trees' rows in the whole forest.
        let bits = |f: &Forest| -> Vec<u64> {
            let (values, _) = f.oob_predict(m).unwrap();
            values.iter().map(|v| v.to_bits()).collect()
        };
        assert_eq!(bits(&parts[2]), bits(&whole.part(4..7).unwrap()));
        assert_ne!(bits(&parts[2]), bits(&whole.part(0..3).unwrap()));
        let back = Forest::concat(parts.clone()).unwrap();
        assert_eq!(back, whole);
        #[cfg(feature = "serde")]
        assert_eq!(back.to_bytes().unwrap(), whole.to_bytes().unwrap());
        assert_eq!(
            Forest::concat(vec![whole.part(0..2).unwrap(), whole.part(2..7).unwrap()]).unwrap(),
            whole
        );
        // Out of order, a gap, another forest, nothing: errors.
        assert!(Forest::concat(vec![parts[1].clone(), parts[0].clone()]).is_err());
        assert!(Forest::concat(vec![parts[0].clone(), parts[2].clone()]).is_err());
        params.seed = 12;
        let other = Forest::fit(&params, m, t, None).unwrap();
        assert!(Forest::concat(vec![parts[0].clone(), other.part(3..4).unwrap()]).is_err());
        assert!(Forest::concat(Vec::new()).is_err());
        assert!(whole.part(3..3).is_err() && whole.part(5..8).is_err());
        assert!(session.finish_part(6, session.fit_range(6..8)).is_err());
    }

    #[test]
    fn assembled_patches_predict_over_all_columns_and_have_no_oob() {
        let (x, y) = data();
        let m = Matrix::new(&x, 100, 4, Layout::RowMajor).unwrap();
        let mut params = ForestParams::random_forest(CriterionKind::Gini);
        params.n_estimators = 3;
        // Columns 2, 0 of the first 60 rows, and columns 0..4 of the last 40.
        let left: Vec<f64> = (0..60).flat_map(|i| [x[i * 4 + 2], x[i * 4]]).collect();
        let a = Matrix::new(&left, 60, 2, Layout::RowMajor).unwrap();
        let ya = Targets::classes(&y[..60], 2).unwrap();
        let fa = Forest::fit(&params, a, ya, None).unwrap();
        let b = Matrix::new(&x[240..], 40, 4, Layout::RowMajor).unwrap();
        let fb = Forest::fit(&params, b, Targets::classes(&y[60..], 2).unwrap(), None).unwrap();
        let both = Forest::assemble(
            vec![(fa.clone(), vec![2, 0]), (fb.clone(), vec![0, 1, 2, 3])],
            4,
        )
        .unwrap();
        assert_eq!((both.trees().len(), both.n_features()), (6, 4));
        // Each tree predicts on the wide matrix what it predicted on its own columns.
        let wide = both.part(0..3).unwrap().predict(m).unwrap();
        let narrow: Vec<f64> = (0..100).flat_map(|i| [x[i * 4 + 2], x[i * 4]]).collect();
        let narrow = Matrix::new(&narrow, 100, 2, Layout::RowMajor).unwrap();
        assert_eq!(wide, fa.predict(narrow).unwrap());
        assert_eq!(
            both.part(3..6).unwrap().predict(m).unwrap(),
            fb.predict(m).unwrap()
        );
        assert!(both.oob_predict(m).is_err());
        #[cfg(feature = "serde")]
        assert_eq!(Forest::from_bytes(&both.to_bytes().unwrap()).unwrap(), both);
        // Wrong column lists, other classes: errors.
        for columns in [vec![2], vec![2, 2], vec![2, 4]] {
            assert!(Forest::assemble(vec![(fa.clone(), columns)], 4).is_err());
        }
        let three = Forest::fit(&params, b, Targets::classes(&y[60..], 3).unwrap(), None).unwrap();
        assert!(
            Forest::assemble(vec![(fb, vec![0, 1, 2, 3]), (three, vec![0, 1, 2, 3])], 4).is_err()
        );
    }
}
