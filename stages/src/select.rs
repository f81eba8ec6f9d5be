//! Selection: what the task is about and which files (and, inside them,
//! which definitions) serve it. The intent is classified and its evidence
//! read (names, paths, stack-trace frames, error strings), candidates are
//! scored against it, and the import graph and orientation fill in what the
//! intent does not say.

pub mod definitions;
pub mod evidence;
pub mod file_kind;
pub mod import_graph;
pub mod intent;
#[cfg(test)]
mod intent_fixtures;
pub mod intent_text;
pub mod orientation;
pub mod selector;
pub mod stack_trace;
pub mod symbols;
pub mod targets;
pub mod term_list;
pub mod terms;
