"""Generators with a known relevant set: chaining, clique, MADELON-like (and LED/XOR).

The chaining and clique structures of Sutera PhD ch. 7 §3.2 are checked exactly on the
exhaustive supports: for every variable and every conditioning set B of the others,
I(Y; X_k | B) > 0 exactly when B holds the structure's minimal conditioning.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from forestimp import RandomForestClassifier
from forestimp.datasets import (
    make_chaining,
    make_clique,
    make_led,
    make_madelon_like,
    make_xor,
)
from forestimp.theory import asymptotic_importances, conditional_mutual_information

# Exact zeros come out at ~1e-15 bits; the weakest true dependence (chaining with r = 5,
# the deepest link) is ~2e-3 bits.
ZERO = 1e-12


def _relevance_pattern(X, y):
    """{(k, B): I(Y; X_k | B) > 0} for every column k and every B among the other columns."""
    p = X.shape[1]
    positive = set()
    for k in range(p):
        others = [j for j in range(p) if j != k]
        for size in range(p):
            for B in itertools.combinations(others, size):
                value = conditional_mutual_information(X[:, k], y, X[:, list(B)])
                assert value > -ZERO
                if value > ZERO:
                    positive.add((k, B))
    return positive


def _expected_pattern(p, needs):
    """The pairs (k, B) with B ⊇ needs[k]; columns absent from ``needs`` are irrelevant."""
    out = set()
    for k, need in needs.items():
        others = [j for j in range(p) if j != k]
        for size in range(p):
            out.update((k, B) for B in itertools.combinations(others, size) if need <= set(B))
    return out


@pytest.mark.parametrize("r", [1, 2, 3, 4, 5])
def test_chaining_minimal_conditionings_exact(r):
    X, y, relevant = make_chaining(n_relevant=r, n_irrelevant=1, return_relevant=True)
    assert X.shape == (2 ** (2 * r + 1), r + 1) and X.dtype == np.int8
    np.testing.assert_array_equal(relevant, np.arange(r))
    assert y.mean() == 0.25
    needs = {k: set(range(k)) for k in range(r)}
    assert _relevance_pattern(X, y) == _expected_pattern(r + 1, needs)


@pytest.mark.parametrize("r", [1, 2, 3, 4])
def test_clique_needs_all_others_exact(r):
    X, y, relevant = make_clique(n_relevant=r, n_irrelevant=1, return_relevant=True)
    assert X.shape == (2 ** (r + 1), r + 1)
    np.testing.assert_array_equal(relevant, np.arange(r))
    needs = {k: set(range(r)) - {k} for k in range(r)}
    assert _relevance_pattern(X, y) == _expected_pattern(r + 1, needs)


def test_chaining_degrees_in_the_asymptotic_mdi():
    # deg X_k = k: its totally-randomized MDI has no term of degree < k (Sutera Thm 5.3).
    r = 4
    X, y = make_chaining(n_relevant=r, n_irrelevant=1)
    by_degree = asymptotic_importances(X, y).by_degree
    for k in range(r):
        np.testing.assert_allclose(by_degree[k, :k], 0.0, atol=ZERO)
        assert by_degree[k, k] > 1e-4
    np.testing.assert_allclose(by_degree[r], 0.0, atol=ZERO)


@pytest.mark.parametrize("gen", [make_chaining, make_clique])
def test_shuffle_tracks_the_relevant_columns(gen):
    for n_samples in (None, 300):
        X, y, rel = gen(
            n_samples, n_relevant=3, n_irrelevant=3, random_state=5, return_relevant=True
        )
        Xs, ys, rel_s = gen(
            n_samples,
            n_relevant=3,
            n_irrelevant=3,
            shuffle=True,
            random_state=5,
            return_relevant=True,
        )
        np.testing.assert_array_equal(ys, y)
        np.testing.assert_array_equal(Xs[:, rel_s], X[:, rel])
        # The other columns are the irrelevant ones, in some order.
        rest = np.setdiff1d(np.arange(6), rel_s)
        np.testing.assert_array_equal(
            np.sort(Xs[:, rest].sum(axis=0)), np.sort(X[:, 3:].sum(axis=0))
        )
    _, _, rel_s = gen(
        None, n_relevant=3, n_irrelevant=3, shuffle=True, random_state=5, return_relevant=True
    )
    assert not np.array_equal(rel_s, np.arange(3))


@pytest.mark.parametrize("gen", [make_chaining, make_clique])
def test_sampled_reproducible(gen):
    X1, y1 = gen(500, n_relevant=3, n_irrelevant=4, random_state=0)
    X2, y2 = gen(500, n_relevant=3, n_irrelevant=4, random_state=0)
    X3, _ = gen(500, n_relevant=3, n_irrelevant=4, random_state=1)
    assert X1.shape == (500, 7) and X1.dtype == np.int8 and y1.dtype == np.int64
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(X1, X3)


def test_sampled_chaining_and_noisy_clique():
    _, y = make_chaining(40_000, n_relevant=5, random_state=0)
    assert abs(y.mean() - 0.25) < 0.01
    X, y = make_clique(40_000, n_relevant=3, noise=0.1, random_state=0)
    flipped = y != X[:, :3].sum(axis=1) % 2
    assert abs(flipped.mean() - 0.1) < 0.01


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: make_chaining(n_relevant=0), "n_relevant"),
        (lambda: make_chaining(n_relevant=2, n_irrelevant=-1), "n_irrelevant"),
        (lambda: make_clique(n_relevant=2.5), "n_relevant"),
        (lambda: make_chaining(n_relevant=10, n_irrelevant=1), "2\\*\\*21"),
        (lambda: make_clique(n_relevant=20, n_irrelevant=1), "exhaustive"),
        (lambda: make_clique(n_relevant=3, noise=0.1), "label noise"),
        (lambda: make_clique(10, n_relevant=3, noise=0.5), "noise"),
    ],
)
def test_invalid_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_led_and_xor_relevant_sets():
    X, y, rel = make_led(50, noise=0.1, n_irrelevant=17, random_state=0, return_relevant=True)
    assert X.shape == (50, 24)  # LED24
    np.testing.assert_array_equal(rel, np.arange(7))
    assert len(make_led()) == 2
    X, y, rel = make_xor(n_relevant=3, n_features=5, return_relevant=True)
    np.testing.assert_array_equal(rel, np.arange(3))
    np.testing.assert_array_equal(y, X[:, :3].sum(axis=1) % 2)


def test_madelon_layout_and_reproducibility():
    X, y, rel = make_madelon_like(300, random_state=0, return_relevant=True)
    assert X.shape == (300, 500) and X.dtype == np.float64
    assert set(np.unique(y)) == {0, 1}
    np.testing.assert_array_equal(rel, np.arange(20))
    X2, y2 = make_madelon_like(300, random_state=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert not np.array_equal(X, make_madelon_like(300, random_state=1)[0])
    # Rows are shuffled: make_classification alone orders them by cluster.
    assert np.abs(np.diff(y)).sum() > 100
    Xs, ys, rel_s = make_madelon_like(300, shuffle=True, random_state=0, return_relevant=True)
    np.testing.assert_array_equal(ys, y)
    np.testing.assert_array_equal(Xs[:, rel_s], X[:, rel])


def test_madelon_redundant_repeated_and_probes():
    X, _, rel = make_madelon_like(
        400,
        n_features=30,
        n_informative=4,
        n_redundant=3,
        n_repeated=2,
        n_clusters_per_class=2,
        random_state=3,
        return_relevant=True,
    )
    informative = X[:, rel[:4]]

    def residual(col):
        coef, *_ = np.linalg.lstsq(informative, col, rcond=None)
        return np.abs(informative @ coef - col).max()

    # Redundant columns are exact linear combinations of the informative ones.
    assert max(residual(X[:, j]) for j in rel[4:7]) < 1e-8
    # Repeated columns copy relevant ones; probes are not combinations of anything.
    for j in rel[7:]:
        assert any(np.array_equal(X[:, j], X[:, i]) for i in rel[:7])
    assert min(residual(X[:, j]) for j in range(9, 30)) > 0.5


def test_madelon_informative_rank_above_probes():
    X, y, rel = make_madelon_like(
        600,
        n_features=40,
        n_informative=5,
        n_redundant=5,
        n_clusters_per_class=4,
        shuffle=True,
        random_state=3,
        return_relevant=True,
    )
    imp = RandomForestClassifier(n_estimators=150, random_state=0).fit(X, y).feature_importances_
    probes = np.setdiff1d(np.arange(40), rel)
    assert imp[rel].min() > imp[probes].max()
    # MADELON's own 32 clusters: noisier ranking, but the relevant block dominates on average.
    X, y, rel = make_madelon_like(
        600, n_features=40, n_informative=5, n_redundant=5, random_state=3, return_relevant=True
    )
    imp = RandomForestClassifier(n_estimators=150, random_state=0).fit(X, y).feature_importances_
    assert imp[rel].mean() > 2 * np.delete(imp, rel).mean()
