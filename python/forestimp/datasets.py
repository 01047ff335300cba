"""Synthetic problems from the seeds, with known exact importances.

Each generator returns ``(X, y)`` with integer-coded inputs. With ``n_samples=None`` it returns
the whole support of the distribution with every row equally likely, which is the data on
which finite forests reproduce the asymptotic theory exactly (``forestimp.theory``).
"""

from __future__ import annotations

import itertools

import numpy as np
from sklearn.utils import check_random_state

# Segments in the order of Louppe et al. (2013) and Sutera (2013): top, upper-left,
# upper-right, middle, lower-left, lower-right, bottom.
_LED = np.array(
    [
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
    ],
    dtype=np.int8,
)


def make_led(n_samples=None, *, noise=0.0, n_irrelevant=0, random_state=None):
    """Seven-segment display digits (Breiman et al. 1984; LED24 with ``n_irrelevant=17``).

    Parameters
    ----------
    n_samples : int or None
        Rows to draw (digits uniform). None returns the 10 digits once each (exhaustive;
        requires ``noise=0`` and ``n_irrelevant=0``).
    noise : float in [0, 1)
        Probability that each segment is flipped independently.
    n_irrelevant : int
        Extra uniform random bits independent of the digit.

    Returns
    -------
    X : ndarray of shape (n, 7 + n_irrelevant), dtype int8
    y : ndarray of shape (n,), the digits 0..9
    """
    if n_samples is None:
        if noise or n_irrelevant:
            raise ValueError("the exhaustive LED data (n_samples=None) has no noise or extra bits")
        return _LED.copy(), np.arange(10)
    if not 0.0 <= noise < 1.0:
        raise ValueError(f"noise must be in [0, 1), got {noise}")
    rng = check_random_state(random_state)
    y = rng.randint(10, size=n_samples)
    X = _LED[y].copy()
    flips = rng.random_sample(X.shape) < noise
    X[flips] = 1 - X[flips]
    extra = rng.randint(2, size=(n_samples, n_irrelevant)).astype(np.int8)
    return np.hstack([X, extra]), y


def make_xor(n_samples=None, *, n_relevant=2, n_features=None, random_state=None):
    """Parity of the first ``n_relevant`` of ``n_features`` uniform bits (Sutera 2013, §3.2.1).

    Every relevant bit has importance ``1/n_relevant`` under totally randomized trees and the
    other bits 0. None returns all ``2**n_features`` rows once.
    """
    p = n_relevant if n_features is None else n_features
    if not 1 <= n_relevant <= p:
        raise ValueError(f"need 1 <= n_relevant <= n_features, got {n_relevant}, {p}")
    if n_samples is None:
        X = np.array(list(itertools.product([0, 1], repeat=p)), dtype=np.int8)
    else:
        X = check_random_state(random_state).randint(2, size=(n_samples, p)).astype(np.int8)
    return X, X[:, :n_relevant].sum(axis=1) % 2


def make_sym(n_samples=None, *, n_irrelevant=0, random_state=None):
    """Sutera (2013, §3.2.2): ``Y = X1`` when ``X1 = X2``, otherwise a fair coin.

    Both relevant bits have importance 0.25 under totally randomized trees
    (``I(X_i; Y) = 0.1887``, ``I(X_1; Y | X_2) = 0.3113``). None returns 8 equally likely rows
    realising the distribution exactly (only with ``n_irrelevant=0``).
    """
    if n_samples is None:
        if n_irrelevant:
            raise ValueError("the exhaustive SYM data has no irrelevant bits")
        X = np.array([[0, 0], [0, 0], [1, 1], [1, 1], [0, 1], [0, 1], [1, 0], [1, 0]], np.int8)
        return X, np.array([0, 0, 1, 1, 0, 1, 0, 1])
    rng = check_random_state(random_state)
    X = rng.randint(2, size=(n_samples, 2 + n_irrelevant)).astype(np.int8)
    coin = rng.randint(2, size=n_samples)
    y = np.where(X[:, 0] == X[:, 1], X[:, 0], coin)
    return X, y
