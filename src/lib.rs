//! `aic`, the Agent Input Compiler: the composition root and all I/O.
//!
//! The pure pipeline stages live in [`aic_stages`] and the database in
//! [`aic_storage`]; this crate moves data between them. Its parts:
//!
//! - [`pipeline`]: one compile as a list of phases — prepare, scan, select,
//!   facts, fit, assemble, account — and `precompute`;
//! - [`cache`]: the per-file cache, the in-process memo, the spec cache's
//!   rows (the whole-prompt cache is [`pipeline::prompt_cache`]);
//! - [`history`]: what aic remembers of compiles, agent conversations and
//!   server processes, and the diagnostics built from it;
//! - [`host`], [`home`], [`clock`], [`root`]: the machine a run uses — the
//!   database and memo, the home directory, time, the project-root policy;
//! - [`args`] and [`commands`]: the `aic` command line; [`answer`]: a
//!   compile's answer as the command line shows it, which the commands and
//!   [`daemon`] share; [`mcp`]: the MCP server; [`hook`]: the editor hooks;
//! - [`bench`](mod@bench): `aic bench`, the benchmark harness across repositories.
//!
//! `docs/architecture.md` draws the phases and the data between them.
//!
//! # Example
//!
//! ```no_run
//! use aic::host::Host;
//! use aic::pipeline::{CompilationRequest, compile};
//!
//! let host = Host::from_env();
//! let compilation = compile(
//!     &CompilationRequest {
//!         intent: "how does the selector score files".to_owned(),
//!         project_root: ".".into(),
//!         editor_id: "cli".to_owned(),
//!         ..CompilationRequest::default()
//!     },
//!     &host,
//! )?;
//! assert!(compilation.meta.tokens_compiled <= compilation.meta.budget);
//! # Ok::<(), aic::error::CompileError>(())
//! ```

#![forbid(unsafe_code)]

pub mod answer;
pub mod args;
pub mod bench;
pub mod cache;
pub mod clipboard;
pub mod clock;
pub mod commands;
pub mod config;
pub mod daemon;
pub mod error;
pub mod history;
pub mod home;
pub mod hook;
pub mod host;
pub mod logging;
pub mod mcp;
pub mod memory;
pub mod pipeline;
pub mod printer;
pub mod resident;
pub mod root;
pub mod rules;
