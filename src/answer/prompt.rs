//! The answer of `aic compile`: the prompt, or `{compiledPrompt, meta}` as
//! JSON.

use anyhow::Context;
use serde::Serialize;

use super::{Answer, PendingRecord};
use crate::host::Host;
use crate::pipeline::{CompilationMeta, CompilationRequest, compile};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CompileOutput<'a> {
    compiled_prompt: &'a str,
    meta: &'a CompilationMeta,
}

/// Runs a compile for `aic compile` in this process: the compile, the text
/// to print, and its log entry, which the caller writes with
/// [`PendingRecord::record`] (the daemon after its reply has left).
///
/// # Errors
///
/// The compile's error.
pub fn answer(
    request: &CompilationRequest,
    json: bool,
    copy: bool,
    host: &Host,
) -> anyhow::Result<(Answer, PendingRecord)> {
    let compilation = compile(request, host)?;
    let prompt = copy.then(|| compilation.prompt.clone());
    let stdout = if json {
        let mut json = serde_json::to_string_pretty(&CompileOutput {
            compiled_prompt: &compilation.prompt,
            meta: &compilation.meta,
        })
        .context("Failed to serialise the compilation")?;
        json.push('\n');
        json
    } else {
        compilation.prompt.clone()
    };
    let answer = Answer {
        stdout,
        tokens_compiled: compilation.meta.tokens_compiled.get(),
        prompt,
        warnings: compilation.meta.warnings.clone(),
        failure: None,
    };
    Ok((answer, PendingRecord { compilation }))
}
