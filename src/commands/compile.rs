//! `aic compile "<intent>" [--root DIR] [--budget N] [--json] [--raw]`.

use anyhow::Context;
use serde::Serialize;

use crate::cli::CompileArgs;
use crate::printer::print_stdout;
use crate::runner::{CompilationMeta, compile};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CompileOutput<'a> {
    compiled_prompt: &'a str,
    meta: &'a CompilationMeta,
}

/// Compiles and prints the prompt (or `{compiledPrompt, meta}` as JSON).
pub fn run(args: &CompileArgs) -> anyhow::Result<()> {
    let compilation = compile(&args.request.request())?;
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
