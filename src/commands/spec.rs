//! `aic spec FILE.json [--budget N] [--model ID] [--json] [--no-cache] [--config FILE]`: compiles a task
//! specification into one briefing (`docs/spec-compiler.md`) and prints it, or
//! `{compiledSpec, meta}`.

use std::io::Read;
use std::path::Path;
use std::time::Instant;

use aic_stages::fit::model::ModelProfile;
use aic_stages::fit::tokens::TokenCount;
use aic_stages::spec::{DEFAULT_SPEC_BUDGET, SpecCompileRequest, parse_specification_file};
use anyhow::Context;
use tracing::{info, warn};

use crate::args::SpecArgs;
use crate::config::load_config;
use crate::error::CompileError;
use crate::host::Host;
use crate::pipeline::spec::compile_spec;
use crate::printer::print_stdout;

/// Reads and validates the specification file (`-` for stdin).
///
/// # Errors
///
/// [`CompileError::SpecUnreadable`] or [`CompileError::InvalidSpecification`], both naming the
/// file (exit code 3).
pub fn read_specification(path: &Path) -> Result<SpecCompileRequest, CompileError> {
    let unreadable = |source| CompileError::SpecUnreadable {
        path: path.to_path_buf(),
        source,
    };
    let text = if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(unreadable)?;
        text
    } else {
        fs_err::read_to_string(path).map_err(unreadable)?
    };
    parse_specification_file(&text).map_err(|problem| CompileError::InvalidSpecification {
        path: path.to_path_buf(),
        problem,
    })
}

/// Compiles the specification and prints the result.
pub fn run(args: &SpecArgs, host: &Host) -> anyhow::Result<()> {
    let started = Instant::now();
    let request = read_specification(&args.file)?;
    // A budget of 0 means the default, as in `aic_compile_spec`.
    let budget = args
        .budget
        .filter(|budget| *budget > 0)
        .map(TokenCount)
        .or(request.budget.filter(|budget| budget.0 > 0))
        .unwrap_or(DEFAULT_SPEC_BUDGET);
    let root = std::env::current_dir().context("Failed to read the current directory")?;
    let loaded = load_config(&root, args.config.as_deref()).map_err(CompileError::Config)?;
    if !loaded.unknown_keys.is_empty() {
        warn!(
            "Ignoring unknown configuration keys: {}",
            loaded.unknown_keys.join(", ")
        );
    }
    let model =
        ModelProfile::for_model(args.model.as_deref().or(loaded.config.model.id.as_deref()));
    let compiled = compile_spec(
        &request.spec,
        budget,
        &model,
        &loaded.config,
        args.no_cache,
        host,
    );
    let meta = &compiled.result.meta;
    info!(
        "Compiled the spec to {} of {} {} tokens ({} raw){} in {:.1} ms",
        meta.total_tokens_compiled.0,
        meta.budget.0,
        meta.tokenizer,
        meta.total_tokens_raw.0,
        if compiled.cache_hit {
            " from the cache"
        } else {
            ""
        },
        started.elapsed().as_secs_f64() * 1000.0
    );
    for (name, tier) in &meta.type_tiers {
        info!("  {name}: {}", tier.as_str());
    }
    for (kind, labels) in [
        ("code block", &meta.dropped_code_blocks),
        ("prose block", &meta.dropped_prose),
    ] {
        for label in labels {
            info!("  dropped {kind} `{label}` to fit the budget");
        }
    }
    if meta.truncated {
        warn!(
            "A budget of {} tokens is below the {} tokens of this specification at its smallest; the output ends with a truncation banner (raise `--budget`)",
            meta.budget.0, meta.minimum_tokens.0
        );
    }
    let text = if args.json {
        let mut json = serde_json::to_string_pretty(&compiled.result)
            .context("Failed to serialise the compiled spec")?;
        json.push('\n');
        json
    } else {
        compiled.result.compiled_spec
    };
    print_stdout(&text).context("Failed to write to stdout")
}
