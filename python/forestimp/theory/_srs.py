"""Convergence of Random Subspace (RS) and Sequential Random Subspace (SRS) feature selection.

Sutera PhD, ch. 7 §3.2 and App. 7.B: the expected number of iterations (trees, K = 1) that
Algorithm 1 needs before its set F holds all r relevant variables X_0..X_{r−1} of p, when each
tree sees q variables and α ∈ [0, 1] of its memory is reserved for found variables:

* step (a) draws R = min(⌊αq⌋, |F|) variables uniformly from F, then q − R uniformly from the
  p − R others (``V \\ R``; it coincides with ``V \\ F`` whenever |F| ≤ ⌊αq⌋, which covers
  α = 0, α = 1 with r ≤ q, and every row of Table 3.1);
* the simplified tree of App. 7.B.1 decides what the drawn subspace Q reveals:

  - ``"chaining"``: the minimal conditioning of X_k is {X_0..X_{k−1}}; the tree finds the
    longest prefix X_0..X_{m−1} contained in Q;
  - ``"clique"``: X_k is relevant only given all r − 1 others; when all r are in Q the tree
    reveals one of them, uniformly at random (the last one it tests);
  - ``"marginal"``: every relevant variable is marginally and strongly relevant; the tree
    finds all of them in Q.

Let A(k) = C(p−k, q−k), the number of q-subsets holding k given variables. With R slots used
and j ≥ R variables required (R of them forced), P(all j in Q) = A(j) / A(R). The number found
is then a Markov chain on 0..r (App. 7.B.3), absorbed at r and upper triangular, so
E[T_i] = (1 + Σ_{j>i} P_ij E[T_j]) / (1 − P_ii) is solved from i = r − 1 down. Every
probability is a ratio of exact integers, rounded once to float, and 1 − P_ii is computed as
an exact difference, so no binomial overflows and nothing cancels at p = 100 000.

The closed forms are Thms 7.7–7.10 (Eq. 7.2, 7.4, 7.7, 7.8):

* chaining, RS: A(0) / A(r) = Π_{i<r} (p−i)/(q−i);
* chaining, SRS: Σ_{i<r} (p−i)/(q−i) − (r − 1);
* clique: Σ_{i<r} A(R_i) / A(r) · r / (r−i) with R_i = min(⌊αq⌋, i), one geometric wait per
  new variable; R_i = 0 is Eq. 7.7 and R_i = i is Eq. 7.8.
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Integral, Real

import numpy as np

from ..exceptions import InvalidParameterError

SCENARIOS = ("chaining", "clique", "marginal")
METHODS = ("auto", "closed_form", "markov_chain")


def _check_count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise InvalidParameterError(f"{name} must be an integer, got {value!r}")
    return int(value)


def _check_args(scenario, p, q, r, alpha) -> tuple[str, int, int, int, int]:
    """Validated ``(scenario, p, q, r, slots)`` with slots = ⌊αq⌋."""
    if scenario not in SCENARIOS:
        raise InvalidParameterError(f"scenario must be one of {SCENARIOS}, got {scenario!r}")
    p, q, r = _check_count(p, "p"), _check_count(q, "q"), _check_count(r, "r")
    if p < 1:
        raise InvalidParameterError(f"p must be >= 1, got {p}")
    if not 1 <= q <= p:
        raise InvalidParameterError(f"q must be in [1, p] = [1, {p}], got {q}")
    if not 1 <= r <= p:
        raise InvalidParameterError(f"r must be in [1, p] = [1, {p}], got {r}")
    a = float(alpha) if isinstance(alpha, Real) and not isinstance(alpha, bool) else math.nan
    if not 0.0 <= a <= 1.0:
        raise InvalidParameterError(f"alpha must be a real number in [0, 1], got {alpha!r}")
    # ⌊αq⌋ from the decimal the user typed: in binary 0.29 * 100 is 28.999..., not 29.
    slots = math.floor(Fraction(str(a)) * q)
    return scenario, p, q, r, slots


def _subset_counts(p: int, q: int, k_max: int) -> list[int]:
    """A(k) = C(p−k, q−k) for k = 0..k_max (0 once k > q).

    One ``math.comb`` and then C(n−1, s−1) = C(n, s)·s/n, which divides exactly: at p = 10^5
    and q = p/2 a binomial costs ~0.1 s, the recurrence microseconds.
    """
    out = [math.comb(p, q)]
    for k in range(k_max):
        out.append(out[-1] * (q - k) // (p - k) if k < q else 0)
    return out


def _comb_descending(m: int, s_hi: int, count: int) -> list[int]:
    """[C(m, s_hi − t) for t in 0..count−1], 0 where s is outside [0, m]."""
    out = [0] * count
    t = max(0, s_hi - m)
    if t >= count or s_hi - t < 0:
        return out
    s = s_hi - t
    c = math.comb(m, s)
    while t < count and s >= 0:
        out[t] = c
        c = c * s // (m - s + 1)
        s -= 1
        t += 1
    return out


def _row(scenario: str, p: int, q: int, r: int, slots: int, i: int, counts: list[int]):
    """Exact numerators of P(i → j) for j = i..r, and their common denominator."""
    big_r = min(slots, i)
    den = counts[big_r]
    if scenario == "chaining":
        # The found set is the prefix X_0..X_{i−1}; P(prefix of length ≥ k in Q) = A(k)/A(R).
        nums = [den - counts[i + 1]]
        nums += [counts[k] - counts[k + 1] for k in range(i + 1, r)]
        nums.append(counts[r])
        return nums, den
    if scenario == "clique":
        nums = [0] * (r - i + 1)
        nums[1] = counts[r] * (r - i)
        nums[0] = den * r - nums[1]
        return nums, den * r
    # Marginal: the new finds are hypergeometric, r − i unfound among the p − R drawable.
    left = r - i
    tails = _comb_descending(p - big_r - left, q - big_r, left + 1)
    nums = [math.comb(left, j) * tails[j] for j in range(left + 1)]
    return nums, den


def _ratio(num: int, den: int) -> float:
    try:
        return num / den
    except OverflowError:
        raise OverflowError(
            "the expected number of iterations exceeds the float range (~1.8e308)"
        ) from None


def srs_transition_matrix(scenario: str, p: int, q: int, r: int, alpha: float) -> np.ndarray:
    """Transition matrix of the number of relevant variables found (Sutera PhD, App. 7.B.3).

    Parameters
    ----------
    scenario : {"chaining", "clique", "marginal"}
        Structure of the r relevant variables (see the module docstring).
    p : int
        Number of variables.
    q : int
        Subspace size (memory), 1 <= q <= p.
    r : int
        Number of relevant variables, 1 <= r <= p.
    alpha : float in [0, 1]
        Fraction of the memory reserved for found variables (0: RS, 1: SRS).

    Returns
    -------
    ndarray of shape (r + 1, r + 1)
        ``P[i, j]``: probability that one iteration takes i found variables to j; upper
        triangular, rows sum to 1, state r absorbing. Each entry is an exact ratio of integers
        rounded to float, so tiny probabilities may underflow to 0.
    """
    scenario, p, q, r, slots = _check_args(scenario, p, q, r, alpha)
    counts = _subset_counts(p, q, r)
    out = np.zeros((r + 1, r + 1))
    out[r, r] = 1.0
    for i in range(r):
        nums, den = _row(scenario, p, q, r, slots, i, counts)
        out[i, i:] = [n / den for n in nums]
    return out


def _markov_chain(scenario: str, p: int, q: int, r: int, slots: int) -> float:
    counts = _subset_counts(p, q, r)
    times = [0.0] * (r + 1)
    infinite = [False] * (r + 1)
    for i in range(r - 1, -1, -1):
        nums, den = _row(scenario, p, q, r, slots, i, counts)
        leave = den - nums[0]
        reach = [j for j in range(1, len(nums)) if nums[j]]
        # Exact integers decide infinity; a float inf is only ever an overflow.
        if leave == 0 or any(infinite[i + j] for j in reach):
            infinite[i] = True
            times[i] = math.inf
            continue
        acc = 1.0 + sum(nums[j] / den * times[i + j] for j in reach)
        stay_out = leave / den
        times[i] = acc / stay_out if stay_out > 0 else math.inf
        # Checked per state: a later 0.0 * inf (underflowed probability) would give NaN.
        if not math.isfinite(times[i]):
            raise OverflowError(
                "the expected number of iterations exceeds the float range (~1.8e308)"
            )
    return times[0]


def _closed_form(scenario: str, p: int, q: int, r: int, slots: int) -> float:
    if scenario == "marginal":
        raise InvalidParameterError(
            "the thesis gives no closed form for the marginal-only scenario; "
            "use method='markov_chain' (or 'auto')"
        )
    if r > q:
        # A(r) = 0: the r variables that must be drawn together never fit in memory.
        return math.inf
    counts = _subset_counts(p, q, r)
    if scenario == "clique":
        return math.fsum(_ratio(counts[min(slots, i)] * r, counts[r] * (r - i)) for i in range(r))
    if slots == 0:
        return _ratio(counts[0], counts[r])
    if slots >= r - 1:
        return math.fsum((p - i) / (q - i) for i in range(r)) - (r - 1)
    raise InvalidParameterError(
        "the chaining closed forms (Thms 7.7, 7.8) need floor(alpha*q) == 0 (RS) or "
        f">= r - 1 (SRS); got floor(alpha*q) = {slots} with r = {r}. "
        "Use method='markov_chain' (or 'auto')"
    )


def expected_srs_iterations(
    scenario: str, p: int, q: int, r: int, alpha: float, *, method: str = "auto"
) -> float:
    """Expected iterations of RS/SRS (K = 1) until all r relevant variables are found.

    Exact under the simplified tree of Sutera PhD App. 7.B.1 (see the module docstring), for
    every α in [0, 1] and all three scenarios. Table 3.1 of the thesis prints these values
    truncated to integers (``math.floor``), e.g. 291 for the marginal (10 000, 100, 10) RS
    value 291.93.

    Parameters
    ----------
    scenario : {"chaining", "clique", "marginal"}
        Structure of the relevant variables X_0..X_{r−1}.
    p : int
        Number of variables.
    q : int
        Subspace size (memory), 1 <= q <= p.
    r : int
        Number of relevant variables, 1 <= r <= p.
    alpha : float in [0, 1]
        Fraction of the memory reserved for found variables; ⌊αq⌋ slots. 0 is RS, 1 is SRS.
    method : {"auto", "closed_form", "markov_chain"}
        ``"closed_form"`` evaluates Thms 7.7–7.10: chaining needs ⌊αq⌋ = 0 (RS, Eq. 7.2) or
        ⌊αq⌋ >= r − 1 (SRS, Eq. 7.4; the chain is then identical); clique holds for every α
        (Eq. 7.7, 7.8 and their sum of geometric waits in between); marginal has none and
        raises. ``"markov_chain"`` solves the absorbing chain for any input. ``"auto"`` uses
        the closed form where there is one.

    Returns
    -------
    float
        The expectation; ``math.inf`` when some variable can never be found: r > q in the
        chaining and clique scenarios (X_{r−1} needs r variables in memory at once), or
        α = 1 with r > q in the marginal one (memory fills up with found variables).

    Raises
    ------
    InvalidParameterError
        Unknown scenario or method, non-integer counts, q or r outside [1, p], α outside
        [0, 1], or a closed form requested where there is none.
    OverflowError
        The expectation (or, with the Markov chain, that from some intermediate state) is
        finite but beyond the float range, e.g. chaining RS with large r.
    """
    scenario, p, q, r, slots = _check_args(scenario, p, q, r, alpha)
    if method not in METHODS:
        raise InvalidParameterError(f"method must be one of {METHODS}, got {method!r}")
    if method == "markov_chain":
        return _markov_chain(scenario, p, q, r, slots)
    has_closed = scenario == "clique" or (
        scenario == "chaining" and (slots == 0 or slots >= r - 1 or r > q)
    )
    if method == "closed_form" or has_closed:
        return _closed_form(scenario, p, q, r, slots)
    return _markov_chain(scenario, p, q, r, slots)
