//! The extension's allocator: buffers of 1 MiB and more are mapped from the kernel and
//! given back the moment they are freed; smaller ones go to the system allocator.
//!
//! Why: a fit allocates a dozen node-sized working buffers per tree and frees them when
//! the tree is done. glibc maps a large block itself, but once it has unmapped one it
//! raises its mmap threshold to that size (up to 32 MiB) and its trim threshold to twice
//! that, and from then on serves such buffers from per-thread heaps, where a slightly
//! larger buffer for the next tree does not fit the hole of the last one, the holes stay
//! resident between the trees kept, and a heap's free top is never handed back. The
//! threshold is the lowest that costs no time: below it the prediction's per-call buffers
//! take fresh zeroed pages on every call (measurements in `BENCHMARKS.md`, Memory).
//!
//! Installed by the extension module (Rust users of the crate keep their own allocator)
//! and by the crate's unit tests, which then exercise it; Linux only (`mremap` grows a
//! mapping without copying it).

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr::null_mut;

/// Allocations from this size on are mappings of their own.
const DIRECT: usize = 1 << 20;
/// Mappings are page-aligned; larger alignments go to the system allocator.
const PAGE: usize = 4096;

pub struct BigBuffersFromTheKernel;

#[global_allocator]
static ALLOCATOR: BigBuffersFromTheKernel = BigBuffersFromTheKernel;

#[inline]
fn direct(size: usize, align: usize) -> bool {
    size >= DIRECT && align <= PAGE
}

// SAFETY: every pointer is freed by the path that allocated it: the choice depends only
// on (size, align), which Rust passes unchanged to `dealloc` and, for the old block, to
// `realloc`. Mappings are page-aligned, zero-filled, and unmapped with their own length.
unsafe impl GlobalAlloc for BigBuffersFromTheKernel {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !direct(layout.size(), layout.align()) {
            return System.alloc(layout);
        }
        let p = libc::mmap(
            null_mut(),
            layout.size(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            null_mut()
        } else {
            p.cast()
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if direct(layout.size(), layout.align()) {
            self.alloc(layout) // fresh mappings read as zeros
        } else {
            System.alloc_zeroed(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if direct(layout.size(), layout.align()) {
            libc::munmap(ptr.cast(), layout.size());
        } else {
            System.dealloc(ptr, layout);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        match (direct(layout.size(), align), direct(new_size, align)) {
            (false, false) => System.realloc(ptr, layout, new_size),
            (true, true) => {
                let p = libc::mremap(ptr.cast(), layout.size(), new_size, libc::MREMAP_MAYMOVE);
                if p == libc::MAP_FAILED {
                    null_mut() // the old mapping is untouched
                } else {
                    p.cast()
                }
            }
            _ => {
                let new = Layout::from_size_align_unchecked(new_size, align);
                let p = self.alloc(new);
                if !p.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                p
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Allocates `size` bytes, writes a pattern, grows or shrinks to each size in `steps`
    /// and checks the kept prefix each time.
    fn round_trip(size: usize, steps: &[usize], align: usize) {
        let a = BigBuffersFromTheKernel;
        unsafe {
            let mut layout = Layout::from_size_align(size, align).unwrap();
            let mut p = a.alloc(layout);
            assert!(!p.is_null() && p as usize % align == 0);
            for i in 0..size {
                *p.add(i) = (i % 251) as u8;
            }
            let mut kept = size;
            for &s in steps {
                p = a.realloc(p, layout, s);
                assert!(!p.is_null() && p as usize % align == 0);
                kept = kept.min(s);
                assert!((0..kept)
                    .step_by(4093)
                    .all(|i| *p.add(i) == (i % 251) as u8));
                for i in kept..s {
                    *p.add(i) = (i % 251) as u8;
                }
                kept = s;
                layout = Layout::from_size_align(s, align).unwrap();
            }
            a.dealloc(p, layout);
        }
    }

    #[test]
    fn blocks_keep_their_bytes_across_the_threshold() {
        let (small, big) = (DIRECT / 2, DIRECT * 3);
        round_trip(small, &[big, DIRECT, DIRECT - 1, 100, big + 1], 8);
        round_trip(big, &[2 * big, small, 3 * big], 64);
        // Alignments beyond a page never take the mapping path.
        round_trip(big, &[small, big], 2 * PAGE);
    }

    #[test]
    fn big_zeroed_blocks_are_zero() {
        let a = BigBuffersFromTheKernel;
        unsafe {
            let layout = Layout::from_size_align(DIRECT + 12345, 16).unwrap();
            let p = a.alloc_zeroed(layout);
            assert!((0..layout.size()).all(|i| *p.add(i) == 0));
            a.dealloc(p, layout);
        }
    }
}
