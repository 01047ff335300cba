//! Which side of a cut each row of a node goes to, one byte a row (1: left), read from
//! what the search has at hand: values, codes (byte or wide), a sparse candidate's
//! entries, or the lossless codes at the rows' sample ids. The gathered source marks its
//! best candidate's rows before a new gather overwrites that candidate's column.

use crate::data::{Feature, Levels};
use crate::tree::goes_left;
use crate::tree::split::last_code_left;
use crate::tree::split::read::sparse_gather::Entries;

/// Flags the rows that go left (by [`goes_left`]).
pub(crate) fn mark_left<V: Copy>(
    xf: &[V],
    value: impl Fn(V) -> f64,
    threshold: f64,
    missing_left: bool,
    flags: &mut Vec<u8>,
) {
    flags.clear();
    let left = |v| goes_left(value(v), threshold, missing_left);
    flags.extend(xf.iter().map(|&v| u8::from(left(v))));
}

/// Whether category `v` (NaN: missing) goes left under the set `left` (bit `c` of word
/// `c / 64`), NaN going left when `missing_left`: the routing of a chosen categorical
/// split ([`crate::tree::split::scan::categories`]), whose set covers every code of its
/// node.
#[inline(always)]
pub(crate) fn category_left(v: f64, left: &[u64], missing_left: bool) -> bool {
    if v.is_nan() {
        return missing_left;
    }
    let c = v as usize;
    left.get(c / 64).is_some_and(|w| w >> (c % 64) & 1 == 1)
}

/// The category of a gathered value: its code, NaN for a missing one. With `nan_bin` the
/// values are the histogram's codes, whose [`crate::data::NAN_CODE`] is the missing-values bin.
#[inline(always)]
pub(crate) fn category_value<T: Feature>(v: T, nan_bin: bool) -> f64 {
    match nan_bin && v.code() == usize::from(crate::data::NAN_CODE) {
        true => f64::NAN,
        false => v.to_f64(),
    }
}

/// Flags the rows whose category goes left under the set `left` ([`category_left`]).
pub(crate) fn mark_categories_left<T: Feature>(
    xf: &[T],
    nan_bin: bool,
    left: &[u64],
    missing_left: bool,
    flags: &mut Vec<u8>,
) {
    flags.clear();
    let goes = |&v: &T| {
        u8::from(category_left(
            category_value(v, nan_bin),
            left,
            missing_left,
        ))
    };
    flags.extend(xf.iter().map(goes));
}

/// Flags the rows whose code is at most `last`: those that go left, as the gathered
/// source's `apply` partitions coded rows (no level lookup, no float compare).
pub(crate) fn mark_codes_left<K: Copy + Ord>(codes: &[K], last: K, flags: &mut Vec<u8>) {
    flags.clear();
    flags.extend(codes.iter().map(|&c| u8::from(c <= last)));
}

/// One byte a row of the node, 1 for the rows that go left under threshold `t`.
pub(crate) fn mark_entries_left<T: Feature>(
    entries: &Entries<T>,
    n: usize,
    t: f64,
    flags: &mut Vec<u8>,
) {
    flags.clear();
    flags.resize(n, u8::from(goes_left(0.0, t, false)));
    for (&j, &v) in entries.pos.iter().zip(&entries.vals) {
        flags[j as usize] = u8::from(goes_left(v.to_f64(), t, false));
    }
}

/// One byte per row of the node `samples`, 1 where the row's value of feature `f` (a
/// column with lossless codes) goes left under threshold `t`.
pub(crate) fn mark_kept_left(
    levels: &Levels,
    f: usize,
    t: f64,
    samples: &[u32],
    flags: &mut Vec<u8>,
) {
    if let Some(c) = levels.column(f) {
        mark_codes_left_at(&c.codes, &c.values, t, samples, flags);
    } else if let Some(w) = levels.wide(f) {
        mark_codes_left_at(&w.codes, &w.values, t, samples, flags);
    }
}

/// [`mark_kept_left`] of codes `codes` of increasing `levels`.
fn mark_codes_left_at<K: Feature>(
    codes: &[K],
    levels: &[f64],
    t: f64,
    samples: &[u32],
    flags: &mut Vec<u8>,
) {
    let last = last_code_left(levels, t);
    flags.clear();
    flags.extend(
        samples
            .iter()
            .map(|&i| u8::from(codes[i as usize].code() <= last)),
    );
}
