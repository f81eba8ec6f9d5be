//! What a caller hands the pipeline: the [`CompilationRequest`], the agentic
//! session's [`SessionInput`], and an optional [`SizeLimit`] on what the caller
//! shows of the prompt.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use aic_stages::fit::assembler::PromptFormat;

use crate::pipeline::diff::DiffSpec;
use aic_stages::fit::ladder::InclusionTier;
use aic_stages::fit::tokens::TokenCount;
use aic_stages::relative_path::RelativePath;
use serde::{Deserialize, Serialize};

/// One compile's inputs. Serialisable (without the cancel flag) so a client
/// can hand it to `aic daemon`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CompilationRequest {
    /// The user's intent, verbatim.
    pub intent: String,
    /// The project root as given (relative paths are resolved against the
    /// working directory).
    pub project_root: PathBuf,
    /// An explicit config file instead of the walk-up search.
    pub config_path: Option<PathBuf>,
    /// A total budget that overrides config and rule packs; `0` means
    /// automatic, like `contextBudget.maxTokens: 0`.
    pub budget: Option<TokenCount>,
    /// Bypass every content transformer (`--raw`; also `#raw` in the intent).
    pub raw: bool,
    /// The model id, when known: picks the tokenizer, the window, the default
    /// layout and the budget margin ([`ModelProfile`](aic_stages::fit::model::ModelProfile)).
    pub model_id: Option<String>,
    /// `budget` is already in counted tokens, so the model's margin does not
    /// cut it: a hook derives its budget from a size in characters, which
    /// bounds what it injects whatever the model's tokenizer.
    pub budget_counted: bool,
    /// Who asked: `cli`, or an editor id.
    pub editor_id: String,
    /// Files a caller knows are related (an agent's tool outputs, `--related`):
    /// each adds a +0.2 boost pattern for that exact path.
    pub related_files: Vec<String>,
    /// Keep every excluded file in the trace, not only counts and near misses.
    pub trace_all: bool,
    /// List in the trace the files git tracks that the scan left out, with
    /// the reason (`aic inspect`; reads the git index).
    pub explain_left_out: bool,
    /// Neither read nor write the per-file cache or the prompt cache
    /// (`--no-cache`; also `cache.enabled: false`).
    pub no_cache: bool,
    /// Answer from the whole-prompt cache when an identical request was
    /// compiled over the same files and config within `cache.ttlMinutes`, and
    /// store the result otherwise. A hit has no [`Compilation::trace`], so
    /// `inspect` leaves this off.
    ///
    /// [`Compilation::trace`]: super::Compilation::trace
    pub use_prompt_cache: bool,
    /// Extra key material for the prompt cache: a session and step, empty
    /// when there is none.
    pub session_key: String,
    /// What the agentic session layer adds; empty for a single-shot compile.
    pub session: SessionInput,
    /// Set by the caller to stop the compile between phases: the compile then
    /// returns [`CompileError::Cancelled`](crate::error::CompileError::Cancelled)
    /// and caches and logs nothing.
    #[serde(skip)]
    pub cancel: Option<Arc<AtomicBool>>,
    /// A limit on the characters of what the caller shows of the prompt (an
    /// MCP reply, a hook's injected text): the fit phase meets it in the same
    /// compile, compressing the least relevant files first.
    pub size_limit: Option<SizeLimit>,
    /// The prompt's layout; `None` takes `output.format` from the config
    /// (Markdown by default).
    pub format: Option<PromptFormat>,
    /// Globs (`--include`): when any is given, only files matching one are
    /// candidates. Added to the config's and rule packs' `includePatterns`.
    pub include: Vec<String>,
    /// Globs (`--exclude`): files matching one are never candidates. Added to
    /// the config's and rule packs' `excludePatterns`.
    pub exclude: Vec<String>,
    /// Compile for what changed (`--diff`, `--staged`, `--range`): the changed
    /// files are pinned like named files and the diff gets its own section.
    pub diff: Option<DiffSpec>,
    /// Select only below this directory (`--scope`), relative to the root,
    /// with a trailing `/`; named files still pass.
    pub scope: Option<String>,
    /// Show the orienting context whatever the intent says (an editor's
    /// session start): the README, the root manifests, the directory map,
    /// the entry points and the files most imported.
    pub orient: bool,
    /// The daemon's warm-up compile of a project it has not indexed yet: it
    /// builds the resident index for the requests to come and is not one of
    /// them, so it is not counted in the project's compiles.
    #[serde(skip)]
    pub warm_up: bool,
}

/// A limit on the size of the compiled prompt, in characters, as the caller
/// will show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeLimit {
    /// The most characters (Unicode scalar values).
    pub max_chars: usize,
    /// Which part of the prompt is measured.
    pub scope: SizeScope,
    /// Whether characters are counted as in a JSON string (`"`, `\` and
    /// control characters escaped) rather than as text.
    pub json_escaped: bool,
}

/// The part of the prompt a [`SizeLimit`] measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SizeScope {
    /// The whole prompt.
    Prompt,
    /// Only the file blocks of the `## Context` section (what a hook injects).
    FileBlocks,
}

impl SizeLimit {
    /// The measured size of `text` under this limit, in characters.
    pub fn measure(&self, text: &str) -> usize {
        if !self.json_escaped {
            return text.chars().count();
        }
        text.chars()
            .map(|c| match c {
                '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
                c if c < ' ' => 6,
                _ => 1,
            })
            .sum()
    }
}

/// What the agentic session layer hands the pipeline: the `## Session
/// context` header, the files already shown in the session, and the tokens
/// the conversation already holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SessionInput {
    /// Body of the `## Session context` section (the ConversationCompressor's
    /// step list), when the session has recorded steps.
    pub header: Option<String>,
    /// Files shown in earlier steps of the session, by path.
    pub previously_shown: BTreeMap<RelativePath, PreviousFile>,
    /// Tokens already in the agent's context window: the BudgetAllocator clamps
    /// the budget to the window's headroom.
    pub conversation_tokens: Option<TokenCount>,
}

/// A file an earlier step of the session showed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreviousFile {
    /// xxh3-128 of the content that was shown, hex.
    pub hash: String,
    /// The tier it was shown at.
    pub tier: InclusionTier,
    /// The step that showed it.
    pub step: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_measure_counts_escapes_like_serde_json() {
        let limit = SizeLimit {
            max_chars: 0,
            scope: SizeScope::Prompt,
            json_escaped: true,
        };
        let text = "a \"quoted\" line\\\n\ttab \u{1} é";
        let encoded = serde_json::to_string(text).unwrap();
        // The encoded string has its two quotes besides the text.
        assert_eq!(limit.measure(text) + 2, encoded.chars().count());
        let plain = SizeLimit {
            json_escaped: false,
            ..limit
        };
        assert_eq!(plain.measure(text), text.chars().count());
    }
}
