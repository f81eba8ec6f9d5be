//! Every stage of the `aic` pipeline as pure code: bytes and configuration in,
//! values out. No filesystem, no clock, no cache.
//!
//! The stages, in pipeline order:
//! [`select::intent::IntentClassifier`] → [`rule_pack::RulePackResolver`] →
//! [`fit::budget::BudgetAllocator`] → [`select::selector::HeuristicSelector`] →
//! [`guard::ContextGuard`] → [`transform::ContentTransformerPipeline`] →
//! [`fit::ladder::SummarisationLadder`] → [`fit::assembler::PromptAssembler`]. The pipeline in
//! the `aic` crate walks the repository, reads files and moves data between them.
//! [`fit::slice::slice_to_fit`] cuts a file that is over the whole budget down to the
//! lines around the intent's terms.
//!
//! # Example
//!
//! ```
//! use aic_stages::select::intent::{IntentClassifier, TaskClass};
//! use aic_stages::fit::budget::{BudgetAllocator, BudgetInputs};
//!
//! let task = IntentClassifier.classify("fix the crash in the config loader");
//! assert_eq!(task.task_class, TaskClass::Bugfix);
//! let budget = BudgetAllocator.allocate(&BudgetInputs::default());
//! assert_eq!(budget.total.0, 123_500);
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod config;
pub mod content_hash;
pub mod facts;
pub mod fit;
pub mod guard;
pub mod lang;
pub mod language;
pub mod path_table;
pub mod pattern;
pub mod relative_path;
pub mod repo_map;
pub mod rounded;
pub mod row_codec;
pub mod rule_pack;
pub mod select;
pub mod spec;
#[cfg(test)]
mod test_rng;
pub mod transform;
pub mod work;
