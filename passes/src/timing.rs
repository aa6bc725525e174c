//! `--mlir-timing`: wall time per pipeline element, measured by marker passes the pass manager
//! runs before and after each element (so upstream passes are timed the same way as ours),
//! reported as a list or as a tree that follows the pipeline's nesting.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use melior::{
    ir::{r#type::TypeId, OperationRef},
    pass::{create_external, ExternalPass},
};

use crate::manager::Resolved;
use crate::pass::display_name;

/// One timed element, in pre-order.
#[derive(Clone, Debug)]
struct Row {
    name: String,
    depth: usize,
    is_pipeline: bool,
}

/// Shared timing state.
#[derive(Clone)]
pub struct Timing {
    rows: Arc<Vec<Row>>,
    totals: Arc<Mutex<BTreeMap<usize, Duration>>>,
}

thread_local! {
    static STARTS: RefCell<BTreeMap<usize, Instant>> = const { RefCell::new(BTreeMap::new()) };
}

impl Timing {
    pub fn new(elements: &[Resolved]) -> Timing {
        let mut rows = Vec::new();
        collect(elements, 0, &mut rows);
        Timing {
            rows: Arc::new(rows),
            totals: Arc::default(),
        }
    }

    /// A marker pass that starts (or stops) the clock of element `index` on this thread.
    pub fn marker(&self, index: usize, start: bool) -> melior::pass::Pass {
        let totals = self.totals.clone();
        let callback = move |_op: OperationRef, _pass: ExternalPass| {
            if start {
                STARTS.with(|starts| starts.borrow_mut().insert(index, Instant::now()));
            } else if let Some(started) = STARTS.with(|starts| starts.borrow_mut().remove(&index)) {
                if let Ok(mut totals) = totals.lock() {
                    *totals.entry(index).or_default() += started.elapsed();
                }
            }
        };
        #[repr(align(8))]
        struct MarkerId;
        static MARKER_ID: MarkerId = MarkerId;
        create_external(
            callback,
            TypeId::create(&MARKER_ID),
            "TimingMarker",
            "ipu-timing-marker",
            "",
            "",
            &[],
        )
    }

    /// The report, as mlir-opt prints it (`list` sums passes by name; `tree` follows nesting).
    pub fn report(&self, tree: bool, total: Duration) -> String {
        let totals = self
            .totals
            .lock()
            .map(|totals| totals.clone())
            .unwrap_or_default();
        let seconds = |duration: Duration| duration.as_secs_f64();
        let total_seconds = seconds(total).max(1e-9);
        let mut text = String::new();
        text.push_str(
            "===-------------------------------------------------------------------------===\n",
        );
        text.push_str("                         ... Execution time report ...\n");
        text.push_str(
            "===-------------------------------------------------------------------------===\n",
        );
        text.push_str(&format!(
            "  Total Execution Time: {:.4} seconds\n\n",
            seconds(total)
        ));
        text.push_str("  ----Wall Time----  ----Name----\n");
        let line = |value: Duration, name: &str, indent: usize| {
            format!(
                "    {:.4} ({:5.1}%)  {}{}\n",
                seconds(value),
                100.0 * seconds(value) / total_seconds,
                "  ".repeat(indent),
                name
            )
        };
        if tree {
            for (index, row) in self.rows.iter().enumerate() {
                let value = totals.get(&index).copied().unwrap_or_default();
                let name = if row.is_pipeline {
                    format!("'{}' Pipeline", row.name)
                } else {
                    row.name.clone()
                };
                text.push_str(&line(value, &name, row.depth));
            }
        } else {
            let mut by_name: BTreeMap<&str, Duration> = BTreeMap::new();
            for (index, row) in self.rows.iter().enumerate() {
                if !row.is_pipeline {
                    *by_name.entry(row.name.as_str()).or_default() +=
                        totals.get(&index).copied().unwrap_or_default();
                }
            }
            let mut sorted: Vec<(&str, Duration)> = by_name.into_iter().collect();
            sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            for (name, value) in sorted {
                text.push_str(&line(value, name, 0));
            }
        }
        text.push_str(&line(total, "Total", 0));
        text
    }
}

fn collect(elements: &[Resolved], depth: usize, rows: &mut Vec<Row>) {
    for element in elements {
        match element {
            Resolved::Nested { anchor, elements } => {
                rows.push(Row {
                    name: anchor.clone(),
                    depth,
                    is_pipeline: true,
                });
                collect(elements, depth + 1, rows);
            }
            other => {
                let argument = other.argument().unwrap_or("?");
                let name = format!("{} ({argument})", display_name(argument));
                rows.push(Row {
                    name,
                    depth,
                    is_pipeline: false,
                });
            }
        }
    }
}
