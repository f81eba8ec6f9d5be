//! The compiled-specification cache: the canonical key of a specification
//! compile, the look-up before it and the write after it
//! ([`crate::pipeline::spec`] runs the compile around them).
//!
//! The key covers everything the result depends on: the stage sources'
//! fingerprint (so a changed compiler never reuses an old result), the
//! tokenizer, the `contentTransformers` settings, the budget, and the input
//! with its types sorted by (path, name) — their order carries no meaning —
//! and its code and prose blocks in their given order, which does.
//! `estimatedTokens` is left out: the compiler never reads it.
//!
//! Like the per-file cache this is an accelerator: a database that cannot be
//! opened, a failed read or write, or a stored result that does not decode is a
//! warning (or a debug line) and a compile without the cache; the command never
//! fails because of it.

use aic_stages::config::AicConfig;
use aic_stages::fit::tokens::{TokenCount, Tokenizer};
use aic_stages::row_codec::STAGES_SOURCE_HASH;
use aic_stages::spec::{SpecCompilationResult, SpecificationInput};
use aic_storage::{CacheKeyHasher, SPEC_CACHE, Store, TtlLookup};
use tracing::{debug, warn};

/// The cache key of compiling `input` to `budget` tokens of `tokenizer` with
/// `config` (see the module documentation).
pub fn spec_cache_key(
    input: &SpecificationInput,
    budget: TokenCount,
    tokenizer: Tokenizer,
    config: &AicConfig,
) -> [u8; 16] {
    let mut key = CacheKeyHasher::new("aic-spec-compile-v2");
    key.write(STAGES_SOURCE_HASH)
        .write(tokenizer.name())
        .write(&serde_json::to_string(&config.content_transformers).unwrap_or_default())
        .write(&budget.0);
    let mut types: Vec<_> = input.types.iter().collect();
    types.sort_by(|a, b| a.path.cmp(&b.path).then_with(|| a.name.cmp(&b.name)));
    key.write(&(types.len() as u64));
    for t in types {
        key.write(&t.name)
            .write(t.path.as_str())
            .write(t.usage.as_str())
            .write(&t.content);
    }
    key.write(&(input.code_blocks.len() as u64));
    for block in &input.code_blocks {
        key.write(&block.label).write(&block.content);
    }
    key.write(&(input.prose.len() as u64));
    for block in &input.prose {
        key.write(&block.label).write(&block.content);
    }
    key.finish().to_be_bytes()
}

/// Stores `result` under `key`, written at `now` (unix ms) and living `ttl`
/// milliseconds, and deletes the rows that have expired; a failure is a warning.
pub fn store(store: &Store, key: &[u8; 16], result: &SpecCompilationResult, now: u64, ttl: u64) {
    match serde_json::to_vec(result) {
        Ok(payload) => {
            if let Err(error) = SPEC_CACHE.put_and_sweep(store, key, &payload, now, ttl) {
                warn!("Failed to store the compiled spec in the cache: {error}");
            }
        }
        Err(error) => debug!("Failed to encode the compiled spec for the cache: {error}"),
    }
}

/// A fresh, decodable cached result at `now` (unix ms) for a time to live of
/// `ttl` ms; a row that does not decode is deleted.
pub fn lookup(store: &Store, key: &[u8; 16], now: u64, ttl: u64) -> Option<SpecCompilationResult> {
    match SPEC_CACHE.get(store, key, now, Some(ttl)) {
        Ok(TtlLookup::Hit { payload, .. }) => match serde_json::from_slice(&payload) {
            Ok(result) => Some(result),
            Err(error) => {
                debug!("Deleting an undecodable spec cache row: {error}");
                if let Err(error) = SPEC_CACHE.remove(store, key) {
                    warn!("Failed to delete an undecodable spec cache row: {error}");
                }
                None
            }
        },
        Ok(TtlLookup::Miss | TtlLookup::Expired | TtlLookup::Damaged) => None,
        Err(error) => {
            warn!("Compiling without the spec cache: {error}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aic_stages::spec::parse_specification;

    const SPEC: &str = r#"{
      "types": [
        {"name": "A", "path": "src/a.rs", "content": "pub struct A;", "usage": "implements"},
        {"name": "B", "path": "src/b.rs", "content": "pub struct B;", "usage": "names-only",
         "estimatedTokens": 3}
      ],
      "codeBlocks": [{"label": "One", "content": "1"}, {"label": "Two", "content": "2"}],
      "prose": [{"label": "Task", "content": "Do it."}]
    }"#;

    #[test]
    fn the_key_ignores_type_order_and_estimates_but_not_block_order_budget_or_tokenizer() {
        let config = AicConfig::default();
        let input = parse_specification(SPEC).unwrap();
        let key = spec_cache_key(&input, TokenCount(100), Tokenizer::Cl100k, &config);

        let mut reordered = input.clone();
        reordered.types.reverse();
        reordered.types[0].estimated_tokens = None;
        assert_eq!(
            spec_cache_key(&reordered, TokenCount(100), Tokenizer::Cl100k, &config),
            key
        );

        assert_ne!(
            spec_cache_key(&input, TokenCount(101), Tokenizer::Cl100k, &config),
            key
        );
        assert_ne!(
            spec_cache_key(&input, TokenCount(100), Tokenizer::O200k, &config),
            key
        );
        let mut blocks = input.clone();
        blocks.code_blocks.reverse();
        assert_ne!(
            spec_cache_key(&blocks, TokenCount(100), Tokenizer::Cl100k, &config),
            key
        );
        let mut usage = input.clone();
        usage.types[1].usage = aic_stages::spec::SpecTypeUsage::PassesThrough;
        assert_ne!(
            spec_cache_key(&usage, TokenCount(100), Tokenizer::Cl100k, &config),
            key
        );
        let mut other = config.clone();
        other.content_transformers.compact_json = false;
        assert_ne!(
            spec_cache_key(&input, TokenCount(100), Tokenizer::Cl100k, &other),
            key
        );
        // Length prefixes keep field boundaries apart.
        let mut shifted = input.clone();
        shifted.prose[0].label = "Tas".to_owned();
        shifted.prose[0].content = "kDo it.".to_owned();
        assert_ne!(
            spec_cache_key(&shifted, TokenCount(100), Tokenizer::Cl100k, &config),
            key
        );
    }
}
