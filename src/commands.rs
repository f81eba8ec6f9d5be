//! One module per subcommand.

pub mod cache;
pub mod compile;
pub mod diagnostics;
pub mod doctor;
pub mod hook;
pub mod init;
pub mod inspect;
pub mod install;
pub mod precompute;
pub mod spec;
