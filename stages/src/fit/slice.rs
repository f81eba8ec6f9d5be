//! Slices of an oversized file: the lines around the places that mention the
//! intent's terms, cut to fit a token budget. A file larger than the whole
//! budget is not dropped silently: its slice goes in, with a note saying what
//! was cut (`docs/budget.md`).
//!
//! [`slice_to_fit`] is pure and deterministic: the same body, terms, budget
//! and counter always give the same slice. It works on whole lines and knows
//! nothing of the file's language; the caller decides when a file needs it
//! (typically when even its smallest tier is over the budget) and puts
//! [`Sliced::text`] in the file's block.
//!
//! # Example
//!
//! ```
//! use aic_stages::fit::tokens::TokenCount;
//! use aic_stages::fit::slice::slice_to_fit;
//! use aic_stages::fit::line_map::LineMap;
//! use aic_stages::fit::tokens::TokenCounter;
//!
//! let body: String = (1..=400)
//!     .map(|n| if n == 200 { "fn load_config() {}\n".to_owned() } else { format!("let x{n} = {n};\n") })
//!     .collect();
//! let sliced = slice_to_fit(&body, &["config".to_owned()], TokenCount(120), TokenCounter::cl100k(), &LineMap::identity())
//!     .unwrap();
//! assert!(sliced.text.contains("fn load_config() {}"));
//! assert!(sliced.tokens <= TokenCount(120));
//! assert!(sliced.kept.iter().any(|lines| lines.contains(&200)));
//! assert!(sliced.text.starts_with("[sliced: kept lines "));
//! ```

use std::fmt::Write as _;
use std::ops::RangeInclusive;

use aho_corasick::AhoCorasick;

use crate::fit::line_map::LineMap;
use crate::fit::tokens::TokenCount;
use crate::fit::tokens::TokenCounter;
use crate::select::definitions::{Definition, DefinitionKind, indent, is_import_line};

/// The most windows a slice by words keeps (a file without definitions: a
/// data table, a config, a notebook): a few readable runs around the lines
/// with the most of the task's words, not one line per mention with a marker
/// between each — a data table mentioning "type" on 70 lines is not 70
/// places to look.
pub const MAX_WINDOWS: usize = 6;

/// Lines of context tried around each matching line, widest first; the
/// first that fits the budget wins.
const CONTEXT_LINES: [usize; 9] = [128, 64, 32, 16, 8, 4, 2, 1, 0];

/// A slice of a file that fits a budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sliced {
    /// The text to show: a one-line note first (`[sliced: kept lines 12–40,
    /// 88–95 of 1,234; the other 1,197 lines are left out]`),
    /// then the kept lines in file order, with a `… lines 41–87 cut (47
    /// lines) …` line wherever lines were left out. Ends with a newline.
    pub text: String,
    /// The kept line ranges, one-based and inclusive, in file order, never
    /// touching or overlapping.
    pub kept: Vec<RangeInclusive<usize>>,
    /// Lines in the whole body.
    pub total_lines: usize,
    /// Tokens of [`Sliced::text`] in the counter's encoding; at most the
    /// budget.
    pub tokens: TokenCount,
}

/// The slice of `body` around the lines that mention `matched_terms`, as wide
/// as fits `budget`.
///
/// A line matches when it contains a term, compared case-insensitively as a
/// substring (`config` matches `load_config` and `ConfigError`); empty terms
/// are ignored. Of the matching lines, the [`MAX_WINDOWS`] with the most
/// distinct terms (earlier lines first among equals) are kept, each with the
/// same number of context lines above and below — the widest of 128, 64,
/// 32, … 1, 0 whose slice fits — and overlapping or adjacent windows merge.
/// When even those lines alone are over the budget, the best of them are
/// kept, as many as fit.
///
/// `budget` bounds the tokens of the whole [`Sliced::text`], note and
/// separators included, counted with `tokens`. A body that fits whole comes
/// back whole, still with its note.
///
/// Returns `None` when no line matches, or when not even one matching line
/// with the note fits the budget.
pub fn slice_to_fit(
    body: &str,
    matched_terms: &[String],
    budget: TokenCount,
    tokens: TokenCounter,
    map: &LineMap,
) -> Option<Sliced> {
    let lines: Vec<&str> = body.lines().collect();
    // The best matching lines, strongest first.
    let ranked = best_hits(term_hits(&lines, matched_terms));
    if ranked.is_empty() {
        return None;
    }
    let counter = SliceCounter::new(tokens, budget, map, &[]);
    let fit = |kept: Vec<RangeInclusive<usize>>| counter.fit(&lines, &kept);
    if let Some(whole) = fit(vec![0..=lines.len() - 1]) {
        return Some(whole);
    }
    let centres = in_file_order(&ranked);
    for context in CONTEXT_LINES {
        if let Some(sliced) = fit(windows(&centres, context, lines.len())) {
            return Some(sliced);
        }
    }
    // Not even those lines fit: keep the best ones, as many as fit.
    let chosen = |count: usize| windows(&in_file_order(&ranked[..count]), 0, lines.len());
    fit(chosen(1))?;
    // Invariant: the `low` best lines fit and the `high` best do not (all of
    // them at no context did not, above).
    let (mut low, mut high) = (1, ranked.len());
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if fit(chosen(middle)).is_some() {
            low = middle;
        } else {
            high = middle;
        }
    }
    fit(chosen(low))
}

/// What a focused slice must keep: the definitions of `names` (their whole
/// bodies), the `lines` of trace frames with a few lines around them, and, as
/// room allows, the lines around `terms`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SliceFocus<'a> {
    /// Names whose definitions to keep (`parse_args`, `CliRunner`).
    pub names: &'a [String],
    /// 1-based lines to keep with [`FRAME_CONTEXT`] lines around each.
    pub lines: &'a [u32],
    /// Terms whose lines fill what room is left (as [`slice_to_fit`]).
    pub terms: &'a [String],
    /// The tokens of the whole body, when the caller knows them: the whole
    /// is then not counted again, and its bytes per token estimate the
    /// candidates' sizes from the start.
    pub whole_tokens: Option<TokenCount>,
    /// The disk line of each line of the body; `None`: the identity. Focus
    /// lines are disk lines and are mapped through it; the slice's note and
    /// markers name disk lines.
    pub map: Option<&'a LineMap>,
}

/// The most kept ranges the note of a slice lists; the gaps in the text
/// mark the others.
pub const MAX_HEADER_RANGES: usize = 8;

/// Lines kept above and below a trace frame's line.
pub const FRAME_CONTEXT: usize = 8;

/// The slice of `body` that keeps what `focus` points at, as much of it as
/// fits `budget`.
///
/// The *core* is the definitions of the focus names — from the definition
/// line down to the last line indented deeper than it, plus a closing line
/// at its own indentation (`}`) — and a window of [`FRAME_CONTEXT`] lines
/// around each focus line, in the order given (the caller puts the strongest
/// first). When the whole body fits it comes back whole. When the core fits,
/// the lines around the focus terms are added with the widest context that
/// still fits. When the core does not fit, its ranges are kept in order while
/// they fit, and the first range that does not is cut short at the line that
/// still fits. Without a core this is [`slice_to_fit`] on the terms.
///
/// # Examples
///
/// ```
/// use aic_stages::fit::slice::{slice_focused, SliceFocus};
/// use aic_stages::fit::tokens::{TokenCount, TokenCounter};
/// let mut body = String::new();
/// for n in 0..300 { body.push_str(&format!("def helper_{n}(x):\n    return x + {n}\n\n")); }
/// body.push_str("def parse_header(text):\n    name, _, value = text.partition(':')\n    return {name: value}\n");
/// let names = vec!["parse_header".to_owned()];
/// let focus = SliceFocus { names: &names, ..Default::default() };
/// let sliced = slice_focused(&body, focus, TokenCount(200), TokenCounter::cl100k()).unwrap();
/// assert!(sliced.text.contains("    return {name: value}\n"));
/// assert!(sliced.tokens <= TokenCount(200));
/// ```
pub fn slice_focused(
    body: &str,
    focus: SliceFocus<'_>,
    budget: TokenCount,
    tokens: TokenCounter,
) -> Option<Sliced> {
    let lines: Vec<&str> = body.lines().collect();
    if lines.is_empty() {
        return None;
    }
    let identity = LineMap::identity();
    let map = focus.map.unwrap_or(&identity);
    let mut core: Vec<RangeInclusive<usize>> = Vec::new();
    for name in focus.names {
        for range in qualified_definitions(&lines, name) {
            if !core.contains(&range) {
                core.push(range);
            }
        }
    }
    for &line in focus.lines {
        let Some(index) = map.l0_index_at_or_after(line as usize, lines.len()) else {
            continue;
        };
        if index < lines.len() {
            let range =
                index.saturating_sub(FRAME_CONTEXT)..=(index + FRAME_CONTEXT).min(lines.len() - 1);
            if !core.contains(&range) {
                core.push(range);
            }
        }
    }
    if core.is_empty() && focus.whole_tokens.is_none() {
        return slice_to_fit(body, focus.terms, budget, tokens, map);
    }
    let counter = SliceCounter::new(tokens, budget, map, &[]);
    if let Some(whole) = focus.whole_tokens {
        counter.counted_bytes.set(body.len());
        counter.counted_tokens.set(whole.0 as usize);
    }
    let fit = |kept: &[RangeInclusive<usize>]| counter.fit(&lines, &merge(kept.to_vec()));
    if focus.whole_tokens.is_none_or(|whole| whole <= budget)
        && let Some(whole) = fit(&[0..=lines.len() - 1])
    {
        return Some(whole);
    }
    // Without a core, the term windows alone (with a size estimate from the
    // start, which `slice_to_fit` has not), then `slice_to_fit`'s best lines.
    if core.is_empty() {
        let centres = in_file_order(&best_hits(term_hits(&lines, focus.terms)));
        if centres.is_empty() {
            return None;
        }
        for context in CONTEXT_LINES {
            if let Some(sliced) = fit(&windows(&centres, context, lines.len())) {
                return Some(sliced);
            }
        }
        return slice_to_fit(body, focus.terms, budget, tokens, map);
    }
    if let Some(core_only) = fit(&core) {
        let centres: Vec<usize> = term_hits(&lines, focus.terms)
            .into_iter()
            .map(|(index, _)| index)
            .collect();
        if !centres.is_empty() {
            for context in CONTEXT_LINES {
                let mut kept = core.clone();
                kept.extend(windows(&centres, context, lines.len()));
                if let Some(sliced) = fit(&kept) {
                    return Some(sliced);
                }
            }
        }
        return Some(core_only);
    }
    // The core is over the budget: whole ranges while they fit, then the
    // first that does not, cut short.
    let mut kept: Vec<RangeInclusive<usize>> = Vec::new();
    for range in &core {
        let mut with = kept.clone();
        with.push(range.clone());
        if fit(&with).is_some() {
            kept = with;
            continue;
        }
        let (mut low, mut high) = (*range.start(), *range.end());
        // Invariant: ending at `low` is unknown or fits; ending at `high` does not.
        let mut best = None;
        while low < high {
            let middle = low + (high - low) / 2;
            let mut with = kept.clone();
            with.push(*range.start()..=middle);
            if fit(&with).is_some() {
                best = Some(middle);
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        if let Some(end) = best {
            kept.push(*range.start()..=end);
        }
        break;
    }
    if kept.is_empty() {
        return None;
    }
    fit(&kept)
}

/// What a slice by definitions ranks a file's definitions by.
#[derive(Clone, Copy, Debug, Default)]
pub struct DefinitionFocus<'a> {
    /// Names the task writes in code form (`register_hook`,
    /// `Request.register_hook`); a definition of that name ranks first.
    pub names: &'a [String],
    /// One-based disk lines of stack-trace frames in this file; the
    /// innermost definition around each ranks high.
    pub lines: &'a [u32],
    /// The task's words with their weights (lower case); a definition's
    /// share of them ranks the rest (BM25 over its own lines, its header
    /// counting twice).
    pub terms: &'a [(String, f64)],
}

/// Estimated tokens of one elision marker line.
const MARKER_TOKENS: usize = 14;

/// The most signatures a slice's skeleton shows: the nearest tell the
/// agent where it is; more are noise.
const MAX_SKELETON: usize = 12;

/// A signature longer than this many lines is shown by its first ones in a
/// skeleton.
const MAX_SIGNATURE_LINES: u32 = 8;

/// A definition is shown whole only when it scores at least this share of
/// the file's best definition.
const WHOLE_RATIO: f64 = 0.4;

/// With room left after the skeleton, a definition is added whole when it
/// scores at least this share of the best.
const FILL_RATIO: f64 = 0.2;

/// The most definitions a slice tries to place whole, best first.
const MAX_TRIED: usize = 48;
/// The longest run of left-out lines inside a definition shown by its
/// anchors that is shown rather than marked, when it fits.
const MAX_CLOSED_GAP: usize = 8;

/// Brackets a line opens minus those it closes (`(`, `[`, `{` against `)`,
/// `]`, `}`), strings and comments not told apart: enough to see that a line
/// such as `throw new Error(` continues below.
fn bracket_balance(line: &str) -> isize {
    line.bytes().fold(0, |depth, byte| match byte {
        b'(' | b'[' | b'{' => depth + 1,
        b')' | b']' | b'}' => depth - 1,
        _ => depth,
    })
}

/// How many of the best definitions a slice places before the skeleton and
/// the import block: the outline of the code around the best few tells an
/// agent where a change goes (the method beside its siblings, the name to
/// import) more than a fifth whole definition of middling score does; the
/// others near the best score come after the outline, while room is left.
/// Measured: hunk coverage at 8,000 tokens 0.841 → 0.864 on the issue
/// reports and 0.821 → 0.841 on commits, the other budgets unchanged.
const FIRST_WHOLE: usize = 4;

/// An import block is shown only when it costs at most this fraction
/// (1/N) of the slice's room: at a tight budget a long list of imported
/// names would crowd out the code.
const IMPORT_SHARE_INVERSE: usize = 4;

/// The longest import block a slice shows (from the first import line to
/// the last before the first definition); a longer one stays a marker.
const MAX_IMPORT_LINES: usize = 40;

/// The slice of `body` that shows its best definitions whole, inside a
/// skeleton of the file, within `budget` tokens (note and markers included).
///
/// `definitions` is the body's definition index
/// ([`crate::select::definitions::definition_index`]), `map` the disk line
/// of each body line. Each definition is scored against `focus`; the best go
/// in whole, never cut inside, each with the headers of the definitions it
/// is nested in (a method with its class line), as many as fit. A best
/// definition larger than the budget is shown as its header, its docstring
/// and the lines around the task's words inside it. What room is left takes
/// the signatures of their siblings and of the file's top-level definitions
/// (the skeleton), nearest first. The file's import block (at most
/// 40 lines, a quarter of the room) goes in right after the best definition.
/// Every run of lines left out is one marker
/// line naming its disk lines and how many definitions it holds.
///
/// Returns `None` when the file has no definitions or nothing fits; the
/// caller then falls back to [`slice_focused`].
///
/// # Examples
///
/// ```
/// use aic_stages::fit::line_map::LineMap;
/// use aic_stages::fit::slice::{DefinitionFocus, slice_definitions};
/// use aic_stages::fit::tokens::{TokenCount, TokenCounter};
/// use aic_stages::language::Language;
/// use aic_stages::select::definitions::definition_index;
///
/// let mut body = String::from("class CCodePrinter:\n");
/// for n in 0..200 {
///     body.push_str(&format!("    def _print_f{n}(self, expr):\n        return 'f{n}(%s)' % expr\n\n"));
/// }
/// body.push_str("    def _print_sin(self, expr):\n        return 'sin(%s)' % self._print(expr)\n");
/// let index = definition_index(&body, Language::Python);
/// let terms = vec![("sin".to_owned(), 1.0)];
/// let focus = DefinitionFocus { terms: &terms, ..Default::default() };
/// let sliced = slice_definitions(&body, &index, &LineMap::identity(), focus, TokenCount(300), TokenCounter::cl100k()).unwrap();
/// assert!(sliced.text.contains("class CCodePrinter:\n"));
/// assert!(sliced.text.contains("        return 'sin(%s)' % self._print(expr)\n"));
/// assert!(sliced.text.contains(" definitions) …"));
/// assert!(sliced.tokens <= TokenCount(300));
/// ```
pub fn slice_definitions(
    body: &str,
    definitions: &[Definition],
    map: &LineMap,
    focus: DefinitionFocus<'_>,
    budget: TokenCount,
    tokens: TokenCounter,
) -> Option<Sliced> {
    let lines: Vec<&str> = body.lines().collect();
    if lines.is_empty() || definitions.is_empty() {
        return None;
    }
    let counter = SliceCounter::new(tokens, budget, map, definitions);
    if let Some(whole) = counter.fit(&lines, &[0..=lines.len() - 1]) {
        return Some(whole);
    }
    let scores = definition_scores(&lines, definitions, map, focus);
    let line_tokens: Vec<usize> = lines
        .iter()
        .map(|line| tokens.count_lines(&format!("{line}\n")).0 as usize)
        .collect();
    // Room for the note line. The plan adds up line counts and estimates
    // its markers; when the exact count of its text is over the budget, it
    // plans again in less room.
    let mut room = (budget.0 as usize).saturating_sub(40);
    for _ in 0..8 {
        let kept = plan_definitions(&lines, definitions, map, focus, &scores, &line_tokens, room);
        if kept.is_empty() {
            return None;
        }
        if let Some(sliced) = counter.fit(&lines, &kept) {
            return Some(sliced);
        }
        room = room * 7 / 8;
    }
    None
}

/// The lines a slice by definitions keeps in `room` tokens (estimated from
/// `line_tokens` and [`MARKER_TOKENS`] per marker), as merged zero-based
/// ranges: see [`slice_definitions`].
fn plan_definitions(
    lines: &[&str],
    definitions: &[Definition],
    map: &LineMap,
    focus: DefinitionFocus<'_>,
    scores: &[f64],
    line_tokens: &[usize],
    room: usize,
) -> Vec<RangeInclusive<usize>> {
    let mut has_members = vec![false; definitions.len()];
    for parent in definitions.iter().filter_map(|d| d.parent) {
        if let Some(flag) = has_members.get_mut(parent as usize) {
            *flag = true;
        }
    }
    let mut planner = Planner {
        lines,
        definitions,
        scores,
        has_members,
        best: scores.iter().copied().fold(0.0, f64::max),
        room,
        plan: KeptLines::new(lines.len(), line_tokens),
        chosen: Vec::new(),
    };
    // The best few whole, then the outline around them, then more.
    planner.place_best(map, focus, FIRST_WHOLE);
    planner.place_skeleton();
    planner.place_imports();
    planner.place_best(map, focus, MAX_TRIED);
    planner.fill();
    planner.plan.ranges(lines)
}

/// The state of one plan by definitions: what is kept, and which
/// definitions were chosen to be shown whole (or, the first, by its anchors).
struct Planner<'p> {
    lines: &'p [&'p str],
    definitions: &'p [Definition],
    scores: &'p [f64],
    /// Whether each definition has members of its own (a class, an impl).
    has_members: Vec<bool>,
    /// The best score of the file's definitions.
    best: f64,
    room: usize,
    plan: KeptLines<'p>,
    chosen: Vec<usize>,
}

impl Planner<'_> {
    /// Keeps `range` of definition `index` with the headers of the
    /// definitions it is nested in, when all of it fits; says whether it did.
    fn keep_with_ancestors(&mut self, index: usize, range: RangeInclusive<usize>) -> bool {
        let mut wanted = vec![range];
        wanted.extend(ancestor_headers(self.definitions, index));
        wanted.extend(enclosing_lines(self.lines, self.definitions, index));
        let fits = self.plan.fits_with(&wanted, self.room);
        if fits {
            self.plan.keep(&wanted);
        }
        fits
    }

    /// Lines from definition `index` to the nearest chosen one (its own line
    /// when nothing is chosen).
    fn distance(&self, index: usize) -> usize {
        let at = self.definitions[index].header_start;
        self.chosen
            .iter()
            .map(|&k| self.definitions[k].header_start.abs_diff(at) as usize)
            .min()
            .unwrap_or(at as usize)
    }

    /// The first `tried` definitions near the best score, best first (those
    /// already chosen skipped): each whole with its
    /// class headers while it fits; a type with members by its head only
    /// (its members compete on their own) unless it is small; the first
    /// that does not fit whole by its head and the lines around its anchors.
    fn place_best(&mut self, map: &LineMap, focus: DefinitionFocus<'_>, tried: usize) {
        // Only definitions near the best are worth their whole body; the
        // rest are better told as signatures.
        let mut order: Vec<usize> = (0..self.definitions.len())
            .filter(|&i| self.scores[i] > 0.0 && self.scores[i] >= WHOLE_RATIO * self.best)
            .collect();
        order.sort_by(|&a, &b| self.scores[b].total_cmp(&self.scores[a]).then(a.cmp(&b)));
        for i in order.into_iter().take(tried) {
            if self.chosen.contains(&i) {
                continue;
            }
            let definition = &self.definitions[i];
            let (start, doc_end, end) = (
                definition.start as usize,
                definition.doc_end as usize,
                definition.end as usize,
            );
            if self.has_members[i]
                && self.plan.cost_of(definition.start..=definition.end) * 2 > self.room
            {
                self.keep_with_ancestors(i, start..=doc_end);
                continue;
            }
            // Whole when it fits; the first that does not, by its anchors.
            let shown = self.keep_with_ancestors(i, start..=end)
                || (self.chosen.is_empty() && self.place_by_anchors(i, map, focus));
            if shown {
                self.chosen.push(i);
                // The import block right after the best definition: a fix
                // often needs a name imported, and the block is short.
                if self.chosen.len() == 1 {
                    self.place_imports();
                }
            }
        }
    }

    /// The best definition, larger than the room: its header and docstring
    /// (else its signature alone), then one window of its body around the
    /// densest run of trace lines and the task's words that fits
    /// ([`Planner::densest_window`]), so it has one marker inside it at
    /// most. False when not even the signature fits.
    fn place_by_anchors(
        &mut self,
        index: usize,
        map: &LineMap,
        focus: DefinitionFocus<'_>,
    ) -> bool {
        let definition = &self.definitions[index];
        let head = definition.start as usize..=definition.doc_end as usize;
        let signature = definition.header_start as usize..=definition.header_end as usize;
        if !self.keep_with_ancestors(index, head) && !self.keep_with_ancestors(index, signature) {
            return false;
        }
        let inside = anchor_lines(self.lines, definition, map, focus);
        let frames: Vec<usize> = focus
            .lines
            .iter()
            .filter_map(|&line| map.l0_index_at_or_after(line as usize, self.lines.len()))
            .collect();
        let body = definition.doc_end as usize + 1..=definition.end as usize;
        if let Some(window) = self.densest_window(&inside, &frames, body, focus) {
            self.plan.keep(&[window]);
        }
        self.close_short_gaps(definition.start as usize..=definition.end as usize);
        true
    }

    /// One window of `body` for a definition shown by its anchors: the run
    /// from one anchor to another holding the most trace frames, then the
    /// strongest anchor (the line with the most of `focus`'s weight, a name
    /// it writes in code form), then the most anchors (the earliest of
    /// equals), that fits the room left, widened
    /// evenly on both sides while it fits. A definition read in one piece,
    /// not scattered lines. `None` when not even one anchor line fits.
    fn densest_window(
        &self,
        anchors: &[usize],
        frames: &[usize],
        body: RangeInclusive<usize>,
        focus: DefinitionFocus<'_>,
    ) -> Option<RangeInclusive<usize>> {
        let anchors: Vec<usize> = anchors
            .iter()
            .copied()
            .filter(|a| body.contains(a))
            .collect();
        // Tokens of lines before each: the plan keeps nothing of the body
        // yet, so a run costs its lines and the marker after it.
        let mut before = vec![0usize; self.lines.len() + 1];
        for (i, tokens) in self.plan.line_tokens.iter().enumerate() {
            before[i + 1] = before[i] + tokens;
        }
        let cost = |range: &RangeInclusive<usize>| before[range.end() + 1] - before[*range.start()];
        let left = self.room.saturating_sub(self.plan.used + 2 * MARKER_TOKENS);
        // The strongest anchor (most of the task's weight on one line, a
        // name it writes in code form): a window holding it beats one with
        // more, weaker anchors.
        let strength = |line: usize| {
            let lower = self.lines[line].to_lowercase();
            let words: f64 = focus
                .terms
                .iter()
                .filter(|(term, _)| !term.is_empty() && lower.contains(term.as_str()))
                .map(|(_, weight)| weight)
                .sum();
            let named = names_on_line(self.lines[line], focus.names);
            words + if named { 1_000.0 } else { 0.0 }
        };
        let strongest = anchors
            .iter()
            .map(|&a| (a, strength(a)))
            .fold(None::<(usize, f64)>, |best, (a, s)| match best {
                Some((_, b)) if b >= s => best,
                _ => Some((a, s)),
            })
            .map(|(a, _)| a);
        let mut best: Option<((usize, bool, usize), RangeInclusive<usize>)> = None;
        let mut last = 0;
        for first in 0..anchors.len() {
            last = last.max(first);
            while last + 1 < anchors.len() && cost(&(anchors[first]..=anchors[last + 1])) <= left {
                last += 1;
            }
            let span = anchors[first]..=anchors[last];
            if cost(&span) > left {
                continue;
            }
            let weight = (
                frames.iter().filter(|f| span.contains(f)).count(),
                strongest.is_some_and(|a| span.contains(&a)),
                last + 1 - first,
            );
            if best.as_ref().is_none_or(|(w, _)| weight > *w) {
                best = Some((weight, span));
            }
        }
        let (_, mut window) = best?;
        // Wider, one line each side in turn, while it fits.
        loop {
            let mut grown = false;
            if *window.start() > *body.start() {
                let wider = window.start() - 1..=*window.end();
                if cost(&wider) <= left {
                    window = wider;
                    grown = true;
                }
            }
            if *window.end() < *body.end() {
                let wider = *window.start()..=window.end() + 1;
                if cost(&wider) <= left {
                    window = wider;
                    grown = true;
                }
            }
            if !grown {
                break;
            }
        }
        let strongest = strongest.filter(|a| window.contains(a));
        let window = self.end_at_statement_close(window, strongest, &body, cost, left);
        // What the end may be trimmed to: the strongest anchor's statement.
        let keep_to = strongest.map(|a| self.statement_end(a..=a, &body).min(*window.end()));
        let mut window = self.start_at_block_opener(window, keep_to, &body, cost, left);
        // The estimate ignores lines already kept; the plan has the last word.
        while !self
            .plan
            .fits_with(std::slice::from_ref(&window), self.room)
        {
            if window.start() == window.end() {
                return None;
            }
            window = *window.start()..=window.end() - 1;
        }
        Some(window)
    }

    /// The line that closes what `lines` leave open (brackets, at most
    /// [`MAX_CLOSED_GAP`] lines on and inside `body`), or their last line.
    fn statement_end(&self, lines: RangeInclusive<usize>, body: &RangeInclusive<usize>) -> usize {
        let last = *lines.end();
        let mut depth: isize = lines.map(|line| bracket_balance(self.lines[line])).sum();
        if depth <= 0 {
            return last;
        }
        (last + 1..=(last + MAX_CLOSED_GAP).min(*body.end()))
            .find(|&next| {
                depth += bracket_balance(self.lines[next]);
                depth <= 0
            })
            .unwrap_or(last)
    }

    /// A window that ends inside a statement (a call or a literal over
    /// several lines: `throw new Error(`) ends where it closes when that is
    /// at most a few lines down, paid for by lines at its start (never the
    /// `strongest` anchor): a raise cut after its first line does not say
    /// what it raises. `cost` is a run's tokens, `left` the room.
    fn end_at_statement_close(
        &self,
        window: RangeInclusive<usize>,
        strongest: Option<usize>,
        body: &RangeInclusive<usize>,
        cost: impl Fn(&RangeInclusive<usize>) -> usize,
        left: usize,
    ) -> RangeInclusive<usize> {
        let closer = self.statement_end(window.clone(), body);
        if closer <= *window.end() {
            return window;
        }
        let keep_from = strongest.unwrap_or(*window.end());
        let mut start = *window.start();
        while start < keep_from && cost(&(start..=closer)) > left {
            start += 1;
        }
        if cost(&(start..=closer)) <= left {
            start..=closer
        } else {
            window
        }
    }

    /// A window that starts inside a statement or block starts at the line
    /// that opens it (`if (…) {`, `try:`, a call over several lines) when
    /// that is at most a few lines up, paid for by lines at its end (never
    /// past `keep_to`): read from its start, a fragment reads right.
    fn start_at_block_opener(
        &self,
        window: RangeInclusive<usize>,
        keep_to: Option<usize>,
        body: &RangeInclusive<usize>,
        cost: impl Fn(&RangeInclusive<usize>) -> usize,
        left: usize,
    ) -> RangeInclusive<usize> {
        let first = *window.start();
        let opener = (first.saturating_sub(MAX_CLOSED_GAP).max(*body.start())..first)
            .rev()
            .find(|&line| {
                !self.lines[line].trim().is_empty()
                    && indent(self.lines[line]) < indent(self.lines[first])
            });
        let Some(opener) = opener else {
            return window;
        };
        let keep_to = keep_to.unwrap_or(first);
        let mut end = *window.end();
        while end > keep_to && cost(&(opener..=end)) > left {
            end -= 1;
        }
        if cost(&(opener..=end)) <= left {
            opener..=end
        } else {
            window
        }
    }

    /// Shows the runs of at most [`MAX_CLOSED_GAP`] lines left out inside
    /// `span` between kept lines, shortest first, while they fit: a few
    /// lines cost little more than the marker that would stand for them,
    /// and a definition read in one piece is read right.
    fn close_short_gaps(&mut self, span: RangeInclusive<usize>) {
        let mut gaps: Vec<RangeInclusive<usize>> = Vec::new();
        let mut at = *span.start();
        while at <= *span.end() {
            if self.plan.kept[at] {
                at += 1;
                continue;
            }
            let start = at;
            while at <= *span.end() && !self.plan.kept[at] {
                at += 1;
            }
            // Only a gap with kept lines on both sides.
            let bounded = start > *span.start() && at <= *span.end();
            if bounded && at - start <= MAX_CLOSED_GAP {
                gaps.push(start..=at - 1);
            }
        }
        gaps.sort_by_key(|gap| (gap.end() - gap.start(), *gap.start()));
        for gap in gaps {
            if self.plan.fits_with(std::slice::from_ref(&gap), self.room) {
                self.plan.keep(&[gap]);
            }
        }
    }

    /// The skeleton: members of the types the chosen definitions live in,
    /// then the top level, nearest to a chosen definition first (best
    /// scored first when nothing is chosen), at most [`MAX_SKELETON`]. A
    /// signature costs its lines and the marker under it; a definition
    /// hardly larger than that is shown whole instead.
    fn place_skeleton(&mut self) {
        let definitions = self.definitions;
        let mut skeleton: Vec<(usize, usize)> = (0..definitions.len())
            .filter(|&i| {
                let d = &definitions[i];
                !self.plan.kept[d.header_start as usize]
                    && (d.parent.is_none()
                        || self
                            .chosen
                            .iter()
                            .any(|&k| definitions[k].parent == d.parent))
            })
            .map(|i| {
                let tier = usize::from(definitions[i].parent.is_none() && !self.chosen.is_empty());
                (tier * self.lines.len() + self.distance(i), i)
            })
            .collect();
        if self.chosen.is_empty() {
            let scores = self.scores;
            skeleton.sort_by(|a, b| scores[b.1].total_cmp(&scores[a.1]).then(a.1.cmp(&b.1)));
        } else {
            skeleton.sort_unstable();
        }
        for (_, i) in skeleton.into_iter().take(MAX_SKELETON) {
            let definition = &definitions[i];
            // Decorators and the signature (a long one by its first lines),
            // not the doc comment above it.
            let decorators = (definition.start..definition.header_start)
                .rev()
                .take_while(|&line| {
                    let text = self.lines[line as usize].trim_start();
                    text.starts_with('@') || text.starts_with("#[")
                })
                .last()
                .unwrap_or(definition.header_start);
            let header_end = definition
                .header_end
                .min(definition.header_start + MAX_SIGNATURE_LINES - 1);
            let header = self.plan.cost_of(decorators..=header_end);
            let range = if self.plan.cost_of(definition.start..=definition.end)
                <= 2 * (header + MARKER_TOKENS)
            {
                definition.start as usize..=definition.end as usize
            } else {
                decorators as usize..=header_end as usize
            };
            self.keep_with_ancestors(i, range);
        }
    }

    /// The file's import block, when room is left after the skeleton and it
    /// is at most [`MAX_IMPORT_LINES`] long: a fix often needs a name
    /// imported, and the block says which are at hand.
    fn place_imports(&mut self) {
        let first_definition = self
            .definitions
            .iter()
            .map(|d| d.start as usize)
            .min()
            .unwrap_or(self.lines.len());
        let imports: Vec<usize> = (0..first_definition)
            .filter(|&i| is_import_line(self.lines[i]))
            .collect();
        let (Some(&first), Some(&last)) = (imports.first(), imports.last()) else {
            return;
        };
        // A bracketed import list (`from x import (`, `use a::{`) runs on
        // to its closing line.
        let opens = |line: &str| {
            let line = line.trim_end();
            line.ends_with('(') || line.ends_with('{')
        };
        // A line continued with a backslash (`from x import a, \`) too.
        let mut last = last;
        while last + 1 < first_definition && self.lines[last].trim_end().ends_with('\\') {
            last += 1;
        }
        let last = if opens(self.lines[last]) {
            (last + 1..first_definition)
                .find(|&i| {
                    let line = self.lines[i].trim_start();
                    line.starts_with(')') || line.starts_with('}')
                })
                .unwrap_or(last)
        } else {
            last
        };
        let cost = self.plan.cost_of(first as u32..=last as u32);
        if last - first < MAX_IMPORT_LINES
            && cost * IMPORT_SHARE_INVERSE <= self.room
            && self.plan.fits_with(&[first..=last], self.room)
        {
            self.plan.keep(&[first..=last]);
        }
    }

    /// Room left (a large budget): more definitions the task's words touch,
    /// scoring at least [`FILL_RATIO`] of the best, whole, best first, then
    /// nearest; never a type whose members are shown on their own.
    /// Definitions the words do not touch stay signatures: the budget is a
    /// ceiling, not a quota.
    fn fill(&mut self) {
        let mut rest: Vec<(f64, usize, usize)> = (0..self.definitions.len())
            .filter(|&i| {
                !self.has_members[i]
                    && self.scores[i] > 0.0
                    && self.scores[i] >= FILL_RATIO * self.best
            })
            .map(|i| (self.scores[i], self.distance(i), i))
            .collect();
        rest.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        for (_, _, i) in rest {
            let definition = &self.definitions[i];
            self.keep_with_ancestors(i, definition.start as usize..=definition.end as usize);
        }
    }
}

/// The names of the `count` definitions of `body` that score best against
/// `focus` (as [`slice_definitions`] scores them), best first; only
/// definitions with a positive score, and no Markdown sections.
pub fn best_definitions(
    body: &str,
    definitions: &[Definition],
    map: &LineMap,
    focus: DefinitionFocus<'_>,
    count: usize,
) -> Vec<String> {
    let lines: Vec<&str> = body.lines().collect();
    if lines.is_empty() || definitions.is_empty() {
        return Vec::new();
    }
    let scores = definition_scores(&lines, definitions, map, focus);
    let mut order: Vec<usize> = (0..definitions.len())
        .filter(|&i| scores[i] > 0.0 && definitions[i].kind != DefinitionKind::Section)
        .collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order
        .into_iter()
        .take(count)
        .map(|i| definitions[i].name.clone())
        .collect()
}

/// The header lines (decorators to signature) of the definitions `index`
/// is nested in.
fn ancestor_headers(definitions: &[Definition], index: usize) -> Vec<RangeInclusive<usize>> {
    let mut headers = Vec::new();
    let mut parent = definitions[index].parent;
    while let Some(p) = parent {
        let outer = &definitions[p as usize];
        headers.push(outer.header_start as usize..=outer.header_end as usize);
        parent = outer.parent;
    }
    headers
}

/// The lines that open the blocks around definition `index` that are not
/// definitions themselves (`if WIN:`, `else:`, a call taking a callback, a
/// function the index does not know), innermost first: each the nearest line
/// above with less indentation, down to its parent's header (or the left
/// margin). A header that closes a bracket (`) => {`) comes with the lines
/// up to the one that opened it, at most [`MAX_SIGNATURE_LINES`] of them.
/// Without them a nested definition reads as if it were at the top.
fn enclosing_lines(
    lines: &[&str],
    definitions: &[Definition],
    index: usize,
) -> Vec<RangeInclusive<usize>> {
    let definition = &definitions[index];
    let floor = definition
        .parent
        .map_or(0, |p| definitions[p as usize].header_end as usize + 1);
    let mut found = Vec::new();
    let mut depth = indent(lines[definition.header_start as usize]);
    let mut at = definition.start as usize;
    while depth > 0 && at > floor {
        let Some(line) = (floor..at)
            .rev()
            .find(|&i| !lines[i].trim().is_empty() && indent(lines[i]) < depth)
        else {
            break;
        };
        depth = indent(lines[line]);
        let mut first = line;
        if lines[line].trim_start().starts_with([')', ']', '}']) {
            // Up to the line at the same depth that opened the bracket.
            if let Some(open) = (floor..line).rev().find(|&i| {
                !lines[i].trim().is_empty()
                    && indent(lines[i]) <= depth
                    && !lines[i].trim_start().starts_with([')', ']', '}'])
            }) {
                first = open.max(line.saturating_sub(MAX_SIGNATURE_LINES as usize - 1));
            }
        }
        found.push(first..=line);
        at = first;
    }
    found
}

/// The lines of a large definition around which windows are kept: trace
/// frames, then lines with the task's names or words.
fn anchor_lines(
    lines: &[&str],
    definition: &Definition,
    map: &LineMap,
    focus: DefinitionFocus<'_>,
) -> Vec<usize> {
    let span = definition.doc_end as usize + 1..=definition.end as usize;
    let mut anchors: Vec<usize> = focus
        .lines
        .iter()
        .filter_map(|&line| map.l0_index_at_or_after(line as usize, lines.len()))
        .filter(|index| span.contains(index))
        .collect();
    for index in span {
        let lower = lines[index].to_lowercase();
        let named = names_on_line(lines[index], focus.names);
        if named
            || focus
                .terms
                .iter()
                .any(|(term, _)| lower.contains(term.as_str()))
        {
            anchors.push(index);
        }
    }
    anchors.sort_unstable();
    anchors.dedup();
    anchors
}

/// Whether `line` holds one of `names` (the last segment of a qualified
/// name) as a whole identifier. A path the task names (`_dicom_dict.py`) is
/// no name to look for, nor is a segment under three characters.
fn names_on_line(line: &str, names: &[String]) -> bool {
    names.iter().any(|name| {
        let simple = name.rsplit('.').next().unwrap_or(name);
        if name.contains('/') || simple.len() < 3 {
            return false;
        }
        let word = |c: char| c.is_alphanumeric() || c == '_';
        line.match_indices(simple).any(|(at, _)| {
            !line[..at].chars().next_back().is_some_and(word)
                && !line[at + simple.len()..].chars().next().is_some_and(word)
        })
    })
}

/// Each definition's score against `focus`: BM25 of the task's words over
/// its own lines (those not inside a nested definition; the header counts
/// twice), plus a bonus for a name the task writes and for a trace frame
/// inside it.
fn definition_scores(
    lines: &[&str],
    definitions: &[Definition],
    map: &LineMap,
    focus: DefinitionFocus<'_>,
) -> Vec<f64> {
    // The innermost definition of each line.
    let mut owner: Vec<Option<usize>> = vec![None; lines.len()];
    for (i, definition) in definitions.iter().enumerate() {
        for slot in
            &mut owner[definition.start as usize..=(definition.end as usize).min(lines.len() - 1)]
        {
            *slot = Some(i);
        }
    }
    let mut counts = vec![vec![0usize; focus.terms.len()]; definitions.len()];
    let mut lengths = vec![0usize; definitions.len()];
    let counter = TermCounter::new(focus.terms);
    let mut on_line = vec![0usize; focus.terms.len()];
    for (index, line) in lines.iter().enumerate() {
        let Some(i) = owner[index] else { continue };
        lengths[i] += 1;
        let Some(counter) = &counter else { continue };
        let definition = &definitions[i];
        let weight = if (definition.header_start as usize..=definition.header_end as usize)
            .contains(&index)
        {
            2
        } else {
            1
        };
        counter.count(line, &mut on_line);
        for (count, found) in counts[i].iter_mut().zip(&on_line) {
            *count += weight * found;
        }
    }
    let average = (lengths.iter().sum::<usize>() as f64 / definitions.len() as f64).max(1.0);
    // A word most definitions of the file use tells them apart less than a
    // rare one: the usual BM25 inverse document frequency, over the file's
    // definitions.
    let count = definitions.len() as f64;
    let idf: Vec<f64> = (0..focus.terms.len())
        .map(|t| {
            let df = counts.iter().filter(|c| c[t] > 0).count() as f64;
            (1.0 + (count - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    let mut scores: Vec<f64> = (0..definitions.len())
        .map(|i| {
            let norm = 1.2 * (0.25 + 0.75 * lengths[i] as f64 / average);
            focus
                .terms
                .iter()
                .enumerate()
                .filter(|(t, _)| counts[i][*t] > 0)
                .map(|(t, (_, weight))| {
                    let tf = counts[i][t] as f64;
                    weight * idf[t] * tf * 2.2 / (tf + norm)
                })
                .sum()
        })
        .collect();
    let top = scores.iter().copied().fold(0.0, f64::max).max(1.0);
    // Names and lines come strongest first (a trace's innermost frame
    // first); later ones weigh less.
    let decay = |k: usize| (1.0 - 0.25 * k as f64).max(0.25);
    for (i, definition) in definitions.iter().enumerate() {
        for (k, name) in focus.names.iter().enumerate() {
            let simple = name.rsplit('.').next().unwrap_or(name);
            if name.contains('.')
                && (definition.name == *name || definition.name.ends_with(&format!(".{name}")))
            {
                scores[i] += 3.0 * top * decay(k);
            } else if definition.simple_name() == simple {
                scores[i] += 2.0 * top * decay(k);
            }
        }
    }
    for (k, &line) in focus.lines.iter().enumerate() {
        if let Some(index) = map.l0_index_at_or_after(line as usize, lines.len())
            && let Some(i) = owner[index]
        {
            scores[i] += 3.0 * top * decay(k);
        }
    }
    scores
}

/// Counts the task's words on a line, all words in one pass: per word, the
/// occurrences in the lower-cased line that do not overlap each other (what
/// `str::matches` counts), found with one Aho-Corasick automaton instead of
/// one substring search per word and line.
struct TermCounter {
    automaton: AhoCorasick,
    /// The indices in the task's words of each pattern: a word given twice
    /// is one pattern (empty words are none).
    words_of: Vec<Vec<usize>>,
    /// Byte length of each pattern.
    lengths: Vec<usize>,
}

impl TermCounter {
    /// `None` when no word is non-empty.
    fn new(terms: &[(String, f64)]) -> Option<Self> {
        let mut patterns: Vec<&str> = Vec::new();
        let mut words_of: Vec<Vec<usize>> = Vec::new();
        for (t, (term, _)) in terms.iter().enumerate() {
            if term.is_empty() {
                continue;
            }
            if let Some(known) = patterns.iter().position(|p| *p == term.as_str()) {
                words_of[known].push(t);
            } else {
                patterns.push(term);
                words_of.push(vec![t]);
            }
        }
        if patterns.is_empty() {
            return None;
        }
        let automaton = AhoCorasick::new(&patterns).ok()?;
        let lengths = patterns.iter().map(|p| p.len()).collect();
        Some(Self {
            automaton,
            words_of,
            lengths,
        })
    }

    /// Writes into `counts` (one slot per task word) how often each word
    /// occurs in `line`, lower-cased, without overlapping itself.
    fn count(&self, line: &str, counts: &mut [usize]) {
        counts.fill(0);
        let lower = if line.is_ascii() {
            line.to_ascii_lowercase()
        } else {
            line.to_lowercase()
        };
        // Where the last counted occurrence of each pattern ends: matches of
        // one pattern come in order, and one starting before that end
        // overlaps it.
        let mut ends = vec![0usize; self.lengths.len()];
        for found in self.automaton.find_overlapping_iter(&lower) {
            let pattern = found.pattern().as_usize();
            if found.start() >= ends[pattern] {
                ends[pattern] = found.start() + self.lengths[pattern];
                for &word in &self.words_of[pattern] {
                    counts[word] += 1;
                }
            }
        }
    }
}

/// The lines a slice keeps, with the tokens they cost.
struct KeptLines<'a> {
    kept: Vec<bool>,
    line_tokens: &'a [usize],
    used: usize,
}

impl<'a> KeptLines<'a> {
    fn new(count: usize, line_tokens: &'a [usize]) -> Self {
        Self {
            kept: vec![false; count],
            line_tokens,
            used: 0,
        }
    }

    /// Tokens of the lines of `range` (kept or not).
    fn cost_of(&self, range: RangeInclusive<u32>) -> usize {
        (*range.start() as usize..=(*range.end() as usize).min(self.kept.len() - 1))
            .map(|i| self.line_tokens[i])
            .sum()
    }

    /// Tokens that keeping `ranges` adds: their new lines and a marker for
    /// each new run.
    fn added_by(&self, ranges: &[RangeInclusive<usize>]) -> usize {
        let mut seen = std::collections::BTreeSet::new();
        let mut cost = 0;
        for range in ranges {
            for i in *range.start()..=(*range.end()).min(self.kept.len() - 1) {
                if !self.kept[i] && seen.insert(i) {
                    cost += self.line_tokens[i];
                    // A new run may add a marker after it.
                    if i + 1 < self.kept.len()
                        && !self.kept[i + 1]
                        && !ranges.iter().any(|r| r.contains(&(i + 1)))
                    {
                        cost += MARKER_TOKENS;
                    }
                }
            }
        }
        cost
    }

    fn fits_with(&self, ranges: &[RangeInclusive<usize>], room: usize) -> bool {
        self.used + self.added_by(ranges) <= room
    }

    fn keep(&mut self, ranges: &[RangeInclusive<usize>]) {
        self.used += self.added_by(ranges);
        for range in ranges {
            for i in *range.start()..=(*range.end()).min(self.kept.len() - 1) {
                self.kept[i] = true;
            }
        }
    }

    /// The kept lines as merged ranges; a gap of blank lines only between
    /// two kept lines is kept too (it costs less than its marker).
    fn ranges(&self, lines: &[&str]) -> Vec<RangeInclusive<usize>> {
        let mut ranges: Vec<RangeInclusive<usize>> = Vec::new();
        for (i, _) in self.kept.iter().enumerate().filter(|(_, k)| **k) {
            match ranges.last_mut() {
                Some(last)
                    if lines[*last.end() + 1..i]
                        .iter()
                        .all(|line| line.trim().is_empty()) =>
                {
                    *last = *last.start()..=i;
                }
                _ => ranges.push(i..=i),
            }
        }
        ranges
    }
}

/// The zero-based lines that contain one of `terms` (case-insensitive,
/// substrings), in order, each with the number of distinct terms on it.
fn term_hits(lines: &[&str], terms: &[String]) -> Vec<(usize, usize)> {
    let terms: Vec<String> = terms
        .iter()
        .map(|t| t.trim().to_lowercase())
        .filter(|t| !t.is_empty())
        .collect();
    if terms.is_empty() {
        return Vec::new();
    }
    lines
        .iter()
        .enumerate()
        .filter_map(|(index, line)| {
            let lower = line.to_lowercase();
            let count = terms
                .iter()
                .filter(|term| lower.contains(term.as_str()))
                .count();
            (count > 0).then_some((index, count))
        })
        .collect()
}

/// The lines windows of a slice by words go around: of `hits` (line,
/// distinct terms), the [`MAX_WINDOWS`] with the most terms, strongest first
/// (earlier first among equals).
fn best_hits(mut hits: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    hits.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.truncate(MAX_WINDOWS);
    hits
}

/// The lines of `hits`, in file order.
fn in_file_order(hits: &[(usize, usize)]) -> Vec<usize> {
    let mut lines: Vec<usize> = hits.iter().map(|&(index, _)| index).collect();
    lines.sort_unstable();
    lines
}

/// [`definitions`] of a name that may be qualified: `Context.invoke` is the
/// `invoke` defined inside `Context`'s definition (every one there, overloads
/// included); when `Context` defines none, every `invoke`.
fn qualified_definitions(lines: &[&str], name: &str) -> Vec<RangeInclusive<usize>> {
    let Some((outer, inner)) = name.rsplit_once('.') else {
        return definitions(lines, name);
    };
    let outer = outer.rsplit('.').next().unwrap_or(outer);
    let mut found = Vec::new();
    for range in definitions(lines, outer) {
        let start = *range.start();
        let inside = &lines[start..=*range.end()];
        for inner_range in definitions(inside, inner) {
            found.push(start + inner_range.start()..=start + inner_range.end());
        }
    }
    if found.is_empty() {
        definitions(lines, inner)
    } else {
        found
    }
}

/// The line ranges (zero-based, inclusive) of the definitions of `name`: a
/// line that defines it with a definition keyword (`def`, `class`, `fn`,
/// `function`, `func`, …), down to the last following line indented deeper,
/// plus one closing line at the definition's own indentation that starts
/// with a closing bracket.
fn definitions(lines: &[&str], name: &str) -> Vec<RangeInclusive<usize>> {
    let keywords = [
        "def ",
        "async def ",
        "class ",
        "fn ",
        "function ",
        "func ",
        "struct ",
        "enum ",
        "trait ",
        "interface ",
        "type ",
        "impl ",
        "const ",
        "let ",
        "var ",
        "module ",
    ];
    let indent = |line: &str| line.len() - line.trim_start().len();
    let mut found = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let Some(at) = trimmed.find(name) else {
            continue;
        };
        let before = &trimmed[..at];
        let after = &trimmed[at + name.len()..];
        let named = !after.starts_with(|c: char| c.is_alphanumeric() || c == '_')
            && keywords.iter().any(|k| before.ends_with(k))
            && !before.contains(['=', '(', '"', '\'', '#']);
        // `name = …` / `name: … = …` at the start of a line, and methods
        // written `name(…) {` in classes, count too.
        let assigned = before.is_empty()
            && (after.trim_start().starts_with('=')
                || after.starts_with('(') && line.trim_end().ends_with('{'));
        if !named && !assigned {
            continue;
        }
        let own = indent(line);
        let mut end = index;
        for (next, text) in lines.iter().enumerate().skip(index + 1) {
            if text.trim().is_empty() {
                continue;
            }
            if indent(text) > own {
                end = next;
                continue;
            }
            let trimmed = text.trim();
            if trimmed.starts_with([')', '}', ']']) {
                end = next;
                // The end of a parameter list written over several lines
                // (`) -> Config:`, `) {`, `): Promise<void> {`): the body
                // follows, indented deeper.
                if trimmed.starts_with([')', ']']) && trimmed.ends_with([':', '{']) {
                    continue;
                }
            }
            break;
        }
        found.push(index..=end);
    }
    found
}

#[cfg(test)]
mod definition_tests {
    use super::definitions;

    #[test]
    fn a_qualified_name_picks_the_definition_inside_its_class() {
        let text = "class Command:\n    def invoke(self, ctx):\n        return 1\n\n\nclass Context:\n    def invoke(self, callback, **kwargs):\n        return callback(**kwargs)\n";
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            super::qualified_definitions(&lines, "Context.invoke"),
            [6..=7]
        );
        assert_eq!(
            super::qualified_definitions(&lines, "Missing.invoke"),
            [1..=2, 6..=7]
        );
    }

    #[test]
    fn a_parameter_list_over_several_lines_keeps_the_body() {
        let text = "def other():\n    pass\n\n\ndef _main_shell_completion(\n    ctx_args,\n    prog_name: str,\n) -> None:\n    if complete_var is None:\n        return\n    rv = run()\n\n\ndef after():\n    pass\n";
        let lines: Vec<&str> = text.lines().collect();
        let found = definitions(&lines, "_main_shell_completion");
        assert_eq!(found, [4..=10], "{found:?}");
        let text = "export function load(\n  path: string,\n): Promise<void> {\n  return read(path);\n}\nexport const x = 1;\n";
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(definitions(&lines, "load"), [0..=4]);
    }
}

/// Sorts ranges and merges those that overlap or touch.
fn merge(mut ranges: Vec<RangeInclusive<usize>>) -> Vec<RangeInclusive<usize>> {
    ranges.sort_by_key(|range| (*range.start(), *range.end()));
    let mut merged: Vec<RangeInclusive<usize>> = Vec::new();
    for range in ranges {
        match merged.last_mut() {
            Some(last) if *range.start() <= last.end() + 1 => {
                *last = *last.start()..=(*range.end()).max(*last.end());
            }
            _ => merged.push(range),
        }
    }
    merged
}

/// Counts candidate slices, skipping the exact count of a candidate whose
/// size alone puts it well over the budget: the bytes per token of the texts
/// counted so far estimate the rest, and a candidate estimated at more than
/// [`ESTIMATE_MARGIN`] × the budget is rejected uncounted. Slicing tries many
/// candidates, widest first, so most are rejected this way; whatever is
/// accepted was counted exactly.
struct SliceCounter<'a> {
    tokens: TokenCounter,
    budget: TokenCount,
    map: &'a LineMap,
    definitions: &'a [Definition],
    counted_bytes: std::cell::Cell<usize>,
    counted_tokens: std::cell::Cell<usize>,
}

/// How far over the budget an estimate may be before a candidate is
/// rejected without counting it.
const ESTIMATE_MARGIN: f64 = 1.25;

impl<'a> SliceCounter<'a> {
    fn new(
        tokens: TokenCounter,
        budget: TokenCount,
        map: &'a LineMap,
        definitions: &'a [Definition],
    ) -> Self {
        Self {
            tokens,
            budget,
            map,
            definitions,
            counted_bytes: std::cell::Cell::new(0),
            counted_tokens: std::cell::Cell::new(0),
        }
    }

    /// The slice of `lines` keeping the merged zero-based ranges `kept`,
    /// when it fits the budget.
    /// Tiny gaps are shown rather than marked when that still fits
    /// ([`close_tiny_gaps`]).
    fn fit(&self, lines: &[&str], kept: &[RangeInclusive<usize>]) -> Option<Sliced> {
        let closed = close_tiny_gaps(lines, kept);
        if closed.as_slice() != kept
            && let Some(sliced) = self.fit_exactly(lines, &closed)
        {
            return Some(sliced);
        }
        self.fit_exactly(lines, kept)
    }

    /// The slice of `lines` keeping exactly the merged ranges `kept`, when
    /// it fits the budget.
    fn fit_exactly(&self, lines: &[&str], kept: &[RangeInclusive<usize>]) -> Option<Sliced> {
        let text = render(lines, kept, self.map, self.definitions);
        let count = self.count_if_near(&text)?;
        (count <= self.budget).then(|| Sliced {
            text,
            kept: kept
                .iter()
                .map(|range| self.map.disk_line(*range.start())..=self.map.disk_line(*range.end()))
                .collect(),
            total_lines: disk_lines(lines.len(), self.map),
            tokens: count,
        })
    }

    /// The exact count of `text` when it may fit, `None` when it is surely
    /// over the budget.
    fn count_if_near(&self, text: &str) -> Option<TokenCount> {
        let (bytes, counted) = (self.counted_bytes.get(), self.counted_tokens.get());
        if counted > 0 {
            let estimate = text.len() as f64 * counted as f64 / bytes as f64;
            if estimate > f64::from(self.budget.0) * ESTIMATE_MARGIN {
                return None;
            }
        }
        // The candidates share their lines, and the next intent slices the
        // same files: each line is encoded once.
        let count = self.tokens.count_lines(text);
        self.counted_bytes.set(bytes + text.len());
        self.counted_tokens.set(counted + count.0 as usize);
        Some(count)
    }
}

/// A run of left-out lines whose text (indentation aside, a byte per line
/// break) is at most this many bytes is shown rather than marked: its
/// marker line would cost as much as the lines it hides.
const TINY_GAP_BYTES: usize = 48;

/// `kept` with every tiny run of left-out lines between, before or after
/// them (see [`TINY_GAP_BYTES`]) kept too, merged.
fn close_tiny_gaps(lines: &[&str], kept: &[RangeInclusive<usize>]) -> Vec<RangeInclusive<usize>> {
    let tiny = |gap: std::ops::Range<usize>| {
        lines[gap]
            .iter()
            .map(|line| line.trim().len() + 1)
            .sum::<usize>()
            <= TINY_GAP_BYTES
    };
    let mut closed: Vec<RangeInclusive<usize>> = Vec::with_capacity(kept.len());
    for range in kept {
        match closed.last_mut() {
            Some(last)
                if *range.start() <= last.end() + 1 || tiny(last.end() + 1..*range.start()) =>
            {
                *last = *last.start()..=(*range.end()).max(*last.end());
            }
            _ => closed.push(range.clone()),
        }
    }
    if let Some(first) = closed.first_mut()
        && *first.start() > 0
        && tiny(0..*first.start())
    {
        *first = 0..=*first.end();
    }
    if let Some(last) = closed.last_mut()
        && *last.end() + 1 < lines.len()
        && tiny(last.end() + 1..lines.len())
    {
        *last = *last.start()..=lines.len() - 1;
    }
    closed
}

/// Merged zero-based inclusive windows of `context` lines around each centre
/// (sorted), clamped to `line_count`; windows that touch are merged.
fn windows(centres: &[usize], context: usize, line_count: usize) -> Vec<RangeInclusive<usize>> {
    let mut merged: Vec<RangeInclusive<usize>> = Vec::new();
    for &centre in centres {
        let start = centre.saturating_sub(context);
        let end = (centre + context).min(line_count.saturating_sub(1));
        match merged.last_mut() {
            Some(last) if start <= last.end() + 1 => {
                *last = *last.start()..=end.max(*last.end());
            }
            _ => merged.push(start..=end),
        }
    }
    merged
}

/// Formats a count with thousands separators: `1,234`.
pub fn thousands(count: usize) -> String {
    let digits = count.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Lines of the file on disk, as far as the body shows: the disk line of
/// its last line.
fn disk_lines(count: usize, map: &LineMap) -> usize {
    if count == 0 {
        0
    } else {
        map.disk_line(count - 1)
    }
}

/// The slice's text: its note, then the kept lines in order with one marker
/// line for each run of lines left out, indented as the line after it. Every
/// number is a disk line (through `map`); a marker counts the definitions
/// whose header lies in its run.
fn render(
    lines: &[&str],
    kept: &[RangeInclusive<usize>],
    map: &LineMap,
    definitions: &[Definition],
) -> String {
    let total = disk_lines(lines.len(), map);
    let disk: Vec<RangeInclusive<usize>> = kept
        .iter()
        .map(|range| map.disk_line(*range.start())..=map.disk_line(*range.end()))
        .collect();
    let kept_lines: usize = disk
        .iter()
        .map(|range| range.end() - range.start() + 1)
        .sum();
    let cut = total.saturating_sub(kept_lines);
    let mut ranges: Vec<String> = disk
        .iter()
        .take(MAX_HEADER_RANGES)
        .map(|range| {
            if range.start() == range.end() {
                range.start().to_string()
            } else {
                format!("{}–{}", range.start(), range.end())
            }
        })
        .collect();
    if kept.len() > MAX_HEADER_RANGES {
        ranges.push(format!("(+{} more ranges)", kept.len() - MAX_HEADER_RANGES));
    }
    let mut text = if cut == 0 {
        format!(
            "[sliced: kept lines {} of {}; nothing was cut]\n",
            ranges.join(", "),
            thousands(total)
        )
    } else {
        format!(
            "[sliced: kept lines {} of {}; the other {} lines are left out]\n",
            ranges.join(", "),
            thousands(total),
            thousands(cut)
        )
    };
    // A run of left-out lines: zero-based body indices `from..to`, shown as
    // the disk lines between the kept lines around it.
    let gap = |text: &mut String, from: usize, to: usize| {
        let first = if from == 0 {
            1
        } else {
            map.disk_line(from - 1) + 1
        };
        let last = if to >= lines.len() {
            total
        } else {
            map.disk_line(to) - 1
        };
        if last < first {
            return;
        }
        let inside = definitions
            .iter()
            .filter(|d| (from..to).contains(&(d.header_start as usize)))
            .count();
        // Indented like the code after it, or less when the run holds
        // shallower lines (the rest of a body and the definitions after it).
        let leading =
            |line: &str| -> String { line.chars().take_while(|c| c.is_whitespace()).collect() };
        let indent: String = lines[from..to.min(lines.len())]
            .iter()
            .chain(lines.get(to))
            .filter(|line| !line.trim().is_empty())
            .map(|line| leading(line))
            .min_by_key(|prefix| prefix.chars().count())
            .unwrap_or_default();
        let count = last - first + 1;
        let what = match inside {
            0 => String::new(),
            1 => ", 1 definition".to_owned(),
            n => format!(", {} definitions", thousands(n)),
        };
        if first == last {
            let _ = writeln!(
                text,
                "{indent}… line {first} cut{} …",
                if inside > 0 {
                    format!(" (1 line{what})")
                } else {
                    String::new()
                }
            );
        } else {
            let _ = writeln!(
                text,
                "{indent}… lines {first}–{last} cut ({} lines{what}) …",
                thousands(count)
            );
        }
    };
    let mut next = 0;
    for range in kept {
        if *range.start() > next {
            gap(&mut text, next, *range.start());
        }
        for line in &lines[*range.start()..=*range.end()] {
            text.push_str(line);
            text.push('\n');
        }
        next = range.end() + 1;
    }
    if next < lines.len() {
        gap(&mut text, next, lines.len());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `body` (Python) sliced by definitions to `budget` tokens of
    /// `cl100k_base`, with the identity line map.
    fn slice_python(body: &str, focus: DefinitionFocus<'_>, budget: u32) -> Sliced {
        let index =
            crate::select::definitions::definition_index(body, crate::language::Language::Python);
        slice_definitions(
            body,
            &index,
            &LineMap::align(body, body),
            focus,
            TokenCount(budget),
            TokenCounter::cl100k(),
        )
        .unwrap()
    }

    fn slice_to_fit(
        body: &str,
        terms: &[String],
        budget: TokenCount,
        tokens: TokenCounter,
    ) -> Option<Sliced> {
        super::slice_to_fit(body, terms, budget, tokens, &LineMap::identity())
    }

    fn numbered(count: usize, special: &[(usize, &str)]) -> String {
        (1..=count)
            .map(|n| {
                special.iter().find(|(line, _)| *line == n).map_or_else(
                    || format!("let value_{n} = compute({n});\n"),
                    |(_, text)| format!("{text}\n"),
                )
            })
            .collect()
    }

    fn terms(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| (*word).to_owned()).collect()
    }

    #[test]
    fn the_term_counter_counts_what_str_matches_counts() {
        let words = [
            "aa", "a", "", "ab", "aa", "straße", "ß", "foo", "oo", "σ", "xyz",
        ];
        let terms: Vec<(String, f64)> = words.iter().map(|w| ((*w).to_owned(), 1.0)).collect();
        let counter = TermCounter::new(&terms).unwrap();
        let mut counts = vec![0; terms.len()];
        for line in [
            "aaaa aab",
            "Foo FOO foofoo",
            "STRASSE Straße straßestraße",
            "ΣΣ σς",
            "",
            "no match here",
        ] {
            counter.count(line, &mut counts);
            let lower = line.to_lowercase();
            let expected: Vec<usize> = terms
                .iter()
                .map(|(term, _)| {
                    if term.is_empty() {
                        0
                    } else {
                        lower.matches(term.as_str()).count()
                    }
                })
                .collect();
            assert_eq!(counts, expected, "{line}");
        }
        assert!(TermCounter::new(&[(String::new(), 1.0)]).is_none());
    }

    #[test]
    fn keeps_the_widest_windows_that_fit_in_file_order() {
        let body = numbered(
            2000,
            &[(100, "fn parse_config() {"), (1500, "struct ConfigError;")],
        );
        let counter = TokenCounter::cl100k();
        let sliced = slice_to_fit(&body, &terms(&["config"]), TokenCount(600), counter).unwrap();
        assert!(sliced.tokens <= TokenCount(600));
        assert_eq!(sliced.total_lines, 2000);
        assert_eq!(sliced.kept.len(), 2);
        assert!(sliced.kept[0].contains(&100) && sliced.kept[1].contains(&1500));
        let width = sliced.kept[0].end() - sliced.kept[0].start();
        assert_eq!(
            sliced.kept[1].end() - sliced.kept[1].start(),
            width,
            "same context"
        );
        let first = sliced.text.lines().next().unwrap();
        assert!(first.starts_with("[sliced: kept lines "), "{first}");
        assert!(first.contains(" of 2,000; the other "), "{first}");
        assert!(sliced.text.contains("fn parse_config() {\n"));
        assert!(sliced.text.find("parse_config") < sliced.text.find("ConfigError"));
        assert!(sliced.text.contains(" cut ("));
        // Deterministic.
        assert_eq!(
            slice_to_fit(&body, &terms(&["config"]), TokenCount(600), counter),
            Some(sliced)
        );
    }

    #[test]
    fn the_note_names_the_kept_ranges() {
        let body = numbered(50, &[(10, "// the config loader")]);
        let sliced = slice_to_fit(
            &body,
            &terms(&["CONFIG"]),
            TokenCount(150),
            TokenCounter::cl100k(),
        )
        .unwrap();
        let context = (sliced.kept[0].end() - sliced.kept[0].start()) / 2;
        assert!(context > 0, "{}", sliced.text);
        assert_eq!(sliced.kept, [10 - context..=10 + context]);
        assert!(sliced.text.starts_with(&format!(
            "[sliced: kept lines {}–{} of 50; the other {} lines are left out]\n… lines 1–{} cut ({} lines) …\n",
            10 - context,
            10 + context,
            50 - (2 * context + 1),
            9 - context,
            9 - context,
        )), "{}", sliced.text);
        assert!(sliced.text.ends_with(&format!(
            "… lines {}–50 cut ({} lines) …\n",
            11 + context,
            40 - context
        )));
    }

    #[test]
    fn when_every_match_is_too_much_the_best_matches_stay() {
        let special: Vec<(usize, String)> = (1..=200)
            .map(|n| (n * 5, format!("config_{n}()")))
            .chain([(777, "load config and cache together".to_owned())])
            .collect();
        let special: Vec<(usize, &str)> = special.iter().map(|(n, t)| (*n, t.as_str())).collect();
        let body = numbered(1000, &special);
        let sliced = slice_to_fit(
            &body,
            &terms(&["config", "cache"]),
            TokenCount(80),
            TokenCounter::cl100k(),
        )
        .unwrap();
        assert!(sliced.tokens <= TokenCount(80));
        assert!(sliced.text.contains("load config and cache together"));
        assert!(sliced.kept.len() <= MAX_WINDOWS);
    }

    #[test]
    fn a_table_mentioning_a_word_on_many_lines_is_shown_by_a_few_windows() {
        // A data table (no definitions): "type" on 70 of its rows.
        let special: Vec<(usize, String)> = (0..70)
            .map(|n| {
                (
                    20 + n * 30,
                    format!("0x{n:04x}: ('CS', '1', \"Record Type {n}\"),"),
                )
            })
            .chain([(
                1000,
                "0x9999: ('CS', '1', \"Directory Record Type\"),".to_owned(),
            )])
            .collect();
        let special: Vec<(usize, &str)> = special.iter().map(|(n, t)| (*n, t.as_str())).collect();
        let body = numbered(2200, &special);
        let sliced = slice_to_fit(
            &body,
            &terms(&["type", "directory"]),
            TokenCount(600),
            TokenCounter::cl100k(),
        )
        .unwrap();
        assert!(sliced.kept.len() <= MAX_WINDOWS, "{:?}", sliced.kept);
        // The row with both words is among them, with rows around it.
        let best = sliced
            .kept
            .iter()
            .find(|range| range.contains(&1000))
            .unwrap();
        assert!(best.end() > best.start(), "{:?}", sliced.kept);
        assert!(sliced.text.matches(" cut (").count() <= MAX_WINDOWS + 1);
    }

    #[test]
    fn nothing_matching_or_nothing_fitting_gives_none() {
        let body = numbered(100, &[]);
        let counter = TokenCounter::cl100k();
        assert_eq!(
            slice_to_fit(&body, &terms(&["missing"]), TokenCount(1000), counter),
            None
        );
        assert_eq!(
            slice_to_fit(&body, &terms(&["", "  "]), TokenCount(1000), counter),
            None
        );
        assert_eq!(
            slice_to_fit(&body, &terms(&["value_5"]), TokenCount(5), counter),
            None
        );
    }

    /// A class of many methods, two about the task: both whole with their
    /// class line, siblings as signatures, one marker per elided run, disk
    /// line numbers through the map.
    #[test]
    fn definitions_are_shown_whole_inside_a_skeleton() {
        use crate::language::Language;
        use crate::select::definitions::definition_index;
        let mut disk =
            String::from("# Licence.\n# Two comment lines the transforms drop.\nclass Printer:\n");
        let mut body = String::from("class Printer:\n");
        for n in 0..120 {
            let method = format!(
                "    def _print_f{n}(self, expr):\n        args = self._print(expr.args)\n        return 'f{n}(%s)' % args\n\n"
            );
            disk.push_str(&method);
            body.push_str(&method);
        }
        for name in ["sinc", "sin"] {
            let method = format!(
                "    def _print_{name}(self, expr):\n        arg = self._print(expr.args[0])\n        return '{name}(%s)' % arg\n\n"
            );
            disk.push_str(&method);
            body.push_str(&method);
        }
        let map = LineMap::align(&disk, &body);
        let index = definition_index(&body, Language::Python);
        let terms = vec![("sinc".to_owned(), 2.0), ("expr".to_owned(), 0.1)];
        let focus = DefinitionFocus {
            terms: &terms,
            ..DefinitionFocus::default()
        };
        let sliced = slice_definitions(
            &body,
            &index,
            &map,
            focus,
            TokenCount(400),
            TokenCounter::cl100k(),
        )
        .unwrap();
        assert!(sliced.tokens <= TokenCount(400));
        let text = &sliced.text;
        assert!(text.contains("class Printer:\n"), "{text}");
        assert!(
            text.contains("    def _print_sinc(self, expr):\n        arg = self._print(expr.args[0])\n        return 'sinc(%s)' % arg\n"),
            "{text}"
        );
        // Disk lines: the class is line 3 of the file, not line 1 of the body.
        assert!(text.starts_with("[sliced: kept lines 3, "), "{text}");
        // The nearest siblings make the skeleton, not the first ones.
        assert!(
            text.contains("def _print_f119(") && !text.contains("def _print_f0("),
            "{text}"
        );
        let markers = text
            .lines()
            .filter(|l| l.trim_start().starts_with('…'))
            .count();
        let kept_definitions = index
            .iter()
            .filter(|d| text.contains(&format!("def {}(", d.simple_name())))
            .count();
        assert!(
            markers <= kept_definitions + 1,
            "{markers} markers for {kept_definitions}: {text}"
        );
        assert!(text.contains(" definitions) …"), "{text}");
    }

    #[test]
    fn a_definition_shown_by_its_anchors_keeps_short_gaps_inside_it() {
        use std::fmt::Write as _;

        // One long function: the task's word on three lines 6 apart, far
        // from its start; its whole does not fit, nor wide windows.
        let mut body = String::from("def handle(request):\n");
        for n in 1..300 {
            let call = if matches!(n, 100 | 106 | 112) {
                "decode_payload"
            } else {
                "ordinary_step"
            };
            writeln!(
                body,
                "    value_{n} = {call}(request, {n}, with_a_long_argument_name)"
            )
            .unwrap();
        }
        let terms = vec![("decode_payload".to_owned(), 1.0)];
        let focus = DefinitionFocus {
            terms: &terms,
            ..DefinitionFocus::default()
        };
        let sliced = slice_python(&body, focus, 440);
        let text = &sliced.text;
        assert!(sliced.tokens <= TokenCount(440), "{text}");
        // The three anchors in one run with the lines between them: the
        // slice has only the markers before and after it.
        for n in 100..=112 {
            assert!(
                text.contains(&format!("    value_{n} = ")),
                "line {n}: {text}"
            );
        }
        let markers = text
            .lines()
            .filter(|l| l.trim_start().starts_with('…'))
            .count();
        assert_eq!(markers, 2, "{text}");
    }

    #[test]
    fn a_window_does_not_end_inside_the_statement_it_anchors_on() {
        use std::fmt::Write as _;

        // A long function raising inside an `if` near its middle, with a
        // message over several lines: the window starts at the `if` and
        // holds the raise to its closing line (before, moving its start up
        // to the `if` cut its end back to the raise's first line).
        let mut body = String::from("def check(request):\n");
        for n in 1..120 {
            writeln!(body, "    value_{n} = ordinary_step(request, {n})").unwrap();
            if n == 60 {
                body.push_str("    if value_60 is None:\n");
                for k in 0..6 {
                    writeln!(body, "        note_{k} = describe(request, {k})").unwrap();
                }
                body.push_str(
                    "        raise PayloadError(\n            \"the payload could not be decoded: \"\n            \"its length is not a multiple of four\",\n            request,\n            value_60,\n        )\n",
                );
            }
        }
        let terms = vec![("payloaderror".to_owned(), 1.0)];
        let focus = DefinitionFocus {
            terms: &terms,
            ..DefinitionFocus::default()
        };
        let sliced = slice_python(&body, focus, 150);
        let text = &sliced.text;
        assert!(sliced.tokens <= TokenCount(150), "{text}");
        assert!(text.contains("        raise PayloadError("), "{text}");
        assert!(
            text.contains("its length is not a multiple of four"),
            "{text}"
        );
        assert!(
            text.contains("            value_60,\n        )\n"),
            "{text}"
        );
    }

    #[test]
    fn a_definition_shown_by_one_window_when_its_anchors_are_far_apart() {
        use std::fmt::Write as _;

        // The word twice near the start of the body and once at its very
        // end: the densest run is the first two, one window around them;
        // a window that reaches the body's end stops growing there.
        let mut body = String::from("def handle(request):\n");
        for n in 1..200 {
            let call = if matches!(n, 20 | 24 | 199) {
                "decode_payload"
            } else {
                "ordinary_step"
            };
            writeln!(body, "    value_{n} = {call}(request, {n})").unwrap();
        }
        let terms = vec![("decode_payload".to_owned(), 1.0)];
        let focus = DefinitionFocus {
            terms: &terms,
            ..DefinitionFocus::default()
        };
        for budget in [300, 900] {
            let sliced = slice_python(&body, focus, budget);
            let text = &sliced.text;
            assert!(sliced.tokens <= TokenCount(budget), "{text}");
            assert!(text.contains("    value_20 = decode_payload"), "{text}");
            assert!(text.contains("    value_24 = decode_payload"), "{text}");
            // Markers with shown lines of the function after them.
            let lines: Vec<&str> = text.lines().collect();
            let inside = lines[..lines.len() - 1]
                .iter()
                .filter(|l| l.starts_with("    …"))
                .count();
            assert!(inside <= 1, "{inside} markers inside the function: {text}");
        }
        // Room for almost all of it: the window runs to the body's end.
        let sliced = slice_python(&body, focus, 2_400);
        assert!(
            sliced.text.contains("    value_199 = decode_payload"),
            "{}",
            sliced.text
        );
    }

    #[test]
    fn a_window_holds_the_strongest_line_and_a_path_is_no_name() {
        use std::fmt::Write as _;

        // A table module: many rows with one of the task's words, one row
        // with all of them far from the others.
        let mut body = String::from("TABLE = {\n");
        for n in 0..400 {
            let row = match n {
                100..=160 => format!("    0x{n:04}: ('DT', 'Frame Number {n}'),"),
                300 => "    0x9074: ('DT', 'Frame Acquisition DateTime'),".to_owned(),
                _ => format!("    0x{n:04}: ('CS', 'Value {n} type'),"),
            };
            writeln!(body, "{row}").unwrap();
        }
        body.push_str("}\n");
        let terms = vec![
            ("frame".to_owned(), 1.0),
            ("acquisit".to_owned(), 1.0),
            ("datetime".to_owned(), 1.0),
        ];
        // The task names the file: `table.py` is no name to look for (its
        // last segment, `py`, is on no line as a word anyway).
        let names = vec!["data/table.py".to_owned()];
        let focus = DefinitionFocus {
            names: &names,
            terms: &terms,
            ..DefinitionFocus::default()
        };
        let sliced = slice_python(&body, focus, 400);
        assert!(
            sliced.text.contains("'Frame Acquisition DateTime'"),
            "{}",
            sliced.text
        );
        assert!(names_on_line(
            "x = parse_args(argv)",
            &["cli.parse_args".to_owned()]
        ));
        assert!(!names_on_line(
            "x = parse_args_fast(argv)",
            &["parse_args".to_owned()]
        ));
        assert!(!names_on_line("import numpy", &["setup.py".to_owned()]));
    }

    #[test]
    fn a_window_inside_a_block_starts_at_the_line_that_opens_it() {
        use std::fmt::Write as _;

        let mut body = String::from("def handle(request):\n");
        for n in 1..200 {
            match n {
                100 => body.push_str("    if request.ready:\n"),
                101..=104 => {
                    writeln!(body, "        value_{n} = ordinary_step(request, {n})").unwrap();
                }
                105 => body.push_str("        value = decode_payload(request)\n"),
                _ => writeln!(body, "    value_{n} = ordinary_step(request, {n})").unwrap(),
            }
        }
        let terms = vec![("decode_payload".to_owned(), 1.0)];
        let focus = DefinitionFocus {
            terms: &terms,
            ..DefinitionFocus::default()
        };
        let sliced = slice_python(&body, focus, 150);
        let text = &sliced.text;
        assert!(text.contains("    if request.ready:\n"), "{text}");
        assert!(
            text.contains("        value = decode_payload(request)\n"),
            "{text}"
        );
    }

    #[test]
    fn a_marker_over_a_body_and_the_definitions_after_it_is_not_indented() {
        use std::fmt::Write as _;

        let mut body = String::from("def target(x):\n    return x\n\n");
        for n in 0..40 {
            writeln!(body, "def helper_{n}(x):").unwrap();
            for k in 0..10 {
                writeln!(body, "    x = x + {k} * {n}").unwrap();
            }
            body.push_str("    return x\n\n");
        }
        let names = vec!["target".to_owned()];
        let focus = DefinitionFocus {
            names: &names,
            ..DefinitionFocus::default()
        };
        let sliced = slice_python(&body, focus, 160);
        let last = sliced.text.lines().last().unwrap();
        assert!(last.starts_with("… lines "), "{}", sliced.text);
    }

    #[test]
    fn a_definition_inside_a_block_comes_with_the_block_line() {
        use std::fmt::Write as _;

        let mut body = String::new();
        for n in 0..120 {
            writeln!(body, "def helper_{n}(x):\n    return x + {n}\n").unwrap();
        }
        body.push_str("if WIN:\n    import msvcrt\n\n    def raw_input(prompt=''):\n        return msvcrt.getwch()\n");
        let names = vec!["raw_input".to_owned()];
        let focus = DefinitionFocus {
            names: &names,
            ..DefinitionFocus::default()
        };
        let sliced = slice_python(&body, focus, 200);
        assert!(
            sliced.text.contains("if WIN:\n")
                && sliced
                    .text
                    .contains("    def raw_input(prompt=''):\n        return msvcrt.getwch()\n"),
            "{}",
            sliced.text
        );
    }

    #[test]
    fn the_import_block_comes_right_after_the_best_definition() {
        use std::fmt::Write as _;

        use crate::language::Language;
        use crate::select::definitions::definition_index;
        let mut body = String::from(
            "\"\"\"Module docstring.\"\"\"\n\nimport os\nfrom typing import (\n    Any,\n    List,\n)\n\nLIMIT = 3\n\n",
        );
        for n in 0..150 {
            writeln!(
                body,
                "def step_{n}(value):\n    value = value + {n}\n    return value * 2\n"
            )
            .unwrap();
        }
        body.push_str(
            "def persist(fname, buff):\n    with open(fname, 'w') as f:\n        f.write(buff)\n",
        );
        let index = definition_index(&body, Language::Python);
        let terms = vec![("persist".to_owned(), 2.0), ("write".to_owned(), 1.0)];
        let focus = DefinitionFocus {
            terms: &terms,
            ..DefinitionFocus::default()
        };
        let slice = |budget: u32| {
            slice_definitions(
                &body,
                &index,
                &LineMap::identity(),
                focus,
                TokenCount(budget),
                TokenCounter::cl100k(),
            )
            .unwrap()
            .text
        };
        let roomy = slice(600);
        assert!(
            roomy.contains("import os\nfrom typing import (\n    Any,\n    List,\n)\n"),
            "{roomy}"
        );
        assert!(roomy.contains("        f.write(buff)\n"), "{roomy}");
        // With little room, the imports come before the skeleton.
        let tight = slice(120);
        assert!(tight.contains("        f.write(buff)\n"), "{tight}");
        assert!(tight.contains("import os\n"), "{tight}");
        assert!(!tight.contains("def step_149("), "{tight}");
        // With room for the definition alone, no imports.
        let tightest = slice(75);
        assert!(tightest.contains("        f.write(buff)\n"), "{tightest}");
        assert!(!tightest.contains("import os"), "{tightest}");
    }

    #[test]
    fn an_import_continued_with_a_backslash_is_shown_to_its_end() {
        use std::fmt::Write as _;

        use crate::language::Language;
        use crate::select::definitions::definition_index;
        let mut body = String::from(
            "import sys\nfrom ._compat import first_name, second_name, \\\n    third_name, fourth_name, fifth_name, sixth_name, seventh_name\n\n",
        );
        for n in 0..120 {
            writeln!(body, "def step_{n}(value):\n    return value * {n}\n").unwrap();
        }
        body.push_str("def persist(fname):\n    return open(fname).read()\n");
        let index = definition_index(&body, Language::Python);
        let terms = vec![("persist".to_owned(), 2.0)];
        let focus = DefinitionFocus {
            terms: &terms,
            ..DefinitionFocus::default()
        };
        let text = slice_definitions(
            &body,
            &index,
            &LineMap::identity(),
            focus,
            TokenCount(400),
            TokenCounter::cl100k(),
        )
        .unwrap()
        .text;
        assert!(
            text.contains("second_name, \\\n    third_name, fourth_name, fifth_name, sixth_name, seventh_name\n"),
            "{text}"
        );
    }

    #[test]
    fn a_gap_no_dearer_than_its_marker_is_shown() {
        let lines = [
            "def a():",
            "    x = 1",
            "    y = 2",
            "    if ok:",
            "        return x",
            "    long_name_number_one = compute_something_expensive(x, y)",
            "    long_name_number_two = compute_something_expensive(y, x)",
            "    return y",
        ];
        // One short line between two kept runs is shown; two long ones
        // stay a marker; the one-line tail is shown.
        assert_eq!(close_tiny_gaps(&lines, &[0..=1, 3..=4]), vec![0..=4]);
        assert_eq!(close_tiny_gaps(&lines, &[0..=4, 7..=7]), vec![0..=4, 7..=7]);
        assert_eq!(close_tiny_gaps(&lines, &[1..=6]), vec![0..=7]);
    }

    #[test]
    fn a_body_that_fits_comes_back_whole() {
        let body = "fn config() {}\nfn other() {}\n";
        let sliced = slice_to_fit(
            body,
            &terms(&["config"]),
            TokenCount(1000),
            TokenCounter::cl100k(),
        )
        .unwrap();
        assert_eq!(sliced.kept, [1..=2]);
        assert_eq!(
            sliced.text,
            "[sliced: kept lines 1–2 of 2; nothing was cut]\nfn config() {}\nfn other() {}\n"
        );
    }
}
