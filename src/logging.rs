//! Logging to stderr with `tracing`: warnings by default, the decision trail
//! with `-v`, pipeline internals with `-vv`, nothing but errors with `-q`.
//! `RUST_LOG` wins over the flags.
//!
//! Lines read like a compiler's: `warning: …`, `error: …`, `note: …`
//! ([`NOTE_TARGET`]); the trail (`info`) is
//! printed as is, internals are prefixed `debug:`.

use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The `tracing` target of a note: a warning-level line printed as `note: …`
/// (something the user should know that is not a problem, e.g. which
/// directory was taken as the project).
pub const NOTE_TARGET: &str = "aic::note";

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
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        // rmcp logs every error response it sends at `warn`: the client
        // already gets those, so the server's stderr keeps rmcp's errors only.
        EnvFilter::new(format!(
            "aic={level},aic_stages={level},rmcp=error,opendal=error,reqsign=error,warn"
        ))
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        // A closed stderr (`aic compile -v 2>&1 | head`) loses the trail, not
        // the compile: reporting the failed write would print to the same
        // closed stderr, and printing there panics.
        .log_internal_errors(false)
        .event_format(PlainFormat)
        .try_init();
}

/// `warning: message`, `error: message`, bare `info` lines, `debug: message`.
struct PlainFormat;

impl<S, N> FormatEvent<S, N> for PlainFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        context: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let prefix = match *event.metadata().level() {
            Level::WARN if event.metadata().target() == NOTE_TARGET => "note: ",
            Level::ERROR => "error: ",
            Level::WARN => "warning: ",
            Level::INFO => "",
            Level::DEBUG => "debug: ",
            Level::TRACE => "trace: ",
        };
        writer.write_str(prefix)?;
        context
            .field_format()
            .format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}
