"""Importance bar charts (matplotlib, an optional dependency: ``pip install forestimp[plot]``)."""

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


def new_axes(figsize: tuple[float, float]) -> Any:
    """A new figure's axes, or an ImportError that says how to install matplotlib."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plots need matplotlib: pip install 'forestimp[plot]'") from exc
    return plt.subplots(figsize=figsize)[1]
