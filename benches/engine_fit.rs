//! The engine alone on one workload of `bench_real_tables.py`: `Forest::fit` on its training
//! arrays, one thread unless `THREADS` says, for profiles (`perf record`, callgrind) and
//! CPU-time A/B of builds without Python around it (issue #20).
//!
//! Dump a workload's arrays first (X float32 C-order, y float64, from the same loader):
//!
//! ```text
//! python benches/engine_fit_dump.py randhie /tmp/randhie
//! cargo bench --bench engine_fit --no-run
//! MODEL=RF TREES=60 target/release/deps/engine_fit-* /tmp/randhie
//! ```
//!
//! `MODEL` is `RF` (exact, bootstrap) or `ET`; `TREES` (default 60), `REPEATS` (default 1,
//! least CPU seconds printed, and least wall seconds). The parameters are those of the
//! Python estimators with their defaults: K = sqrt(p) for classification, p for regression
//! (`MAX_FEATURES=f` sets a fraction, as `quantized-reg`'s 0.5).

use std::time::Instant;

use forestimp::parallel::install;
use forestimp::{CriterionKind, FeatureCount, Forest, ForestParams, Layout, Matrix, Targets};

fn read(path: &std::path::Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("a dump directory"));
    let meta = String::from_utf8(read(&dir.join("meta.txt"))).expect("utf-8");
    let mut it = meta.split_whitespace();
    let n: usize = it.next().and_then(|v| v.parse().ok()).expect("n");
    let p: usize = it.next().and_then(|v| v.parse().ok()).expect("p");
    let task = it.next().expect("task").to_string();
    let x: Vec<f32> = read(&dir.join("X.f32"))
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let y: Vec<f64> = read(&dir.join("y.f64"))
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect();
    let m = Matrix::new(&x, n, p, Layout::RowMajor).expect("shape");
    let env = |k: &str, d: usize| std::env::var(k).map_or(d, |v| v.parse().expect(k));
    let model = std::env::var("MODEL").unwrap_or_else(|_| "RF".into());
    let regression = task == "regression";
    let criterion = if regression {
        CriterionKind::SquaredError
    } else {
        CriterionKind::Gini
    };
    let mut params = match model.as_str() {
        "ET" => ForestParams::extra_trees(criterion),
        _ => ForestParams::random_forest(criterion),
    };
    params.n_estimators = env("TREES", 60);
    if regression {
        params.max_features = match std::env::var("MAX_FEATURES") {
            Ok(f) => FeatureCount::Fraction(f.parse().expect("MAX_FEATURES")),
            Err(_) => FeatureCount::All,
        };
    }
    let labels: Vec<u32> = y.iter().map(|&v| v as u32).collect();
    let n_classes = labels.iter().max().map_or(1, |&c| c as usize + 1);
    let t = if regression {
        Targets::regression(&y).expect("targets")
    } else {
        Targets::classes(&labels, n_classes).expect("labels")
    };
    let cpu = || {
        // SAFETY: getrusage only writes the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        s(u.ru_utime) + s(u.ru_stime)
    };
    let (mut best, mut wall) = (f64::INFINITY, f64::INFINITY);
    let (mut nodes, mut digest) = (0, String::new());
    for _ in 0..env("REPEATS", 1) {
        let (c0, w0) = (cpu(), Instant::now());
        let threads = env("THREADS", 1);
        let forest = install(threads, || Forest::fit(&params, m, t, None)).expect("fit");
        best = best.min(cpu() - c0);
        wall = wall.min(w0.elapsed().as_secs_f64());
        nodes = forest.trees().iter().map(|t| t.len()).sum::<usize>();
        digest = model_digest(&forest);
    }
    println!(
        "{model} {} trees: {best:.3} s CPU, {wall:.3} s wall, {nodes} nodes, model bytes {digest}",
        params.n_estimators
    );
}

/// FNV-1a of the model bytes: builds that grow the same trees print the same digest.
#[cfg(feature = "serde")]
fn model_digest(forest: &Forest) -> String {
    let bytes = forest.to_bytes().expect("model bytes");
    let h = bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    });
    format!("{h:016x}")
}

/// Without the model format there are no bytes to digest.
#[cfg(not(feature = "serde"))]
fn model_digest(_forest: &Forest) -> String {
    "(the serde feature writes them)".into()
}
