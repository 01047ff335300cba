//! Sorting a node's values: each value's order-preserving integer key packed above its
//! position ([`crate::data::Feature::pack`]), so one integer sort orders by (value,
//! position), a unique order, and needs no comparator.

use crate::data::Packed;

/// Sorts packed keys. Large inputs: LSD radix sort over the key bytes only (stable, and
/// positions arrive increasing, so ties stay in position order); a byte that is the same in
/// every key costs no pass. Below 32 keys per key byte a comparison sort is faster.
pub(crate) fn sort_packed<P: Packed>(keys: &mut Vec<P>, tmp: &mut Vec<P>) {
    if keys.len() < 32 * P::KEY_BYTES {
        keys.sort_unstable();
        return;
    }
    // The byte count as a constant sizes the count tables: one-byte bin codes then zero one
    // table, not eight, per sort.
    match P::KEY_BYTES {
        1 => radix_sort::<P, 1>(keys, tmp),
        4 => radix_sort::<P, 4>(keys, tmp),
        _ => radix_sort::<P, 8>(keys, tmp),
    }
}

/// LSD radix sort over the `B` low key bytes of `keys`.
fn radix_sort<P: Packed, const B: usize>(keys: &mut Vec<P>, tmp: &mut Vec<P>) {
    debug_assert!(P::KEY_BYTES <= B);
    let n = keys.len();
    let mut counts = [[0u32; 256]; B];
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CodeKey, Feature};
    use crate::rng::TreeRng;

    #[test]
    fn packed_sort_orders_by_key_then_position_at_every_size() {
        let mut rng = TreeRng::new(1);
        for n in [0, 1, 5, 127, 128, 255, 256, 5000] {
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
                let (mut got, mut tmp) = (narrow, Vec::new());
                sort_packed(&mut got, &mut tmp);
                assert_eq!(got, expected, "n={n} spread={spread}");
                let mut expected = wide.clone();
                expected.sort_by_key(|&k| (k >> 32, k as u32));
                let (mut got, mut tmp) = (wide, Vec::new());
                sort_packed(&mut got, &mut tmp);
                assert_eq!(got, expected, "n={n} spread={spread}");
                // Bin codes: one key byte.
                let codes: Vec<CodeKey> = values
                    .iter()
                    .enumerate()
                    .map(|(k, &v)| ((v % 256) as u8).pack(k as u32))
                    .collect();
                let mut expected = codes.clone();
                expected.sort_by_key(|c| (c.key_byte(0), c.position()));
                let (mut got, mut tmp) = (codes, Vec::new());
                sort_packed(&mut got, &mut tmp);
                assert_eq!(got, expected, "codes, n={n} spread={spread}");
            }
        }
    }
}
