//! Lowering of a matmul whose right operand comes from the host (and whose left operand comes
//! from the host or is another split GEMM's result, see "Chains") over a 3-D tile grid, with
//! the K axis optionally split across tiles and the partials reduced (the planner's
//! `gemm_output_stationary` and `gemm_k_split` plans, `grid = [1, gm, gn, gk]`).
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

use ipu_device::kernels::describe::GEMM_MAX_WEIGHT_ELEMENTS;
use ipu_device::{cost, KernelSpec, MemoryClass, Precision, Target};

use super::program::{Arg, BufferId, HostPiece, Move, Place, Run, TileProgram, TileStep};
use crate::planner::{Graph, OpKind, Origin};

/// The widest column chunk of one GEMM call.
const MAX_CALL_COLUMNS: u32 = 256;

/// The `(M, K, N)` of matmul `index` of `graph` when the split lowering implements it: no
/// transposes; the right operand a host tensor (function argument or constant), a single
/// `[K, N]` matrix (leading axes of 1); the left one a host tensor or a [`Ranged`] value
/// ([`ranged_value`]: a split GEMM's result through bias adds and GeLUs), both in the AMP
/// `input` precision; K and N sizes that fit; and a result whose every use keeps it ranged
/// ([`ranged_uses`]: returned, bias adds, GeLUs, the left operand of a split GEMM). The
/// planner and the lowering ask the same question here.
pub fn split_dims(graph: &Graph, index: usize, input: Precision) -> Option<(u32, u32, u32)> {
    let dims = split_local(graph, index, input)?;
    let (a, c) = (graph.ops[index].operands[0], graph.ops[index].results[0]);
    (is_host(graph, a) || ranged_value(graph, a, input)).then_some(())?;
    ranged_uses(graph, c, input).then_some(dims)
}

fn is_host(graph: &Graph, v: usize) -> bool {
    matches!(graph.values[v].origin, Origin::Argument | Origin::Constant)
}

/// The conditions of [`split_dims`] on the op itself (not on where A comes from or where C
/// goes).
fn split_local(graph: &Graph, index: usize, input: Precision) -> Option<(u32, u32, u32)> {
    let op = graph.ops.get(index)?;
    let (a, b) = (*op.operands.first()?, *op.operands.get(1)?);
    op.results.first()?;
    let plain = matches!(
        op.kind,
        OpKind::Matmul {
            transpose_lhs: false,
            transpose_rhs: false
        }
    );
    // Under the FP8 policy the host encodes a host operand in FP8 at the operand's scale as
    // it streams it, and the device casts a ranged left operand range by range; otherwise
    // the operands must be in the input precision already.
    let (va, vb) = (&graph.values[a], &graph.values[b]);
    let streams = |v: usize| graph.values[v].element == input || input.is_fp8();
    if !plain || a == b || !is_host(graph, b) || !streams(a) || !streams(b) {
        return None;
    }
    let rank = vb.shape.len();
    if rank < 2 || vb.shape[..rank - 2].iter().any(|&d| d != 1) {
        return None;
    }
    let (k, n) = (vb.shape[rank - 2], vb.shape[rank - 1]);
    // Whole 16-element groups of K and N (`SplitGrid::new`).
    if va.shape.last() != Some(&k) || k % 16 != 0 || n % 16 != 0 {
        return None;
    }
    let m: u64 = va.shape[..va.shape.len() - 1].iter().product();
    Some((
        u32::try_from(m).ok()?,
        u32::try_from(k).ok()?,
        u32::try_from(n).ok()?,
    ))
}

/// The host bias of `add` op `index` applied to ranged value `x`: the other operand, a host
/// vector of `x`'s last dimension (leading axes of 1) in `x`'s element type, with a result
/// of `x`'s shape.
pub fn bias_operand(graph: &Graph, index: usize, x: usize) -> Option<usize> {
    let op = &graph.ops[index];
    if !matches!(op.kind, OpKind::Add) || op.operands.len() != 2 || op.operands[0] == op.operands[1]
    {
        return None;
    }
    let bias = if op.operands[0] == x {
        op.operands[1]
    } else {
        op.operands[0]
    };
    let (vx, vb) = (&graph.values[x], &graph.values[bias]);
    let vector =
        vb.shape.iter().rev().skip(1).all(|&d| d == 1) && vb.shape.last() == vx.shape.last();
    (is_host(graph, bias)
        && vector
        && vb.element == vx.element
        && graph.values[*op.results.first()?].shape == vx.shape)
        .then_some(bias)
}

/// Whether value `v` is held ranged when the split lowering runs: the result of a split GEMM
/// ([`split_dims`]), or of a bias add or GeLU of a ranged value.
pub fn ranged_value(graph: &Graph, v: usize, input: Precision) -> bool {
    let Origin::Op(producer) = graph.values[v].origin else {
        return false;
    };
    let op = &graph.ops[producer];
    match op.kind {
        OpKind::Matmul { .. } => split_dims(graph, producer, input).is_some(),
        OpKind::Gelu { .. } => ranged_value(graph, op.operands[0], input),
        OpKind::Add => op
            .operands
            .iter()
            .any(|&x| bias_operand(graph, producer, x).is_some() && ranged_value(graph, x, input)),
        _ => false,
    }
}

/// Whether every use of ranged value `v` keeps it ranged: returned (read back from the
/// ranges), a bias add or a GeLU whose results are used so too, or the left operand of a
/// matmul that is split (`split_local`) with such uses.
pub fn ranged_uses(graph: &Graph, v: usize, input: Precision) -> bool {
    graph.ops.iter().enumerate().all(|(index, op)| {
        if !op.operands.contains(&v) {
            return true;
        }
        let Some(&out) = op.results.first() else {
            return false;
        };
        let follows = match op.kind {
            OpKind::Gelu { .. } => true,
            OpKind::Add => bias_operand(graph, index, v).is_some(),
            OpKind::Matmul { .. } => {
                op.operands[0] == v
                    && op.operands[1] != v
                    && split_local(graph, index, input).is_some()
            }
            _ => false,
        };
        follows && ranged_uses(graph, out, input)
    })
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

/// How a split GEMM is laid out (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitGrid {
    pub m: u32,
    pub k: u32,
    pub n: u32,
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
            let mut used = [0u32; 2];
            for i in 0..7 {
                if phase[i] {
                    used[usize::from(classes[i] == I)] += bytes[i];
                }
            }
            used[0] <= room[0] && used[1] <= room[1]
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

    /// [`SplitGrid::new`] in surroundings `env`.
    pub fn within(
        (m, k, n): (u32, u32, u32),
        (gm, gn, gk): (u32, u32, u32),
        precision: Precision,
        env: &SplitEnv,
        target: &Target,
    ) -> Result<SplitGrid, GridError> {
        if !k.is_multiple_of(16) || !n.is_multiple_of(16) {
            return Err(format!("K = {k} and N = {n} must be multiples of 16"));
        }
        let rows = Split::new(m, gm, 1).ok_or_else(|| format!("{gm} row blocks of M = {m}"))?;
        let cols = Split::new(n, gn, 16)
            .ok_or_else(|| format!("{gn} column blocks of 16-groups of N = {n}"))?;
        let ks = Split::new(k, gk, 16).ok_or_else(|| format!("{gk} K slices of K = {k}"))?;
        let (r, c, kt) = (rows.largest(), cols.largest(), ks.largest());
        let call_columns = c
            .div_ceil(c.div_ceil(MAX_CALL_COLUMNS))
            .next_multiple_of(16);
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
            if let Some(classes) = assign_classes(bytes, gk > 1, env, target) {
                return Ok(SplitGrid {
                    m,
                    k,
                    n,
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
        let usable = u64::from(m) * u64::from(n / 16) * u64::from(k / 16);
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

    /// The transfers of each exchange phase, `(source, destinations, bytes)`: one phase per
    /// K panel, then the reduction's (with a K split).
    pub fn exchange_phases(&self, precision: Precision) -> Vec<Vec<(u32, Vec<u32>, u64)>> {
        let eb = u64::from(precision.bytes());
        let pb = u64::from(ipu_device::kernels::describe::default_partials(precision).bytes());
        let mut phases = Vec::new();
        for p in 0..self.panels {
            let mut transfers = Vec::new();
            self.panel_ranges(p, |mut range| {
                if range.operand == Operand::A && self.env.a_device {
                    // Gathered from a device value's owners, which the grid does not know:
                    // modelled as sent by a tile outside the group to all of it.
                    if let Some(outside) = self.outside(range.home) {
                        range.destinations.push(range.home);
                        range.home = outside;
                    }
                }
                if !range.destinations.is_empty() {
                    transfers.push((range.home, range.destinations, u64::from(range.len) * eb));
                }
            });
            phases.push(transfers);
        }
        let mut reduce = Vec::new();
        self.reduce_ranges(|range| {
            for source in range.sources {
                reduce.push((source, vec![range.owner], u64::from(range.len) * pb));
            }
        });
        if !reduce.is_empty() {
            phases.push(reduce);
        }
        phases.retain(|phase| !phase.is_empty());
        phases
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
        let (first, len) = self.ks.blocks[l as usize];
        let groups = len / 16;
        let step = groups.div_ceil(self.panels).max(1);
        (0..self.panels)
            .map(|p| {
                let g0 = (p * step).min(groups);
                let g1 = ((p + 1) * step).min(groups);
                (first + g0 * 16, (g1 - g0) * 16)
            })
            .collect()
    }

    /// Visits every non-empty home range of panel `p` (see the module docs).
    pub fn panel_ranges(&self, p: u32, mut visit: impl FnMut(PanelRange)) {
        for l in 0..self.gk {
            let (k0, kp) = self.panels_of(l)[p as usize];
            if kp == 0 {
                continue;
            }
            for (i, &(row0, rows)) in self.rows.blocks.iter().enumerate() {
                let i = i as u32;
                for (j, (first, len)) in ranges(rows * kp, self.gn).into_iter().enumerate() {
                    if len > 0 {
                        visit(PanelRange {
                            operand: Operand::A,
                            home: self.tile(i, j as u32, l),
                            destinations: (0..self.gn)
                                .filter(|&jj| jj != j as u32)
                                .map(|jj| self.tile(i, jj, l))
                                .collect(),
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
                let j = j as u32;
                // B's panel in AMP-right order: column group g, K row kk at
                // `(g * kp + kk) * 16`; as a panel order its "rows" are the K rows.
                for (i, (first, len)) in ranges(kp * cols, self.gm).into_iter().enumerate() {
                    if len > 0 {
                        visit(PanelRange {
                            operand: Operand::B,
                            home: self.tile(i as u32, j, l),
                            destinations: (0..self.gm)
                                .filter(|&ii| ii != i as u32)
                                .map(|ii| self.tile(ii, j, l))
                                .collect(),
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

    /// The modelled cycles of the lowering of this grid on the busiest tile, by part: the
    /// same kernel cost functions the simulator charges, and each exchange phase by the
    /// endpoint rule (`cost::exchange_phase_cycles`: the busiest receiver or pair send bus;
    /// the physical schedule adds conflicts on top).
    pub fn estimate(&self, precision: Precision, target: &Target) -> SplitEstimate {
        let eb = u64::from(precision.bytes());
        let partials = ipu_device::kernels::describe::default_partials(precision);
        let pb = u64::from(partials.bytes());
        let (r, c) = (self.rows.largest(), self.cols.largest());
        let pair = if self.tiles() > 1 { 2 } else { 1 };
        let mut gemm = 0u64;
        let mut exchange = 0u64;
        let mut copies = 0u64;
        let panels = self.panels_of(0);
        for &(_, kp) in panels.iter().filter(|p| p.1 > 0) {
            for &(_, cc) in &self.chunks(0) {
                gemm +=
                    cost::gemm_call_cycles(precision, MemoryClass::Interleaved, kp, cc, r, target);
            }
            let a = u64::from(r * kp) * eb;
            let b = u64::from(kp * c) * eb;
            // A gathered from a device value arrives whole (its owners are other tiles).
            let a_own = if self.env.a_device {
                0
            } else {
                u64::from(ranges_max(r * kp, self.gn)) * eb
            };
            let b_own = u64::from(ranges_max(kp * c, self.gm)) * eb;
            let a_moves = self.gn > 1 || self.env.a_device;
            // Resident weights are neither sent nor copied.
            let b_moves = self.gm > 1 && !self.env.b_resident;
            let b_own = if self.env.b_resident { 0 } else { b_own };
            let received =
                (a - a_own.min(a)) * u64::from(a_moves) + (b - b_own.min(b)) * u64::from(b_moves);
            // A tile sends one A range (its home's, or, gathered, about one range's worth
            // of the device value) and its B home range; the two tiles of a physical pair
            // share one send bus.
            let a_range = u64::from(ranges_max(r * kp, self.gn)) * eb;
            let sent = a_range * u64::from(a_moves) + b_own * u64::from(b_moves);
            if received > 0 {
                exchange += cost::exchange_phase_cycles(pair * sent, received, target);
            }
            copies += cost::copy_cycles(a_own, target) + cost::copy_cycles(b_own, target);
        }
        let mut reduce = 0u64;
        if self.gk > 1 {
            // Every tile sends its other gk - 1 ranges and receives as many.
            let slice = ranges_max(r * c, self.gk);
            let bytes = u64::from(slice) * pb * u64::from(self.gk - 1);
            exchange += cost::exchange_phase_cycles(pair * bytes, bytes, target);
            reduce += cost::reduce_add_cycles(partials, partials, slice, self.gk - 1, target);
            reduce += cost::add_cycles(partials, 1, slice, target);
        }
        SplitEstimate {
            gemm,
            copies,
            reduce,
            exchange,
        }
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
    pub origin: (u32, u32),
}

/// The modelled cycles of a split GEMM on its busiest tile ([`SplitGrid::estimate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SplitEstimate {
    pub gemm: u64,
    pub copies: u64,
    pub reduce: u64,
    pub exchange: u64,
}

impl SplitEstimate {
    pub fn total(&self) -> u64 {
        self.gemm + self.copies + self.reduce + self.exchange
    }
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
    let eb = precision.bytes();
    let pb = ipu_device::kernels::describe::default_partials(precision).bytes();
    let slice = ranges_max(r * c, gk);
    let reduce = gk > 1;
    [
        if env.a_device {
            0
        } else {
            (panels * ranges_max(r * kp, gn) * eb).max(eb)
        },
        if env.b_resident {
            panels * kp * c * eb
        } else {
            (panels * ranges_max(kp * c, gm) * eb).max(eb)
        },
        r * kp * eb,
        if env.b_resident { 0 } else { kp * c * eb },
        r * c * pb,
        if reduce { slice * (gk - 1) * pb } else { 0 },
        if reduce { slice * pb } else { 0 },
    ]
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
/// `(row0 + r) * row_stride + col0 + g * 16 + x`) into `place` on `tile`: one piece per
/// 16-column group touched, one run per row.
#[allow(clippy::too_many_arguments)]
pub(crate) fn panel_pieces(
    tile: u32,
    place: Place,
    (first, len): (u32, u32),
    panel_rows: u32,
    (row0, col0): (u32, u32),
    row_stride: u32,
    eb: u32,
    out: &mut Vec<HostPiece>,
) {
    let mut e = first;
    let end = first + len;
    while e < end {
        let g = e / (16 * panel_rows);
        let r = (e / 16) % panel_rows;
        let rows = (panel_rows - r).min((end - e) / 16);
        out.push(HostPiece {
            tile,
            place: Place::at(place.buffer, place.offset + (e - first) * eb),
            tensor_offset: (u64::from(row0 + r) * u64::from(row_stride) + u64::from(col0 + g * 16))
                * u64::from(eb),
            bytes: rows * 16 * eb,
            runs: rows,
            // A single run is contiguous and records no stride.
            stride: if rows > 1 {
                u64::from(row_stride) * u64::from(eb)
            } else {
                0
            },
        });
        e += rows * 16;
    }
}

/// The buffers and host pieces of one split GEMM's operands, made before the host writes.
pub struct SplitInputs {
    /// None when A is gathered from a device value ([`SplitEnv::a_device`]).
    pub a_home: Option<BufferId>,
    pub b_home: BufferId,
    pub a_pieces: Vec<HostPiece>,
    pub b_pieces: Vec<HostPiece>,
}

/// Allocates the homes of A and B and their host pieces (see the module docs).
pub fn inputs(
    program: &mut TileProgram,
    grid: &SplitGrid,
    precision: Precision,
    provenance: &str,
) -> SplitInputs {
    let eb = precision.bytes();
    let all = grid.all_tiles();
    let r = grid.rows.largest();
    let a_slot = ranges_max(r * grid.kp, grid.gn) * eb;
    let b_slot = grid.b_slot(eb);
    let a_home = (!grid.env.a_device).then(|| {
        program.buffer(
            format!("{provenance}.a.home"),
            grid.classes.a_home,
            (a_slot * grid.panels).max(eb),
            all.clone(),
        )
    });
    let b_home = program.buffer(
        format!("{provenance}.b.home"),
        grid.classes.b_home,
        (b_slot * grid.panels).max(eb),
        all,
    );
    let mut a_pieces = Vec::new();
    let mut b_pieces = Vec::new();
    if grid.env.b_resident {
        // Every tile's whole B block, panel by panel (module docs, "Resident weights").
        for l in 0..grid.gk {
            for (p, &(k0, kp)) in grid.panels_of(l).iter().enumerate() {
                if kp == 0 {
                    continue;
                }
                for (j, &(col0, cols)) in grid.cols.blocks.iter().enumerate() {
                    for i in 0..grid.gm {
                        panel_pieces(
                            grid.tile(i, j as u32, l),
                            Place::at(b_home, p as u32 * b_slot),
                            (0, kp * cols),
                            kp,
                            (k0, col0),
                            grid.n,
                            eb,
                            &mut b_pieces,
                        );
                    }
                }
            }
        }
    }
    for p in 0..grid.panels {
        grid.panel_ranges(p, |range| {
            let (home, slot, row_stride, pieces) = match (range.operand, a_home) {
                (Operand::A, Some(a_home)) => (a_home, a_slot, grid.k, &mut a_pieces),
                (Operand::A, None) => return,
                (Operand::B, _) => (b_home, b_slot, grid.n, &mut b_pieces),
            };
            panel_pieces(
                range.home,
                Place::at(home, p * slot),
                (range.first, range.len),
                range.panel_rows,
                range.origin,
                row_stride,
                eb,
                pieces,
            );
        });
    }
    SplitInputs {
        a_home,
        b_home,
        a_pieces,
        b_pieces,
    }
}

/// Emits the panels and the reduction of one split GEMM (see the module docs); A comes from
/// its homes, or gathered from `a_value` with [`SplitEnv::a_device`]. Returns C, held as
/// ranges on their owners (in the partials' precision).
pub fn lower(
    program: &mut TileProgram,
    grid: &SplitGrid,
    (precision, scales): (Precision, [i32; 2]),
    homes: &SplitInputs,
    a_value: Option<&Ranged>,
    provenance: &str,
) -> Ranged {
    let eb = precision.bytes();
    let partials = ipu_device::kernels::describe::default_partials(precision);
    let pb = partials.bytes();
    let all = grid.all_tiles();
    let (r, c) = (grid.rows.largest(), grid.cols.largest());
    let a_slot = ranges_max(r * grid.kp, grid.gn) * eb;
    let b_slot = grid.b_slot(eb);
    let a_panel = program.buffer(
        format!("{provenance}.a.amp_left"),
        grid.classes.a_panel,
        r * grid.kp * eb,
        all.clone(),
    );
    // Resident weights: the GEMM calls read each panel in the B home itself.
    let (b_panel, b_class) = if grid.env.b_resident {
        (homes.b_home, grid.classes.b_home)
    } else {
        let buffer = program.buffer(
            format!("{provenance}.b.amp_right"),
            grid.classes.b_panel,
            grid.kp * c * eb,
            all.clone(),
        );
        (buffer, grid.classes.b_panel)
    };
    let b_panel_at = |p: u32| if grid.env.b_resident { p * b_slot } else { 0 };
    let c_amp = program.buffer(
        format!("{provenance}.c.amp_output"),
        grid.classes.partials,
        r * c * pb,
        all.clone(),
    );
    // Row entries of the GEMM kernels: the distinct row-block sizes.
    let mut row_entries: Vec<u32> = grid.rows.blocks.iter().map(|b| b.1).collect();
    row_entries.sort_unstable();
    row_entries.dedup();
    let entry = |rows: u32| row_entries.binary_search(&rows).unwrap_or(0) as u32;
    let address = |buffer, offset| Arg::Address(Place::at(buffer, offset));

    let a_segments = a_value.map(Ranged::segments_by_group);
    let mut started = vec![false; grid.tiles() as usize];
    for p in 0..grid.panels {
        let mut moves = Vec::new();
        let mut runs = Vec::new();
        if let (Some(value), Some(segments)) = (a_value, &a_segments) {
            gather_a_panel(
                program, grid, p, value, segments, a_panel, &mut moves, &mut runs,
            );
        }
        grid.panel_ranges(p, |range| {
            let (home_buffer, slot, panel) = match (range.operand, homes.a_home) {
                (Operand::A, Some(a_home)) => (a_home, a_slot, a_panel),
                (Operand::A, None) => return,
                (Operand::B, _) => (homes.b_home, b_slot, b_panel),
            };
            let source = Place::at(home_buffer, p * slot);
            let destination = Place::at(panel, range.first * eb);
            let bytes = range.len * eb;
            runs.push(Run {
                tile: range.home,
                kernel: program.kernel(KernelSpec::Copy { bytes }),
                args: vec![Arg::Address(source), Arg::Address(destination)],
            });
            if !range.destinations.is_empty() {
                moves.push(Move {
                    source_tile: range.home,
                    source,
                    destinations: range.destinations,
                    destination,
                    bytes,
                });
            }
        });
        if !moves.is_empty() {
            let phase = program.exchange_phases() as u32;
            program.run.push(TileStep::Exchange { phase, moves });
        }
        // The homes' own ranges, then the GEMM calls, per tile.
        for l in 0..grid.gk {
            let (_, kp) = grid.panels_of(l)[p as usize];
            if kp == 0 {
                continue;
            }
            for (i, &(_, rows)) in grid.rows.blocks.iter().enumerate() {
                for j in 0..grid.gn {
                    let tile = grid.tile(i as u32, j, l);
                    let accumulate = started[tile as usize];
                    started[tile as usize] = true;
                    for (first, cc) in grid.chunks(j) {
                        let kernel = program.kernel(KernelSpec::Gemm {
                            input: precision,
                            partials,
                            weights: b_class,
                            k: kp,
                            c: cc,
                            rows: row_entries.clone(),
                            accumulate,
                        });
                        runs.push(Run {
                            tile,
                            kernel,
                            args: vec![
                                address(a_panel, 0),
                                address(b_panel, b_panel_at(p) + first * kp * eb),
                                address(c_amp, first * rows * pb),
                                Arg::Value(entry(rows)),
                                Arg::Value(scales[0] as u32),
                                Arg::Value(scales[1] as u32),
                            ],
                        });
                    }
                }
            }
        }
        // Stable: each tile's copies stay before its GEMM calls.
        runs.sort_by_key(|run| run.tile);
        program.run.push(TileStep::Compute {
            provenance: provenance.to_string(),
            runs,
        });
    }

    let mut value = Ranged {
        m: grid.m,
        n: grid.n,
        precision: partials,
        buffer: c_amp,
        class: grid.classes.partials,
        ranges: Vec::new(),
    };
    if grid.gk == 1 {
        for (i, &(row0, rows)) in grid.rows.blocks.iter().enumerate() {
            for (j, &(col0, cols)) in grid.cols.blocks.iter().enumerate() {
                value.ranges.push(OwnedRange {
                    tile: grid.tile(i as u32, j as u32, 0),
                    first: 0,
                    len: rows * cols,
                    rows,
                    origin: (row0, col0),
                });
            }
        }
        return value;
    }

    // Reduce-scatter: range l of every partial block onto tile (i, j, l).
    let slice = ranges_max(r * c, grid.gk);
    let stack = program.buffer(
        format!("{provenance}.c.partials"),
        grid.classes.stack,
        slice * (grid.gk - 1) * pb,
        all.clone(),
    );
    let reduced = program.buffer(
        format!("{provenance}.c"),
        grid.classes.reduced,
        slice * pb,
        all,
    );
    let mut moves = Vec::new();
    let mut runs = Vec::new();
    grid.reduce_ranges(|range| {
        let bytes = range.len * pb;
        // Slot s of the stack comes from the s-th other tile of the group; the owner adds
        // its own range to their sum.
        for (s, &source_tile) in range.sources.iter().enumerate() {
            moves.push(Move {
                source_tile,
                source: Place::at(c_amp, range.first * pb),
                destinations: vec![range.owner],
                destination: Place::at(stack, s as u32 * bytes),
                bytes,
            });
        }
        runs.push(Run {
            tile: range.owner,
            kernel: program.kernel(KernelSpec::ReduceAdd {
                partials_precision: partials,
                output: partials,
                elements: range.len,
                partials: grid.gk - 1,
            }),
            args: vec![address(stack, 0), address(reduced, 0)],
        });
        runs.push(Run {
            tile: range.owner,
            kernel: program.kernel(KernelSpec::Add {
                precision: partials,
                rows: 1,
                cols: range.len,
                b_rows: 1,
            }),
            args: vec![
                address(reduced, 0),
                address(c_amp, range.first * pb),
                address(reduced, 0),
            ],
        });
        value.ranges.push(OwnedRange {
            tile: range.owner,
            first: range.first,
            len: range.len,
            rows: range.rows,
            origin: range.origin,
        });
    });
    let phase = program.exchange_phases() as u32;
    program.run.push(TileStep::Exchange { phase, moves });
    runs.sort_by_key(|run| run.tile);
    program.run.push(TileStep::Compute {
        provenance: format!("{provenance}.reduce"),
        runs,
    });
    value.buffer = reduced;
    value.class = grid.classes.reduced;
    value
}

/// The moves (and the owners' local copies) that gather the A panel `p` of every tile of
/// `grid` from the device value `value` (module docs of [`Ranged`]): for every A group
/// `(i, *, l)` and 16-column group of its panel, the runs of the value's segments inside the
/// group's rows, each sent by its owner to the group's tiles at its place in the AMP-left
/// panel. Runs contiguous on both sides are merged into one move.
#[allow(clippy::too_many_arguments)]
fn gather_a_panel(
    program: &mut TileProgram,
    grid: &SplitGrid,
    p: u32,
    value: &Ranged,
    segments: &[Vec<Segment>],
    a_panel: BufferId,
    moves: &mut Vec<Move>,
    runs: &mut Vec<Run>,
) {
    let eb = value.precision.bytes();
    for l in 0..grid.gk {
        let (k0, kp) = grid.panels_of(l)[p as usize];
        if kp == 0 {
            continue;
        }
        for (i, &(row0, rows)) in grid.rows.blocks.iter().enumerate() {
            let group: Vec<u32> = (0..grid.gn).map(|j| grid.tile(i as u32, j, l)).collect();
            // (owner, source element, panel element, elements), merged while contiguous.
            let mut pending: Option<(u32, u32, u32, u32)> = None;
            let mut flush = |piece: (u32, u32, u32, u32)| {
                let (owner, src, dst, len) = piece;
                let source = Place::at(value.buffer, src * eb);
                let destination = Place::at(a_panel, dst * eb);
                let destinations: Vec<u32> =
                    group.iter().copied().filter(|&t| t != owner).collect();
                if destinations.len() < group.len() {
                    local_copy(program, owner, source, destination, len * eb, runs);
                }
                if !destinations.is_empty() {
                    moves.push(Move {
                        source_tile: owner,
                        source,
                        destinations,
                        destination,
                        bytes: len * eb,
                    });
                }
            };
            for g in k0 / 16..(k0 + kp) / 16 {
                let column = g - k0 / 16;
                for seg in &segments[g as usize] {
                    let lo = seg.row.max(row0);
                    let hi = (seg.row + seg.rows).min(row0 + rows);
                    if lo >= hi {
                        continue;
                    }
                    let src = seg.offset + (lo - seg.row) * 16;
                    let dst = (column * rows + (lo - row0)) * 16;
                    let len = (hi - lo) * 16;
                    pending = match pending {
                        Some((owner, s0, d0, n))
                            if owner == seg.tile && s0 + n == src && d0 + n == dst =>
                        {
                            Some((owner, s0, d0, n + len))
                        }
                        Some(done) => {
                            flush(done);
                            Some((seg.tile, src, dst, len))
                        }
                        None => Some((seg.tile, src, dst, len)),
                    };
                }
            }
            if let Some(done) = pending {
                flush(done);
            }
        }
    }
}

/// A local copy of `bytes` (a multiple of 32) on `tile`, as copies of power-of-two multiples
/// of 32 bytes, so that a program's copies of many sizes share a few kernel specializations.
fn local_copy(
    program: &mut TileProgram,
    tile: u32,
    source: Place,
    destination: Place,
    bytes: u32,
    runs: &mut Vec<Run>,
) {
    let mut done = 0;
    while done < bytes {
        let left = bytes - done;
        let chunk = if left < 32 {
            left
        } else {
            1 << (31 - (left / 32).leading_zeros()) << 5
        };
        runs.push(Run {
            tile,
            kernel: program.kernel(KernelSpec::Copy { bytes: chunk }),
            args: vec![
                Arg::Address(Place::at(source.buffer, source.offset + done)),
                Arg::Address(Place::at(destination.buffer, destination.offset + done)),
            ],
        });
        done += chunk;
    }
}

/// One range of a [`Ranged`] value on its owner: elements `[first, first + len)` of the
/// AMP-output order of the block with `rows` rows whose first element is tensor element
/// `origin` (row, column), stored from byte 0 of the value's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnedRange {
    pub tile: u32,
    pub first: u32,
    pub len: u32,
    pub rows: u32,
    pub origin: (u32, u32),
}

/// A device value `[m x n]` held as a split GEMM's result: ranges of its blocks'
/// AMP-output order on their owner tiles ([`OwnedRange`], at most one per tile), all in
/// `buffer`. Pointwise ops work on the ranges in place; a later split GEMM gathers its A
/// panels from them: the AMP-output and AMP-left orders are the same 16-column panel order,
/// so a run of a group's rows is contiguous on both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ranged {
    pub m: u32,
    pub n: u32,
    pub precision: Precision,
    pub buffer: BufferId,
    pub class: MemoryClass,
    pub ranges: Vec<OwnedRange>,
}

/// A run of rows of one 16-column group of a [`Ranged`] value on its owner: tensor rows
/// `[row, row + rows)` of column group `group`, at element `offset` of the owner's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub tile: u32,
    pub offset: u32,
    pub row: u32,
    pub rows: u32,
    pub group: u32,
}

impl Ranged {
    /// Every segment, range by range.
    pub fn segments(&self, mut visit: impl FnMut(Segment)) {
        for range in &self.ranges {
            let end = range.first + range.len;
            let mut e = range.first;
            while e < end {
                let g = e / (16 * range.rows);
                let r = (e / 16) % range.rows;
                let rows = (range.rows - r).min((end - e) / 16);
                visit(Segment {
                    tile: range.tile,
                    offset: e - range.first,
                    row: range.origin.0 + r,
                    rows,
                    group: range.origin.1 / 16 + g,
                });
                e += rows * 16;
            }
        }
    }

    /// The segments of each 16-column group, by first row.
    pub fn segments_by_group(&self) -> Vec<Vec<Segment>> {
        let mut by_group = vec![Vec::new(); (self.n / 16) as usize];
        self.segments(|seg| by_group[seg.group as usize].push(seg));
        for segments in &mut by_group {
            segments.sort_by_key(|seg| seg.row);
        }
        by_group
    }

    /// Bytes of the buffer on every tile (the longest range).
    pub fn bytes(&self) -> u32 {
        self.ranges.iter().map(|r| r.len).max().unwrap_or(0) * self.precision.bytes()
    }

    /// The host pieces that read the value back (strided: one run per row of a group).
    pub fn read_pieces(&self) -> Vec<HostPiece> {
        let mut pieces = Vec::new();
        for range in &self.ranges {
            panel_pieces(
                range.tile,
                Place::at(self.buffer, 0),
                (range.first, range.len),
                range.rows,
                range.origin,
                self.n,
                self.precision.bytes(),
                &mut pieces,
            );
        }
        pieces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_cover_their_axis_once() {
        // 4096 = 23 * 178 + 2: two blocks of 179, then 178s.
        let split = Split::new(4096, 23, 1).unwrap();
        assert_eq!(split.blocks.len(), 23);
        assert_eq!(split.blocks[0], (0, 179));
        assert_eq!(split.blocks[2], (358, 178));
        assert_eq!(split.blocks[22], (4096 - 178, 178));
        let mut next = 0;
        for &(first, len) in &split.blocks {
            assert_eq!(first, next);
            assert!(len > 0);
            next += len;
        }
        assert_eq!(next, 4096);
        // 16-column groups: 256 groups over 9 parts: four of 29, five of 28.
        let split = Split::new(4096, 9, 16).unwrap();
        assert_eq!(split.blocks[3], (3 * 29 * 16, 29 * 16));
        assert_eq!(split.blocks[4], (4 * 29 * 16, 28 * 16));
        assert_eq!(split.largest(), 29 * 16);
        assert!(Split::new(32, 3, 16).is_none());
    }

    #[test]
    fn panel_pieces_map_amp_order_to_tensor_elements() {
        // A 5-row panel with 2 groups (32 columns) of a tensor with 100 columns, from row 7
        // and column 48; elements [48, 112) are rows 3..5 of group 0 and 0..2 of group 1.
        let mut out = Vec::new();
        panel_pieces(3, Place::at(0, 64), (48, 64), 5, (7, 48), 100, 2, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].runs, 2);
        assert_eq!(out[0].tensor_offset, ((7 + 3) * 100 + 48) * 2);
        assert_eq!(out[0].place.offset, 64);
        assert_eq!(out[1].runs, 2);
        assert_eq!(out[1].tensor_offset, (7 * 100 + 48 + 16) * 2);
        assert_eq!(out[1].place.offset, 64 + 32 * 2);
        assert!(out
            .iter()
            .all(|p| p.stride == 200 && p.bytes == p.runs * 32));
    }
}

#[cfg(test)]
mod model_tests {
    use super::*;

    /// The split model of the F16 4096^3 GEMM on the C600's 1472 tiles: the cheapest grid
    /// uses at least 90 % of the tiles, K is split, and its modelled cycles (receive-bound
    /// exchange) are within 1.6x of the ideal AMP cycles; one exchange phase per K panel plus
    /// the reduction, each phase's transfers covering every receive once.
    #[test]
    fn gemm_4096_on_1472_tiles() {
        let target = Target::c600();
        let dims = (4096, 4096, 4096);
        let grid = SplitGrid::best(dims, 1472, Precision::F16, &target).expect("a grid fits");
        assert!(grid.tiles() * 10 >= 1472 * 9 && grid.tiles() <= 1472);
        assert!(grid.gk > 1, "{grid:?}");
        let ideal = cost::ideal_gemm_cycles(4096, 4096, 4096, Precision::F16, 1472, &target);
        let modelled = grid.estimate(Precision::F16, &target).total();
        assert!(
            modelled >= ideal && modelled * 5 <= ideal * 8,
            "{modelled} vs {ideal}"
        );
        let phases = grid.exchange_phases(Precision::F16);
        assert_eq!(phases.len() as u32, grid.panels + 1);
        // Every tile receives its whole A and B panel minus its own ranges, once.
        let (r, c) = (grid.rows.largest(), grid.cols.largest());
        let mut received = vec![0u64; grid.tiles() as usize];
        for (_, destinations, bytes) in &phases[0] {
            for &d in destinations {
                received[d as usize] += bytes;
            }
        }
        let (_, kp) = grid.panels_of(0)[0];
        let whole = u64::from((r * kp + kp * c) * 2);
        assert!(
            received[0] < whole && received[0] * 10 > whole * 8,
            "{} of {whole} ({grid:?})",
            received[0]
        );
    }

    /// Resident weights: the host writes every tile's whole B block (its K slice by its
    /// column block, in AMP-right order panel by panel) exactly once per tile, the panel
    /// phases move only A, and the model drops B's exchange and copies.
    #[test]
    fn resident_weights_are_written_where_read_and_never_exchanged() {
        let target = Target::c600();
        let (m, k, n) = (40, 256, 48);
        let resident = SplitEnv {
            b_resident: true,
            ..SplitEnv::host(MemoryClass::Interleaved)
        };
        for shape in [(2, 1, 2), (2, 3, 1), (3, 1, 4), (1, 3, 2)] {
            let grid = SplitGrid::within((m, k, n), shape, Precision::F16, &resident, &target)
                .expect("fits");
            let streamed = SplitGrid::new(
                (m, k, n),
                shape,
                Precision::F16,
                MemoryClass::Interleaved,
                &target,
            )
            .expect("fits");
            assert_eq!(grid.classes.b_home, MemoryClass::Interleaved);
            let mut program = TileProgram::default();
            let inputs = inputs(&mut program, &grid, Precision::F16, "op0");
            // (tile, K row, column) of every B element written.
            let mut written = std::collections::BTreeMap::new();
            for piece in &inputs.b_pieces {
                for range in piece.tensor_ranges() {
                    for byte in range.step_by(2) {
                        let e = (byte / 2) as u32;
                        *written.entry((piece.tile, e / n, e % n)).or_insert(0) += 1;
                    }
                }
            }
            for l in 0..grid.gk {
                for (j, &(col0, cols)) in grid.cols.blocks.iter().enumerate() {
                    let (k0, kt) = grid.ks.blocks[l as usize];
                    for i in 0..grid.gm {
                        let tile = grid.tile(i, j as u32, l);
                        for kk in k0..k0 + kt {
                            for col in col0..col0 + cols {
                                assert_eq!(
                                    written.remove(&(tile, kk, col)),
                                    Some(1),
                                    "{shape:?}: tile {tile} B[{kk}][{col}]"
                                );
                            }
                        }
                    }
                }
            }
            assert!(written.is_empty(), "{shape:?}: stray writes {written:?}");
            // Only A moves in the panel phases (there are none with one column block), then
            // the reduction with a K split.
            let phases = grid.exchange_phases(Precision::F16);
            let panel_phases = if grid.gn > 1 { grid.panels } else { 0 };
            assert_eq!(
                phases.len() as u32,
                panel_phases + u32::from(grid.gk > 1),
                "{shape:?}"
            );
            for phase in phases.iter().take(panel_phases as usize) {
                for (source, destinations, _) in phase {
                    let (l, ij) = (source % grid.gk, source / grid.gk);
                    assert!(destinations
                        .iter()
                        .all(|&d| d % grid.gk == l && d / grid.gk / grid.gn == ij / grid.gn));
                }
            }
            let (a, b) = (
                grid.estimate(Precision::F16, &target),
                streamed.estimate(Precision::F16, &target),
            );
            assert!(
                a.exchange <= b.exchange && a.copies <= b.copies,
                "{shape:?}"
            );
            if grid.gm > 1 {
                assert!(a.exchange < b.exchange, "{shape:?}");
            }
        }
    }

    #[test]
    fn grids_that_do_not_fit_say_why() {
        let target = Target::c600();
        let error = SplitGrid::new(
            (4096, 4096, 4096),
            (2, 2, 2),
            Precision::F16,
            MemoryClass::Interleaved,
            &target,
        )
        .unwrap_err();
        assert!(error.contains("does not fit"), "{error}");
        let error = SplitGrid::new(
            (64, 40, 64),
            (1, 1, 1),
            Precision::F16,
            MemoryClass::Interleaved,
            &target,
        )
        .unwrap_err();
        assert!(error.contains("multiples of 16"), "{error}");
    }
}

#[cfg(test)]
mod chain_tests {
    use super::*;
    use crate::planner::{Graph, OpKind, Origin};
    use std::collections::BTreeMap;

    /// A small xorshift for seeded shapes.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, below: u32) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % u64::from(below)) as u32
        }
    }

    fn chained_env(a_device: bool, result: bool) -> SplitEnv {
        SplitEnv {
            a_device,
            result: result.then_some(MemoryClass::Standard),
            ..SplitEnv::host(MemoryClass::Interleaved)
        }
    }

    /// The tensor element `(row, column)` of element `e` of a 16-column panel order with
    /// `rows` rows starting at tensor element `origin`.
    fn panel_element(e: u32, rows: u32, origin: (u32, u32)) -> (u32, u32) {
        (
            origin.0 + (e / 16) % rows,
            origin.1 + e / (16 * rows) * 16 + e % 16,
        )
    }

    /// Seeded chains of two split GEMMs (random sizes and grids): every element of the
    /// value is in exactly one segment at the right tensor element; every A panel element of
    /// every tile of the second GEMM arrives exactly once (a move or its owner's local
    /// copy), from the owner's element of the same tensor element; the read-back pieces
    /// cover the value once.
    #[test]
    fn gathered_panels_take_every_element_once_from_its_owner() {
        let target = Target::c600();
        let mut rng = Rng(0x5eed_0005);
        let mut checked = 0;
        while checked < 40 {
            let m = 1 + rng.next(120);
            let (k1, n1, n2) = (
                16 * (1 + rng.next(12)),
                16 * (1 + rng.next(12)),
                16 * (1 + rng.next(6)),
            );
            let g1 = (1 + rng.next(5), 1 + rng.next(5), 1 + rng.next(4));
            let g2 = (1 + rng.next(5), 1 + rng.next(5), 1 + rng.next(6));
            let (Ok(first), Ok(second)) = (
                SplitGrid::within(
                    (m, k1, n1),
                    g1,
                    Precision::F16,
                    &chained_env(false, true),
                    &target,
                ),
                SplitGrid::within(
                    (m, n1, n2),
                    g2,
                    Precision::F16,
                    &chained_env(true, false),
                    &target,
                ),
            ) else {
                continue;
            };
            checked += 1;
            let scales = (Precision::F16, [0, 0]);
            let mut program = TileProgram {
                tiles: 1472,
                ..TileProgram::default()
            };
            let homes = inputs(&mut program, &first, Precision::F16, "op0");
            let value = lower(&mut program, &first, scales, &homes, None, "op0");
            assert_eq!(value.class, MemoryClass::Standard, "{first:?}");

            // Segments: every element once, at its tensor element.
            let mut seen = vec![0u8; (m * n1) as usize];
            value.segments(|seg| {
                let range = value.ranges.iter().find(|r| r.tile == seg.tile).unwrap();
                for r in 0..seg.rows {
                    for x in 0..16 {
                        let e = range.first + seg.offset + r * 16 + x;
                        let (row, col) = panel_element(e, range.rows, range.origin);
                        assert_eq!((row, col), (seg.row + r, seg.group * 16 + x));
                        seen[(row * n1 + col) as usize] += 1;
                    }
                }
            });
            assert!(seen.iter().all(|&s| s == 1), "segments of {first:?}");
            let mut read = vec![0u8; (m * n1) as usize];
            for piece in value.read_pieces() {
                for range in piece.tensor_ranges() {
                    for byte in range.step_by(2) {
                        read[(byte / 2) as usize] += 1;
                    }
                }
            }
            assert!(read.iter().all(|&s| s == 1), "read-back of {first:?}");

            let steps = program.run.len();
            let homes2 = inputs(&mut program, &second, Precision::F16, "op1");
            assert!(homes2.a_home.is_none() && homes2.a_pieces.is_empty());
            lower(&mut program, &second, scales, &homes2, Some(&value), "op1");
            let a_panel = program
                .buffers
                .iter()
                .position(|b| b.name == "op1.a.amp_left")
                .unwrap();
            // Panel p's exchange, then its compute step (the owners' copies first).
            let mut panel = 0;
            let mut index = steps;
            while panel < second.panels {
                let mut arrived: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
                let mut land = |tile: u32, source_tile: u32, src: u32, dst: u32, bytes: u32| {
                    let l = tile % second.gk;
                    let i = tile / second.gk / second.gn;
                    let (row0, rows) = second.rows.blocks[i as usize];
                    let (k0, kp) = second.panels_of(l)[panel as usize];
                    let range = value.ranges.iter().find(|r| r.tile == source_tile).unwrap();
                    let slots = arrived
                        .entry(tile)
                        .or_insert_with(|| vec![0; (rows * kp) as usize]);
                    for x in 0..bytes / 2 {
                        let want = panel_element(dst / 2 + x, rows, (row0, k0));
                        let have =
                            panel_element(range.first + src / 2 + x, range.rows, range.origin);
                        assert_eq!(want, have, "tile {tile} from {source_tile}");
                        slots[(dst / 2 + x) as usize] += 1;
                    }
                };
                let TileStep::Exchange { moves, .. } = &program.run[index] else {
                    panic!("step {index} is not the panel's exchange");
                };
                for mv in moves.iter().filter(|mv| mv.source.buffer == value.buffer) {
                    assert_eq!(mv.destination.buffer, a_panel);
                    assert!(!mv.destinations.contains(&mv.source_tile));
                    for &d in &mv.destinations {
                        land(
                            d,
                            mv.source_tile,
                            mv.source.offset,
                            mv.destination.offset,
                            mv.bytes,
                        );
                    }
                }
                let TileStep::Compute { runs, .. } = &program.run[index + 1] else {
                    panic!("step {} is not the panel's compute", index + 1);
                };
                for run in runs {
                    if let [Arg::Address(src), Arg::Address(dst)] = run.args[..] {
                        if src.buffer == value.buffer {
                            let KernelSpec::Copy { bytes } = program.kernels[run.kernel as usize]
                            else {
                                panic!("a gather copy is a copy");
                            };
                            land(run.tile, run.tile, src.offset, dst.offset, bytes);
                        }
                    }
                }
                for tile in 0..second.tiles() {
                    let l = tile % second.gk;
                    let (_, kp) = second.panels_of(l)[panel as usize];
                    if kp == 0 {
                        continue;
                    }
                    let slots = arrived
                        .get(&tile)
                        .unwrap_or_else(|| panic!("tile {tile} got nothing"));
                    assert!(
                        slots.iter().all(|&s| s == 1),
                        "tile {tile} panel {panel}: {first:?} -> {second:?}"
                    );
                }
                panel += 1;
                index += 2;
            }
        }
    }

    fn matmul(graph: &mut Graph, a: usize, b: usize, shape: Vec<u64>) -> usize {
        graph.add_op(
            OpKind::Matmul {
                transpose_lhs: false,
                transpose_rhs: false,
            },
            vec![a, b],
            shape,
            Precision::F16,
        )
    }

    /// An MLP block (matmul, bias add, GeLU, matmul, bias add) is split end to end, in F16
    /// and under FP8; any other use of the hidden value keeps the chain off the split
    /// lowering; a single FP8 GEMM of host tensors is split (the host encodes them).
    #[test]
    fn chains_split_only_when_every_use_stays_ranged() {
        let build = |tail: &dyn Fn(&mut Graph, usize) -> usize| {
            let mut graph = Graph::default();
            let x = graph.add_value(vec![2, 40, 64], Precision::F16, Origin::Argument);
            let w1 = graph.add_value(vec![64, 96], Precision::F16, Origin::Argument);
            let b1 = graph.add_value(vec![96], Precision::F16, Origin::Argument);
            let w2 = graph.add_value(vec![96, 32], Precision::F16, Origin::Constant);
            let h = matmul(&mut graph, x, w1, vec![2, 40, 96]);
            let hb = graph.add_op(OpKind::Add, vec![b1, h], vec![2, 40, 96], Precision::F16);
            let g = graph.add_op(
                OpKind::Gelu { tanh: true },
                vec![hb],
                vec![2, 40, 96],
                Precision::F16,
            );
            let out = tail(&mut graph, g);
            let y = matmul(&mut graph, out, w2, vec![2, 40, 32]);
            graph.outputs.push(y);
            graph
        };
        let plain = build(&|_, g| g);
        assert_eq!(split_dims(&plain, 0, Precision::F16), Some((80, 64, 96)));
        assert_eq!(split_dims(&plain, 3, Precision::F16), Some((80, 96, 32)));
        assert!(ranged_value(&plain, 6, Precision::F16));
        assert_eq!(bias_operand(&plain, 1, 4), Some(2));
        // Under FP8 too: the host encodes x and the weights, the device casts the hidden
        // value's ranges before the second GEMM gathers them.
        assert_eq!(split_dims(&plain, 0, Precision::F8E4M3), Some((80, 64, 96)));
        assert_eq!(split_dims(&plain, 3, Precision::F8E4M3), Some((80, 96, 32)));
        // The hidden value also feeds a softmax: nothing upstream of it is split.
        let other_use = build(&|graph, g| {
            let s = graph.add_op(OpKind::Softmax, vec![g], vec![2, 40, 96], Precision::F16);
            graph.outputs.push(s);
            g
        });
        assert!(split_dims(&other_use, 0, Precision::F16).is_none());
        assert!(split_dims(&other_use, 4, Precision::F16).is_none());
        // The hidden value returned too: still ranged (read back from the ranges).
        let returned = build(&|graph, g| {
            graph.outputs.push(g);
            g
        });
        assert!(split_dims(&returned, 0, Precision::F16).is_some());
        // A single GEMM of host F16 tensors under FP8: split, the host encodes.
        let mut single = Graph::default();
        let a = single.add_value(vec![50, 64], Precision::F16, Origin::Argument);
        let b = single.add_value(vec![64, 48], Precision::F16, Origin::Constant);
        let c = matmul(&mut single, a, b, vec![50, 48]);
        single.outputs.push(c);
        assert_eq!(
            split_dims(&single, 0, Precision::F8E4M3),
            Some((50, 64, 48))
        );
    }
}
