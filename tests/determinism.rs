//! Same input, same bytes: across runs and across thread counts (with the
//! caches off, so every run computes; `cache.rs` compares cached runs).

use crate::support::{aic, dependency_source};

#[test]
fn identical_bytes_on_one_and_two_threads() {
    let source = dependency_source("globset");
    let root = source.to_str().unwrap();
    let args = [
        "compile",
        "glob matching with a literal separator",
        "--root",
        root,
        "--no-cache",
    ];
    let one = aic(&args, &[("RAYON_NUM_THREADS", "1")]);
    let two = aic(&args, &[("RAYON_NUM_THREADS", "2")]);
    let again = aic(&args, &[("RAYON_NUM_THREADS", "2")]);
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert_eq!(one.stdout, two.stdout);
    assert_eq!(two.stdout, again.stdout);
}

#[test]
fn identical_meta_apart_from_duration() {
    let source = dependency_source("ignore");
    let root = source.to_str().unwrap();
    let args = [
        "compile",
        "parse gitignore files",
        "--root",
        root,
        "--json",
        "--no-cache",
    ];
    let mut first = aic(&args, &[("RAYON_NUM_THREADS", "1")]).json();
    let mut second = aic(&args, &[("RAYON_NUM_THREADS", "2")]).json();
    first["meta"]["durationMs"] = 0.into();
    second["meta"]["durationMs"] = 0.into();
    assert_eq!(first, second);
}
