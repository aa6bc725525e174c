//! Device configuration: register writes replayed after a device is initialized and before an
//! application is loaded. On the simulated device the registers are the simulator's
//! parameters (clock, exchange timing, run limits), so a configuration file can model a
//! differently clocked part or a slower exchange without rebuilding anything.
//!
//! A package carries the writes its compiler relied on; a session may add a configuration
//! file whose writes are replayed after the package's (the later write of a register wins,
//! as on hardware).
//!
//! ## File format
//! One write per line, `register = value`; `#` starts a comment; blank lines are ignored.
//! Values are decimal integers (`_` separators allowed). Unknown registers, values outside
//! a register's range and malformed lines are errors that name the file and line.
//! ```text
//! # a C600 clocked down to 1.3 GHz
//! clock_hz = 1_300_000_000
//! exchange.sync_cycles = 120
//! ```

use std::path::Path;

use ipu_device::sim::SimOptions;
use ipu_device::target::{sourced, Source, Target};
use serde::{Deserialize, Serialize};

/// A simulated device register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Register {
    /// Core clock in Hz (converts cycles to seconds in profiles).
    ClockHz,
    /// Cycles of a global sync.
    ExchangeSyncCycles,
    /// Fixed cycles of one exchange phase (global sync, row start and receive latency).
    ExchangePhaseCycles,
    /// Exchange bandwidth per tile in bytes per cycle.
    ExchangeBytesPerCycle,
    /// Largest number of steps one program run may execute before it is refused as never
    /// completing.
    MaxExecutedSteps,
}

impl Register {
    pub const ALL: [Register; 5] = [
        Register::ClockHz,
        Register::ExchangeSyncCycles,
        Register::ExchangePhaseCycles,
        Register::ExchangeBytesPerCycle,
        Register::MaxExecutedSteps,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Register::ClockHz => "clock_hz",
            Register::ExchangeSyncCycles => "exchange.sync_cycles",
            Register::ExchangePhaseCycles => "exchange.phase_cycles",
            Register::ExchangeBytesPerCycle => "exchange.bytes_per_cycle",
            Register::MaxExecutedSteps => "sim.max_executed_steps",
        }
    }

    pub fn from_name(name: &str) -> Option<Register> {
        Register::ALL.into_iter().find(|r| r.name() == name)
    }

    /// Accepted values. The bounds keep the simulator's integer timing meaningful: a zero
    /// bandwidth would divide by zero, a clock outside 100 MHz..4 GHz is no IPU.
    pub const fn range(self) -> (u64, u64) {
        match self {
            Register::ClockHz => (100_000_000, 4_000_000_000),
            Register::ExchangeSyncCycles => (1, 1_000_000),
            Register::ExchangePhaseCycles => (1, 1_000_000),
            Register::ExchangeBytesPerCycle => (1, 64),
            Register::MaxExecutedSteps => (1, 1_000_000_000_000),
        }
    }
}

/// One register write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisterWrite {
    pub register: Register,
    pub value: u64,
}

/// Why a configuration is refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{origin}:{line}: expected `register = value`, found '{text}'")]
    Syntax {
        origin: String,
        line: usize,
        text: String,
    },
    #[error("{origin}:{line}: unknown register '{name}' (known: {known})")]
    UnknownRegister {
        origin: String,
        line: usize,
        name: String,
        known: String,
    },
    #[error("{origin}:{line}: '{text}' is not a non-negative integer")]
    BadValue {
        origin: String,
        line: usize,
        text: String,
    },
    #[error("{origin}: register {register} = {value} is outside {min}..={max}")]
    OutOfRange {
        origin: String,
        register: &'static str,
        value: u64,
        min: u64,
        max: u64,
    },
    #[error("reading device configuration {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// An ordered list of register writes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceConfig {
    pub writes: Vec<RegisterWrite>,
}

impl DeviceConfig {
    /// Parses the text format (see the module docs); `origin` names the source in errors.
    pub fn parse(text: &str, origin: &str) -> Result<DeviceConfig, ConfigError> {
        let mut writes = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let Some((name, value)) = content.split_once('=') else {
                return Err(ConfigError::Syntax {
                    origin: origin.to_string(),
                    line,
                    text: content.to_string(),
                });
            };
            let (name, value) = (name.trim(), value.trim());
            let register =
                Register::from_name(name).ok_or_else(|| ConfigError::UnknownRegister {
                    origin: origin.to_string(),
                    line,
                    name: name.to_string(),
                    known: Register::ALL.map(Register::name).join(", "),
                })?;
            let digits: String = value.chars().filter(|&c| c != '_').collect();
            let value = if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                None
            } else {
                digits.parse::<u64>().ok()
            }
            .ok_or_else(|| ConfigError::BadValue {
                origin: origin.to_string(),
                line,
                text: value.to_string(),
            })?;
            writes.push(RegisterWrite { register, value });
        }
        let config = DeviceConfig { writes };
        config.validate(origin)?;
        Ok(config)
    }

    /// Reads and validates a configuration file.
    pub fn read(path: &Path) -> Result<DeviceConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Every value inside its register's range.
    pub fn validate(&self, origin: &str) -> Result<(), ConfigError> {
        for write in &self.writes {
            let (min, max) = write.register.range();
            if write.value < min || write.value > max {
                return Err(ConfigError::OutOfRange {
                    origin: origin.to_string(),
                    register: write.register.name(),
                    value: write.value,
                    min,
                    max,
                });
            }
        }
        Ok(())
    }

    /// Applies the writes in order to a target table and simulator options. Values were
    /// validated, so the narrowing conversions cannot truncate.
    pub fn apply(&self, target: &mut Target, options: &mut SimOptions) {
        // Written values are measurements of this device, not table entries from a source.
        let configured = Source::Derived;
        for write in &self.writes {
            let narrow = u32::try_from(write.value).unwrap_or(u32::MAX);
            match write.register {
                Register::ClockHz => target.clock_hz = sourced(write.value as f64, configured),
                Register::ExchangeSyncCycles => {
                    target.exchange.sync_cycles = sourced(narrow, configured)
                }
                Register::ExchangePhaseCycles => {
                    target.exchange.phase_cycles = sourced(narrow, configured)
                }
                Register::ExchangeBytesPerCycle => {
                    target.exchange.bytes_per_cycle = sourced(narrow, configured)
                }
                Register::MaxExecutedSteps => options.max_executed_steps = write.value,
            }
        }
    }

    /// The text form, which [`DeviceConfig::parse`] reads back.
    pub fn to_text(&self) -> String {
        self.writes
            .iter()
            .map(|w| format!("{} = {}\n", w.register.name(), w.value))
            .collect()
    }
}
