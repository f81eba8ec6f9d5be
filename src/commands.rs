//! One module per subcommand.

pub mod cache;
pub mod compile;
pub mod inspect;
pub mod precompute;
pub mod spec;
