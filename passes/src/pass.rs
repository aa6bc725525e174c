//! The pass trait: one Rust type per pass, with typed options, a summary, an argument name
//! (`ipu-...`), statistics and a tracing span per run.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use melior::{
    ir::{operation::OperationLike, r#type::TypeId, OperationRef},
    pass::{create_external, ExternalPass, RunExternalPass},
    ContextRef,
};

use crate::pipeline::PassOptions;

/// Why a pass failed. The pass has already reported diagnostics at the offending ops (through
/// `ipu_dialects::diagnostics`); this carries a one-line summary for logs.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct PassFailure(pub String);

/// Per-run state handed to a pass: statistics and the context.
pub struct PassRun<'s> {
    statistics: &'s mut BTreeMap<&'static str, (u64, &'static str)>,
}

impl PassRun<'_> {
    /// Adds `amount` to the statistic `name` (described by `help` in `--mlir-pass-statistics`).
    pub fn statistic(&mut self, name: &'static str, help: &'static str, amount: u64) {
        let entry = self.statistics.entry(name).or_insert((0, help));
        entry.0 += amount;
    }
}

/// A pass written in Rust.
///
/// ```ignore
/// pass_options! { pub struct MyOptions for "ipu-my-pass" { /// Help. limit: u32 = 4 } }
/// #[derive(Clone)]
/// pub struct MyPass { options: MyOptions }
/// impl Pass for MyPass {
///     type Options = MyOptions;
///     const ARGUMENT: &'static str = "ipu-my-pass";
///     const SUMMARY: &'static str = "One line for --list-passes";
///     fn new(options: MyOptions) -> Self { MyPass { options } }
///     fn options(&self) -> &MyOptions { &self.options }
///     fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> { Ok(()) }
/// }
/// ```
pub trait Pass: Send + Sync + 'static {
    type Options: PassOptions;
    /// The pipeline name, `ipu-<verb>-<noun>`.
    const ARGUMENT: &'static str;
    /// One line for `--list-passes`.
    const SUMMARY: &'static str;
    /// The op the pass runs on (`""`: any op it is nested under).
    const ANCHOR: &'static str = "";

    fn new(options: Self::Options) -> Self;
    fn options(&self) -> &Self::Options;
    /// Runs on `op`; on failure, report diagnostics at the ops and return `Err`.
    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure>;
}

/// Object-safe view of a [`Pass`] for the registry and pass manager.
pub trait DynPass: Send + Sync {
    fn argument(&self) -> &'static str;
    fn summary(&self) -> &'static str;
    fn anchor(&self) -> &'static str;
    /// The options as `{a=1 b=2}`.
    fn options_text(&self) -> String;
    fn run_dyn(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure>;
}

impl<P: Pass> DynPass for P {
    fn argument(&self) -> &'static str {
        P::ARGUMENT
    }
    fn summary(&self) -> &'static str {
        P::SUMMARY
    }
    fn anchor(&self) -> &'static str {
        P::ANCHOR
    }
    fn options_text(&self) -> String {
        self.options().print()
    }
    fn run_dyn(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        self.run(op, run)
    }
}

/// Statistics of every pass instance in a pass manager, in pipeline order:
/// (instance index, pass argument) -> statistic -> (value, help).
pub type StatisticsTable =
    BTreeMap<(usize, &'static str), BTreeMap<&'static str, (u64, &'static str)>>;

/// Shared statistics sink (MLIR clones passes per thread, so the sink is behind a lock).
#[derive(Clone, Default)]
pub struct Statistics(Arc<Mutex<StatisticsTable>>);

impl Statistics {
    pub fn snapshot(&self) -> StatisticsTable {
        self.0.lock().map(|table| table.clone()).unwrap_or_default()
    }

    fn merge(
        &self,
        key: (usize, &'static str),
        values: BTreeMap<&'static str, (u64, &'static str)>,
    ) {
        if let Ok(mut table) = self.0.lock() {
            let entry = table.entry(key).or_default();
            for (name, (value, help)) in values {
                entry.entry(name).or_insert((0, help)).0 += value;
            }
        }
    }
}

/// The MLIR external pass that runs one of our passes.
#[derive(Clone)]
struct ExternalAdapter {
    pass: Arc<dyn DynPass>,
    instance: usize,
    statistics: Statistics,
}

impl<'c> RunExternalPass<'c> for ExternalAdapter {
    fn initialize(&mut self, _context: ContextRef<'c>) {}

    fn run(&mut self, operation: OperationRef<'c, '_>, pass: ExternalPass<'_>) {
        let argument = self.pass.argument();
        let span = tracing::info_span!("ipu.pass", pass = %argument);
        let _entered = span.enter();
        let started = Instant::now();
        let mut statistics = BTreeMap::new();
        let result = {
            let mut run = PassRun {
                statistics: &mut statistics,
            };
            self.pass.run_dyn(operation, &mut run)
        };
        self.statistics.merge((self.instance, argument), statistics);
        let elapsed_ms = started.elapsed().as_millis() as u64;
        let success = result.is_ok();
        let op_name = operation
            .name()
            .as_string_ref()
            .as_str()
            .unwrap_or("?")
            .to_string();
        tracing::info!(pass = %argument, op = %op_name, elapsed_ms, success, "pass finished");
        if let Err(failure) = result {
            tracing::debug!(pass = argument, reason = %failure, "pass failed");
            pass.signal_failure();
        }
    }
}

/// Type ids must be distinct 8-byte-aligned addresses that live forever, one per pass argument.
fn type_id_for(argument: &'static str) -> TypeId<'static> {
    #[repr(align(8))]
    struct Slot(#[allow(dead_code)] u64);
    static SLOTS: Mutex<BTreeMap<&'static str, usize>> = Mutex::new(BTreeMap::new());
    let address = match SLOTS.lock() {
        Ok(mut slots) => *slots
            .entry(argument)
            .or_insert_with(|| Box::leak(Box::new(Slot(0))) as *const Slot as usize),
        Err(_) => Box::leak(Box::new(Slot(0))) as *const Slot as usize,
    };
    // SAFETY: the address points to a leaked, 8-byte-aligned `Slot` that is never freed.
    TypeId::create(unsafe { &*(address as *const Slot) })
}

/// Wraps one of our passes as an MLIR pass. `name` is the display name (`IpuCanonicalize`).
pub fn to_mlir_pass(
    pass: Arc<dyn DynPass>,
    instance: usize,
    statistics: Statistics,
) -> melior::pass::Pass {
    let argument = pass.argument();
    let anchor = pass.anchor();
    let summary = pass.summary();
    let name = display_name(argument);
    create_external(
        ExternalAdapter {
            pass,
            instance,
            statistics,
        },
        type_id_for(argument),
        &name,
        argument,
        summary,
        anchor,
        &[],
    )
}

/// `ipu-canonicalize` -> `IpuCanonicalize`, the way MLIR names pass classes.
pub fn display_name(argument: &str) -> String {
    argument
        .split('-')
        .map(|part| {
            let mut characters = part.chars();
            match characters.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + characters.as_str(),
                None => String::new(),
            }
        })
        .collect()
}
