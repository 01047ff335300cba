use crate::tree::split::read::partition::*;

fn reference(data: &[u32], side: &[bool]) -> Vec<u32> {
    let left = data.iter().zip(side).filter(|(_, &s)| s).map(|(&v, _)| v);
    let right = data.iter().zip(side).filter(|(_, &s)| !s).map(|(&v, _)| v);
    left.chain(right).collect()
}

#[test]
fn matches_a_stable_filter_on_every_side_pattern() {
    let mut buf = Vec::new();
    // Every side pattern of up to 10 rows: both branches, all-left, all-right, empty.
    for n in 0..=10usize {
        for mask in 0u32..(1 << n) {
            let side: Vec<bool> = (0..n).map(|k| mask >> k & 1 == 1).collect();
            let data: Vec<u32> = (0..n as u32).map(|k| 100 + 7 * k).collect();
            let n_left = side.iter().filter(|&&s| s).count();
            let mut got = data.clone();
            stable_partition(&mut got[..], &mut buf, n_left, |k, _| side[k]);
            assert_eq!(got, reference(&data, &side), "n={n} mask={mask:b}");
            // Paired with a second array, which must move the same way.
            let codes: Vec<u32> = data.iter().map(|v| v.wrapping_mul(2_654_435_761)).collect();
            let (mut a, mut b) = (data.clone(), codes.clone());
            stable_partition((&mut a[..], &mut b[..]), &mut buf, n_left, |k, _| side[k]);
            assert_eq!(a, reference(&data, &side), "pair n={n} mask={mask:b}");
            assert_eq!(b, reference(&codes, &side), "pair n={n} mask={mask:b}");
            // And a third, of weights, in the same pass.
            let ws: Vec<f64> = data.iter().map(|&v| f64::from(v) * 0.5 - 3.0).collect();
            let (mut a, mut b, mut c) = (data.clone(), codes.clone(), ws.clone());
            let triple = (&mut a[..], &mut b[..], &mut c[..]);
            stable_partition(triple, &mut buf, n_left, |k, _| side[k]);
            let want: Vec<u64> = reference(&data, &side)
                .iter()
                .map(|&v| (f64::from(v) * 0.5 - 3.0).to_bits())
                .collect();
            assert_eq!(a, reference(&data, &side), "triple n={n} mask={mask:b}");
            assert_eq!(b, reference(&codes, &side), "triple n={n} mask={mask:b}");
            assert_eq!(c.iter().map(|w| w.to_bits()).collect::<Vec<_>>(), want);
        }
    }
}

#[test]
fn sides_read_from_the_sample_ids_move_the_rows_as_gathered_sides_do() {
    let mut buf = Vec::new();
    // Nodes in one pass and above it, left side the smaller and the larger.
    for (n, cut) in [
        (9, 3),
        (9, 6),
        (ONE_PASS_ROWS + 5, 21),
        (ONE_PASS_ROWS + 5, 87),
    ] {
        let column: Vec<u32> = (0..2 * n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761) % 97)
            .collect();
        let left = |i: u32| column[i as usize] < cut;
        for unit in [true, false] {
            let samples: Vec<u32> = (0..n as u32).map(|k| 2 * k + k % 3 % 2).collect();
            let ys: Vec<f64> = samples.iter().map(|&i| f64::from(i) * 0.25 - 7.0).collect();
            let ws: Vec<f64> = match unit {
                true => vec![1.0; n],
                false => samples.iter().map(|&i| f64::from(i % 5)).collect(),
            };
            let n_left = samples.iter().filter(|&&i| left(i)).count();
            let (mut a, mut b) = (
                (samples.clone(), ys.clone(), ws.clone()),
                (samples.clone(), ys, ws),
            );
            let side: Vec<bool> = samples.iter().map(|&i| left(i)).collect();
            let mut rows = NodeRows {
                samples: &mut a.0,
                ys: &mut a.1,
                ws: &mut a.2,
            };
            partition_rows(Some(n_left), &mut rows, &mut buf, unit, |k| side[k]);
            let mut rows = NodeRows {
                samples: &mut b.0,
                ys: &mut b.1,
                ws: &mut b.2,
            };
            partition_rows_by_sample(n_left, &mut rows, &mut buf, unit, left);
            assert_eq!(a.0, b.0, "n={n} cut={cut} unit={unit}");
            assert_eq!(a.1, b.1, "n={n} cut={cut} unit={unit}");
            assert_eq!(a.2, b.2, "n={n} cut={cut} unit={unit}");
        }
    }
}

#[test]
fn floats_keep_their_bits() {
    let data = [-0.0, f64::MIN_POSITIVE, 1.5, f64::MAX, 3.0e-300];
    let side = [false, true, false, true, true];
    let mut got = data;
    stable_partition(&mut got[..], &mut Vec::new(), 3, |k, _| side[k]);
    let want = [f64::MIN_POSITIVE, f64::MAX, 3.0e-300, -0.0, 1.5];
    assert!(got
        .iter()
        .zip(&want)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
}
