//! Cost terms of a plan, all from `ipu_device::cost` and the target table: compute cycles of
//! the kernel calls a tile makes, conversions between formats, and per-tile memory by class.

use ipu_device::{cost, kernels::spec::ElementOrder, MemoryClass, Precision, Target};

use super::layout::Shards;

/// The format of a value's tile buffers, as later ops see it (the planner's part of
/// `#ipu.format`; the partitions live in the value's [`Shards`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ValueFormat {
    pub precision: Precision,
    pub order: ElementOrder,
    pub memory: MemoryClass,
    /// The buffers hold the transpose of the last two axes (a swapped-orientation GEMM).
    pub transposed: bool,
    /// FP8 scale exponent (value = q * 2^scale); 0 for other precisions.
    pub scale: i64,
}

impl ValueFormat {
    pub fn row_major(precision: Precision) -> ValueFormat {
        ValueFormat {
            precision,
            order: ElementOrder::RowMajor,
            memory: MemoryClass::Standard,
            transposed: false,
            scale: 0,
        }
    }

    /// An untransposed operand in `precision`, `order` and `memory`, at FP8 scale `scale`.
    pub fn operand(
        precision: Precision,
        order: ElementOrder,
        memory: MemoryClass,
        scale: i64,
    ) -> ValueFormat {
        ValueFormat {
            precision,
            order,
            memory,
            transposed: false,
            scale,
        }
    }
}

/// Bytes one tile allocates, by memory class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord)]
pub struct MemoryUse {
    pub standard: u64,
    pub interleaved: u64,
    /// Largest single standard-memory allocation.
    pub largest_standard: u64,
}

impl MemoryUse {
    pub fn of(bytes: u64, class: MemoryClass) -> MemoryUse {
        match class {
            MemoryClass::Standard => MemoryUse {
                standard: bytes,
                interleaved: 0,
                largest_standard: bytes,
            },
            MemoryClass::Interleaved => MemoryUse {
                standard: 0,
                interleaved: bytes,
                largest_standard: 0,
            },
        }
    }

    pub fn total(&self) -> u64 {
        self.standard + self.interleaved
    }

    pub fn plus(self, other: MemoryUse) -> MemoryUse {
        MemoryUse {
            standard: self.standard + other.standard,
            interleaved: self.interleaved + other.interleaved,
            largest_standard: self.largest_standard.max(other.largest_standard),
        }
    }

    pub fn minus(self, other: MemoryUse) -> MemoryUse {
        MemoryUse {
            standard: self.standard.saturating_sub(other.standard),
            interleaved: self.interleaved.saturating_sub(other.interleaved),
            largest_standard: self.largest_standard,
        }
    }
}

/// Memory one tile allocates for `shards` in `format`.
pub fn shard_memory(shards: &Shards, format: &ValueFormat) -> MemoryUse {
    MemoryUse::of(shards.max_tile_bytes(), format.memory)
}

/// Cycles to convert a value's blocks from `from` to `to`, as (at the source, at the
/// destination). Both the cast (precision or scale) and the rearrange (element order) run on
/// the tile that holds the data, before it is sent: each element is converted once, and the
/// exchange moves converted bytes. A rearrange leaves an AMP order through row-major and
/// enters the new one (4 cycles per element each way, the AMP pack [HW-C600]); the
/// destination side is kept for conversions that must happen after a move (none today).
pub fn conversion_cycles(
    from: &ValueFormat,
    to: &ValueFormat,
    source_elements: u64,
    destination_elements: u64,
    target: &Target,
) -> (u64, u64) {
    let _ = destination_elements;
    let mut at_source = 0;
    let elements = u32::try_from(source_elements).unwrap_or(u32::MAX);
    if from.precision != to.precision || from.scale != to.scale {
        at_source += cost::cast_cycles(from.precision, to.precision, elements, target);
    }
    let pack =
        |order: ElementOrder| cost::rearrange_cycles(order, to.precision, elements, 1, target);
    if from.order != to.order || from.transposed != to.transposed {
        if from.order != ElementOrder::RowMajor {
            at_source += pack(from.order);
        }
        if to.order != ElementOrder::RowMajor {
            at_source += pack(to.order);
        }
        if from.transposed != to.transposed
            && from.order == ElementOrder::RowMajor
            && to.order == ElementOrder::RowMajor
        {
            at_source += pack(ElementOrder::AmpLeft);
        }
    }
    (at_source, 0)
}

/// The FP8 scale exponent for data of largest magnitude `max_abs` in F143 (largest finite
/// 240): the smallest exponent with `max_abs / 2^scale <= 240`, clamped to the device range
/// -31..=31; 0 for no range (zero, negative or non-finite `max_abs`).
///
/// `log2` gives the estimate; the exact test (dividing by a power of two is exact) settles
/// values within rounding of a boundary: `(240 * 2^s + ulp) / 240` rounds to `2^s`, whose
/// `log2` would wrongly give `s`.
pub fn fp8_scale_for(max_abs: f64) -> i64 {
    if !(max_abs.is_finite() && max_abs > 0.0) {
        return 0;
    }
    let fits = |scale: i64| max_abs * 2f64.powi(-scale as i32) <= 240.0;
    let mut scale = ((max_abs / 240.0).log2().ceil() as i64).clamp(-31, 31);
    while scale < 31 && !fits(scale) {
        scale += 1;
    }
    while scale > -31 && fits(scale - 1) {
        scale -= 1;
    }
    scale
}
