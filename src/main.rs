use std::process::ExitCode;

/// mimalloc instead of the system allocator: a compile makes and frees
/// millions of small values (paths, terms, rows) across rayon workers, and
/// glibc's malloc spent about a fifth of a warm babel compile's CPU in
/// `malloc`, `free` and `malloc_consolidate`. Transparent huge pages are off
/// (`no_thp`) because they raised peak RSS by a third for no speed.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    aic::commands::main()
}
