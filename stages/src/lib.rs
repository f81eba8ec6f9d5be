//! Every stage of the `aic` pipeline as pure code: bytes and configuration in,
//! values out. No filesystem, no clock, no cache.
//!
//! The stages, in pipeline order:
//! [`intent::IntentClassifier`] → [`rule_pack::RulePackResolver`] →
//! [`budget::BudgetAllocator`] → [`selector::HeuristicSelector`] →
//! [`guard::ContextGuard`] → [`transform::ContentTransformerPipeline`] →
//! [`ladder::SummarisationLadder`] → [`assembler::PromptAssembler`]. The pipeline in
//! the `aic` crate walks the repository, reads files and moves data between them.
//! [`slice::slice_to_fit`] cuts a file that is over the whole budget down to the
//! lines around the intent's terms.
//!
//! # Example
//!
//! ```
//! use aic_stages::intent::{IntentClassifier, TaskClass};
//! use aic_stages::budget::{BudgetAllocator, BudgetInputs};
//!
//! let task = IntentClassifier.classify("fix the crash in the config loader");
//! assert_eq!(task.task_class, TaskClass::Bugfix);
//! let budget = BudgetAllocator.allocate(&BudgetInputs::default());
//! assert_eq!(budget.total.0, 123_500);
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod assembler;
pub mod budget;
pub mod config;
pub mod content_hash;
pub mod evidence;
pub mod facts;
pub mod guard;
pub mod import_graph;
pub mod intent;
#[cfg(test)]
mod intent_fixtures;
pub mod intent_text;
pub mod ladder;
pub mod lang;
pub mod language;
pub mod orientation;
pub mod pattern;
pub mod relative_path;
pub mod repo_map;
pub mod rounded;
pub mod row_codec;
pub mod rule_pack;
pub mod selector;
pub mod slice;
pub mod spec;
pub mod stack_trace;
pub mod symbols;
pub mod targets;
pub mod terms;
#[cfg(test)]
mod test_rng;
pub mod tokens;
pub mod transform;
pub mod work;
