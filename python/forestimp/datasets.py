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


def make_context_problem(problem=1):
    """Sutera's context problems (PhD thesis, ch. 6, Tables 6.1–6.3), exhaustive.

    Problem 1: ``X_1, X_2, X_3`` and the context ``X_c`` are uniform bits; ``Y = 2`` when
    ``X_1 = 0``, otherwise ``Y = X_2`` in context 0 and ``Y = X_3`` in context 1 (16 rows).

    Problem 2: the LED digit (``Y`` uniform on 0..9) with a binary context. In context 0 the
    seven segments are those of the digit; in context 1 the lower segments ``X_5, X_6, X_7``
    are independent uniform bits. ``X_8`` is an irrelevant uniform bit in both contexts. As in
    the thesis, 320 rows with 160 per context: context 1 enumerates digit × 8 lower-segment
    patterns × ``X_8``; context 0 repeats each (digit, ``X_8``) row 8 times, so every row is
    equally likely and each context has mass 1/2.

    Parameters
    ----------
    problem : {1, 2}

    Returns
    -------
    X : ndarray of shape (n, p), dtype int8
        The inputs ``V`` (the context excluded); p = 3 or 8.
    y : ndarray of shape (n,)
    context : ndarray of shape (n,), dtype int8
    weights : ndarray of shape (n,)
        Probability of each row (uniform, sums to 1).
    """
    if problem == 1:
        grid = np.array(list(itertools.product([0, 1], repeat=4)), dtype=np.int8)
        context, X = grid[:, 0], grid[:, 1:]
        y = np.where(X[:, 0] == 0, 2, np.where(context == 0, X[:, 1], X[:, 2]))
    elif problem == 2:
        rows, labels, ctx = [], [], []
        lower = list(itertools.product([0, 1], repeat=3))
        for c in (0, 1):
            for digit in range(10):
                # In context 0 the 8 patterns only replicate the digit's own segments.
                for bits in lower:
                    seg = _LED[digit].tolist()
                    if c == 1:
                        seg[4:7] = bits
                    for x8 in (0, 1):
                        rows.append([*seg, x8])
                        labels.append(digit)
                        ctx.append(c)
        X = np.array(rows, dtype=np.int8)
        y, context = np.array(labels), np.array(ctx, dtype=np.int8)
    else:
        raise ValueError(f"problem must be 1 or 2, got {problem!r}")
    return X, y.astype(np.int64), context, np.full(len(y), 1.0 / len(y))
