//! Data shared by the integration tests, generated in code (no downloads).
#![allow(dead_code)]

use forestimp::rng::TreeRng;

/// The 7-segment LED digits (Breiman et al. 1984), segments in the order of Louppe et al.
/// (2013): top, upper-left, upper-right, middle, lower-left, lower-right, bottom.
pub const LED: [[u8; 7]; 10] = [
    [1, 1, 1, 0, 1, 1, 1],
    [0, 0, 1, 0, 0, 1, 0],
    [1, 0, 1, 1, 1, 0, 1],
    [1, 0, 1, 1, 0, 1, 1],
    [0, 1, 1, 1, 0, 1, 0],
    [1, 1, 0, 1, 0, 1, 1],
    [1, 1, 0, 1, 1, 1, 1],
    [1, 0, 1, 0, 0, 1, 0],
    [1, 1, 1, 1, 1, 1, 1],
    [1, 1, 1, 1, 0, 1, 1],
];

/// Exact asymptotic MDI of totally randomized trees on LED (seed 001, Table 1, K = 1).
pub const LED_EXACT: [f64; 7] = [0.4127, 0.5815, 0.5312, 0.5421, 0.6566, 0.2258, 0.3720];

/// The LED support: 10 rows (row-major, 7 columns) and the digits.
pub fn led() -> (Vec<f64>, Vec<u32>) {
    let x = LED
        .iter()
        .flat_map(|r| r.iter().map(|&b| f64::from(b)))
        .collect();
    (x, (0..10).collect())
}

/// A noisy classification problem: `p` features, the label depends on the first three.
pub fn classification(n: usize, p: usize, seed: u64) -> (Vec<f32>, Vec<u32>) {
    let mut rng = TreeRng::new(seed);
    let mut x = vec![0f32; n * p];
    let mut y = vec![0u32; n];
    for i in 0..n {
        for j in 0..p {
            x[i * p + j] = (rng.unit() * 2.0 - 1.0) as f32;
        }
        let s = x[i * p] + 0.5 * x[i * p + 1] - x[i * p + 2] + 0.3 * (rng.unit() as f32 - 0.5);
        y[i] = u32::from(s > 0.0) + u32::from(s > 0.6);
    }
    (x, y)
}

/// A regression problem: `y = sin(3 x0) + x1² + noise`.
pub fn regression(n: usize, p: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = TreeRng::new(seed);
    let x: Vec<f64> = (0..n * p).map(|_| rng.unit() * 2.0 - 1.0).collect();
    let y = (0..n)
        .map(|i| (3.0 * x[i * p]).sin() + x[i * p + 1] * x[i * p + 1] + 0.1 * rng.unit())
        .collect();
    (x, y)
}

/// A fixed LCG in [0, 1): data that is the same on every platform.
pub fn lcg(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Bitwise CRC-32 (IEEE) of a model file's payload, independent of the crate's
/// implementation.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}
