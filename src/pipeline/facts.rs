//! The `facts` phase: what the per-file stage knows of each selected file —
//! the guard's verdict, the transformed text and the tier renders with their
//! token costs. Each file's facts come from the per-file cache by its content
//! hash, or are computed from its bytes, read at most once in this phase (and
//! not at all when the select phase already read them). Files run in parallel;
//! the result is sorted by path.

use aic_stages::facts::{FileFacts, compute_facts};
use aic_stages::guard::{ContextGuard, GuardResult};
use aic_stages::language::Language;
use aic_stages::relative_path::RelativePath;
use aic_stages::select::file_kind::FileKind;
use aic_stages::select::selector::ScoredFile;
use rayon::prelude::*;
use tracing::info;

use crate::cache::FileCache;
use crate::cache::key::RowKind;
use crate::error::CompileError;
use crate::pipeline::prepare::Plan;
use crate::pipeline::scan::{Bounded, Snapshot, read_bounded};
use crate::pipeline::select::Selection;
use crate::pipeline::{Cancel, isolate};

/// Files scoring above this keep their exact syntax: lossy format-specific
/// transforms are bypassed for them, as for the files the intent names.
const BYPASS_SCORE: f64 = 0.90;

/// How many of the best-ranked source files are edit candidates at an
/// ample budget ([`crate::pipeline::fit::AMPLE_BUDGET`]): they keep their
/// comments and every other lossy transform is bypassed, because an agent
/// edits a file by its exact lines (`docs/budget.md`, "Edit candidates keep
/// their text").
pub const EDIT_CANDIDATES: usize = 6;

/// How many are edit candidates at a tight budget: there a comment takes
/// the room of code, so fewer files keep them.
pub const TIGHT_EDIT_CANDIDATES: usize = 3;

/// The edit candidates of a prompt of `total` tokens.
pub fn edit_candidates(total: aic_stages::fit::tokens::TokenCount) -> usize {
    if total.0 >= crate::pipeline::fit::AMPLE_BUDGET {
        EDIT_CANDIDATES
    } else {
        TIGHT_EDIT_CANDIDATES
    }
}

/// The files whose lossy transforms are bypassed: the targets, files scoring
/// above [`BYPASS_SCORE`], and the first `candidates` shown source files in
/// rank order ([`edit_candidates`]).
fn bypassed(selection: &Selection, candidates: usize) -> std::collections::HashSet<RelativePath> {
    let shown = selection
        .ranked
        .files
        .iter()
        .filter(|file| !selection.listed.contains(&file.path));
    let edit_candidates = shown
        .clone()
        .filter(|file| {
            may_be_edit_candidate(file.language, FileKind::of(&file.path, file.language))
        })
        .take(candidates);
    shown
        .filter(|file| file.target || file.score > BYPASS_SCORE)
        .chain(edit_candidates)
        .map(|file| file.path.clone())
        .collect()
}

/// Whether a file of `language` and `kind` is shown with its exact text when
/// it is among the [`EDIT_CANDIDATES`] best-ranked: source code, not a test,
/// doc or data file. `aic precompute` writes such a file's exact-text row too.
pub(crate) fn may_be_edit_candidate(language: Language, kind: FileKind) -> bool {
    language.is_code() && kind == FileKind::Source
}

/// The facts of the selected files and the guard's verdict on them.
#[derive(Debug)]
pub struct SelectedFacts {
    /// One entry per selected file that could be read, sorted by path.
    pub files: Vec<FileFacts>,
    /// The guard's findings over them.
    pub guard: GuardResult,
}

impl SelectedFacts {
    /// Whether the guard blocked every selected file that was read: the
    /// compile has nothing to show ([`CompileError::GuardBlockedAll`]).
    pub fn blocks_everything(&self, selection: &Selection) -> bool {
        !selection
            .ranked
            .files
            .iter()
            .any(|file| self.of(&file.path).is_some_and(|f| !f.guard.blocked))
    }

    /// The guard's blocked files, for [`CompileError::GuardBlockedAll`].
    pub fn blocked_files(&self) -> Vec<String> {
        self.guard
            .files_blocked
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// The facts of `path`, when it was read.
    pub fn of(&self, path: &RelativePath) -> Option<&FileFacts> {
        self.files
            .binary_search_by(|f| f.path.cmp(path))
            .ok()
            .map(|index| &self.files[index])
    }
}

/// Runs the `facts` phase; a guard that blocked or redacted files adds a
/// warning. Whether the guard left anything to show is for the caller to ask
/// ([`SelectedFacts::blocks_everything`]).
///
/// # Errors
///
/// [`CompileError::Cancelled`].
pub fn facts(
    plan: &Plan,
    snapshot: &Snapshot,
    selection: &Selection,
    cache: Option<&FileCache>,
    cancel: Cancel<'_>,
    warnings: &mut Vec<String>,
) -> Result<SelectedFacts, CompileError> {
    let repo = &snapshot.repo;
    let context = plan.project.facts_context(plan.raw, plan.tokens());
    let tokenizer = plan.tokens().tokenizer();
    let bypassed = bypassed(selection, edit_candidates(plan.budget.total));
    if let Some(cache) = cache.filter(|cache| cache.remote().is_some()) {
        let shown = selection.ranked.files.iter();
        let shown = shown.filter(|file| !selection.listed.contains(&file.path));
        let keys = shown.filter_map(|file| {
            let index = repo
                .files
                .binary_search_by(|f| f.path.cmp(&file.path))
                .ok()?;
            let kind = RowKind::Facts {
                raw: plan.raw,
                bypass: bypassed.contains(&file.path),
                tokenizer,
            };
            Some(cache.row_key(
                repo.files[index].content_hash,
                kind,
                &file.path,
                file.language,
            ))
        });
        cache.prefetch(keys.collect::<Vec<_>>());
    }
    let mut files: Vec<FileFacts> = selection
        .ranked
        .files
        .par_iter()
        .filter(|file| !selection.listed.contains(&file.path))
        .filter_map(|file| {
            let index = repo.files.binary_search_by(|f| f.path.cmp(&file.path)).ok();
            let hash = index.map(|i| repo.files[i].content_hash);
            let held = index.and_then(|i| selection.read.get(&i));
            let bypass = bypassed.contains(&file.path);
            if let (Some(cache), Some(hash)) = (cache, hash)
                && let Some(facts) =
                    cache.facts(hash, &file.path, file.language, plan.raw, bypass, tokenizer)
            {
                return Some(facts);
            }
            if let Some(bytes) = held {
                return compute(&context, file, bytes, bypass, cache);
            }
            let path = plan.project.root.join(file.path.as_str());
            let cap = plan.project.config.repo_map.max_file_bytes;
            let Ok(Bounded::Bytes(bytes)) = read_bounded(&path, cap) else {
                return None;
            };
            compute(&context, file, &bytes, bypass, cache)
        })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    cancel.check()?;
    let mut guard = ContextGuard::summarize(files.iter().map(|f| (&f.path, &f.guard)));
    // Injected instructions in the intent are reported with the files'
    // findings; the intent itself is marked, not blocked.
    guard.findings.extend(plan.intent_findings.iter().cloned());
    guard.findings.sort();
    info!(
        "guard: scanned {} files | {} blocked, {} findings",
        files.len(),
        guard.files_blocked.len(),
        guard.findings.len()
    );
    let transformed = files
        .iter()
        .filter(|f| !f.transforms_applied.is_empty())
        .count();
    let saved: u64 = files
        .iter()
        .filter(|f| !f.guard.blocked)
        .map(|f| {
            f.original_tokens
                .get()
                .saturating_sub(f.transformed_tokens.get())
        })
        .sum();
    info!(
        "transform: {} files | {transformed} transformed | {saved} tokens saved{}",
        files.len(),
        if plan.raw {
            " (raw: transformers bypassed)"
        } else {
            ""
        }
    );
    let facts = SelectedFacts { files, guard };
    if let Some(warning) = guard_warning(&facts.guard) {
        warnings.push(warning);
    }
    Ok(facts)
}

/// Computes one file's facts from its bytes and caches them; `None` (and a
/// warning) when a stage panics on it.
fn compute(
    context: &aic_stages::facts::FactsSettings<'_>,
    file: &ScoredFile,
    bytes: &[u8],
    bypass: bool,
    cache: Option<&FileCache>,
) -> Option<FileFacts> {
    let facts = isolate(&file.path, || {
        compute_facts(context, &file.path, file.language, bytes, bypass)
    })?;
    if let Some(cache) = cache {
        cache.put_facts(&facts, context.raw, bypass, context.tokens.tokenizer());
    }
    Some(facts)
}

/// The warning for files the guard blocked or redacted, naming them.
fn guard_warning(guard: &GuardResult) -> Option<String> {
    if guard.files_blocked.is_empty() && guard.files_redacted.is_empty() {
        return None;
    }
    let list = |files: &[RelativePath]| {
        files
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    if !guard.files_blocked.is_empty() {
        parts.push(format!(
            "Context Guard blocked {} selected file(s): {}",
            guard.files_blocked.len(),
            list(&guard.files_blocked)
        ));
    }
    if !guard.files_redacted.is_empty() {
        parts.push(format!(
            "Context Guard redacted secrets in: {}",
            list(&guard.files_redacted)
        ));
    }
    let mut message = parts.join("; ");
    message.push_str(" (details: meta.guard, or `aic inspect`)");
    Some(message)
}
