//! Class weights that depend on a tree's draws (scikit-learn's "balanced_subsample").

/// scikit-learn's "balanced_subsample": class `c` of output `k` drawn `m_kc` times among `m`
/// draws gets weight `m / (n_k · m_kc)`, where `n_k` counts the classes of output `k` drawn
/// at all; a row's weight is multiplied by the product of its outputs' weights, formed
/// first, as scikit-learn's `compute_sample_weight` forms it. `y` is
/// `n × n_classes.len()` row-major and `weights[j]` belongs to row `samples[j]`.
pub(super) fn reweigh_balanced(
    weights: &mut [f64],
    samples: &[u32],
    counts: &[u32],
    y: &[u32],
    n_classes: &[usize],
) {
    let m = n_classes.len();
    let mut product: Option<Vec<f64>> = None;
    for (k, &classes) in n_classes.iter().enumerate() {
        let class_of = |i: usize| y[i * m + k] as usize;
        let mut drawn = vec![0u64; classes];
        for (i, &c) in counts.iter().enumerate() {
            drawn[class_of(i)] += u64::from(c);
        }
        let total: u64 = drawn.iter().sum();
        let present = drawn.iter().filter(|&&d| d > 0).count() as f64;
        let factor = samples.iter().map(|&i| {
            let d = drawn[class_of(i as usize)];
            // A drawn row's class is drawn: d > 0.
            total as f64 / (present * d as f64)
        });
        product = Some(match product {
            None => factor.collect(),
            Some(mut p) => {
                p.iter_mut().zip(factor).for_each(|(p, f)| *p *= f);
                p
            }
        });
    }
    if let Some(product) = product {
        weights.iter_mut().zip(product).for_each(|(w, f)| *w *= f);
    }
}
