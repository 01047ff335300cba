"""``verbose`` output of the forests and the boosters, in scikit-learn's formats.

Forests (:class:`ForestProgress`): scikit-learn's forests grow their trees through joblib,
whose ``verbose`` prints ``[Parallel(n_jobs=2)]: Done  40 out of 100 | elapsed: ...`` lines
on stderr, more of them the larger ``verbose``; from ``verbose > 1`` each tree also prints
``building tree i of n`` on stdout. Here the engine reports the number of trees grown about
every 0.1 s (``Forest.fit(progress=)``), and the same lines are printed from that count:
a ``Done`` line each time another ``1 / (10 · verbose)`` of the trees is grown, and the last
one ``finished``; from ``verbose > 1``, one ``building tree i of n`` line per tree grown.

Boosters (:class:`BoostingReporter`): scikit-learn's ``VerboseReporter`` table on stdout,
the same columns and formats (``Iter``, ``Train Loss``, ``OOB Improve`` when
``subsample < 1``, ``Remaining Time``), at iterations 1-10, then every 10 up to 100, every
100 up to 1 000, and so on (``verbose=1``), or at every iteration (``verbose > 1``).

Invariant: printing never changes a model. The reporters only read what the engine hands
them, and a failed write (a closed stream) is ignored rather than raised, since an exception
from a progress callback would stop the fit.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, TextIO


def _write(stream: TextIO, line: str) -> None:
    try:
        stream.write(line + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass  # a closed or broken stream: the fit goes on without output


def short_time(seconds: float) -> str:
    """joblib's ``short_format_time``: ``'  42.0s'``, or ``' 1.2min'`` beyond a minute."""
    if seconds > 60:
        return f"{seconds / 60.0:4.1f}min"
    return f" {seconds:5.1f}s"


class ForestProgress:
    """``progress(done, total)`` for ``Forest.fit``: joblib's and scikit-learn's progress
    lines for ``verbose >= 1`` (module docstring).

    ``done`` counts the trees grown by this fit (a warm start's new trees), ``total`` how
    many it grows.
    """

    def __init__(self, owner: str, verbose: int, n_jobs: int | None) -> None:
        self.prefix = f"[{owner}(n_jobs={n_jobs})]"
        self.verbose = verbose
        self.start = time.perf_counter()
        self.built = 0  # trees announced by "building tree" lines
        self.next_line = 1  # trees grown at which the next "Done" line is printed
        self.finished = False

    def __call__(self, done: int, total: int) -> None:
        if self.verbose > 1:
            for i in range(self.built + 1, done + 1):
                _write(sys.stdout, f"building tree {i} of {total}")
            self.built = max(self.built, done)
        if self.finished or total <= 0:
            return
        elapsed = time.perf_counter() - self.start
        width = math.floor(math.log10(total)) + 1
        if done >= total:
            self.finished = True
            _write(
                sys.stderr,
                f"{self.prefix}: Done {total:{width}d} out of {total:{width}d} | elapsed: "
                f"{short_time(elapsed)} finished",
            )
        elif done >= self.next_line:
            step = max(1, math.ceil(total / (10 * self.verbose)))
            self.next_line = (done // step + 1) * step
            remaining = elapsed / done * (total - done)
            _write(
                sys.stderr,
                f"{self.prefix}: Done {done:{width}d} out of {total:{width}d} | elapsed: "
                f"{short_time(elapsed)} remaining: {short_time(remaining)}",
            )


class BoostingReporter:
    """scikit-learn's ``VerboseReporter`` for the boosters: the header at once, then
    :meth:`update` after each round with the model so far (``Booster.fit(monitor=)``)."""

    def __init__(self, verbose: int, n_estimators: int, subsample: float, begin_at_stage: int):
        self.verbose = verbose
        self.n_estimators = n_estimators
        self.do_oob = subsample < 1
        header = ["Iter", "Train Loss"]
        fmt = ["{iter:>10d}", "{train_score:>16.4f}"]
        if self.do_oob:
            header.append("OOB Improve")
            fmt.append("{oob_impr:>16.4f}")
        header.append("Remaining Time")
        fmt.append("{remaining_time:>16s}")
        _write(sys.stdout, ("%10s " + "%16s " * (len(header) - 1)) % tuple(header))
        self.fmt = " ".join(fmt)
        self.verbose_mod = 1
        self.start = time.perf_counter()
        self.begin_at_stage = begin_at_stage

    def update(self, j: int, booster: Any) -> None:
        """After round ``j`` (0-based, counted from the first fit's first round)."""
        i = j - self.begin_at_stage
        if (i + 1) % self.verbose_mod:
            return
        oob_impr = float(booster.oob_improvement[j]) if self.do_oob else 0.0
        seconds = (self.n_estimators - (j + 1)) * (time.perf_counter() - self.start) / (i + 1)
        remaining = f"{seconds / 60.0:.2f}m" if seconds > 60 else f"{seconds:.2f}s"
        line = self.fmt.format(
            iter=j + 1,
            train_score=float(booster.train_score[j]),
            oob_impr=oob_impr,
            remaining_time=remaining,
        )
        _write(sys.stdout, line)
        if self.verbose == 1 and (i + 1) // (self.verbose_mod * 10) > 0:
            self.verbose_mod *= 10
