//! Same seed, same model, for any number of threads; different seeds, different models.

mod common;

use forestimp::parallel::install;
use forestimp::{
    CriterionKind, FeatureCount, Forest, ForestParams, Layout, Matrix, SampleCount, Targets,
};

fn fit_with_threads(params: &ForestParams, threads: usize) -> Forest {
    let (x, y) = common::classification(600, 8, 1);
    let m = Matrix::new(&x, 600, 8, Layout::RowMajor).unwrap();
    install(threads, || {
        Forest::fit(params, m, Targets::classes(&y, 3).unwrap(), None).unwrap()
    })
}

fn variants() -> Vec<ForestParams> {
    let mut rf = ForestParams::random_forest(CriterionKind::Gini);
    rf.n_estimators = 24;
    rf.seed = 11;
    let mut et = ForestParams::extra_trees(CriterionKind::Entropy);
    et.n_estimators = 24;
    et.max_leaf_nodes = Some(40);
    let mut rp = ForestParams::random_patches(CriterionKind::Gini, 0.5, 0.5);
    rp.n_estimators = 24;
    rp.max_samples = Some(SampleCount::Count(200));
    rp.tree_features = Some(FeatureCount::Count(3));
    vec![rf, et, rp]
}

#[test]
fn thread_count_never_changes_the_model() {
    for params in variants() {
        let one = fit_with_threads(&params, 1);
        for threads in [2, 4] {
            let many = fit_with_threads(&params, threads);
            assert_eq!(one, many, "{threads} threads changed the model");
            assert_eq!(one.importances(false), many.importances(false));
            #[cfg(feature = "serde")]
            assert_eq!(one.to_bytes().unwrap(), many.to_bytes().unwrap());
        }
        let (x, _) = common::classification(600, 8, 1);
        let m = Matrix::new(&x, 600, 8, Layout::ColumnMajor).unwrap(); // any matrix will do
        let p1 = install(1, || one.predict(m).unwrap());
        let p4 = install(4, || one.predict(m).unwrap());
        assert_eq!(p1, p4);
        let o1 = install(1, || one.oob_predict(m).ok());
        let o4 = install(4, || one.oob_predict(m).ok());
        assert_eq!(format!("{o1:?}"), format!("{o4:?}"));
    }
}

#[test]
fn the_seed_matters() {
    let mut p = variants().remove(0);
    let a = fit_with_threads(&p, 2);
    p.seed += 1;
    let b = fit_with_threads(&p, 2);
    assert_ne!(a, b);
}

/// Row-major inputs gather several candidates per pass and column-major ones one at a
/// time: the trees must not tell. Two columns take few values, so candidates are often
/// constant in a node; `All` features makes batches of every size.
#[test]
fn layouts_and_float_widths_give_the_same_trees() {
    let (n, p) = (400, 7);
    let (mut x, y) = common::classification(n, p, 9);
    for i in 0..n {
        x[i * p + 5] = (i % 2) as f32;
        x[i * p + 6] = (i % 3 == 0) as u8 as f32;
    }
    let xf: Vec<f32> = (0..p)
        .flat_map(|j| (0..n).map(move |i| (i, j)))
        .map(|(i, j)| x[i * p + j])
        .collect();
    let x64: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let t = Targets::classes(&y, 3).unwrap();
    let rf = ForestParams::random_forest(CriterionKind::Gini);
    let mut et = ForestParams::extra_trees(CriterionKind::Gini);
    et.max_features = FeatureCount::All;
    for mut params in [rf, et] {
        params.n_estimators = 8;
        let fit = |m| Forest::fit(&params, m, t, None).unwrap();
        let a = fit(Matrix::new(&x, n, p, Layout::RowMajor).unwrap());
        let b = fit(Matrix::new(&xf, n, p, Layout::ColumnMajor).unwrap());
        assert_eq!(a, b);
        let c = Forest::fit(
            &params,
            Matrix::new(&x64, n, p, Layout::RowMajor).unwrap(),
            t,
            None,
        )
        .unwrap();
        assert_eq!(a, c);
    }
}

#[test]
fn warm_start_grows_the_same_forest_as_one_fit() {
    use forestimp::FitSession;
    let (x, y) = common::classification(600, 8, 1);
    let m = Matrix::new(&x, 600, 8, Layout::RowMajor).unwrap();
    let targets = Targets::classes(&y, 3).unwrap();
    for params in variants() {
        let all = Forest::fit(&params, m, targets, None).unwrap();
        let mut first = params.clone();
        first.n_estimators = 10;
        let ten = Forest::fit(&first, m, targets, None).unwrap();
        let session = FitSession::new(&params, m, targets, None).unwrap();
        let more = session.fit_range(10..params.n_estimators);
        assert_eq!(session.finish_after(&ten, more).unwrap(), all);

        let mut other = first.clone();
        other.seed += 1;
        let stranger = Forest::fit(&other, m, targets, None).unwrap();
        let more = session.fit_range(10..params.n_estimators);
        assert!(session.finish_after(&stranger, more).is_err());
    }
}
