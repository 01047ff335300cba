"""Which inputs reach the engine without a copy of X (the documented rule).

``fit`` and ``predict`` read C- and Fortran-ordered float32/float64 in place and copy anything
else once.
tracemalloc sees NumPy's allocations, so the peak traced memory must stay far below the size
of X when no copy is made, and reach it when one is.
"""

import tracemalloc

import numpy as np
import pytest

from forestimp import ExtraTreesRegressor, RandomForestClassifier

N, P = 20_000, 50


def _peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_contiguous_float_inputs(dtype, order):
    rng = np.random.default_rng(0)
    X = np.asarray(rng.random((N, P)), dtype=dtype, order=order)
    y = (X[:, 0] > 0.5).astype(np.int64)
    est = RandomForestClassifier(n_estimators=2, max_depth=4, random_state=0)
    peak_fit = _peak(lambda: est.fit(X, y))
    peak_predict = _peak(lambda: est.predict_proba(X))
    # Outputs and y are O(N); a copy of X would be N * P * itemsize.
    assert peak_fit < 0.25 * X.nbytes, (peak_fit, X.nbytes)
    assert peak_predict < 0.25 * X.nbytes, (peak_predict, X.nbytes)


def test_a_strided_view_is_copied_once():
    rng = np.random.default_rng(1)
    X = rng.random((N, 2 * P))[:, ::2]  # neither C- nor F-contiguous
    y = X[:, 0]
    est = ExtraTreesRegressor(n_estimators=2, max_depth=3, random_state=0)
    peak = _peak(lambda: est.fit(X, y))
    assert X.nbytes <= peak < 2.5 * X.nbytes
