//! `aic compile "<intent>" [--root DIR] [--budget N] [--json] [--raw]`.

use anyhow::Context;
use serde::Serialize;

use crate::args::CompileArgs;
use crate::history::compilations::{CompileOrigin, record};
use crate::host::Host;
use crate::pipeline::{CompilationMeta, compile};
use crate::printer::print_stdout;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CompileOutput<'a> {
    compiled_prompt: &'a str,
    meta: &'a CompilationMeta,
}

/// Compiles and prints the prompt (or `{compiledPrompt, meta}` as JSON); the
/// compile is logged for `aic status` (a failure to log is a warning).
pub fn run(args: &CompileArgs, host: &Host) -> anyhow::Result<()> {
    let request = args.request.request();
    let compilation = compile(&request, host)?;
    let origin = CompileOrigin {
        trigger_source: "cli".to_owned(),
        ..CompileOrigin::default()
    };
    if let Err(message) = record(host, &compilation, &origin) {
        tracing::warn!("The compile was not logged: {message}");
    }
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
