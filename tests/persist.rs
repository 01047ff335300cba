//! The model format: exact round trips, and every kind of damage rejected without a panic.
#![cfg(feature = "serde")]

mod common;

use forestimp::persist::FORMAT_VERSION;
use forestimp::rng::TreeRng;
use forestimp::{CriterionKind, Forest, ForestError, ForestParams, Layout, Matrix, Targets};

fn models() -> Vec<Forest> {
    let (x, y) = common::classification(300, 6, 2);
    let m = Matrix::new(&x, 300, 6, Layout::RowMajor).unwrap();
    let mut c = ForestParams::random_forest(CriterionKind::Entropy);
    c.n_estimators = 5;
    let (xr, yr) = common::regression(300, 4, 3);
    let mr = Matrix::new(&xr, 300, 4, Layout::RowMajor).unwrap();
    let mut r = ForestParams::extra_trees(CriterionKind::SquaredError);
    r.n_estimators = 5;
    r.max_depth = Some(6);
    let mut a = ForestParams::random_forest(CriterionKind::AbsoluteError);
    a.n_estimators = 4;
    a.min_samples_leaf = 3;
    // Two outputs: the targets and their squares, row-major.
    let y2: Vec<f64> = yr.iter().flat_map(|&v| [v, v * v]).collect();
    vec![
        Forest::fit(&c, m, Targets::classes(&y, 3).unwrap(), None).unwrap(),
        Forest::fit(&r, mr, Targets::regression(&yr).unwrap(), None).unwrap(),
        Forest::fit(&a, mr, Targets::regression(&yr).unwrap(), None).unwrap(),
        Forest::fit(&a, mr, Targets::multi_regression(&y2, 2).unwrap(), None).unwrap(),
    ]
}

/// An absolute-error forest is written as version 5 (its internal medians follow the
/// trees); read as any other version, or with a node statistic damaged, it is refused.
#[test]
fn absolute_error_models_carry_their_node_statistics() {
    let f = models().remove(2);
    let bytes = f.to_bytes().unwrap();
    assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), 5);
    for version in [3u16, 4, 6] {
        let mut b = bytes.clone();
        b[4..6].copy_from_slice(&version.to_le_bytes());
        assert!(matches!(
            Forest::from_bytes(&b),
            Err(ForestError::Decode(_))
        ));
    }
    // The last 8 bytes are the last node's value: NaN there is refused.
    let mut payload = bytes[20..].to_vec();
    let n = payload.len();
    payload[n - 8..].copy_from_slice(&f64::NAN.to_le_bytes());
    let mut b = bytes[..20].to_vec();
    b[16..20].copy_from_slice(&common::crc32(&payload).to_le_bytes());
    b.extend_from_slice(&payload);
    assert!(matches!(
        Forest::from_bytes(&b),
        Err(ForestError::Decode(_))
    ));
}

/// A multi-output absolute-error forest is written as version 6 (version 5 with its
/// outputs); read as version 4 or 5 it is refused.
#[test]
fn multi_output_absolute_error_models_are_version_6() {
    let f = models().remove(3);
    let bytes = f.to_bytes().unwrap();
    assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), 6);
    assert!(Forest::from_bytes(&bytes).unwrap() == f);
    for version in [4u16, 5] {
        let mut b = bytes.clone();
        b[4..6].copy_from_slice(&version.to_le_bytes());
        assert!(matches!(
            Forest::from_bytes(&b),
            Err(ForestError::Decode(_))
        ));
    }
}

#[test]
fn round_trip_is_exact() {
    for f in models() {
        let bytes = f.to_bytes().unwrap();
        let g = Forest::from_bytes(&bytes).unwrap();
        assert_eq!(f, g);
        assert_eq!(bytes, g.to_bytes().unwrap());
        assert_eq!(f.importances(false), g.importances(false));
    }
}

#[test]
fn damage_is_an_error_never_a_panic() {
    let bytes = models().remove(0).to_bytes().unwrap();
    for cut in [0, 3, 10, 19, 20, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            matches!(
                Forest::from_bytes(&bytes[..cut]),
                Err(ForestError::Decode(_))
            ),
            "cut {cut}"
        );
    }
    let mut newer = bytes.clone();
    newer[4..6].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    assert_eq!(
        Forest::from_bytes(&newer),
        Err(ForestError::Version {
            found: FORMAT_VERSION + 1,
            supported: FORMAT_VERSION
        })
    );
    let mut rng = TreeRng::new(5);
    for _ in 0..2000 {
        let mut b = bytes.clone();
        let i = rng.below(b.len());
        b[i] ^= 1 << rng.below(8);
        assert!(Forest::from_bytes(&b).is_err());
    }
}

/// A payload that passes the checksum but lies about its trees must still be refused.
#[test]
fn structurally_invalid_payloads_are_refused() {
    for f in [models().remove(0), models().remove(2), models().remove(3)] {
        structurally_invalid_payloads_of(&f);
    }
}

fn structurally_invalid_payloads_of(f: &Forest) {
    let bytes = f.to_bytes().unwrap();
    let mut rng = TreeRng::new(8);
    let mut refused = 0;
    for _ in 0..3000 {
        let mut payload = bytes[20..].to_vec();
        let i = rng.below(payload.len());
        payload[i] = rng.next_u64() as u8;
        let mut b = bytes[..20].to_vec();
        b[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        b[16..20].copy_from_slice(&common::crc32(&payload).to_le_bytes());
        b.extend_from_slice(&payload);
        match Forest::from_bytes(&b) {
            Ok(g) => {
                // Whatever decoded must be usable: predict on data of the right width.
                let x = vec![0.5f64; 3 * g.n_features()];
                let m = Matrix::new(&x, 3, g.n_features(), Layout::RowMajor).unwrap();
                let _ = g.predict(m).unwrap();
                let _ = g.importances(false);
            }
            Err(_) => refused += 1,
        }
    }
    assert!(refused > 0);
}
