//! Logging to stderr with `tracing`: warnings by default, the seed's §14 decision
//! trail with `-v`, pipeline internals with `-vv`, nothing but errors with `-q`.
//! `RUST_LOG` wins over the flags.

use tracing_subscriber::EnvFilter;

/// Installs the stderr subscriber. `verbose` and `quiet` are the counts of `-v`
/// and `-q` on the command line.
pub fn init(verbose: u8, quiet: u8) {
    let level = match (verbose, quiet) {
        (_, q) if q > 0 => "error",
        (0, _) => "warn",
        (1, _) => "info",
        (2, _) => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("aic={level},aic_stages={level},warn")));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .with_level(true)
        .try_init();
}
