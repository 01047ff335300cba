//! Thread pools and the order-preserving parallel loops used everywhere.
//!
//! Results never depend on the number of threads: every loop here returns its items in
//! index order, and callers reduce them sequentially.
//!
//! Pools are dedicated (rayon's global pool is never touched, so a host application's
//! pool is not disturbed) and cached per process id: after `fork()` the child sees a new
//! pid and builds fresh pools instead of waiting forever on threads that did not survive.
//! The last [`KEPT_POOLS`] sizes asked for are kept, so calls alternating between `n_jobs`
//! values (a parallel predict, then a sequential pickle) do not rebuild a pool each time.

use crate::error::{invalid, Result};

/// Number of threads for an sklearn-style `n_jobs`: `None` → 1, `-1` → all cores,
/// `-k` → all but `k − 1`, `k > 0` → `k`, capped at 4 threads per core (more only adds
/// overhead, and an absurd request must not try to spawn millions of threads).
pub fn resolve_n_jobs(n_jobs: Option<i64>) -> Result<usize> {
    // Read once: the query walks cgroup files, tens of microseconds on every call.
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let cores = cores as i64;
    let threads = match n_jobs {
        None => 1,
        Some(0) => return Err(invalid("n_jobs", "0 is not a valid number of jobs")),
        Some(k) if k > 0 => k,
        Some(k) => cores.saturating_add(1).saturating_add(k).max(1),
    };
    Ok(threads.min(4 * cores) as usize)
}

#[cfg(feature = "parallel")]
mod imp {
    use rayon::prelude::*;
    use std::sync::{Arc, Mutex};

    /// The pools of this process, least recently used first, and how many times work was
    /// installed on a pool of each size.
    struct Pools {
        pid: u32,
        pools: Vec<(usize, Arc<rayon::ThreadPool>)>,
        installs: Vec<(usize, u64)>,
    }

    static POOLS: Mutex<Pools> = Mutex::new(Pools {
        pid: 0,
        pools: Vec::new(),
        installs: Vec::new(),
    });

    fn pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
        let pid = std::process::id();
        let mut guard = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        let cache = &mut *guard;
        if cache.pid != pid {
            // A forked child: the parent's threads are gone, and so are its counts.
            *cache = Pools {
                pid,
                pools: Vec::new(),
                installs: Vec::new(),
            };
        }
        match cache.installs.iter_mut().find(|(n, _)| *n == threads) {
            Some((_, count)) => *count += 1,
            None => cache.installs.push((threads, 1)),
        }
        if let Some(k) = cache.pools.iter().position(|(n, _)| *n == threads) {
            let kept = cache.pools.remove(k);
            cache.pools.push(kept.clone());
            return Some(kept.1);
        }
        let built = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(move |i| format!("forestimp-{threads}.{i}"))
            .build()
            .ok()
            .map(Arc::new)?;
        if cache.pools.len() == super::KEPT_POOLS {
            cache.pools.remove(0);
        }
        cache.pools.push((threads, built.clone()));
        Some(built)
    }

    pub fn install<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
        // Even one thread gets its own pool: outside any pool, rayon's parallel iterators
        // would fall back to the global pool and use every core.
        match pool(threads.max(1)) {
            Some(p) => p.install(f),
            // Could not spawn threads (resource limits): correct, just sequential.
            None => f(),
        }
    }

    pub fn install_counts() -> Vec<(usize, u64)> {
        let guard = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        if guard.pid == std::process::id() {
            guard.installs.clone()
        } else {
            Vec::new()
        }
    }

    pub fn map_ordered<R: Send>(n: usize, f: impl Fn(usize) -> R + Sync + Send) -> Vec<R> {
        (0..n).into_par_iter().map(f).collect()
    }

    pub fn current_threads() -> usize {
        rayon::current_num_threads()
    }

    pub fn chunks_mut<T: Send>(
        out: &mut [T],
        chunk: usize,
        f: impl Fn(usize, &mut [T]) + Sync + Send,
    ) {
        out.par_chunks_mut(chunk.max(1))
            .enumerate()
            .for_each(|(k, c)| f(k, c));
    }

    pub fn join<A: Send, B: Send>(
        a: impl FnOnce() -> A + Send,
        b: impl FnOnce() -> B + Send,
    ) -> (A, B) {
        rayon::join(a, b)
    }

    pub fn map_each_mut<T: Send, R: Send>(
        items: &mut [T],
        f: impl Fn(usize, &mut T) -> R + Sync + Send,
    ) -> Vec<R> {
        items
            .par_iter_mut()
            .enumerate()
            .map(|(k, t)| f(k, t))
            .collect()
    }
}

#[cfg(not(feature = "parallel"))]
mod imp {
    pub fn current_threads() -> usize {
        1
    }

    pub fn install_counts() -> Vec<(usize, u64)> {
        Vec::new()
    }

    pub fn install<R: Send>(_threads: usize, f: impl FnOnce() -> R + Send) -> R {
        f()
    }

    pub fn map_ordered<R: Send>(n: usize, f: impl Fn(usize) -> R + Sync + Send) -> Vec<R> {
        (0..n).map(f).collect()
    }

    pub fn chunks_mut<T: Send>(
        out: &mut [T],
        chunk: usize,
        f: impl Fn(usize, &mut [T]) + Sync + Send,
    ) {
        out.chunks_mut(chunk.max(1))
            .enumerate()
            .for_each(|(k, c)| f(k, c));
    }

    pub fn join<A: Send, B: Send>(
        a: impl FnOnce() -> A + Send,
        b: impl FnOnce() -> B + Send,
    ) -> (A, B) {
        (a(), b())
    }

    pub fn map_each_mut<T: Send, R: Send>(
        items: &mut [T],
        f: impl Fn(usize, &mut T) -> R + Sync + Send,
    ) -> Vec<R> {
        items.iter_mut().enumerate().map(|(k, t)| f(k, t)).collect()
    }
}

/// Pool sizes kept per process (see the module docs); the pool threads of a size not used
/// lately are ended.
pub const KEPT_POOLS: usize = 4;

/// How many times [`install`] ran work on a pool of each size in this process, as
/// `(threads, count)`: lets a caller check that its `n_jobs` was honoured.
pub fn install_counts() -> Vec<(usize, u64)> {
    imp::install_counts()
}

/// Runs `f` on a dedicated pool of `threads` threads; the parallel loops below then use
/// that many. Called outside `install`, they use rayon's global pool (all cores).
pub fn install<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    imp::install(threads, f)
}

/// Threads of the pool the caller runs in (see [`install`]).
pub fn current_threads() -> usize {
    imp::current_threads()
}

/// `(0..n).map(f)` evaluated in parallel, results in index order.
pub fn map_ordered<R: Send>(n: usize, f: impl Fn(usize) -> R + Sync + Send) -> Vec<R> {
    imp::map_ordered(n, f)
}

/// `f(k, &mut items[k])` for every item, in parallel, results in index order.
pub fn map_each_mut<T: Send, R: Send>(
    items: &mut [T],
    f: impl Fn(usize, &mut T) -> R + Sync + Send,
) -> Vec<R> {
    imp::map_each_mut(items, f)
}

/// `(a(), b())`, the two possibly in parallel.
pub fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    imp::join(a, b)
}

/// Calls `f(k, chunk)` on the `k`-th chunk of `chunk` items of `out`, in parallel.
pub fn chunks_mut<T: Send>(out: &mut [T], chunk: usize, f: impl Fn(usize, &mut [T]) + Sync + Send) {
    imp::chunks_mut(out, chunk, f)
}
