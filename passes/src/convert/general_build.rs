//! The general import's replacements: `ipu.map`s with their body functions, reductions,
//! reshapes, lowerable rearranges, boolean constants held as floats, 1x1 convolutions.

use ipu_dialects::graph::scalar::ScalarProgram;
use ipu_dialects::ipu::{
    AddOp, BroadcastOp, Combiner, ConcatOp, MapOp, MatmulOp, RearrangeOp, ReduceOp, ReshapeOp,
    SliceOp,
};
use melior::{
    ir::{
        attribute::AttributeLike,
        block::BlockLike,
        operation::OperationLike,
        r#type::{ShapedTypeLike, TypeLike},
        Attribute, Operation, RegionLike, Type, Value, ValueLike,
    },
    Context,
};

use super::ir::{self, DenseConstant};
use super::{linalg_general, splat, ReplacementBuilder};

impl<'c, 'a> ReplacementBuilder<'c, 'a, '_> {
    /// `value` with its axes permuted by `permutation`: an f32 constant permuted at import,
    /// else as `ipu.rearrange`s the tile lowering runs: a permutation that moves the last axis
    /// is a permutation of the leading axes, a swap of the last two and another permutation of
    /// the leading axes (each step skipped when it is the identity).
    pub(super) fn rearrange(
        &self,
        value: Value<'c, 'a>,
        permutation: &[i64],
    ) -> Result<Value<'c, 'a>, String> {
        // An f32 constant (a weight PyTorch transposes before its matmul) is permuted here,
        // once, rather than on the device at every run.
        if let Some(constant) = DenseConstant::of(value).and_then(|c| permuted_f32(&c, permutation))
        {
            return self.insert_constant(constant);
        }
        let rank = permutation.len();
        let step = |value: Value<'c, 'a>, p: &[i64]| -> Result<Value<'c, 'a>, String> {
            if p.iter().enumerate().all(|(i, &a)| a == i as i64) {
                return Ok(value);
            }
            let own = ir::shape_of(value.r#type()).ok_or("internal: unranked rearrange input")?;
            let permuted: Vec<i64> = p.iter().map(|&a| own[a as usize]).collect();
            self.insert(RearrangeOp::build(
                self.context,
                self.location,
                value,
                self.tensor_type_like(&permuted, value.r#type())?,
                Some(p),
            ))
        };
        let last = rank as i64 - 1;
        if rank < 2 || permutation[rank - 1] == last {
            return step(value, permutation);
        }
        // The input axis that ends last goes just before the last axis, then the two swap.
        let a = permutation[rank - 1];
        let mut first: Vec<i64> = permutation
            .iter()
            .copied()
            .filter(|&axis| axis != a && axis != last)
            .collect();
        first.extend([a, last]);
        let mut swap: Vec<i64> = (0..rank as i64).collect();
        swap.swap(rank - 2, rank - 1);
        // After both: leading axes `first[..rank - 2]` then `last`, then `a`.
        let mut leading: Vec<i64> = first[..rank - 2].to_vec();
        leading.push(last);
        let mut second: Vec<i64> = permutation[..rank - 1]
            .iter()
            .map(|axis| leading.iter().position(|l| l == axis).map(|p| p as i64))
            .collect::<Option<Vec<i64>>>()
            .ok_or("internal: a permutation that is not one")?;
        second.push(last);
        let value = step(value, &first)?;
        let value = step(value, &swap)?;
        step(value, &second)
    }

    /// A tensor type of `shape` with the element type of `like`.
    pub(super) fn tensor_type_like(
        &self,
        shape: &[i64],
        like: Type<'c>,
    ) -> Result<Type<'c>, String> {
        let element = melior::ir::r#type::RankedTensorType::try_from(like)
            .map_err(|_| "internal: a value that is not a ranked tensor")?
            .element();
        let dims: String = shape.iter().map(|d| format!("{d}x")).collect();
        Type::parse(self.context, &format!("tensor<{dims}{element}>"))
            .ok_or_else(|| format!("internal: tensor<{dims}{element}>"))
    }

    /// The 1x1 convolution (see [`Replacement::Conv1x1`]).
    pub(super) fn conv_1x1(
        &self,
        input: Value<'c, 'a>,
        weight: &DenseConstant<'c>,
        bias: Value<'c, 'a>,
    ) -> Result<Value<'c, 'a>, String> {
        let input = self.remap(input);
        let own = ir::shape_of(input.r#type()).ok_or("internal: unranked convolution input")?;
        let out = ir::shape_of(self.result_type).ok_or("internal: unranked convolution")?;
        let (k, o) = (*own.last().unwrap_or(&1), *out.last().unwrap_or(&1));
        let rows: i64 = own[..own.len().saturating_sub(1)].iter().product();
        let rows_input =
            self.ipu_reshape(input, self.tensor_type_like(&[rows, k], input.r#type())?)?;
        // An f32 weight is transposed here, once, to `[K, O]` (a plain matmul, which the split
        // GEMM runs); another element type stays `[O, K]` read transposed.
        let (weight, transposed) = match weight_transposed(weight, o, k, self.result_type) {
            Some(kn) => (kn, false),
            None => (
                weight
                    .reshaped(self.tensor_type_like(&[o, k], self.result_type)?)
                    .attribute,
                true,
            ),
        };
        let weight = self.insert_constant(weight)?;
        let product_type = self.tensor_type(&[rows, o])?;
        let product = self.insert(MatmulOp::build(
            self.context,
            self.location,
            rows_input,
            weight,
            product_type,
            false,
            transposed,
        ))?;
        let biased = self.insert(AddOp::build(
            self.location,
            product,
            self.remap(bias),
            product_type,
        ))?;
        self.ipu_reshape(biased, self.result_type)
    }

    /// A tensor type of `shape` with the result's element type.
    pub(super) fn tensor_type(&self, shape: &[i64]) -> Result<Type<'c>, String> {
        self.tensor_type_like(shape, self.result_type)
    }

    /// `ipu.reshape` of `input` to `to`, looking through reshapes this import made (a
    /// reduction's kept axis dropped and re-added is the reduction itself).
    pub(super) fn ipu_reshape(
        &self,
        input: Value<'c, 'a>,
        to: Type<'c>,
    ) -> Result<Value<'c, 'a>, String> {
        let mut source = input;
        while let Some(reshape) = ir::produced_by(source, ReshapeOp::NAME) {
            source = reshape.operand(0).map_err(|e| e.to_string())?;
        }
        if source.r#type() == to {
            return Ok(source);
        }
        if input.r#type() == to {
            return Ok(input);
        }
        self.insert(ReshapeOp::build(self.location, source, to))
    }

    /// The window of `input` of `sizes` from `offsets` by `strides` (same rank): the input
    /// itself when the window is all of it, a splat constant of a splat, one window of the
    /// outer input for a window of an `ipu.slice`, the part's own window when it lies inside
    /// one part of an `ipu.concat`, else `ipu.slice`.
    pub(super) fn slice(
        &self,
        input: Value<'c, 'a>,
        offsets: &[i64],
        sizes: &[i64],
        strides: &[i64],
    ) -> Result<Value<'c, 'a>, String> {
        let shape = ir::shape_of(input.r#type()).ok_or("internal: slice of an unranked tensor")?;
        let to = self.tensor_type_like(sizes, input.r#type())?;
        if shape == sizes {
            return Ok(input);
        }
        if let Some(number) = ir::splat_of(input) {
            return self.insert_constant(splat(to, number)?);
        }
        // A window of a window is one window of the outer input.
        if let Some(inner) =
            ir::produced_by(input, SliceOp::NAME).and_then(|op| SliceOp::try_from(op).ok())
        {
            if let (Some(source), Some(first), Some(step)) =
                (inner.input(), inner.offsets(), inner.strides())
            {
                let starts: Vec<i64> = (0..sizes.len())
                    .map(|a| first[a] + offsets[a] * step[a])
                    .collect();
                let steps: Vec<i64> = (0..sizes.len()).map(|a| strides[a] * step[a]).collect();
                return self.slice(source, &starts, sizes, &steps);
            }
        }
        if let Some(concat) = ir::produced_by(input, ConcatOp::NAME) {
            let axis = ipu_dialects::ipu::int_attribute(&concat, "axis").unwrap_or(-1);
            let lhs: Value = concat.operand(0).map_err(|e| e.to_string())?;
            let rhs: Value = concat.operand(1).map_err(|e| e.to_string())?;
            let split = ir::shape_of(lhs.r#type()).ok_or("internal: unranked concat part")?;
            if let Ok(a) = usize::try_from(axis) {
                let last = offsets[a] + (sizes[a] - 1).max(0) * strides[a];
                if last < split[a] {
                    return self.slice(lhs, offsets, sizes, strides);
                }
                if offsets[a] >= split[a] {
                    let mut shifted = offsets.to_vec();
                    shifted[a] -= split[a];
                    return self.slice(rhs, &shifted, sizes, strides);
                }
            }
        }
        self.insert(SliceOp::build(
            self.context,
            self.location,
            input,
            to,
            (offsets, strides),
        ))
    }

    /// `lhs` followed by `rhs` along `axis` (`ipu.concat`); an empty part is the other one.
    pub(super) fn concat(
        &self,
        lhs: Value<'c, 'a>,
        rhs: Value<'c, 'a>,
        axis: usize,
    ) -> Result<Value<'c, 'a>, String> {
        let left = ir::shape_of(lhs.r#type()).ok_or("internal: concat of an unranked tensor")?;
        let right = ir::shape_of(rhs.r#type()).ok_or("internal: concat of an unranked tensor")?;
        if right.get(axis) == Some(&0) {
            return Ok(lhs);
        }
        if left.get(axis) == Some(&0) {
            return Ok(rhs);
        }
        let mut shape = left.clone();
        shape[axis] += right[axis];
        let to = self.tensor_type_like(&shape, lhs.r#type())?;
        self.insert(ConcatOp::build(
            self.context,
            self.location,
            (lhs, rhs),
            to,
            axis as i64,
        ))
    }

    /// `dest` with `source` (the window's shape) written at `offsets`, from axis `axis` on:
    /// where the window does not cover the axis, the slab of `dest` it crosses is written
    /// recursively and joined with `dest`'s parts before and after it.
    pub(super) fn insert_slice(
        &self,
        dest: Value<'c, 'a>,
        source: Value<'c, 'a>,
        offsets: &[i64],
        axis: usize,
    ) -> Result<Value<'c, 'a>, String> {
        let shape =
            ir::shape_of(dest.r#type()).ok_or("internal: insert into an unranked tensor")?;
        let sizes =
            ir::shape_of(source.r#type()).ok_or("internal: insert of an unranked tensor")?;
        let Some(a) = (axis..shape.len()).find(|&a| sizes[a] != shape[a]) else {
            return Ok(source);
        };
        let ones = vec![1; shape.len()];
        let part = |from: i64, to: i64| {
            let mut starts = vec![0; shape.len()];
            let mut extent = shape.clone();
            starts[a] = from;
            extent[a] = to - from;
            self.slice(dest, &starts, &extent, &ones)
        };
        let slab = part(offsets[a], offsets[a] + sizes[a])?;
        let mut joined = self.insert_slice(slab, source, offsets, a + 1)?;
        if offsets[a] > 0 {
            joined = self.concat(part(0, offsets[a])?, joined, a)?;
        }
        if offsets[a] + sizes[a] < shape[a] {
            joined = self.concat(joined, part(offsets[a] + sizes[a], shape[a])?, a)?;
        }
        Ok(joined)
    }

    /// `lhs + rhs` (`rhs` broadcasting to `lhs`'s shape): `ipu.add` reads a full-size operand
    /// and a full-size one or a row vector; any other broadcast is an explicit
    /// `ipu.broadcast` first.
    pub(super) fn add_broadcasting(
        &self,
        lhs: Value<'c, 'a>,
        rhs: Value<'c, 'a>,
    ) -> Result<Value<'c, 'a>, String> {
        let shape = ir::shape_of(lhs.r#type()).ok_or("internal: add of an unranked tensor")?;
        let own = ir::shape_of(rhs.r#type()).ok_or("internal: add of an unranked tensor")?;
        let rows: i64 = own[..own.len().saturating_sub(1)].iter().product();
        let rhs = if own == shape || rows == 1 {
            rhs
        } else {
            self.insert(BroadcastOp::build(self.location, rhs, lhs.r#type()))?
        };
        self.insert(AddOp::build(self.location, lhs, rhs, lhs.r#type()))
    }

    /// The 2-D convolution of [`Replacement::Conv2d`] without its addend.
    pub(super) fn conv2d(
        &self,
        input: Value<'c, 'a>,
        filter: Value<'c, 'a>,
        layout: super::conv::ConvLayout,
        (strides, dilations): ([i64; 2], [i64; 2]),
    ) -> Result<Value<'c, 'a>, String> {
        use super::conv::ConvLayout;
        let nchw = layout == ConvLayout::NchwFchw;
        let mut x = self.remap(input);
        let mut w = self.remap(filter);
        if nchw {
            x = self.rearrange(x, &[0, 2, 3, 1])?;
            w = self.rearrange(w, &[2, 3, 1, 0])?;
        }
        let xs = ir::shape_of(x.r#type()).ok_or("internal: unranked convolution input")?;
        let ws = ir::shape_of(w.r#type()).ok_or("internal: unranked convolution filter")?;
        let (n, h, wd, c) = (xs[0], xs[1], xs[2], xs[3]);
        let (kh, kw, f) = (ws[0], ws[1], ws[3]);
        // The result's windows (linalg allows fewer than the input holds).
        let out = ir::shape_of(self.result_type).ok_or("internal: unranked convolution")?;
        let (oh, ow) = if nchw {
            (out[2], out[3])
        } else {
            (out[1], out[2])
        };
        let depth = kh * kw * c;
        let like = x.r#type();
        let patches = strides == [kh, kw] && dilations == [1, 1] && h == oh * kh && wd == ow * kw;
        let windows = if patches {
            // [N, OH, KH, OW, KW, C] -> [N, OH, OW, KH, KW, C]: each patch's pixels in a row.
            let split =
                self.ipu_reshape(x, self.tensor_type_like(&[n, oh, kh, ow, kw, c], like)?)?;
            let grouped = self.rearrange(split, &[0, 1, 3, 2, 4, 5])?;
            self.ipu_reshape(grouped, self.tensor_type_like(&[n * oh * ow, depth], like)?)?
        } else {
            // One strided window per kernel position, joined on the channels (im2col), in
            // (kh, kw, c) order.
            let mut parts = Vec::new();
            for i in 0..kh {
                for j in 0..kw {
                    parts.push(self.slice(
                        x,
                        &[0, i * dilations[0], j * dilations[1], 0],
                        &[n, oh, ow, c],
                        &[1, strides[0], strides[1], 1],
                    )?);
                }
            }
            // Joined pairwise (a balanced tree moves each element log2(parts) times).
            while parts.len() > 1 {
                let mut joined = Vec::new();
                for pair in parts.chunks(2) {
                    joined.push(match pair {
                        [a, b] => self.concat(*a, *b, 3)?,
                        [a] => *a,
                        _ => unreachable!("chunks of two"),
                    });
                }
                parts = joined;
            }
            self.ipu_reshape(
                parts[0],
                self.tensor_type_like(&[n * oh * ow, depth], like)?,
            )?
        };
        let weights = self.ipu_reshape(w, self.tensor_type_like(&[depth, f], like)?)?;
        let product = self.insert(MatmulOp::build(
            self.context,
            self.location,
            windows,
            weights,
            self.tensor_type_like(&[n * oh * ow, f], self.result_type)?,
            false,
            false,
        ))?;
        let nhwc = self.ipu_reshape(
            product,
            self.tensor_type_like(&[n, oh, ow, f], self.result_type)?,
        )?;
        if nchw {
            self.rearrange(nhwc, &[0, 3, 1, 2])
        } else {
            Ok(nhwc)
        }
    }

    /// `input` brought to `shape` as [`linalg_general::MapInput`] says (broadcast to it when
    /// `broadcast`, else only to a shape that broadcasts to it like NumPy).
    pub(super) fn map_input(
        &self,
        input: &linalg_general::MapInput<'c, 'a>,
        shape: &[i64],
        broadcast: bool,
    ) -> Result<Value<'c, 'a>, String> {
        let mut value = self.remap(input.value);
        // A boolean constant (a mask) is held as floats 0 and 1, which the map's body
        // compares with 0.
        if let Some(floats) = self.bool_constant_as_floats(value)? {
            value = floats;
        }
        let element_of = |t: Type<'c>| {
            melior::ir::r#type::RankedTensorType::try_from(t)
                .map(|t| t.element())
                .map_err(|_| "internal: a map input that is not a ranked tensor".to_string())
        };
        if element_of(value.r#type())? != element_of(self.result_type)? {
            return Err(format!(
                "a map input of type {} for a result of type {}: the import converts no element types",
                value.r#type(),
                self.result_type
            ));
        }
        if let Some(pre) = &input.pre_shape {
            value = self.ipu_reshape(value, self.tensor_type(pre)?)?;
        }
        if let Some(permutation) = &input.permutation {
            value = self.rearrange(value, permutation)?;
        }
        // A shape that is the expanded one without leading 1s broadcasts the same (NumPy).
        let own = ir::shape_of(value.r#type()).ok_or("internal: unranked map input")?;
        let leading = input.expanded.len().saturating_sub(own.len());
        let aligned = input.expanded[..leading].iter().all(|&d| d == 1)
            && input.expanded[leading..] == own[..];
        // Reshaped unless a NumPy broadcast (the add's, or ipu.broadcast) follows anyway.
        let broadcast_follows = !broadcast || input.expanded != shape;
        if own != input.expanded && !(aligned && broadcast_follows) {
            value = self.ipu_reshape(value, self.tensor_type(&input.expanded)?)?;
        }
        if broadcast && input.expanded != shape {
            value = self.insert(BroadcastOp::build(
                self.location,
                value,
                self.tensor_type(shape)?,
            ))?;
        }
        Ok(value)
    }

    /// An `arith.constant` of f32 0s and 1s for a dense i1 constant `value`, if it is one.
    pub(super) fn bool_constant_as_floats(
        &self,
        value: Value<'c, 'a>,
    ) -> Result<Option<Value<'c, 'a>>, String> {
        let Some(constant) = ir::produced_by(value, "arith.constant") else {
            return Ok(None);
        };
        let Ok(tensor) = melior::ir::r#type::RankedTensorType::try_from(value.r#type()) else {
            return Ok(None);
        };
        let element = tensor.element();
        if !element.is_integer()
            || melior::ir::r#type::IntegerType::try_from(element).map(|t| t.width()) != Ok(1)
        {
            return Ok(None);
        }
        let shape = ir::shape_of(value.r#type()).ok_or("internal: unranked boolean constant")?;
        let count: i64 = shape.iter().product();
        let raw = constant
            .attribute("value")
            .map_err(|_| "internal: a constant without a value")?
            .to_raw();
        let float_type = self.tensor_type_like(&shape, self.result_type)?;
        // SAFETY: `raw` is a live dense elements attribute of `count` i1 elements (checked
        // kind); each read is within it and the new attribute copies the values.
        let attribute = unsafe {
            if !mlir_sys::mlirAttributeIsADenseElements(raw) {
                return Ok(None);
            }
            let values: Vec<f32> = (0..count as isize)
                .map(|i| {
                    let bit = if mlir_sys::mlirDenseElementsAttrIsSplat(raw) {
                        mlir_sys::mlirDenseElementsAttrGetBoolSplatValue(raw) != 0
                    } else {
                        mlir_sys::mlirDenseElementsAttrGetBoolValue(raw, i)
                    };
                    f32::from(u8::from(bit))
                })
                .collect();
            Attribute::from_raw(mlir_sys::mlirDenseElementsAttrFloatGet(
                float_type.to_raw(),
                count as isize,
                values.as_ptr(),
            ))
        };
        self.insert_constant(attribute).map(Some)
    }

    /// `ipu.map` of `body` over `inputs` to a tensor of `shape`; an identity body of one
    /// input of that shape is the input itself.
    pub(super) fn map(
        &self,
        inputs: &[linalg_general::MapInput<'c, 'a>],
        body: &ScalarProgram,
        shape: &[i64],
    ) -> Result<Value<'c, 'a>, String> {
        let values = inputs
            .iter()
            .map(|input| self.map_input(input, shape, true))
            .collect::<Result<Vec<_>, _>>()?;
        if *body == ScalarProgram::identity() {
            return Ok(values[0]);
        }
        let name = self.body_function(body)?;
        self.insert(MapOp::build(
            self.context,
            self.location,
            &values,
            self.tensor_type(shape)?,
            &name,
        ))
    }

    /// The reduction (see [`Replacement::Reduce`]).
    pub(super) fn reduce(
        &self,
        inputs: &[linalg_general::MapInput<'c, 'a>],
        body: &ScalarProgram,
        combiner: Combiner,
        init: &linalg_general::ReductionInit<'c, 'a>,
        loop_shape: &[i64],
    ) -> Result<Value<'c, 'a>, String> {
        let elements = self.map(inputs, body, loop_shape)?;
        let mut kept = loop_shape.to_vec();
        *kept.last_mut().ok_or("internal: a reduction of rank 0")? = 1;
        let kept_type = self.tensor_type(&kept)?;
        let mut reduced = self.insert(ReduceOp::build(
            self.context,
            self.location,
            elements,
            kept_type,
            combiner,
        ))?;
        let other = match init {
            linalg_general::ReductionInit::Identity => None,
            linalg_general::ReductionInit::Splat(number) => {
                Some(self.insert_constant(splat(kept_type, *number)?)?)
            }
            linalg_general::ReductionInit::Tensor(value) => {
                Some(self.ipu_reshape(self.remap(*value), kept_type)?)
            }
        };
        if let Some(other) = other {
            let name = self.body_function(&linalg_general::combine_body(combiner))?;
            reduced = self.insert(MapOp::build(
                self.context,
                self.location,
                &[reduced, other],
                kept_type,
                &name,
            ))?;
        }
        self.ipu_reshape(reduced, self.result_type)
    }

    /// The name of a private function holding `body` in the module, added once per body.
    pub(super) fn body_function(&self, body: &ScalarProgram) -> Result<String, String> {
        let function = self
            .block
            .parent_operation()
            .ok_or("internal: a converted op outside a function")?;
        let module = function
            .parent_operation()
            .ok_or("internal: a function outside a module")?;
        add_body_function(self.context, module, body)
    }
}

/// The name of a private function of `module` computing `body` (an `ipu.map` body), added
/// unless the module has it: named by a fixed-key hash of its text, so the same body gets the
/// same name in every run.
pub(crate) fn add_body_function(
    context: &Context,
    module: melior::ir::OperationRef,
    body: &ScalarProgram,
) -> Result<String, String> {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let text = body.to_function("body");
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    let name = format!("ipu_map_{:012x}", hasher.finish() & 0xffff_ffff_ffff);
    let module_block = module
        .region(0)
        .ok()
        .and_then(|region| region.first_block())
        .ok_or("internal: a module without a body")?;
    let mut next = module_block.first_operation();
    while let Some(op) = next {
        if ipu_dialects::ipu::string_attribute(&op, "sym_name").as_deref() == Some(&name) {
            return Ok(name);
        }
        next = op.next_in_block();
    }
    let text = body.to_function(&name);
    let parsed = melior::ir::Module::parse(context, &format!("module {{\n{text}}}\n"))
        .ok_or_else(|| format!("internal: a map body does not parse:\n{text}"))?;
    let parsed_block = parsed.body();
    let op = parsed_block
        .first_operation()
        .ok_or("internal: a parsed map body without its function")?;
    // SAFETY: `op` is a live operation of the parsed module; the clone is a new, unowned
    // operation that the module block takes ownership of.
    let copy = unsafe { Operation::from_raw(mlir_sys::mlirOperationClone(op.to_raw())) };
    module_block.append_operation(copy);
    Ok(name)
}

/// The `[O, K]` (as `[O, 1, 1, K]`) f32 weight `weight` as a `[K, O]` dense constant of
/// `like`'s element type, if it is f32.
fn weight_transposed<'c>(
    weight: &DenseConstant<'c>,
    o: i64,
    k: i64,
    like: Type<'c>,
) -> Option<Attribute<'c>> {
    let element = melior::ir::r#type::RankedTensorType::try_from(like)
        .ok()?
        .element();
    if !element.is_f32() {
        return None;
    }
    let raw = weight.attribute.to_raw();
    let context = like.context();
    // SAFETY: `raw` is a dense elements attribute of `o * k` f32 elements (an f32 weight of
    // that shape); each read is within it and the new attribute copies the values.
    unsafe {
        let weight_element =
            mlir_sys::mlirShapedTypeGetElementType(mlir_sys::mlirAttributeGetType(raw));
        if !mlir_sys::mlirTypeIsAF32(weight_element) {
            return None;
        }
        let splat = mlir_sys::mlirDenseElementsAttrIsSplat(raw);
        let mut values = vec![0f32; (o * k) as usize];
        for row in 0..o {
            for col in 0..k {
                let at = if splat { 0 } else { (row * k + col) as isize };
                values[(col * o + row) as usize] =
                    mlir_sys::mlirDenseElementsAttrGetFloatValue(raw, at);
            }
        }
        // SAFETY: the context outlives the pass run.
        let context: &Context = context.to_ref();
        let r#type = Type::parse(context, &format!("tensor<{k}x{o}xf32>"))?;
        Some(Attribute::from_raw(
            mlir_sys::mlirDenseElementsAttrFloatGet(
                r#type.to_raw(),
                (o * k) as isize,
                values.as_ptr(),
            ) as _,
        ))
    }
}

/// An f32 dense constant with its axes permuted (`None` for other element types).
fn permuted_f32<'c>(constant: &DenseConstant<'c>, permutation: &[i64]) -> Option<Attribute<'c>> {
    let like = constant.r#type();
    let shape = ir::shape_of(like)?;
    let element = melior::ir::r#type::RankedTensorType::try_from(like)
        .ok()?
        .element();
    if !element.is_f32() || permutation.len() != shape.len() {
        return None;
    }
    let count: i64 = shape.iter().product();
    let permuted: Vec<i64> = permutation.iter().map(|&a| shape[a as usize]).collect();
    let mut strides = vec![1i64; shape.len()];
    for a in (0..shape.len().saturating_sub(1)).rev() {
        strides[a] = strides[a + 1] * shape[a + 1];
    }
    let raw = constant.attribute.to_raw();
    // SAFETY: `raw` is a dense f32 elements attribute of `count` elements; each read is within
    // it and the new attribute copies the values.
    unsafe {
        let splat = mlir_sys::mlirDenseElementsAttrIsSplat(raw);
        let mut values = Vec::with_capacity(count as usize);
        let mut index = vec![0i64; permuted.len()];
        for _ in 0..count {
            let source: i64 = (0..permuted.len())
                .map(|a| index[a] * strides[permutation[a] as usize])
                .sum();
            values.push(mlir_sys::mlirDenseElementsAttrGetFloatValue(
                raw,
                if splat { 0 } else { source as isize },
            ));
            for a in (0..permuted.len()).rev() {
                index[a] += 1;
                if index[a] < permuted[a] {
                    break;
                }
                index[a] = 0;
            }
        }
        let context = like.context();
        // SAFETY: the context outlives the pass run.
        let context: &Context = context.to_ref();
        let dims: String = permuted.iter().map(|d| format!("{d}x")).collect();
        let r#type = Type::parse(context, &format!("tensor<{dims}f32>"))?;
        Some(Attribute::from_raw(
            mlir_sys::mlirDenseElementsAttrFloatGet(
                r#type.to_raw(),
                count as isize,
                values.as_ptr(),
            ) as _,
        ))
    }
}
