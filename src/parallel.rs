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
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

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

    pub fn keep_awake<R: Send>(f: impl FnOnce() -> R + Send) -> R {
        let Some(owner) = rayon::current_thread_index() else {
            return f();
        };
        let others = rayon::current_num_threads() - 1;
        if others == 0 {
            return f();
        }
        // Set when `f` returns or unwinds, so that the waiters end either way.
        struct Done<'a>(&'a AtomicBool);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Release);
            }
        }
        let (done, waiting) = (AtomicBool::new(false), Mutex::new(Vec::new()));
        let mut out = None;
        rayon::scope(|s| {
            for _ in 0..others {
                s.spawn(|_| {
                    // A waiter popped by `f`'s own thread (while it waits for a stolen
                    // task), or by a thread that already waits here, would wait for
                    // itself: it ends at once.
                    let me = rayon::current_thread_index();
                    {
                        let mut w = waiting.lock().unwrap_or_else(|e| e.into_inner());
                        if me == Some(owner) || w.contains(&me) {
                            return;
                        }
                        w.push(me);
                    }
                    let mut idle_since = Instant::now();
                    while !done.load(Ordering::Acquire) {
                        if rayon::yield_now() == Some(rayon::Yield::Executed) {
                            idle_since = Instant::now();
                        } else if idle_since.elapsed() > super::IDLE_WAIT {
                            return;
                        } else {
                            std::thread::yield_now();
                        }
                    }
                });
            }
            let _done = Done(&done);
            out = Some(f());
        });
        out.expect("keep_awake's work ran")
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

    pub fn keep_awake<R: Send>(f: impl FnOnce() -> R + Send) -> R {
        f()
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

/// How long a waiter of [`keep_awake`] polls without finding a task before it ends, its
/// thread then going to sleep as rayon's idle threads do: longer than the sequential steps
/// between a boosting round's parallel loops, and a bound on what a waiter picked up by a
/// thread in the middle of other work (which it suspends) can delay that work once no
/// task comes.
#[cfg(feature = "parallel")]
const IDLE_WAIT: std::time::Duration = std::time::Duration::from_millis(1);

/// Runs `f` on this thread while the pool's other threads wait for its parallel tasks
/// awake, polling for them, instead of going to sleep between them: for work that
/// alternates short sequential steps with many small parallel loops (a boosting round's
/// best-first tree), where each loop would otherwise pay for waking a sleeping thread, and
/// wait for it. The other threads stay busy until `f` returns or no task came for
/// [`IDLE_WAIT`], so it suits work that asked for them. Results do not change.
pub fn keep_awake<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    imp::keep_awake(f)
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

#[cfg(all(test, feature = "parallel"))]
mod tests {
    use super::*;

    /// Many small parallel loops, as a boosting round runs them, each task a few
    /// microseconds of work so that idle threads steal them.
    fn loops() -> Vec<u64> {
        let task = |r: u64, k: usize| {
            (0..2_000u64).fold(r * 8 + k as u64, |a, i| a ^ (a >> 3).wrapping_add(i))
        };
        (0..200u64)
            .map(|r| map_ordered(8, |k| task(r, k)).iter().fold(0, |a, &b| a ^ b))
            .collect()
    }

    #[test]
    fn keep_awake_returns_the_work_of_any_pool() {
        let want = loops();
        for threads in [1, 2, 4] {
            assert_eq!(
                install(threads, || keep_awake(loops)),
                want,
                "{threads} threads"
            );
            // Nested, and its parallel loops within others.
            let nested = install(threads, || {
                keep_awake(|| map_ordered(3, |_| keep_awake(loops)))
            });
            assert!(
                nested.iter().all(|got| *got == want),
                "{threads} threads, nested"
            );
        }
        // Outside any pool: run as is.
        assert_eq!(keep_awake(|| 7), 7);
    }

    #[test]
    fn keep_awake_fits_sharing_a_pool_all_end() {
        // Callers sharing one pool, as Python threads fitting boosters with the same
        // n_jobs: a waiter may be picked up by a thread running another caller's work,
        // which must not wait there for good.
        let want = loops();
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..4 {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for _ in 0..50 {
                    tx.send(install(2, || keep_awake(loops))).unwrap();
                }
            });
        }
        for _ in 0..200 {
            let got = rx.recv_timeout(std::time::Duration::from_secs(60));
            assert_eq!(got.expect("every fit ends"), want);
        }
    }

    #[test]
    fn keep_awake_lets_a_panic_through_and_the_pool_go_on() {
        for threads in [2, 4] {
            let caught = std::panic::catch_unwind(|| {
                install(threads, || {
                    keep_awake(|| map_ordered(4, |k| assert!(k < 2)))
                })
            });
            assert!(caught.is_err(), "{threads} threads");
            assert_eq!(install(threads, || keep_awake(loops)), loops());
        }
    }
}
