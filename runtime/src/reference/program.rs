//! The program the reference evaluates: one [`Graph`] per function of a module, read with the
//! dialects' graph reader (the one place the reference touches MLIR).

use std::collections::{BTreeMap, BTreeSet};

use melior::ir::{block::BlockLike, operation::OperationLike, Module, RegionLike};

use ipu_device::numerics::Fp8Format;
use ipu_dialects::graph::read::{self, ReadError, ReadOptions};
use ipu_dialects::graph::{Graph, OpKind};
use ipu_dialects::ipu::{op_name, string_attribute, OP_NAMES};
use ipu_dialects::ElementType;

use super::ReferenceError;

/// Every function of a module: the graph of each function with a body (calls inlined, repeat
/// bodies read into their `ipu.repeat` ops), and the names of declarations.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    /// The graph of each function with a body, by symbol name.
    pub functions: BTreeMap<String, Graph>,
    /// Functions declared without a body (evaluating one is [`ReferenceError::NoBody`]).
    pub declarations: BTreeSet<String>,
    /// Functions a `func.call` or an `ipu.repeat` of the module refers to (so not an entry
    /// point). Repeat bodies named in [`Program::functions`]' graphs count too.
    pub referenced: BTreeSet<String>,
}

impl Program {
    pub fn new() -> Program {
        Program::default()
    }

    /// Adds (or replaces) function `name` with body `graph`.
    pub fn insert(&mut self, name: &str, graph: Graph) {
        self.declarations.remove(name);
        self.functions.insert(name.to_string(), graph);
    }

    /// The entry function: the only function with a body that no `func.call` or
    /// `ipu.repeat` refers to (`None` when there is not exactly one).
    pub fn entry(&self) -> Option<&str> {
        let mut bodies = BTreeSet::new();
        for graph in self.functions.values() {
            repeat_bodies(graph, &mut bodies);
        }
        let mut roots = self.functions.keys().filter(|name| {
            !self.referenced.contains(name.as_str()) && !bodies.contains(name.as_str())
        });
        match (roots.next(), roots.next()) {
            (Some(root), None) => Some(root.as_str()),
            _ => None,
        }
    }

    /// Reads every `func.func` of `module` into a graph ([`read::read_function_with`]: constants
    /// decoded, calls inlined). A function that cannot be read (an op of another dialect, a
    /// dynamic shape, a malformed attribute, recursion) fails the whole read with an error
    /// naming the op and its location: a module the reference cannot evaluate completely is
    /// refused before anything is evaluated.
    pub fn from_module(module: &Module) -> Result<Program, ReferenceError> {
        let _formats = ipu_dialects::tensor::FormatCache::enable();
        let root = module.as_operation();
        let table = read::functions(root);
        let options = ReadOptions {
            decode: Some(decode_bits),
            inline_calls: true,
            opaque: false,
        };
        let mut program = Program {
            declarations: declarations(module),
            referenced: read::referenced_functions(root).into_iter().collect(),
            ..Program::default()
        };
        let scalar_bodies = read::map_body_names(root);
        for (name, &function) in &table {
            if scalar_bodies.contains(name) {
                continue;
            }
            let read = read::read_function_with(function, &table, options).map_err(unsupported)?;
            program.functions.insert(name.clone(), read.graph);
        }
        Ok(program)
    }
}

/// The names of the body functions of every `ipu.repeat` in `graph` (nested ones too).
fn repeat_bodies<'g>(graph: &'g Graph, names: &mut BTreeSet<&'g str>) {
    for op in &graph.ops {
        if let OpKind::Repeat { name, body, .. } = &op.kind {
            names.insert(name.as_str());
            repeat_bodies(body, names);
        }
    }
}

/// Names of the module's `func.func`s without a body.
fn declarations(module: &Module) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut next = module.body().first_operation();
    while let Some(op) = next {
        next = op.next_in_block();
        let has_body = op
            .region(0)
            .ok()
            .and_then(|region| region.first_block())
            .is_some();
        if op_name(&op) == "func.func" && !has_body {
            names.extend(string_attribute(&op, "sym_name"));
        }
    }
    names
}

/// A read error as the reference reports it, at the failing op. An op the graph does not
/// model is one the reference has no semantics for.
fn unsupported(error: ReadError) -> ReferenceError {
    let op = op_name(&error.op);
    let modeled = OP_NAMES.contains(&op.as_str())
        || matches!(
            op.as_str(),
            "func.func" | "func.return" | "func.call" | "arith.constant"
        );
    ReferenceError::Unsupported {
        location: error.op.location().to_string(),
        detail: if modeled {
            error.message
        } else {
            "the reference evaluator has no semantics for this op".to_string()
        },
        op,
    }
}

/// The value of one element's bit pattern (a constant's hex payload, or a float printed as its
/// bits); FP8 codes at scale 0, through the device's numerics.
pub(super) fn decode_bits(bits: u64, element: ElementType) -> f64 {
    match element {
        ElementType::F32 => f64::from(f32::from_bits(bits as u32)),
        ElementType::F16 => half::f16::from_bits(bits as u16).to_f64(),
        ElementType::F8E4M3 => decode_fp8(bits as u8, Fp8Format::F143),
        ElementType::F8E5M2 => decode_fp8(bits as u8, Fp8Format::F152),
    }
}

fn decode_fp8(code: u8, format: Fp8Format) -> f64 {
    ipu_device::numerics::decode(code, format, 0).map_or(f64::NAN, f64::from)
}
