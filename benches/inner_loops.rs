//! Micro-benchmarks of the inner loops through the public API, with criterion: one tree per
//! splitter (exact sort-based CART, Extra-Trees, histograms) on 20 000 x 20 float32, and
//! prediction of 20 000 rows. Each measures one kind of node work: sorting and scanning
//! (best), gathering (random), binning and bin scans (hist), descending trees (predict).
//!
//! `cargo bench --bench inner_loops`

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use forestimp::parallel::install;
use forestimp::rng::TreeRng;
use forestimp::{CriterionKind, Forest, ForestParams, Layout, Matrix, SplitterKind, Targets};

const N: usize = 20_000;
const P: usize = 20;

/// Column-major features uniform in [0, 1); the label thresholds a noisy sum of five.
fn data() -> (Vec<f32>, Vec<u32>) {
    let mut rng = TreeRng::new(0);
    let x: Vec<f32> = (0..N * P).map(|_| rng.unit() as f32).collect();
    let y = (0..N)
        .map(|i| {
            let s: f32 = (0..5).map(|j| x[j * N + i]).sum();
            u32::from(s + rng.unit() as f32 * 0.5 > 2.75)
        })
        .collect();
    (x, y)
}

fn one_tree(c: &mut Criterion) {
    let (x, y) = data();
    let m = Matrix::new(&x, N, P, Layout::ColumnMajor).expect("shape");
    let t = Targets::classes(&y, 2).expect("labels");
    let hist = ForestParams {
        splitter: SplitterKind::Histogram { max_bins: 255 },
        ..ForestParams::random_forest(CriterionKind::Gini)
    };
    for (name, mut params) in [
        (
            "fit 1 tree, best",
            ForestParams::random_forest(CriterionKind::Gini),
        ),
        (
            "fit 1 tree, random",
            ForestParams::extra_trees(CriterionKind::Gini),
        ),
        ("fit 1 tree, hist", hist),
    ] {
        params.n_estimators = 1;
        c.bench_function(name, |b| {
            b.iter(|| install(1, || Forest::fit(&params, m, t, None)).expect("fit"))
        });
    }
    let mut params = ForestParams::extra_trees(CriterionKind::Gini);
    params.n_estimators = 10;
    let forest = install(1, || Forest::fit(&params, m, t, None)).expect("fit");
    c.bench_function("predict 20000 rows, 10 trees", |b| {
        b.iter(|| install(1, || forest.predict(m)).expect("predict"))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = one_tree
}
criterion_main!(benches);
