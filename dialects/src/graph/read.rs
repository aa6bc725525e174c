//! Reading `ipu` IR into the plain-data [`Graph`]: one `func.func` body (and the bodies of the
//! `ipu.repeat` ops in it), its arguments, `arith.constant`s and `ipu` ops in program order,
//! with the IR handles a pass needs to write results back.
//!
//! Conversions a planner inserted (marked [`INSERTED`]) are looked through, so a planned module
//! reads back as the graph that was planned.

use std::collections::BTreeMap;

use melior::ir::{
    block::BlockLike, operation::OperationLike, BlockRef, OperationRef, RegionLike, Value,
    ValueLike,
};

use super::{Graph, OpKind, Origin, ValueId};
use crate::ipu::{self as ops, op_name, string_attribute, CastOp, RearrangeOp};
use crate::tensor::TensorInfo;
use crate::ElementType;

/// Marks conversions the planner inserted.
pub const INSERTED: &str = "ipu.inserted";

/// One function read into a graph, with the IR handles to write back to.
pub struct FunctionGraph<'c, 'a> {
    pub name: String,
    pub function: OperationRef<'c, 'a>,
    pub graph: Graph,
    /// The graph's ops in the IR, in graph order.
    pub ops: Vec<OperationRef<'c, 'a>>,
    /// The IR value of each graph value.
    pub values: Vec<Value<'c, 'a>>,
    /// Bodies of `ipu.repeat` ops by op index.
    pub bodies: BTreeMap<usize, FunctionGraph<'c, 'a>>,
}

/// A problem reading the IR, reported at `op`.
pub struct ReadError<'c, 'a> {
    pub op: OperationRef<'c, 'a>,
    pub message: String,
}

fn key(value: Value) -> usize {
    value.to_raw().ptr as usize
}

/// The entry block of a function with a body.
pub fn entry_block<'c, 'a>(function: OperationRef<'c, 'a>) -> Option<BlockRef<'c, 'a>> {
    function.regions().next()?.first_block()
}

/// `func.func` ops with a body directly in `module`, by symbol name.
pub fn functions<'c, 'a>(module: OperationRef<'c, 'a>) -> BTreeMap<String, OperationRef<'c, 'a>> {
    let mut table = BTreeMap::new();
    let Some(block) = module
        .regions()
        .next()
        .and_then(|region| region.first_block())
    else {
        return table;
    };
    let mut next = block.first_operation();
    while let Some(op) = next {
        if op_name(&op) == "func.func" {
            if let Some(name) = string_attribute(&op, "sym_name") {
                if entry_block(op).is_some() {
                    table.insert(name, op);
                }
            }
        }
        next = op.next_in_block();
    }
    table
}

/// Names of functions used as `ipu.repeat` bodies.
pub fn body_names(module: OperationRef) -> Vec<String> {
    let mut names = Vec::new();
    module.walk(melior::ir::operation::WalkOrder::PreOrder, |op| {
        if op_name(&op) == ops::RepeatOp::NAME {
            if let Some(body) = op.attribute("body").ok().and_then(ops::symbol_value) {
                names.push(body);
            }
        }
        melior::ir::operation::WalkResult::Advance
    });
    names.sort();
    names.dedup();
    names
}

/// Largest magnitude of a splat dense constant (`dense<2.5>`), for FP8 scales.
fn splat_max_abs(op: OperationRef) -> Option<f64> {
    let text = op.attribute("value").ok()?.to_string();
    let inner = text.strip_prefix("dense<")?.split('>').next()?;
    inner.trim().parse::<f64>().ok().map(f64::abs)
}

/// The shape and element type of a tensor value.
fn tensor_of(value: Value) -> Result<(Vec<u64>, ElementType), String> {
    let info = TensorInfo::from_type(value.r#type()).map_err(|e| e.to_string())?;
    Ok((info.shape.iter().map(|&s| s as u64).collect(), info.element))
}

/// A function being read: the graph so far and where each IR value went.
struct Reader<'c, 'a, 't> {
    table: &'t BTreeMap<String, OperationRef<'c, 'a>>,
    graph: Graph,
    /// Graph value of each IR value (by its raw pointer).
    ids: BTreeMap<usize, ValueId>,
    values: Vec<Value<'c, 'a>>,
    ops: Vec<OperationRef<'c, 'a>>,
    bodies: BTreeMap<usize, FunctionGraph<'c, 'a>>,
}

fn fail<'c, 'a>(op: OperationRef<'c, 'a>, message: impl Into<String>) -> ReadError<'c, 'a> {
    ReadError {
        op,
        message: message.into(),
    }
}

impl<'c, 'a> Reader<'c, 'a, '_> {
    /// Records that IR value `value` is graph value `id`.
    fn bind(&mut self, value: Value<'c, 'a>, id: ValueId) {
        self.ids.insert(key(value), id);
        self.values.push(value);
    }

    /// The graph values of `op`'s operands.
    fn operands(&self, op: OperationRef<'c, 'a>) -> Result<Vec<ValueId>, ReadError<'c, 'a>> {
        op.operands()
            .enumerate()
            .map(|(index, value)| {
                self.ids.get(&key(value)).copied().ok_or_else(|| {
                    fail(
                        op,
                        format!("operand #{index} is not a planned tensor value"),
                    )
                })
            })
            .collect()
    }

    /// The function's arguments, as argument values.
    fn arguments(
        &mut self,
        function: OperationRef<'c, 'a>,
        block: BlockRef<'c, 'a>,
    ) -> Result<(), ReadError<'c, 'a>> {
        for index in 0..block.argument_count() {
            let Ok(argument) = block.argument(index) else {
                continue;
            };
            let value: Value = argument.into();
            let (shape, element) =
                tensor_of(value).map_err(|e| fail(function, format!("argument #{index}: {e}")))?;
            let id = self.graph.add_value(shape, element, Origin::Argument);
            self.bind(value, id);
        }
        Ok(())
    }

    /// An `arith.constant`: a constant value (its largest magnitude when it is a splat).
    fn constant(&mut self, op: OperationRef<'c, 'a>) -> Result<(), ReadError<'c, 'a>> {
        let Ok(result) = op.result(0) else {
            return Ok(());
        };
        let value: Value = result.into();
        let (shape, element) = tensor_of(value).map_err(|e| fail(op, e))?;
        let id = self.graph.add_value(shape, element, Origin::Constant);
        self.graph.values[id].max_abs = splat_max_abs(op);
        self.bind(value, id);
        Ok(())
    }

    /// What `op` computes, reading the body of a repeat.
    fn kind(
        &mut self,
        op: OperationRef<'c, 'a>,
        name: &str,
        operands: usize,
    ) -> Result<OpKind, ReadError<'c, 'a>> {
        Ok(match name {
            ops::MatmulOp::NAME => OpKind::Matmul {
                transpose_lhs: ops::flag(&op, "transpose_lhs"),
                transpose_rhs: ops::flag(&op, "transpose_rhs"),
            },
            ops::AddOp::NAME => OpKind::Add,
            ops::GeluOp::NAME => OpKind::Gelu {
                tanh: string_attribute(&op, "approximate").as_deref() == Some("tanh"),
            },
            ops::SoftmaxOp::NAME => OpKind::Softmax,
            ops::LayerNormOp::NAME => OpKind::LayerNorm {
                epsilon: ops::float_attribute(&op, "epsilon").unwrap_or(1e-5),
            },
            ops::AttentionOp::NAME => OpKind::Attention {
                causal: ops::flag(&op, "causal"),
                scale: ops::float_attribute(&op, "scale"),
            },
            CastOp::NAME => OpKind::Cast {
                scale: ops::int_attribute(&op, "scale").unwrap_or(0),
            },
            RearrangeOp::NAME => OpKind::Rearrange {
                permutation: RearrangeOp::try_from(op)
                    .ok()
                    .and_then(|r| r.permutation())
                    .map(|p| p.iter().map(|&a| a.max(0) as usize).collect()),
            },
            ops::RepeatOp::NAME => self.repeat(op, operands)?,
            other => return Err(fail(op, format!("cannot be planned: unknown op '{other}'"))),
        })
    }

    /// An `ipu.repeat`: its body function read as a graph of its own.
    fn repeat(
        &mut self,
        op: OperationRef<'c, 'a>,
        operands: usize,
    ) -> Result<OpKind, ReadError<'c, 'a>> {
        let repeat = ops::RepeatOp::try_from(op).map_err(|op| fail(op, "is not a repeat"))?;
        let body_name = repeat
            .body()
            .ok_or_else(|| fail(op, "has no body symbol"))?;
        let body_function = *self.table.get(&body_name).ok_or_else(|| {
            fail(
                op,
                format!("body @{body_name} is not a function with a body"),
            )
        })?;
        if op.result_count() == 0 || op.result_count() != operands {
            return Err(fail(
                op,
                format!(
                    "carries {operands} operands into {} results; a repeat returns each carried value",
                    op.result_count()
                ),
            ));
        }
        let body = read_function(body_function, self.table)?;
        let kind = OpKind::Repeat {
            count: repeat.count().unwrap_or(1).max(0) as u64,
            name: body_name,
            body: Box::new(body.graph.clone()),
        };
        self.bodies.insert(self.ops.len(), body);
        Ok(kind)
    }

    /// An `ipu` op: its kind, operands and results added to the graph.
    fn ipu_op(&mut self, op: OperationRef<'c, 'a>, name: &str) -> Result<(), ReadError<'c, 'a>> {
        if op.attribute(INSERTED).is_ok() {
            // A conversion from an earlier planning: the graph sees its source.
            let source = self.operands(op)?;
            if let (Some(&source), Ok(result)) = (source.first(), op.result(0)) {
                self.ids.insert(key(result.into()), source);
            }
            return Ok(());
        }
        let operands = self.operands(op)?;
        let kind = self.kind(op, name, operands.len())?;
        if op.result_count() == 0 {
            return Err(fail(op, "has no result"));
        }
        let mut results = Vec::with_capacity(op.result_count());
        let mut result_types = Vec::with_capacity(op.result_count());
        for index in 0..op.result_count() {
            let value: Value = op
                .result(index)
                .map_err(|e| fail(op, e.to_string()))?
                .into();
            result_types.push(tensor_of(value).map_err(|e| fail(op, e))?);
            results.push(value);
        }
        let result_ids = self.graph.add_op_results(kind, operands, result_types);
        for (value, id) in results.into_iter().zip(result_ids) {
            self.bind(value, id);
        }
        self.ops.push(op);
        Ok(())
    }
}

/// Reads `function` (and the bodies of its repeats, found in `table`) into a graph.
pub fn read_function<'c, 'a>(
    function: OperationRef<'c, 'a>,
    table: &BTreeMap<String, OperationRef<'c, 'a>>,
) -> Result<FunctionGraph<'c, 'a>, ReadError<'c, 'a>> {
    let name = string_attribute(&function, "sym_name").unwrap_or_default();
    let block = entry_block(function).ok_or_else(|| fail(function, "has no body to plan"))?;
    let mut reader = Reader {
        table,
        graph: Graph::default(),
        ids: BTreeMap::new(),
        values: Vec::new(),
        ops: Vec::new(),
        bodies: BTreeMap::new(),
    };
    reader.arguments(function, block)?;
    let mut next = block.first_operation();
    while let Some(op) = next {
        next = op.next_in_block();
        match op_name(&op).as_str() {
            "func.return" => reader.graph.outputs = reader.operands(op)?,
            "arith.constant" => reader.constant(op)?,
            name if name.starts_with("ipu.") => reader.ipu_op(op, name)?,
            name => {
                return Err(fail(
                    op,
                    format!("cannot be planned: '{name}' is not an ipu graph op"),
                ))
            }
        }
    }
    Ok(FunctionGraph {
        name,
        function,
        graph: reader.graph,
        ops: reader.ops,
        values: reader.values,
        bodies: reader.bodies,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{create_context, parse_module};

    const MODULE: &str = r#"
func.func private @layer(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %0 = "ipu.gelu"(%x) {approximate = "tanh"} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  return %0 : tensor<64x64xf16>
}
func.func @main(%a: tensor<64x32xf16>, %b: tensor<32x64xf16>) -> tensor<64x64xf16> {
  %bias = arith.constant dense<2.5> : tensor<64xf16>
  %0 = "ipu.matmul"(%a, %b) {transpose_rhs} : (tensor<64x32xf16>, tensor<32x64xf16>) -> tensor<64x64xf16>
  %1 = "ipu.add"(%0, %bias) : (tensor<64x64xf16>, tensor<64xf16>) -> tensor<64x64xf16>
  %2 = "ipu.repeat"(%1) {body = @layer, count = 3 : i64} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  return %2 : tensor<64x64xf16>
}
"#;

    #[test]
    fn a_function_reads_as_its_values_ops_and_repeat_bodies() {
        let context = create_context(false).expect("context");
        let module = parse_module(&context, MODULE).expect("parse");
        let table = functions(module.as_operation());
        assert_eq!(
            table.keys().collect::<Vec<_>>(),
            ["layer", "main"].iter().collect::<Vec<_>>()
        );
        assert_eq!(body_names(module.as_operation()), ["layer"]);
        let Ok(read) = read_function(table["main"], &table) else {
            panic!("main reads");
        };
        let graph = &read.graph;
        let origins: Vec<Origin> = graph.values.iter().map(|v| v.origin).collect();
        assert_eq!(
            origins,
            [
                Origin::Argument,
                Origin::Argument,
                Origin::Constant,
                Origin::Op(0),
                Origin::Op(1),
                Origin::Op(2)
            ]
        );
        assert_eq!(graph.values[2].max_abs, Some(2.5));
        assert_eq!(
            (graph.values[2].shape.as_slice(), graph.values[2].element),
            (&[64][..], ElementType::F16)
        );
        assert_eq!(
            graph.ops[0].kind,
            OpKind::Matmul {
                transpose_lhs: false,
                transpose_rhs: true
            }
        );
        assert_eq!(graph.ops[1].operands, [3, 2]);
        let OpKind::Repeat { count, name, body } = &graph.ops[2].kind else {
            panic!("op 2 is the repeat");
        };
        assert_eq!((*count, name.as_str(), body.ops.len()), (3, "layer", 1));
        assert_eq!(body.ops[0].kind, OpKind::Gelu { tanh: true });
        assert_eq!(graph.outputs, [5]);
        assert_eq!((read.ops.len(), read.values.len()), (3, 6));
        assert!(read.bodies.contains_key(&2));
        assert!(graph.check().is_ok());
    }

    #[test]
    fn what_is_not_a_graph_is_refused_at_its_op() {
        let context = create_context(false).expect("context");
        let source = r#"
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.negf %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @repeat(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ipu.repeat"(%a) {body = @missing, count = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"#;
        let module = parse_module(&context, source).expect("parse");
        let table = functions(module.as_operation());
        let message = |name: &str| match read_function(table[name], &table) {
            Ok(_) => panic!("@{name} must be refused"),
            Err(error) => (op_name(&error.op), error.message),
        };
        assert_eq!(
            message("main"),
            (
                "arith.negf".to_string(),
                "cannot be planned: 'arith.negf' is not an ipu graph op".to_string()
            )
        );
        assert_eq!(
            message("repeat"),
            (
                "ipu.repeat".to_string(),
                "body @missing is not a function with a body".to_string()
            )
        );
    }
}
