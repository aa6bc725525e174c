//! The numerical test of `ipu run`: the package's source module evaluated by the host
//! reference (`ipu_runtime::reference`) on the inputs and weights the device received, and
//! compared with the device's outputs under the workload's tolerance rule.
//!
//! # Which values
//! The package's [`PackageSource`] names the function the package runs. The compiler's
//! bindings map onto it by name:
//! * `argN` (inputs): argument `N`, with the tensor the device received (generated from
//!   `--seed`, or read from `--inputs`);
//! * `argN` (parameters, arguments marked `{ipu.parameter}`): argument `N`, with the tensor
//!   written at `initialize` (generated from `--seed` at the weights' deviation, or read from
//!   `--inputs`); the graph reads it as a constant without data, which that tensor fills;
//! * `constN` (weights): the constant that is value `N` of the function's graph
//!   (`ipu_dialects::graph`: arguments first, then constants and op results in program order, as
//!   the compiler numbers them; `<op>.<body>.constN` the constant of repeat body `@body`). The reference uses the module's own values, and the package's weight bytes
//!   must be exactly those values in the binding's encoding: a package whose weights differ
//!   from its source (even by one unit in the last place, re-signed) fails the test naming the
//!   weight and element. A weight given in `--inputs` replaces the constant on both sides;
//! * `resultN` (outputs): result `N` of the function.
//!
//! Arguments are rounded onto their declared element type on entry (as the host encodes them
//! for the device), and under the FP8 precision policy every GEMM operand that is not already
//! FP8 goes through a cast to FP8 E4M3 at the policy's scale, which is what the lowered
//! program does on the device. So the reference sees exactly the operand values the device
//! multiplies, and the difference measures accumulation, the final rounding and any layout or
//! exchange bug.
//!
//! # Tolerance rule per workload
//! * GEMM workloads (a function of `ipu.matmul`s, with casts, constants and rearranges):
//!   `Tolerance::fp8_gemm(K, output type, output scale, reference)` for FP8 and F16 operands
//!   (both accumulate in F16 partials), element by element
//!   `|x - ref| <= 2 sqrt(K) 2^-11 max|ref| + smallest output step + 2 u_out |ref|`: the
//!   probabilistic bound on K roundings of the F16 partial sums (Higham and Mary, lambda = 2),
//!   plus one ulp of the output format for a sum that rounds to the neighbouring grid point.
//!   K is the largest contraction length of the function's matmuls. An f32 GEMM uses the same
//!   rule with f32's unit roundoff in place of the F16 partials'.
//!   Example: the seed GEMM (K = 256, f16 output) allows `2^-6 max|ref| + 2^-24 + 2^-10 |ref|`;
//!   with sigma-1 inputs max|ref| is about 80, so about 1.3 + 2^-10 |ref|.
//! * MLP blocks (matmuls with bias adds and GeLUs between them): the GEMM rule with K the sum of
//!   the chain's contraction lengths. The first GEMM's accumulation error (its own rule, on
//!   the hidden values) reaches the output through a GeLU (slope at most 1.13) and the second
//!   GEMM, which sums K2 of them with random-sign weights like it sums its own roundings; to
//!   first order the chain's error is the sum of the stages' random walks measured on the
//!   output's range, which is what K = K1 + K2 in one walk allows.
//!   Example: examples/mlp_small.mlir (K = 128 + 256, f16) allows `0.019 max|ref| + 2^-10 |ref|`.
//! * anything else: the hardware checkpoint rule `|x - ref| <= 0.03 + 0.03 |ref|`
//!   (`Tolerance::CHECKPOINT`).
//!
//! Bit-exact checks (one-hot operands, `ipu_runtime::reference::one_hot`) live in the tests:
//! they need chosen inputs, not the generated ones.

use std::collections::BTreeMap;

use anyhow::{anyhow, bail, Context as _};
use ipu_dialects::graph::{Graph, Op, OpKind, Origin, Value};
use ipu_dialects::ElementType;
use ipu_runtime::npy::Tensor;
use ipu_runtime::package::{BindingRole, PackageSource, SourcePrecision};
use ipu_runtime::reference::{
    compare, describe_value, unit_roundoff, Array, Comparison, Program, Tolerance,
};
use ipu_runtime::Package;

/// One output's reference values and the rule the device's values are held to.
pub struct ExpectedOutput {
    pub binding: String,
    pub values: Array,
    pub tolerance: Tolerance,
}

/// The reference of a run (see the module docs).
pub struct Reference {
    pub function: String,
    pub workload: &'static str,
    pub outputs: Vec<ExpectedOutput>,
    /// Why weights in the package are not its source module's (each fails the test: the
    /// device would run other weights than the model the reference evaluates).
    pub altered_weights: Vec<String>,
}

/// The outcome of comparing a run with its [`Reference`].
pub struct Outcome {
    pub max_abs_error: f64,
    pub pass: bool,
    /// One per output, in binding order.
    pub comparisons: Vec<(String, Comparison)>,
}

impl Outcome {
    /// `referenceMaximumAbsoluteError=0.019749 numericalTest=PASS`, the seed's line.
    pub fn summary(&self) -> String {
        format!(
            "referenceMaximumAbsoluteError={:.6} numericalTest={}",
            self.max_abs_error,
            if self.pass { "PASS" } else { "FAIL" }
        )
    }
}

/// The reference outputs of `package` for `inputs` (by binding name), or `None` when the
/// package carries no source.
pub fn reference(
    package: &Package,
    inputs: &BTreeMap<String, Tensor>,
) -> anyhow::Result<Option<Reference>> {
    let Some(source) = &package.source else {
        return Ok(None);
    };
    let mut program = read_program(source)?;
    let function_name = source.function.clone();
    let function = source_function(&program, &function_name)?;
    let workload = Workload::under(function, &source.precision);
    let altered_weights = altered_weights(package, &program, &function_name, inputs);
    let BoundValues {
        mut arguments,
        given_weights,
        outputs,
        streamed_fp8,
    } = bind_values(package, function, &function_name, inputs)?;
    zero_unread_arguments(function, &function_name, &mut arguments)?;
    for weight in given_weights {
        replace_constant(
            &mut program,
            &function_name,
            &weight.binding,
            weight.value,
            &weight.tensor,
        )?;
    }
    let policy_scale = match source.precision {
        SourcePrecision::Fp8 { scale_exp } => Some(scale_exp),
        SourcePrecision::Native => None,
    };
    if policy_scale.is_some() || !streamed_fp8.is_empty() {
        cast_gemm_operands_to_fp8(&mut program, &function_name, policy_scale, &streamed_fp8);
    }
    let results = program
        .evaluate_named(&function_name, &arguments)
        .with_context(|| format!("evaluating @{function_name}"))?;
    let function = &program.functions[&function_name];
    let expected = expected_outputs(function, &function_name, &workload, results, outputs)?;
    Ok(Some(Reference {
        function: function_name,
        workload: workload.name(),
        outputs: expected,
        altered_weights,
    }))
}

/// The function the package runs, refused (listing the module's functions) when the source
/// module has none of that name.
fn source_function<'p>(program: &'p Program, function_name: &str) -> anyhow::Result<&'p Graph> {
    let Some(function) = program.functions.get(function_name) else {
        bail!(
            "the source module has no function @{function_name} (functions: {})",
            program
                .functions
                .keys()
                .map(|name| format!("@{name}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    Ok(function)
}

/// Why each weight of the package is not its source module's constant.
///
/// The device runs the package's weight bytes; the reference the source module's
/// constants. They must be the same values (a package whose weights were altered and
/// re-signed must not pass), unless the user gave the weight in --inputs.
fn altered_weights(
    package: &Package,
    program: &Program,
    function_name: &str,
    inputs: &BTreeMap<String, Tensor>,
) -> Vec<String> {
    package
        .bindings
        .iter()
        .filter(|b| b.role == BindingRole::Weight && !inputs.contains_key(&b.name))
        .filter_map(|binding| {
            check_weight_bytes(program, function_name, binding)
                .err()
                .map(|error| format!("{error:#}"))
        })
        .collect()
}

/// A weight the user gave in `--inputs`: it replaces constant `value` of the function.
struct GivenWeight {
    binding: String,
    value: usize,
    tensor: Tensor,
}

/// An output binding and the function result it holds.
struct OutputBinding {
    binding: String,
    result: usize,
    shape: Vec<u64>,
}

/// The package's bindings mapped onto the source function (see the module docs).
#[derive(Default)]
struct BoundValues {
    /// Reference arguments by name (`argN`): the tensors the device received.
    arguments: BTreeMap<String, Array>,
    given_weights: Vec<GivenWeight>,
    outputs: Vec<OutputBinding>,
    /// Host tensors the host streams encoded in FP8, by value: the device multiplies exactly
    /// those codes, at each stream's own scale.
    streamed_fp8: BTreeMap<usize, i32>,
}

/// Maps every binding of the package onto the function: inputs to arguments, weights given
/// in `inputs` to constants, outputs to results.
fn bind_values(
    package: &Package,
    function: &Graph,
    function_name: &str,
    inputs: &BTreeMap<String, Tensor>,
) -> anyhow::Result<BoundValues> {
    let mut bound = BoundValues::default();
    for binding in &package.bindings {
        if binding.precision.is_fp8() && binding.role != BindingRole::Output {
            let value = numbered(&binding.name, "arg").or(numbered(&binding.name, "const"));
            if let Some(value) = value {
                bound.streamed_fp8.insert(value, binding.scale_exp);
            }
        }
        match binding.role {
            BindingRole::Input => bind_input(
                binding,
                function,
                function_name,
                inputs,
                &mut bound.arguments,
            )?,
            BindingRole::Weight | BindingRole::Parameter => {
                if let Some(weight) = given_weight(binding, function_name, inputs)? {
                    bound.given_weights.push(weight);
                }
            }
            BindingRole::Output => {
                bound
                    .outputs
                    .push(output_binding(binding, function, function_name)?)
            }
        }
    }
    Ok(bound)
}

/// Adds the tensor of input `binding` to `arguments` as the argument it names, with the
/// values the device received (FP8 streams decoded from their codes).
fn bind_input(
    binding: &ipu_runtime::package::Binding,
    function: &Graph,
    function_name: &str,
    inputs: &BTreeMap<String, Tensor>,
    arguments: &mut BTreeMap<String, Array>,
) -> anyhow::Result<()> {
    let count = function.arguments().len();
    let index = numbered(&binding.name, "arg")
        .filter(|&index| index < count)
        .ok_or_else(|| {
            anyhow!(
                "input binding '{}' names no argument of @{function_name} \
                 ({count} arguments: arg0..)",
                binding.name,
            )
        })?;
    let tensor = inputs
        .get(&binding.name)
        .ok_or_else(|| anyhow!("no tensor for input binding '{}'", binding.name))?;
    let encoded;
    let tensor = if binding.precision.is_fp8() {
        encoded = streamed_values(tensor, binding.precision, binding.scale_exp)
            .with_context(|| format!("input '{}'", binding.name))?;
        &encoded
    } else {
        tensor
    };
    arguments.insert(
        format!("arg{index}"),
        Array::from_tensor(tensor).with_context(|| format!("input '{}'", binding.name))?,
    );
    Ok(())
}

/// The weight `binding` as given in `inputs` (FP8 streams decoded from their codes), or
/// `None` when the user did not give it.
fn given_weight(
    binding: &ipu_runtime::package::Binding,
    function_name: &str,
    inputs: &BTreeMap<String, Tensor>,
) -> anyhow::Result<Option<GivenWeight>> {
    let Some(tensor) = inputs.get(&binding.name) else {
        return Ok(None);
    };
    let tensor = if binding.precision.is_fp8() {
        streamed_values(tensor, binding.precision, binding.scale_exp)
            .with_context(|| format!("weight '{}'", binding.name))?
    } else {
        tensor.clone()
    };
    // A parameter is argument N (`argN`: arguments are the first values), a weight the
    // constant that is value N (`constN`).
    let prefix = if binding.role == BindingRole::Parameter {
        "arg"
    } else {
        "const"
    };
    let value = numbered(&binding.name, prefix).ok_or_else(|| {
        anyhow!(
            "{} binding '{}' names no {} of @{function_name}",
            binding.role.name(),
            binding.name,
            if prefix == "arg" {
                "argument"
            } else {
                "constant"
            }
        )
    })?;
    Ok(Some(GivenWeight {
        binding: binding.name.clone(),
        value,
        tensor,
    }))
}

/// The function result output `binding` names.
fn output_binding(
    binding: &ipu_runtime::package::Binding,
    function: &Graph,
    function_name: &str,
) -> anyhow::Result<OutputBinding> {
    let result = numbered(&binding.name, "result")
        .filter(|&index| index < function.outputs.len())
        .ok_or_else(|| {
            anyhow!(
                "output binding '{}' names no result of @{function_name} \
                 ({} results: result0..)",
                binding.name,
                function.outputs.len()
            )
        })?;
    Ok(OutputBinding {
        binding: binding.name.clone(),
        result,
        shape: binding.shape.clone(),
    })
}

/// Gives zeros for every argument the function never reads (nothing streams it); refuses
/// one that is read but has no input binding (the compiler's error).
fn zero_unread_arguments(
    function: &Graph,
    function_name: &str,
    arguments: &mut BTreeMap<String, Array>,
) -> anyhow::Result<()> {
    for (index, id) in function.arguments().into_iter().enumerate() {
        let name = format!("arg{index}");
        if arguments.contains_key(&name) {
            continue;
        }
        let read = function.ops.iter().any(|op| op.operands.contains(&id))
            || function.outputs.contains(&id);
        if read {
            bail!("argument {name} of @{function_name} is read but the package streams no input for it");
        }
        arguments.insert(name, Array::zeros(&usize_shape(&function.values[id])));
    }
    Ok(())
}

/// Each output's reference values (checked against the binding's shape) and the workload's
/// tolerance for it.
fn expected_outputs(
    function: &Graph,
    function_name: &str,
    workload: &Workload,
    results: Vec<Array>,
    outputs: Vec<OutputBinding>,
) -> anyhow::Result<Vec<ExpectedOutput>> {
    let mut expected = Vec::with_capacity(outputs.len());
    for OutputBinding {
        binding,
        result: index,
        shape,
    } in outputs
    {
        let values = results[index].clone();
        if values
            .shape
            .iter()
            .map(|&d| d as u64)
            .ne(shape.iter().copied())
        {
            bail!(
                "output binding '{binding}' has shape {shape:?}, result {index} of \
                 @{function_name} has shape {:?}",
                values.shape
            );
        }
        let tolerance = workload.tolerance(&function.values[function.outputs[index]], &values);
        expected.push(ExpectedOutput {
            binding,
            values,
            tolerance,
        });
    }
    Ok(expected)
}

/// Compares the device's outputs (by binding name) with the reference.
pub fn check(reference: &Reference, device: &BTreeMap<String, Tensor>) -> anyhow::Result<Outcome> {
    let mut outcome = Outcome {
        max_abs_error: 0.0,
        pass: reference.altered_weights.is_empty(),
        comparisons: Vec::new(),
    };
    for output in &reference.outputs {
        let tensor = device
            .get(&output.binding)
            .ok_or_else(|| anyhow!("the device returned no output '{}'", output.binding))?;
        let found = Array::from_tensor(tensor)
            .with_context(|| format!("device output '{}'", output.binding))?;
        let comparison = compare(&output.values, &found, &output.tolerance)
            .with_context(|| format!("output '{}'", output.binding))?;
        outcome.max_abs_error = outcome.max_abs_error.max(comparison.max_abs_error);
        outcome.pass &= comparison.pass;
        outcome
            .comparisons
            .push((output.binding.clone(), comparison));
    }
    Ok(outcome)
}

/// A readable account of one output's comparison, for the log and for failures.
pub fn describe(binding: &str, comparison: &Comparison) -> String {
    format!(
        "output '{binding}': {} of {} elements outside {}; max |x - ref| {:.6}, max rel {:.3e}; \
         worst at {:?}: device {}, reference {}",
        comparison.failures,
        comparison.elements,
        comparison.tolerance,
        comparison.max_abs_error,
        comparison.max_rel_error,
        comparison.worst_index,
        comparison.worst_device,
        comparison.worst_reference
    )
}

fn read_program(source: &PackageSource) -> anyhow::Result<Program> {
    let context = ipu_dialects::context::create_context(false)
        .context("creating the MLIR context for the source module")?;
    let module = ipu_dialects::context::parse_module(&context, &source.module)
        .map_err(|detail| anyhow!("the package's source module {detail}"))?;
    Program::from_module(&module).context("reading the source module")
}

/// A value's shape as an [`Array`] shape.
fn usize_shape(value: &Value) -> Vec<usize> {
    value.shape.iter().map(|&size| size as usize).collect()
}

/// `N` of `<prefix>N`.
fn numbered(name: &str, prefix: &str) -> Option<usize> {
    let digits = name.strip_prefix(prefix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The function and value a weight binding names: `constN` is value N of `function`,
/// `<prefix>.<body>.constN` value N of the repeat body `@body`.
fn weight_source<'n>(name: &'n str, function: &'n str) -> Option<(&'n str, usize)> {
    match name.rsplit_once('.') {
        None => Some((function, numbered(name, "const")?)),
        Some((prefix, last)) => {
            let body = prefix.rsplit('.').next()?;
            Some((body, numbered(last, "const")?))
        }
    }
}

/// An error unless weight `binding`'s bytes in the package are exactly its source constant
/// encoded as the binding is (precision, FP8 scale): names the first differing element.
fn check_weight_bytes(
    program: &Program,
    function_name: &str,
    binding: &ipu_runtime::package::Binding,
) -> anyhow::Result<()> {
    let name = &binding.name;
    let (function, value) = weight_source(name, function_name)
        .ok_or_else(|| anyhow!("weight binding '{name}' names no constant of the source module"))?;
    let source = program
        .functions
        .get(function)
        .ok_or_else(|| anyhow!("weight '{name}': the source module has no function @{function}"))?;
    let values = source
        .values
        .get(value)
        .filter(|value| value.origin == Origin::Constant)
        .and_then(|value| value.data.as_deref())
        .ok_or_else(|| anyhow!("weight '{name}' names no constant of @{function}"))?;
    let count = usize::try_from(binding.shape.iter().product::<u64>()).context("weight size")?;
    let element_bytes = binding.precision.bytes() as usize;
    if count.checked_mul(element_bytes) != Some(binding.data.len())
        || (values.len() != 1 && values.len() != count)
    {
        bail!(
            "weight '{name}' holds {} bytes in the package; its source constant has {} values of {:?}",
            binding.data.len(),
            values.len(),
            binding.shape
        );
    }
    let data: Vec<f32> = if values.len() == 1 {
        vec![values[0] as f32; count]
    } else {
        values.iter().map(|&v| v as f32).collect()
    };
    let expected = ipu_device::numerics::encode_bytes(
        &data,
        binding.precision,
        binding.scale_exp,
        ipu_device::numerics::Rounding::NearestEvenSaturating,
    )
    .with_context(|| format!("encoding weight '{name}'"))?;
    if let Some(at) = expected.iter().zip(&binding.data).position(|(a, b)| a != b) {
        bail!(
            "weight '{name}' in the package differs from its source constant at element {}: the device would not run the source module's weights",
            at / element_bytes.max(1)
        );
    }
    Ok(())
}

/// Replaces the values of the constant defining value `value` of `function` with `tensor` (a
/// weight given on the command line, which the device receives instead of the package's).
fn replace_constant(
    program: &mut Program,
    function: &str,
    binding: &str,
    value: usize,
    tensor: &Tensor,
) -> anyhow::Result<()> {
    let function = program
        .functions
        .get_mut(function)
        .ok_or_else(|| anyhow!("no function @{function}"))?;
    let Some(declared) = function
        .values
        .get_mut(value)
        .filter(|value| value.origin == Origin::Constant)
    else {
        bail!("weight binding '{binding}' names no constant of the source function");
    };
    if declared.shape != tensor.shape {
        bail!(
            "weight '{binding}': the given tensor has shape {:?}, the constant is {}",
            tensor.shape,
            describe_value(declared)
        );
    }
    let data: Vec<f64> = tensor.data.iter().map(|&v| f64::from(v)).collect();
    declared.max_abs = Some(data.iter().fold(0.0, |max: f64, x| max.max(x.abs())));
    declared.data = Some(data.into());
    Ok(())
}

/// The values a host tensor has on the device when the host encodes it into an FP8 stream
/// (`precision` at `scale_exp`): each value rounded once from the given data, as the runtime
/// encodes it (nearest even, saturating). The reference evaluates the function on these, so
/// the argument's own type (F16) rounds nothing more.
fn streamed_values(
    tensor: &Tensor,
    precision: ipu_device::Precision,
    scale_exp: i32,
) -> anyhow::Result<Tensor> {
    use ipu_device::numerics::{decode_bytes, encode_bytes, Rounding};
    let bytes = encode_bytes(
        &tensor.data,
        precision,
        scale_exp,
        Rounding::NearestEvenSaturating,
    )?;
    Ok(Tensor {
        shape: tensor.shape.clone(),
        data: decode_bytes(&bytes, precision, scale_exp)?,
    })
}

/// Under the FP8 policy each GEMM operand is rounded to FP8 E4M3 before the multiply: by
/// the host as it streams a host tensor of the entry function `entry` (at that stream's
/// scale, `streamed` by value id), else by the device at the policy's `scale_exp`. Puts the
/// same casts in front of every matmul operand that is not FP8 already. A matmul with an f32
/// result runs in f32 on the device under any policy (FP8 products accumulate F16 partials,
/// and the lowering computes a product whose result is not its input's partials type in the
/// operands' own precision), so its operands are left as they are.
fn cast_gemm_operands_to_fp8(
    program: &mut Program,
    entry: &str,
    scale_exp: Option<i32>,
    streamed: &BTreeMap<usize, i32>,
) {
    let no_streams = BTreeMap::new();
    for (name, graph) in program.functions.iter_mut() {
        let streamed = if name == entry { streamed } else { &no_streams };
        *graph = with_fp8_gemm_operands(graph, scale_exp, streamed);
    }
}

/// `graph` with the casts of [`cast_gemm_operands_to_fp8`] in front of its matmuls (and those
/// of its repeat bodies, which stream nothing). Every value keeps its id (bindings name values
/// by id); each cast's result is a new value.
fn with_fp8_gemm_operands(
    graph: &Graph,
    scale_exp: Option<i32>,
    streamed: &BTreeMap<usize, i32>,
) -> Graph {
    let mut rewritten = Graph {
        values: graph.values.clone(),
        ops: Vec::with_capacity(graph.ops.len()),
        outputs: graph.outputs.clone(),
        ..Graph::default()
    };
    for op in &graph.ops {
        let mut op: Op = op.clone();
        if let OpKind::Repeat { body, .. } = &mut op.kind {
            **body = with_fp8_gemm_operands(body, scale_exp, &BTreeMap::new());
        }
        let f16_result = op
            .results
            .first()
            .and_then(|&result| graph.values.get(result))
            .is_some_and(|value| value.element == ElementType::F16);
        if matches!(op.kind, OpKind::Matmul { .. }) && f16_result {
            for operand in op.operands.iter_mut() {
                let Some(value) = graph.values.get(*operand) else {
                    continue;
                };
                if value.element.is_fp8() {
                    continue;
                }
                let Some(scale_exp) = streamed.get(operand).copied().or(scale_exp) else {
                    continue;
                };
                let cast = rewritten.add_op(
                    OpKind::Cast {
                        scale: i64::from(scale_exp),
                    },
                    vec![*operand],
                    value.shape.clone(),
                    ElementType::F8E4M3,
                );
                rewritten.values[cast].scale = scale_exp;
                if let Some(added) = rewritten.ops.last_mut() {
                    added.location = op.location.clone();
                }
                *operand = cast;
            }
        }
        let index = rewritten.ops.len();
        for &result in &op.results {
            rewritten.values[result].origin = Origin::Op(index);
        }
        rewritten.ops.push(op);
    }
    rewritten
}

/// What the function computes, for the tolerance rule.
enum Workload {
    /// Matmuls (and casts, constants, rearranges) only; `k` is the longest contraction.
    Gemm {
        k: usize,
    },
    /// Matmuls with bias adds and GeLUs between them (an MLP block); `k` is the sum of the
    /// contraction lengths.
    Mlp {
        k: usize,
    },
    Other,
    /// Any other function under the FP8 policy: its GEMM operands computed on the device
    /// (attention outputs, layer norms) are rounded to E4M3, and an operand within one rounding
    /// of an FP8 step may land on either side between two faithful evaluations (the device's
    /// F16 vector ops and the host's f64), moving the result by up to an E4M3 step of its
    /// products: the FP8 rule of `--expected`, 2^-3 of the output's scale
    /// (`super::expected::FP8_TOLERANCE`).
    Fp8Other,
}

impl Workload {
    /// The workload of `function` compiled under `precision` (see [`Workload::Fp8Other`]).
    fn under(function: &Graph, precision: &SourcePrecision) -> Workload {
        match (Workload::of(function), precision) {
            (Workload::Other, SourcePrecision::Fp8 { .. }) => Workload::Fp8Other,
            (workload, _) => workload,
        }
    }

    fn of(function: &Graph) -> Workload {
        let mut k = 0usize;
        let mut k_sum = 0usize;
        let mut pointwise = false;
        for operation in &function.ops {
            match &operation.kind {
                OpKind::Matmul { transpose_lhs, .. } => {
                    let lhs = operation
                        .operands
                        .first()
                        .and_then(|&id| function.values.get(id));
                    let Some(lhs) = lhs.filter(|t| t.shape.len() >= 2) else {
                        return Workload::Other;
                    };
                    let rank = lhs.shape.len();
                    let contraction = if *transpose_lhs {
                        lhs.shape[rank - 2]
                    } else {
                        lhs.shape[rank - 1]
                    } as usize;
                    k = k.max(contraction);
                    k_sum += contraction;
                }
                OpKind::Cast { .. } | OpKind::Rearrange { .. } => {}
                OpKind::Add | OpKind::Gelu { .. } => pointwise = true,
                _ => return Workload::Other,
            }
        }
        if k == 0 {
            Workload::Other
        } else if pointwise {
            Workload::Mlp { k: k_sum }
        } else {
            Workload::Gemm { k }
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Workload::Gemm { .. } => "gemm",
            Workload::Mlp { .. } => "mlp",
            Workload::Other => "checkpoint",
            Workload::Fp8Other => "checkpoint-fp8",
        }
    }

    fn tolerance(&self, output: &Value, reference: &Array) -> Tolerance {
        match *self {
            Workload::Gemm { k } | Workload::Mlp { k } => match output.element {
                // F32 partials: the same derivation with f32's unit roundoff.
                ElementType::F32 => {
                    let max_reference = reference
                        .data
                        .iter()
                        .filter(|v| v.is_finite())
                        .fold(0.0f64, |max, v| max.max(v.abs()));
                    let u = unit_roundoff(ElementType::F32);
                    Tolerance::Elementwise {
                        abs: 2.0 * (k as f64).sqrt() * u * max_reference + (-149.0f64).exp2(),
                        rel: 2.0 * u,
                    }
                }
                element => Tolerance::fp8_gemm(k, element, output.scale, reference),
            },
            Workload::Other => Tolerance::CHECKPOINT,
            Workload::Fp8Other => {
                let max_reference = reference
                    .data
                    .iter()
                    .filter(|v| v.is_finite())
                    .fold(0.0f64, |max, v| max.max(v.abs()));
                let t = super::expected::FP8_TOLERANCE;
                Tolerance::Elementwise {
                    abs: t * max_reference,
                    rel: t,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_functions_under_fp8_are_held_to_the_fp8_rule() {
        let mut graph = Graph::default();
        let x = graph.add_value(vec![2, 4], ElementType::F16, Origin::Argument);
        let y = graph.add_op(OpKind::Softmax, vec![x], vec![2, 4], ElementType::F16);
        graph.outputs = vec![y];
        let reference =
            Array::new(vec![2, 4], vec![0.5, -2.0, 1.0, 0.0, 0.25, 0.0, 0.0, 0.0]).unwrap();
        let value = &graph.values[y];
        let native = Workload::under(&graph, &SourcePrecision::Native);
        assert_eq!(native.name(), "checkpoint");
        assert_eq!(native.tolerance(value, &reference), Tolerance::CHECKPOINT);
        let fp8 = Workload::under(&graph, &SourcePrecision::Fp8 { scale_exp: 0 });
        assert_eq!(fp8.name(), "checkpoint-fp8");
        assert_eq!(
            fp8.tolerance(value, &reference),
            Tolerance::Elementwise {
                abs: 0.25,
                rel: 0.125
            }
        );
        // A GEMM keeps its own rule under FP8.
        let gemm = gemm_program(ElementType::F16);
        let gemm = Workload::under(
            &gemm.functions["gemm"],
            &SourcePrecision::Fp8 { scale_exp: 0 },
        );
        assert_eq!(gemm.name(), "gemm");
    }

    #[test]
    fn binding_numbers() {
        assert_eq!(numbered("arg0", "arg"), Some(0));
        assert_eq!(numbered("arg12", "arg"), Some(12));
        assert_eq!(numbered("arg", "arg"), None);
        assert_eq!(numbered("arg+1", "arg"), None);
        assert_eq!(numbered("const3", "arg"), None);
    }

    /// A program of one function `gemm`: a 2x4 @ 4x3 matmul in `element`.
    fn gemm_program(element: ElementType) -> Program {
        let mut graph = Graph::default();
        let a = graph.add_value(vec![2, 4], element, Origin::Argument);
        let b = graph.add_value(vec![4, 3], element, Origin::Argument);
        let y = graph.add_op(
            OpKind::Matmul {
                transpose_lhs: false,
                transpose_rhs: false,
            },
            vec![a, b],
            vec![2, 3],
            element,
        );
        graph.outputs = vec![y];
        let mut program = Program::new();
        program.insert("gemm", graph);
        program
    }

    #[test]
    fn fp8_policy_casts_matmul_operands_once() {
        let mut program = gemm_program(ElementType::F16);
        assert!(matches!(
            Workload::of(&program.functions["gemm"]),
            Workload::Gemm { k: 4 }
        ));
        // The right operand (value 1) was streamed by the host at scale -4; the left one is
        // cast at the policy's -2.
        let streamed = BTreeMap::from([(1usize, -4)]);
        let mut other = program.clone();
        cast_gemm_operands_to_fp8(&mut other, "gemm", Some(-2), &streamed);
        let body = other.functions["gemm"].ops.clone();
        assert!(matches!(body[0].kind, OpKind::Cast { scale: -2 }));
        assert!(matches!(body[1].kind, OpKind::Cast { scale: -4 }));
        // Without a policy scale only streamed operands are rounded.
        let mut other = program.clone();
        cast_gemm_operands_to_fp8(&mut other, "gemm", None, &streamed);
        let body = other.functions["gemm"].ops.clone();
        assert_eq!(body.len(), 2);
        assert!(matches!(body[0].kind, OpKind::Cast { scale: -4 }));
        cast_gemm_operands_to_fp8(&mut program, "gemm", Some(-2), &BTreeMap::new());
        let function = &program.functions["gemm"];
        let body = &function.ops;
        assert_eq!(body.len(), 3);
        assert!(matches!(body[0].kind, OpKind::Cast { scale: -2 }));
        assert_eq!(
            function.values[body[2].operands[0]].element,
            ElementType::F8E4M3
        );
        assert_eq!(function.values[body[2].operands[1]].scale, -2);
        assert!(function.check().is_ok());
        // 0.3 is not on the FP8 grid at scale -2 (steps of 1/32 near it): the reference
        // multiplies the rounded operand, 0.3125, as the device does.
        let lhs = Array::new(vec![2, 4], vec![0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
        let rhs = Array::new(vec![4, 3], vec![1.0; 12]).unwrap();
        let result = program.evaluate("gemm", &[lhs, rhs]).unwrap();
        assert_eq!(result[0].data[0], 0.3125);
    }

    #[test]
    fn fp8_policy_casts_matmul_operands_in_repeat_bodies() {
        let body = gemm_program(ElementType::F16).functions["gemm"].clone();
        let mut graph = Graph::default();
        let a = graph.add_value(vec![2, 4], ElementType::F16, Origin::Argument);
        let b = graph.add_value(vec![4, 3], ElementType::F16, Origin::Argument);
        let results = graph.add_op_results(
            OpKind::Repeat {
                count: 1,
                name: "gemm".into(),
                body: Box::new(body),
                iterated: Vec::new(),
            },
            vec![a, b],
            vec![(vec![2, 3], ElementType::F16)],
        );
        graph.outputs = results;
        let mut program = Program::new();
        program.insert("outer", graph);
        cast_gemm_operands_to_fp8(&mut program, "outer", Some(-2), &BTreeMap::from([(0, -4)]));
        let outer = &program.functions["outer"];
        assert_eq!(outer.ops.len(), 1);
        let OpKind::Repeat { body, .. } = &outer.ops[0].kind else {
            panic!("the repeat stays");
        };
        // The body streams nothing: both operands are cast at the policy's scale.
        assert!(matches!(body.ops[0].kind, OpKind::Cast { scale: -2 }));
        assert!(matches!(body.ops[1].kind, OpKind::Cast { scale: -2 }));
        assert!(matches!(body.ops[2].kind, OpKind::Matmul { .. }));
        assert_eq!(body.values[body.outputs[0]].origin, Origin::Op(2));
        assert!(outer.check().is_ok());
    }

    #[test]
    fn fp8_policy_leaves_f32_products_alone() {
        let mut program = gemm_program(ElementType::F32);
        cast_gemm_operands_to_fp8(&mut program, "gemm", Some(-2), &BTreeMap::new());
        assert_eq!(program.functions["gemm"].ops.len(), 1);
    }
}
