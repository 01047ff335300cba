"""Type stubs for the compiled module ``forestimp._core`` (Rust, via PyO3).

This is the private engine layer: the public, scikit-learn compatible estimators in
``forestimp.ensemble`` resolve and validate hyper-parameters, encode labels, and call into
these functions. Arrays cross the boundary without copies when they are float32/float64 and
C- or Fortran-contiguous. Every ``x`` may also be a ``scipy.sparse`` CSC matrix or array
(float32/float64 values, int32 indices), read in place; its index is checked (``DataError``).
"""

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "FORMAT_VERSION",
    "SINGLE_OUTPUT_FORMAT_VERSION",
    "Bins",
    "Booster",
    "DataError",
    "Forest",
    "InvalidParameterError",
    "LeafValues",
    "ModelFormatError",
    "__version__",
    "_install_counts",
    "booster_oob_indices",
    "booster_oob_permutation_importance",
    "context_importances",
    "in_bag_counts",
    "leaf_values",
    "local_mdi",
    "local_permutation_importance",
    "mdi_by_depth",
    "mdi_oob",
    "oob_indices",
    "oob_permutation_importance",
    "permutation_indices",
    "permuted_predictions",
    "rows_crc32",
    "tree_mdi_by_depth",
    "tree_mdi_by_output",
    "tree_predictions",
    "tree_shap",
]

__version__: str
FORMAT_VERSION: int
# The version single-output models are written in (multi-output ones: 4; forests that keep
# their nodes as grown, absolute-error or monotonic ones: 5, or 6 with several outputs).
SINGLE_OUTPUT_FORMAT_VERSION: int

# Dense arrays, or a scipy.sparse CSC matrix/array (scipy ships no type stubs).
_Matrix: TypeAlias = npt.NDArray[np.float32] | npt.NDArray[np.float64] | Any
# Targets: float64 values (regression, or class codes as floats) or uint32 class codes.
_Targets: TypeAlias = npt.NDArray[np.float64] | npt.NDArray[np.uint32]

class InvalidParameterError(ValueError):
    """A hyper-parameter is out of its documented range."""

class DataError(ValueError):
    """X, y or sample_weight is malformed (shape, non-finite values, bad labels)."""

class ModelFormatError(ValueError):
    """Model bytes are truncated, corrupted, or from a newer format version."""

@final
class Bins:
    """The histogram codes of every column of an X, made once for many fits on views of it
    (``Forest.fit(bins=)``)."""

    def __new__(cls, x: _Matrix, max_bins: int = 255, n_jobs: int | None = None) -> Bins: ...

@final
class Booster:
    """An immutable fitted gradient-boosting model (``forestimp.boosting``): ``k`` trees per
    round (K for multinomial log loss, else 1), each kept as grown on the negative gradients,
    with its line-searched leaf values apart."""

    @staticmethod
    def fit(
        x: npt.NDArray[np.float32] | npt.NDArray[np.float64],
        y: npt.NDArray[np.float64],
        sample_weight: npt.NDArray[np.float64] | None,
        *,
        n_classes: int,
        loss: str,
        alpha: float,
        learning_rate: float,
        n_estimators: int,
        subsample: float,
        init_zero: bool,
        splitter: str,
        max_bins: int,
        max_features: int,
        tree_features: int | None,
        max_depth: int | None,
        min_samples_split: int,
        min_samples_leaf: int,
        min_weight_fraction_leaf: float,
        min_impurity_decrease: float,
        max_leaf_nodes: int | None,
        ccp_alpha: float,
        random_state: int,
        n_iter_no_change: int | None,
        tol: float,
        validation: tuple[
            Any,
            npt.NDArray[np.float64],
            npt.NDArray[np.float64],
            npt.NDArray[np.float64] | None,
        ]
        | None = None,
        previous: Booster | None = None,
        n_jobs: int | None = None,
        progress: Callable[[int, int], object] | None = None,
        offset: npt.NDArray[np.float64] | None = None,
        monitor: Callable[[int, Booster], object] | None = None,
        categorical: list[bool] | None = None,
        category_guards: tuple[float, int, float, int, float] | None = None,
    ) -> Booster:
        """Fit ``n_estimators`` rounds (those after ``previous``'s, warm start) on dense
        ``x``; ``y`` holds values, or class codes as floats when ``n_classes > 0``.
        ``validation`` is ``(x_val, y_val, w_val, offset_val)`` for early stopping (same dtype
        as x); ``offset`` (and ``offset_val``), ``(n, k)`` raveled, are an initial model's raw
        predictions the rounds start from (``init_zero`` must be set). ``monitor(i, model)``,
        called after round ``i`` with the model so far, ends the fit when it returns
        something true (its exception ends the fit and is raised). ``categorical``: per
        feature, whether its values are category codes split by sets (as the forests'),
        within ``category_guards`` (as the forests')."""

    def raw_predict(
        self, x: _Matrix, rounds: int | None = None, n_jobs: int | None = None
    ) -> npt.NDArray[np.float64]:
        """Raw predictions after the first ``rounds`` rounds (all by default), (n, k)."""

    def round_contributions(
        self, x: _Matrix, start: int, stop: int, n_jobs: int | None = None
    ) -> npt.NDArray[np.float64]:
        """What rounds ``start..stop`` add to the raw predictions, (stop - start, n, k)."""

    def apply(self, x: _Matrix, n_jobs: int | None = None) -> npt.NDArray[np.int64]:
        """Leaf node id of every row in every tree, (n, n_rounds, k)."""

    def feature_importances(self) -> npt.NDArray[np.float64]:
        """scikit-learn's normalized ``feature_importances_`` for boosting."""

    def tree_importances(self) -> npt.NDArray[np.float64]:
        """Unnormalized MDI of every tree, (n_trees, n_features), round-major."""

    def split_stats(self) -> npt.NDArray[np.float64]:
        """Per tree: total gain, split count and cover of every feature, (n_trees, 3, p)."""

    @property
    def train_score(self) -> npt.NDArray[np.float64]: ...
    @property
    def oob_scores(self) -> npt.NDArray[np.float64]: ...
    @property
    def oob_improvement(self) -> npt.NDArray[np.float64]: ...
    @property
    def init(self) -> npt.NDArray[np.float64]: ...
    @property
    def n_rounds(self) -> int: ...
    @property
    def trees_per_round(self) -> int: ...
    @property
    def n_features(self) -> int: ...
    @property
    def n_classes(self) -> int: ...
    @property
    def loss(self) -> str: ...
    @property
    def learning_rate(self) -> float: ...
    def tree_arrays(self, index: int) -> dict[str, npt.NDArray[Any]]:
        """Tree ``index`` (round-major) in scikit-learn's node layout, line-searched values
        at the leaves."""

    def node_counts(self) -> npt.NDArray[np.int64]:
        """Node counts of the trees, round-major."""

    def to_bytes(self) -> bytes:
        """Versioned binary model (magic ``FIMB``, format version, checksum, payload)."""

    @staticmethod
    def from_bytes(data: bytes) -> Booster:
        """Inverse of ``to_bytes``; raises ModelFormatError on bad bytes."""

    def __reduce__(self) -> tuple[Callable[[bytes], Booster], tuple[bytes]]: ...

@final
class Forest:
    """An immutable fitted ensemble of binary decision trees."""

    @staticmethod
    def fit(
        x: _Matrix,
        y: _Targets,
        sample_weight: npt.NDArray[np.float64] | None,
        *,
        n_classes: int,
        criterion: str,
        splitter: str,
        n_estimators: int,
        max_features: int,
        max_depth: int | None,
        min_samples_split: int,
        min_samples_leaf: int,
        min_weight_fraction_leaf: float,
        min_impurity_decrease: float,
        max_leaf_nodes: int | None,
        bootstrap: bool,
        max_samples: int | None,
        tree_features: int | None,
        balanced_subsample: bool,
        random_state: int,
        n_jobs: int | None,
        progress: Callable[[int, int], None] | None = None,
        shadows: bool | npt.NDArray[np.int64] | None = None,
        columns: npt.NDArray[np.int64] | None = None,
        max_bins: int = 255,
        previous: Forest | None = None,
        bins: Bins | None = None,
        trees: tuple[int, int] | None = None,
        ccp_alpha: float = 0.0,
        output_classes: list[int] | None = None,
        monotonic_cst: list[int] | None = None,
        categorical: list[bool] | None = None,
        category_guards: tuple[float, int, float, int, float] | None = None,
    ) -> Forest:
        """Fit a forest.

        ``y`` holds class codes ``0..n_classes-1`` (uint32, read in place, or floats) when
        ``n_classes >= 1`` and float64 regression targets when ``n_classes == 0``. A 2-D,
        C-contiguous ``y`` (n, m) fits m outputs with trees shared by all of them: uint32
        codes with ``output_classes`` (the class count of each column), or float64 values
        with ``n_classes == 0`` (``docs/multi-output.md``).
        ``max_features`` is the number K of candidate features per node (1 <= K <= number
        of features the tree sees);
        ``tree_features`` is the size of the per-tree random feature subset (Random
        Subspace / Patches), None for all. ``max_samples`` is the number of rows drawn per
        tree (with replacement when ``bootstrap``), None for n_samples. ``splitter`` is
        ``"best"``, ``"random"``, ``"hist"`` (best split between at most ``max_bins``
        quantile bins per feature, 2 <= max_bins <= 256; thresholds stored as real values)
        or ``"multiway"`` (integer-coded X, one child per observed value, stored as chains
        of binary nodes; see ``forestimp.ensemble``).
        ``progress(done, total)`` is called about every 0.1 s while trees grow, and once at
        the end, with the GIL held; an exception it raises stops the fit (no new tree starts).
        With ``shadows=True`` the forest is grown on 2p features: X and, as features
        p..2p-1, its columns read at one row permutation drawn from ``random_state`` (no
        copy). With an int64 array ``sources`` it is grown on ``p + len(sources)`` features:
        feature ``p + k`` is column ``sources[k]`` read through its own row permutation
        (Boruta's shadows, random probes). ``columns`` (int64 indices of X's columns) grows
        the forest on those columns only, in that order, without a copy; shadows follow them
        (``True``: one per selected column). The forest keeps this view while it lives (not
        in its bytes): ``oob_permutation_importance`` on the training X reads it again.
        ``previous`` (warm start): a forest fitted with the same arguments (but fewer
        ``n_estimators``) on the same data; its trees are kept and only the next ones are
        grown, which gives the forest of all the trees grown at once.
        ``bins``: the histogram codes of the stored X (``Bins(x, max_bins)``), read through
        the view instead of binning it again (the same codes when X has at most 200 000
        rows; otherwise, or with another ``max_bins``, X is binned as usual).
        ``trees=(start, stop)`` grows only the trees ``start..stop`` of the forest of
        ``n_estimators`` trees: a part (``first_tree == start``), which ``concat`` puts back
        together with the other parts into that forest, bit for bit.
        ``criterion``: ``"gini"``, ``"entropy"`` (alias ``"log_loss"``), ``"squared_error"``,
        ``"absolute_error"`` (weighted medians; ``"best"`` and ``"random"`` splitters, one
        output) or ``"poisson"`` (y >= 0 with a positive sum). ``ccp_alpha > 0`` prunes each grown
        tree by minimal cost-complexity pruning (not with ``"multiway"``; not stored in the
        model bytes, whose trees are already pruned).
        ``monotonic_cst``: one sign per feature the forest is grown on (the view's, shadows
        included): 1 (prediction increasing in it), -1 (decreasing), 0 (free); for a binary
        classifier, on the probability of class 1 (scikit-learn 1.9's rules; single-output
        regression and binary classification only, not with ``"multiway"``; not stored in
        the model bytes).
        ``categorical``: per feature the forest is grown on, whether its values are category
        codes (whole numbers from 0, NaN missing) split by sets of categories (not
        ``"multiway"``; dense X). ``category_guards``: ``(smoothing, min_samples,
        min_share, max_side, penalty)`` of the best set's search (0 max_side: no limit;
        None: the defaults, a penalty of 1 and no other guard).
        """

    def predict(self, x: _Matrix, n_jobs: int | None = None) -> npt.NDArray[np.float64]:
        """Average of the trees' leaf values: (n, n_classes) probabilities or (n, 1) values;
        several outputs side by side: (n, sum of ``outputs``)."""

    def apply(self, x: _Matrix, n_jobs: int | None = None) -> npt.NDArray[np.int64]:
        """Leaf index reached by each sample in each tree, shape (n_samples, n_estimators)."""

    def decision_path(
        self, x: _Matrix, n_jobs: int | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """CSR (indptr, indices, n_nodes_ptr) of the nodes each sample traverses, trees stacked."""

    def oob_predict(
        self, x: _Matrix, n_jobs: int | None = None
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Out-of-bag averages (n, width) and the number of trees each row was OOB for.

        X must be the training matrix. Rows never out of bag get NaN.
        """

    def importances(self, normalize: bool, n_jobs: int | None = None) -> npt.NDArray[np.float64]:
        """MDI. Raw: mean over trees of sum_t p(t) * delta_i(t) (bits for entropy).

        Normalized: each tree's vector normalized to sum 1, averaged, normalized again
        (scikit-learn's ``feature_importances_``).
        """

    def tree_importances(self, n_jobs: int | None = None) -> npt.NDArray[np.float64]:
        """Raw MDI of every tree, shape (n_estimators, n_features)."""

    def tree_arrays(self, index: int) -> dict[str, npt.NDArray[np.generic]]:
        """Node arrays of one tree: children_left, children_right, feature, threshold,
        impurity, n_node_samples, weighted_n_node_samples, value (n_nodes, width).
        Leaves have children -1 and feature -2 (scikit-learn's convention)."""

    def to_bytes(self) -> bytes:
        """Versioned binary model (magic, format version, checksum, payload)."""

    @staticmethod
    def from_bytes(data: bytes) -> Forest:
        """Inverse of ``to_bytes``; raises ModelFormatError on bad bytes."""

    def __reduce__(self) -> tuple[Callable[[bytes], Forest], tuple[bytes]]: ...
    @property
    def n_estimators(self) -> int: ...
    @property
    def first_tree(self) -> int:
        """Index of the first tree in the seed's sequence (0 but for a part of a forest)."""
    def part(self, start: int, stop: int) -> Forest:
        """The part made of the trees at positions ``start..stop``."""
    @staticmethod
    def assemble(
        parts: Sequence[Forest], columns: Sequence[Sequence[int]], n_features: int
    ) -> Forest:
        """The forest of the trees of ``parts``, each grown on the ``columns`` of a matrix
        of ``n_features`` columns (Random Patches grown apart); it has no out-of-bag rows."""
    @property
    def assembled(self) -> bool:
        """Whether the forest was assembled from patches (no out-of-bag rows)."""
    @staticmethod
    def concat(parts: Sequence[Forest]) -> Forest:
        """The forest of consecutive parts of one forest, in order; InvalidParameterError
        for parts of different forests, out of order or with gaps."""
    @property
    def n_features(self) -> int: ...
    @property
    def n_classes(self) -> int:
        """0 for regression (several outputs: the sum of their class counts)."""
    @property
    def n_outputs(self) -> int:
        """Number of outputs (1 unless fitted on a 2-D y)."""
    @property
    def outputs(self) -> list[int]:
        """Values of each output in a prediction row (class counts, or 1 per regression
        output); empty for a single-output forest."""
    @property
    def criterion(self) -> str: ...
    @property
    def random_state(self) -> int: ...
    def node_counts(self) -> npt.NDArray[np.int64]: ...
    def depths(self) -> npt.NDArray[np.int64]: ...

@final
class LeafValues:
    """The in-bag training rows of every leaf of a regression forest, with their bootstrap
    counts and weights (``src/forest/leaf_values.rs``)."""

    def quantiles(
        self,
        forest: Forest,
        x: _Matrix,
        quantiles: list[float],
        interpolation: str = "linear",
        oob: bool = False,
        n_jobs: int | None = None,
    ) -> npt.NDArray[np.float64]:
        """Meinshausen-weighted quantiles of every row of ``x``, shape (n_rows, n_outputs,
        n_quantiles); with ``oob``, of the training rows from the trees they were out of bag
        for (NaN where none)."""

    @property
    def nbytes(self) -> int:
        """Bytes it holds in memory (its arrays and what the quantiles read)."""

    def y(self) -> npt.NDArray[np.float64]:
        """The training targets, shape (n_samples, n_outputs)."""

    def oob_prediction(self) -> npt.NDArray[np.float64]:
        """Out-of-bag prediction of every training row, shape (n_samples, n_outputs); NaN
        where no tree left the row out."""

    def parts(
        self,
    ) -> tuple[
        npt.NDArray[np.float64],
        npt.NDArray[np.uint32],
        npt.NDArray[np.uint32],
        npt.NDArray[np.uint32],
        npt.NDArray[np.uint32],
        npt.NDArray[np.float64],
        npt.NDArray[np.float64],
    ]:
        """``(y, tree_starts, starts, rows, counts, weights, oob)``, a model file's arrays."""

    @staticmethod
    def from_parts(
        forest: Forest,
        y: npt.NDArray[np.float64],
        tree_starts: npt.NDArray[np.uint32],
        starts: npt.NDArray[np.uint32],
        rows: npt.NDArray[np.uint32],
        counts: npt.NDArray[np.uint32],
        weights: npt.NDArray[np.float64],
        oob: npt.NDArray[np.float64],
    ) -> LeafValues:
        """The leaf values of ``forest`` from :meth:`parts`'s arrays, checked."""

def leaf_values(
    forest: Forest,
    x: _Matrix,
    y: npt.NDArray[np.float64],
    sample_weight: npt.NDArray[np.float64] | None = None,
    n_jobs: int | None = None,
) -> LeafValues:
    """The leaf values of a regression forest from its training data (``y`` row-major,
    ``n_samples × n_outputs``)."""

def tree_predictions(
    forest: Forest, x: _Matrix, n_jobs: int | None = None
) -> npt.NDArray[np.float64]:
    """Each tree's prediction of every row of ``x``: shape (n_rows, n_trees, width)."""

def context_importances(
    forest: Forest,
    x: _Matrix,
    y: _Targets,
    context: npt.NDArray[np.int64],
    n_contexts: int,
    sample_weight: npt.NDArray[np.float64] | None = None,
    *,
    empty: str = "zero",
    n_permutations: int = 0,
    random_state: int = 0,
    n_jobs: int | None = None,
) -> dict[str, npt.NDArray[np.float64] | None]:
    """Context-dependent importances (Sutera, PhD ch. 6) of ``forest`` on ``(x, y)``.

    ``y`` holds class codes (as floats) for a classification forest, real values otherwise;
    ``context`` holds codes ``0..n_contexts-1`` (at most 256). ``empty`` is ``"zero"``
    (``I(.|t, x_c) = 0`` in nodes without samples of ``x_c``) or ``"skip"``. Keys:
    ``importances`` (p,), ``absolute`` and ``signed`` (p, n_contexts), ``global_signed``
    (p,), ``pvalues_absolute`` and ``pvalues_signed`` ((p, n_contexts), None without
    permutations), ``null_absolute`` and ``null_signed`` (n_permutations, p, n_contexts).
    """

def local_mdi(
    model: Forest | Booster, x: _Matrix, n_jobs: int | None = None
) -> npt.NDArray[np.float64]:
    """Local MDI of every row, shape (n, n_features), of a forest or a booster (whose sum over
    trees is divided by the number of trees with a split)."""

def mdi_oob(
    forest: Forest,
    x: _Matrix,
    y: _Targets,
    n_jobs: int | None = None,
    output: int | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """MDI-oob mean (p,) and per tree (n_estimators, p), NaN rows for trees with no OOB row;
    with ``output=k`` (multi-output forests), of output k, ``y`` being its column."""

def tree_shap(
    model: Forest | Booster, x: _Matrix, interactions: bool = False, n_jobs: int | None = None
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64] | None]:
    """Path-dependent TreeSHAP values (n, n_features, width), the expected value (width,) and,
    with ``interactions``, the interaction values (n, n_features, n_features, width); width is
    the number of classes, or 1 for regression; for a booster, its raw columns (K or 1), the
    raw prediction explained (values plus expected value = raw prediction)."""

def mdi_by_depth(forest: Forest, n_jobs: int | None = None) -> npt.NDArray[np.float64]:
    """Raw MDI by depth averaged over trees, shape (n_features, n_depths).

    Entry [m, d] is (1/M) sum over trees of sum_{t splits on X_m at depth d} p(t) * delta_i(t);
    summed over d it is ``importances(False)``. Depth is logical for multiway forests (chain
    links add no level). n_depths = 1 + the deepest split node of the forest.
    """

def tree_mdi_by_depth(forest: Forest, n_jobs: int | None = None) -> npt.NDArray[np.float64]:
    """Raw MDI by depth of every tree, shape (n_estimators, n_features, n_depths)."""

def tree_mdi_by_output(forest: Forest, n_jobs: int | None = None) -> npt.NDArray[np.float64]:
    """Raw MDI of every tree split by output, shape (n_estimators, n_outputs, n_features):
    output k's share (1/m) sum_t p(t) delta_i_k(t); the shares sum to ``tree_importances``."""

# ---------------------------------------------------------------- permutation importance
def oob_permutation_importance(
    forest: Forest,
    x: _Matrix,
    y: _Targets,
    *,
    n_repeats: int,
    seed: int,
    n_jobs: int | None = None,
    output: int | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Breiman's OOB permutation importance on the training set ``x, y`` (class codes for
    classifiers): ``per_tree`` (n_repeats, n_estimators, n_features) with
    ``err_t(x_m permuted among O_t) - err_t``, each tree's OOB loss ``err_t`` (n_estimators,)
    and its number of OOB rows (n_estimators,). With ``output=k`` (multi-output forests),
    the loss of output k alone, ``y`` being its column."""

def permuted_predictions(
    forest: Forest,
    x: _Matrix,
    feature: int,
    *,
    n_repeats: int,
    seed: int,
    n_jobs: int | None = None,
    first_repeat: int = 0,
) -> npt.NDArray[np.float64]:
    """Forest predictions with column ``feature`` permuted by
    ``permutation_indices(seed, n, feature, r)`` for ``r`` from ``first_repeat``, shape
    (n_repeats, n_samples, width);
    bit-identical to ``predict`` on a permuted copy of ``x``."""

def local_permutation_importance(
    forest: Forest,
    x: _Matrix,
    y: _Targets,
    *,
    oob: bool,
    seed: int,
    n_jobs: int | None = None,
) -> npt.NDArray[np.float64]:
    """Casewise permutation importance (n_samples, n_features): mean over the trees for
    which a row is OOB (``oob``) or over all trees of the tree's loss change."""

def permutation_indices(
    seed: int, n: int, feature: int, repeat: int, tree: int | None = None
) -> npt.NDArray[np.int64]:
    """Permutation of ``0..n`` for (feature, repeat): of tree ``tree``'s OOB rows (in
    increasing order), or of a held-out set when ``tree`` is None."""

def oob_indices(forest: Forest, tree: int) -> npt.NDArray[np.int64]:
    """Out-of-bag rows of tree ``tree``, increasing."""

def booster_oob_permutation_importance(
    booster: Booster,
    x: _Matrix,
    y: npt.NDArray[np.float64],
    sample_weight: npt.NDArray[np.float64] | None = None,
    offset: npt.NDArray[np.float64] | None = None,
    *,
    n_repeats: int,
    seed: int,
    n_jobs: int | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Out-of-bag permutation importance of a subsampled booster from its training data
    (``y`` values or class codes, the fit's weights, ``offset`` the init estimator's raw
    predictions (n * K,)): per round (n_repeats, n_rounds, p), each round's out-of-bag loss
    (n_rounds,) (checked against ``oob_scores``) and its out-of-bag row count (n_rounds,)."""

def booster_oob_indices(booster: Booster, n_samples: int, round: int) -> npt.NDArray[np.int64]:
    """Out-of-bag rows of round ``round`` of a booster fitted on ``n_samples`` rows,
    increasing (empty without subsampling)."""

def in_bag_counts(forest: Forest, tree: int) -> npt.NDArray[np.uint32]:
    """How many times tree ``tree`` drew each training row (0: out of bag)."""

def rows_crc32(x: npt.NDArray[Any], rows: npt.NDArray[np.int64], crc: int = 0) -> int:
    """Zlib's CRC-32 of ``rows`` of a dense float32 or float64 ``x`` as float64 values, row
    after row, continued from ``crc``: ``zlib.crc32(np.ascontiguousarray(x[rows],
    dtype=np.float64), crc)`` without copying the rows."""

def _install_counts() -> list[tuple[int, int]]:
    """``(threads, count)``: how many times work ran on a pool of each size in this process
    (for tests that ``n_jobs`` is honoured)."""
