//! Handing freed memory back to the system after a project is indexed.
//!
//! The allocator keeps pages a thread freed for that thread's next
//! allocations, and returns them to the system only after a delay and only
//! when the thread allocates again. The threads that index a project for a
//! resident index (`aic daemon`) free a few hundred bytes per file when they
//! finish (the walk's records, the saved snapshot's) and then end, so
//! without a nudge a daemon kept that memory for its whole life (on the
//! synthetic 300,000-file tree, 111 MiB of 481 MiB). Returning freed memory
//! on every free instead costs each answer the system calls (45 % of an
//! answer's time on the 1M-file tree, `perf/RESULTS.md`); this is done once
//! per indexing.
//!
//! How to return it is the allocator's business, and the allocator is the
//! binary's choice: the binary installs the function ([`set_release`]).

use std::sync::OnceLock;

static RELEASE: OnceLock<fn()> = OnceLock::new();

/// Installs `release`: a function that returns the calling thread's freed
/// memory to the system. The first call wins; later ones are ignored.
pub fn set_release(release: fn()) {
    let _ = RELEASE.set(release);
}

/// Returns the calling thread's freed memory to the system, when the binary
/// installed a way to ([`set_release`]); does nothing otherwise.
pub fn release_free_memory() {
    if let Some(release) = RELEASE.get() {
        release();
    }
}
