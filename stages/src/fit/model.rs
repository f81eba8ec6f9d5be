//! Model adapters (`docs/budget.md`, "Models"): what a compile changes for a
//! known model — the encoding it counts in, the model's context window, a
//! safety margin where the model's own tokenizer is not available, and the
//! prompt layout it reads best. An unknown or absent model id gets
//! [`ModelProfile::default`]: `cl100k_base`, no known window, no margin,
//! Markdown.

use serde::Serialize;

use crate::fit::assembler::PromptFormat;
use crate::fit::budget::model_context_window;
use crate::fit::tokens::{TokenCount, TokenCounter, Tokenizer};

/// The margin applied to budgets for Claude models, in percent: a Claude
/// prompt is counted in `cl100k_base` and must fit `budget × 100 / 125` of
/// those tokens. Anthropic publishes no offline tokenizer for Claude 3 and
/// later; third-party measurements put Claude's counts 16 % (English prose)
/// to 30 % (Python) above GPT-4o's, and `cl100k_base` counts code about as
/// `o200k_base` does, so 25 % covers code, which is most of a prompt.
pub const CLAUDE_MARGIN_PERCENT: u32 = 25;

/// A model family known by its id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ModelFamily {
    /// Anthropic's Claude models (`claude-…`).
    Claude,
    /// OpenAI models that use `o200k_base`: GPT-4o, GPT-4.1, GPT-5, o1, o3, o4….
    OpenAiO200k,
    /// Other OpenAI models (GPT-4, GPT-4 Turbo, GPT-3.5): `cl100k_base`.
    OpenAiCl100k,
    /// Google's Gemini models.
    Gemini,
    /// Any other id, or none: the generic profile.
    #[default]
    Generic,
}

/// What a compile uses for its model: built from the model id by
/// [`ModelProfile::for_model`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelProfile {
    /// The family the id belongs to.
    pub family: ModelFamily,
    /// The encoding every count of the compile is made in.
    pub tokenizer: Tokenizer,
    /// The model's context window, when the family is known.
    pub context_window: Option<TokenCount>,
    /// Percent by which the model's tokens may outnumber the encoding's; a
    /// budget of `B` model tokens fits `B × 100 / (100 + margin)` counted ones.
    pub margin_percent: u32,
    /// The layout used when neither the request nor `output.format` sets one.
    pub layout: PromptFormat,
}

impl ModelProfile {
    /// The profile of `model_id` (letter case and a provider prefix such as
    /// `openai/` are ignored); the default profile for `None` or an id of no
    /// known family.
    ///
    /// # Examples
    ///
    /// ```
    /// use aic_stages::fit::assembler::PromptFormat;
    /// use aic_stages::fit::model::ModelProfile;
    /// use aic_stages::fit::tokens::Tokenizer;
    /// let gpt = ModelProfile::for_model(Some("gpt-4o"));
    /// assert_eq!(gpt.tokenizer, Tokenizer::O200k);
    /// assert_eq!(gpt.layout, PromptFormat::Markdown);
    /// let claude = ModelProfile::for_model(Some("anthropic/claude-sonnet-4-5"));
    /// assert_eq!(claude.tokenizer, Tokenizer::Cl100k);
    /// assert_eq!(claude.layout, PromptFormat::Xml);
    /// assert_eq!(claude.margin_percent, 25);
    /// assert_eq!(ModelProfile::for_model(Some("my-local-model")), ModelProfile::default());
    /// ```
    pub fn for_model(model_id: Option<&str>) -> Self {
        let Some(model_id) = model_id else {
            return Self::default();
        };
        let lower = model_id.trim().to_ascii_lowercase();
        let id = lower.rsplit('/').next().unwrap_or(&lower);
        let family = family_of(id);
        let context_window = model_context_window(id);
        match family {
            ModelFamily::Claude => Self {
                family,
                tokenizer: Tokenizer::Cl100k,
                context_window,
                margin_percent: CLAUDE_MARGIN_PERCENT,
                layout: PromptFormat::Xml,
            },
            ModelFamily::OpenAiO200k => Self {
                family,
                tokenizer: Tokenizer::O200k,
                context_window,
                margin_percent: 0,
                layout: PromptFormat::Markdown,
            },
            ModelFamily::OpenAiCl100k | ModelFamily::Gemini | ModelFamily::Generic => Self {
                family,
                context_window,
                ..Self::default()
            },
        }
    }

    /// The counter of the profile's encoding.
    pub fn counter(&self) -> TokenCounter {
        TokenCounter::new(self.tokenizer)
    }

    /// `budget` model tokens expressed in counted tokens: less the margin,
    /// rounded down.
    pub fn counted(&self, budget: TokenCount) -> TokenCount {
        if self.margin_percent == 0 {
            return budget;
        }
        TokenCount::from_u64(budget.get() * 100 / (100 + u64::from(self.margin_percent)))
    }
}

/// The family of a lower-case id without its provider prefix.
fn family_of(id: &str) -> ModelFamily {
    let o_series = ["o1", "o3", "o4"]
        .iter()
        .any(|p| id == *p || id.starts_with(&format!("{p}-")));
    if id.starts_with("claude") {
        ModelFamily::Claude
    } else if o_series
        || id.starts_with("gpt-4o")
        || id.starts_with("gpt-4.1")
        || id.starts_with("gpt-4.5")
        || id.starts_with("gpt-5")
        || id.starts_with("chatgpt-4o")
    {
        ModelFamily::OpenAiO200k
    } else if id.starts_with("gpt-4") || id.starts_with("gpt-3.5") {
        ModelFamily::OpenAiCl100k
    } else if id.starts_with("gemini") {
        ModelFamily::Gemini
    } else {
        ModelFamily::Generic
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use test_case::test_case;

    #[test_case("gpt-4o", Tokenizer::O200k; "gpt-4o")]
    #[test_case("gpt-4o-mini-2024-07-18", Tokenizer::O200k; "gpt-4o mini")]
    #[test_case("GPT-4.1-mini", Tokenizer::O200k; "gpt-4.1")]
    #[test_case("gpt-5", Tokenizer::O200k; "gpt-5")]
    #[test_case("openai/o3", Tokenizer::O200k; "o3")]
    #[test_case("o4-mini", Tokenizer::O200k; "o4-mini")]
    #[test_case("o1-preview", Tokenizer::O200k; "o1")]
    #[test_case("gpt-4-turbo", Tokenizer::Cl100k; "gpt-4 turbo")]
    #[test_case("gpt-3.5-turbo", Tokenizer::Cl100k; "gpt-3.5")]
    #[test_case("claude-opus-4-1", Tokenizer::Cl100k; "claude")]
    #[test_case("gemini-2.5-pro", Tokenizer::Cl100k; "gemini")]
    #[test_case("o1x", Tokenizer::Cl100k; "not the o-series")]
    #[test_case("llama3", Tokenizer::Cl100k; "unknown")]
    fn ids_pick_the_tokenizer(id: &str, tokenizer: Tokenizer) {
        assert_eq!(ModelProfile::for_model(Some(id)).tokenizer, tokenizer);
    }

    #[test]
    fn claude_budgets_keep_a_margin() {
        let claude = ModelProfile::for_model(Some("claude-sonnet-4-5"));
        assert_eq!(claude.counted(TokenCount(8_000)), TokenCount(6_400));
        assert_eq!(claude.context_window, Some(TokenCount(200_000)));
        let gpt = ModelProfile::for_model(Some("gpt-4o"));
        assert_eq!(gpt.counted(TokenCount(8_000)), TokenCount(8_000));
        assert_eq!(gpt.context_window, Some(TokenCount(128_000)));
    }
}
