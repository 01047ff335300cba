"""Synthetic problems from the seeds, with known exact importances or known relevant sets.

Each generator returns ``(X, y)``. The discrete ones are integer-coded and, with
``n_samples=None``, return the whole support of the distribution with every row equally
likely, which is the data on which finite forests reproduce the asymptotic theory exactly
(``forestimp.theory``).

Relevant sets (for feature selection, Sutera PhD ch. 7): the generators with a
``return_relevant`` keyword return ``(X, y, relevant)`` when it is true, ``relevant`` being
the column indices of the relevant variables, ordered as the structure defines them (the
chain order for :func:`make_chaining`; informative, then redundant, then repeated for
:func:`make_madelon_like`). Without shuffling the relevant variables are the first columns;
``shuffle=True`` permutes the columns with ``random_state`` and ``relevant`` follows them.
"""

from __future__ import annotations

import itertools
from numbers import Integral

import numpy as np
from sklearn.datasets import make_classification
from sklearn.utils import check_random_state

# Exhaustive supports beyond 2**20 rows are refused: they stop being a cheap exact oracle.
_MAX_EXHAUSTIVE_BITS = 20

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


def _with_relevant(X, y, relevant, return_relevant, *, rng=None):
    """``(X, y)`` or ``(X, y, relevant)``; with ``rng`` the columns are permuted first."""
    relevant = np.asarray(relevant, dtype=np.intp)
    if rng is not None:
        perm = rng.permutation(X.shape[1])
        X = X[:, perm]
        # Column c of the layout is now at position where[c].
        where = np.empty_like(perm)
        where[perm] = np.arange(perm.size)
        relevant = where[relevant]
    return (X, y, relevant) if return_relevant else (X, y)


def _check_sizes(n_relevant, n_irrelevant):
    for name, value, low in (("n_relevant", n_relevant, 1), ("n_irrelevant", n_irrelevant, 0)):
        if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(n_relevant), int(n_irrelevant)


def _bits(n_samples, n_bits, rng):
    """Uniform bits: every pattern once (``n_samples=None``) or ``n_samples`` random rows."""
    if n_samples is None:
        if n_bits > _MAX_EXHAUSTIVE_BITS:
            raise ValueError(
                f"the exhaustive support has 2**{n_bits} rows; at most 2**{_MAX_EXHAUSTIVE_BITS}"
                " (pass n_samples to draw rows instead)"
            )
        codes = np.arange(1 << n_bits)[:, None] >> np.arange(n_bits - 1, -1, -1)
        return (codes & 1).astype(np.int8)
    return rng.randint(2, size=(n_samples, n_bits)).astype(np.int8)


def make_led(
    n_samples=None, *, noise=0.0, n_irrelevant=0, random_state=None, return_relevant=False
):
    """Seven-segment display digits (Breiman et al. 1984; LED24 with ``n_irrelevant=17``).

    LED24 is ``make_led(n, noise=0.1, n_irrelevant=17)``: 7 relevant segments, 17 probes.

    Parameters
    ----------
    n_samples : int or None
        Rows to draw (digits uniform). None returns the 10 digits once each (exhaustive;
        requires ``noise=0`` and ``n_irrelevant=0``).
    noise : float in [0, 1)
        Probability that each segment is flipped independently.
    n_irrelevant : int
        Extra uniform random bits independent of the digit.
    return_relevant : bool
        Also return the relevant columns, ``arange(7)``.

    Returns
    -------
    X : ndarray of shape (n, 7 + n_irrelevant), dtype int8
    y : ndarray of shape (n,), the digits 0..9
    relevant : ndarray of int, only with ``return_relevant=True``
    """
    if n_samples is None:
        if noise or n_irrelevant:
            raise ValueError("the exhaustive LED data (n_samples=None) has no noise or extra bits")
        return _with_relevant(_LED.copy(), np.arange(10), range(7), return_relevant)
    if not 0.0 <= noise < 1.0:
        raise ValueError(f"noise must be in [0, 1), got {noise}")
    rng = check_random_state(random_state)
    y = rng.randint(10, size=n_samples)
    X = _LED[y].copy()
    flips = rng.random_sample(X.shape) < noise
    X[flips] = 1 - X[flips]
    extra = rng.randint(2, size=(n_samples, n_irrelevant)).astype(np.int8)
    return _with_relevant(np.hstack([X, extra]), y, range(7), return_relevant)


def make_xor(
    n_samples=None, *, n_relevant=2, n_features=None, random_state=None, return_relevant=False
):
    """Parity of the first ``n_relevant`` of ``n_features`` uniform bits (Sutera 2013, §3.2.1).

    Every relevant bit has importance ``1/n_relevant`` under totally randomized trees and the
    other bits 0. None returns all ``2**n_features`` rows once. ``return_relevant=True`` also
    returns ``arange(n_relevant)``; :func:`make_clique` is the same parity with shuffling
    and label noise.
    """
    p = n_relevant if n_features is None else n_features
    if not 1 <= n_relevant <= p:
        raise ValueError(f"need 1 <= n_relevant <= n_features, got {n_relevant}, {p}")
    if n_samples is None:
        X = np.array(list(itertools.product([0, 1], repeat=p)), dtype=np.int8)
    else:
        X = check_random_state(random_state).randint(2, size=(n_samples, p)).astype(np.int8)
    y = X[:, :n_relevant].sum(axis=1) % 2
    return _with_relevant(X, y, range(n_relevant), return_relevant)


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


def make_chaining(
    n_samples=None,
    *,
    n_relevant=3,
    n_irrelevant=0,
    shuffle=False,
    random_state=None,
    return_relevant=False,
):
    """Binary chain: the only minimal conditioning of ``X_k`` is ``{X_0..X_{k−1}}`` (deg k).

    The chaining scenario of Sutera PhD ch. 7 §3.2. With uniform bits ``X_k`` and hidden fair
    coins ``C_k``, ``T_r = 0``, ``T_k = (X_k XOR T_{k+1}) AND C_k`` and ``Y = T_0``:

    * an unknown ``X_k`` makes ``X_k XOR T_{k+1}`` a fair coin independent of everything
      else, so ``I(Y; X_j | B) = 0`` for j > k whenever ``X_k`` is not in B;
    * given ``X_k``, Y is a strictly monotone channel of ``T_{k+1}``, which recurses;
    * ``P(T_{k+1} = 1) = 1/4 != 1/2``, so ``X_k`` is relevant given its prefix (and given
      any B containing it).

    Hence ``I(Y; X_k | B) > 0`` if and only if B contains ``X_0..X_{k−1}``; the
    ``n_irrelevant`` extra bits are independent of everything.

    Parameters
    ----------
    n_samples : int or None
        Rows to draw. None returns the exhaustive support: every pattern of the
        ``n_relevant + n_irrelevant`` bits and the ``n_relevant`` coins once (the coins are
        not columns, so X rows repeat), ``2**(2 n_relevant + n_irrelevant)`` rows in all.
    n_relevant : int >= 1
        Length r of the chain.
    n_irrelevant : int >= 0
        Uniform bits independent of Y.
    shuffle : bool
        Permute the columns with ``random_state``.
    random_state : int, RandomState or None
    return_relevant : bool
        Also return the relevant columns in chain order (``relevant[k]`` holds ``X_k``).

    Returns
    -------
    X : ndarray of shape (n, n_relevant + n_irrelevant), dtype int8
    y : ndarray of shape (n,), dtype int64, values 0 and 1 (P(Y = 1) = 1/4)
    relevant : ndarray of int, only with ``return_relevant=True``
    """
    r, m = _check_sizes(n_relevant, n_irrelevant)
    rng = check_random_state(random_state)
    grid = _bits(n_samples, 2 * r + m, rng)
    X, coins = grid[:, : r + m], grid[:, r + m :]
    t = np.zeros(grid.shape[0], dtype=np.int64)
    for k in range(r - 1, -1, -1):
        t = (X[:, k] ^ t) & coins[:, k]
    return _with_relevant(
        np.ascontiguousarray(X), t, range(r), return_relevant, rng=rng if shuffle else None
    )


def make_clique(
    n_samples=None,
    *,
    n_relevant=3,
    n_irrelevant=0,
    noise=0.0,
    shuffle=False,
    random_state=None,
    return_relevant=False,
):
    """Binary clique: each relevant bit matters only given all the other ``n_relevant − 1``.

    The clique scenario of Sutera PhD ch. 7 §3.2: Y is the parity of the r relevant uniform
    bits (:func:`make_xor`), so ``I(Y; X_k | B) > 0`` if and only if B contains the r − 1
    other relevant bits, and every relevant bit has degree r − 1.

    Parameters
    ----------
    n_samples : int or None
        Rows to draw. None returns all ``2**(n_relevant + n_irrelevant)`` patterns once
        (requires ``noise=0``).
    n_relevant, n_irrelevant : int
        Size r >= 1 of the clique and number of independent uniform bits.
    noise : float in [0, 0.5)
        Probability that each label is flipped; the structure is unchanged.
    shuffle : bool
        Permute the columns with ``random_state``.
    random_state : int, RandomState or None
    return_relevant : bool
        Also return the relevant columns.

    Returns
    -------
    X : ndarray of shape (n, n_relevant + n_irrelevant), dtype int8
    y : ndarray of shape (n,), values 0 and 1
    relevant : ndarray of int, only with ``return_relevant=True``
    """
    r, m = _check_sizes(n_relevant, n_irrelevant)
    if not 0.0 <= noise < 0.5:
        raise ValueError(f"noise must be in [0, 0.5), got {noise}")
    if n_samples is None and noise:
        raise ValueError("the exhaustive clique data (n_samples=None) has no label noise")
    rng = check_random_state(random_state)
    X = _bits(n_samples, r + m, rng)
    y = X[:, :r].sum(axis=1, dtype=np.int64) % 2
    if noise:
        y ^= (rng.random_sample(y.shape) < noise).astype(np.int64)
    return _with_relevant(X, y, range(r), return_relevant, rng=rng if shuffle else None)


def make_madelon_like(
    n_samples=2000,
    *,
    n_features=500,
    n_informative=5,
    n_redundant=15,
    n_repeated=0,
    n_clusters_per_class=16,
    class_sep=1.0,
    flip_y=0.01,
    shuffle=False,
    random_state=None,
    return_relevant=False,
):
    """Guyon's MADELON recipe (NIPS 2003 feature selection challenge), with its relevant set.

    Two classes of ``n_clusters_per_class`` Gaussian clusters each, centred on vertices of
    an ``n_informative``-dimensional hypercube of side ``2 class_sep`` and labelled at random,
    an XOR-like problem in which no informative feature separates the classes alone; then
    ``n_redundant`` random linear combinations of the informative features, ``n_repeated``
    copies of informative or redundant ones, and Gaussian probes up to ``n_features``. The
    defaults are MADELON's: 500 features of which 20 are relevant (5 + 15), 32 clusters.
    Built on ``sklearn.datasets.make_classification(shuffle=False, hypercube=True)``.

    Parameters
    ----------
    n_samples : int
    n_features, n_informative, n_redundant, n_repeated, n_clusters_per_class : int
        As in ``make_classification``; needs ``2 n_clusters_per_class <= 2**n_informative``.
    class_sep, flip_y : float
        Half the hypercube side, and the fraction of labels assigned at random.
    shuffle : bool
        Permute the columns (the rows are always shuffled: ``make_classification`` without
        shuffling orders them by cluster).
    random_state : int, RandomState or None
    return_relevant : bool
        Also return the relevant columns: the informative ones, then the redundant, then the
        repeated (``relevant[:n_informative]`` are the informative).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64
    y : ndarray of shape (n_samples,), values 0 and 1
    relevant : ndarray of int, only with ``return_relevant=True``
    """
    rng = check_random_state(random_state)
    X, y = make_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_informative=n_informative,
        n_redundant=n_redundant,
        n_repeated=n_repeated,
        n_classes=2,
        n_clusters_per_class=n_clusters_per_class,
        flip_y=flip_y,
        class_sep=class_sep,
        hypercube=True,
        shuffle=False,
        random_state=rng,
    )
    rows = rng.permutation(X.shape[0])
    n_relevant = n_informative + n_redundant + n_repeated
    return _with_relevant(
        X[rows], y[rows], range(n_relevant), return_relevant, rng=rng if shuffle else None
    )
