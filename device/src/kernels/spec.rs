//! Kernel specializations: which kernel, with which constant parameters.
//!
//! A [`KernelSpec`] is the one description of a kernel call shared by the planner (its cycle
//! model, `crate::cost`), the kernel compiler (its specialized MLIR and name) and the simulator
//! (which runs the compiled code and charges the modelled cycles).
//!
//! ## Calling convention (the kernel ABI)
//! A kernel runs on one tile's memory. It receives the tile's SRAM as a byte slice whose index 0
//! is the first SRAM address (`target.memory.sram_base`), and a list of `u32` run-time arguments
//! whose meaning each variant documents. Addresses in arguments are byte offsets from the SRAM
//! base. Constant parameters (block sizes, row counts, padding) are part of the spec and the
//! compiled code; the run-time arguments are addresses, per-tensor scales and a few documented
//! positions (the GEMM row entry, attention's row and key offsets, the group-bias start row).

use serde::{Deserialize, Serialize};

use ipu_dialects::graph::scalar::ScalarProgram;
use ipu_dialects::ipu::Combiner;

use crate::precision::{MemoryClass, Precision};

/// How a map kernel reads one input in its `rows x cols` block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum MapOperand {
    /// A `rows x cols` block like the output: element (r, c) at `r * cols + c`.
    Full,
    /// `cols` elements broadcast over the rows: (r, c) at `c`.
    Row,
    /// `rows` elements broadcast over the columns: (r, c) at `r`.
    Column,
    /// One element broadcast everywhere.
    Scalar,
}

impl MapOperand {
    /// Elements the input spans in a `rows x cols` block.
    pub fn elements(self, rows: u32, cols: u32) -> u64 {
        match self {
            MapOperand::Full => u64::from(rows) * u64::from(cols),
            MapOperand::Row => u64::from(cols),
            MapOperand::Column => u64::from(rows),
            MapOperand::Scalar => 1,
        }
    }
}

/// One input of a map kernel: its precision, FP8 scale exponent and how it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MapInput {
    pub precision: Precision,
    pub scale: i32,
    pub operand: MapOperand,
}

/// Element order of a matrix block in tile memory.
///
/// All three AMP orders are 16-column panel orders: the columns are split into groups of 16
/// (the AMP's width), and each group is stored as a row-major `panel_rows x 16` block; groups
/// follow each other. Element (r, c) of a block with `panel_rows` rows is at element index
/// `((c / 16) * panel_rows + r) * 16 + c % 16`, and the column count is padded to a multiple
/// of 16. What differs is the role of the axes (see each variant); the kernels and the
/// `Rearrange` kernel use exactly this formula (`device/kernels/common.mlir`,
/// `@ipu_panel_index`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ElementOrder {
    RowMajor,
    /// AMP left operand (A, rows x K): K in groups of 16; (r, kk) at
    /// `((kk / 16) * rows + r) * 16 + kk % 16`, `rows` = the GEMM entry's row count.
    AmpLeft,
    /// AMP right operand (weights B, K x C): 16-column groups, K-major inside a group;
    /// (kk, j) at `((j / 16) * K + kk) * 16 + j % 16`.
    AmpRight,
    /// AMP output (C, rows x C): 16-column groups; (r, j) at `((j / 16) * rows + r) * 16 + j % 16`.
    AmpOutput,
}

impl ElementOrder {
    pub const fn name(self) -> &'static str {
        match self {
            ElementOrder::RowMajor => "row_major",
            ElementOrder::AmpLeft => "amp_left",
            ElementOrder::AmpRight => "amp_right",
            ElementOrder::AmpOutput => "amp_output",
        }
    }
}

/// Form of the GeLU activation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum GeluForm {
    /// 0.5 x (1 + erf(x / sqrt 2)).
    Erf,
    /// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    Tanh,
}

/// One kernel specialization. The variants and their fields are the constant parameters the
/// compiled code is specialized for; see each variant for its run-time arguments.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum KernelSpec {
    /// C[rows x c] (+)= A[rows x k] * B[k x c] on the AMP. Inputs in `input` precision, partials
    /// in `partials` precision (F16 for F16 and FP8 inputs, F32 for F32). One object holds an
    /// entry point per row count in `rows` (the seed's `..._r32_r34`).
    /// A is in [`ElementOrder::AmpLeft`], B in [`ElementOrder::AmpRight`], C in
    /// [`ElementOrder::AmpOutput`] order; A and C hold exactly the selected row count of rows;
    /// `k` and `c` are multiples of 16.
    /// Numerics: inputs widen exactly to f32 (FP8 times 2^scale); inside the K block products
    /// are summed in f32 with fused multiply-adds in K order; at the block end the sum is added
    /// to the old partial (when `accumulate`) and rounded once to `partials` (round to nearest
    /// even, saturating). So F16/FP8 GEMMs carry F16 partials between K blocks, F32 inside one.
    /// `weights` changes only the cost, not the numbers.
    /// Args: [a_offset, b_offset, c_offset, row_count_index, a_scale_exp_i32, b_scale_exp_i32].
    Gemm {
        input: Precision,
        partials: Precision,
        weights: MemoryClass,
        k: u32,
        c: u32,
        rows: Vec<u32>,
        accumulate: bool,
    },
    /// Elementwise conversion with a power-of-two scale for FP8 sides (an FP8 source decodes
    /// as code * 2^scale, an FP8 destination encodes value * 2^-scale). One rounding, to
    /// nearest even, saturating (FP8: to +-max, NaN -> 0x80; f16: finite overflow to +-65504).
    /// Args: [src_offset, dst_offset, scale_exp_i32] (scale in `numerics::SCALE_RANGE`).
    Cast {
        from: Precision,
        to: Precision,
        elements: u32,
    },
    /// Reorders a `rows x cols` block between row-major and an AMP order, padding rows to
    /// `rows_padded` and columns to `cols_padded` with zeros. `offset` is the first row.
    /// The AMP side is a `rows_padded x cols_padded` block (cols_padded a multiple of 16); the
    /// row-major side a dense `rows x cols` block. `to_amp`: AMP row `offset + i` takes
    /// row-major row i, every other AMP element (padding) is written as zero. Otherwise
    /// row-major row i takes AMP row `offset + i` (padding dropped). Elements move as raw bytes.
    /// Args: [src_offset, dst_offset].
    Rearrange {
        order: ElementOrder,
        to_amp: bool,
        precision: Precision,
        offset: u32,
        rows: u32,
        rows_padded: u32,
        cols: u32,
        cols_padded: u32,
    },
    /// out[rows x cols] = a[rows x cols] + b broadcast (b has `b_rows` rows, 1 or `rows`).
    /// Args: [a_offset, b_offset, out_offset].
    Add {
        precision: Precision,
        rows: u32,
        cols: u32,
        b_rows: u32,
    },
    /// Args: [src_offset, dst_offset].
    Gelu {
        precision: Precision,
        form: GeluForm,
        elements: u32,
    },
    /// Row softmax over `cols`, optionally causal with the row index offset `causal_offset`.
    /// Args: [src_offset, dst_offset, row_offset].
    Softmax {
        precision: Precision,
        rows: u32,
        cols: u32,
        causal: bool,
    },
    /// Row layer norm over `cols` with gamma and beta vectors; epsilon in 1e-9 units.
    /// Args: [src_offset, gamma_offset, beta_offset, dst_offset].
    LayerNorm {
        precision: Precision,
        rows: u32,
        cols: u32,
        epsilon_nano: u32,
    },
    /// out[elements] = sum of `partials` contiguous partial blocks, written in `output`.
    /// Args: [partials_offset, dst_offset].
    ReduceAdd {
        partials_precision: Precision,
        output: Precision,
        elements: u32,
        partials: u32,
    },
    /// Args: [src_offset, dst_offset].
    Copy { bytes: u32 },
    /// Args: [dst_offset, value_bits].
    Fill { precision: Precision, elements: u32 },
    /// out[cols x rows] = in[rows x cols] transposed; both row-major and dense; elements move
    /// as raw bytes (any precision). src and dst must not overlap.
    /// Args: [src_offset, dst_offset].
    Transpose {
        precision: Precision,
        rows: u32,
        cols: u32,
    },
    /// out[i] = in[i] * s for i < elements, s the f32 whose bits are `value_bits`; computed in
    /// f32 and rounded once to `precision` (nearest even, saturating like the other kernels'
    /// stores). In place (src == dst) is allowed.
    /// Args: [src_offset, dst_offset, value_bits].
    Scale { precision: Precision, elements: u32 },
    /// One key block of blocked (flash) attention for `rows` queries: the online-softmax
    /// update of the running row maximum `m` and row sum `l` (both f32, `rows` each) and the
    /// unnormalized output `o` (`rows x width`, f32, row-major) with this block's scores `s`
    /// (`rows x keys`, `precision`, row-major, the unscaled q.k) and values `v`
    /// (`keys x width`, `precision`, row-major). Each score is multiplied by the f32 whose bits
    /// are `scale_bits`. With `causal`, key `key_offset + j` is hidden from query
    /// `row_offset + r` when `key_offset + j > row_offset + r`. Per row r, over the visible
    /// keys j in order: x_j = scale * s[r][j]; m' = max(m[r], max_j x_j); c = exp(m[r] - m');
    /// p_j = exp(x_j - m'); l[r] = l[r] * c + sum_j p_j; o[r][e] = o[r][e] * c + sum_j p_j *
    /// v[j][e]; m[r] = m'. All arithmetic in f32 (exp is libm expf, as in softmax.mlir); a row
    /// with no visible key in this block is left unchanged (also when m[r] is -inf: c is then
    /// taken as 0, never NaN). The caller initializes m = -inf, l = 0, o = 0.
    /// Args: [s_offset, v_offset, m_offset, l_offset, o_offset, scale_bits, row_offset, key_offset].
    AttentionBlock {
        precision: Precision,
        rows: u32,
        keys: u32,
        width: u32,
        causal: bool,
    },
    /// out[r][e] = o[r][e] / l[r] (o f32 `rows x width`, l f32 `rows`), rounded once to
    /// `precision` (nearest even, saturating like the other kernels' stores); 0 where l[r] is 0.
    /// Args: [o_offset, l_offset, dst_offset].
    AttentionFinish {
        precision: Precision,
        rows: u32,
        width: u32,
    },
    /// out = a + bias over a range of 16-element units of an AMP panel order with `rows` rows per
    /// 16-column group: unit t (elements [16 t, 16 t + 16)) is group row q = start + t, whose bias
    /// is the 16 elements at bias[(q / rows) * 16 ..]. `elements` is a multiple of 16.
    /// Each sum is formed in f32 and rounded once to `precision` (f16 or f32; nearest even,
    /// saturating like [`KernelSpec::Add`]). In place (a == out) is allowed. The bias operand
    /// spans only the groups the call touches, `((start + elements / 16 - 1) / rows + 1) * 16`
    /// elements, so it depends on the run-time `start`; a call with `start >= rows` is refused.
    /// Args: [a_offset, bias_offset, out_offset, start] (0 <= start < rows).
    AddGroupBias {
        precision: Precision,
        rows: u32,
        elements: u32,
    },
    /// Elementwise with a scalar body (`ipu.map`): out[r][c] = body(inputs at (r, c)) for the
    /// `rows x cols` block, each input decoded to f32 (FP8 at its scale) and read as its
    /// [`MapOperand`] says, the body computed in f32 and the result rounded once to `output`
    /// (nearest even, saturating like the other kernels' stores). When the body reads element
    /// indices, `index_shape` is the whole result's shape: block row r is result row
    /// `row0 + r` over the leading axes folded (unravelled over `index_shape[..rank - 1]`) and
    /// column c is `col0 + c` of the last axis; otherwise `index_shape` is empty and the two
    /// arguments are ignored. In place (out == a full input) is allowed.
    /// Args: [input offsets..., out_offset, row0, col0].
    Map {
        output: Precision,
        inputs: Vec<MapInput>,
        rows: u32,
        cols: u32,
        index_shape: Vec<u64>,
        body: ScalarProgram,
    },
    /// out[r] = `combiner` over row r of a row-major `rows x cols` block, accumulated in f32
    /// in column order and rounded once to `precision` (nearest even, saturating).
    /// Args: [src_offset, dst_offset].
    Reduce {
        precision: Precision,
        combiner: Combiner,
        rows: u32,
        cols: u32,
    },
    // Added after format 6's variants: postcard numbers variants in order, so new ones go
    // last (packages written before them keep decoding).
    /// Copies slice `n` of a store of `slices` slices `stride` bytes apart: `bytes` bytes from
    /// `store_offset + min(n, slices - 1) * stride` to `dst_offset`, where `n` is the u32 at
    /// `counter_offset` (a repeat's iteration counter: a resident per-layer stack read by the
    /// iteration it belongs to). The source range stays inside the store whatever the
    /// counter holds. Store and destination must not overlap.
    /// Args: [store_offset, dst_offset, counter_offset].
    CopySlice {
        bytes: u32,
        stride: u32,
        slices: u32,
    },
    /// Advances a repeat's iteration counter: the u32 at `counter_offset` plus one (wrapping).
    /// Args: [counter_offset].
    Count,
    /// [`KernelSpec::Gemm`] with A or C (or both) row-major instead of in their AMP orders:
    /// with `row_major_a` A is a dense `rows x k` block, element (r, kk) at `r * k + kk`; with
    /// `row_major_c` C is a dense `rows x c` block, element (r, j) at `r * c + j` (B as in
    /// `Gemm`). Same numerics, arguments and cost: every 16-element group of an A or C row
    /// is still contiguous, and the AMP steps from one row to the next with a load or store
    /// stride, as the 1x1 convolution partials step their positions (`ld2x64pace` strides).
    /// An operand gathered from or sent to row-major blocks then moves as whole row runs
    /// instead of one run per 16 columns (the name says `_arow`, `_crow`).
    GemmRowMajor {
        input: Precision,
        partials: Precision,
        weights: MemoryClass,
        k: u32,
        c: u32,
        rows: Vec<u32>,
        accumulate: bool,
        row_major_a: bool,
        row_major_c: bool,
    },
    // Packages store kernel specs by variant index: new variants go last.
    /// One key block of flash attention in the column formulation: the scores arrive
    /// transposed, keys as AMP rows and queries as columns (`s = K_blk Q^T` from the AMP), and
    /// the probabilities leave as the AMP weights of `o^T += V_blk^T p^T`. Every block is in
    /// the AMP's 16-column panel order ([`ElementOrder`]) with the queries as its columns,
    /// padded to `qp = ceil(queries / 16) * 16`: `s` (the unscaled q.k, in the partials
    /// precision [`crate::kernels::describe::default_partials`]) and `p` (in `precision`) with
    /// `kp = ceil(keys / 16) * 16` panel rows (the keys), `o` (the unnormalized output, in the
    /// partials precision) with `width` panel rows; the running maximum `m` and sum `l` are f32,
    /// one per query. Key `key_offset + r` is hidden from query `query_offset + j` when
    /// `causal` and `key_offset + r > query_offset + j`. Per query column j < `queries` with a
    /// visible key, over the visible keys r in order: x_r = scale * s[r][j];
    /// m' = max(m[j], max_r x_r); c = exp(m[j] - m') (0 when m[j] is -inf); p[r][j] = exp(x_r -
    /// m') rounded once to `precision`; l[j] = l[j] * c + the sum of the rounded p[r][j];
    /// o[e][j] = o[e][j] * c rounded to the partials precision (0 when m[j] was -inf, whatever
    /// o held); m[j] = m'. Every other p element (hidden keys, padding rows and columns) is
    /// written 0; a column with no visible key keeps its m, l and o. All arithmetic in f32
    /// (exp is libm expf). `s` and `p` may not overlap each other or m, l, o.
    /// Args: [s_offset, p_offset, m_offset, l_offset, o_offset, scale_bits, query_offset,
    /// key_offset].
    AttentionColumns {
        precision: Precision,
        keys: u32,
        queries: u32,
        width: u32,
        causal: bool,
    },
    /// out[j][e] = o[e][j] / l[j] for `queries` rows of `width` (row-major, `precision`), o in
    /// the panel order of [`KernelSpec::AttentionColumns`] (`width` panel rows, the partials
    /// precision of `precision`), l f32; each quotient formed in f32 and rounded once; 0 where
    /// l[j] is 0. Args: [o_offset, l_offset, dst_offset].
    AttentionFinishColumns {
        precision: Precision,
        queries: u32,
        width: u32,
    },
    /// One key split's part of an attention whose keys span tiles: as
    /// [`KernelSpec::AttentionFinishColumns`] (o in the partials precision of `precision`), but
    /// the quotients are written as f32 rows, the split's normalized output that
    /// [`KernelSpec::AttentionMerge`] weighs with its maxima and sums. Args: [o_offset,
    /// l_offset, dst_offset].
    AttentionSplitFinish {
        precision: Precision,
        queries: u32,
        width: u32,
    },
    /// The cross-tile merge of an attention whose keys are split over `splits` tiles, for
    /// `rows` query rows of `width`, split i's output o[i] with its maxima m[i] and sums l[i]
    /// (f32, `[splits][rows]`). Rows (`panels` false): o[i] is split i's output divided by its
    /// sums, f32 rows (`[splits][rows][width]`), weighed by w_i = l[i][j] * exp(m[i][j] - M).
    /// Panels (`panels` true, `rows` a multiple of 16): o[i] is split i's unnormalized output
    /// as the column formulation leaves it (panel order, `width` panel rows, `rows` columns,
    /// in the partials precision of `precision`; split i's at element i * width * rows),
    /// weighed by w_i = exp(m[i][j] - M). Per row j, in f32: M = max_i m[i][j]; w_i is 0 where
    /// m[i][j] is -inf or l[i][j] is 0; out[j][e] = (sum_i w_i * o[i][j][e]) / D, D = sum_i
    /// w_i (rows) or sum_i w_i * l[i][j] (panels), sums in order i = 0, 1, ...; rounded once
    /// to `precision`, 0 where D is 0. exp is libm expf. dst must not overlap the inputs.
    /// Args: [o_offset, m_offset, l_offset, dst_offset].
    AttentionMerge {
        precision: Precision,
        splits: u32,
        rows: u32,
        width: u32,
        panels: bool,
    },
    /// The softmax of one key block of flash attention in the rows formulation (queries as
    /// the AMP's rows, keys as its columns: the hardware-measured runs' form), relative to the
    /// block's own maximum. `s` (the unscaled q.k, `s = Q K_blk^T` in AMP-output order: `rows`
    /// panel rows, keys padded to `kp = ceil(keys / 16) * 16` columns, the partials precision
    /// [`crate::kernels::describe::default_partials`]) gives, per row r over its visible keys j
    /// (key `key_offset + j` is hidden from query `row_offset + r` when `causal` and
    /// `key_offset + j > row_offset + r`), in f32: x_j = scale * s[r][j]; m = max_j x_j;
    /// p[r][j] = exp(x_j - m) rounded once to `precision` (the same order: the AMP-left order of
    /// `p V_blk`); l = the sum of the rounded p in order; m_blk[r] = m, l_blk[r] = l (f32; -inf
    /// and 0 for a row with no visible key). Hidden keys and padding columns of `p` are 0. exp
    /// is libm expf. Args: [s_offset, p_offset, m_blk_offset, l_blk_offset, scale_bits,
    /// row_offset, key_offset].
    AttentionRows {
        precision: Precision,
        rows: u32,
        keys: u32,
        causal: bool,
    },
    /// The rows formulation's merge of one key block into the running state: the block's `pv`
    /// (`p V_blk` in AMP-output order, `rows` panel rows, width padded to 16, the partials
    /// precision of `precision`) and its `m_blk`, `l_blk` ([`KernelSpec::AttentionRows`]) into
    /// the running maxima `m`, sums `l` (f32) and output `o` (f32, `rows x width`, row-major).
    /// In f32, per row: the `first` block takes m = m_blk, l = l_blk, o = pv; any other
    /// m' = max(m, m_blk), a = exp(m - m') (0 when m is -inf), b = exp(m_blk - m') (0 when
    /// m_blk is -inf), o = o * a + pv * b, l = l * a + l_blk * b, m = m'; the `last` then
    /// divides o by l (0 where l is 0). Args: [pv_offset, m_blk_offset, l_blk_offset, m_offset,
    /// l_offset, o_offset].
    AttentionRowsMerge {
        precision: Precision,
        rows: u32,
        width: u32,
        first: bool,
        last: bool,
    },
}

impl KernelSpec {
    /// Whether this is a GEMM call ([`KernelSpec::Gemm`] or [`KernelSpec::GemmRowMajor`]).
    pub const fn is_gemm(&self) -> bool {
        matches!(
            self,
            KernelSpec::Gemm { .. } | KernelSpec::GemmRowMajor { .. }
        )
    }

    /// This [`KernelSpec::Gemm`] call reading A (`a`) or writing C (`c`) row-major
    /// ([`KernelSpec::GemmRowMajor`]); unchanged when neither is, or for any other kernel.
    pub fn with_row_major(self, a: bool, c: bool) -> KernelSpec {
        match self {
            gemm @ KernelSpec::Gemm { .. } if !(a || c) => gemm,
            KernelSpec::Gemm {
                input,
                partials,
                weights,
                k,
                c: columns,
                rows,
                accumulate,
            } => KernelSpec::GemmRowMajor {
                input,
                partials,
                weights,
                k,
                c: columns,
                rows,
                accumulate,
                row_major_a: a,
                row_major_c: c,
            },
            other => other,
        }
    }
}

/// Most inputs of one map kernel (the importer's fusion keeps chains within it).
pub const MAP_MAX_INPUTS: usize = 16;
#[derive(Debug, thiserror::Error)]
pub enum KernelRunError {
    #[error("kernel {kernel}: argument {index} ({what}) is out of range: {detail}")]
    BadArgument {
        kernel: String,
        index: usize,
        what: &'static str,
        detail: String,
    },
    #[error("kernel {kernel} is not loaded")]
    NotLoaded { kernel: String },
    #[error("kernel {kernel}: {detail}")]
    Other { kernel: String, detail: String },
}

/// Executes compiled kernels on one tile's memory. Implemented by the kernel compiler's loaded
/// kernels (JIT or objects); the simulator calls it from many threads at once.
pub trait KernelRunner: Send + Sync {
    /// Runs `spec` on `tile_memory` (index 0 = SRAM base) with the variant's run-time `args`.
    fn run(
        &self,
        spec: &KernelSpec,
        tile_memory: &mut [u8],
        args: &[u32],
    ) -> Result<(), KernelRunError>;
}
