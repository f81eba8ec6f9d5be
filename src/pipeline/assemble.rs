//! The `assemble` phase: the prompt text, in the fixed section order of the
//! [`PromptAssembler`](aic_stages::fit::assembler::PromptAssembler), in the
//! plan's format — task, classification, session context, key
//! constraints, the file blocks as fitted, then every constraint.

use aic_stages::fit::tokens::TokenCount;
use tracing::info;

use crate::pipeline::SessionInput;
use crate::pipeline::fit::{Fitted, prompt_parts};
use crate::pipeline::prepare::Plan;

/// A compiled prompt.
#[derive(Debug)]
pub struct Prompt {
    /// The text.
    pub text: String,
    /// Its exact tokens (as the fit counted them).
    pub tokens: TokenCount,
}

/// Runs the `assemble` phase.
pub fn assemble(plan: &Plan, session: &SessionInput, fitted: &Fitted<'_>) -> Prompt {
    let text = plan.assembler().assemble(
        &prompt_parts(plan, session, &fitted.notes, fitted.structure.as_deref()),
        &fitted.blocks,
    );
    info!(
        "Compiled prompt: {} tokens (budget {}, overhead {})",
        fitted.tokens, plan.budget.total, fitted.overhead
    );
    Prompt {
        text,
        tokens: fitted.tokens,
    }
}
