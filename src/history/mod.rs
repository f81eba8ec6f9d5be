//! What aic remembers of its work, per project, in the database — never file
//! contents, never a secret:
//!
//! - [`compilations`]: the compilation log (one row per compile, with its
//!   selection as paths and scores), guard findings, telemetry, quality
//!   snapshots, the config history and the MCP tool-call log;
//! - [`conversations`]: an agent conversation's steps, which the next compile
//!   of the conversation reads (deduplication, the session header, the budget
//!   clamp);
//! - [`servers`]: the lifecycle of MCP server processes and their start-up
//!   self-check;
//! - [`diagnostics`]: the reports built from all of it (`aic status`, `aic
//!   last`, `aic projects`, `aic chat-summary`, `aic quality`, and the MCP
//!   tools of the same names).

pub mod compilations;
pub mod conversations;
pub mod diagnostics;
pub mod servers;
