"""Importance bar charts and prediction intervals (matplotlib, an optional dependency:
``pip install forestimp[plot]``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def plot_importances(
    names: Sequence[str],
    importances: np.ndarray,
    errors: np.ndarray | None = None,
    *,
    reference: np.ndarray | None = None,
    title: str = "",
    xlabel: str = "importance",
    path: str | None = None,
) -> Any:
    """Horizontal bars, largest on top, with optional error bars and reference markers.

    Parameters
    ----------
    names : sequence of str
        Feature names, in the order of ``importances``.
    importances, errors : ndarray of shape (n_features,)
        Bar lengths and (e.g.) standard errors over trees.
    reference : ndarray of shape (n_features,), optional
        Values drawn as markers next to the bars (e.g. exact theoretical importances).
    path : str, optional
        Save the figure there (format from the extension).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig = bar_importances(
        names, importances, errors, reference=reference, title=title, xlabel=xlabel
    ).figure
    fig.tight_layout()
    if path:
        fig.savefig(path, dpi=120)
    return fig


def bar_importances(
    names: Sequence[str],
    importances: np.ndarray,
    errors: np.ndarray | None = None,
    *,
    ax: Any = None,
    reference: np.ndarray | None = None,
    title: str = "",
    xlabel: str = "importance",
) -> Any:
    """Draw the bars of :func:`plot_importances` on ``ax`` (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
    """
    if ax is None:
        ax = new_axes((6.4, 0.3 * len(names) + 1.2))
    order = np.argsort(importances, kind="stable")
    ypos = np.arange(len(order))
    xerr = None if errors is None else np.asarray(errors)[order]
    ax.barh(ypos, np.asarray(importances)[order], xerr=xerr, color="#4C72B0", capsize=2)
    if reference is not None:
        ax.plot(np.asarray(reference)[order], ypos, "D", color="#DD8452", label="exact")
        ax.legend(loc="lower right")
    ax.set_yticks(ypos, [str(names[i]) for i in order])
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    return ax


def plot_intervals(
    x: np.ndarray,
    intervals: np.ndarray,
    y: np.ndarray | None = None,
    prediction: np.ndarray | None = None,
    *,
    ax: Any = None,
    title: str = "",
    xlabel: str = "x",
    path: str | None = None,
) -> Any:
    """Prediction intervals as a band over one feature, with the observed targets.

    Parameters
    ----------
    x : ndarray of shape (n_samples,)
        The feature drawn along the horizontal axis (the rows are sorted by it).
    intervals : ndarray of shape (n_samples, 2)
        ``[lower, upper]`` of each row (``predict_interval``, or two quantiles);
        infinite bounds are left out of the band.
    y : ndarray of shape (n_samples,), optional
        Observed targets: points, those outside their interval in another colour, and the
        share inside in the legend.
    prediction : ndarray of shape (n_samples,), optional
        The point prediction, drawn as a line.
    ax : matplotlib Axes, optional
        Draw there (default: a new figure).
    path : str, optional
        Save the figure there (format from the extension).

    Returns
    -------
    matplotlib.axes.Axes
    """
    x, bounds = np.asarray(x, dtype=float), np.asarray(intervals, dtype=float)
    if bounds.ndim != 2 or bounds.shape != (len(x), 2):
        raise ValueError(f"intervals must have shape ({len(x)}, 2), got {bounds.shape}.")
    if ax is None:
        ax = new_axes((6.4, 4.0))
    order = np.argsort(x, kind="stable")
    x, bounds = x[order], bounds[order]
    finite = np.isfinite(bounds).all(axis=1)
    ax.fill_between(x[finite], bounds[finite, 0], bounds[finite, 1], color="#4C72B0",
                    alpha=0.3, linewidth=0, label="interval")  # fmt: skip
    if prediction is not None:
        ax.plot(x, np.asarray(prediction, dtype=float)[order], color="#4C72B0", label="prediction")
    if y is not None:
        y = np.asarray(y, dtype=float)[order]
        inside = (y >= bounds[:, 0]) & (y <= bounds[:, 1])
        ax.plot(x[inside], y[inside], ".", color="0.3", markersize=3,
                label=f"inside ({inside.mean():.1%})")  # fmt: skip
        ax.plot(x[~inside], y[~inside], ".", color="#C44E52", markersize=4, label="outside")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.legend(loc="upper left")
    if path:
        ax.figure.tight_layout()
        ax.figure.savefig(path, dpi=120)
    return ax


def new_axes(figsize: tuple[float, float]) -> Any:
    """A new figure's axes, or an ImportError that says how to install matplotlib."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plots need matplotlib: pip install 'forestimp[plot]'") from exc
    return plt.subplots(figsize=figsize)[1]
