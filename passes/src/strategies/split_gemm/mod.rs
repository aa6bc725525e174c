//! The split GEMM strategy: a matmul whose right operand comes from the host (and whose left operand comes
//! from the host or is another split GEMM's result, see "Chains") over a 3-D tile grid, with
//! the K axis optionally split across tiles and the partials reduced (the planner's
//! `gemm_output_stationary` and `gemm_k_split` plans, `grid = [1, gm, gn, gk]`): which
//! matmuls it takes (`analysis`), its grids, their candidates and price (`candidates`,
//! `estimate`), and the program it emits (`lower`).
//!
//! ## Decomposition
//! C[M x N] = A[M x K] B[K x N]. Rows split into `gm` blocks (`ceil(M / gm)` rows, the last
//! shorter), columns into `gn` blocks and K into `gk` slices of whole 16-element groups.
//! Tile `(i * gn + j) * gk + l` computes the partial product of row block i, column block j
//! over K slice l. Its K slice runs in `panels` panels: per panel one exchange phase brings
//! the A panel (AMP-left, `rows x kp`) and the B panel (AMP-right, `kp x cols`), then one
//! compute step runs one GEMM call per column chunk (the first panel initializes the
//! partials, the others accumulate).
//!
//! ## Where the operands start
//! The host streams every operand element once, straight into its AMP order (strided host
//! pieces: 16 elements per run, one tensor row apart), so nothing is packed on the device
//! (the AMP-left pack costs 4 cycles per element [HW-C600]). Each A panel of (i, l) is cut
//! into `gn` contiguous ranges of whole 16-element rows of its AMP-left order, range j homed
//! on tile (i, j, l); each B panel of (l, j) into `gm` ranges, range i homed on (i, j, l).
//! In the panel's exchange phase every home broadcasts its range to the other tiles of its
//! group, at the range's place in the panel buffer; the home copies its own range there.
//!
//! ## Padding
//! K and N run in whole 16-element groups (the AMP's): a K or N that is not a multiple of 16
//! is padded to one. The host writes the padding as it writes the operands (each run of a
//! partial group ends in zeros, K rows past the tensor's are zeros: [`panel_pieces`]), so
//! the padded products add zeros and nothing is packed or zeroed on the device; the host
//! drops a result's padded columns as it reads them. So a padded product needs a host A,
//! and takes the product alone when its result is only returned ([`split_dims`]); a padded
//! K whose result other ops read (converted to its row grid) is offered beside the other
//! strategies ([`device_split_dims`]). A left operand gathered from row-major blocks may
//! have any K too: its last group's runs are shorter, and each tile whose panel holds that
//! group zeroes the group's `rows x 16` block with one fill before the panel's exchange
//! ([`SplitGrid::pad_fills`]).
//!
//! ## Resident weights
//! A constant B can instead be written by the host at initialization where it is read
//! (`SplitEnv::b_resident`): every tile (i, j, l) holds B's block (K slice l, column block j)
//! whole, panel after panel in AMP-right order, in the weights' class (replicated over the
//! `gm` row blocks). The panel phases then move only A, and the GEMM calls read B's panel
//! in place.
//!
//! ## Reduction (gk > 1)
//! The partial block (AMP-output order, `rows x cols`) is cut into `gk` contiguous ranges;
//! range l is reduced on tile (i, j, l): one exchange phase sends every other tile's range l
//! into a stack on that tile, which reduce-adds the stack and adds its own range. The
//! host reads the reduced ranges (or, with gk == 1, the partial block itself) back with
//! strided pieces, so C needs no rearrange either.
//!
//! ## FP8
//! Under the FP8 policy the host encodes each host operand in FP8 at its own scale as it
//! streams it (the plan's `lhs_scale` / `rhs_scale`); the GEMM calls get both scales.
//!
//! ## Chains
//! C stays where the reduction left it, a [`Ranged`] value. A bias add and a GeLU run on the
//! ranges in place, and a following split GEMM gathers its A panels from their owners in its
//! own panel phases (AMP-output and AMP-left are the same 16-column panel order, so a run of
//! a group's rows is contiguous on both sides); under FP8 the owners first cast their ranges
//! at the policy scale. [`split_dims`] decides, for the planner and the lowering alike, which
//! matmuls of a graph are lowered so.
//!
//! ## Row-major neighbours
//! A matmul whose left operand another op computed (a layer norm, an attention's merged
//! heads: row-major blocks of a grid, see `lower::graph`), or a host operand whose result
//! other ops read, may run split too ([`device_split_dims`]), offered beside the general
//! matmul and chosen by cost. A host A streams as above (or, already on the device for
//! another op, is gathered from its blocks); a device A's
//! panels are gathered from the producer's blocks in the panel phases. With K a multiple of
//! 16 the panels are row-major (`rows x kp`, [`SplitGrid::a_row_major`]) and the GEMM calls
//! read them so (`KernelSpec::GemmRowMajor`): a block row's part in a K panel is one run on
//! its owner, sent to its place in the panel. A padded K keeps AMP-left panels, one run per
//! 16-column group of a block row. Its result, which other ops read as row-major blocks, is
//! converted after the reduction in one more exchange phase to the row grid
//! [`SplitGrid::rows_grid`] (whole rows per tile), where it is read as blocks ([`rows`]):
//! when a tile's block is one GEMM call wide the partial blocks are row-major too
//! ([`SplitGrid::c_row_major`]) and each row of a range is one run, else every 16-column run
//! of a range goes to the tile of its row. Each run is a row of the tiles' exchange code.

use ipu_device::kernels::describe::GEMM_MAX_WEIGHT_ELEMENTS;
use ipu_device::{cost, KernelSpec, MemoryClass, Precision, Target};

use crate::tiling::program::{Arg, BufferId, HostPiece, Move, Place, Run, TileProgram, TileStep};
use std::sync::Arc;

use crate::tiling::graph::Analyses;
use crate::tiling::{Graph, OpKind, Origin};

mod analysis;
mod candidates;
mod estimate;
mod lower;
pub mod rows;
#[cfg(test)]
pub(crate) mod tests;

pub use analysis::{bias_operand, device_split_dims, ranged_value, split_dims};
#[cfg(test)]
use analysis::{is_host, split_local};
pub use candidates::{candidates, device_a_share, gather_phases};
pub use estimate::SplitEstimate;
pub use lower::{
    convert_to_rows, inputs, lower, DeviceA, OwnedRange, Ranged, Segment, SplitInputs,
};

/// The most exchange rows (transfers a tile sends or receives) one split GEMM of a row-major
/// left operand may add to a tile: gathered 16-column runs of A rows, and the result's runs
/// sent to its row grid. Each row is an entry of the tile's exchange code (16 bytes,
/// `lower::place::EXCHANGE_ROW_BYTES`), which lives in the support memory the planned data
/// budgets leave aside (48 KiB on the C600): one op may take a sixth of it.
pub const MAX_GATHER_ROWS: u32 = 512;

/// The widest column chunk of one GEMM call.
const MAX_CALL_COLUMNS: u32 = 256;

/// The `panels` K panels of the K slice `(first, len)` (whole 16-groups): `(first K row,
/// length)` each, some empty when the slice is short ([`SplitGrid::panels_of`]).
fn slice_panels((first, len): (u32, u32), panels: u32) -> Vec<(u32, u32)> {
    let groups = len / 16;
    let step = groups.div_ceil(panels).max(1);
    (0..panels)
        .map(|p| {
            let g0 = (p * step).min(groups);
            let g1 = ((p + 1) * step).min(groups);
            (first + g0 * 16, (g1 - g0) * 16)
        })
        .collect()
}

/// One axis split into blocks: `(first, len)` per block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    pub blocks: Vec<(u32, u32)>,
}

impl Split {
    /// `size` into `parts` balanced blocks of whole `unit`-element units (sizes differ by at
    /// most one unit, the larger first; `size` a multiple of `unit`). `None` when a block
    /// would be empty.
    fn new(size: u32, parts: u32, unit: u32) -> Option<Split> {
        let units = size / unit;
        if parts == 0 || parts > units {
            return None;
        }
        let (base, extra) = (units / parts, units % parts);
        let mut first = 0;
        let blocks = (0..parts)
            .map(|p| {
                let len = base + u32::from(p < extra);
                let block = (first * unit, len * unit);
                first += len;
                block
            })
            .collect();
        Some(Split { blocks })
    }

    fn largest(&self) -> u32 {
        self.blocks.iter().map(|b| b.1).max().unwrap_or(0)
    }
}

/// How a split GEMM is laid out (see the module docs). `k` and `n` are the product's K and
/// N padded to whole 16-element groups (the AMP's); `k_real` and `n_real` the tensors'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitGrid {
    pub m: u32,
    pub k: u32,
    pub n: u32,
    pub k_real: u32,
    pub n_real: u32,
    pub gm: u32,
    pub gn: u32,
    pub gk: u32,
    pub rows: Split,
    pub cols: Split,
    pub ks: Split,
    /// K panel length (a multiple of 16); every K slice runs in `panels` panels of at most
    /// `kp` (each slice's panels are equal-ish runs of whole 16-groups).
    pub kp: u32,
    pub panels: u32,
    /// Columns of one GEMM call (a multiple of 16).
    pub call_columns: u32,
    /// Memory classes of the per-tile buffers.
    pub classes: Classes,
    /// Where the operands come from and what the result must be.
    pub env: SplitEnv,
}

/// What a split GEMM's surroundings ask of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitEnv {
    /// The class of the B panel (the GEMM's weights).
    pub weights: MemoryClass,
    /// A is a device value held as another split GEMM's result ranges ([`Ranged`]): its
    /// panels are gathered from their owners, there are no A homes.
    pub a_device: bool,
    /// The class the result must live in (a later split GEMM sends it in phases that receive
    /// into its panels, so it must share no memory element with them).
    pub result: Option<MemoryClass>,
    /// Bytes per tile, `[standard, interleaved]`, of device values live across the op.
    pub reserved: [u32; 2],
    /// B (a constant) is written by the host at initialization, whole K slice by column
    /// block, on every tile that reads it (see "Resident weights"): no B exchange.
    pub b_resident: bool,
    /// A product offered beside the general matmul ("Row-major neighbours"): A, when a
    /// device value, is gathered from row-major blocks (at most [`MAX_GATHER_ROWS`] exchange
    /// rows per tile), and the result is converted to its row grid after the reduction, in
    /// one more exchange phase.
    pub row_major: bool,
}

impl SplitEnv {
    /// Both operands from the host, the result free, nothing else live.
    pub const fn host(weights: MemoryClass) -> SplitEnv {
        SplitEnv {
            weights,
            a_device: false,
            result: None,
            reserved: [0, 0],
            b_resident: false,
            row_major: false,
        }
    }

    /// The class a result sent by a later split GEMM must be in: not its panels' class.
    pub const fn chained_result_class(weights: MemoryClass) -> MemoryClass {
        match weights {
            MemoryClass::Interleaved => MemoryClass::Standard,
            MemoryClass::Standard => MemoryClass::Interleaved,
        }
    }
}

/// The memory class of each buffer of a split GEMM: the B panel is interleaved (the AMP's
/// 128-bit weight loads only run from there [Doc, PopLibs]); the others go largest first to
/// whichever class still has room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classes {
    pub a_home: MemoryClass,
    pub b_home: MemoryClass,
    pub a_panel: MemoryClass,
    pub b_panel: MemoryClass,
    pub partials: MemoryClass,
    pub stack: MemoryClass,
    pub reduced: MemoryClass,
}

impl Classes {
    fn all(&self) -> [MemoryClass; 7] {
        [
            self.a_home,
            self.b_home,
            self.a_panel,
            self.b_panel,
            self.partials,
            self.stack,
            self.reduced,
        ]
    }
}

/// Which buffers (in [`Classes`] field order) are live while the K panels run and while the
/// partials are reduced.
const PANELS: [bool; 7] = [true, true, true, true, true, false, false];
const REDUCE: [bool; 7] = [false, false, false, false, true, true, true];

/// Classes for buffers of `bytes` per tile (in [`Classes`] field order), if they fit.
/// Placement reuses memory of buffers whose lifetimes do not overlap, so the panels' buffers
/// (homes, panels, partials) and the reduction's (partials, stack, reduced range) are checked
/// as two separate peaks. A tile must not read a memory element for a send while the same
/// phase writes a receive into it, so each phase's sent and received buffers are kept in
/// different classes (the regions share no element): the panels in the weights' class
/// (interleaved unless pinned: the AMP's 128-bit weight loads only run from there [Doc,
/// PopLibs]), the homes in the other, the partials and the reduce stack apart.
/// With `env.result` the result buffer (the reduced range with a K split, else the
/// partials) is put in that class; `env.reserved` is taken off the room first.
fn assign_classes(
    bytes: [u32; 7],
    reduce: bool,
    env: &SplitEnv,
    target: &Target,
) -> Option<Classes> {
    use MemoryClass::{Interleaved as I, Standard as S};
    // Placement also keeps tensors from straddling 16 KiB elements; leave it 5 % of room.
    let room = [
        (target.memory.standard_budget.value / 20 * 19).checked_sub(env.reserved[0])?,
        (target.memory.interleaved_budget.value / 20 * 19).checked_sub(env.reserved[1])?,
    ];
    let weights = env.weights;
    let result = if reduce { 6 } else { 4 };
    // Resident weights live for the whole program, the reduction included.
    let mut reduce_live = REDUCE;
    reduce_live[1] |= env.b_resident;
    let fits = |classes: &[MemoryClass; 7]| {
        [PANELS, reduce_live].iter().all(|phase| {
            let mut used = [0u64; 2];
            for i in 0..7 {
                if phase[i] {
                    used[usize::from(classes[i] == I)] += u64::from(bytes[i]);
                }
            }
            used[0] <= u64::from(room[0]) && used[1] <= u64::from(room[1])
        })
    };
    // The panels in the weights' class, the homes in the other; then the partials and the
    // stack apart, the reduced range anywhere.
    let (panel, home) = match weights {
        I => (I, S),
        S => (S, I),
    };
    let mut choices = vec![
        [home, home, panel, panel, I, S, I],
        [home, home, panel, panel, I, S, S],
        [home, home, panel, panel, S, I, I],
        [home, home, panel, panel, S, I, S],
    ];
    if env.b_resident {
        // Resident weights are the GEMM's B panels themselves, in the weights' class, and
        // are never sent or received; only A's home and panel must be apart, either way.
        choices = choices
            .iter()
            .flat_map(|c| {
                [
                    [c[0], panel, c[2], panel, c[4], c[5], c[6]],
                    [c[2], panel, c[0], panel, c[4], c[5], c[6]],
                ]
            })
            .collect();
    }
    let classes = choices
        .into_iter()
        .filter(|c| env.result.is_none_or(|class| c[result] == class))
        .find(|c| fits(c))?;

    Some(Classes {
        a_home: classes[0],
        b_home: classes[1],
        a_panel: classes[2],
        b_panel: classes[3],
        partials: classes[4],
        stack: classes[5],
        reduced: classes[6],
    })
}

/// Why a split grid cannot be built.
pub type GridError = String;

impl SplitGrid {
    /// The grid `gm x gn x gk` for an `m x k @ k x n` product in `precision` (input, with its
    /// partials) with the B panel in `weights` memory, whose per-tile buffers fit `target`'s
    /// planned budgets.
    pub fn new(
        dims: (u32, u32, u32),
        shape: (u32, u32, u32),
        precision: Precision,
        weights: MemoryClass,
        target: &Target,
    ) -> Result<SplitGrid, GridError> {
        SplitGrid::within(dims, shape, precision, &SplitEnv::host(weights), target)
    }

    /// [`SplitGrid::new`] in surroundings `env`. A K or N that is not a multiple of 16 is
    /// padded with zeros where the host writes the operands ("Padding" in the module docs):
    /// a K only for a host A, an N only for a result the host reads.
    pub fn within(
        (m, k_real, n_real): (u32, u32, u32),
        (gm, gn, gk): (u32, u32, u32),
        precision: Precision,
        env: &SplitEnv,
        target: &Target,
    ) -> Result<SplitGrid, GridError> {
        let (k, n) = (k_real.next_multiple_of(16), n_real.next_multiple_of(16));
        if k != k_real && env.a_device && !env.row_major {
            return Err(format!(
                "K = {k_real} is not a multiple of 16 and A is gathered from another split GEMM's ranges (only the host and row-major gathers pad)"
            ));
        }
        if n != n_real && (env.row_major || env.result.is_some()) {
            return Err(format!(
                "N = {n_real} is not a multiple of 16 and the result is read on the device"
            ));
        }
        let rows = Split::new(m, gm, 1).ok_or_else(|| format!("{gm} row blocks of M = {m}"))?;
        let cols = Split::new(n, gn, 16)
            .ok_or_else(|| format!("{gn} column blocks of 16-groups of N = {n}"))?;
        let ks = Split::new(k, gk, 16).ok_or_else(|| format!("{gk} K slices of K = {k}"))?;
        let (r, c, kt) = (rows.largest(), cols.largest(), ks.largest());
        // The exchange rows per tile of gathering a row-major A (with `panels` K panels):
        // every 16-column run of a row into AMP-left panels (a padded K), else (row-major
        // panels, from blocks of whole rows) one run per row and panel.
        let gathered = |panels: u32| match (env.row_major && env.a_device, k == k_real) {
            (false, _) => 0,
            (true, false) => r * (kt / 16),
            (true, true) => r * panels,
        };
        let too_many = |most: u32, rows_padded: u32| {
            format!(
                "a row-major left operand gathered in {r} x {kt} blocks (or the result's {rows_padded} rows per tile) takes {most} exchange rows per tile, more than {MAX_GATHER_ROWS}"
            )
        };
        let rows_grid = rows::result_rows(m, n, gm * gn * gk);
        let call_columns = c
            .div_ceil(c.div_ceil(MAX_CALL_COLUMNS))
            .next_multiple_of(16);
        if env.row_major {
            // The runs of a result row on its row tile (one per column block from row-major
            // blocks, [`SplitGrid::c_row_major`], else one per 16 columns), and the fewest
            // gathered runs any K panel gives.
            let per_row = if c <= call_columns { gn } else { n / 16 };
            let converted = rows_grid.rows_padded * per_row;
            let most = gathered(1).max(converted);
            if most > MAX_GATHER_ROWS {
                return Err(too_many(most, rows_grid.rows_padded));
            }
        }
        let kp_kernel = (GEMM_MAX_WEIGHT_ELEMENTS / call_columns / 16 * 16).min(kt);
        // The longest K panel whose buffers fit (fewer panels: fewer exchange phases).
        let mut kp = kp_kernel;
        loop {
            if kp < 16 {
                return Err(format!(
                    "a {r} x {c} block over K = {kt} does not fit one tile's planned memory with any K panel"
                ));
            }
            let panels = kt.div_ceil(kp);
            let kp_even = (kt / 16).div_ceil(panels) * 16;
            let bytes = buffer_bytes((r, c, kp_even, panels), (gm, gn, gk), precision, env);
            if gathered(panels) > MAX_GATHER_ROWS {
                return Err(too_many(gathered(panels), rows_grid.rows_padded));
            }
            if let Some(classes) = assign_classes(bytes, gk > 1, env, target) {
                return Ok(SplitGrid {
                    m,
                    k,
                    n,
                    k_real,
                    n_real,
                    gm,
                    gn,
                    gk,
                    rows,
                    cols,
                    ks,
                    kp: kp_even,
                    panels,
                    call_columns,
                    classes,
                    env: *env,
                });
            }
            kp -= 16;
        }
    }

    /// The cheapest grid of at most `tiles` tiles by [`SplitGrid::estimate`], if any fits.
    pub fn best(
        dims: (u32, u32, u32),
        tiles: u32,
        precision: Precision,
        target: &Target,
    ) -> Option<SplitGrid> {
        SplitGrid::ranked(
            dims,
            tiles,
            precision,
            &SplitEnv::host(MemoryClass::Interleaved),
            target,
            1,
        )
        .into_iter()
        .next()
    }

    /// The `limit` cheapest grids using between 90 % and all of `tiles` tiles (of as many as
    /// the product can use, when fewer), by
    /// [`SplitGrid::estimate`] (ties: fewer tiles, then the smallest `(gm, gn, gk)`).
    pub fn ranked(
        dims: (u32, u32, u32),
        tiles: u32,
        precision: Precision,
        env: &SplitEnv,
        target: &Target,
        limit: usize,
    ) -> Vec<SplitGrid> {
        // (modelled cycles, tiles used, grid shape, grid)
        type Scored = (u64, u32, (u32, u32, u32), SplitGrid);
        let mut scored: Vec<Scored> = Vec::new();
        // Grids leaving more than a tenth of the usable tiles idle are never competitive (a
        // small product cannot use more tiles than it has rows x 16-column groups x K groups).
        let (m, k, n) = dims;
        let usable = u64::from(m) * u64::from(n.div_ceil(16)) * u64::from(k.div_ceil(16));
        let usable = u32::try_from(usable)
            .unwrap_or(u32::MAX)
            .clamp(1, tiles.max(1));
        for gm in 1..=tiles {
            for gn in 1..=tiles / gm {
                let most = tiles / (gm * gn);
                let least = (usable * 9)
                    .div_ceil(10)
                    .div_ceil(gm * gn)
                    .clamp(1, most.max(1));
                for gk in least..=most {
                    let Ok(grid) = SplitGrid::within(dims, (gm, gn, gk), precision, env, target)
                    else {
                        continue;
                    };
                    let cycles = grid.estimate(precision, target).total();
                    scored.push((cycles, gm * gn * gk, (gm, gn, gk), grid));
                }
            }
        }
        scored.sort_by_key(|entry| (entry.0, entry.1, entry.2));
        scored.truncate(limit);
        scored.into_iter().map(|entry| entry.3).collect()
    }

    /// Per-tile bytes of this grid's buffers ([`buffer_bytes`]).
    fn buffer_bytes(&self, precision: Precision) -> [u32; 7] {
        let largest = (self.rows.largest(), self.cols.largest());
        buffer_bytes(
            (largest.0, largest.1, self.kp, self.panels),
            (self.gm, self.gn, self.gk),
            precision,
            &self.env,
        )
    }

    /// Peak per-tile bytes of the buffers other than the homes and the result,
    /// `(standard, interleaved)`: the larger of the panels' and the reduction's (their
    /// lifetimes do not overlap).
    pub fn transient_bytes(&self, precision: Precision) -> (u64, u64) {
        let bytes = self.buffer_bytes(precision);
        let classes = self.classes.all();
        let mut peak = (0u64, 0u64);
        for phase in [PANELS, REDUCE] {
            let mut used = (0u64, 0u64);
            // The homes (0 and 1) are the operands' needs and the result (the reduced range
            // with a K split, else the partials) is the op's output, not transient.
            let result = if self.gk > 1 { 6 } else { 4 };
            for i in (2..7).filter(|&i| phase[i] && i != result) {
                match classes[i] {
                    MemoryClass::Standard => used.0 += u64::from(bytes[i]),
                    MemoryClass::Interleaved => used.1 += u64::from(bytes[i]),
                }
            }
            peak = (peak.0.max(used.0), peak.1.max(used.1));
        }
        peak
    }

    /// Calls `visit(source, destinations, bytes)` for each transfer of exchange phase `phase`:
    /// K panel `phase` (`phase < panels`), then the reduction (none without a K split), then
    /// the conversion of the result to its row grid (with [`SplitEnv::row_major`]).
    pub fn for_each_exchange_transfer(
        &self,
        precision: Precision,
        phase: u32,
        mut visit: impl FnMut(u32, &[u32], u64),
    ) {
        self.exchange_transfers(precision, phase, true, &mut visit)
    }

    /// [`SplitGrid::for_each_exchange_transfer`] without a gathered A's transfers (with
    /// `with_a` false: the caller sends A from where it is).
    pub fn exchange_transfers(
        &self,
        precision: Precision,
        phase: u32,
        with_a: bool,
        visit: &mut dyn FnMut(u32, &[u32], u64),
    ) {
        if phase < self.panels {
            let eb = u64::from(precision.bytes());
            self.panel_ranges(phase, |mut range| {
                if range.operand == Operand::A && self.env.a_device && !with_a {
                    return;
                }
                if range.operand == Operand::A && self.env.a_device {
                    // Gathered from a device value's owners, which the grid does not know:
                    // modelled as sent by a tile outside the group to all of it.
                    if let Some(outside) = self.outside(range.home) {
                        range.destinations.push(range.home);
                        range.home = outside;
                    }
                }
                if !range.destinations.is_empty() {
                    visit(range.home, &range.destinations, u64::from(range.len) * eb);
                }
            });
        } else if phase == self.panels {
            let pb = u64::from(ipu_device::kernels::describe::default_partials(precision).bytes());
            self.reduce_ranges(|range| {
                for source in range.sources {
                    visit(source, &[range.owner], u64::from(range.len) * pb);
                }
            });
        } else if phase == self.panels + 1 && self.env.row_major {
            let pb = ipu_device::kernels::describe::default_partials(precision).bytes();
            let traffic = rows::rows_traffic(
                &self.result_ranges(),
                self.n,
                &self.rows_grid(),
                self.c_row_major(),
                pb,
            );
            for ((owner, tile), bytes) in traffic {
                visit(owner, &[tile], bytes);
            }
        }
    }

    /// A tile of the grid outside the A group (`(i, *, l)`) of `tile`: the next K slice's,
    /// else the next row block's.
    fn outside(&self, tile: u32) -> Option<u32> {
        let (l, ij) = (tile % self.gk, tile / self.gk);
        let (i, j) = (ij / self.gn, ij % self.gn);
        if self.gk > 1 {
            Some(self.tile(i, j, (l + 1) % self.gk))
        } else if self.gm > 1 {
            Some(self.tile((i + 1) % self.gm, j, l))
        } else {
            None
        }
    }

    pub fn tiles(&self) -> u32 {
        self.gm * self.gn * self.gk
    }

    /// Whether the A panels are row-major (`rows x kp`, read by the `GemmRowMajor` kernels)
    /// rather than AMP-left: a left operand gathered from row-major blocks whose K needs no
    /// padding arrives as one run per row and source block ("Row-major neighbours").
    pub fn a_row_major(&self) -> bool {
        self.env.a_device && self.env.row_major && self.k == self.k_real
    }

    /// Whether the partial blocks (and so the result's ranges) are row-major (`rows x cols`,
    /// written by the `GemmRowMajor` kernels) rather than AMP-output: a result converted to
    /// its row grid whose blocks take one GEMM call each moves as one run per row and range
    /// ("Row-major neighbours").
    pub fn c_row_major(&self) -> bool {
        self.env.row_major && self.cols.largest() <= self.call_columns
    }

    /// The fills that zero the padding of a left operand gathered from row-major blocks
    /// whose K is not a multiple of 16, in K panel `panel`: `(tile, first element, elements)`
    /// of the A panel, the last 16-group's `rows x 16` block on every tile whose panel holds
    /// it (the gathers then write its real columns). None otherwise.
    pub fn pad_fills(&self, panel: u32) -> Vec<(u32, u32, u32)> {
        if !(self.env.a_device && self.env.row_major) || self.k == self.k_real {
            return Vec::new();
        }
        let last = self.k / 16 - 1;
        let mut fills = Vec::new();
        for l in 0..self.gk {
            let Some(&(k0, kp)) = self.panels_of(l).get(panel as usize) else {
                continue;
            };
            if kp == 0 || !(k0 / 16..(k0 + kp) / 16).contains(&last) {
                continue;
            }
            let column = last - k0 / 16;
            for (i, &(_, rows)) in self.rows.blocks.iter().enumerate() {
                for j in 0..self.gn {
                    fills.push((self.tile(i as u32, j, l), column * rows * 16, rows * 16));
                }
            }
        }
        fills
    }

    /// Bytes of one K panel's slot in the B home: a home range, or with resident weights
    /// the whole panel of the widest column block.
    fn b_slot(&self, eb: u32) -> u32 {
        let c = self.cols.largest();
        if self.env.b_resident {
            self.kp * c * eb
        } else {
            ranges_max(self.kp * c, self.gm) * eb
        }
    }

    pub fn tile(&self, i: u32, j: u32, l: u32) -> u32 {
        (i * self.gn + j) * self.gk + l
    }

    fn all_tiles(&self) -> Vec<u32> {
        (0..self.tiles()).collect()
    }

    /// The panels of K slice l: `(first K row, length)`, `panels` of them (some may be
    /// empty when the slice is short).
    pub fn panels_of(&self, l: u32) -> Vec<(u32, u32)> {
        slice_panels(self.ks.blocks[l as usize], self.panels)
    }

    /// Visits every non-empty home range of panel `p` (see the module docs), with the tiles
    /// it is broadcast to.
    pub fn panel_ranges(&self, p: u32, mut visit: impl FnMut(PanelRange)) {
        self.home_ranges(p, |range| {
            let HomeRange {
                operand,
                at: (i, j, l),
                first,
                len,
                panel_rows,
                origin,
            } = range;
            let destinations = match operand {
                Operand::A => (0..self.gn)
                    .filter(|&jj| jj != j)
                    .map(|jj| self.tile(i, jj, l))
                    .collect(),
                Operand::B => (0..self.gm)
                    .filter(|&ii| ii != i)
                    .map(|ii| self.tile(ii, j, l))
                    .collect(),
            };
            visit(PanelRange {
                operand,
                home: self.tile(i, j, l),
                destinations,
                first,
                len,
                panel_rows,
                origin,
            })
        });
    }

    /// Visits every non-empty home range of panel `p`, without its readers (what
    /// [`Self::panel_ranges`] visits, for walks that need only each range's home and size).
    pub fn home_ranges(&self, p: u32, mut visit: impl FnMut(HomeRange)) {
        for l in 0..self.gk {
            let (k0, kp) = self.panels_of(l)[p as usize];
            if kp == 0 {
                continue;
            }
            for (i, &(row0, rows)) in self.rows.blocks.iter().enumerate() {
                for (j, (first, len)) in ranges(rows * kp, self.gn).into_iter().enumerate() {
                    if len > 0 {
                        visit(HomeRange {
                            operand: Operand::A,
                            at: (i as u32, j as u32, l),
                            first,
                            len,
                            panel_rows: rows,
                            origin: (row0, k0),
                        });
                    }
                }
            }
            // Resident weights are already where they are read.
            if self.env.b_resident {
                continue;
            }
            for (j, &(col0, cols)) in self.cols.blocks.iter().enumerate() {
                // B's panel in AMP-right order: column group g, K row kk at
                // `(g * kp + kk) * 16`; as a panel order its "rows" are the K rows.
                for (i, (first, len)) in ranges(kp * cols, self.gm).into_iter().enumerate() {
                    if len > 0 {
                        visit(HomeRange {
                            operand: Operand::B,
                            at: (i as u32, j as u32, l),
                            first,
                            len,
                            panel_rows: kp,
                            origin: (k0, col0),
                        });
                    }
                }
            }
        }
    }

    /// Visits every non-empty reduced range (only with a K split).
    pub fn reduce_ranges(&self, mut visit: impl FnMut(ReduceRange)) {
        if self.gk < 2 {
            return;
        }
        for (i, &(row0, rows)) in self.rows.blocks.iter().enumerate() {
            for (j, &(col0, cols)) in self.cols.blocks.iter().enumerate() {
                let (i, j) = (i as u32, j as u32);
                for (l, (first, len)) in ranges(rows * cols, self.gk).into_iter().enumerate() {
                    let l = l as u32;
                    if len > 0 {
                        visit(ReduceRange {
                            owner: self.tile(i, j, l),
                            sources: (0..self.gk)
                                .filter(|&ll| ll != l)
                                .map(|ll| self.tile(i, j, ll))
                                .collect(),
                            first,
                            len,
                            rows,
                            cols,
                            origin: (row0, col0),
                        });
                    }
                }
            }
        }
    }

    /// The column chunks of column block j, relative to the block: `(first, len)`.
    fn chunks(&self, j: u32) -> Vec<(u32, u32)> {
        let (_, len) = self.cols.blocks[j as usize];
        let mut out = Vec::new();
        let mut first = 0;
        while first < len {
            let c = self.call_columns.min(len - first);
            out.push((first, c));
            first += c;
        }
        out
    }
}

/// Which operand a panel range belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    A,
    B,
}

/// One home range of a K panel: elements `[first, first + len)` of the operand's panel
/// (AMP-left A of `rows x kp`, AMP-right B of `kp x cols`), homed on `home` and broadcast to
/// `destinations`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PanelRange {
    pub operand: Operand,
    pub home: u32,
    pub destinations: Vec<u32>,
    pub first: u32,
    pub len: u32,
    /// Rows of the panel order (A: the block's rows; B: the panel's K rows) and the tensor
    /// element (row, column) of the panel's first element.
    pub panel_rows: u32,
    pub origin: (u32, u32),
}

/// A home range of a panel as [`SplitGrid::home_ranges`] visits it: a [`PanelRange`] whose
/// home is the tile at grid position `at` = (row block, column block, K slice), without the
/// readers it is broadcast to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HomeRange {
    pub operand: Operand,
    pub at: (u32, u32, u32),
    pub first: u32,
    pub len: u32,
    pub panel_rows: u32,
    pub origin: (u32, u32),
}

/// One reduced range: elements `[first, first + len)` of the partial block (AMP-output,
/// `rows` rows, the block's first row and column `origin`), reduced on `owner` from the
/// partials of `sources` (in stack order after the owner's own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReduceRange {
    pub owner: u32,
    pub sources: Vec<u32>,
    pub first: u32,
    pub len: u32,
    pub rows: u32,
    pub cols: u32,
    pub origin: (u32, u32),
}

/// Per-tile bytes of the buffers of a split GEMM with the largest blocks `r x c`, K panels
/// of `kp` (`panels` of them) on grid `gm x gn x gk`, in [`Classes`] field order: A home,
/// B home, A panel, B panel, partials, reduce stack, reduced range.
fn buffer_bytes(
    (r, c, kp, panels): (u32, u32, u32, u32),
    (gm, gn, gk): (u32, u32, u32),
    precision: Precision,
    env: &SplitEnv,
) -> [u32; 7] {
    // In u64, saturated to u32: a grid whose buffers overflow cannot fit a tile, and the
    // memory check then refuses it (u32 products of large shapes overflowed here).
    let (r, c, kp, panels) = (u64::from(r), u64::from(c), u64::from(kp), u64::from(panels));
    let (gm, gn, gk) = (u64::from(gm), u64::from(gn), u64::from(gk));
    let eb = u64::from(precision.bytes());
    let pb = u64::from(ipu_device::kernels::describe::default_partials(precision).bytes());
    let range_max = |elements: u64, parts: u64| (elements / 16).div_ceil(parts.max(1)) * 16;
    let slice = range_max(r * c, gk);
    let reduce = gk > 1;
    [
        if env.a_device {
            0
        } else {
            (panels * range_max(r * kp, gn) * eb).max(eb)
        },
        if env.b_resident {
            panels * kp * c * eb
        } else {
            (panels * range_max(kp * c, gm) * eb).max(eb)
        },
        r * kp * eb,
        if env.b_resident { 0 } else { kp * c * eb },
        r * c * pb,
        if reduce { slice * (gk - 1) * pb } else { 0 },
        if reduce { slice * pb } else { 0 },
    ]
    .map(|bytes| u32::try_from(bytes).unwrap_or(u32::MAX))
}

/// `elements` cut into `parts` contiguous ranges of whole 16-element rows: `(first, len)`
/// per part (trailing parts may be empty).
pub(crate) fn ranges(elements: u32, parts: u32) -> Vec<(u32, u32)> {
    let rows = elements / 16;
    let step = rows.div_ceil(parts.max(1));
    (0..parts.max(1))
        .map(|p| {
            let r0 = (p * step).min(rows);
            let r1 = ((p + 1) * step).min(rows);
            (r0 * 16, (r1 - r0) * 16)
        })
        .collect()
}

fn ranges_max(elements: u32, parts: u32) -> u32 {
    (elements / 16).div_ceil(parts.max(1)) * 16
}

/// The strided host pieces carrying elements `[first, first + len)` of a 16-column panel
/// order with `panel_rows` rows (element `(g * panel_rows + r) * 16 + x` is tensor element
/// `(row0 + r) * cols + col0 + g * 16 + x`) into `place` on `tile`: one piece per
/// 16-column group touched, one run per row. The tensor is `rows x cols` (`real`): elements
/// past its last column are zero padding at the end of each run, rows past its last row
/// (a K padded to whole 16-groups) one piece of zeros.
#[allow(clippy::too_many_arguments)]
pub(crate) fn panel_pieces(
    tile: u32,
    place: Place,
    (first, len): (u32, u32),
    panel_rows: u32,
    (row0, col0): (u32, u32),
    real: (u32, u32),
    eb: u32,
    out: &mut Vec<HostPiece>,
) {
    let (real_rows, cols) = real;
    let mut e = first;
    let end = first + len;
    while e < end {
        let g = e / (16 * panel_rows);
        let r = (e / 16) % panel_rows;
        let rows = (panel_rows - r).min((end - e) / 16);
        let at = |e: u32| Place::at(place.buffer, place.offset + (e - first) * eb);
        // Rows of the tensor, then rows of zeros; columns of the tensor, then zeros.
        let tensor_rows = real_rows.saturating_sub(row0 + r).min(rows);
        let tensor_cols = cols.saturating_sub(col0 + g * 16).min(16);
        if tensor_rows > 0 && tensor_cols > 0 {
            out.push(HostPiece {
                tile,
                place: at(e),
                tensor_offset: (u64::from(row0 + r) * u64::from(cols) + u64::from(col0 + g * 16))
                    * u64::from(eb),
                bytes: tensor_rows * 16 * eb,
                runs: tensor_rows,
                // A single run is contiguous and records no stride.
                stride: if tensor_rows > 1 {
                    u64::from(cols) * u64::from(eb)
                } else {
                    0
                },
                pad: (16 - tensor_cols) * eb,
            });
        }
        let zero_rows = if tensor_cols > 0 {
            rows - tensor_rows
        } else {
            rows
        };
        if zero_rows > 0 {
            out.push(HostPiece::zeros(
                tile,
                at(e + (rows - zero_rows) * 16),
                zero_rows * 16 * eb,
            ));
        }
        e += rows * 16;
    }
}
