//! `aic`, the Agent Input Compiler: the composition root and all I/O.
//!
//! The pure pipeline stages live in [`aic_stages`]; this crate resolves the project,
//! loads configuration and rule packs, scans the repository ([`scan`]), runs the
//! per-file stage in parallel and the single-threaded selection, ladder and
//! assembly ([`runner`]), and exposes it all as the `aic` command line ([`cli`]). Task
//! specifications compile through [`aic_stages::spec`] and the database cache in
//! [`spec_cache`] (`aic spec`).
//!
//! # Example
//!
//! ```no_run
//! use aic::runner::{CompilationRequest, compile};
//!
//! let compilation = compile(&CompilationRequest {
//!     intent: "how does the selector score files".to_owned(),
//!     project_root: ".".into(),
//!     config_path: None,
//!     budget: None,
//!     raw: false,
//!     model_id: None,
//!     editor_id: "cli".to_owned(),
//!     related_files: Vec::new(),
//!     trace_all: false,
//!     no_cache: false,
//!     use_prompt_cache: false,
//!     ..CompilationRequest::default()
//! })?;
//! assert!(compilation.meta.tokens_compiled <= compilation.meta.budget);
//! # Ok::<(), aic::error::CompileError>(())
//! ```

pub mod cli;
pub mod commands;
pub mod config;
pub mod diagnostics;
pub mod error;
pub mod facts_cache;
pub mod layout;
pub mod logging;
pub mod mcp;
pub mod memo;
pub mod printer;
pub mod records;
pub mod runner;
pub mod scan;
pub mod server_sessions;
pub mod session;
pub mod spec_cache;
pub mod vcs;
