"""Entropy and mutual-information estimators of ``forestimp.theory``, and the oracles'
input validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import digamma

from forestimp.datasets import make_context_problem, make_led, make_xor
from forestimp.theory import (
    asymptotic_importances,
    conditional_entropy,
    conditional_mutual_information,
    context_importances,
    entropy,
    expected_importances,
    mutual_information,
)


def test_known_values():
    assert entropy([0, 1, 2, 3]) == pytest.approx(2.0, abs=1e-12)
    assert entropy([0, 1, 2, 3], base=math.e) == pytest.approx(math.log(4), abs=1e-12)
    assert entropy(["a", "a", "b", "b"]) == pytest.approx(1.0, abs=1e-12)
    # Weights are multiplicities: P = (3/4, 1/4).
    h = -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25))
    assert entropy([0, 1], weights=[3, 1]) == pytest.approx(h, abs=1e-12)
    X, y = make_xor(n_relevant=2)
    assert mutual_information(X[:, 0], y) == pytest.approx(0.0, abs=1e-12)
    assert mutual_information(X, y) == pytest.approx(1.0, abs=1e-12)  # 2-D x: joint variable
    assert conditional_mutual_information(X[:, 0], y, X[:, 1]) == pytest.approx(1.0, abs=1e-12)
    assert conditional_entropy(y, X[:, 0]) == pytest.approx(1.0, abs=1e-12)
    assert conditional_entropy(y, X) == pytest.approx(0.0, abs=1e-12)
    # LED: H(Y) = log2 10 and the segments determine the digit.
    Xl, yl = make_led()
    assert entropy(yl) == pytest.approx(math.log2(10), abs=1e-12)
    assert mutual_information(Xl, yl) == pytest.approx(math.log2(10), abs=1e-12)
    # An empty conditioning set reduces I(X;Y|Z) to I(X;Y).
    z = np.zeros((len(yl), 0))
    assert conditional_mutual_information(Xl[:, 1], yl, z) == pytest.approx(
        mutual_information(Xl[:, 1], yl), abs=1e-12
    )
    # Chain rule (Louppe 2014, Eq. 6.8): I(X1,X2;Y) = I(X1;Y) + I(X2;Y|X1).
    lhs = mutual_information(Xl[:, :2], yl)
    rhs = mutual_information(Xl[:, 0], yl) + conditional_mutual_information(Xl[:, 1], yl, Xl[:, 0])
    assert lhs == pytest.approx(rhs, abs=1e-12)


def test_miller_madow_adds_k_minus_1_over_2n_ln2_bits():
    x = [0, 0, 0, 1, 1, 2, 3, 3, 3, 3]
    k, n = 4, 10
    diff = entropy(x, estimator="miller_madow") - entropy(x)
    assert diff == pytest.approx((k - 1) / (2 * n * math.log(2)), abs=1e-12)


def test_grassberger_matches_direct_formula():
    counts = np.array([5, 1, 2, 2, 7, 1, 3])
    x = np.repeat(np.arange(len(counts)), counts)
    n = counts.sum()
    # Grassberger (2003), Eq. 35: H = ln N - (1/N) Σ n_i G(n_i) nats.
    direct = math.log(n)
    for c in counts.tolist():
        g = digamma(c) + 0.5 * (-1) ** c * (digamma((c + 1) / 2) - digamma(c / 2))
        direct -= c * g / n
    assert entropy(x, estimator="grassberger", base=math.e) == pytest.approx(direct, abs=1e-12)
    # The same counts given as weights of the distinct values.
    got = entropy(np.arange(len(counts)), weights=counts, estimator="grassberger")
    assert got == pytest.approx(direct / math.log(2), abs=1e-12)


@pytest.mark.parametrize("n", [10, 20])
def test_bias_corrections_reduce_small_sample_bias(n):
    # Plug-in underestimates H; Miller-Madow removes the first-order term, Grassberger more.
    p = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.05, 0.05, 0.05])
    h = float(-(p * np.log2(p)).sum())
    rng = np.random.default_rng(12345)
    estimates = {"plugin": [], "miller_madow": [], "grassberger": []}
    for _ in range(1000):
        x = rng.choice(len(p), size=n, p=p)
        for name, values in estimates.items():
            values.append(entropy(x, estimator=name))
    bias = {name: abs(np.mean(v) - h) for name, v in estimates.items()}
    assert bias["plugin"] > 1.5 * bias["miller_madow"] > 1.5 * bias["grassberger"], bias
    # Independent variables: the plug-in MI is biased upwards by about
    # (|X|-1)(|Y|-1)/(2N ln 2) bits (Sutera PhD Eq. 5.13); Miller-Madow removes most of it.
    mi_plug, mi_mm = [], []
    for _ in range(500):
        a, b = rng.integers(3, size=200), rng.integers(3, size=200)
        mi_plug.append(mutual_information(a, b))
        mi_mm.append(mutual_information(a, b, estimator="miller_madow"))
    goebel = 4 / (2 * 200 * math.log(2))
    assert np.mean(mi_plug) == pytest.approx(goebel, rel=0.15)
    assert abs(np.mean(mi_mm)) < 0.2 * goebel


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: entropy([0, 1], estimator="nope"), "estimator"),
        (lambda: entropy([0.0, np.nan]), "NaN"),
        (lambda: entropy([0, 1], weights=[1, -1]), "non-negative"),
        (lambda: entropy([0, 1], weights=[0.5, 1]), None),
        (lambda: entropy([0, 1], weights=[0.5, 1.5], estimator="grassberger"), "integer"),
        (lambda: entropy([0, 1], base=1), "base"),
        (lambda: entropy(np.zeros((2, 2, 2))), "1-D or 2-D"),
        (lambda: entropy([]), "no rows"),
        (lambda: mutual_information([0, 1], [0, 1, 1]), "rows"),
        (lambda: conditional_mutual_information([0, 1], [0, 1], [0]), "rows"),
    ],
)
def test_information_bad_inputs(call, match):
    if match is None:  # valid: non-integer multiplicities are fine for the plug-in
        call()
        return
    with pytest.raises(ValueError, match=match):
        call()


X3 = np.array([[0, 1, 0], [1, 0, 1], [1, 1, 0]])
Y3 = np.array([0, 1, 1])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"X": X3[0]}, "2-D"),
        ({"X": X3 + 0.5}, "non-integer"),
        ({"X": np.where(X3 == 0, np.nan, 1.0)}, "NaN"),
        ({"X": np.zeros((3, 21), dtype=int)}, "p = 21 > 20"),
        ({"X": np.zeros((0, 2), dtype=int), "y": []}, "no rows"),
        ({"y": Y3[:2]}, "y must be 1-D with 3"),
        ({"y": [0.0, np.nan, 1.0]}, "NaN"),
        ({"weights": [1, -1, 1]}, "non-negative"),
        ({"weights": [1, 1]}, "shape"),
        ({"weights": [0, 0, 0]}, "positive sum"),
        ({"weights": [1, np.nan, 1]}, "NaN"),
        ({"criterion": "mse"}, "criterion"),
        ({"criterion": "variance", "y": ["a", "b", "c"]}, "numeric"),
        ({"max_depth": 0}, "max_depth"),
        ({"max_depth": 1.5}, "max_depth"),
    ],
)
def test_asymptotic_bad_inputs(kwargs, match):
    args = {"X": X3, "y": Y3, **kwargs}
    with pytest.raises(ValueError, match=match):
        asymptotic_importances(args.pop("X"), args.pop("y"), **args)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_features": 0}, "max_features"),
        ({"max_features": 4}, "max_features"),
        ({"max_features": 1.0}, "max_features"),
        ({"candidates": "all"}, "candidates"),
        ({"splits": "ordered"}, "splits"),
        ({"weights": [-1, 1, 1]}, "non-negative"),
    ],
)
def test_expected_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        expected_importances(X3, Y3, **kwargs)


def test_context_bad_inputs():
    X, y, c, w = make_context_problem(1)
    with pytest.raises(ValueError, match="context"):
        context_importances(X, y, c[:-1], w)
    with pytest.raises(ValueError, match="empty"):
        context_importances(X, y, c, w, empty="drop")
    with pytest.raises(ValueError, match="NaN"):
        context_importances(X, y, np.where(c == 0, np.nan, 1.0), w)
    with pytest.raises(ValueError, match="tol"):
        context_importances(X, y, c, w, tol=-1)
    with pytest.raises(ValueError, match="problem"):
        make_context_problem(3)


def test_zero_weight_rows_are_dropped():
    # A row of probability 0 changes nothing, not even which variables look constant.
    X, y = make_led()
    extra = np.vstack([X, [0, 0, 0, 0, 0, 0, 0]])
    w = np.r_[np.ones(10), 0.0]
    np.testing.assert_allclose(
        expected_importances(extra, np.r_[y, 3], w, max_features=3, candidates="non_constant"),
        expected_importances(X, y, max_features=3, candidates="non_constant"),
        atol=1e-12,
    )
