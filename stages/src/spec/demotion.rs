//! The demotion loop of the specification compiler: assemble, measure, and while over budget take the
//! next step of one fixed order, until the text fits or nothing is left to take.
//!
//! The order of steps:
//!
//! 1. Demote a `verbatim` type to `signature-path`: the lowest-priority one
//!    ([`demotion_rank`]: `constructs` before `calls-methods` before `implements`), then the
//!    larger verbatim section, then the path, then the name (ascending).
//! 2. When no type is verbatim, demote a `signature-path` type to `path-only` with the same
//!    keys (`passes-through` ranks below `constructs`).
//! 3. When every type is path-only, drop the largest code block (by its section's tokens; of two
//!    equal ones, the later).
//! 4. Then the largest prose block, the same way.
//! 5. When nothing is left to drop and the text is still over budget, append
//!    [`TRUNCATION_BANNER`](super::TRUNCATION_BANNER).
//!
//! The result is the first state in that order whose assembled text fits. Counting the whole
//! text at every step would cost one full tokenisation per step, so the loop first steps on an
//! estimate — the sum of the sections' own token counts plus one token per seam between two
//! pieces — and counts the assembled text only once the estimate is within one token per seam
//! of the budget. Joining pieces changes a count by at most about a token per seam, so the two
//! ways reach the same state; a test compares them on random specifications.

use std::cmp::Reverse;

use super::render::{self, PATH_ONLY_HEADING};
use super::{Prepared, SpecInclusionTier, SpecTypeUsage, TRUNCATION_BANNER};
use crate::fit::tokens::TokenCounter;
use crate::language::Language;

/// Where a type stands in the demotion order: lower ranks are demoted first.
pub(super) fn demotion_rank(usage: SpecTypeUsage) -> u8 {
    match usage {
        SpecTypeUsage::NamesOnly => 0,
        SpecTypeUsage::PassesThrough => 1,
        SpecTypeUsage::Constructs => 2,
        SpecTypeUsage::CallsMethods => 3,
        SpecTypeUsage::Implements => 4,
    }
}

/// Which tier each type is at and which blocks are still in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Plan {
    /// Tier per type, in the prepared (sorted) order.
    pub(super) tiers: Vec<SpecInclusionTier>,
    /// Whether each code block is still in, in input order.
    pub(super) code: Vec<bool>,
    /// Whether each prose block is still in, in input order.
    pub(super) prose: Vec<bool>,
}

impl Plan {
    /// Every type at its initial tier and every block in.
    pub(super) fn initial(prepared: &Prepared<'_>) -> Self {
        Self {
            tiers: prepared.types.iter().map(|t| t.initial).collect(),
            code: vec![true; prepared.code.len()],
            prose: vec![true; prepared.prose.len()],
        }
    }

    /// Every type path-only and no block: the smallest state.
    pub(super) fn smallest(prepared: &Prepared<'_>) -> Self {
        Self {
            tiers: vec![SpecInclusionTier::PathOnly; prepared.types.len()],
            code: vec![false; prepared.code.len()],
            prose: vec![false; prepared.prose.len()],
        }
    }
}

/// One step of the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Demote the type at this index one tier.
    Demote(usize),
    /// Drop this code block.
    DropCode(usize),
    /// Drop this prose block.
    DropProse(usize),
}

/// The next step from `plan`, or `None` when nothing is left to take.
fn next_step(prepared: &Prepared<'_>, plan: &Plan) -> Option<Step> {
    for tier in [
        SpecInclusionTier::Verbatim,
        SpecInclusionTier::SignaturePath,
    ] {
        let pick = prepared
            .types
            .iter()
            .enumerate()
            .filter(|(index, _)| plan.tiers[*index] == tier)
            .min_by_key(|(_, t)| {
                (
                    demotion_rank(t.source.usage),
                    Reverse(t.section(tier).map_or(0, |s| s.tokens)),
                    &t.source.path,
                    &t.source.name,
                )
            });
        if let Some((index, _)) = pick {
            return Some(Step::Demote(index));
        }
    }
    let largest = |blocks: &[super::PreparedBlock<'_>], kept: &[bool]| {
        blocks
            .iter()
            .enumerate()
            .filter(|(index, _)| kept[*index])
            .max_by_key(|(index, block)| (block.section.tokens, *index))
            .map(|(index, _)| index)
    };
    if let Some(index) = largest(&prepared.code, &plan.code) {
        return Some(Step::DropCode(index));
    }
    largest(&prepared.prose, &plan.prose).map(Step::DropProse)
}

fn apply(plan: &mut Plan, step: Step) {
    match step {
        Step::Demote(index) => {
            plan.tiers[index] = match plan.tiers[index] {
                SpecInclusionTier::Verbatim => SpecInclusionTier::SignaturePath,
                SpecInclusionTier::SignaturePath | SpecInclusionTier::PathOnly => {
                    SpecInclusionTier::PathOnly
                }
            };
        }
        Step::DropCode(index) => plan.code[index] = false,
        Step::DropProse(index) => plan.prose[index] = false,
    }
}

/// The merged imports section of the verbatim types of `plan`, if any has imports.
fn imports_section(prepared: &Prepared<'_>, plan: &Plan) -> Option<String> {
    let mut groups: Vec<(Language, Vec<String>)> = Vec::new();
    for (index, t) in prepared.types.iter().enumerate() {
        if plan.tiers[index] != SpecInclusionTier::Verbatim || t.imports.is_empty() {
            continue;
        }
        let position = groups
            .iter()
            .position(|(language, _)| *language == t.language)
            .unwrap_or_else(|| {
                groups.push((t.language, Vec::new()));
                groups.len() - 1
            });
        super::imports::merge_unique(&mut groups[position].1, &t.imports);
    }
    (!groups.is_empty()).then(|| render::imports_section(&groups))
}

/// The compiled text of `plan`: imports, verbatim types, signature-path types, the path-only
/// list, code blocks, prose blocks; sections separated by a blank line, ending in a newline.
/// Empty when nothing is in.
pub(super) fn assemble(prepared: &Prepared<'_>, plan: &Plan) -> String {
    let mut sections: Vec<&str> = Vec::new();
    let imports = imports_section(prepared, plan);
    if let Some(imports) = &imports {
        sections.push(imports);
    }
    for tier in [
        SpecInclusionTier::Verbatim,
        SpecInclusionTier::SignaturePath,
    ] {
        for (index, t) in prepared.types.iter().enumerate() {
            if plan.tiers[index] == tier
                && let Some(section) = t.section(tier)
            {
                sections.push(&section.text);
            }
        }
    }
    let mut path_only = String::new();
    for (index, t) in prepared.types.iter().enumerate() {
        if plan.tiers[index] == SpecInclusionTier::PathOnly {
            if path_only.is_empty() {
                path_only.push_str(PATH_ONLY_HEADING);
            }
            path_only.push('\n');
            path_only.push_str(&t.path_only.text);
        }
    }
    if !path_only.is_empty() {
        sections.push(&path_only);
    }
    for (blocks, kept) in [(&prepared.code, &plan.code), (&prepared.prose, &plan.prose)] {
        for (block, _) in blocks.iter().zip(kept).filter(|(_, kept)| **kept) {
            sections.push(&block.section.text);
        }
    }
    let mut text = sections.join("\n\n");
    if !text.is_empty() {
        text.push('\n');
    }
    text
}

/// The estimated tokens of `plan`'s text and the number of seams between its pieces.
fn estimate(prepared: &Prepared<'_>, plan: &Plan, counter: TokenCounter) -> (u64, u64) {
    let mut tokens = 0;
    let mut pieces = 0;
    if let Some(imports) = imports_section(prepared, plan) {
        tokens += counter.count(&imports).get();
        pieces += 1;
    }
    let mut path_only_lines = 0;
    for (index, t) in prepared.types.iter().enumerate() {
        match plan.tiers[index] {
            SpecInclusionTier::PathOnly => {
                tokens += t.path_only.tokens;
                path_only_lines += 1;
            }
            tier => {
                tokens += t.section(tier).map_or(0, |s| s.tokens);
                pieces += 1;
            }
        }
    }
    if path_only_lines > 0 {
        tokens += prepared.path_only_heading_tokens + path_only_lines;
        pieces += 1 + path_only_lines;
    }
    for (blocks, kept) in [(&prepared.code, &plan.code), (&prepared.prose, &plan.prose)] {
        for (block, _) in blocks.iter().zip(kept).filter(|(_, kept)| **kept) {
            tokens += block.section.tokens;
            pieces += 1;
        }
    }
    // One token per blank line between sections, and the final newline.
    (tokens + pieces, pieces)
}

/// The outcome of the loop.
#[derive(Debug)]
pub(super) struct Fitted {
    /// The final state.
    pub(super) plan: Plan,
    /// The compiled text, banner included when `truncated`.
    pub(super) text: String,
    /// Exact tokens of `text`.
    pub(super) tokens: u64,
    /// Whether even the smallest state was over budget (the banner is appended).
    pub(super) truncated: bool,
}

/// Runs the loop from `plan` against `budget` tokens. `exact_every_step` counts the assembled
/// text at every step instead of stepping on the estimate first (the reference the tests
/// compare with).
pub(super) fn fit(
    prepared: &Prepared<'_>,
    mut plan: Plan,
    budget: u64,
    counter: TokenCounter,
    exact_every_step: bool,
) -> Fitted {
    if !exact_every_step {
        loop {
            let (estimate, seams) = estimate(prepared, &plan, counter);
            if estimate <= budget.saturating_add(seams) {
                break;
            }
            match next_step(prepared, &plan) {
                Some(step) => apply(&mut plan, step),
                None => break,
            }
        }
    }
    loop {
        let text = assemble(prepared, &plan);
        let tokens = counter.count(&text).get();
        if tokens <= budget {
            return Fitted {
                plan,
                text,
                tokens,
                truncated: false,
            };
        }
        if let Some(step) = next_step(prepared, &plan) {
            apply(&mut plan, step);
        } else {
            let mut text = text;
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(TRUNCATION_BANNER);
            text.push('\n');
            let tokens = counter.count(&text).get();
            return Fitted {
                plan,
                text,
                tokens,
                truncated: true,
            };
        }
    }
}
