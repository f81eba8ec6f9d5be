use std::process::ExitCode;

/// mimalloc instead of the system allocator: a compile makes and frees
/// millions of small values (paths, terms, rows) across rayon workers, and
/// glibc's malloc spent about a fifth of a warm babel compile's CPU in
/// `malloc`, `free` and `malloc_consolidate`. Transparent huge pages are off
/// (`no_thp`) because they raised peak RSS by a third for no speed.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// tree-sitter's C library allocates every tree node with `malloc`: 6 % of
/// a cold deno compile went to glibc's `malloc`, `free` and
/// `malloc_consolidate`. It gets mimalloc too. The only unsafe code of the
/// workspace (the library crates forbid it): a C library's allocator hook.
#[allow(unsafe_code)]
mod parser_allocator {
    use std::ffi::c_void;

    /// Aborts on a failed allocation, as tree-sitter's own default does:
    /// it never expects null back.
    fn checked(pointer: *mut c_void) -> *mut c_void {
        if pointer.is_null() {
            std::process::abort();
        }
        pointer
    }

    unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
        // SAFETY: mimalloc's malloc takes any size.
        checked(unsafe { libmimalloc_sys::mi_malloc(size.max(1)) })
    }

    unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
        let Some(bytes) = count.checked_mul(size) else {
            std::process::abort();
        };
        // SAFETY: mimalloc's zalloc takes any size.
        checked(unsafe { libmimalloc_sys::mi_zalloc(bytes.max(1)) })
    }

    unsafe extern "C" fn realloc(pointer: *mut c_void, size: usize) -> *mut c_void {
        // SAFETY: `pointer` is null or came from this allocator's functions
        // (the only ones tree-sitter uses once they are installed).
        checked(unsafe { libmimalloc_sys::mi_realloc(pointer, size.max(1)) })
    }

    unsafe extern "C" fn free(pointer: *mut c_void) {
        // SAFETY: as for `realloc`.
        unsafe { libmimalloc_sys::mi_free(pointer) }
    }

    /// Installs the functions above. Call first thing in `main`, before any
    /// thread starts or any parser exists.
    pub(super) fn install() {
        // SAFETY: one allocator family (mimalloc, whose pointers are aligned
        // as malloc's), never null, installed before any tree-sitter object
        // exists and before other threads start.
        unsafe {
            aic_stages::lang::set_parser_allocator(Some(aic_stages::lang::ParserAllocator {
                malloc,
                calloc,
                realloc,
                free,
            }));
        }
    }
}

/// mimalloc's `mi_collect`, from the library `libmimalloc-sys` builds and
/// links (its Rust declaration needs that crate's `extended` feature).
#[allow(unsafe_code)]
mod collect {
    unsafe extern "C" {
        /// Frees the calling thread's empty pages and, with `force`, returns
        /// what is free to the system now.
        pub(super) fn mi_collect(force: bool);
    }
}

/// Returns the calling thread's freed pages to the system now, not after
/// mimalloc's purge delay ([`aic::memory`]).
#[allow(unsafe_code)]
fn release_free_memory() {
    // SAFETY: `mi_collect` takes no pointer and may be called from any
    // thread at any time.
    unsafe { collect::mi_collect(true) }
}

fn main() -> ExitCode {
    parser_allocator::install();
    aic::memory::set_release(release_free_memory);
    aic::commands::main()
}
