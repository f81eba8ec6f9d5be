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

use aic_stages::assembler::{ContextFile, PromptAssembler, PromptParts};
use aic_stages::budget::BudgetAllocator;
use aic_stages::content_hash::ContentHash;
use aic_stages::facts::FileFacts;
use aic_stages::ladder::{InclusionTier, LadderFile, SummarisationLadder, TierChoice};
use aic_stages::relative_path::RelativePath;
use aic_stages::selector::ScoredFile;
use aic_stages::slice::slice_to_fit;
use aic_stages::tokens::TokenCount;
use aic_stages::tokens::TokenCounter;
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

/// What the `fit` phase decided.
#[derive(Debug)]
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
        block_of(&self.markers, path, facts, tier)
    }

    /// Whether `path` is shown as a session marker at `tier`.
    pub fn is_marker(&self, path: &RelativePath, tier: InclusionTier) -> bool {
        self.markers.get(path).is_some_and(|m| tier >= m.from)
    }
}

fn block_of(
    markers: &BTreeMap<RelativePath, PreviousMarker>,
    path: &RelativePath,
    facts: &FileFacts,
    tier: InclusionTier,
) -> Option<(String, TokenCount)> {
    match markers.get(path) {
        Some(marker) if tier >= marker.from => Some((marker.body.clone(), marker.cost)),
        _ => facts
            .render(tier)
            .map(|render| (render.body.clone(), render.block_tokens)),
    }
}

/// The parts of the prompt around the file blocks.
pub fn prompt_parts<'a>(plan: &'a Plan, session: &'a SessionInput) -> PromptParts<'a> {
    PromptParts {
        intent: &plan.intent,
        classification: Some(&plan.task),
        constraints: &plan.pack.constraints,
        session_context: session.header.as_deref(),
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
    let assembler = PromptAssembler;
    let parts = prompt_parts(plan, options.session);
    let fixed = format!(
        "{}{}{}",
        assembler.head(&parts),
        assembler.context_heading(),
        assembler.tail(&parts)
    );
    let overhead = tokens.count(&fixed);
    let limit = options.limit;
    let fixed_size = limit
        .filter(|limit| limit.scope == SizeScope::Prompt)
        .map_or(0, |limit| limit.measure(&fixed));
    let safe: Vec<(&ScoredFile, &FileFacts)> = selection
        .ranked
        .files
        .iter()
        .filter_map(|file| facts.of(&file.path).map(|f| (file, f)))
        .filter(|(_, f)| !f.guard.blocked)
        .collect();
    let markers = session_markers(&safe, snapshot, options.session, tokens);
    let ladder_files: Vec<LadderFile> = safe
        .iter()
        .map(|(file, facts)| ladder_file(file, facts, markers.get(&file.path)))
        .collect();
    let smallest = ladder_files
        .iter()
        .filter_map(|f| f.costs.iter().flatten().min().copied())
        .min()
        .unwrap_or(TokenCount::ZERO);
    let total = plan.budget.total;
    let mut counter = BlockCounter::new(options.memo, tokens);
    let frame = Frame {
        safe: &safe,
        markers: &markers,
        ladder_files: &ladder_files,
        parts: &parts,
        overhead,
        total,
        limit,
        fixed_size,
    };
    let Ladder {
        mut blocks,
        mut tiers,
        tokens: mut prompt_tokens,
        code_budget,
        size_bound,
    } = fit_ladder(&frame, &mut counter, cancel)?;
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
    let dropped = tiers.iter().filter(|t| t.is_none()).count();
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
            "Heavy truncation: {dropped} of {} selected files did not fit the budget of {} tokens even as names; raise the budget or narrow the intent",
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
    })
}

/// The fixed inputs of the ladder's fitting loop.
struct Frame<'s, 'a> {
    safe: &'s [(&'a ScoredFile, &'a FileFacts)],
    markers: &'s BTreeMap<RelativePath, PreviousMarker>,
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
    let assembler = PromptAssembler;
    let (overhead, total, limit, fixed_size) =
        (frame.overhead, frame.total, frame.limit, frame.fixed_size);
    let mut code_budget = BudgetAllocator.code_budget(total, overhead);
    let mut size_bound = false;
    loop {
        cancel.check()?;
        let (tiers, _) = SummarisationLadder.fit(frame.ladder_files, code_budget);
        let mut block_tokens = 0u64;
        let mut size = fixed_size;
        let blocks: Vec<ContextFile> = frame
            .safe
            .iter()
            .zip(&tiers)
            .filter_map(|((file, facts), tier)| {
                let tier = (*tier)?;
                let (body, _) = block_of(frame.markers, &file.path, facts, tier)?;
                let block = ContextFile {
                    path: file.path.clone(),
                    language: file.language,
                    tier,
                    body,
                    sliced: false,
                };
                let text = assembler.file_block(&block);
                block_tokens += u64::from(counter.count(&text));
                size += limit.map_or(0, |limit| limit.measure(&text));
                Some(block)
            })
            .collect();
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
    tokens: TokenCounter,
) -> BTreeMap<RelativePath, PreviousMarker> {
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
                let cost = tokens.count(&PromptAssembler.file_block(&ContextFile {
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
/// the session showed it at (and no fuller tier above), and a floor at full
/// content for the files the intent names.
fn ladder_file(
    file: &ScoredFile,
    facts: &FileFacts,
    marker: Option<&PreviousMarker>,
) -> LadderFile {
    let mut costs = facts.costs();
    if let Some(marker) = marker {
        for (tier, cost) in InclusionTier::ALL.iter().zip(costs.iter_mut()) {
            if *tier == marker.from {
                *cost = Some(marker.cost);
            } else if *tier > marker.from {
                *cost = None;
            }
        }
    }
    LadderFile {
        path: file.path.clone(),
        score: file.score,
        costs,
        floor: file.target.then_some(InclusionTier::L0),
    }
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
    let assembler = PromptAssembler;
    let wrapper = tokens.count(&assembler.file_block(&ContextFile {
        path: file.path.clone(),
        language: file.language,
        tier: InclusionTier::L0,
        body: String::new(),
        sliced: false,
    }));
    let mut slice_budget = BudgetAllocator
        .code_budget(total, overhead)
        .0
        .saturating_sub(wrapper.0);
    while slice_budget > 0 {
        let sliced = slice_to_fit(
            &full.body,
            &plan.task.subject_tokens,
            TokenCount(slice_budget),
            tokens,
        )?;
        let block = ContextFile {
            path: file.path.clone(),
            language: file.language,
            tier: InclusionTier::L0,
            body: sliced.text.clone(),
            sliced: true,
        };
        let candidate = assembler.assemble(parts, std::slice::from_ref(&block));
        let candidate_tokens = tokens.count(&candidate);
        if candidate_tokens > total {
            slice_budget = slice_budget.saturating_sub(candidate_tokens.0 - total.0);
            continue;
        }
        if let Some(limit) = limit {
            let size = fixed_size + limit.measure(&assembler.file_block(&block));
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
/// when the process keeps one, in its memo.
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
        if let Some(count) = self.counted.get(&hash) {
            return *count;
        }
        let count = if let Some(count) = self.memo.and_then(|memo| memo.block_tokens(hash)) {
            count
        } else {
            let count = self.tokens.count(text).0;
            if let Some(memo) = self.memo {
                memo.put_block_tokens(hash, count);
            }
            count
        };
        self.counted.insert(hash, count);
        count
    }
}
