//! `aic compile "<intent>" [--root DIR] [--budget N] [--json] [--raw]`.

use anyhow::Context;
use serde::Serialize;

use crate::cli::CompileArgs;
use crate::facts_cache::open_store;
use crate::printer::print_stdout;
use crate::records::{CompileOrigin, record_compilation};
use crate::runner::{CompilationMeta, compile};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CompileOutput<'a> {
    compiled_prompt: &'a str,
    meta: &'a CompilationMeta,
}

/// Logs the compile in the database (seed §9.1): a failure is a warning.
fn record(compilation: &crate::runner::Compilation) {
    let origin = CompileOrigin {
        trigger_source: "cli".to_owned(),
        ..CompileOrigin::default()
    };
    let outcome = std::panic::catch_unwind(|| {
        open_store().and_then(|store| record_compilation(&store, compilation, &origin))
    })
    .unwrap_or_else(|_| Err("the aic database is damaged (remove or move it aside)".to_owned()));
    if let Err(message) = outcome {
        tracing::warn!("The compile was not logged: {message}");
    }
}

/// Compiles and prints the prompt (or `{compiledPrompt, meta}` as JSON).
pub fn run(args: &CompileArgs) -> anyhow::Result<()> {
    let request = args.request.request();
    let compilation = compile(&request)?;
    record(&compilation);
    let text = if args.json {
        let mut json = serde_json::to_string_pretty(&CompileOutput {
            compiled_prompt: &compilation.prompt,
            meta: &compilation.meta,
        })
        .context("Failed to serialise the compilation")?;
        json.push('\n');
        json
    } else {
        compilation.prompt
    };
    print_stdout(&text).context("Failed to write to stdout")
}
