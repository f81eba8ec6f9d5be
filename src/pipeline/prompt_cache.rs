//! The whole-prompt cache: a compile answered from an earlier identical one.
//!
//! The key covers everything the prompt depends on: the aic version and stage
//! sources, the intent (whitespace collapsed), the named targets and related
//! files (sorted, deduplicated), the task class, the project root, the
//! file-tree hash (`path:size:mtime` of every file in scope), the config hash,
//! the *allocated* budget (conversation tokens and the context window move
//! it), the caller's size limit (an MCP reply and a hook fit the same request
//! differently), the raw switch and the agentic session's key. Two intents of
//! one task class never share an entry. Entries live `cache.ttlMinutes`.

use std::path::Path;

use aic_stages::row_codec::STAGES_SOURCE_HASH;
use aic_storage::CacheKeyHasher;
use serde::{Deserialize, Serialize};

use crate::pipeline::prepare::Plan;
use crate::pipeline::scan::Snapshot;
use crate::pipeline::{
    CompilationMeta, CompilationRequest, SelectionEntry, ShownFile, SizeLimit, SizeScope,
};

/// What a prompt cache key is made of.
#[derive(Debug)]
pub struct PromptKeyParts<'a> {
    /// The intent as given.
    pub intent: &'a str,
    /// The named targets, as written.
    pub targets: &'a [String],
    /// The task class's name.
    pub task_class: &'a str,
    /// The canonical project root.
    pub root: &'a Path,
    /// The RepoMap's file-tree hash, hex.
    pub file_tree_hash: &'a str,
    /// The config hash, hex.
    pub config_hash: &'a str,
    /// The allocated total budget, in tokens.
    pub budget: u32,
    /// Whether transformers are bypassed.
    pub raw: bool,
    /// Related files as given.
    pub related: &'a [String],
    /// The caller's size limit, when it set one.
    pub size_limit: Option<SizeLimit>,
    /// The agentic session's key material (empty without a session).
    pub session: &'a str,
    /// The prompt format's name.
    pub format: &'a str,
    /// The name of the encoding the prompt was counted in.
    pub tokenizer: &'a str,
    /// The merged include and exclude globs (the command line's are not in
    /// the config hash).
    pub patterns: [&'a [String]; 2],
    /// The diff section (empty without one): a diff against a revision can
    /// change while the files do not.
    pub diff: &'a str,
    /// The `--scope` directory (empty without one).
    pub scope: &'a str,
}

/// The 32-byte prompt cache key of `parts`.
pub fn prompt_key(parts: &PromptKeyParts<'_>) -> [u8; 32] {
    let intent = parts
        .intent
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let sorted = |items: &[String]| {
        let mut items = items.to_vec();
        items.sort();
        items.dedup();
        items
    };
    let mut key = CacheKeyHasher::new("aic-prompt-v2");
    // A new aic (or new stages) may compile differently: never reuse its
    // predecessor's prompts.
    key.write(env!("CARGO_PKG_VERSION"))
        .write(STAGES_SOURCE_HASH)
        .write(&intent)
        .write(&sorted(parts.targets))
        .write(parts.task_class)
        .write(&parts.root.to_string_lossy().into_owned())
        .write(parts.file_tree_hash)
        .write(parts.config_hash)
        .write(&parts.budget)
        .write(&parts.raw)
        .write(&sorted(parts.related))
        .write(&parts.size_limit.map(|limit| {
            let scope = match limit.scope {
                SizeScope::Prompt => 1u8,
                SizeScope::FileBlocks => 2,
            };
            (limit.max_chars as u64, (scope, limit.json_escaped))
        }))
        .write(parts.session)
        .write(parts.format)
        .write(parts.tokenizer)
        .write(&sorted(parts.patterns[0]))
        .write(&sorted(parts.patterns[1]))
        .write(parts.diff)
        .write(parts.scope);
    key.finish_256()
}

/// The prompt cache key of `request` as planned, over `snapshot`'s files.
pub fn key_for(request: &CompilationRequest, plan: &Plan, snapshot: &Snapshot) -> [u8; 32] {
    let targets: Vec<String> = plan.targets.iter().map(|t| t.raw.clone()).collect();
    prompt_key(&PromptKeyParts {
        intent: &plan.intent,
        targets: &targets,
        task_class: plan.task.task_class.as_str(),
        root: &plan.project.root,
        // Recency comes from git as well as from the files: a commit or a
        // `git reset` changes the ranking without touching a file.
        file_tree_hash: &format!(
            "{}:{}",
            snapshot.file_tree_hash.to_hex(),
            snapshot.recency_hash().to_hex()
        ),
        config_hash: &plan.project.config_hash,
        budget: plan.budget.total.0,
        raw: plan.raw,
        related: &request.related_files,
        size_limit: request.size_limit,
        session: &request.session_key,
        format: plan.format.as_str(),
        tokenizer: plan.tokens().tokenizer().name(),
        patterns: [&plan.pack.include_patterns, &plan.pack.exclude_patterns],
        diff: plan.diff_section.as_deref().unwrap_or_default(),
        scope: request.scope.as_deref().unwrap_or_default(),
    })
}

/// What the prompt cache stores for one compile.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CachedPrompt {
    /// The compiled prompt.
    pub prompt: String,
    /// Its metadata as compiled.
    pub meta: CompilationMeta,
    /// The selection, without content.
    pub selection: Vec<SelectionEntry>,
    /// The classifier's confidence.
    pub classifier_confidence: f64,
    /// The files shown, with content hashes.
    #[serde(default)]
    pub shown: Vec<ShownFile>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts<'a>(intent: &'a str, targets: &'a [String]) -> PromptKeyParts<'a> {
        PromptKeyParts {
            intent,
            targets,
            task_class: "bugfix",
            root: Path::new("/repo"),
            file_tree_hash: "00",
            config_hash: "11",
            budget: 8000,
            raw: false,
            related: &[],
            size_limit: None,
            session: "",
            format: "markdown",
            tokenizer: "cl100k_base",
            patterns: [&[], &[]],
            diff: "",
            scope: "",
        }
    }

    #[test]
    fn whitespace_and_target_order_do_not_change_the_key_but_words_do() {
        let ab = ["a.rs".to_owned(), "b.rs".to_owned()];
        let ba = ["b.rs".to_owned(), "a.rs".to_owned(), "a.rs".to_owned()];
        let key = prompt_key(&parts("fix  the\nbug", &ab));
        assert_eq!(key, prompt_key(&parts("fix the bug", &ba)));
        assert_ne!(key, prompt_key(&parts("fix the bugs", &ab)));
        assert_ne!(key, prompt_key(&parts("fix the bug", &ab[..1])));
        let mut other_budget = parts("fix the bug", &ab);
        other_budget.budget = 8001;
        assert_ne!(key, prompt_key(&other_budget));
        let mut xml = parts("fix the bug", &ab);
        xml.format = "xml";
        assert_ne!(key, prompt_key(&xml));
        let excluded = ["tests/**".to_owned()];
        let mut narrowed = parts("fix the bug", &ab);
        narrowed.patterns = [&[], &excluded];
        assert_ne!(key, prompt_key(&narrowed));
        let mut limited = parts("fix the bug", &ab);
        limited.size_limit = Some(SizeLimit {
            max_chars: 9_000,
            scope: SizeScope::FileBlocks,
            json_escaped: false,
        });
        assert_ne!(key, prompt_key(&limited));
        let mut escaped = parts("fix the bug", &ab);
        escaped.size_limit = limited.size_limit.map(|limit| SizeLimit {
            json_escaped: true,
            ..limit
        });
        assert_ne!(prompt_key(&limited), prompt_key(&escaped));
    }
}
