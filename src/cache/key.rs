//! The keys of the per-file cache's rows.
//!
//! A row is keyed by the content hash of the file it was computed from and a
//! *variant*: everything else the row depends on. The variant covers the
//! [`StageFingerprint`] (the stage sources, the wire version, the tokenizer,
//! the guard and transformer settings), the [`RowKind`] and its flags, the path
//! and the language. The path is part of it because the guard's path rules, the
//! transformers' file-name rules and the block headings all read it: a row is
//! never reused by another path. Derived rows that are not per file (git
//! history) use [`blob_key`].

use aic_stages::config::{ContentTransformersConfig, GuardConfig};
use aic_stages::content_hash::ContentHash;
use aic_stages::fit::tokens::Tokenizer;
use aic_stages::language::Language;
use aic_stages::relative_path::RelativePath;
use aic_stages::row_codec::{STAGES_SOURCE_HASH, TOKENIZER, WIRE_VERSION};
use aic_storage::{CacheKeyHasher, FactsKey};

/// Which kind of row a key is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowKind {
    /// The scan's terms of a file.
    Scan,
    /// A file's imports.
    Imports,
    /// A file's scan row under its git blob id instead of its content hash
    /// (the id's first 16 bytes take the content hash's place in the key):
    /// the file's content hash and size with its scan row, so that a new
    /// checkout learns both from git's index without reading the file. Only
    /// the remote tier holds these ([`crate::cache::FileCache::blob_scan`]).
    BlobScan,
    /// A file's [`FileFacts`](aic_stages::facts::FileFacts), with the raw
    /// (`#raw`) and bypass (direct target, score above 0.9, edit candidate) flags of the
    /// transform stage.
    Facts {
        /// `--raw`/`#raw`.
        raw: bool,
        /// Lossy transforms bypassed.
        bypass: bool,
        /// The encoding the row's token counts are in: a row counted in one
        /// is never read for another.
        tokenizer: Tokenizer,
    },
}

/// Everything besides a file's bytes and path that changes a cached row.
/// 128 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StageFingerprint(pub u128);

impl StageFingerprint {
    /// The fingerprint for these settings.
    pub fn new(guard: &GuardConfig, transformers: &ContentTransformersConfig) -> Self {
        let mut key = CacheKeyHasher::new("aic-stages-v1");
        key.write(STAGES_SOURCE_HASH)
            .write(&WIRE_VERSION)
            .write(&aic_storage::ENVELOPE_VERSION)
            .write(TOKENIZER)
            .write(&serde_json::to_string(guard).unwrap_or_default())
            .write(&serde_json::to_string(transformers).unwrap_or_default());
        Self(key.finish())
    }
}

/// The key of a per-file row.
pub fn row_key(
    fingerprint: StageFingerprint,
    hash: ContentHash,
    kind: RowKind,
    path: &RelativePath,
    language: Language,
) -> FactsKey {
    let (tag, raw, bypass, tokenizer) = match kind {
        RowKind::Scan => (1u8, false, false, Tokenizer::Cl100k),
        RowKind::Imports => (2, false, false, Tokenizer::Cl100k),
        RowKind::Facts {
            raw,
            bypass,
            tokenizer,
        } => (3, raw, bypass, tokenizer),
        RowKind::BlobScan => (4, false, false, Tokenizer::Cl100k),
    };
    let mut variant = CacheKeyHasher::new("aic-file-row-v1");
    variant
        .write(&fingerprint.0)
        .write(&tag)
        .write(&raw)
        .write(&bypass)
        .write(path.as_str())
        .write(language.as_str());
    // The fingerprint names `cl100k_base` ([`TOKENIZER`]); a row counted in
    // another encoding adds that encoding's name, so `cl100k_base` rows keep
    // the keys they had before other encodings existed.
    if tokenizer != Tokenizer::Cl100k {
        variant.write(tokenizer.name());
    }
    FactsKey::new(u128::from_be_bytes(hash.0), variant.finish())
}

/// The key of a row derived from `content` (a commit id, say) by `kind` (a
/// name with a version, such as `git-history-v1`).
pub fn blob_key(content: &[u8], kind: &str) -> FactsKey {
    let mut source = CacheKeyHasher::new("aic-blob-source-v1");
    source.write_bytes(content);
    let mut variant = CacheKeyHasher::new("aic-blob-kind-v1");
    variant.write(kind);
    FactsKey::new(source.finish(), variant.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use aic_stages::config::AicConfig;

    #[test]
    fn the_row_key_separates_kinds_paths_and_settings() {
        let config = AicConfig::default();
        let base = StageFingerprint::new(&config.guard, &config.content_transformers);
        let mut other_guard = config.guard.clone();
        other_guard.allow_patterns.push("docs/**".to_owned());
        let changed = StageFingerprint::new(&other_guard, &config.content_transformers);
        assert_ne!(base, changed);
        let a = RelativePath::new("src/a.rs").unwrap();
        let b = RelativePath::new("src/b.rs").unwrap();
        let hash = ContentHash::of(b"fn a() {}");
        let facts = RowKind::Facts {
            raw: false,
            bypass: false,
            tokenizer: Tokenizer::Cl100k,
        };
        let keys = [
            row_key(base, hash, RowKind::Scan, &a, Language::Rust),
            row_key(base, hash, RowKind::Imports, &a, Language::Rust),
            row_key(base, hash, RowKind::BlobScan, &a, Language::Rust),
            row_key(base, hash, facts, &a, Language::Rust),
            row_key(
                base,
                hash,
                RowKind::Facts {
                    raw: false,
                    bypass: true,
                    tokenizer: Tokenizer::Cl100k,
                },
                &a,
                Language::Rust,
            ),
            row_key(
                base,
                hash,
                RowKind::Facts {
                    raw: false,
                    bypass: false,
                    tokenizer: Tokenizer::O200k,
                },
                &a,
                Language::Rust,
            ),
            row_key(base, hash, facts, &b, Language::Rust),
            row_key(changed, hash, facts, &a, Language::Rust),
            row_key(base, ContentHash::of(b"other"), facts, &a, Language::Rust),
            blob_key(b"commit", "git-history-v1"),
        ];
        for (i, x) in keys.iter().enumerate() {
            for y in &keys[i + 1..] {
                assert_ne!(x, y);
            }
        }
        assert_eq!(keys[3], row_key(base, hash, facts, &a, Language::Rust));
    }
}
