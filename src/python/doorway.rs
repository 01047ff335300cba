//! The one doorway from Python into the engine: every binding entry that can take more
//! than a millisecond runs its work through [`run`] or [`run_watched`].
//!
//! Inputs are converted and validated by the caller while it holds the GIL; the doorway
//! then resolves `n_jobs`, releases the GIL and runs the work in the pool sized by
//! `n_jobs` ([`crate::parallel::install`]): never rayon's global pool, which a forked
//! child inherits without its threads and would wait on forever. Core errors come back as
//! the typed exceptions of `errors.rs`.
//!
//! [`run`] works on the calling thread: work that cannot stop early gains nothing from a
//! watcher, since Python raises a Ctrl-C that came meanwhile as soon as the call returns.
//! [`run_watched`] (the fit, TreeSHAP, OOB permutation importance) works on a scoped thread while the calling thread, holding the
//! GIL only briefly every [`WATCH_EVERY`], checks for Ctrl-C and reports progress; the work
//! reads [`Watch::stop_flag`] and stops early.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use pyo3::prelude::*;

use crate::error::Result;
use crate::parallel::{install, resolve_n_jobs};

/// How often the calling thread checks for Ctrl-C and reports progress.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// What running work shares with the thread that watches it.
#[derive(Default)]
pub(crate) struct Watch {
    stop: AtomicBool,
    done: AtomicUsize,
}

impl Watch {
    /// The stop flag: set on Ctrl-C, or when the progress callback raised.
    pub(crate) fn stop_flag(&self) -> &AtomicBool {
        &self.stop
    }

    /// The count of finished units of work (trees), reported to the progress callback.
    pub(crate) fn done_counter(&self) -> &AtomicUsize {
        &self.done
    }
}

/// A progress callback `callback(done, total)` and the total it counts towards.
pub(crate) type Progress<'a, 'py> = Option<(&'a Bound<'py, PyAny>, usize)>;

/// Runs `work` with the GIL released, in the pool of `n_jobs` threads.
pub(crate) fn run<R: Send>(
    py: Python<'_>,
    n_jobs: Option<i64>,
    work: impl FnOnce() -> Result<R> + Send,
) -> PyResult<R> {
    let threads = resolve_n_jobs(n_jobs)?;
    let out = py.detach(|| std::panic::catch_unwind(AssertUnwindSafe(|| install(threads, work))));
    finish(out)
}

/// The work's result as Python sees it: core errors typed, a panic (never expected from
/// the core, on any input) an exception rather than an abort.
fn finish<R>(out: std::thread::Result<Result<R>>) -> PyResult<R> {
    match out {
        Ok(result) => Ok(result?),
        Err(_) => Err(pyo3::exceptions::PyRuntimeError::new_err(
            "internal error: the engine panicked",
        )),
    }
}

/// [`run`] for work that reports progress through [`Watch::done_counter`] and can stop
/// early at [`Watch::stop_flag`]. On Ctrl-C, or when `progress` raises, the stop flag is
/// set, the work is awaited and the Python exception is raised.
pub(crate) fn run_watched<R: Send>(
    py: Python<'_>,
    n_jobs: Option<i64>,
    progress: Progress<'_, '_>,
    work: impl FnOnce(&Watch) -> Result<R> + Send,
) -> PyResult<R> {
    let threads = resolve_n_jobs(n_jobs)?;
    let watch = Watch::default();
    let finished = (Mutex::new(false), Condvar::new());
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let out = install(threads, || work(&watch));
            *finished.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
            finished.1.notify_all();
            out
        });
        let mut reported = 0;
        let watched: PyResult<()> = loop {
            let ended = py.detach(|| {
                let flag = finished.0.lock().unwrap_or_else(|e| e.into_inner());
                let waited = finished.1.wait_timeout_while(flag, WATCH_EVERY, |f| !*f);
                waited.map_or(true, |(f, _)| *f)
            }) || worker.is_finished(); // also when the worker ended without the flag
            if let Err(e) = py.check_signals() {
                break Err(e);
            }
            let done = watch.done.load(Ordering::Relaxed);
            if let Some((cb, total)) = progress.filter(|_| done > reported || ended) {
                if let Err(e) = cb.call1((done, total)) {
                    break Err(e);
                }
                reported = done;
            }
            if ended {
                break Ok(());
            }
        };
        if watched.is_err() {
            watch.stop.store(true, Ordering::Relaxed);
        }
        let out = py.detach(|| worker.join());
        watched?;
        finish(out)
    })
}

/// `[(threads, count)]`: how many times work ran on a pool of each size in this process
/// (`crate::parallel::install_counts`), for the tests that `n_jobs` is honoured.
#[pyfunction]
pub(crate) fn _install_counts() -> Vec<(usize, u64)> {
    crate::parallel::install_counts()
}
