//! Thread scaling of the Rust engine: fit Random Forest, Extra-Trees and histogram RF on the same data
//! with 1, 2, 4, … threads and print the speed-up. Pure Rust, so it runs on any machine the
//! binary is copied to (the device runs in BENCHMARKS.md used it).
//!
//! `cargo bench --bench scaling -- [n_samples] [n_features] [n_trees] [max_threads]`
//!
//! `TASK=regression` fits regression forests on the noisy linear mix itself, with
//! scikit-learn's regressor defaults (squared error, K = p). `CLASSES=c` cuts it into c
//! classes of equal width instead of taking its sign. `PREDICT=k` also times k predictions
//! of every fitted forest on the first fifth of the rows (all of them in column-major
//! layout), min of k: the workload of `bench_predict.py` without Python; and as many
//! out-of-bag predictions of the whole training set, for forests with bootstrap.

use std::time::Instant;

use forestimp::parallel::install;
use forestimp::rng::TreeRng;
use forestimp::{
    CriterionKind, FeatureCount, Forest, ForestParams, Layout, Matrix, SplitterKind, Targets,
};

/// Gaussian-ish features and a noisy linear mix of the first ten (the regression target);
/// the class label is its sign.
fn data(n: usize, p: usize) -> (Vec<f32>, Vec<f64>) {
    let mut rng = TreeRng::new(0);
    let mut x = vec![0f32; n * p]; // column-major
    for v in x.iter_mut() {
        *v = ((0..4).map(|_| rng.unit()).sum::<f64>() - 2.0) as f32;
    }
    let y = (0..n)
        .map(|i| {
            let s: f32 = (0..10.min(p))
                .map(|j| x[j * n + i] * (j as f32 - 4.5))
                .sum();
            f64::from(s + (rng.unit() as f32 - 0.5) * 2.0)
        })
        .collect();
    (x, y)
}

/// Least seconds over `k` calls of `f`.
fn fastest<R>(k: usize, f: impl Fn() -> R) -> f64 {
    (0..k)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(100_000);
    let p = args.get(1).copied().unwrap_or(50);
    let trees = args.get(2).copied().unwrap_or(64);
    let max_threads = args
        .get(3)
        .copied()
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |c| c.get()));
    let (mut x, y) = data(n, p);
    // LAYOUT=row: C-order, what a NumPy array passed from Python usually is.
    let layout = match std::env::var("LAYOUT").as_deref() {
        Ok("row") => {
            x = (0..n * p).map(|k| x[(k % p) * n + k / p]).collect();
            Layout::RowMajor
        }
        _ => Layout::ColumnMajor,
    };
    let m = Matrix::new(&x, n, p, layout).expect("shape");
    let regression = std::env::var("TASK").as_deref() == Ok("regression");
    let classes: u32 = std::env::var("CLASSES").map_or(2, |c| c.parse().expect("CLASSES"));
    let labels: Vec<u32> = if classes == 2 {
        y.iter().map(|&v| u32::from(v > 0.0)).collect()
    } else {
        let top = f64::from(classes - 1);
        y.iter()
            .map(|&v| ((v / 8.0 + 0.5) * top).round().clamp(0.0, top) as u32)
            .collect()
    };
    let (t, criterion) = if regression {
        let t = Targets::regression(&y).expect("targets");
        (t, CriterionKind::SquaredError)
    } else {
        (
            Targets::classes(&labels, classes as usize).expect("labels"),
            CriterionKind::Gini,
        )
    };
    println!("n={n} p={p} trees={trees} layout={layout:?} regression={regression}");
    println!("| model | threads | fit s | speed-up |");
    println!("|---|---:|---:|---:|");
    let predictions: usize = std::env::var("PREDICT").map_or(0, |k| k.parse().expect("PREDICT"));
    let test_rows =
        std::env::var("TEST_ROWS").map_or(n / 5, |k| k.parse::<usize>().expect("TEST_ROWS").min(n));
    let test = match layout {
        Layout::RowMajor => Matrix::new(&x[..test_rows * p], test_rows, p, layout).expect("shape"),
        Layout::ColumnMajor | Layout::SparseColumns => m,
    };
    let only = std::env::var("MODELS").unwrap_or_else(|_| "RF,ET,HIST".into());
    let hist = ForestParams {
        splitter: SplitterKind::Histogram { max_bins: 255 },
        ..ForestParams::random_forest(criterion)
    };
    for (name, mut params) in [
        ("RF", ForestParams::random_forest(criterion)),
        ("ET", ForestParams::extra_trees(criterion)),
        ("HIST", hist),
    ] {
        if regression {
            params.max_features = FeatureCount::All;
        }
        if !only.split(',').any(|m| m == name) {
            continue;
        }
        params.n_estimators = trees;
        let mut base = None;
        let mut threads = 1;
        while threads <= max_threads {
            let start = Instant::now();
            let forest = install(threads, || Forest::fit(&params, m, t, None)).expect("fit");
            let secs = start.elapsed().as_secs_f64();
            let b = *base.get_or_insert(secs);
            println!("| {name} | {threads} | {secs:.2} | {:.2} |", b / secs);
            if predictions > 0 {
                let best = fastest(predictions, || {
                    install(threads, || forest.predict(test)).expect("predict")
                });
                println!("| {name} predict | {threads} | {best:.4} | |");
                if forest.params().has_oob() {
                    let best = fastest(predictions, || {
                        install(threads, || forest.oob_predict(m)).expect("OOB")
                    });
                    println!("| {name} OOB | {threads} | {best:.4} | |");
                }
            }
            std::hint::black_box(forest);
            threads *= 2;
        }
    }
}
