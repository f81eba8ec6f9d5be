//! The `fit` phase: which tier of each file goes into the prompt so that the
//! prompt fits the token budget and, when the caller set one, its size limit.
//!
//! The ladder fits the file blocks into the code budget (the total less the
//! prompt's fixed sections), compressing the least relevant files first. The
//! prompt's exact tokens are the fixed sections' plus each block's exact tokens:
//! every block ends with a fence and a blank line and the next section starts
//! with `#`, where cl100k's pre-tokenizer always splits, and BPE never merges
//! across its pieces. When joining blocks costs more than the ladder's estimate,
//! or the prompt is over the caller's size limit, the code budget shrinks and
//! the ladder fits again — in memory, without reading anything twice. Debug
//! builds (every test run) recount the whole prompt to check the sum.
//!
//! When even the best file does not fit as signatures, the lines of the best
//! file around the intent's words are kept instead (a slice), with a warning.
//! Files an earlier step of the agentic session showed, unchanged since, cost
//! a one-line marker.

use std::collections::{BTreeMap, HashMap};

use aic_stages::content_hash::ContentHash;
use aic_stages::facts::FileFacts;
use aic_stages::fit::assembler::{ContextFile, PromptAssembler, PromptParts};
use aic_stages::fit::budget::BudgetAllocator;
use aic_stages::fit::ladder::{InclusionTier, LadderFile, SummarisationLadder, TierChoice};
use aic_stages::fit::slice::{
    DefinitionFocus, SliceFocus, best_definitions, slice_definitions, slice_focused, slice_to_fit,
};
use aic_stages::fit::tokens::TokenCount;
use aic_stages::fit::tokens::{TokenCounter, Tokenizer};
use aic_stages::relative_path::RelativePath;
use aic_stages::select::evidence::{mention_relevance, trace_relevance};
use aic_stages::select::file_kind::FileKind;
use aic_stages::select::selector::{KIND_PRIOR, ScoredFile};
use aic_stages::select::targets::TargetResolution;
use rayon::prelude::*;
use tracing::info;

use crate::cache::memo::Memo;
use crate::error::CompileError;
use crate::pipeline::facts::SelectedFacts;
use crate::pipeline::prepare::Plan;
use crate::pipeline::scan::Snapshot;
use crate::pipeline::select::Selection;
use crate::pipeline::{Cancel, SessionInput, SizeLimit, SizeScope};

/// A "previously shown" marker of session deduplication.
#[derive(Debug)]
pub struct PreviousMarker {
    /// The tier the file was shown at: this tier and more compressed ones show
    /// the marker.
    pub from: InclusionTier,
    /// The marker line.
    pub body: String,
    /// Tokens of the marker's block.
    pub cost: TokenCount,
}

/// A file the guard let through, with its place in the fit.
#[derive(Debug)]
pub struct FittedFile<'a> {
    /// The file as ranked.
    pub file: &'a ScoredFile,
    /// Its facts.
    pub facts: &'a FileFacts,
    /// Its tier in the prompt; `None` when it did not fit.
    pub tier: TierChoice,
}

/// What the `fit` phase decided. The default is the fit of a compile that
/// assembles no prompt (the guard blocked every selected file): no file, no
/// block, no token.
#[derive(Debug, Default)]
pub struct Fitted<'a> {
    /// The selected files the guard let through, best first, with their tiers.
    pub files: Vec<FittedFile<'a>>,
    /// The file blocks of the prompt, in rank order.
    pub blocks: Vec<ContextFile>,
    /// Exact tokens of the whole prompt.
    pub tokens: TokenCount,
    /// Tokens of everything but the file blocks.
    pub overhead: TokenCount,
    /// The code budget the ladder ended with.
    pub code_budget: TokenCount,
    /// The file shown as a slice of its lines, when one was.
    pub sliced: Option<RelativePath>,
    /// Session markers, by path.
    pub markers: BTreeMap<RelativePath, PreviousMarker>,
    /// Focus files shown as a slice around what the intent points at.
    pub slices: BTreeMap<RelativePath, FocusSlice>,
    /// Selected files left out because their relevance did not justify
    /// their tokens, best first: listed in the prompt's notes by path.
    pub listed: Vec<RelativePath>,
    /// The prompt's notes section, line by line.
    pub notes: Vec<String>,
    /// The project structure section (the orienting context's directory
    /// map).
    pub structure: Option<String>,
}

/// A focus file's slice: its body at L0 and the block's tokens.
#[derive(Debug, Clone)]
pub struct FocusSlice {
    /// The sliced body (its first line says which lines were kept).
    pub body: String,
    /// Tokens of the file's block with this body.
    pub cost: TokenCount,
    /// Lines kept of the file's lines.
    pub kept_lines: usize,
    /// Lines in the file.
    pub total_lines: usize,
    /// Whether this is an excerpt of a less relevant file (a glimpse, or a
    /// slice past the focus files), not a focus or named file's slice.
    pub glimpse: bool,
}

impl Fitted<'_> {
    /// The body and block tokens `facts` shows at `tier` (a marker when the
    /// session showed the file before at that tier or a fuller one).
    pub fn block_of(
        &self,
        path: &RelativePath,
        facts: &FileFacts,
        tier: InclusionTier,
    ) -> Option<(String, TokenCount)> {
        block_of(&self.markers, &self.slices, path, facts, tier)
    }

    /// Whether `path` is shown as a session marker at `tier`.
    pub fn is_marker(&self, path: &RelativePath, tier: InclusionTier) -> bool {
        self.markers.get(path).is_some_and(|m| tier >= m.from)
    }
}

fn block_of(
    markers: &BTreeMap<RelativePath, PreviousMarker>,
    slices: &BTreeMap<RelativePath, FocusSlice>,
    path: &RelativePath,
    facts: &FileFacts,
    tier: InclusionTier,
) -> Option<(String, TokenCount)> {
    if tier == InclusionTier::L0
        && let Some(slice) = slices.get(path)
    {
        return Some((slice.body.clone(), slice.cost));
    }
    match markers.get(path) {
        Some(marker) if tier >= marker.from => Some((marker.body.clone(), marker.cost)),
        _ => facts
            .render(tier)
            .map(|render| (render.body.clone(), render.block_tokens)),
    }
}

/// The parts of the prompt around the file blocks.
pub fn prompt_parts<'a>(
    plan: &'a Plan,
    session: &'a SessionInput,
    notes: &'a [String],
    structure: Option<&'a str>,
) -> PromptParts<'a> {
    PromptParts {
        intent: &plan.task_text,
        classification: Some(&plan.task),
        constraints: &plan.pack.constraints,
        session_context: session.header.as_deref(),
        project_structure: structure,
        notes,
        diff: plan.diff_section.as_deref(),
        ..PromptParts::default()
    }
}

/// The inputs of the `fit` phase besides the earlier phases' outputs.
#[derive(Clone, Copy, Debug)]
pub struct FitOptions<'a> {
    /// The agentic session's input.
    pub session: &'a SessionInput,
    /// The caller's size limit.
    pub limit: Option<SizeLimit>,
    /// The process's memo of block token counts.
    pub memo: Option<&'a Memo>,
}

/// Runs the `fit` phase; a slice or dropped files add a warning.
///
/// # Errors
///
/// [`CompileError::BudgetTooSmall`] when not even a slice of the best file
/// fits, and [`CompileError::Cancelled`].
pub fn fit<'a>(
    plan: &Plan,
    snapshot: &Snapshot,
    selection: &'a Selection,
    facts: &'a SelectedFacts,
    options: FitOptions<'_>,
    cancel: Cancel<'_>,
    warnings: &mut Vec<String>,
) -> Result<Fitted<'a>, CompileError> {
    let tokens = plan.tokens();
    let safe: Vec<(&ScoredFile, &FileFacts)> = selection
        .ranked
        .files
        .iter()
        .filter_map(|file| facts.of(&file.path).map(|f| (file, f)))
        .filter(|(_, f)| !f.guard.blocked)
        .collect();
    let markers = session_markers(&safe, snapshot, options.session, plan);
    // The relevance-first placement is planned on the code budget before
    // the notes it writes; the ladder below fits the final one.
    let plain_overhead = tokens.count(&fixed_text(
        plan.assembler(),
        &prompt_parts(plan, options.session, &[], selection.orientation.as_deref()),
    ));
    let placement = place(
        plan,
        snapshot,
        &safe,
        &selection.listed,
        BudgetAllocator.code_budget(plan.budget.total, plain_overhead),
    );
    let ladder_files = ladder_files(&safe, &markers, &placement);
    let smallest = ladder_files
        .iter()
        .filter_map(|f| f.costs.iter().flatten().min().copied())
        .min()
        .unwrap_or(TokenCount::ZERO);
    let total = plan.budget.total;
    let limit = options.limit;
    let mut counter = BlockCounter::new(options.memo, tokens);
    let NotedLadder {
        notes,
        dropped_slices,
        overhead,
        fixed_size,
        ladder,
    } = fit_with_notes(
        &NotesFrame {
            plan,
            selection,
            session: options.session,
            safe: &safe,
            markers: &markers,
            placement: &placement,
            ladder_files: &ladder_files,
            limit,
        },
        &mut counter,
        cancel,
    )?;
    // Slices are routine: the prompt's notes name them, and `-v` logs them.
    for line in slice_notes(&placement, &dropped_slices) {
        info!("{line}");
    }
    let parts = prompt_parts(
        plan,
        options.session,
        &notes,
        selection.orientation.as_deref(),
    );
    let Ladder {
        mut blocks,
        mut tiers,
        tokens: mut prompt_tokens,
        code_budget,
        size_bound,
    } = ladder;
    let mut sliced = None;
    if tiers
        .iter()
        .all(|tier| matches!(tier, None | Some(InclusionTier::L3)))
        && let Some((file, facts)) = safe.first()
        && let Some(slice) = slice_best(plan, &parts, file, facts, overhead, limit, fixed_size)
    {
        warnings.push(slice.warning);
        blocks = vec![slice.block];
        prompt_tokens = slice.tokens;
        tiers = vec![None; safe.len()];
        tiers[0] = Some(InclusionTier::L0);
        sliced = Some(file.path.clone());
    }
    let included = tiers.iter().filter(|t| t.is_some()).count();
    if included == 0 || prompt_tokens > total {
        return Err(CompileError::BudgetTooSmall {
            budget: total,
            overhead,
            smallest,
        });
    }
    let dropped = safe
        .iter()
        .zip(&tiers)
        .filter(|((file, _), tier)| tier.is_none() && !placement.listed.contains(&file.path))
        .count();
    let compressed = tiers
        .iter()
        .flatten()
        .filter(|t| **t != InclusionTier::L0)
        .count();
    if let Some(limit) = limit.filter(|_| size_bound && sliced.is_none()) {
        warnings.push(format!(
            "The prompt was fitted to a size limit of {} characters: {compressed} files are compressed and {dropped} left out to stay under it",
            limit.max_chars
        ));
    }
    if dropped > 0 {
        warnings.push(format!(
            "Heavy truncation: {dropped} of the {} ranked candidate files did not fit the budget of {} tokens even as names; raise the budget or narrow the intent",
            safe.len(),
            total
        ));
    }
    info!(
        "ladder: {} files: {} full, {} compressed, {} dropped (code budget {})",
        safe.len(),
        included - compressed,
        compressed,
        dropped,
        code_budget
    );
    Ok(Fitted {
        files: safe
            .into_iter()
            .zip(tiers)
            .map(|((file, facts), tier)| FittedFile { file, facts, tier })
            .collect(),
        blocks,
        tokens: prompt_tokens,
        overhead,
        code_budget,
        sliced,
        markers,
        slices: placement.slices,
        listed: placement.listed,
        notes,
        structure: selection.orientation.clone(),
    })
}

/// A line for each focus or named file shown as a slice (not the
/// excerpts, nor the slices the ladder dropped), for the `-v` trail.
fn slice_notes(placement: &Placement, dropped: &[RelativePath]) -> Vec<String> {
    placement
        .slices
        .iter()
        .filter(|(path, s)| !s.glimpse && !dropped.contains(path))
        .map(|(path, slice)| {
            format!(
                "`{path}` is shown as a slice: {} of its {} lines, around what the task points at (named code, trace lines, diff hunks or its words)",
                slice.kept_lines, slice.total_lines
            )
        })
        .collect()
}

/// Everything of a prompt but its file blocks.
fn fixed_text(assembler: PromptAssembler, parts: &PromptParts<'_>) -> String {
    format!(
        "{}{}{}",
        assembler.head(parts),
        assembler.context_heading(),
        assembler.tail(parts)
    )
}

/// The files as the ladder sees them, in `safe` order, with their places.
fn ladder_files(
    safe: &[(&ScoredFile, &FileFacts)],
    markers: &BTreeMap<RelativePath, PreviousMarker>,
    placement: &Placement,
) -> Vec<LadderFile> {
    safe.iter()
        .zip(&placement.ceilings)
        .map(|((file, facts), ceiling)| {
            ladder_file(
                file,
                facts,
                markers.get(&file.path),
                *ceiling,
                placement.slices.get(&file.path),
                placement
                    .focus
                    .iter()
                    .take(FOCUS_FLOORS)
                    .any(|p| *p == file.path),
                placement.bodies_only.contains(&file.path),
            )
        })
        .collect()
}

/// The inputs of [`fit_with_notes`].
struct NotesFrame<'s, 'a> {
    plan: &'s Plan,
    selection: &'s Selection,
    session: &'s SessionInput,
    safe: &'s [(&'a ScoredFile, &'a FileFacts)],
    markers: &'s BTreeMap<RelativePath, PreviousMarker>,
    placement: &'s Placement,
    ladder_files: &'s [LadderFile],
    limit: Option<SizeLimit>,
}

/// The ladder's fit with the notes it goes with.
struct NotedLadder {
    notes: Vec<String>,
    /// Slices the ladder dropped: the notes do not name them.
    dropped_slices: Vec<RelativePath>,
    overhead: TokenCount,
    fixed_size: usize,
    ladder: Ladder,
}

/// Fits the ladder under the prompt's notes. The notes name the slices; a
/// slice the ladder then drops is taken out of them and the ladder fits
/// again (the notes only get shorter, so this ends).
fn fit_with_notes(
    frame: &NotesFrame<'_, '_>,
    counter: &mut BlockCounter<'_>,
    cancel: Cancel<'_>,
) -> Result<NotedLadder, CompileError> {
    let NotesFrame {
        plan,
        selection,
        session,
        safe,
        markers,
        placement,
        ladder_files,
        limit,
    } = *frame;
    let mut dropped_slices: Vec<RelativePath> = Vec::new();
    // Files the ladder dropped, named in the notes with their best
    // definitions (before the files below the relevance cut-off: they rank
    // higher).
    let mut named_dropped: Vec<RelativePath> = Vec::new();
    let mut names_of: BTreeMap<RelativePath, Vec<String>> = BTreeMap::new();
    let listed = ListedFocus::of(plan);
    let listed_focus = listed.focus();
    // The notes must name exactly the slices the ladder shows and the files
    // it drops. A few rounds try the exact sets; if the fits keep changing
    // them, the notes only get shorter (a slice once left out of them stays
    // out; a dropped file is named only while it stays dropped), which ends.
    let mut round = 0usize;
    loop {
        round += 1;
        let dropped_files: Vec<(&RelativePath, &[String])> = named_dropped
            .iter()
            .map(|path| (path, names_of.get(path).map_or(&[][..], Vec::as_slice)))
            .collect();
        let notes = prompt_notes(plan, selection, placement, &dropped_slices, &dropped_files);
        let parts = prompt_parts(plan, session, &notes, selection.orientation.as_deref());
        let fixed = fixed_text(plan.assembler(), &parts);
        let overhead = plan.tokens().count_lines(&fixed);
        let fixed_size = limit
            .filter(|limit| limit.scope == SizeScope::Prompt)
            .map_or(0, |limit| limit.measure(&fixed));
        let ladder = fit_ladder(
            &Frame {
                assembler: plan.assembler(),
                safe,
                markers,
                slices: &placement.slices,
                ladder_files,
                parts: &parts,
                overhead,
                total: plan.budget.total,
                limit,
                fixed_size,
            },
            counter,
            cancel,
        )?;
        // A slice the ladder did not keep at L0 (dropped, or compressed to
        // signatures or names) is not shown.
        let unshown: Vec<RelativePath> = safe
            .iter()
            .zip(&ladder.tiers)
            .filter(|((file, _), tier)| {
                **tier != Some(InclusionTier::L0) && placement.slices.contains_key(&file.path)
            })
            .map(|((file, _), _)| file.path.clone())
            .collect();
        // Files the ladder dropped that the notes do not list already; none
        // when it kept no file above names (the best file then goes in as a
        // slice, or the budget is too small: either way the fit is redone).
        let kept_any = ladder
            .tiers
            .iter()
            .any(|tier| matches!(tier, Some(t) if *t != InclusionTier::L3));
        let dropped_now: Vec<RelativePath> = safe
            .iter()
            .zip(&ladder.tiers)
            .filter(|((file, _), tier)| {
                kept_any && tier.is_none() && !placement.listed.contains(&file.path)
            })
            .map(|((file, _), _)| file.path.clone())
            .collect();
        let noted_wrongly = unshown.iter().any(|p| !dropped_slices.contains(p))
            || dropped_slices.iter().any(|p| !unshown.contains(p))
            || dropped_now != named_dropped;
        // Past the rounds, stop once only slices shown after all are missing
        // from the notes and every file named as dropped is: from there the
        // notes would only get shorter.
        let settled = !noted_wrongly
            || (round >= NOTE_ROUNDS
                && unshown.iter().all(|p| dropped_slices.contains(p))
                && named_dropped.iter().all(|p| dropped_now.contains(p)));
        if settled {
            return Ok(NotedLadder {
                notes,
                dropped_slices,
                overhead,
                fixed_size,
                ladder,
            });
        }
        if round < NOTE_ROUNDS {
            dropped_slices = unshown;
            named_dropped = dropped_now;
        } else {
            for path in unshown {
                if !dropped_slices.contains(&path) {
                    dropped_slices.push(path);
                }
            }
            named_dropped.retain(|path| dropped_now.contains(path));
        }
        // Names only for the dropped files the notes have room to show
        // (they come first in the list).
        let shown = &named_dropped[..named_dropped.len().min(max_listed(plan))];
        for (file, facts) in safe {
            if shown.contains(&file.path) && !names_of.contains_key(&file.path) {
                names_of.insert(file.path.clone(), listed_names(listed_focus, facts));
            }
        }
    }
}

/// The fixed inputs of the ladder's fitting loop.
struct Frame<'s, 'a> {
    assembler: PromptAssembler,
    safe: &'s [(&'a ScoredFile, &'a FileFacts)],
    markers: &'s BTreeMap<RelativePath, PreviousMarker>,
    slices: &'s BTreeMap<RelativePath, FocusSlice>,
    ladder_files: &'s [LadderFile],
    parts: &'s PromptParts<'s>,
    overhead: TokenCount,
    total: TokenCount,
    limit: Option<SizeLimit>,
    fixed_size: usize,
}

/// What the fitting loop ended with.
struct Ladder {
    blocks: Vec<ContextFile>,
    tiers: Vec<TierChoice>,
    tokens: TokenCount,
    code_budget: TokenCount,
    /// Whether the size limit, not the token budget, made the ladder compress.
    size_bound: bool,
}

/// Fits the ladder to the code budget, counts the blocks exactly, and shrinks
/// the code budget while the prompt is over the budget or the size limit.
fn fit_ladder(
    frame: &Frame<'_, '_>,
    counter: &mut BlockCounter<'_>,
    cancel: Cancel<'_>,
) -> Result<Ladder, CompileError> {
    let assembler = frame.assembler;
    let (overhead, total, limit, fixed_size) =
        (frame.overhead, frame.total, frame.limit, frame.fixed_size);
    let mut code_budget = BudgetAllocator.code_budget(total, overhead);
    let mut size_bound = false;
    loop {
        cancel.check()?;
        let (tiers, _) = SummarisationLadder.fit(frame.ladder_files, code_budget);
        let blocks: Vec<ContextFile> = frame
            .safe
            .iter()
            .zip(&tiers)
            .filter_map(|((file, facts), tier)| {
                let tier = (*tier)?;
                let (body, _) = block_of(frame.markers, frame.slices, &file.path, facts, tier)?;
                Some(ContextFile {
                    path: file.path.clone(),
                    language: file.language,
                    tier,
                    body,
                    sliced: tier == InclusionTier::L0 && frame.slices.contains_key(&file.path),
                })
            })
            .collect();
        let mut block_tokens = 0u64;
        let mut size = fixed_size;
        for (index, block) in blocks.iter().enumerate() {
            let text = assembler.file_block_at(block, index + 1 == blocks.len());
            block_tokens += u64::from(counter.count(&text));
            size += limit.map_or(0, |limit| limit.measure(&text));
        }
        let tokens = TokenCount::from_u64(overhead.get() + block_tokens);
        debug_assert_eq!(
            tokens,
            counter
                .tokens
                .count(&assembler.assemble(frame.parts, &blocks)),
            "block token counts must add up to the prompt's"
        );
        let done = Ladder {
            blocks,
            tiers,
            tokens,
            code_budget,
            size_bound,
        };
        if code_budget.0 == 0 {
            return Ok(done);
        }
        if tokens > total {
            let excess = tokens.0 - total.0;
            code_budget = TokenCount(code_budget.0.saturating_sub(excess.max(1)));
            continue;
        }
        if let Some(limit) = limit
            && size > limit.max_chars
        {
            // Aim at the limit by the characters per token these blocks took,
            // a little under it: another budget picks another mix of files.
            let room = limit.max_chars.saturating_sub(fixed_size) as f64;
            let block_size = size.saturating_sub(fixed_size).max(1) as f64;
            let goal = (block_tokens as f64 * room / block_size * 0.98) as u32;
            code_budget = TokenCount(goal.min(code_budget.0 - 1));
            size_bound = true;
            continue;
        }
        return Ok(done);
    }
}

/// Session deduplication: a file an earlier step showed, unchanged since,
/// costs only a one-line marker at the tier it was shown at (and any more
/// compressed tier). A file the intent names is always shown.
fn session_markers(
    safe: &[(&ScoredFile, &FileFacts)],
    snapshot: &Snapshot,
    session: &SessionInput,
    plan: &Plan,
) -> BTreeMap<RelativePath, PreviousMarker> {
    let (tokens, assembler) = (plan.tokens(), plan.assembler());
    let repo = &snapshot.repo;
    let content_hash_of = |path: &RelativePath| {
        repo.files
            .binary_search_by(|f| f.path.cmp(path))
            .ok()
            .map(|i| repo.files[i].content_hash.to_hex())
    };
    safe.iter()
        .filter(|(file, _)| !file.target)
        .filter_map(|(file, _)| {
            let previous = session.previously_shown.get(&file.path)?;
            (content_hash_of(&file.path)? == previous.hash).then(|| {
                let body = format!(
                    "[previously shown in step {} at {}; unchanged since, not repeated]",
                    previous.step,
                    previous.tier.name()
                );
                let cost = tokens.count(&assembler.file_block(&ContextFile {
                    path: file.path.clone(),
                    language: file.language,
                    tier: previous.tier,
                    body: body.clone(),
                    sliced: false,
                }));
                (
                    file.path.clone(),
                    PreviousMarker {
                        from: previous.tier,
                        body,
                        cost,
                    },
                )
            })
        })
        .collect()
}

/// A file as the ladder sees it: its tier costs, a marker's cost from the tier
/// the session showed it at (and no fuller tier above), no tier fuller than
/// its relevance `ceiling`, a focus slice's cost at L0, and a floor at full
/// content for the files the intent names and the focus files.
fn ladder_file(
    file: &ScoredFile,
    facts: &FileFacts,
    marker: Option<&PreviousMarker>,
    ceiling: Option<InclusionTier>,
    slice: Option<&FocusSlice>,
    focus: bool,
    body_only: bool,
) -> LadderFile {
    let mut costs = facts.costs();
    if let Some(slice) = slice {
        costs[0] = Some(slice.cost);
    }
    if body_only {
        costs[1..].fill(None);
    }
    if let Some(marker) = marker {
        for (tier, cost) in InclusionTier::ALL.iter().zip(costs.iter_mut()) {
            if *tier == marker.from {
                *cost = Some(marker.cost);
            } else if *tier > marker.from {
                *cost = None;
            }
        }
    }
    for (tier, cost) in InclusionTier::ALL.iter().zip(costs.iter_mut()) {
        if ceiling.is_none_or(|ceiling| *tier < ceiling) {
            *cost = None;
        }
    }
    LadderFile {
        path: file.path.clone(),
        score: file.score,
        costs,
        floor: (file.target || focus).then_some(InclusionTier::L0),
    }
}

/// Relevance-first fitting (`docs/budget.md`): the budget is a ceiling, not
/// a quota, and it is spent on the most relevant files first.
///
/// A file's relevance is its score over the best score of a file the intent
/// does not name. The files the intent names and the [`MAX_FULL_FILES`]
/// best files at least [`FULL_RATIO`] as relevant as the best are shown with
/// their body, in rank order, each within an allowance: a share of what the
/// files before it left of the code budget, up to a token cap (no cap for a
/// named file) — [`FOCUS_SHARES`] for the first three, [`OTHER_SHARE`] for
/// the others. So the best file may take most of a tight budget, and no file
/// takes a large budget's whole. A file that does not fit its allowance
/// whole is sliced around what the intent points at in it (definitions it
/// names, lines of trace frames, then its heaviest words). The first two are
/// *focus* files: the ladder never compresses or drops them before the
/// others. Less relevant files get a glimpse or their signatures, and files
/// below [`SHOWN_RATIO`] are listed by path in the notes.
pub const FOCUS_SHARES: [(f64, u32); 3] = [(0.85, 10_000), (0.6, 6_000), (0.5, 4_000)];
/// The room set aside for the error site (a pasted trace's innermost
/// project frame) when another file ranks above it: a share of the code
/// budget and a token cap.
pub const ERROR_SITE_SHARE: (f64, u32) = (0.35, 2_500);
/// The allowance of the other files shown with their body: a share of what
/// is left of the code budget and a token cap.
pub const OTHER_SHARE: (f64, u32) = (0.25, 2_500);
/// The allowance of the files shown with a glimpse of their body: those
/// ranked within [`GLIMPSE_RANKS`] that are not shown whole: a share of the
/// code budget and a token cap. Such a file is whole when small, else the
/// lines around the intent's words; without such lines, its signatures.
pub const GLIMPSE_SHARE: (f64, u32) = (0.04, 600);
/// Files ranked this deep or deeper that are not shown with their body are
/// listed in the notes rather than shown as signatures.
pub const SIGNATURE_RANKS: usize = 20;
/// How deep in the ranking files get a glimpse of their body.
pub const GLIMPSE_RANKS: usize = 16;
/// How many of the first files shown with their body the ladder keeps
/// whole before any other.
pub const FOCUS_FLOORS: usize = 2;
/// Files at least this relevant may be shown with their body.
pub const FULL_RATIO: f64 = 0.5;
/// Files less relevant than this are listed by path in the notes, not shown.
pub const SHOWN_RATIO: f64 = 0.3;
/// The most files shown with their body besides the named ones.
pub const MAX_FULL_FILES: usize = 8;
/// The most files listed in the notes.
pub const MAX_LISTED: usize = 10;
/// The notes list one file per this many tokens of the total budget (at
/// least 3, at most [`MAX_LISTED`]).
pub const LISTED_PER_TOKENS: usize = 1_000;

/// Where each selected file may go.
#[derive(Debug, Default)]
pub struct Placement {
    /// The fullest tier each file (in `safe` order) may be shown at; `None`
    /// for a listed file.
    pub ceilings: Vec<Option<InclusionTier>>,
    /// Focus files sliced to their allowance.
    pub slices: BTreeMap<RelativePath, FocusSlice>,
    /// The focus files.
    pub focus: Vec<RelativePath>,
    /// Files below the relevance cut-off, best first.
    pub listed: Vec<RelativePath>,
    /// Files that define a name the intent mentions: shown with their body
    /// (whole or sliced around the definition) or not at all.
    pub bodies_only: Vec<RelativePath>,
    /// The best definitions of listed files, named beside them in the notes.
    pub listed_names: BTreeMap<RelativePath, Vec<String>>,
}

/// How many files the notes list: one per [`LISTED_PER_TOKENS`] of the
/// budget, 3 to [`MAX_LISTED`], so that at a hook's 2,500 tokens the list
/// does not take the code's room.
fn max_listed(plan: &Plan) -> usize {
    (plan.budget.total.0 as usize / LISTED_PER_TOKENS).clamp(3, MAX_LISTED)
}

/// What the best definitions of a file named in the notes are ranked by:
/// the task's words and the names it writes in code form.
struct ListedFocus {
    terms: Vec<(String, f64)>,
    mentions: Vec<String>,
}

impl ListedFocus {
    fn of(plan: &Plan) -> Self {
        Self {
            terms: weighted_terms(&plan.task, 12),
            mentions: plan.task.mentions.iter().map(|m| m.name.clone()).collect(),
        }
    }

    fn focus(&self) -> DefinitionFocus<'_> {
        DefinitionFocus {
            names: &self.mentions,
            lines: &[],
            terms: &self.terms,
        }
    }
}

/// Whether `file` defines a name the intent writes in code form.
fn defines_a_named_name(plan: &Plan, snapshot: &Snapshot, file: &ScoredFile) -> bool {
    if file.signals.mention <= 0.0 {
        return false;
    }
    let Some(entry) = snapshot
        .repo
        .files
        .binary_search_by(|f| f.path.cmp(&file.path))
        .ok()
        .map(|i| &snapshot.repo.files[i])
    else {
        return false;
    };
    plan.task.mentions.iter().any(|mention| {
        let last = mention.name.rsplit('.').next().unwrap_or(&mention.name);
        entry
            .name_ids
            .binary_search(&aic_stages::select::symbols::name_id(last))
            .is_ok()
    })
}

/// The tokens of code a prompt may grow to by its glimpses: with an ample
/// budget ([`AMPLE_BUDGET`]), a task whose files leave the prompt under
/// this floor shows its glimpses whole instead of as excerpts, best ranked
/// first, each when it fits in [`OTHER_SHARE`] of the room left (a second
/// pass after every file is placed). A prompt already past it is unchanged.
pub const PROMPT_FLOOR: u32 = 16_000;

/// A total budget at least this large is ample: the prompt floor applies
/// and more source files keep their exact text
/// ([`crate::pipeline::facts::EDIT_CANDIDATES`]). A hook's 2,500 tokens or
/// an 8,000-token request are tight: every token there goes by relevance.
pub const AMPLE_BUDGET: u32 = 2 * PROMPT_FLOOR;

/// [`PROMPT_FLOOR`] for a prompt of `total` tokens: none below
/// [`AMPLE_BUDGET`].
fn prompt_floor(total: TokenCount) -> u64 {
    if total.0 >= AMPLE_BUDGET {
        u64::from(PROMPT_FLOOR)
    } else {
        0
    }
}

/// `share.0` of `tokens`, at most `share.1` tokens.
fn capped_share(share: (f64, u32), tokens: u64) -> u64 {
    ((share.0 * tokens as f64) as u64).min(u64::from(share.1))
}

/// Whether the file at `rank` may be shown with its body, `full` files
/// being shown so already and `best` the best score of a file the intent
/// does not name.
fn shown_with_body(rank: usize, file: &ScoredFile, full: usize, best: f64) -> bool {
    let relative = if file.target || best <= 0.0 {
        1.0
    } else {
        file.score / best
    };
    // A test, doc, changelog or fixture the task did not ask for (the
    // file-kind prior demoted it) is at most a glimpse, unless it ranks
    // first: its body would take the room of the source that implements
    // the behaviour.
    // (A test a rule pack's pattern penalised is not penalised twice, but
    // it is demoted all the same.)
    let demoted = rank > 0
        && (file.penalized_by.iter().any(|p| p.starts_with(KIND_PRIOR))
            || (!file.penalized_by.is_empty()
                && FileKind::of(&file.path, file.language) != FileKind::Source));
    file.target || (!demoted && full < MAX_FULL_FILES && relative >= FULL_RATIO)
}

/// The room set aside for the error site ([`ERROR_SITE_SHARE`]).
struct ErrorSite {
    /// Its rank in `safe` order.
    rank: usize,
    /// The tokens set aside: its whole block, or its slice's within the
    /// share. (Its slice is cut again within its final allowance: a slice
    /// cut to a smaller room may cost less than that room.)
    cost: u64,
}

/// The error site: where a pasted trace's innermost project frame is, in
/// source (an assertion failing in a test is where the test noticed, not
/// where the fault is), when it ranks second or third and is shown with its
/// body. Its room is set aside before the files above it take theirs, so a
/// tight budget still shows the line the error is raised on.
fn error_site(
    plan: &Plan,
    snapshot: &Snapshot,
    safe: &[(&ScoredFile, &FileFacts)],
    best: f64,
    code_budget: TokenCount,
) -> Option<ErrorSite> {
    let (rank, (file, facts)) = safe
        .iter()
        .enumerate()
        .take(FOCUS_SHARES.len())
        .skip(1)
        .find(|(rank, (file, _))| {
            file.signals.trace >= 1.0
                && FileKind::of(&file.path, file.language) == FileKind::Source
                && shown_with_body(*rank, file, *rank, best)
        })?;
    let share = capped_share(ERROR_SITE_SHARE, u64::from(code_budget.0));
    let cost = match facts.costs()[0] {
        Some(l0) if l0.get() <= share => l0.get(),
        _ => focus_slice(plan, snapshot, file, facts, TokenCount::from_u64(share))?
            .cost
            .get(),
    };
    Some(ErrorSite { rank, cost })
}

/// What [`place`] decides for one file that does not depend on what the
/// files before it took: computed for every file before the placement walks
/// them in rank order (which files are shown with their body in one quick
/// pass in rank order, the rest in parallel).
struct Prepared {
    /// The file defines a name the intent mentions.
    named: bool,
    /// The file is shown with its body ([`shown_with_body`]).
    shown: bool,
    /// The glimpse of an unnamed file ranked within [`GLIMPSE_RANKS`] and not
    /// shown with its body: its allowance is a share of the whole code
    /// budget, so it is cut here.
    glimpse: Option<Glimpse>,
    /// The best definitions to name if the file ends up listed.
    listed_names: Vec<String>,
}

/// A glimpse of a file's body ([`place_glimpse`]).
enum Glimpse {
    /// Its whole body fits the allowance: shown whole at this many tokens.
    Whole(u64),
    /// An excerpt that fits.
    Excerpt(FocusSlice),
    /// Nothing fits.
    Nothing,
}

impl Glimpse {
    /// The glimpse of `file` within `allowance` tokens.
    fn of(
        plan: &Plan,
        snapshot: &Snapshot,
        (file, facts): (&ScoredFile, &FileFacts),
        allowance: u64,
    ) -> Self {
        let l0 = facts.costs()[0].map_or(u64::MAX, TokenCount::get);
        if l0 <= allowance {
            return Self::Whole(l0);
        }
        focus_slice(plan, snapshot, file, facts, TokenCount::from_u64(allowance))
            .map_or(Self::Nothing, Self::Excerpt)
    }
}

/// Prepares every file of `safe` for [`place`] (see [`Prepared`]).
fn prepare_placement(
    plan: &Plan,
    snapshot: &Snapshot,
    safe: &[(&ScoredFile, &FileFacts)],
    listed_focus: DefinitionFocus<'_>,
    code_budget: TokenCount,
    best: f64,
) -> Vec<Prepared> {
    // Which files are shown with their body follows from the ranking alone:
    // `full` counts the earlier ones, whatever they end up costing.
    let mut full = 0usize;
    let shown: Vec<bool> = safe
        .iter()
        .enumerate()
        .map(|(rank, (file, _))| {
            let shown = shown_with_body(rank, file, full, best);
            full += usize::from(shown && !file.target);
            shown
        })
        .collect();
    let glimpse_allowance = capped_share(GLIMPSE_SHARE, u64::from(code_budget.0));
    safe.par_iter()
        .zip(shown)
        .enumerate()
        .map(|(rank, (&(file, facts), shown))| {
            let named = defines_a_named_name(plan, snapshot, file);
            let glimpse = (!shown && !named && rank < GLIMPSE_RANKS)
                .then(|| Glimpse::of(plan, snapshot, (file, facts), glimpse_allowance));
            let listed_names = if !shown && rank >= SIGNATURE_RANKS && !file.target {
                listed_names(listed_focus, facts)
            } else {
                Vec::new()
            };
            Prepared {
                named,
                shown,
                glimpse,
                listed_names,
            }
        })
        .collect()
}

/// Where a file not shown with its body goes: whole when small, a glimpse
/// (an excerpt) within its allowance, its signatures, or listed in the
/// notes when deep in the ranking. `used` is what the files shown with
/// their body took of the code budget (a named file's glimpse takes a share
/// of what is left; another's was cut in [`prepare_placement`]).
fn place_glimpse(
    placement: &mut Placement,
    (plan, snapshot): (&Plan, &Snapshot),
    (rank, file, facts): (usize, &ScoredFile, &FileFacts),
    prepared: Prepared,
    code_budget: TokenCount,
    used: u64,
) -> u64 {
    let glimpse = if prepared.named {
        let allowance = capped_share(OTHER_SHARE, u64::from(code_budget.0).saturating_sub(used));
        Some(Glimpse::of(plan, snapshot, (file, facts), allowance))
    } else {
        prepared.glimpse
    };
    match glimpse {
        Some(Glimpse::Whole(spent)) => {
            placement.ceilings.push(Some(InclusionTier::L0));
            spent
        }
        Some(Glimpse::Excerpt(mut slice)) => {
            let spent = slice.cost.get();
            slice.glimpse = true;
            placement.slices.insert(file.path.clone(), slice);
            placement.ceilings.push(Some(InclusionTier::L0));
            spent
        }
        None | Some(Glimpse::Nothing) if rank >= SIGNATURE_RANKS && !file.target => {
            // Deep in the ranking, signatures cost more than they tell: the
            // file is listed instead.
            placement.bodies_only.retain(|p| *p != file.path);
            placement.ceilings.push(None);
            placement.listed.push(file.path.clone());
            if !prepared.listed_names.is_empty() {
                placement
                    .listed_names
                    .insert(file.path.clone(), prepared.listed_names);
            }
            0
        }
        None | Some(Glimpse::Nothing) => {
            placement.bodies_only.retain(|p| *p != file.path);
            placement.ceilings.push(Some(InclusionTier::L1));
            0
        }
    }
}

fn place(
    plan: &Plan,
    snapshot: &Snapshot,
    safe: &[(&ScoredFile, &FileFacts)],
    listed: &[RelativePath],
    code_budget: TokenCount,
) -> Placement {
    let best = safe
        .iter()
        .filter(|(file, _)| !file.target)
        .map(|(file, _)| file.score)
        .fold(0.0, f64::max);
    let mut placement = Placement {
        listed: listed.to_vec(),
        ..Placement::default()
    };
    // What a listed file's best definitions are named by, computed once.
    let listed_by = ListedFocus::of(plan);
    let prepared = prepare_placement(plan, snapshot, safe, listed_by.focus(), code_budget, best);
    let mut error_site = error_site(plan, snapshot, safe, best, code_budget);
    // Tokens the files shown with their body take, in rank order, the
    // error site's room included from the start.
    let mut used = error_site.as_ref().map_or(0, |site| site.cost);
    // Tokens the glimpses take, and the glimpses shown as excerpts (rank,
    // tokens).
    let mut glimpsed = 0u64;
    let mut excerpts: Vec<(usize, u64)> = Vec::new();
    for ((rank, &(file, facts)), prepared) in safe.iter().enumerate().zip(prepared) {
        let site = error_site.take_if(|site| site.rank == rank);
        if let Some(site) = &site {
            used -= site.cost;
        }
        // A file that defines a name the intent mentions is shown with that
        // definition or not at all: never as signatures without its body.
        if prepared.named {
            placement.bodies_only.push(file.path.clone());
        }
        if !prepared.shown {
            let spent = place_glimpse(
                &mut placement,
                (plan, snapshot),
                (rank, file, facts),
                prepared,
                code_budget,
                used,
            );
            glimpsed += spent;
            if placement.slices.contains_key(&file.path) {
                excerpts.push((rank, spent));
            }
            continue;
        }
        let l0 = facts.costs()[0].map_or(0, TokenCount::get);
        let index = placement.focus.len();
        let share = FOCUS_SHARES.get(index).copied().unwrap_or(OTHER_SHARE);
        let remaining = u64::from(code_budget.0).saturating_sub(used);
        let mut allowance = if file.target {
            (share.0 * remaining as f64) as u64
        } else {
            capped_share(share, remaining)
        };
        // The error site has at least the room set aside for it.
        if let Some(site) = site {
            allowance = allowance.max(site.cost);
        }
        placement.focus.push(file.path.clone());
        if l0 <= allowance {
            used += l0;
            placement.ceilings.push(Some(InclusionTier::L0));
            continue;
        }
        if let Some(mut slice) =
            focus_slice(plan, snapshot, file, facts, TokenCount::from_u64(allowance))
        {
            used += slice.cost.get();
            // Past the focus files, a slice of a file the intent does not
            // name is an excerpt, noted in one line with the glimpses.
            slice.glimpse = index >= FOCUS_FLOORS && !file.target;
            placement.slices.insert(file.path.clone(), slice);
            placement.ceilings.push(Some(InclusionTier::L0));
        } else {
            placement.focus.pop();
            placement.bodies_only.retain(|p| *p != file.path);
            placement.ceilings.push(Some(InclusionTier::L1));
        }
    }
    raise_to_floor(&mut placement, plan, safe, &excerpts, used + glimpsed);
    placement
}

/// The prompt floor ([`PROMPT_FLOOR`]): a prompt of `spent` tokens of code
/// under it gives what is left below it to the glimpses shown as
/// `excerpts` (rank in `safe`, tokens), in rank order: each is shown whole
/// when it fits in [`OTHER_SHARE`] of the room left. An excerpt is not
/// made larger: a wider cut of a file is more of its scattered lines, not
/// more of what the task is about.
fn raise_to_floor(
    placement: &mut Placement,
    plan: &Plan,
    safe: &[(&ScoredFile, &FileFacts)],
    excerpts: &[(usize, u64)],
    mut spent: u64,
) {
    let floor = prompt_floor(plan.budget.total);
    for &(rank, cost) in excerpts {
        if spent >= floor {
            break;
        }
        let allowance = capped_share(OTHER_SHARE, floor - spent);
        if allowance <= cost {
            continue;
        }
        let (file, facts) = safe[rank];
        let l0 = facts.costs()[0].map_or(u64::MAX, TokenCount::get);
        if l0 <= allowance {
            placement.slices.remove(&file.path);
            spent += l0.saturating_sub(cost);
        }
    }
}

/// The slice of a focus file that fits `allowance` tokens (block included):
/// the definitions the intent names in it, its trace frames' lines, then
/// the intent's heaviest words.
fn focus_slice(
    plan: &Plan,
    snapshot: &Snapshot,
    file: &ScoredFile,
    facts: &FileFacts,
    allowance: TokenCount,
) -> Option<FocusSlice> {
    let full = facts.render(InclusionTier::L0)?;
    let tokens = plan.tokens();
    let assembler = plan.assembler();
    let wrapper = tokens.count(&assembler.file_block(&ContextFile {
        path: file.path.clone(),
        language: file.language,
        tier: InclusionTier::L0,
        body: String::new(),
        sliced: true,
    }));
    let entry = snapshot
        .repo
        .files
        .binary_search_by(|f| f.path.cmp(&file.path))
        .ok()
        .map(|i| &snapshot.repo.files[i])?;
    let (_, mentioned) = mention_relevance(&plan.task.mentions, std::slice::from_ref(&entry));
    let (_, traced) = trace_relevance(&plan.task.frames, std::slice::from_ref(&entry));
    let mut names: Vec<String> = traced[0].names.clone();
    // A dotted mention (`Context.invoke`) anchors the definition inside its
    // owner rather than every definition of the last name.
    for mention in &plan.task.mentions {
        let mut parts = mention.name.rsplit('.');
        if let (Some(last), Some(owner)) = (parts.next(), parts.next())
            && mentioned[0].names.iter().any(|n| n == last)
        {
            let qualified = format!("{owner}.{last}");
            if !names.contains(&qualified) {
                names.push(qualified);
            }
        }
    }
    for name in &mentioned[0].names {
        let qualified = names
            .iter()
            .any(|n| n.rsplit('.').next() == Some(name.as_str()) && n.contains('.'));
        if !qualified && !names.contains(name) {
            names.push(name.clone());
        }
    }
    let terms = heaviest_terms(&plan.task, 12);
    let weighted = weighted_terms(&plan.task, 12);
    let definitions = &facts.definitions;
    // Trace lines are disk lines; the line map finds them in the L0 text.
    let lines: &[u32] = &traced[0].lines;
    let focus = SliceFocus {
        names: &names,
        lines,
        terms: &terms,
        whole_tokens: Some(full.block_tokens),
        map: Some(&facts.line_map),
    };
    let by_definitions = DefinitionFocus {
        names: &names,
        lines,
        terms: &weighted,
    };
    let mut budget = allowance.0.saturating_sub(wrapper.0);
    while budget > 0 {
        // A file with definitions is shown by them or not at all: the
        // line-based slicer would cut a definition apart.
        let sliced = if definitions.is_empty() {
            slice_focused(&full.body, focus, TokenCount(budget), tokens)?
        } else {
            slice_definitions(
                &full.body,
                definitions,
                &facts.line_map,
                by_definitions,
                TokenCount(budget),
                tokens,
            )?
        };
        let block = assembler.file_block(&ContextFile {
            path: file.path.clone(),
            language: file.language,
            tier: InclusionTier::L0,
            body: sliced.text.clone(),
            sliced: true,
        });
        let cost = tokens.count_lines(&block);
        if cost > allowance {
            budget = budget.saturating_sub(cost.0 - allowance.0);
            continue;
        }
        return Some(FocusSlice {
            kept_lines: sliced.kept.iter().map(|r| r.end() + 1 - r.start()).sum(),
            total_lines: sliced.total_lines,
            body: sliced.text,
            cost,
            glimpse: false,
        });
    }
    None
}

/// The `count` heaviest subject tokens (all of a short intent's).
fn heaviest_terms(
    task: &aic_stages::select::intent::TaskClassification,
    count: usize,
) -> Vec<String> {
    if task.subject_weights.len() != task.subject_tokens.len() {
        return task.subject_tokens.clone();
    }
    let mut weighted: Vec<(&String, f64)> = task
        .subject_tokens
        .iter()
        .zip(task.subject_weights.iter().copied())
        .filter(|(token, _)| token.len() >= 3)
        .collect();
    weighted.sort_by(|a, b| b.1.total_cmp(&a.1));
    weighted
        .into_iter()
        .take(count)
        .map(|(t, _)| t.clone())
        .collect()
}

/// The names a listed file's best definitions have (at most
/// [`LISTED_NAMES`]), for its line in the notes: where to look first.
fn listed_names(focus: DefinitionFocus<'_>, facts: &FileFacts) -> Vec<String> {
    let Some(full) = facts.render(InclusionTier::L0) else {
        return Vec::new();
    };
    best_definitions(
        &full.body,
        &facts.definitions,
        &facts.line_map,
        focus,
        LISTED_NAMES,
    )
}

/// Rounds in which the notes' slices follow the ladder's exact fit before
/// they only grow.
const NOTE_ROUNDS: usize = 4;

/// How many definition names a listed file gets in the notes.
pub const LISTED_NAMES: usize = 2;

/// The `count` heaviest subject tokens with their weights, lower case (all
/// of a short intent's, weighted 1).
fn weighted_terms(
    task: &aic_stages::select::intent::TaskClassification,
    count: usize,
) -> Vec<(String, f64)> {
    let weights: Vec<f64> = if task.subject_weights.len() == task.subject_tokens.len() {
        task.subject_weights.clone()
    } else {
        vec![1.0; task.subject_tokens.len()]
    };
    let mut weighted: Vec<(String, f64)> = task
        .subject_tokens
        .iter()
        .zip(weights)
        .filter(|(token, _)| token.len() >= 3)
        .map(|(token, weight)| (token.to_lowercase(), weight))
        .collect();
    weighted.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    weighted.dedup_by(|a, b| a.0 == b.0);
    weighted.truncate(count);
    weighted
}

/// The prompt's notes: targets that were not found, focus files shown as
/// slices, relevant files left out.
fn prompt_notes(
    plan: &Plan,
    selection: &Selection,
    placement: &Placement,
    dropped: &[RelativePath],
    dropped_files: &[(&RelativePath, &[String])],
) -> Vec<String> {
    let mut notes = Vec::new();
    if selection.orientation.is_some() {
        notes.push(format!("{}.", crate::pipeline::select::VAGUE_NOTE));
    }
    for target in &selection.targets {
        match target.resolution {
            TargetResolution::Unresolved => notes.push(
                crate::pipeline::scan::walk::builtin_exclusion(
                    &plan.project.root,
                    target.reference.raw.trim_start_matches("./"),
                    plan.project.config.repo_map.max_file_bytes,
                )
                .unwrap_or_else(|| {
                    format!(
                        "`{}` was named but matches no file in scope; nothing was guessed for it",
                        target.reference.raw
                    )
                }),
            ),
            TargetResolution::Ambiguous => notes.push(format!(
                "`{}` was named but is ambiguous; it could be any of: {}",
                target.reference.raw,
                target
                    .candidates
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            _ => {}
        }
    }
    for (path, slice) in placement
        .slices
        .iter()
        .filter(|(path, s)| !s.glimpse && !dropped.contains(path))
    {
        notes.push(format!(
            "`{path}` is shown as a slice ({} of {} lines, around what the task points at); read the file for the rest",
            aic_stages::fit::slice::thousands(slice.kept_lines),
            aic_stages::fit::slice::thousands(slice.total_lines)
        ));
    }
    let glimpses: Vec<String> = placement
        .slices
        .iter()
        .filter(|(path, s)| s.glimpse && !dropped.contains(path))
        .map(|(path, _)| format!("`{path}`"))
        .collect();
    if !glimpses.is_empty() {
        notes.push(format!(
            "Shown as excerpts around the task's words: {}",
            glimpses.join(", ")
        ));
    }
    // Files the ladder dropped first (they rank higher), then those below
    // the relevance cut-off, each with its best definitions.
    let listed: Vec<(&RelativePath, &[String])> = dropped_files
        .iter()
        .copied()
        .chain(placement.listed.iter().map(|p| {
            (
                p,
                placement.listed_names.get(p).map_or(&[][..], Vec::as_slice),
            )
        }))
        .collect();
    let max_listed = max_listed(plan);
    if !listed.is_empty() {
        let shown: Vec<String> = listed
            .iter()
            .take(max_listed)
            .map(|(p, names)| {
                if names.is_empty() {
                    format!("`{p}`")
                } else {
                    format!(
                        "`{p}` ({})",
                        names
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            })
            .collect();
        let more = listed.len().saturating_sub(max_listed);
        notes.push(format!(
            "Also possibly relevant, not shown: {}{}",
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    notes
}

/// A slice of the best file that fits.
struct Slice {
    block: ContextFile,
    tokens: TokenCount,
    warning: String,
}

/// The lines of the best file around the intent's words that fit the code
/// budget (and the size limit), when the file has a full render and some
/// lines fit.
fn slice_best(
    plan: &Plan,
    parts: &PromptParts<'_>,
    file: &ScoredFile,
    facts: &FileFacts,
    overhead: TokenCount,
    limit: Option<SizeLimit>,
    fixed_size: usize,
) -> Option<Slice> {
    let full = facts.render(InclusionTier::L0)?;
    let tokens = plan.tokens();
    let total = plan.budget.total;
    let assembler = plan.assembler();
    let wrapper = tokens.count(&assembler.file_block(&ContextFile {
        path: file.path.clone(),
        language: file.language,
        tier: InclusionTier::L0,
        body: String::new(),
        sliced: false,
    }));
    let definitions = &facts.definitions;
    let weighted = weighted_terms(&plan.task, 12);
    let by_definitions = DefinitionFocus {
        terms: &weighted,
        ..DefinitionFocus::default()
    };
    let mut slice_budget = BudgetAllocator
        .code_budget(total, overhead)
        .0
        .saturating_sub(wrapper.0);
    while slice_budget > 0 {
        let sliced = slice_definitions(
            &full.body,
            definitions,
            &facts.line_map,
            by_definitions,
            TokenCount(slice_budget),
            tokens,
        )
        .or_else(|| {
            slice_to_fit(
                &full.body,
                &plan.task.subject_tokens,
                TokenCount(slice_budget),
                tokens,
                &facts.line_map,
            )
        })?;
        let block = ContextFile {
            path: file.path.clone(),
            language: file.language,
            tier: InclusionTier::L0,
            body: sliced.text.clone(),
            sliced: true,
        };
        let candidate = assembler.assemble(parts, std::slice::from_ref(&block));
        let candidate_tokens = tokens.count_lines(&candidate);
        if candidate_tokens > total {
            slice_budget = slice_budget.saturating_sub(candidate_tokens.0 - total.0);
            continue;
        }
        if let Some(limit) = limit {
            let size = fixed_size + limit.measure(&assembler.file_block_at(&block, true));
            if size > limit.max_chars {
                let room = limit.max_chars.saturating_sub(fixed_size) as f64;
                let goal = (f64::from(slice_budget) * room / (size - fixed_size).max(1) as f64
                    * 0.98) as u32;
                slice_budget = goal.min(slice_budget - 1);
                continue;
            }
        }
        let warning = format!(
            "`{}` is larger than the budget of {} tokens: only {} of its {} lines, around the intent's words, are in the prompt",
            file.path,
            total,
            sliced
                .kept
                .iter()
                .map(|r| r.end() + 1 - r.start())
                .sum::<usize>(),
            sliced.total_lines
        );
        return Some(Slice {
            block,
            tokens: candidate_tokens,
            warning,
        });
    }
    None
}

/// Exact token counts of prompt blocks, remembered by the hash of the block's
/// text for this compile (the fit may count a block again after a refit) and,
/// when the process keeps one, in its memo. The memo is shared by compiles for
/// every model, so its key also names the encoding: a count made in one is
/// never read for another.
struct BlockCounter<'a> {
    memo: Option<&'a Memo>,
    counted: HashMap<u128, u32>,
    tokens: TokenCounter,
}

impl<'a> BlockCounter<'a> {
    fn new(memo: Option<&'a Memo>, tokens: TokenCounter) -> Self {
        Self {
            memo,
            counted: HashMap::new(),
            tokens,
        }
    }

    fn count(&mut self, text: &str) -> u32 {
        let hash = u128::from_be_bytes(ContentHash::of(text.as_bytes()).0);
        // `cl100k_base` keeps the keys it had before other encodings existed.
        let hash = match self.tokens.tokenizer() {
            Tokenizer::Cl100k => hash,
            other @ Tokenizer::O200k => {
                hash ^ u128::from_be_bytes(ContentHash::of(other.name().as_bytes()).0)
            }
        };
        if let Some(count) = self.counted.get(&hash) {
            return *count;
        }
        let count = if let Some(count) = self.memo.and_then(|memo| memo.block_tokens(hash)) {
            count
        } else {
            // A block shares its lines with the texts counted before it
            // (its slice candidates, the same file for the last intent).
            let count = self.tokens.count_lines(text).0;
            if let Some(memo) = self.memo {
                memo.put_block_tokens(hash, count);
            }
            count
        };
        self.counted.insert(hash, count);
        count
    }
}
