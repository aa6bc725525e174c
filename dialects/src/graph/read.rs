//! Reading `ipu` IR into the plain-data [`Graph`]: one `func.func` body (and the bodies of the
//! `ipu.repeat` ops in it), its arguments, `arith.constant`s and `ipu` ops in program order,
//! with the IR handles a pass needs to write results back.
//!
//! Conversions a planner inserted (marked [`INSERTED`]) are looked through, so a planned module
//! reads back as the graph that was planned. Attributes are read as strictly as the verifier
//! states them: a malformed one is an error at its op, never a default.
//!
//! One reader serves every client; [`ReadOptions`] says what a client needs beyond planning
//! (constant elements and inlined calls for the reference evaluator, ops kept opaque for
//! rewriting one block).

use std::cell::Cell;
use std::collections::BTreeMap;

use melior::ir::{
    block::BlockLike, operation::OperationLike, BlockRef, OperationRef, RegionLike, Value,
    ValueLike,
};

use super::dense::{parse_dense, DecodeBits};
use super::{scalar, Graph, OpKind, Origin, ValueId};
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
    /// Ops kept opaque (read with [`ReadOptions::opaque`]), in block order.
    pub opaque: Vec<OperationRef<'c, 'a>>,
}

/// What a read keeps beyond what planning needs. The default is planning's: shapes only, and
/// anything that is not an `ipu` graph op is refused.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// Decode every `arith.constant`'s elements into [`super::Value::data`]; the function decodes
    /// bit patterns (FP8 codes need the device's numerics).
    pub decode: Option<DecodeBits>,
    /// Read `func.call`s by inlining the callee's graph (the reference evaluates them; the
    /// planner has no plan for a call).
    pub inline_calls: bool,
    /// Keep ops the graph does not model (other dialects, malformed `ipu` ops) as
    /// [`Origin::Opaque`] results instead of refusing them; likewise block arguments that are
    /// not tensors and values defined outside the block.
    pub opaque: bool,
}

/// The most ops one read may produce, over all repeat bodies and inlined calls: a module whose
/// functions call each other in a doubling chain is refused rather than read exponentially.
pub const MAX_READ_OPS: u64 = 1 << 22;

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

/// Names of functions used as `ipu.repeat`, `ipu.scan` or `ipu.map` bodies (planned through
/// their op, never on their own).
pub fn body_names(module: OperationRef) -> Vec<String> {
    referenced(
        module,
        &[
            (ops::RepeatOp::NAME, "body"),
            (ops::ScanOp::NAME, "body"),
            (ops::MapOp::NAME, "body"),
        ],
    )
}

/// Names of functions used as `ipu.map` bodies: scalar programs, not graphs.
pub fn map_body_names(module: OperationRef) -> Vec<String> {
    referenced(module, &[(ops::MapOp::NAME, "body")])
}

/// Names of functions a `func.call`, an `ipu.repeat`, an `ipu.scan` or an `ipu.map` refers
/// to (so not an entry point).
pub fn referenced_functions(module: OperationRef) -> Vec<String> {
    referenced(
        module,
        &[
            (ops::RepeatOp::NAME, "body"),
            (ops::ScanOp::NAME, "body"),
            (ops::MapOp::NAME, "body"),
            ("func.call", "callee"),
        ],
    )
}

/// The symbols named by attribute `.1` of ops named `.0`, sorted and once each.
fn referenced(module: OperationRef, references: &[(&str, &str)]) -> Vec<String> {
    let mut names = Vec::new();
    module.walk(melior::ir::operation::WalkOrder::PreOrder, |op| {
        let name = op_name(&op);
        for (op_kind, attribute) in references {
            if name == *op_kind {
                if let Some(symbol) = op.attribute(attribute).ok().and_then(ops::symbol_value) {
                    names.push(symbol);
                }
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

/// A value's tensor type: shape, element type and FP8 scale (its format's; 0 otherwise).
struct Tensor {
    shape: Vec<u64>,
    element: ElementType,
    scale: i32,
}

fn fp8_scale(scale: i64) -> Result<i32, String> {
    i32::try_from(scale)
        .ok()
        .filter(|scale| CastOp::SCALE_RANGE.contains(&i64::from(*scale)))
        .ok_or_else(|| format!("FP8 scale {scale} is outside -31..=31"))
}

/// The shape, element type and FP8 scale of a tensor value.
fn tensor_of(value: Value) -> Result<Tensor, String> {
    let info = TensorInfo::from_type(value.r#type()).map_err(|e| e.to_string())?;
    let shape = info
        .shape
        .iter()
        .map(|&size| u64::try_from(size))
        .collect::<Result<Vec<u64>, _>>()
        .map_err(|_| format!("dynamic or negative dimension in {:?}", info.shape))?;
    let scale = match &info.format {
        Some(format) if info.element.is_fp8() => fp8_scale(format.scale)?,
        _ => 0,
    };
    Ok(Tensor {
        shape,
        element: info.element,
        scale,
    })
}

/// Whether argument `index` of function `func` carries the unit attribute `name` in its
/// `arg_attrs`.
fn argument_has_attribute(func: OperationRef, index: usize, name: &str) -> bool {
    let Ok(attrs) = func.attribute("arg_attrs") else {
        return false;
    };
    let Ok(array) = melior::ir::attribute::ArrayAttribute::try_from(attrs) else {
        return false;
    };
    array.element(index).is_ok_and(|dict| {
        melior::ir::attribute::DictionaryAttribute::try_from(dict)
            .is_ok_and(|dict| dict.element_by_name(name).is_some())
    })
}

/// What every nested read of one top-level read shares.
struct Shared<'c, 'a, 't> {
    table: &'t BTreeMap<String, OperationRef<'c, 'a>>,
    options: ReadOptions,
    /// Ops read so far (see [`MAX_READ_OPS`]).
    ops_read: Cell<u64>,
}

impl<'c, 'a, 't> Shared<'c, 'a, 't> {
    fn new(table: &'t BTreeMap<String, OperationRef<'c, 'a>>, options: ReadOptions) -> Self {
        Shared {
            table,
            options,
            ops_read: Cell::new(0),
        }
    }
}

/// A function being read: the graph so far and where each IR value went.
struct Reader<'c, 'a, 's, 't> {
    shared: &'s Shared<'c, 'a, 't>,
    /// The functions whose reading led here, outermost first (a name twice is recursion).
    stack: Vec<String>,
    graph: Graph,
    /// Graph value of each IR value (by its raw pointer).
    ids: BTreeMap<usize, ValueId>,
    values: Vec<Value<'c, 'a>>,
    ops: Vec<OperationRef<'c, 'a>>,
    bodies: BTreeMap<usize, FunctionGraph<'c, 'a>>,
    opaque: Vec<OperationRef<'c, 'a>>,
}

fn fail<'c, 'a>(op: OperationRef<'c, 'a>, message: impl Into<String>) -> ReadError<'c, 'a> {
    ReadError {
        op,
        message: message.into(),
    }
}

impl<'c, 'a> Reader<'c, 'a, '_, '_> {
    /// Records that IR value `value` is graph value `id`.
    fn bind(&mut self, value: Value<'c, 'a>, id: ValueId) {
        self.ids.insert(key(value), id);
        self.values.push(value);
    }

    /// Adds a value of `value`'s type with `origin` and binds it.
    fn add(
        &mut self,
        value: Value<'c, 'a>,
        origin: Origin,
        at: OperationRef<'c, 'a>,
        what: &str,
    ) -> Result<ValueId, ReadError<'c, 'a>> {
        let tensor = tensor_of(value).map_err(|e| fail(at, format!("{what}: {e}")))?;
        let id = self.graph.add_value(tensor.shape, tensor.element, origin);
        self.graph.values[id].scale = tensor.scale;
        self.bind(value, id);
        Ok(id)
    }

    /// The graph values of `op`'s operands. Read opaquely, a value defined outside the block
    /// (in a block that dominates it) is an opaque value, bound at its first use.
    fn operands(&mut self, op: OperationRef<'c, 'a>) -> Result<Vec<ValueId>, ReadError<'c, 'a>> {
        let mut ids = Vec::with_capacity(op.operand_count());
        for (index, value) in op.operands().enumerate() {
            let id = match self.ids.get(&key(value)) {
                Some(&id) => id,
                None if self.shared.options.opaque => self.opaque_value(value),
                None => {
                    return Err(fail(
                        op,
                        format!("operand #{index} is not a planned tensor value"),
                    ))
                }
            };
            ids.push(id);
        }
        Ok(ids)
    }

    /// Adds `value` as an [`Origin::Opaque`] value (with its tensor type when it has one) and
    /// binds it.
    fn opaque_value(&mut self, value: Value<'c, 'a>) -> ValueId {
        let id = self
            .graph
            .add_value(Vec::new(), ElementType::F32, Origin::Opaque);
        if let Ok(tensor) = tensor_of(value) {
            let leaf = &mut self.graph.values[id];
            (leaf.shape, leaf.element, leaf.scale) = (tensor.shape, tensor.element, tensor.scale);
        }
        self.bind(value, id);
        id
    }

    /// The block's arguments, as argument values (read opaquely, one that is not a tensor is
    /// an opaque value).
    fn arguments(
        &mut self,
        at: OperationRef<'c, 'a>,
        block: BlockRef<'c, 'a>,
    ) -> Result<(), ReadError<'c, 'a>> {
        for index in 0..block.argument_count() {
            let argument = block
                .argument(index)
                .map_err(|e| fail(at, format!("argument #{index}: {e}")))?;
            if self.shared.options.opaque && tensor_of(argument.into()).is_err() {
                self.opaque_value(argument.into());
                continue;
            }
            // Parameters are the entry function's; a repeat body's arguments are its carried values.
            let parameter = self.stack.len() == 1
                && argument_has_attribute(at, index, super::PARAMETER_ATTRIBUTE);
            let id = self.add(
                argument.into(),
                if parameter {
                    Origin::Constant
                } else {
                    Origin::Argument
                },
                at,
                &format!("argument #{index}"),
            )?;
            if parameter {
                self.graph.values[id].parameter = Some(index);
            }
        }
        Ok(())
    }

    /// An `arith.constant`: a constant value (its largest magnitude when it is a splat; its
    /// elements when decoding).
    fn constant(&mut self, op: OperationRef<'c, 'a>) -> Result<(), ReadError<'c, 'a>> {
        let result = op.result(0).map_err(|_| fail(op, "has no result"))?;
        let id = self.add(result.into(), Origin::Constant, op, "result")?;
        let Some(decode) = self.shared.options.decode else {
            self.graph.values[id].max_abs = splat_max_abs(op);
            return Ok(());
        };
        let text = op
            .attribute("value")
            .map_err(|_| fail(op, "has no 'value' attribute"))?
            .to_string();
        let value = &mut self.graph.values[id];
        let data = parse_dense(&text, value.element, decode)
            .map_err(|detail| fail(op, format!("{detail} in {text}")))?;
        let count = value.elements();
        if data.len() != 1 && data.len() as u64 != count {
            return Err(fail(
                op,
                format!("holds {} values for {count} elements", data.len()),
            ));
        }
        value.set_data(data);
        Ok(())
    }

    /// What `op` computes (reading the body of a repeat), its attributes checked.
    fn kind(
        &mut self,
        op: OperationRef<'c, 'a>,
        name: &str,
        operand_ids: &[ValueId],
    ) -> Result<OpKind, ReadError<'c, 'a>> {
        let operands = operand_ids.len();
        Ok(match name {
            ops::MatmulOp::NAME => OpKind::Matmul {
                transpose_lhs: ops::flag(&op, "transpose_lhs"),
                transpose_rhs: ops::flag(&op, "transpose_rhs"),
            },
            ops::AddOp::NAME => OpKind::Add,
            ops::GeluOp::NAME => OpKind::Gelu {
                tanh: match string_attribute(&op, "approximate").as_deref() {
                    None | Some("erf" | "none") => false,
                    Some("tanh") => true,
                    Some(other) => {
                        return Err(fail(
                            op,
                            format!("unknown approximate = \"{other}\" (expected erf or tanh)"),
                        ))
                    }
                },
            },
            ops::SoftmaxOp::NAME => OpKind::Softmax,
            ops::LayerNormOp::NAME => OpKind::LayerNorm {
                epsilon: ops::float_attribute(&op, "epsilon")
                    .ok_or_else(|| fail(op, "requires a float attribute 'epsilon'"))?,
            },
            ops::AttentionOp::NAME => OpKind::Attention {
                causal: ops::flag(&op, "causal"),
                scale: ops::float_attribute(&op, "scale"),
            },
            CastOp::NAME => OpKind::Cast {
                scale: match op.attribute("scale") {
                    Err(_) => 0,
                    Ok(_) => {
                        let scale = ops::int_attribute(&op, "scale")
                            .ok_or_else(|| fail(op, "scale is not an integer attribute"))?;
                        i64::from(
                            fp8_scale(scale)
                                .map_err(|e| fail(op, format!("scale attribute: {e}")))?,
                        )
                    }
                },
            },
            RearrangeOp::NAME => OpKind::Rearrange {
                permutation: permutation(op)?,
            },
            ops::ReshapeOp::NAME => OpKind::Reshape,
            ops::RepeatOp::NAME => self.repeat(op, operands)?,
            ops::ScanOp::NAME => self.scan(op, operand_ids)?,
            ops::MapOp::NAME => self.map(op, operands)?,
            ops::BroadcastOp::NAME => OpKind::Broadcast,
            ops::SliceOp::NAME => {
                let slice = ops::SliceOp::try_from(op).map_err(|_| fail(op, "not an ipu.slice"))?;
                let axes = |items: Option<Vec<i64>>, name: &str| {
                    items
                        .and_then(|items| {
                            items
                                .into_iter()
                                .map(|item| u64::try_from(item).ok())
                                .collect::<Option<Vec<u64>>>()
                        })
                        .ok_or_else(|| {
                            fail(
                                op,
                                format!("{name} is not an array<i64: ...> of non-negative entries"),
                            )
                        })
                };
                OpKind::Slice {
                    offsets: axes(slice.offsets(), "offsets")?,
                    strides: axes(slice.strides(), "strides")?,
                }
            }
            ops::ConcatOp::NAME => OpKind::Concat {
                axis: ops::int_attribute(&op, "axis")
                    .and_then(|axis| usize::try_from(axis).ok())
                    .ok_or_else(|| fail(op, "axis is not a non-negative integer"))?,
            },
            ops::ReduceOp::NAME => OpKind::Reduce {
                combiner: ops::ReduceOp::try_from(op)
                    .ok()
                    .and_then(|reduce| reduce.combiner())
                    .ok_or_else(|| fail(op, "combiner is not add, mul, max or min"))?,
            },
            other => return Err(fail(op, format!("cannot be planned: unknown op '{other}'"))),
        })
    }

    /// Reads function `name`, nested in this read as `role` ("body" of a repeat, "callee" of
    /// an inlined call).
    fn nested(
        &self,
        at: OperationRef<'c, 'a>,
        role: &str,
        name: &str,
    ) -> Result<FunctionGraph<'c, 'a>, ReadError<'c, 'a>> {
        let function = *self
            .shared
            .table
            .get(name)
            .ok_or_else(|| fail(at, format!("{role} @{name} is not a function with a body")))?;
        if self.stack.iter().any(|outer| outer == name) {
            let chain: Vec<String> = self.stack.iter().map(|outer| format!("@{outer}")).collect();
            return Err(fail(
                at,
                format!("@{name} is recursive: {} -> @{name}", chain.join(" -> ")),
            ));
        }
        read_nested(function, self.shared, self.stack.clone())
    }

    /// An `ipu.repeat`: its body function read as a graph of its own.
    fn repeat(
        &mut self,
        op: OperationRef<'c, 'a>,
        operands: usize,
    ) -> Result<OpKind, ReadError<'c, 'a>> {
        let repeat = ops::RepeatOp::try_from(op).map_err(|op| fail(op, "is not a repeat"))?;
        let (body, count) = (repeat.body(), repeat.count());
        self.looped(op, (body, count), operands, &[])
    }

    /// An `ipu.scan`: an `ipu.repeat` of its one carried value whose other operands are
    /// per-iteration stacks (each read through its `ipu.stack` as the stacked tensor: kept in
    /// the kind, not as operands, since they are read one slice per iteration, never placed
    /// whole).
    fn scan(
        &mut self,
        op: OperationRef<'c, 'a>,
        operand_ids: &[ValueId],
    ) -> Result<OpKind, ReadError<'c, 'a>> {
        let scan = ops::ScanOp::try_from(op).map_err(|op| fail(op, "is not a scan"))?;
        let (body, count) = (scan.body(), scan.count());
        if scan.stacks().iter().any(Option::is_none) {
            return Err(fail(op, "a stack operand is not made by an ipu.stack"));
        }
        let stacks = operand_ids.get(1..).unwrap_or_default();
        self.looped(op, (body, count), operand_ids.len().min(1), stacks)
    }

    /// A repeat (or scan) of `body` `count` times over `carried` operands and `stacks`.
    fn looped(
        &mut self,
        op: OperationRef<'c, 'a>,
        (body, count): (Option<String>, Option<i64>),
        carried: usize,
        stacks: &[ValueId],
    ) -> Result<OpKind, ReadError<'c, 'a>> {
        let body_name = body.ok_or_else(|| fail(op, "requires a symbol attribute 'body'"))?;
        let count = count.ok_or_else(|| fail(op, "requires an integer attribute 'count'"))?;
        let count =
            u64::try_from(count).map_err(|_| fail(op, format!("count {count} is negative")))?;
        if op.result_count() == 0 || op.result_count() != carried {
            return Err(fail(
                op,
                format!(
                    "carries {carried} operands into {} results; a repeat returns each carried value",
                    op.result_count()
                ),
            ));
        }
        for &stack in stacks {
            let shape = &self.graph.values[stack].shape;
            if shape.first() != Some(&count) {
                return Err(fail(
                    op,
                    format!(
                        "a stack of shape {shape:?}: its leading axis must be the count, {count}"
                    ),
                ));
            }
        }
        let body = self.nested(op, "body", &body_name)?;
        let mut graph = body.graph.clone();
        graph.carried = carried;
        let kind = OpKind::Repeat {
            count,
            name: body_name,
            body: Box::new(graph),
            iterated: stacks.to_vec(),
        };
        self.bodies.insert(self.ops.len(), body);
        Ok(kind)
    }

    /// An `ipu.map`: its body function read as a scalar program (one float argument per
    /// input, then none or one index per result axis).
    fn map(
        &mut self,
        op: OperationRef<'c, 'a>,
        inputs: usize,
    ) -> Result<OpKind, ReadError<'c, 'a>> {
        let name = ops::MapOp::try_from(op)
            .ok()
            .and_then(|map| map.body())
            .ok_or_else(|| fail(op, "requires a symbol attribute 'body'"))?;
        let function = *self
            .shared
            .table
            .get(&name)
            .ok_or_else(|| fail(op, format!("body @{name} is not a function with a body")))?;
        let block =
            entry_block(function).ok_or_else(|| fail(op, format!("body @{name} has no body")))?;
        let rank = match op.result(0) {
            Ok(result) => tensor_of(result.into())
                .map_err(|e| fail(op, format!("result: {e}")))?
                .shape
                .len(),
            Err(_) => return Err(fail(op, "has no result")),
        };
        let arguments = block.argument_count();
        if arguments != inputs && arguments != inputs + rank {
            return Err(fail(
                op,
                format!("body @{name} takes {arguments} arguments; the map has {inputs} inputs and a rank-{rank} result"),
            ));
        }
        let roles = |i: usize| {
            if i < inputs {
                scalar::ArgumentRole::Input(i)
            } else {
                scalar::ArgumentRole::Index(i - inputs)
            }
        };
        let body = scalar::read_block(block, inputs, rank, &roles, 0).map_err(|e| {
            let at = e.op.unwrap_or(function);
            fail(
                at,
                format!("in the body @{name} of an ipu.map: {}", e.message),
            )
        })?;
        let float_inputs = (0..inputs).all(|i| {
            block
                .argument(i)
                .map(|a| scalar::scalar_type(a.r#type()) == Some(scalar::ScalarType::Float))
                .unwrap_or(false)
        });
        if !float_inputs {
            return Err(fail(
                function,
                format!("body @{name} of an ipu.map takes a non-float input"),
            ));
        }
        body.types().map_err(|m| {
            fail(
                function,
                format!("the body @{name} of an ipu.map is ill-typed: {m}"),
            )
        })?;
        Ok(OpKind::Map {
            name,
            body: std::sync::Arc::new(body),
        })
    }

    /// A `func.call`, inlined: the callee's constants and ops join this graph, its arguments
    /// are the call's operands and its outputs the call's results.
    fn inline_call(&mut self, op: OperationRef<'c, 'a>) -> Result<(), ReadError<'c, 'a>> {
        let callee = op
            .attribute("callee")
            .ok()
            .and_then(ops::symbol_value)
            .ok_or_else(|| fail(op, "requires a symbol attribute 'callee'"))?;
        let operands = self.operands(op)?;
        let body = self.nested(op, "callee", &callee)?;
        let arguments = body.graph.arguments();
        if arguments.len() != operands.len() || body.graph.outputs.len() != op.result_count() {
            return Err(fail(
                op,
                format!(
                    "passes {} operands for {} results; @{callee} takes {} and returns {}",
                    operands.len(),
                    op.result_count(),
                    arguments.len(),
                    body.graph.outputs.len()
                ),
            ));
        }
        let mut map: Vec<Option<ValueId>> = vec![None; body.graph.values.len()];
        for (&argument, &operand) in arguments.iter().zip(&operands) {
            map[argument] = Some(operand);
        }
        let adopt = |reader: &mut Self, map: &mut Vec<Option<ValueId>>, id: ValueId, origin| {
            let mut value = body.graph.values[id].clone();
            value.origin = origin;
            reader.graph.values.push(value);
            let new = reader.graph.values.len() - 1;
            reader.bind(body.values[id], new);
            map[id] = Some(new);
        };
        for id in 0..body.graph.values.len() {
            if matches!(
                body.graph.values[id].origin,
                Origin::Constant | Origin::Opaque
            ) {
                adopt(self, &mut map, id, body.graph.values[id].origin);
            }
        }
        let mut bodies = body.bodies;
        for (index, callee_op) in body.graph.ops.iter().enumerate() {
            let position = self.graph.ops.len();
            let mut inlined = callee_op.clone();
            inlined.operands = callee_op
                .operands
                .iter()
                .map(|&id| {
                    map[id].ok_or_else(|| {
                        fail(
                            op,
                            format!("@{callee}: value %{id} is used before it is defined"),
                        )
                    })
                })
                .collect::<Result<_, _>>()?;
            inlined.results = Vec::with_capacity(callee_op.results.len());
            for &result in &callee_op.results {
                adopt(self, &mut map, result, Origin::Op(position));
                inlined.results.extend(map[result]);
            }
            self.graph.ops.push(inlined);
            self.ops.push(body.ops[index]);
            if let Some(nested) = bodies.remove(&index) {
                self.bodies.insert(position, nested);
            }
        }
        for (index, &output) in body.graph.outputs.iter().enumerate() {
            let result = op.result(index).map_err(|e| fail(op, e.to_string()))?;
            let id = map[output]
                .ok_or_else(|| fail(op, format!("@{callee} returns a value it never defines")))?;
            self.ids.insert(key(result.into()), id);
        }
        Ok(())
    }

    /// An op the graph does not model, kept opaque: its results are leaves.
    fn keep_opaque(&mut self, op: OperationRef<'c, 'a>) -> Result<(), ReadError<'c, 'a>> {
        for index in 0..op.result_count() {
            let result = op.result(index).map_err(|e| fail(op, e.to_string()))?;
            self.opaque_value(result.into());
        }
        self.opaque.push(op);
        Ok(())
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
        if name == ops::StackOp::NAME {
            // A stack is its stacked tensor (a scan reads it slice by slice).
            let source = self.operands(op)?;
            if let (Some(&source), Ok(result)) = (source.first(), op.result(0)) {
                self.ids.insert(key(result.into()), source);
            }
            return Ok(());
        }
        let mut operands = self.operands(op)?;
        let kind = self.kind(op, name, &operands)?;
        if let OpKind::Repeat { iterated, .. } = &kind {
            operands.truncate(operands.len() - iterated.len());
        }
        if op.result_count() == 0 {
            return Err(fail(op, "has no result"));
        }
        let cast_scale = match kind {
            OpKind::Cast { scale } if scale != 0 => Some(scale as i32),
            _ => None,
        };
        let mut results = Vec::with_capacity(op.result_count());
        let mut tensors = Vec::with_capacity(op.result_count());
        for index in 0..op.result_count() {
            let value: Value = op
                .result(index)
                .map_err(|e| fail(op, e.to_string()))?
                .into();
            tensors.push(tensor_of(value).map_err(|e| fail(op, format!("result #{index}: {e}")))?);
            results.push(value);
        }
        let index = self.graph.ops.len();
        let result_ids = self.graph.add_op_results(
            kind,
            operands,
            tensors
                .iter()
                .map(|t| (t.shape.clone(), t.element))
                .collect(),
        );
        self.graph.ops[index].location = op.location().to_string();
        for ((value, id), tensor) in results.into_iter().zip(result_ids).zip(tensors) {
            // A cast names the scale of its FP8 result; the format's scale otherwise.
            self.graph.values[id].scale = match cast_scale {
                Some(scale) if tensor.element.is_fp8() => scale,
                _ => tensor.scale,
            };
            self.bind(value, id);
        }
        self.ops.push(op);
        Ok(())
    }

    /// Counts ops read against [`MAX_READ_OPS`].
    fn count_op(&self, op: OperationRef<'c, 'a>) -> Result<(), ReadError<'c, 'a>> {
        let read = self.shared.ops_read.get() + 1;
        self.shared.ops_read.set(read);
        if read > MAX_READ_OPS {
            return Err(fail(
                op,
                format!("reading the module's repeat bodies and calls makes more than {MAX_READ_OPS} ops"),
            ));
        }
        Ok(())
    }

    /// One op of the block.
    fn op(&mut self, op: OperationRef<'c, 'a>) -> Result<(), ReadError<'c, 'a>> {
        self.count_op(op)?;
        match op_name(&op).as_str() {
            "func.return" => self.graph.outputs = self.operands(op)?,
            "arith.constant" => self.constant(op)?,
            "func.call" if self.shared.options.inline_calls => self.inline_call(op)?,
            name if name.starts_with("ipu.") => self.ipu_op(op, name)?,
            name => {
                return Err(fail(
                    op,
                    format!("cannot be planned: '{name}' is not an ipu graph op"),
                ))
            }
        }
        Ok(())
    }

    /// Every op of `block`, in order.
    fn block(&mut self, block: BlockRef<'c, 'a>) -> Result<(), ReadError<'c, 'a>> {
        let mut next = block.first_operation();
        while let Some(op) = next {
            next = op.next_in_block();
            let read = self.op(op);
            match read {
                Err(_) if self.shared.options.opaque && op_name(&op) != "func.return" => {
                    // A repeat whose results failed to read may have stored its body under the
                    // index the next op takes.
                    self.bodies.remove(&self.ops.len());
                    self.keep_opaque(op)?
                }
                read => read?,
            }
        }
        Ok(())
    }

    fn finish(self, name: String, function: OperationRef<'c, 'a>) -> FunctionGraph<'c, 'a> {
        FunctionGraph {
            name,
            function,
            graph: self.graph,
            ops: self.ops,
            values: self.values,
            bodies: self.bodies,
            opaque: self.opaque,
        }
    }
}

/// The permutation of an `ipu.rearrange` (`None` when absent: a layout-only rearrange).
fn permutation<'c, 'a>(op: OperationRef<'c, 'a>) -> Result<Option<Vec<usize>>, ReadError<'c, 'a>> {
    if op.attribute("permutation").is_err() {
        return Ok(None);
    }
    let axes = RearrangeOp::try_from(op)
        .ok()
        .and_then(|rearrange| rearrange.permutation())
        .ok_or_else(|| fail(op, "permutation is not an array<i64: ...>"))?;
    axes.iter()
        .map(|&axis| usize::try_from(axis))
        .collect::<Result<Vec<usize>, _>>()
        .map(Some)
        .map_err(|_| fail(op, format!("permutation {axes:?} has a negative axis")))
}

/// Reads `function` (and the bodies of its repeats, found in `table`) into a graph, as
/// planning needs it.
pub fn read_function<'c, 'a>(
    function: OperationRef<'c, 'a>,
    table: &BTreeMap<String, OperationRef<'c, 'a>>,
) -> Result<FunctionGraph<'c, 'a>, ReadError<'c, 'a>> {
    read_function_with(function, table, ReadOptions::default())
}

/// Reads `function` with `options`.
pub fn read_function_with<'c, 'a>(
    function: OperationRef<'c, 'a>,
    table: &BTreeMap<String, OperationRef<'c, 'a>>,
    options: ReadOptions,
) -> Result<FunctionGraph<'c, 'a>, ReadError<'c, 'a>> {
    read_nested(function, &Shared::new(table, options), Vec::new())
}

fn read_nested<'c, 'a>(
    function: OperationRef<'c, 'a>,
    shared: &Shared<'c, 'a, '_>,
    stack: Vec<String>,
) -> Result<FunctionGraph<'c, 'a>, ReadError<'c, 'a>> {
    let block = entry_block(function).ok_or_else(|| fail(function, "has no body to plan"))?;
    read_into(function, block, shared, stack)
}

/// Reads `block` of `owner` (its arguments are arguments) inside the reads of `stack`.
fn read_into<'c, 'a>(
    owner: OperationRef<'c, 'a>,
    block: BlockRef<'c, 'a>,
    shared: &Shared<'c, 'a, '_>,
    mut stack: Vec<String>,
) -> Result<FunctionGraph<'c, 'a>, ReadError<'c, 'a>> {
    let name = string_attribute(&owner, "sym_name").unwrap_or_default();
    stack.push(name.clone());
    let mut reader = Reader {
        shared,
        stack,
        graph: Graph::default(),
        ids: BTreeMap::new(),
        values: Vec::new(),
        ops: Vec::new(),
        bodies: BTreeMap::new(),
        opaque: Vec::new(),
    };
    reader.arguments(owner, block)?;
    reader.block(block)?;
    Ok(reader.finish(name, owner))
}

/// Reads one block of `owner` (e.g. a function body, for rewriting its `ipu` ops) with
/// `options`: block arguments are arguments.
pub fn read_block<'c, 'a>(
    owner: OperationRef<'c, 'a>,
    block: BlockRef<'c, 'a>,
    table: &BTreeMap<String, OperationRef<'c, 'a>>,
    options: ReadOptions,
) -> Result<FunctionGraph<'c, 'a>, ReadError<'c, 'a>> {
    read_into(owner, block, &Shared::new(table, options), Vec::new())
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
