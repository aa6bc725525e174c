//! Progress on long steps (compiling, loading 1,472 tile images, running) for a person
//! watching a terminal. With stderr redirected (scripts, CI, lit) nothing is drawn, so logs
//! and captured output stay byte-for-byte what the steps printed.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// One spinner per step, on stderr when it is a terminal; inert otherwise.
pub struct Steps {
    bar: Option<ProgressBar>,
}

impl Steps {
    pub fn new(total: u64) -> Steps {
        if !std::io::stderr().is_terminal() {
            return Steps { bar: None };
        }
        let bar = ProgressBar::new(total);
        if let Ok(style) = ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg} {elapsed}") {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(120));
        Steps { bar: Some(bar) }
    }

    /// Steps that are never drawn (a run inside another program, which owns the terminal).
    pub fn hidden() -> Steps {
        Steps { bar: None }
    }

    /// Starts step `message` (finishing the previous one).
    pub fn step(&self, message: &'static str) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(message);
        }
    }

    /// Runs `f` with the bar hidden, so lines printed by `f` are not drawn over.
    pub fn suspend<T>(&self, f: impl FnOnce() -> T) -> T {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }
}

impl Drop for Steps {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
