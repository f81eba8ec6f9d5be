use std::sync::Arc;

use aic_stages::config::AicConfig;
use aic_stages::fit::tokens::TokenCount;
use aic_stages::repo_map::FileEntry;
use aic_storage::Store;

use super::*;
use crate::cache::memo::Memo;
use crate::clock::SystemClock;

fn entry(path: &str, mtime_ns: i64, words: &[(u32, u16)]) -> FileEntry {
    let path = RelativePath::new(path).unwrap();
    FileEntry {
        language: Language::detect(&path),
        path,
        size_bytes: 120,
        estimated_tokens: TokenCount(30),
        last_modified_ms: mtime_ns / 1_000_000,
        last_modified_ns: mtime_ns,
        recency_ms: mtime_ns / 1_000_000,
        content_hash: ContentHash::of(format!("{mtime_ns}").as_bytes()),
        symbol_ids: vec![3, 9].into(),
        name_ids: vec![7].into(),
        term_stats: TermStats {
            terms: words.to_vec().into(),
            length: words.iter().map(|(_, n)| u32::from(*n)).sum(),
        },
        path_terms: std::sync::OnceLock::new(),
        kind: std::sync::OnceLock::new(),
    }
}

fn cache(home: &Path, memo: &Arc<Memo>) -> FileCache {
    let store = Arc::new(Store::open(&home.join("aic.redb")).unwrap());
    FileCache::open(
        store,
        Path::new("/project"),
        &AicConfig::default(),
        Some(memo.clone()),
        &SystemClock,
    )
    .unwrap()
}

const TREE: ContentHash = ContentHash([5; 16]);

const NOW_NS: i64 = 1_800_000_000_000_000_000;

fn repo() -> RepoMap {
    RepoMap::new(vec![
        entry("src/lib.rs", NOW_NS - 60_000_000_000, &[(1, 2), (5, 1)]),
        entry("src/new.rs", NOW_NS - 1_000_000, &[(2, 1)]),
    ])
}

#[test]
fn a_saved_snapshot_seeds_the_memo_with_every_settled_file() {
    let home = tempfile::tempdir().unwrap();
    let memo = Arc::new(Memo::default());
    let cache = cache(home.path(), &memo);
    let path = path_for(&home.path().join("snapshots"), 42);
    let repo = repo();
    // The file modified a millisecond before the walk is left out.
    assert_eq!(
        save(&path, cache.fingerprint(), (&repo, TREE), NOW_NS).unwrap(),
        1
    );
    assert_eq!(
        load_into(&path, cache.fingerprint(), &cache).unwrap(),
        (1, TREE)
    );
    let kept = &repo.files[0];
    assert_eq!(
        cache.indexed_hash(&kept.path, kept.size_bytes, kept.last_modified_ns),
        Some((kept.content_hash, false))
    );
    let terms = cache
        .scan_terms(kept.content_hash, &kept.path, kept.language)
        .unwrap();
    assert_eq!(terms.term_stats, kept.term_stats);
    assert_eq!(terms.symbol_ids, kept.symbol_ids);
    assert_eq!(terms.name_ids, kept.name_ids);
    // Another mtime is another file: not taken from the seed.
    assert_eq!(cache.indexed_hash(&kept.path, kept.size_bytes, 1), None);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs_err::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[test]
fn foreign_truncated_and_damaged_snapshots_are_refused_whole() {
    let home = tempfile::tempdir().unwrap();
    let memo = Arc::new(Memo::default());
    let cache = cache(home.path(), &memo);
    let path = path_for(home.path(), 7);
    assert!(matches!(
        load_into(&path, cache.fingerprint(), &cache),
        Err(LoadError::Missing)
    ));
    save(&path, cache.fingerprint(), (&repo(), TREE), NOW_NS).unwrap();
    assert!(matches!(
        load_into(&path, cache.fingerprint() ^ 1, &cache),
        Err(LoadError::Foreign)
    ));
    let bytes = fs_err::read(&path).unwrap();
    fs_err::write(&path, &bytes[..bytes.len() - 3]).unwrap();
    assert!(matches!(
        load_into(&path, cache.fingerprint(), &cache),
        Err(LoadError::Damaged)
    ));
    let mut flipped = bytes.clone();
    flipped[40] ^= 0x10;
    fs_err::write(&path, &flipped).unwrap();
    assert!(matches!(
        load_into(&path, cache.fingerprint(), &cache),
        Err(LoadError::Damaged)
    ));
    // Nothing was seeded by the refused files.
    let kept = &repo().files[0];
    assert!(
        cache
            .scan_terms(kept.content_hash, &kept.path, kept.language)
            .is_none()
    );
}
