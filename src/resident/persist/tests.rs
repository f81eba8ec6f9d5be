use std::sync::Arc;

use aic_stages::config::AicConfig;
use aic_stages::fit::tokens::TokenCount;
use aic_stages::repo_map::FileEntry;
use aic_stages::select::terms::TermCount;
use aic_storage::Store;

use super::*;
use crate::cache::FileCache;
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
            terms: TermList::new(
                &words
                    .iter()
                    .copied()
                    .map(TermCount::from)
                    .collect::<Vec<_>>(),
            ),
            length: words.iter().map(|(_, n)| u32::from(*n)).sum(),
        },
        path_terms: std::sync::OnceLock::new(),
        kind: std::sync::OnceLock::new(),
    }
}

/// The stage fingerprint of the default settings.
fn fingerprint(home: &Path) -> u128 {
    let store = Arc::new(Store::open(&home.join("aic.redb")).unwrap());
    FileCache::open(
        store,
        Path::new("/project"),
        &AicConfig::default(),
        None,
        &SystemClock,
    )
    .unwrap()
    .fingerprint()
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
fn a_saved_snapshot_gives_back_every_settled_file() {
    let home = tempfile::tempdir().unwrap();
    let fingerprint = fingerprint(home.path());
    let path = path_for(&home.path().join("snapshots"), 42);
    let repo = repo();
    // The file modified a millisecond before the walk is left out.
    assert_eq!(save(&path, fingerprint, (&repo, TREE), NOW_NS).unwrap(), 1);
    let (prior, tree) = load(&path, fingerprint).unwrap();
    assert_eq!((prior.len(), tree), (1, TREE));
    let kept = &repo.files[0];
    let (hash, terms) = prior
        .unchanged(
            &kept.path,
            kept.size_bytes,
            kept.last_modified_ns,
            kept.language,
        )
        .unwrap();
    assert_eq!(hash, kept.content_hash);
    assert_eq!(terms.term_stats, kept.term_stats);
    assert_eq!(terms.symbol_ids, kept.symbol_ids);
    assert_eq!(terms.name_ids, kept.name_ids);
    // Another mtime is another file: not taken from it.
    assert_eq!(
        prior.unchanged(&kept.path, kept.size_bytes, 1, kept.language),
        None
    );
    let racy = &repo.files[1];
    assert_eq!(
        prior.unchanged(
            &racy.path,
            racy.size_bytes,
            racy.last_modified_ns,
            racy.language
        ),
        None
    );
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
    let fingerprint = fingerprint(home.path());
    let path = path_for(home.path(), 7);
    assert!(matches!(load(&path, fingerprint), Err(LoadError::Missing)));
    save(&path, fingerprint, (&repo(), TREE), NOW_NS).unwrap();
    assert!(matches!(
        load(&path, fingerprint ^ 1),
        Err(LoadError::Foreign)
    ));
    let bytes = fs_err::read(&path).unwrap();
    fs_err::write(&path, &bytes[..bytes.len() - 3]).unwrap();
    assert!(matches!(load(&path, fingerprint), Err(LoadError::Damaged)));
    let mut flipped = bytes.clone();
    flipped[40] ^= 0x10;
    fs_err::write(&path, &flipped).unwrap();
    assert!(matches!(load(&path, fingerprint), Err(LoadError::Damaged)));
}

#[test]
fn a_snapshot_read_in_slices_gives_back_the_same_files() {
    let home = tempfile::tempdir().unwrap();
    let fingerprint = fingerprint(home.path());
    let path = path_for(home.path(), 9);
    let old = NOW_NS - 60_000_000_000;
    let repo = RepoMap::new(
        (0..40_u32)
            .map(|i| entry(&format!("src/m{i:02}.rs"), old, &[(i, 1), (i + 100, 3)]))
            .collect(),
    );
    assert_eq!(save(&path, fingerprint, (&repo, TREE), NOW_NS).unwrap(), 40);
    let whole = fs_err::metadata(&path).unwrap().len() as usize;
    // Slices cut records anywhere: inside a length, inside a record, at its end.
    for slice in [1, 3, 7, 64, 1000, whole] {
        let (prior, tree) = load_sliced(&path, fingerprint, slice).unwrap();
        assert_eq!((prior.len(), tree), (40, TREE), "slice {slice}");
        for file in &repo.files {
            let (hash, terms) = prior
                .unchanged(
                    &file.path,
                    file.size_bytes,
                    file.last_modified_ns,
                    file.language,
                )
                .unwrap_or_else(|| panic!("slice {slice}: {} missing", file.path));
            assert_eq!(hash, file.content_hash);
            assert_eq!(terms.term_stats, file.term_stats);
        }
    }
    // A damaged byte in the last record is found whatever the slices.
    let mut bytes = fs_err::read(&path).unwrap();
    let last = bytes.len() - 12;
    bytes[last] ^= 0x01;
    fs_err::write(&path, &bytes).unwrap();
    for slice in [1, 7, whole] {
        assert!(matches!(
            load_sliced(&path, fingerprint, slice),
            Err(LoadError::Damaged)
        ));
    }
}

#[test]
fn a_record_or_count_past_the_end_is_refused_before_it_is_read() {
    let home = tempfile::tempdir().unwrap();
    let fingerprint = fingerprint(home.path());
    let path = path_for(home.path(), 11);
    assert_eq!(
        save(&path, fingerprint, (&repo(), TREE), NOW_NS).unwrap(),
        1
    );
    let bytes = fs_err::read(&path).unwrap();
    // The header is 60 bytes: the file count at 44, the numbered words'
    // count at 52; the first record's length follows the numbering.
    let words = u64::from_le_bytes(bytes[52..60].try_into().unwrap()) as usize;
    let first = HEADER + 4 * words;
    let mut long_record = bytes.clone();
    long_record[first..first + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    fs_err::write(&path, &long_record).unwrap();
    assert!(matches!(
        load_sliced(&path, fingerprint, 4),
        Err(LoadError::Damaged)
    ));
    let mut huge_count = bytes.clone();
    huge_count[44..52].copy_from_slice(&u64::MAX.to_le_bytes());
    fs_err::write(&path, &huge_count).unwrap();
    assert!(matches!(load(&path, fingerprint), Err(LoadError::Damaged)));
    for words in [u64::MAX, u64::MAX / 4 + 1, (bytes.len() / 4) as u64] {
        let mut huge_numbering = bytes.clone();
        huge_numbering[52..60].copy_from_slice(&words.to_le_bytes());
        fs_err::write(&path, &huge_numbering).unwrap();
        assert!(
            matches!(load(&path, fingerprint), Err(LoadError::Damaged)),
            "{words} words"
        );
    }
    // Bytes after the checksum: the file grew while it was read.
    let mut grown = bytes;
    grown.push(0);
    fs_err::write(&path, &grown).unwrap();
    assert!(matches!(load(&path, fingerprint), Err(LoadError::Damaged)));
}
