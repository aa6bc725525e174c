//! The tile-local GEMM: one tile multiplying dense row-major blocks `out[rows x n] =
//! a[rows x k] b[k x n]` through the AMP (casts to the input precision, rearranges into the AMP
//! orders with zero padding to whole 16-element groups, one GEMM call per K block of at most
//! the kernel's weight buffer, the output rearranged back). The general matmul and the
//! attention strategies run it on every tile. [`LocalGemm::calls`] is the one list of its
//! kernel calls: the lowering emits them (`lower::graph::general::local_gemm`) and
//! [`LocalGemm::cycles`] prices them with the device cost model; [`LocalGemm::scratch`] is the
//! one statement of the buffers they use.

use ipu_device::kernels::describe::{default_partials, GEMM_MAX_WEIGHT_ELEMENTS};
use ipu_device::kernels::spec::ElementOrder;
use ipu_device::{KernelSpec, MemoryClass, Precision, Target};

/// `x` rounded up to whole 16-element groups.
pub fn pad16(x: u32) -> u32 {
    x.div_ceil(16) * 16
}

/// One tile-local GEMM's shape and precisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalGemm {
    pub rows: u32,
    pub k: u32,
    pub n: u32,
    /// Element type of the operand blocks the tile holds.
    pub host: Precision,
    /// The AMP input precision (a cast runs when it differs from `host`).
    pub input: Precision,
    /// The right operand is already in AMP-right order (no cast or rearrange of it): K block
    /// `k0` at byte `k0 * pad16(n) * input bytes`.
    pub b_packed: bool,
    /// Memory class of the weights the GEMM calls read (and of the scratch).
    pub weights: MemoryClass,
}

/// One kernel call of a tile-local GEMM, with the role that decides its operands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalCall {
    /// The left block cast to the input precision.
    CastLeft(KernelSpec),
    /// The right block cast to the input precision.
    CastRight(KernelSpec),
    /// The (cast) left block into AMP-left order.
    PackLeft(KernelSpec),
    /// K rows `k0..` of the (cast) right block into AMP-right order.
    PackRight { k0: u32, spec: KernelSpec },
    /// The GEMM call over K rows `k0..` (the first initializes the output).
    Gemm { k0: u32, spec: KernelSpec },
    /// The AMP output back to row-major.
    UnpackOutput(KernelSpec),
}

impl LocalCall {
    pub fn spec(&self) -> &KernelSpec {
        match self {
            LocalCall::CastLeft(spec)
            | LocalCall::CastRight(spec)
            | LocalCall::PackLeft(spec)
            | LocalCall::UnpackOutput(spec) => spec,
            LocalCall::PackRight { spec, .. } | LocalCall::Gemm { spec, .. } => spec,
        }
    }
}

/// Element counts of a tile-local GEMM's scratch buffers, in the input precision except the
/// output's (the partials precision).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalScratch {
    /// The cast copies of the left and right blocks, when a cast runs.
    pub cast: Option<(u32, u32)>,
    pub a_amp: u32,
    pub b_amp: u32,
    pub c_amp: u32,
}

impl LocalGemm {
    pub fn partials(&self) -> Precision {
        default_partials(self.input)
    }

    /// Rows of K per GEMM call: the kernel's weight buffer holds `k_block x pad16(n)`.
    pub fn k_block(&self) -> u32 {
        ((GEMM_MAX_WEIGHT_ELEMENTS / pad16(self.n)) / 16 * 16).clamp(16, pad16(self.k))
    }

    /// The scratch the calls use (see [`LocalScratch`]).
    pub fn scratch(&self) -> LocalScratch {
        let (k16, n16) = (pad16(self.k), pad16(self.n));
        LocalScratch {
            cast: (self.input != self.host).then_some((
                self.rows * self.k,
                if self.b_packed { 0 } else { self.k * self.n },
            )),
            a_amp: self.rows * k16,
            b_amp: self.k_block() * n16,
            c_amp: self.rows * n16,
        }
    }

    /// Bytes of [`LocalGemm::scratch`].
    pub fn scratch_bytes(&self) -> u64 {
        let scratch = self.scratch();
        let input = u64::from(self.input.bytes());
        let (cast_a, cast_b) = scratch.cast.unwrap_or((0, 0));
        (u64::from(cast_a)
            + u64::from(cast_b)
            + u64::from(scratch.a_amp)
            + u64::from(scratch.b_amp))
            * input
            + u64::from(scratch.c_amp) * u64::from(self.partials().bytes())
    }

    /// Every kernel call, in the order the tile runs them.
    pub fn calls(&self) -> Vec<LocalCall> {
        let (rows, k, n) = (self.rows, self.k, self.n);
        let (k16, n16) = (pad16(k), pad16(n));
        let rearrange = |order, to_amp, precision, rows, rows_padded, cols, cols_padded| {
            KernelSpec::Rearrange {
                order,
                to_amp,
                precision,
                offset: 0,
                rows,
                rows_padded,
                cols,
                cols_padded,
            }
        };
        let cast = |elements| KernelSpec::Cast {
            from: self.host,
            to: self.input,
            elements,
        };
        let mut calls = Vec::new();
        if let Some((left, right)) = self.scratch().cast {
            calls.push(LocalCall::CastLeft(cast(left)));
            if right > 0 {
                calls.push(LocalCall::CastRight(cast(right)));
            }
        }
        calls.push(LocalCall::PackLeft(rearrange(
            ElementOrder::AmpLeft,
            true,
            self.input,
            rows,
            rows,
            k,
            k16,
        )));
        let k_block = self.k_block();
        let mut k0 = 0;
        while k0 < k16 {
            let block = k_block.min(k16 - k0);
            if !self.b_packed {
                let spec = rearrange(
                    ElementOrder::AmpRight,
                    true,
                    self.input,
                    block.min(k - k0),
                    block,
                    n,
                    n16,
                );
                calls.push(LocalCall::PackRight { k0, spec });
            }
            let spec = KernelSpec::Gemm {
                input: self.input,
                partials: self.partials(),
                weights: self.weights,
                k: block,
                c: n16,
                rows: vec![rows],
                accumulate: k0 > 0,
            };
            calls.push(LocalCall::Gemm { k0, spec });
            k0 += block;
        }
        calls.push(LocalCall::UnpackOutput(rearrange(
            ElementOrder::AmpOutput,
            false,
            self.partials(),
            rows,
            rows,
            n,
            n16,
        )));
        calls
    }

    /// Modelled cycles of [`LocalGemm::calls`].
    pub fn cycles(&self, target: &Target) -> u64 {
        self.calls()
            .iter()
            .map(|call| ipu_device::cost::kernel_cycles(call.spec(), target))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gemm(rows: u32, k: u32, n: u32, host: Precision, input: Precision) -> LocalGemm {
        LocalGemm {
            rows,
            k,
            n,
            host,
            input,
            b_packed: false,
            weights: MemoryClass::Interleaved,
        }
    }

    #[test]
    fn calls_cover_k_in_blocks_and_cast_only_when_narrowing() {
        // K = 1000 at n = 64: blocks of the weight buffer's rows, the last one partial.
        let wide = gemm(8, 1000, 64, Precision::F16, Precision::F16);
        let k_block = wide.k_block();
        assert!(k_block.is_multiple_of(16) && k_block * 64 <= GEMM_MAX_WEIGHT_ELEMENTS);
        let calls = wide.calls();
        let gemms: Vec<u32> = calls
            .iter()
            .filter_map(|call| match call {
                LocalCall::Gemm { k0, .. } => Some(*k0),
                _ => None,
            })
            .collect();
        assert_eq!(gemms.len() as u32, pad16(1000).div_ceil(k_block));
        assert_eq!(gemms[0], 0);
        assert!(!calls.iter().any(|c| matches!(c, LocalCall::CastLeft(_))));
        // Only the first GEMM call initializes the output.
        let accumulating = calls
            .iter()
            .filter(|call| {
                matches!(
                    call.spec(),
                    KernelSpec::Gemm {
                        accumulate: true,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(accumulating, gemms.len() - 1);
        // Narrowing casts both blocks; a packed right block is neither cast nor rearranged.
        let narrowing = gemm(8, 32, 16, Precision::F16, Precision::F8E4M3);
        let calls = narrowing.calls();
        assert!(matches!(
            calls[0],
            LocalCall::CastLeft(KernelSpec::Cast { elements: 256, .. })
        ));
        assert!(matches!(
            calls[1],
            LocalCall::CastRight(KernelSpec::Cast { elements: 512, .. })
        ));
        let packed = LocalGemm {
            b_packed: true,
            ..gemm(8, 32, 16, Precision::F16, Precision::F16)
        };
        assert!(!packed
            .calls()
            .iter()
            .any(|c| matches!(c, LocalCall::PackRight { .. } | LocalCall::CastRight(_))));
    }

    #[test]
    fn the_price_is_the_sum_of_the_calls_and_scratch_matches_them() {
        let target = Target::c600();
        let local = gemm(24, 200, 72, Precision::F16, Precision::F8E4M3);
        let sum: u64 = local
            .calls()
            .iter()
            .map(|call| ipu_device::cost::kernel_cycles(call.spec(), &target))
            .sum();
        assert_eq!(local.cycles(&target), sum);
        assert!(local.cycles(&target) > 0);
        let scratch = local.scratch();
        assert_eq!(scratch.cast, Some((24 * 200, 200 * 72)));
        assert_eq!(scratch.a_amp, 24 * pad16(200));
        assert_eq!(scratch.b_amp, local.k_block() * pad16(72));
        assert_eq!(
            local.scratch_bytes(),
            u64::from(24 * 200 + 200 * 72 + scratch.a_amp + scratch.b_amp)
                + u64::from(scratch.c_amp) * 2
        );
    }
}
