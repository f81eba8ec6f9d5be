//! BudgetAllocator (`docs/budget.md`): the total token budget of a
//! compile, the code budget left for file bodies, and the automatic file cap.

use serde::Serialize;

use crate::fit::tokens::{TokenCount, TokenCounter};

/// The context window assumed when none is configured: 128,000 tokens.
pub const CONTEXT_WINDOW_DEFAULT: u32 = 128_000;
/// The context window of a known model family, from its id as editors and
/// agents send it (`claude-sonnet-4-5`, `gpt-4.1-mini`, `gemini-2.5-pro`,
/// `models/gemini-1.5-flash`, `anthropic/claude-3.5-sonnet`); `None` for an
/// unknown id. Letter case and a provider prefix are ignored.
///
/// | family | window (tokens) |
/// | --- | --- |
/// | Claude (3, 3.5, 3.7, 4, 4.x) | 200,000 |
/// | GPT-4.1 | 1,047,576 |
/// | GPT-5 | 400,000 |
/// | o1, o3, o4 | 200,000 |
/// | GPT-4o, GPT-4 Turbo | 128,000 |
/// | Gemini 1.5 Pro | 2,097,152 |
/// | Gemini 1.5 Flash, 2.x, 2.5 | 1,048,576 |
///
/// # Examples
///
/// ```
/// use aic_stages::fit::budget::model_context_window;
/// assert_eq!(model_context_window("claude-sonnet-4-5").map(|t| t.0), Some(200_000));
/// assert_eq!(model_context_window("openai/gpt-4.1-mini").map(|t| t.0), Some(1_047_576));
/// assert_eq!(model_context_window("my-local-model"), None);
/// ```
pub fn model_context_window(model_id: &str) -> Option<TokenCount> {
    let id = model_id.to_ascii_lowercase();
    let id = id.rsplit('/').next().unwrap_or(&id);
    let window = if id.starts_with("claude") {
        200_000
    } else if id.starts_with("gpt-4.1") {
        1_047_576
    } else if id.starts_with("gpt-5") {
        400_000
    } else if ["o1", "o3", "o4"]
        .iter()
        .any(|p| id == *p || id.starts_with(&format!("{p}-")))
    {
        200_000
    } else if id.starts_with("gpt-4o") || id.starts_with("gpt-4-turbo") {
        128_000
    } else if id.starts_with("gemini-1.5-pro") {
        2_097_152
    } else if id.starts_with("gemini-1.5-flash") || id.starts_with("gemini-2") {
        1_048_576
    } else {
        return None;
    };
    Some(TokenCount(window))
}

/// Tokens reserved for the model's response: 4,000.
pub const RESERVED_RESPONSE_DEFAULT: u32 = 4_000;
/// Tokens reserved for the editor's own template: 500.
pub const TEMPLATE_OVERHEAD_DEFAULT: u32 = 500;

/// Where the base budget came from, in resolution order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum BudgetSource {
    /// `--budget` on the command line or `budget` on the request: wins over all.
    RequestOverride,
    /// The merged rule pack's `budgetOverride`.
    RulePack,
    /// `contextBudget.perTaskClass.<class>`.
    PerTaskClass,
    /// A positive `contextBudget.maxTokens`.
    MaxTokens,
    /// `maxTokens` 0: the model's headroom.
    Auto,
}

impl BudgetSource {
    /// Where the budget came from, in the words a user set it with.
    pub fn describe(self) -> &'static str {
        match self {
            Self::RequestOverride => "from --budget",
            Self::RulePack => "from the rule pack's budgetOverride",
            Self::PerTaskClass => "from contextBudget.perTaskClass",
            Self::MaxTokens => "from contextBudget.maxTokens",
            Self::Auto => "automatic",
        }
    }
}

/// Inputs of [`BudgetAllocator::allocate`], all in tokens.
#[derive(Clone, Copy, Debug, Default)]
pub struct BudgetInputs {
    /// A budget given with the request (`--budget`); `None` if not given.
    pub request_override: Option<TokenCount>,
    /// The merged rule pack's `budgetOverride`.
    pub rule_pack_override: Option<TokenCount>,
    /// `contextBudget.perTaskClass` for the classified task.
    pub per_task_class: Option<TokenCount>,
    /// `contextBudget.maxTokens` (0 = auto).
    pub max_tokens: TokenCount,
    /// The model's context window when known (config or request).
    pub context_window: Option<TokenCount>,
    /// Tokens already used by the conversation, when the caller knows them.
    pub conversation_tokens: Option<TokenCount>,
    /// The model's counting margin in percent
    /// ([`ModelProfile::margin_percent`](crate::fit::model::ModelProfile)):
    /// the total, whatever its source, is cut to `total × 100 / (100 + margin)`
    /// counted tokens. 0 for a model counted in its own encoding.
    pub margin_percent: u32,
}

/// The allocated budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenBudget {
    /// Total tokens the compiled prompt may take, wrappers included, in the
    /// compile's encoding (after the model's margin).
    pub total: TokenCount,
    /// Where the base came from.
    pub source: BudgetSource,
    /// Model headroom: window − response reserve − conversation − template overhead.
    pub headroom: TokenCount,
    /// The context window used for headroom and the file cap.
    pub context_window: TokenCount,
}

/// Allocates token budgets.
#[derive(Clone, Copy, Debug, Default)]
pub struct BudgetAllocator;

impl BudgetAllocator {
    /// Resolves the total budget.
    ///
    /// A request override is taken as given (the caller asked for that many
    /// tokens). Otherwise the base is the rule pack's `budgetOverride`, else the
    /// per-class budget, else `maxTokens`. A base of 0 means auto: the total is the
    /// headroom `max(0, window − 4,000 − conversationTokens − 500)`. A positive base
    /// is clamped to the headroom when the conversation size or the context window
    /// is known, and taken as is otherwise. Last, a model margin cuts the total
    /// to `total × 100 / (100 + margin)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use aic_stages::fit::budget::{BudgetAllocator, BudgetInputs, BudgetSource};
    /// let budget = BudgetAllocator.allocate(&BudgetInputs::default());
    /// assert_eq!(budget.total.0, 123_500);
    /// assert_eq!(budget.source, BudgetSource::Auto);
    /// ```
    pub fn allocate(&self, inputs: &BudgetInputs) -> TokenBudget {
        let window = inputs
            .context_window
            .unwrap_or(TokenCount(CONTEXT_WINDOW_DEFAULT));
        let conversation = inputs.conversation_tokens.unwrap_or(TokenCount::ZERO);
        let headroom = window
            .0
            .saturating_sub(RESERVED_RESPONSE_DEFAULT)
            .saturating_sub(conversation.0)
            .saturating_sub(TEMPLATE_OVERHEAD_DEFAULT);
        let headroom = TokenCount(headroom);

        let counted = |total: TokenCount| {
            if inputs.margin_percent == 0 {
                total
            } else {
                TokenCount::from_u64(total.get() * 100 / (100 + u64::from(inputs.margin_percent)))
            }
        };
        if let Some(requested) = inputs.request_override {
            return TokenBudget {
                total: counted(requested),
                source: BudgetSource::RequestOverride,
                headroom,
                context_window: window,
            };
        }
        let (base, source) = if let Some(base) = inputs.rule_pack_override {
            (base, BudgetSource::RulePack)
        } else if let Some(base) = inputs.per_task_class {
            (base, BudgetSource::PerTaskClass)
        } else if inputs.max_tokens.0 > 0 {
            (inputs.max_tokens, BudgetSource::MaxTokens)
        } else {
            (TokenCount::ZERO, BudgetSource::Auto)
        };
        let total = if base.0 == 0 {
            headroom
        } else if inputs.conversation_tokens.is_some() || inputs.context_window.is_some() {
            base.min(headroom)
        } else {
            base
        };
        let source = if base.0 == 0 {
            BudgetSource::Auto
        } else {
            source
        };
        TokenBudget {
            total: counted(total),
            source,
            headroom,
            context_window: window,
        }
    }

    /// The code budget: what is left of `total` after the prompt's fixed sections
    /// (`overhead`), never below zero.
    pub fn code_budget(&self, total: TokenCount, overhead: TokenCount) -> TokenCount {
        TokenCount(total.0.saturating_sub(overhead.0))
    }

    /// The automatic file cap used when `maxFiles` is 0:
    /// `max(5, min(40, ceil(sqrt(totalFiles))))`, scaled by
    /// `contextWindow / 128,000`, then clamped to `[5, 300]`.
    ///
    /// # Examples
    ///
    /// ```
    /// use aic_stages::fit::budget::BudgetAllocator;
    /// use aic_stages::fit::tokens::TokenCount;
    /// assert_eq!(BudgetAllocator.auto_max_files(142, TokenCount(128_000)), 12);
    /// assert_eq!(BudgetAllocator.auto_max_files(10, TokenCount(128_000)), 5);
    /// assert_eq!(BudgetAllocator.auto_max_files(50_000, TokenCount(1_000_000)), 300);
    /// ```
    pub fn auto_max_files(&self, total_files: usize, context_window: TokenCount) -> usize {
        let base = (total_files as f64).sqrt().ceil().clamp(5.0, 40.0);
        let scale = f64::from(context_window.0) / f64::from(CONTEXT_WINDOW_DEFAULT);
        (base * scale).ceil().clamp(5.0, 300.0) as usize
    }
}

/// The share of the total budget the prompt's copy of the task (`## Task`)
/// may take: a quarter. The request is already in the agent's conversation,
/// so a long pasted report is shown by its head, and the rest of the budget
/// goes to the code it is about.
pub const TASK_SHARE_INVERSE: u32 = 4;
/// The copy of the task is never bounded below this many tokens.
pub const MIN_TASK_TOKENS: u32 = 200;

/// The task text as the prompt's `## Task` shows it within `total`: whole
/// when it costs at most `max(total / TASK_SHARE_INVERSE, MIN_TASK_TOKENS)`
/// tokens, else its first lines within that bound, a code fence left open
/// by the cut closed, and one line saying how many lines and tokens are left
/// out. Only the copy is shortened: the task is classified and files are
/// ranked on the whole text.
///
/// # Examples
///
/// ```
/// use aic_stages::fit::budget::bounded_task_text;
/// use aic_stages::fit::tokens::{TokenCount, TokenCounter};
/// let tokens = TokenCounter::default();
/// let short = "Fix the login bug";
/// assert_eq!(bounded_task_text(short, TokenCount(2_500), tokens), short);
/// let long = format!("Title\n```\n{}```", "trace line of a pasted report\n".repeat(400));
/// let shown = bounded_task_text(&long, TokenCount(2_500), tokens);
/// assert!(shown.starts_with("Title\n```\n"));
/// assert!(tokens.count(&shown).0 <= 625);
/// assert!(shown.ends_with("to leave room for code; the request has them whole]"));
/// assert_eq!(shown.matches("```").count(), 2);
/// ```
pub fn bounded_task_text(text: &str, total: TokenCount, tokens: TokenCounter) -> String {
    let cap = (total.0 / TASK_SHARE_INVERSE).max(MIN_TASK_TOKENS) as usize;
    let whole = tokens.count(text).0 as usize;
    if whole <= cap {
        return text.to_owned();
    }
    let lines: Vec<&str> = text.lines().collect();
    let fence = |line: &str| {
        let line = line.trim_start();
        line.starts_with("```") || line.starts_with("~~~")
    };
    let marker = |left: usize, left_tokens: usize| {
        format!(
            "[… {} more line{} of the task ({} tokens) left out of this copy to leave room for code; the request has them whole]",
            left,
            if left == 1 { "" } else { "s" },
            left_tokens
        )
    };
    // The head, a closing fence and the marker, within the cap; the marker's
    // numbers are at most as long as the whole task's.
    let reserve = tokens
        .count(&format!("\n```\n{}", marker(lines.len(), whole)))
        .0 as usize;
    let room = cap.saturating_sub(reserve);
    let mut kept = 0;
    let mut used = 0;
    for line in &lines {
        let cost = tokens.count(&format!("{line}\n")).0 as usize;
        if used + cost > room {
            break;
        }
        used += cost;
        kept += 1;
    }
    let mut shown = String::new();
    for line in &lines[..kept] {
        shown.push_str(line);
        shown.push('\n');
    }
    if kept == 0 {
        // A first line longer than the room: its first characters.
        let chars = (room * 3).min(lines.first().map_or(0, |l| l.len()));
        let mut end = chars;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        shown.push_str(&text[..end]);
        shown.push_str(" …\n");
    }
    if lines[..kept].iter().filter(|line| fence(line)).count() % 2 == 1 {
        shown.push_str("```\n");
    }
    let left_tokens = whole.saturating_sub(used);
    shown.push_str(&marker(lines.len() - kept, left_tokens));
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allocate(inputs: BudgetInputs) -> TokenBudget {
        BudgetAllocator.allocate(&inputs)
    }

    #[test]
    fn auto_budget_is_headroom() {
        let budget = allocate(BudgetInputs::default());
        assert_eq!(budget.total, TokenCount(123_500));
        let budget = allocate(BudgetInputs {
            conversation_tokens: Some(TokenCount(20_000)),
            ..BudgetInputs::default()
        });
        assert_eq!(budget.total, TokenCount(103_500));
        let budget = allocate(BudgetInputs {
            conversation_tokens: Some(TokenCount(200_000)),
            ..BudgetInputs::default()
        });
        assert_eq!(budget.total, TokenCount(0));
    }

    #[test]
    fn resolution_order_is_pack_then_class_then_max_tokens() {
        let all = BudgetInputs {
            rule_pack_override: Some(TokenCount(1_000)),
            per_task_class: Some(TokenCount(2_000)),
            max_tokens: TokenCount(3_000),
            ..BudgetInputs::default()
        };
        assert_eq!(allocate(all).total, TokenCount(1_000));
        assert_eq!(allocate(all).source, BudgetSource::RulePack);
        let no_pack = BudgetInputs {
            rule_pack_override: None,
            ..all
        };
        assert_eq!(allocate(no_pack).total, TokenCount(2_000));
        let only_max = BudgetInputs {
            per_task_class: None,
            ..no_pack
        };
        assert_eq!(allocate(only_max).total, TokenCount(3_000));
        assert_eq!(allocate(only_max).source, BudgetSource::MaxTokens);
    }

    #[test]
    fn request_override_wins() {
        let budget = allocate(BudgetInputs {
            request_override: Some(TokenCount(500)),
            rule_pack_override: Some(TokenCount(1_000)),
            ..BudgetInputs::default()
        });
        assert_eq!(budget.total, TokenCount(500));
        assert_eq!(budget.source, BudgetSource::RequestOverride);
    }

    #[test]
    fn a_model_margin_cuts_every_source_last() {
        let requested = allocate(BudgetInputs {
            request_override: Some(TokenCount(8_000)),
            margin_percent: 25,
            ..BudgetInputs::default()
        });
        assert_eq!(requested.total, TokenCount(6_400));
        assert_eq!(requested.source, BudgetSource::RequestOverride);
        let auto = allocate(BudgetInputs {
            context_window: Some(TokenCount(200_000)),
            conversation_tokens: Some(TokenCount(130_000)),
            margin_percent: 25,
            ..BudgetInputs::default()
        });
        assert_eq!(auto.headroom, TokenCount(65_500));
        assert_eq!(auto.total, TokenCount(52_400));
        let none = allocate(BudgetInputs::default());
        assert_eq!(none.total, TokenCount(123_500));
    }

    #[test]
    fn positive_base_clamps_only_with_window_information() {
        let unclamped = allocate(BudgetInputs {
            max_tokens: TokenCount(200_000),
            ..BudgetInputs::default()
        });
        assert_eq!(unclamped.total, TokenCount(200_000));
        let clamped = allocate(BudgetInputs {
            max_tokens: TokenCount(200_000),
            conversation_tokens: Some(TokenCount(100_000)),
            ..BudgetInputs::default()
        });
        assert_eq!(clamped.total, TokenCount(23_500));
        let windowed = allocate(BudgetInputs {
            max_tokens: TokenCount(50_000),
            context_window: Some(TokenCount(32_000)),
            ..BudgetInputs::default()
        });
        assert_eq!(windowed.total, TokenCount(27_500));
    }

    #[test]
    fn code_budget_never_negative() {
        assert_eq!(
            BudgetAllocator.code_budget(TokenCount(100), TokenCount(300)),
            TokenCount(0)
        );
        assert_eq!(
            BudgetAllocator.code_budget(TokenCount(1000), TokenCount(300)),
            TokenCount(700)
        );
    }

    #[test]
    fn auto_max_files_follows_formula() {
        let window = TokenCount(CONTEXT_WINDOW_DEFAULT);
        assert_eq!(BudgetAllocator.auto_max_files(0, window), 5);
        assert_eq!(BudgetAllocator.auto_max_files(142, window), 12);
        assert_eq!(BudgetAllocator.auto_max_files(10_000, window), 40);
        assert_eq!(
            BudgetAllocator.auto_max_files(10_000, TokenCount(200_000)),
            63
        );
        assert_eq!(BudgetAllocator.auto_max_files(10_000, TokenCount(8_000)), 5);
    }
}
