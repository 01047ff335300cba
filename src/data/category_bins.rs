//! Histogram bins of categorical columns: a bin per category, or per frequent category.
//!
//! A categorical column's values are category codes `0, 1, …` (NaN missing) whose order
//! means nothing to the split, so its bins are not its cuts: when the column has at most
//! `bins` categories (`bins`: `max_bins`, at most 255 when it holds NaN, whose bin is
//! [`crate::data::NAN_CODE`]) each gets its own bin, numbered in category order. With more,
//! the categories fill the bins in category order as equal-frequency bins of their codes
//! would: one at least as frequent as a bin's share keeps a bin of its own, rarer
//! neighbours share one. The rare categories then always go to the same side as their
//! neighbours (LightGBM pools its rare categories into one bin; neighbours keep what an
//! order of the categories may say, years or ids in time, which one shared bin loses).
//! Counts come from the rows that place the numeric edges (every row up to
//! [`super::SAMPLE_ROWS`], else the fit's sample), so the bins are deterministic.
//!
//! The table of a column maps each category to its bin: a split of bins then reads as a
//! split of categories ([`CategoryTable::categories_left`]), which is what the tree stores.

use super::{Feature, Matrix};

/// A category no training row holds: not in any bin.
const ABSENT: u16 = u16::MAX;

/// The bin of each category of one categorical column.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CategoryTable {
    /// `bin[c]`: the bin of category `c`, [`ABSENT`] for a category no row holds.
    bin: Vec<u16>,
    /// The bins given out.
    used: u16,
    /// The most bins the column may have.
    cap: u16,
    /// When categories share bins: each bin's first category, in category order.
    firsts: Vec<usize>,
}

impl CategoryTable {
    /// The table of the column `j` of `x` counted over `rows` (None: every row), with at most
    /// `bins` bins, writes every row's code into `codes`, `nan_code` for NaN (a column with
    /// NaN has one bin fewer for its categories: the caller's `bins`). Values are checked
    /// category codes (`crate::tree::categories::check_codes`).
    pub(super) fn bin_column<T: Feature>(
        x: &Matrix<'_, T>,
        j: usize,
        rows: Option<&[u32]>,
        (bins, nan_code): (usize, u8),
        codes: &mut [u8],
    ) -> CategoryTable {
        let category = |i: usize| {
            let v = x.get(i, j).to_f64();
            (!v.is_nan()).then_some(v as usize)
        };
        let mut counts: Vec<u32> = Vec::new();
        let mut count = |i: usize| {
            if let Some(c) = category(i) {
                if counts.len() <= c {
                    counts.resize(c + 1, 0);
                }
                counts[c] += 1;
            }
        };
        match rows {
            Some(rows) => rows.iter().for_each(|&i| count(i as usize)),
            None => (0..x.n_rows()).for_each(count),
        }
        let mut table = CategoryTable::of_counts(&counts, bins);
        for (i, code) in codes.iter_mut().enumerate() {
            *code = match category(i) {
                Some(c) => table.code_of(c),
                None => nan_code,
            };
        }
        table
    }

    /// The table of categories counted `counts`, in at most `bins` bins (see the module docs).
    fn of_counts(counts: &[u32], bins: usize) -> CategoryTable {
        let present = (0..counts.len()).filter(|&c| counts[c] > 0);
        let mut bin = vec![ABSENT; counts.len()];
        let mut firsts = Vec::new();
        let n_present = present.clone().count();
        if n_present <= bins {
            for (b, c) in present.enumerate() {
                bin[c] = b as u16;
            }
        } else {
            // Greedy equal-frequency bins in category order: a bin closes before a category
            // that would take it past its share of the rows still to bin.
            let mut rest: u64 = counts.iter().map(|&k| u64::from(k)).sum();
            let (mut fill, mut bins_left) = (0u64, bins as u64);
            for c in present {
                let k = u64::from(counts[c]);
                let closes = fill > 0 && bins_left > 1 && fill + k > (fill + rest) / bins_left;
                if closes {
                    bins_left -= 1;
                    fill = 0;
                }
                if firsts.is_empty() || closes {
                    firsts.push(c);
                }
                bin[c] = (firsts.len() - 1) as u16;
                fill += k;
                rest -= k;
            }
        }
        CategoryTable {
            bin,
            used: if firsts.is_empty() {
                n_present
            } else {
                firsts.len()
            } as u16,
            cap: bins as u16,
            firsts,
        }
    }

    /// The bin of category `c`. One the counted rows did not hold takes the bin of its
    /// neighbours when categories share bins; else a new bin while there is room, then the
    /// last one.
    fn code_of(&mut self, c: usize) -> u8 {
        if self.bin.len() <= c {
            self.bin.resize(c + 1, ABSENT);
        }
        if self.bin[c] == ABSENT {
            self.bin[c] = match self.firsts.partition_point(|&f| f <= c) {
                0 if self.firsts.is_empty() && self.used < self.cap => {
                    self.used += 1;
                    self.used - 1
                }
                0 if self.firsts.is_empty() => self.used - 1,
                0 => 0,
                b => (b - 1) as u16,
            };
        }
        self.bin[c] as u8
    }

    /// The categories of the bins in `left` (bit `b` of word `b / 64`: bin `b` goes left;
    /// bins past the words go left when `unseen_left`) as a set of categories in the same
    /// form, a category no training row held going left when `unseen_left`.
    pub fn categories_left(&self, left: &[u64], unseen_left: bool) -> Vec<u64> {
        let bit = |w: &[u64], k: usize| w.get(k / 64).map(|w| w >> (k % 64) & 1 == 1);
        // Past the table, to the end of its last word: categories no row held.
        let mut set = vec![if unseen_left { u64::MAX } else { 0 }; self.bin.len().div_ceil(64)];
        for (c, &b) in self.bin.iter().enumerate() {
            let goes = match b {
                ABSENT => unseen_left,
                b => bit(left, b as usize).unwrap_or(unseen_left),
            };
            set[c / 64] &= !(1 << (c % 64));
            set[c / 64] |= u64::from(goes) << (c % 64);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Layout;

    fn table(values: &[f64], bins: usize) -> (CategoryTable, Vec<u8>) {
        let x = Matrix::new(values, values.len(), 1, Layout::ColumnMajor).unwrap();
        let mut codes = vec![0u8; values.len()];
        let t = CategoryTable::bin_column(&x, 0, None, (bins, 255), &mut codes);
        (t, codes)
    }

    #[test]
    fn few_categories_get_a_bin_each_in_category_order() {
        let (t, codes) = table(&[7.0, 2.0, 7.0, 0.0, f64::NAN], 255);
        assert_eq!(codes, vec![2, 1, 2, 0, 255]);
        // Bins 0 and 2 left: categories 0 and 7; 1, 3..6 (absent) go the unseen side.
        assert_eq!(t.categories_left(&[0b101], false), vec![0b1000_0001]);
        assert_eq!(t.categories_left(&[0b101], true), vec![!0b100]);
    }

    #[test]
    fn rare_categories_share_a_bin_with_their_neighbours() {
        // 10 rows in 3 bins of about a third each, in category order: {0}, {1, 3}, {5, 9}.
        let values = [5.0, 1.0, 5.0, 0.0, 3.0, 5.0, 1.0, 9.0, 5.0, 0.0];
        let (t, codes) = table(&values, 3);
        assert_eq!(codes, vec![2, 1, 2, 0, 1, 2, 1, 2, 2, 0]);
        // Bin 1 left: 1 and 3 together; 2 and 4 (absent) the unseen side.
        assert_eq!(t.categories_left(&[0b010], false), vec![0b1010]);
        // A category the counted rows missed joins the bin of its neighbours below.
        let mut t = t;
        assert_eq!((t.code_of(2), t.code_of(7), t.code_of(12)), (1, 2, 2));
    }

    #[test]
    fn shared_bins_hold_about_equal_rows_and_frequent_categories_alone() {
        // 1 000 categories, one of them a third of the rows, into 16 bins: that one alone,
        // the others' bins within about a bin's share (281 rows, 165 once it is set apart).
        let mut counts = vec![3u32; 1000];
        counts[500] = 1500;
        let t = CategoryTable::of_counts(&counts, 16);
        let mut rows = vec![0u32; 16];
        for (c, &b) in t.bin.iter().enumerate() {
            rows[b as usize] += counts[c];
        }
        let alone = t.bin.iter().filter(|&&b| b == t.bin[500]).count();
        assert_eq!(alone, 1);
        assert_eq!(t.used as usize, t.firsts.len());
        assert!(t.used <= 16 && t.used >= 14, "{}", t.used);
        let mut others = rows
            .iter()
            .enumerate()
            .filter(|&(b, &r)| r > 0 && b != t.bin[500] as usize);
        assert!(others.all(|(_, &r)| (100..=300).contains(&r)), "{rows:?}");
    }

    #[test]
    fn a_category_outside_the_sample_gets_a_bin_of_its_own_when_none_is_shared() {
        let mut t = CategoryTable::of_counts(&[2, 0, 1], 3);
        assert_eq!((t.code_of(0), t.code_of(2)), (0, 1));
        assert_eq!(t.code_of(1), 2);
        // No room left: the last bin is shared from now on.
        assert_eq!((t.code_of(7), t.code_of(5)), (2, 2));
    }
}
