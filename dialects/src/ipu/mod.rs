//! Typed views and builders for the `ipu` graph ops (declared in `dialects/irdl/ipu.irdl.mlir`).
//!
//! A view wraps an `OperationRef` whose name matched (`MatmulOp::try_from(op)`), exposes its
//! operands and attributes by name, and has a builder. Optional attributes (IRDL accepts any
//! undeclared attribute unchecked) are read and checked here and in [`verify`].

pub mod verify;

use melior::{
    ir::{
        attribute::{
            AttributeLike, FlatSymbolRefAttribute, FloatAttribute, IntegerAttribute,
            StringAttribute,
        },
        operation::{OperationBuilder, OperationLike},
        r#type::IntegerType,
        Attribute, Identifier, Location, Operation, OperationRef, Type, Value,
    },
    Context,
};

pub use verify::verify_operation;

/// The op defining `value`, if it is an op result (not a block argument).
pub fn producer_of<'c, 'a>(value: Value<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    // Checked first: melior's failing `try_from` prints the value, which verifies (and so
    // reads) the whole enclosing op: a data race with passes running on sibling functions.
    // SAFETY: `value` is live; the predicate only reads its kind.
    if !unsafe { mlir_sys::mlirValueIsAOpResult(melior::ir::ValueLike::to_raw(&value)) } {
        return None;
    }
    melior::ir::operation::OperationResult::try_from(value)
        .ok()
        .map(|result| result.owner())
}

/// Names of every `ipu` op.
pub const OP_NAMES: &[&str] = &[
    MatmulOp::NAME,
    AddOp::NAME,
    GeluOp::NAME,
    SoftmaxOp::NAME,
    LayerNormOp::NAME,
    AttentionOp::NAME,
    CastOp::NAME,
    RearrangeOp::NAME,
    ReshapeOp::NAME,
    RepeatOp::NAME,
    StackOp::NAME,
    ScanOp::NAME,
    MapOp::NAME,
    ReduceOp::NAME,
    BroadcastOp::NAME,
    SliceOp::NAME,
    ConcatOp::NAME,
];

macro_rules! op_view {
    ($(#[$doc:meta])* $view:ident, $name:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub struct $view<'c, 'a> {
            op: OperationRef<'c, 'a>,
        }

        impl<'c, 'a> $view<'c, 'a> {
            /// The op's full name.
            pub const NAME: &'static str = $name;

            /// The underlying operation.
            pub fn operation(&self) -> OperationRef<'c, 'a> {
                self.op
            }

            /// The single result.
            pub fn result(&self) -> Option<Value<'c, 'a>> {
                self.op.result(0).ok().map(Value::from)
            }
        }

        impl<'c, 'a> TryFrom<OperationRef<'c, 'a>> for $view<'c, 'a> {
            type Error = OperationRef<'c, 'a>;

            fn try_from(op: OperationRef<'c, 'a>) -> Result<Self, Self::Error> {
                if op_name(&op) == $name {
                    Ok(Self { op })
                } else {
                    Err(op)
                }
            }
        }
    };
}

/// The name of an operation as a `String`.
pub fn op_name<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> String {
    op.name().as_string_ref().as_str().unwrap_or("").to_string()
}

/// Whether an optional flag attribute is set: a unit attribute or `true`.
pub fn flag<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, name: &str) -> bool {
    match op.attribute(name) {
        Ok(attribute) => matches!(flag_value(attribute), Some(true)),
        Err(_) => false,
    }
}

/// The value of a flag attribute: `Some(true)` for a unit attribute or `true`, `Some(false)` for
/// `false`, `None` for any other attribute. (Asks MLIR instead of printing the attribute: a
/// print builds an `AsmState` over every loaded dialect, too slow for a per-op verifier.)
pub fn flag_value(attribute: Attribute) -> Option<bool> {
    let raw = attribute.to_raw();
    // SAFETY: `raw` is a live attribute; the predicates only compare its TypeID, and the bool
    // value is read only from a bool attribute.
    unsafe {
        if mlir_sys::mlirAttributeIsAUnit(raw) {
            Some(true)
        } else if mlir_sys::mlirAttributeIsABool(raw) {
            Some(mlir_sys::mlirBoolAttrGetValue(raw))
        } else {
            None
        }
    }
}

/// The elements of a `array<i64: ...>` attribute, `None` for any other attribute.
pub fn i64_array(attribute: Attribute) -> Option<Vec<i64>> {
    let raw = attribute.to_raw();
    // SAFETY: `raw` is a live attribute; elements are read only from a dense i64 array, within
    // its element count.
    unsafe {
        if !mlir_sys::mlirAttributeIsADenseI64Array(raw) {
            return None;
        }
        let count = mlir_sys::mlirDenseArrayGetNumElements(raw);
        Some(
            (0..count)
                .map(|index| mlir_sys::mlirDenseI64ArrayGetElement(raw, index))
                .collect(),
        )
    }
}

/// An optional integer attribute.
pub fn int_attribute<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, name: &str) -> Option<i64> {
    let attribute = op.attribute(name).ok()?;
    IntegerAttribute::try_from(attribute)
        .ok()
        .map(|value| value.value())
}

/// An optional float attribute.
pub fn float_attribute<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, name: &str) -> Option<f64> {
    let attribute = op.attribute(name).ok()?;
    FloatAttribute::try_from(attribute)
        .ok()
        .map(|value| value.value())
}

/// An optional string attribute.
pub fn string_attribute<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, name: &str) -> Option<String> {
    string_value(op.attribute(name).ok()?)
}

/// The text of a string attribute (`None` when `attribute` is not one). An empty or non-UTF-8
/// string is read safely: melior's `StringAttribute::value` panics on both.
pub fn string_value(attribute: melior::ir::Attribute) -> Option<String> {
    let string = StringAttribute::try_from(attribute).ok()?;
    // SAFETY: `string` is a live string attribute; the returned reference points into
    // the context's storage, which outlives this call.
    Some(raw_string(unsafe {
        mlir_sys::mlirStringAttrGetValue(string.to_raw())
    }))
}

/// The name a flat symbol reference holds (`None` when `attribute` is not one), read as
/// safely as [`string_value`].
pub fn symbol_value(attribute: melior::ir::Attribute) -> Option<String> {
    let symbol = FlatSymbolRefAttribute::try_from(attribute).ok()?;
    // SAFETY: as in `string_value`.
    Some(raw_string(unsafe {
        mlir_sys::mlirFlatSymbolRefAttrGetValue(symbol.to_raw())
    }))
}

fn raw_string(raw: mlir_sys::MlirStringRef) -> String {
    if raw.data.is_null() || raw.length == 0 {
        return String::new();
    }
    // SAFETY: MLIR's string references point at `length` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(raw.data.cast::<u8>(), raw.length) };
    String::from_utf8_lossy(bytes).into_owned()
}

fn operand<'c, 'a>(op: OperationRef<'c, 'a>, index: usize) -> Option<Value<'c, 'a>> {
    op.operand(index).ok()
}

fn unit(context: &Context) -> Attribute<'_> {
    Attribute::unit(context)
}

fn named<'c>(
    context: &'c Context,
    name: &str,
    attribute: Attribute<'c>,
) -> (Identifier<'c>, Attribute<'c>) {
    (Identifier::new(context, name), attribute)
}

fn build<'c>(
    name: &str,
    location: Location<'c>,
    operands: &[Value<'c, '_>],
    result: Type<'c>,
    attributes: &[(Identifier<'c>, Attribute<'c>)],
) -> Operation<'c> {
    OperationBuilder::new(name, location)
        .add_operands(operands)
        .add_results(&[result])
        .add_attributes(attributes)
        .build()
        .expect("an op with valid operands, one result and attributes always builds")
}

op_view!(
    /// `result = op(lhs) @ op(rhs)` where `op` transposes the last two axes when the optional
    /// `transpose_lhs` / `transpose_rhs` flags are set; leading (batch) axes broadcast.
    ///
    /// ```mlir
    /// %r = "ipu.matmul"(%a, %w) {transpose_rhs} : (tensor<729x1152xf16>, tensor<4304x1152xf16>) -> tensor<729x4304xf16>
    /// ```
    MatmulOp,
    "ipu.matmul"
);

impl<'c, 'a> MatmulOp<'c, 'a> {
    pub fn lhs(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 0)
    }
    pub fn rhs(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 1)
    }
    pub fn transpose_lhs(&self) -> bool {
        flag(&self.op, "transpose_lhs")
    }
    pub fn transpose_rhs(&self) -> bool {
        flag(&self.op, "transpose_rhs")
    }

    /// Builds an `ipu.matmul`.
    pub fn build(
        context: &'c Context,
        location: Location<'c>,
        lhs: Value<'c, '_>,
        rhs: Value<'c, '_>,
        result: Type<'c>,
        transpose_lhs: bool,
        transpose_rhs: bool,
    ) -> Operation<'c> {
        let mut attributes = Vec::new();
        if transpose_lhs {
            attributes.push(named(context, "transpose_lhs", unit(context)));
        }
        if transpose_rhs {
            attributes.push(named(context, "transpose_rhs", unit(context)));
        }
        build(Self::NAME, location, &[lhs, rhs], result, &attributes)
    }
}

op_view!(
    /// Elementwise `lhs + rhs` with NumPy broadcasting.
    ///
    /// ```mlir
    /// %r = "ipu.add"(%x, %bias) : (tensor<729x4304xf16>, tensor<4304xf16>) -> tensor<729x4304xf16>
    /// ```
    AddOp,
    "ipu.add"
);

impl<'c, 'a> AddOp<'c, 'a> {
    pub fn lhs(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 0)
    }
    pub fn rhs(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 1)
    }

    pub fn build(
        location: Location<'c>,
        lhs: Value<'c, '_>,
        rhs: Value<'c, '_>,
        result: Type<'c>,
    ) -> Operation<'c> {
        build(Self::NAME, location, &[lhs, rhs], result, &[])
    }
}

op_view!(
    /// GeLU; `approximate = "tanh"` selects the tanh form, the default is the exact erf form.
    ///
    /// ```mlir
    /// %r = "ipu.gelu"(%x) {approximate = "tanh"} : (tensor<729x4304xf16>) -> tensor<729x4304xf16>
    /// ```
    GeluOp,
    "ipu.gelu"
);

impl<'c, 'a> GeluOp<'c, 'a> {
    pub fn input(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 0)
    }
    /// `"erf"` (default) or `"tanh"`.
    pub fn approximate(&self) -> String {
        string_attribute(&self.op, "approximate").unwrap_or_else(|| "erf".to_string())
    }

    pub fn build(
        context: &'c Context,
        location: Location<'c>,
        input: Value<'c, '_>,
        result: Type<'c>,
        tanh: bool,
    ) -> Operation<'c> {
        let mut attributes = Vec::new();
        if tanh {
            attributes.push(named(
                context,
                "approximate",
                StringAttribute::new(context, "tanh").into(),
            ));
        }
        build(Self::NAME, location, &[input], result, &attributes)
    }
}

op_view!(
    /// Softmax over the last axis.
    ///
    /// ```mlir
    /// %r = "ipu.softmax"(%scores) : (tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
    /// ```
    SoftmaxOp,
    "ipu.softmax"
);

impl<'c, 'a> SoftmaxOp<'c, 'a> {
    pub fn input(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 0)
    }

    pub fn build(location: Location<'c>, input: Value<'c, '_>, result: Type<'c>) -> Operation<'c> {
        build(Self::NAME, location, &[input], result, &[])
    }
}

op_view!(
    /// Layer norm over the last axis: `(x - mean) / sqrt(var + epsilon) * gamma + beta`, with
    /// `gamma` and `beta` 1-D of the last axis' size.
    ///
    /// ```mlir
    /// %r = "ipu.layer_norm"(%x, %g, %b) {epsilon = 1.0e-06 : f32} : (tensor<729x1152xf16>, tensor<1152xf16>, tensor<1152xf16>) -> tensor<729x1152xf16>
    /// ```
    LayerNormOp,
    "ipu.layer_norm"
);

impl<'c, 'a> LayerNormOp<'c, 'a> {
    pub fn input(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 0)
    }
    pub fn gamma(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 1)
    }
    pub fn beta(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 2)
    }
    pub fn epsilon(&self) -> Option<f64> {
        float_attribute(&self.op, "epsilon")
    }

    #[allow(clippy::too_many_arguments)]
    pub fn build(
        context: &'c Context,
        location: Location<'c>,
        input: Value<'c, '_>,
        gamma: Value<'c, '_>,
        beta: Value<'c, '_>,
        result: Type<'c>,
        epsilon: f64,
    ) -> Operation<'c> {
        let epsilon = FloatAttribute::new(context, Type::float32(context), epsilon).into();
        build(
            Self::NAME,
            location,
            &[input, gamma, beta],
            result,
            &[named(context, "epsilon", epsilon)],
        )
    }
}

op_view!(
    /// Scaled dot-product attention `softmax(q k^T * scale [+ causal mask]) v` over the last two
    /// axes; `q: [..., S, D]`, `k: [..., T, D]`, `v: [..., T, E]`, result `[..., S, E]`.
    /// Optional `causal` flag and `scale` (default `1/sqrt(D)`).
    ///
    /// ```mlir
    /// %r = "ipu.attention"(%q, %k, %v) {causal, scale = 0.125 : f32} : (tensor<12x1024x64xf16>, tensor<12x1024x64xf16>, tensor<12x1024x64xf16>) -> tensor<12x1024x64xf16>
    /// ```
    AttentionOp,
    "ipu.attention"
);

impl<'c, 'a> AttentionOp<'c, 'a> {
    pub fn query(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 0)
    }
    pub fn key(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 1)
    }
    pub fn value(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 2)
    }
    pub fn causal(&self) -> bool {
        flag(&self.op, "causal")
    }
    /// The explicit scale, if any.
    pub fn scale(&self) -> Option<f64> {
        float_attribute(&self.op, "scale")
    }

    #[allow(clippy::too_many_arguments)]
    pub fn build(
        context: &'c Context,
        location: Location<'c>,
        query: Value<'c, '_>,
        key: Value<'c, '_>,
        value: Value<'c, '_>,
        result: Type<'c>,
        causal: bool,
        scale: Option<f64>,
    ) -> Operation<'c> {
        let mut attributes = Vec::new();
        if causal {
            attributes.push(named(context, "causal", unit(context)));
        }
        if let Some(scale) = scale {
            attributes.push(named(
                context,
                "scale",
                FloatAttribute::new(context, Type::float32(context), scale).into(),
            ));
        }
        build(
            Self::NAME,
            location,
            &[query, key, value],
            result,
            &attributes,
        )
    }
}

op_view!(
    /// Precision conversion. For an FP8 side, the optional `scale` is the power-of-two exponent
    /// of that side's per-tensor scale (FP8 value = q * 2^scale), in [-31, 31].
    ///
    /// ```mlir
    /// %q = "ipu.cast"(%x) {scale = -2 : i32} : (tensor<64x64xf16>) -> tensor<64x64xf8E4M3FNUZ>
    /// ```
    CastOp,
    "ipu.cast"
);

impl<'c, 'a> CastOp<'c, 'a> {
    /// The inclusive range of FP8 scale exponents: poplar's documented metadata range, the same
    /// one `ipu_device::numerics` enforces.
    pub const SCALE_RANGE: std::ops::RangeInclusive<i64> = -31..=31;

    pub fn input(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 0)
    }
    pub fn scale(&self) -> i64 {
        int_attribute(&self.op, "scale").unwrap_or(0)
    }

    pub fn build(
        context: &'c Context,
        location: Location<'c>,
        input: Value<'c, '_>,
        result: Type<'c>,
        scale: i64,
    ) -> Operation<'c> {
        let mut attributes = Vec::new();
        if scale != 0 {
            let attribute =
                IntegerAttribute::new(IntegerType::new(context, 32).into(), scale).into();
            attributes.push(named(context, "scale", attribute));
        }
        build(Self::NAME, location, &[input], result, &attributes)
    }
}

op_view!(
    /// Layout conversion: the result has the same elements in another format (element order,
    /// blocking, partitioning, padding, memory class), optionally with its axes permuted by
    /// `permutation` (a transpose when `[1, 0]`).
    ///
    /// ```mlir
    /// %r = "ipu.rearrange"(%x) : (tensor<64x64xf16>) -> tensor<64x64xf16, #ipu.format<"amp_left", [64, 16], [1, 1], [0, 0], "interleaved", 0>>
    /// %t = "ipu.rearrange"(%w) {permutation = array<i64: 1, 0>} : (tensor<16x32xf16>) -> tensor<32x16xf16>
    /// ```
    RearrangeOp,
    "ipu.rearrange"
);

impl<'c, 'a> RearrangeOp<'c, 'a> {
    pub fn input(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 0)
    }

    /// The axis permutation, if any (`permutation = array<i64: ...>`).
    pub fn permutation(&self) -> Option<Vec<i64>> {
        i64_array(self.op.attribute("permutation").ok()?)
    }

    pub fn build(
        context: &'c Context,
        location: Location<'c>,
        input: Value<'c, '_>,
        result: Type<'c>,
        permutation: Option<&[i64]>,
    ) -> Operation<'c> {
        let mut attributes = Vec::new();
        if let Some(permutation) = permutation {
            let items: Vec<String> = permutation.iter().map(|axis| axis.to_string()).collect();
            let text = format!("array<i64: {}>", items.join(", "));
            if let Some(attribute) = Attribute::parse(context, &text) {
                attributes.push(named(context, "permutation", attribute));
            }
        }
        build(Self::NAME, location, &[input], result, &attributes)
    }
}

op_view!(
    /// The same elements in another shape, row-major order kept: any reshape preserving the
    /// element count and type (splitting `[S, H * D]` into heads `[S, H, D]`, merging them back,
    /// flattening leading axes).
    ///
    /// ```mlir
    /// %h = "ipu.reshape"(%x) : (tensor<197x768xf16>) -> tensor<197x12x64xf16>
    /// ```
    ReshapeOp,
    "ipu.reshape"
);

impl<'c, 'a> ReshapeOp<'c, 'a> {
    pub fn input(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 0)
    }

    pub fn build(location: Location<'c>, input: Value<'c, '_>, result: Type<'c>) -> Operation<'c> {
        build(Self::NAME, location, &[input], result, &[])
    }
}

/// Parses `array<i64: 1, 0>` (and `array<i64>`).
pub fn parse_i64_array(text: &str) -> Option<Vec<i64>> {
    let inner = text.strip_prefix("array<i64")?.strip_suffix('>')?;
    let inner = inner.trim_start_matches(':').trim();
    if inner.is_empty() {
        return Some(Vec::new());
    }
    inner
        .split(',')
        .map(|item| item.trim().parse().ok())
        .collect()
}

op_view!(
    /// A structured loop, planned once and never unrolled: calls the body function `body`
    /// `count` times, threading the carried values; the body's `func.return` is the loop's
    /// yield (IRDL ops cannot be region terminators, so the body is a function).
    ///
    /// ```mlir
    /// func.func private @layer(%x: tensor<729x1152xf16>) -> tensor<729x1152xf16>
    /// %y = "ipu.repeat"(%x) {body = @layer, count = 27 : i64} : (tensor<729x1152xf16>) -> tensor<729x1152xf16>
    /// ```
    RepeatOp,
    "ipu.repeat"
);

impl<'c, 'a> RepeatOp<'c, 'a> {
    pub fn carried(&self) -> Vec<Value<'c, 'a>> {
        self.op.operands().collect()
    }
    pub fn count(&self) -> Option<i64> {
        int_attribute(&self.op, "count")
    }
    /// The body function's symbol name.
    pub fn body(&self) -> Option<String> {
        symbol_value(self.op.attribute("body").ok()?)
    }

    pub fn build(
        context: &'c Context,
        location: Location<'c>,
        carried: &[Value<'c, '_>],
        results: &[Type<'c>],
        body: &str,
        count: i64,
    ) -> Operation<'c> {
        let count = IntegerAttribute::new(IntegerType::new(context, 64).into(), count).into();
        OperationBuilder::new(Self::NAME, location)
            .add_operands(carried)
            .add_results(results)
            .add_attributes(&[
                named(
                    context,
                    "body",
                    FlatSymbolRefAttribute::new(context, body).into(),
                ),
                named(context, "count", count),
            ])
            .build()
            .expect("ipu.repeat with operands, results and attributes always builds")
    }
}

op_view!(
    /// A per-iteration stack for an [`ScanOp`]: `tensor`, viewed as slices along its leading
    /// axis, as a `!ipu.stacked` value (one type for every stack, so that a scan's variadic
    /// stacks unify under IRDL whatever the tensors' shapes).
    ///
    /// ```mlir
    /// %s = "ipu.stack"(%ws) : (tensor<12x768x768xf16>) -> !ipu.stacked
    /// ```
    StackOp,
    "ipu.stack"
);

impl<'c, 'a> StackOp<'c, 'a> {
    /// The stacked tensor.
    pub fn tensor(&self) -> Option<Value<'c, 'a>> {
        self.op.operand(0).ok()
    }
}

op_view!(
    /// A structured loop over per-iteration stacks, planned once and never unrolled: calls
    /// the body function `body` `count` times, threading the one carried value `init`, and
    /// giving iteration i slice i of each stack (made by [`StackOp`], leading axis `count`): a
    /// real encoder's layers, each with its own weights. The body takes the carried value,
    /// then one slice per stack, and returns the carried value.
    ///
    /// ```mlir
    /// func.func private @layer(%x: tensor<197x768xf16>, %w: tensor<768x768xf16>, %b: tensor<768xf16>) -> tensor<197x768xf16>
    /// %y = "ipu.scan"(%x, %sw, %sb) {body = @layer, count = 12 : i64} : (tensor<197x768xf16>, !ipu.stacked, !ipu.stacked) -> tensor<197x768xf16>
    /// ```
    ScanOp,
    "ipu.scan"
);

impl<'c, 'a> ScanOp<'c, 'a> {
    pub fn count(&self) -> Option<i64> {
        int_attribute(&self.op, "count")
    }
    /// The body function's symbol name.
    pub fn body(&self) -> Option<String> {
        symbol_value(self.op.attribute("body").ok()?)
    }
    /// The stacked tensors, in operand order (`None` for a stack no [`StackOp`] made).
    pub fn stacks(&self) -> Vec<Option<Value<'c, 'a>>> {
        self.op
            .operands()
            .skip(1)
            .map(|stack| {
                crate::ipu::producer_of(stack)
                    .and_then(|op| StackOp::try_from(op).ok())
                    .and_then(|stack| stack.tensor())
            })
            .collect()
    }
}

op_view!(
    /// Elementwise with a scalar body: `result[i] = @body(inputs at i)`, the inputs of the
    /// result's shape (broadcasting is [`BroadcastOp`]). The body function takes one float per
    /// input (then, optionally, one `index` per result axis) and returns a float; it is
    /// computed in f32.
    ///
    /// ```mlir
    /// func.func private @scaled_exp(%x: f32, %m: f32) -> f32 {
    ///   %d = arith.subf %x, %m : f32
    ///   %e = math.exp %d : f32
    ///   func.return %e : f32
    /// }
    /// %mb = "ipu.broadcast"(%m) : (tensor<8x1xf32>) -> tensor<8x64xf32>
    /// %e = "ipu.map"(%x, %mb) {body = @scaled_exp} : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
    /// ```
    MapOp,
    "ipu.map"
);

impl<'c, 'a> MapOp<'c, 'a> {
    pub fn inputs(&self) -> Vec<Value<'c, 'a>> {
        self.op.operands().collect()
    }
    /// The body function's symbol name.
    pub fn body(&self) -> Option<String> {
        symbol_value(self.op.attribute("body").ok()?)
    }

    pub fn build(
        context: &'c Context,
        location: Location<'c>,
        inputs: &[Value<'c, '_>],
        result: Type<'c>,
        body: &str,
    ) -> Operation<'c> {
        OperationBuilder::new(Self::NAME, location)
            .add_operands(inputs)
            .add_results(&[result])
            .add_attributes(&[named(
                context,
                "body",
                FlatSymbolRefAttribute::new(context, body).into(),
            )])
            .build()
            .expect("ipu.map with operands, a result and a body always builds")
    }
}

/// How `ipu.reduce` combines the elements of its last axis.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Combiner {
    Add,
    Mul,
    Max,
    Min,
}

impl Combiner {
    pub const ALL: [Combiner; 4] = [Combiner::Add, Combiner::Mul, Combiner::Max, Combiner::Min];

    pub fn name(self) -> &'static str {
        match self {
            Combiner::Add => "add",
            Combiner::Mul => "mul",
            Combiner::Max => "max",
            Combiner::Min => "min",
        }
    }

    pub fn parse(text: &str) -> Option<Combiner> {
        Combiner::ALL.into_iter().find(|c| c.name() == text)
    }

    /// The combiner's identity (the value of an empty reduction).
    pub fn identity(self) -> f64 {
        match self {
            Combiner::Add => 0.0,
            Combiner::Mul => 1.0,
            Combiner::Max => f64::NEG_INFINITY,
            Combiner::Min => f64::INFINITY,
        }
    }

    pub fn combine(self, a: f64, b: f64) -> f64 {
        match self {
            Combiner::Add => a + b,
            Combiner::Mul => a * b,
            Combiner::Max if a.is_nan() || b.is_nan() => f64::NAN,
            Combiner::Min if a.is_nan() || b.is_nan() => f64::NAN,
            Combiner::Max => a.max(b),
            Combiner::Min => a.min(b),
        }
    }
}

op_view!(
    /// Reduction over the last axis, kept as size 1: `combiner` is "add", "mul", "max" or "min".
    ///
    /// ```mlir
    /// %s = "ipu.reduce"(%x) {combiner = "add"} : (tensor<8x64xf32>) -> tensor<8x1xf32>
    /// ```
    ReduceOp,
    "ipu.reduce"
);

impl<'c, 'a> ReduceOp<'c, 'a> {
    pub fn input(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 0)
    }
    /// The combiner, if the attribute names one.
    pub fn combiner(&self) -> Option<Combiner> {
        Combiner::parse(&string_attribute(&self.op, "combiner")?)
    }

    pub fn build(
        context: &'c Context,
        location: Location<'c>,
        input: Value<'c, '_>,
        result: Type<'c>,
        combiner: Combiner,
    ) -> Operation<'c> {
        let attribute = StringAttribute::new(context, combiner.name()).into();
        build(
            Self::NAME,
            location,
            &[input],
            result,
            &[named(context, "combiner", attribute)],
        )
    }
}

op_view!(
    /// NumPy broadcasting of the input to the result's shape, element type kept.
    ///
    /// ```mlir
    /// %b = "ipu.broadcast"(%bias) : (tensor<64xf32>) -> tensor<8x64xf32>
    /// ```
    BroadcastOp,
    "ipu.broadcast"
);

impl<'c, 'a> BroadcastOp<'c, 'a> {
    pub fn input(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 0)
    }

    pub fn build(location: Location<'c>, input: Value<'c, '_>, result: Type<'c>) -> Operation<'c> {
        build(Self::NAME, location, &[input], result, &[])
    }
}

op_view!(
    /// A strided window of the input: `result[i] = input[offsets + i * strides]` on every
    /// axis, the window's sizes the result's shape (a static `tensor.extract_slice`).
    ///
    /// ```mlir
    /// %q = "ipu.slice"(%qkv) {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<197x2304xf16>) -> tensor<197x768xf16>
    /// ```
    SliceOp,
    "ipu.slice"
);

impl<'c, 'a> SliceOp<'c, 'a> {
    pub fn input(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 0)
    }

    /// The window's first element per axis.
    pub fn offsets(&self) -> Option<Vec<i64>> {
        i64_array(self.op.attribute("offsets").ok()?)
    }

    /// The step between the window's elements per axis.
    pub fn strides(&self) -> Option<Vec<i64>> {
        i64_array(self.op.attribute("strides").ok()?)
    }

    pub fn build(
        context: &'c Context,
        location: Location<'c>,
        input: Value<'c, '_>,
        result: Type<'c>,
        (offsets, strides): (&[i64], &[i64]),
    ) -> Operation<'c> {
        let attributes: Vec<_> = [("offsets", offsets), ("strides", strides)]
            .into_iter()
            .filter_map(|(name, items)| {
                let items: Vec<String> = items.iter().map(i64::to_string).collect();
                let text = format!("array<i64: {}>", items.join(", "));
                Attribute::parse(context, &text).map(|attribute| named(context, name, attribute))
            })
            .collect();
        build(Self::NAME, location, &[input], result, &attributes)
    }
}

op_view!(
    /// `lhs` followed by `rhs` along `axis` (a two-part `tensor.concat`; more parts chain).
    ///
    /// ```mlir
    /// %t = "ipu.concat"(%cls, %patches) {axis = 0 : i64} : (tensor<1x768xf16>, tensor<196x768xf16>) -> tensor<197x768xf16>
    /// ```
    ConcatOp,
    "ipu.concat"
);

impl<'c, 'a> ConcatOp<'c, 'a> {
    pub fn lhs(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 0)
    }

    pub fn rhs(&self) -> Option<Value<'c, 'a>> {
        operand(self.op, 1)
    }

    pub fn axis(&self) -> Option<i64> {
        int_attribute(&self.op, "axis")
    }

    pub fn build(
        context: &'c Context,
        location: Location<'c>,
        (lhs, rhs): (Value<'c, '_>, Value<'c, '_>),
        result: Type<'c>,
        axis: i64,
    ) -> Operation<'c> {
        let axis = IntegerAttribute::new(IntegerType::new(context, 64).into(), axis).into();
        build(
            Self::NAME,
            location,
            &[lhs, rhs],
            result,
            &[named(context, "axis", axis)],
        )
    }
}
