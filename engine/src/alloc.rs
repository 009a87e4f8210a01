//! What each thread allocates, counted by the global allocator, so that a script run can be
//! stopped by the memory its values take and by how much it copied.
//!
//! Rhai can bound the size of a script's strings, arrays and maps itself, but it does so by
//! measuring the whole value after every call that may have changed it: pushing one item
//! onto an array of n items walks all n, and a script that builds an array of a session's
//! tool calls is quadratic (20,000 calls took 11 s). Counting bytes as they are allocated
//! costs a few instructions per allocation and nothing per operation of a script.
//!
//! The count is only taken when the program installs [`CountingAllocator`] as its global
//! allocator (the `grade` binary does). Without it scripts fall back on Rhai's own bounds:
//! as safe, but quadratic in the size of the values a script builds.
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: grade_engine::CountingAllocator<std::alloc::System> =
//!     grade_engine::CountingAllocator(std::alloc::System);
//! ```

#![expect(
    unsafe_code,
    reason = "`GlobalAlloc` is an unsafe trait; each method forwards to the inner allocator"
)]

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

/// A global allocator that counts, per thread, the bytes allocated and freed through `A`.
pub struct CountingAllocator<A>(pub A);

thread_local! {
    // `const` and without a destructor: reading them never allocates, so the allocator can.
    static ALLOCATED: Cell<u64> = const { Cell::new(0) };
    static FREED: Cell<u64> = const { Cell::new(0) };
}

fn add(counter: &'static std::thread::LocalKey<Cell<u64>>, bytes: usize) {
    // Never fails for a `const` cell without a destructor; a failure would only lose a count.
    let _ = counter.try_with(|c| c.set(c.get().wrapping_add(bytes as u64)));
}

// SAFETY: every call is passed on to `A` unchanged; the counting touches no memory `A` hands out.
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAllocator<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees for `layout` are `A::alloc`'s.
        let ptr = unsafe { self.0.alloc(layout) };
        if !ptr.is_null() {
            add(&ALLOCATED, layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { self.0.alloc_zeroed(layout) };
        if !ptr.is_null() {
            add(&ALLOCATED, layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's guarantees for `ptr` and `layout` are `A::dealloc`'s.
        unsafe { self.0.dealloc(ptr, layout) };
        add(&FREED, layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's guarantees are `A::realloc`'s.
        let new = unsafe { self.0.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            let old = layout.size();
            if new_size >= old {
                add(&ALLOCATED, new_size - old);
            } else {
                add(&FREED, old - new_size);
            }
        }
        new
    }
}

/// The bytes allocated and freed on this thread so far (both only grow).
pub(crate) fn thread_counts() -> (u64, u64) {
    let read = |counter: &'static std::thread::LocalKey<Cell<u64>>| {
        counter.try_with(Cell::get).unwrap_or(0)
    };
    (read(&ALLOCATED), read(&FREED))
}

/// Whether allocations are counted: [`CountingAllocator`] is the global allocator.
pub(crate) fn counting() -> bool {
    let before = thread_counts().0;
    let probe = std::hint::black_box(Box::new(0u64));
    let after = thread_counts().0;
    drop(probe);
    after != before
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engine_tests_count_what_each_thread_allocates() {
        assert!(counting());
        let (allocated, freed) = thread_counts();
        let block = std::hint::black_box(vec![0u8; 1 << 20]);
        assert!(thread_counts().0 >= allocated + (1 << 20));
        drop(block);
        assert!(thread_counts().1 >= freed + (1 << 20));
    }
}
