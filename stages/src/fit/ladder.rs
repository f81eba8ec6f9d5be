//! SummarisationLadder (`docs/budget.md`): L0 full content, L1 signatures with
//! docs, L2 signatures only, L3 names only.
//!
//! When the selected files at full content fit the code budget, all go in at
//! [`InclusionTier::L0`]: compression happens only when it must. Otherwise files
//! are compressed least relevant first — score ascending, then larger first (more
//! saving), then path ascending: the least relevant file tries each smaller tier
//! in order (L1, L2, L3) before the next file is touched, so a more relevant file
//! is never more compressed than a less relevant one, and the best files stay
//! whole as long as the budget allows. When every file is at its smallest tier
//! and the context still does not fit, files are dropped in the same order.
//!
//! L1 (signatures and docs) and L2 (signatures only) come from the tree-sitter
//! language providers ([`crate::lang`]); a file without them (other languages,
//! or nothing to extract) steps from L0 straight to L3. A tier that would cost
//! more than the one the file is at is skipped.

use serde::Serialize;

use crate::fit::tokens::TokenCount;
use crate::relative_path::RelativePath;
use crate::select::symbols::defined_names;

/// How much of a file goes into the prompt. Serialised by its
/// [name](InclusionTier::name) (`full`, `signatures+docs`, …), the one
/// vocabulary of prompts, JSON and MCP replies; the older `L0`…`L3` are read
/// too.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
pub enum InclusionTier {
    /// Full (transformed) content.
    #[serde(rename = "full", alias = "L0")]
    L0,
    /// Signatures with their doc comments.
    #[serde(rename = "signatures+docs", alias = "L1")]
    L1,
    /// Signatures only.
    #[serde(rename = "signatures-only", alias = "L2")]
    L2,
    /// Names of the file's definitions only.
    #[serde(rename = "names-only", alias = "L3")]
    L3,
}

impl InclusionTier {
    /// All tiers, fullest first.
    pub const ALL: [Self; 4] = [Self::L0, Self::L1, Self::L2, Self::L3];

    /// The name a file's heading in the prompt shows: `full`, `signatures+docs`,
    /// `signatures-only`, `names-only`.
    pub fn name(self) -> &'static str {
        match self {
            Self::L0 => "full",
            Self::L1 => "signatures+docs",
            Self::L2 => "signatures-only",
            Self::L3 => "names-only",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One file offered to the ladder: its renders per tier with their token cost in
/// the prompt (heading and fences included).
#[derive(Clone, Debug)]
pub struct LadderFile {
    /// The file.
    pub path: RelativePath,
    /// Selection score in `[0, 1]`.
    pub score: f64,
    /// Token cost of the file's block at each tier, `None` where the tier has no
    /// render or the file may not be shown at it. The fullest tier present is
    /// the file's ceiling: the ladder never shows it fuller.
    pub costs: [Option<TokenCount>; 4],
    /// When set, the file may not go below this tier (direct targets stay full).
    pub floor: Option<InclusionTier>,
}

/// The ladder's decision for one file: its tier, or `None` when dropped.
pub type TierChoice = Option<InclusionTier>;

/// Fits files into a code budget.
#[derive(Clone, Copy, Debug, Default)]
pub struct SummarisationLadder;

impl SummarisationLadder {
    /// Chooses a tier per file (same order as `files`) so that the summed costs
    /// fit `budget`, and returns the choices with their total cost.
    ///
    /// Files with a floor tier are never compressed below it nor dropped before
    /// every other file has been dropped.
    pub fn fit(&self, files: &[LadderFile], budget: TokenCount) -> (Vec<TierChoice>, TokenCount) {
        // Each file starts at its fullest tier with a render: its ceiling
        // (a file the fit keeps to signatures has no L0 cost).
        let mut tiers: Vec<TierChoice> = files
            .iter()
            .map(|file| {
                InclusionTier::ALL
                    .into_iter()
                    .find(|tier| file.costs[tier.index()].is_some())
            })
            .collect();
        let cost = |tiers: &[TierChoice]| -> u64 {
            tiers
                .iter()
                .zip(files)
                .filter_map(|(tier, file)| tier.and_then(|t| file.costs[t.index()]))
                .map(TokenCount::get)
                .sum()
        };
        let mut total = cost(&tiers);
        let budget_tokens = budget.get();
        if total <= budget_tokens {
            return (tiers, TokenCount::from_u64(total));
        }

        let mut order: Vec<usize> = (0..files.len()).collect();
        order.sort_by(|&a, &b| {
            let (fa, fb) = (&files[a], &files[b]);
            fa.score
                .total_cmp(&fb.score)
                .then_with(|| fb.costs[0].cmp(&fa.costs[0]))
                .then_with(|| fa.path.cmp(&fb.path))
        });

        for &index in &order {
            let file = &files[index];
            for target in [InclusionTier::L1, InclusionTier::L2, InclusionTier::L3] {
                let Some(current) = tiers[index] else { break };
                if current >= target || file.floor.is_some_and(|floor| target > floor) {
                    continue;
                }
                let (Some(now), Some(next)) =
                    (file.costs[current.index()], file.costs[target.index()])
                else {
                    continue;
                };
                if next < now {
                    tiers[index] = Some(target);
                    total = total - now.get() + next.get();
                    if total <= budget_tokens {
                        return Self::fill(files, &order, tiers, total, budget_tokens);
                    }
                }
            }
        }

        let (floored, free): (Vec<usize>, Vec<usize>) = order
            .iter()
            .partition(|&&index| files[index].floor.is_some());
        for index in free.into_iter().chain(floored) {
            if total <= budget_tokens {
                break;
            }
            if let Some(tier) = tiers[index].take()
                && let Some(cost) = files[index].costs[tier.index()]
            {
                total -= cost.get();
            }
        }
        Self::fill(files, &order, tiers, total, budget_tokens)
    }

    /// Spends what compression left over: most relevant first, each file is raised
    /// to the fullest tier that fits in the remaining budget (a dropped file comes
    /// back at the fullest tier that fits). Compression works in coarse steps and
    /// can overshoot — a large file squeezed to names frees more than needed — so
    /// without this pass a budget can end half used.
    fn fill(
        files: &[LadderFile],
        compression_order: &[usize],
        mut tiers: Vec<TierChoice>,
        mut total: u64,
        budget: u64,
    ) -> (Vec<TierChoice>, TokenCount) {
        for &index in compression_order.iter().rev() {
            let file = &files[index];
            let current = tiers[index];
            let current_cost = current
                .and_then(|t| file.costs[t.index()])
                .map_or(0, TokenCount::get);
            for tier in InclusionTier::ALL {
                if current.is_some_and(|c| tier >= c) {
                    break;
                }
                let Some(cost) = file.costs[tier.index()] else {
                    continue;
                };
                let next_total = total - current_cost + cost.get();
                if next_total <= budget {
                    tiers[index] = Some(tier);
                    total = next_total;
                    break;
                }
            }
        }
        (tiers, TokenCount::from_u64(total))
    }
}

/// Renders the names-only (L3) tier of a file: one line `kind name` per
/// definition ([`crate::select::symbols::defined_names`]), in file order. A file with no
/// recognisable definition gets one line giving its size ([`size_line`]), so
/// the render is never empty.
///
/// # Examples
///
/// ```
/// use aic_stages::fit::ladder::names_only;
/// let text = "pub struct Config {}\nimpl Config {\n    pub fn load() {}\n}\n";
/// assert_eq!(names_only(text), "struct Config\nfn load\n");
/// ```
pub fn names_only(content: &str) -> String {
    defined_names_only(content).unwrap_or_else(|| size_line(content))
}

/// The `kind name` lines of [`names_only`], or `None` when `content`
/// defines no recognisable name.
pub fn defined_names_only(content: &str) -> Option<String> {
    let names = defined_names(content);
    (!names.is_empty()).then(|| {
        names.iter().fold(String::new(), |mut out, n| {
            out.push_str(&n.kind);
            out.push(' ');
            out.push_str(&n.name);
            out.push('\n');
            out
        })
    })
}

/// The names-only line of a file that defines nothing recognisable:
/// `(no definitions found; N lines, B bytes)`, counted on `text`.
pub fn size_line(text: &str) -> String {
    format!(
        "(no definitions found; {} lines, {} bytes)\n",
        text.lines().count(),
        text.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, score: f64, l0: u32, l3: u32) -> LadderFile {
        LadderFile {
            path: RelativePath::new(path).unwrap(),
            score,
            costs: [Some(TokenCount(l0)), None, None, Some(TokenCount(l3))],
            floor: None,
        }
    }

    #[test]
    fn everything_full_when_it_fits() {
        let files = [file("a", 0.9, 100, 10), file("b", 0.1, 100, 10)];
        let (tiers, total) = SummarisationLadder.fit(&files, TokenCount(200));
        assert_eq!(tiers, [Some(InclusionTier::L0), Some(InclusionTier::L0)]);
        assert_eq!(total, TokenCount(200));
    }

    #[test]
    fn least_relevant_compressed_first() {
        let files = [file("a", 0.9, 100, 10), file("b", 0.1, 100, 10)];
        let (tiers, total) = SummarisationLadder.fit(&files, TokenCount(150));
        assert_eq!(tiers, [Some(InclusionTier::L0), Some(InclusionTier::L3)]);
        assert_eq!(total, TokenCount(110));
    }

    #[test]
    fn ties_compress_larger_then_path_first() {
        let files = [
            file("b", 0.5, 100, 10),
            file("a", 0.5, 100, 10),
            file("c", 0.5, 300, 10),
        ];
        let (tiers, _) = SummarisationLadder.fit(&files, TokenCount(300));
        assert_eq!(tiers[2], Some(InclusionTier::L3), "largest first");
        assert_eq!(tiers[0], Some(InclusionTier::L0));
        let (tiers, _) = SummarisationLadder.fit(&files, TokenCount(130));
        assert_eq!(tiers[1], Some(InclusionTier::L3), "then `a` before `b`");
        assert_eq!(tiers[0], Some(InclusionTier::L0));
    }

    #[test]
    fn drops_least_relevant_when_names_do_not_fit() {
        let files = [file("a", 0.9, 100, 50), file("b", 0.1, 100, 50)];
        let (tiers, total) = SummarisationLadder.fit(&files, TokenCount(60));
        assert_eq!(tiers, [Some(InclusionTier::L3), None]);
        assert_eq!(total, TokenCount(50));
        let (tiers, total) = SummarisationLadder.fit(&files, TokenCount(10));
        assert_eq!(tiers, [None, None]);
        assert_eq!(total, TokenCount(0));
    }

    #[test]
    fn least_relevant_file_goes_through_every_tier_before_the_next_is_touched() {
        let four_tiers = |path: &str, score: f64| LadderFile {
            path: RelativePath::new(path).unwrap(),
            score,
            costs: [
                Some(TokenCount(100)),
                Some(TokenCount(80)),
                Some(TokenCount(60)),
                Some(TokenCount(20)),
            ],
            floor: None,
        };
        let files = [four_tiers("best", 0.9), four_tiers("worst", 0.1)];
        let (tiers, total) = SummarisationLadder.fit(&files, TokenCount(130));
        assert_eq!(tiers, [Some(InclusionTier::L0), Some(InclusionTier::L3)]);
        assert_eq!(total, TokenCount(120));
        let (tiers, _) = SummarisationLadder.fit(&files, TokenCount(185));
        assert_eq!(tiers, [Some(InclusionTier::L0), Some(InclusionTier::L1)]);
    }

    #[test]
    fn leftover_budget_raises_the_most_relevant_files_again() {
        // Squeezing `big` to names frees far more than needed; `small` and `mid`
        // go back to full, most relevant first.
        let files = [
            file("small", 0.9, 50, 5),
            file("mid", 0.5, 200, 10),
            file("big", 0.1, 1000, 20),
        ];
        let (tiers, total) = SummarisationLadder.fit(&files, TokenCount(300));
        assert_eq!(
            tiers,
            [
                Some(InclusionTier::L0),
                Some(InclusionTier::L0),
                Some(InclusionTier::L3)
            ]
        );
        assert_eq!(total, TokenCount(270));
    }

    #[test]
    fn a_dropped_file_comes_back_when_a_smaller_one_fits() {
        // The most relevant file cannot fit even as names; a less relevant small
        // one still can.
        let files = [file("huge", 0.9, 5000, 400), file("tiny", 0.1, 30, 5)];
        let (tiers, total) = SummarisationLadder.fit(&files, TokenCount(100));
        assert_eq!(tiers, [None, Some(InclusionTier::L0)]);
        assert_eq!(total, TokenCount(30));
    }

    #[test]
    fn floor_keeps_direct_targets_full() {
        let mut target = file("t", 0.1, 100, 10);
        target.floor = Some(InclusionTier::L0);
        let files = [file("a", 0.9, 100, 10), target];
        let (tiers, _) = SummarisationLadder.fit(&files, TokenCount(150));
        assert_eq!(tiers, [Some(InclusionTier::L3), Some(InclusionTier::L0)]);
    }

    #[test]
    fn names_only_lists_definitions_across_languages() {
        let python =
            "class Parser:\n    def parse(self):\n        pass\n\nasync def main():\n    pass\n";
        assert_eq!(names_only(python), "class Parser\ndef parse\ndef main\n");
        let ts =
            "export default class App {}\nexport async function load() {}\ninterface Props {}\n";
        assert_eq!(
            names_only(ts),
            "class App\nfunction load\ninterface Props\n"
        );
        assert_eq!(
            names_only("just text\n"),
            "(no definitions found; 1 lines, 10 bytes)\n"
        );
    }
}
