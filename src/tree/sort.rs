//! Sorting a node's values: each value's order-preserving integer key packed above its
//! position ([`crate::data::Feature::pack`]), so one integer sort orders by (value,
//! position), a unique order, and needs no comparator.

use crate::data::Packed;

/// From this many keys on, the sort is done in place ([`msd_radix_sort`]): the LSD sort's
/// second buffer would be as large as the node, 80 MB per thread at the root of a tree on
/// 10M rows.
const IN_PLACE_FROM: usize = 1 << 20;

/// Buckets of the in-place sort up to this size are finished by a comparison sort.
const SMALL_BUCKET: usize = 1024;

/// Sorts packed keys. Large inputs: LSD radix sort over the key bytes only (stable, and
/// positions arrive increasing, so ties stay in position order); a byte that is the same in
/// every key costs no pass. Below 32 keys per key byte a comparison sort is faster; huge
/// inputs are sorted in place. Keys are distinct, so every method gives the same order.
pub(crate) fn sort_packed<P: Packed>(keys: &mut Vec<P>, tmp: &mut Vec<P>) {
    let n = keys.len();
    if n < 32 * P::KEY_BYTES {
        keys.sort_unstable();
        return;
    }
    if n >= IN_PLACE_FROM {
        msd_radix_sort(keys, P::KEY_BYTES - 1);
        return;
    }
    let mut counts = [[0u32; 256]; 8];
    for &k in keys.iter() {
        for (b, c) in counts[..P::KEY_BYTES].iter_mut().enumerate() {
            c[k.key_byte(b)] += 1;
        }
    }
    for (b, c) in counts[..P::KEY_BYTES].iter().enumerate() {
        if c.iter().any(|&m| m as usize == n) {
            continue;
        }
        let mut offsets = [0u32; 256];
        let mut sum = 0;
        for (o, &m) in offsets.iter_mut().zip(c) {
            *o = sum;
            sum += m;
        }
        tmp.clear();
        tmp.resize(n, keys[0]);
        for &k in keys.iter() {
            let d = k.key_byte(b);
            tmp[offsets[d] as usize] = k;
            offsets[d] += 1;
        }
        std::mem::swap(keys, tmp);
    }
}

/// In-place MSD radix sort ("American flag sort") on key byte `byte` and the ones below
/// it: keys are swapped into their byte's bucket, then each bucket is sorted on the next
/// byte. Buckets of equal keys (and small ones) are finished by a comparison sort of the
/// whole integers, which puts equal values in position order.
fn msd_radix_sort<P: Packed>(keys: &mut [P], byte: usize) {
    if keys.len() <= SMALL_BUCKET {
        keys.sort_unstable();
        return;
    }
    let mut counts = [0usize; 256];
    for k in keys.iter() {
        counts[k.key_byte(byte)] += 1;
    }
    let mut ends = [0usize; 256];
    let mut sum = 0;
    for (e, &c) in ends.iter_mut().zip(&counts) {
        sum += c;
        *e = sum;
    }
    let starts: [usize; 256] = std::array::from_fn(|d| ends[d] - counts[d]);
    // next[d]: the first slot of bucket d not yet holding a key of d.
    let mut next = starts;
    for d in 0..256 {
        while next[d] < ends[d] {
            let e = keys[next[d]].key_byte(byte);
            if e == d {
                next[d] += 1;
            } else {
                keys.swap(next[d], next[e]);
                next[e] += 1;
            }
        }
    }
    for d in 0..256 {
        let bucket = &mut keys[starts[d]..ends[d]];
        if byte == 0 {
            bucket.sort_unstable();
        } else {
            msd_radix_sort(bucket, byte - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::TreeRng;

    #[test]
    fn packed_sort_orders_by_key_then_position_at_every_size() {
        let mut rng = TreeRng::new(1);
        for n in [0, 1, 5, 127, 128, 255, 256, 5000, 20000] {
            for spread in [3u64, 1 << 20, u64::MAX] {
                let values: Vec<u64> = (0..n).map(|_| rng.next_u64() % spread).collect();
                let narrow: Vec<u64> = values
                    .iter()
                    .enumerate()
                    .map(|(k, &v)| (v >> 32).max(v & 0xffff_ffff) << 32 | k as u64)
                    .collect();
                let wide: Vec<u128> = values
                    .iter()
                    .enumerate()
                    .map(|(k, &v)| u128::from(v) << 32 | k as u128)
                    .collect();
                let mut expected = narrow.clone();
                expected.sort_by_key(|&k| (k >> 32, k as u32));
                let mut in_place = narrow.clone();
                msd_radix_sort(&mut in_place, 3);
                assert_eq!(in_place, expected, "in place, n={n} spread={spread}");
                let (mut got, mut tmp) = (narrow, Vec::new());
                sort_packed(&mut got, &mut tmp);
                assert_eq!(got, expected, "n={n} spread={spread}");
                let mut expected = wide.clone();
                expected.sort_by_key(|&k| (k >> 32, k as u32));
                let mut in_place = wide.clone();
                msd_radix_sort(&mut in_place, 7);
                assert_eq!(in_place, expected, "in place, n={n} spread={spread}");
                let (mut got, mut tmp) = (wide, Vec::new());
                sort_packed(&mut got, &mut tmp);
                assert_eq!(got, expected, "n={n} spread={spread}");
            }
        }
    }
}
