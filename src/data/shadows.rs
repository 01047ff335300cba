//! Shadow columns: virtual copies of columns read at permuted rows, appended to a
//! [`Matrix`](super::Matrix) without copying X.
//!
//! Shadow `k` reads column `sources[k]` at row `perm[(i + shifts[k]) mod n]`:
//! - *shared* shadows (the corrected MDI of `importance::corrected`, as in ranger): one per
//!   column, all through the one permutation `perm` (every shift 0);
//! - *independent* shadows (Boruta's shadow features, random probes): each through its own
//!   permutation. Shadow `k`'s permutation `i ↦ perm[(i + shifts[k]) mod n]` is uniformly
//!   distributed, and distinct shifts pair the rows of any two shadows at random, as
//!   independent shuffles would; storing one permutation and a shift per shadow keeps the
//!   memory at `4n` bytes for any number of shadows instead of `4n` per shadow.
//!
//! Invariant: `perm` is a permutation of `0..n`, every shift is below `n` and every source
//! below the matrix's stored column count (checked by [`Matrix::with_shadows`]).

use crate::error::{ForestError, Result};
use crate::rng::{stream, tree_seed, TreeRng};

/// Shadow columns for a matrix of `n` rows; see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shadows {
    perm: Vec<u32>,
    sources: Vec<u32>,
    shifts: Vec<u32>,
}

/// The row permutation of the shadow columns for master seed `seed` (a full Fisher–Yates
/// shuffle of `0..n` on the named generator, so it never depends on the thread count).
pub fn shadow_permutation(n: usize, seed: u64) -> Vec<u32> {
    let mut rows: Vec<u32> = (0..n as u32).collect();
    let mut rng = TreeRng::new(tree_seed(seed, stream::FOREST, stream::SHADOWS));
    rng.partial_shuffle(&mut rows, n);
    rows
}

impl Shadows {
    /// One shadow per column `0..p`, all read through `perm`. Fails unless `perm` is a
    /// permutation of `0..perm.len()`.
    pub fn shared_with(perm: Vec<u32>, p: usize) -> Result<Self> {
        let mut seen = vec![false; perm.len()];
        for &r in &perm {
            match seen.get_mut(r as usize) {
                Some(s) if !*s => *s = true,
                _ => {
                    return Err(ForestError::Shape(format!(
                        "shadow columns need a permutation of the {} rows",
                        perm.len()
                    )))
                }
            }
        }
        let sources = (0..p as u32).collect();
        Ok(Shadows {
            perm,
            sources,
            shifts: vec![0; p],
        })
    }

    /// Shadow `k` of column `sources[k]` of an `n`-row matrix, all through the one
    /// permutation of `seed`.
    pub fn shared(n: usize, sources: Vec<u32>, seed: u64) -> Self {
        Shadows {
            perm: shadow_permutation(n, seed),
            shifts: vec![0; sources.len()],
            sources,
        }
    }

    /// Shadow `k` of column `sources[k]`, each through its own permutation of the `n`
    /// rows, drawn from `seed`. Shifts are distinct while there are at most `n` shadows.
    pub fn independent(n: usize, sources: Vec<u32>, seed: u64) -> Self {
        let perm = shadow_permutation(n, seed);
        let mut rng = TreeRng::new(tree_seed(seed, stream::FOREST, stream::SHADOW_SHIFTS));
        let shifts = if n == 0 {
            vec![0; sources.len()]
        } else if sources.len() <= n {
            let mut all: Vec<u32> = (0..n as u32).collect();
            rng.partial_shuffle(&mut all, sources.len());
            all.truncate(sources.len());
            all
        } else {
            (0..sources.len()).map(|_| rng.below(n) as u32).collect()
        };
        Shadows {
            perm,
            sources,
            shifts,
        }
    }

    /// Number of shadow columns.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    /// Whether there is no shadow column.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// Rows of the matrix the shadows permute.
    pub fn n_rows(&self) -> usize {
        self.perm.len()
    }

    /// The column each shadow reads.
    pub fn sources(&self) -> &[u32] {
        &self.sources
    }

    /// Where shadow `k` reads row `i`: `(row, column)` of the stored matrix.
    #[inline(always)]
    pub(super) fn locate(&self, i: usize, k: usize) -> (usize, usize) {
        let n = self.perm.len();
        let mut r = i + self.shifts[k] as usize;
        if r >= n {
            r -= n;
        }
        (self.perm[r] as usize, self.sources[k] as usize)
    }

    /// [`Self::locate`] without panicking on an out-of-range `i` or `k`.
    #[inline(always)]
    pub(super) fn try_locate(&self, i: usize, k: usize) -> Option<(usize, usize)> {
        (i < self.perm.len() && k < self.sources.len()).then(|| self.locate(i, k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_permutation(p: &[u32]) -> bool {
        let mut s = p.to_vec();
        s.sort_unstable();
        s.iter().enumerate().all(|(i, &v)| v as usize == i)
    }

    #[test]
    fn permutation_is_a_permutation_and_seeded() {
        let p = shadow_permutation(1000, 7);
        assert!(is_permutation(&p));
        assert_eq!(p, shadow_permutation(1000, 7));
        assert_ne!(p, shadow_permutation(1000, 8));
    }

    #[test]
    fn shared_shadows_read_one_permutation() {
        let s = Shadows::shared(50, vec![0, 1, 2], 1);
        let perm = shadow_permutation(50, 1);
        for k in 0..3 {
            for (i, &r) in perm.iter().enumerate() {
                assert_eq!(s.locate(i, k), (r as usize, k));
            }
        }
        assert!(Shadows::shared_with(vec![0, 0, 1], 2).is_err());
        assert!(Shadows::shared_with(vec![0, 3, 1], 2).is_err());
        assert_eq!(Shadows::shared_with(perm, 3).unwrap(), s);
    }

    #[test]
    fn independent_shadows_each_permute_the_rows_differently() {
        let n = 200;
        let s = Shadows::independent(n, vec![4, 4, 0], 9);
        let rows: Vec<Vec<u32>> = (0..3)
            .map(|k| (0..n).map(|i| s.locate(i, k).0 as u32).collect())
            .collect();
        assert!(rows.iter().all(|r| is_permutation(r)));
        assert!(rows[0] != rows[1] && rows[1] != rows[2] && rows[0] != rows[2]);
        assert_eq!((s.locate(0, 1).1, s.locate(0, 2).1), (4, 0));
        assert_eq!(s, Shadows::independent(n, vec![4, 4, 0], 9));
        // More shadows than rows: shifts repeat, rows stay permutations.
        let many = Shadows::independent(3, vec![0; 7], 2);
        assert!((0..7).all(|k| is_permutation(
            &(0..3)
                .map(|i| many.locate(i, k).0 as u32)
                .collect::<Vec<_>>()
        )));
        assert_eq!(many.try_locate(3, 0), None);
    }
}
