//! Tracing setup for the binaries: `RUST_LOG` filters (default `warn`), text or JSON lines on
//! stderr. Libraries never install a subscriber.

use tracing_subscriber::{fmt, EnvFilter};

/// Installs the global subscriber; `format` is `text` or `json`.
pub fn init(format: &str) {
    init_with_default(format, "warn");
}

/// Installs the global subscriber with `default_filter` when `RUST_LOG` is unset or invalid.
pub fn init_with_default(format: &str, default_filter: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    let builder = fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = if format == "json" {
        builder.json().try_init()
    } else {
        builder.with_ansi(false).try_init()
    };
}
