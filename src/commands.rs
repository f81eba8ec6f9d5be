//! One module per subcommand.

pub mod compile;
pub mod inspect;
