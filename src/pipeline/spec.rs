//! The specification compile: a planning agent's task specification (types,
//! code blocks, prose) compiled into one briefing that fits a budget
//! ([`SpecificationCompiler`]), through the compiled-specification cache
//! ([`crate::cache::spec`]). `docs/spec-compiler.md` gives the rules.

use aic_stages::config::AicConfig;
use aic_stages::fit::model::ModelProfile;
use aic_stages::fit::tokens::TokenCount;
use aic_stages::spec::{SpecCompilationResult, SpecificationCompiler, SpecificationInput};
use tracing::warn;

use crate::cache::spec;
use crate::host::Host;

/// A compiled specification and where it came from.
#[derive(Debug)]
pub struct SpecCompile {
    /// The result.
    pub result: SpecCompilationResult,
    /// Whether it was read from the cache rather than compiled.
    pub cache_hit: bool,
}

/// Compiles `input` to fit `budget` tokens of `model` (counted in its encoding,
/// less its margin, as a compile's budget: `docs/budget.md`), reading and
/// writing the cache unless `no_cache` or `cache.enabled: false` says not
/// to. Results live `cache.ttlMinutes`.
pub fn compile_spec(
    input: &SpecificationInput,
    budget: TokenCount,
    model: &ModelProfile,
    config: &AicConfig,
    no_cache: bool,
    host: &Host,
) -> SpecCompile {
    let budget = model.counted(budget);
    let compile = || {
        SpecificationCompiler::new(&config.content_transformers)
            .with_tokenizer(model.tokenizer)
            .compile(input, budget)
    };
    if no_cache || !config.cache.enabled {
        return SpecCompile {
            result: compile(),
            cache_hit: false,
        };
    }
    let database = match host.database() {
        Ok(store) => store,
        Err(error) => {
            warn!("Compiling without the spec cache: {}", error.with_hint());
            return SpecCompile {
                result: compile(),
                cache_hit: false,
            };
        }
    };
    let key = spec::spec_cache_key(input, budget, model.tokenizer, config);
    let now = host.now_ms();
    let ttl = u64::from(config.cache.ttl_minutes) * 60_000;
    if let Some(result) = spec::lookup(&database, &key, now, ttl) {
        return SpecCompile {
            result,
            cache_hit: true,
        };
    }
    let result = compile();
    if ttl > 0 {
        spec::store(&database, &key, &result, now, ttl);
    }
    SpecCompile {
        result,
        cache_hit: false,
    }
}
