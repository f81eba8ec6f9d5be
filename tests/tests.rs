//! End-to-end tests of the `aic` binary: one test binary, a module per area
//! (ripgrep's `tests/tests.rs` layout).

mod bad_input;
mod bench;
mod budget;
mod cache;
mod cli;
#[cfg(unix)]
mod daemon;
mod determinism;
mod diff;
mod formats;
mod git_recency;
mod golden;
mod guard;
mod hooks;
mod install;
mod mcp;
mod real_sources;
mod records;
mod remote_cache;
mod rules;
mod spec;
mod support;
mod task_text;
mod tokens;
mod tree;
