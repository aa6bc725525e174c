//! Lowering of `ipu.matmul` to tiles.
//!
//! ## Decomposition
//! C[M x N] = A[M x K] B[K x N]. Output columns split into `nb = N / cb` column blocks (`cb`
//! the largest of 64, 48, 32, 16 dividing N) and rows into `mb` row blocks of `rows_padded`
//! rows (the last block padded with zero rows), `mb * nb <= tiles`; tile `i * nb + j` owns C
//! block (i, j). Host streams put A's row block i (row-major, contiguous in the tensor) on
//! tile (i, i mod nb) and B's column block j (row-major K x cb, one piece per K row) on tile
//! (j mod mb, j). One exchange phase broadcasts A block i along grid row i and B block j
//! along grid column j; the owners use their copy in place, at the same address.
//! Then, per tile: FP8 casts (when the policy narrows the inputs), rearranges into the AMP
//! orders (A padded to `rows_padded x k_padded`, B in K blocks of `kb` rows padded with zero
//! rows), one GEMM call per K block (the first initializes C, the others accumulate), and a
//! rearrange of C back to row-major dropping the padded rows.
//!
//! K blocks: the GEMM kernel widens B into a `k * c` element buffer, at most
//! `GEMM_MAX_WEIGHT_ELEMENTS`, so K runs in `k_steps` blocks of `kb` (a multiple of 16). An
//! AMP-left A is K-group major, so K block s of A is contiguous at element
//! `s * kb * rows_padded`; B's K blocks are rearranged one by one, so they are contiguous too.

use ipu_device::kernels::describe::{default_partials, GEMM_MAX_WEIGHT_ELEMENTS};
use ipu_device::kernels::spec::ElementOrder;
use ipu_device::{KernelSpec, MemoryClass, Precision};

use super::program::{Arg, BufferId, Move, Place, Run, TileProgram, TileStep};
use super::LowerError;

/// How a matmul's tiles are laid out (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GemmGrid {
    pub m: u32,
    pub k: u32,
    pub n: u32,
    pub cb: u32,
    pub nb: u32,
    pub mb: u32,
    pub rows_padded: u32,
    pub kb: u32,
    pub k_steps: u32,
}

impl GemmGrid {
    pub fn new(m: u32, k: u32, n: u32, tiles: u32) -> Result<GemmGrid, LowerError> {
        let unsupported = |detail: String| LowerError::Unsupported {
            op: "ipu.matmul".into(),
            detail,
        };
        if m == 0 || k == 0 || n == 0 {
            return Err(unsupported(format!("empty GEMM {m}x{k}x{n}")));
        }
        let cb = [64, 48, 32, 16]
            .into_iter()
            .find(|cb| n.is_multiple_of(*cb))
            .ok_or_else(|| unsupported(format!("N = {n} is not a multiple of 16")))?;
        let nb = n / cb;
        if nb > tiles {
            return Err(unsupported(format!(
                "N = {n} needs {nb} column blocks of {cb}, only {tiles} tiles"
            )));
        }
        let rows_padded = m.div_ceil((tiles / nb).min(m));
        let mb = m.div_ceil(rows_padded);
        let k16 = k.div_ceil(16) * 16;
        let max_k = (GEMM_MAX_WEIGHT_ELEMENTS / cb) / 16 * 16;
        let k_steps = k16.div_ceil(max_k);
        let kb = k16.div_ceil(k_steps).div_ceil(16) * 16;
        if k <= (k_steps - 1) * kb {
            return Err(unsupported(format!(
                "K = {k} leaves an empty K block of {kb}"
            )));
        }
        Ok(GemmGrid {
            m,
            k,
            n,
            cb,
            nb,
            mb,
            rows_padded,
            kb,
            k_steps,
        })
    }

    /// The grid of a planned output-stationary GEMM: `gm` row blocks and `gn` column blocks
    /// (the plan's `grid = [1, gm, gn, 1]`). The columns must split evenly into blocks of a
    /// multiple of 16; rows split into blocks of `ceil(m / gm)` with the last one padded.
    pub fn planned(m: u32, k: u32, n: u32, gm: u32, gn: u32) -> Result<GemmGrid, LowerError> {
        let unsupported = |detail: String| LowerError::Unsupported {
            op: "ipu.matmul".into(),
            detail,
        };
        if gm == 0 || gn == 0 || !n.is_multiple_of(gn) || !(n / gn).is_multiple_of(16) {
            return Err(unsupported(format!(
                "planned grid {gm}x{gn} does not split N = {n} into equal blocks of a multiple of 16"
            )));
        }
        let mut grid = GemmGrid::new(m, k, n, gm * gn)?;
        grid.cb = n / gn;
        grid.nb = gn;
        grid.rows_padded = m.div_ceil(gm.min(m));
        grid.mb = m.div_ceil(grid.rows_padded);
        let max_k = (GEMM_MAX_WEIGHT_ELEMENTS / grid.cb) / 16 * 16;
        let k16 = k.div_ceil(16) * 16;
        grid.k_steps = k16.div_ceil(max_k);
        grid.kb = k16.div_ceil(grid.k_steps).div_ceil(16) * 16;
        if k <= (grid.k_steps - 1) * grid.kb {
            return Err(unsupported(format!(
                "K = {k} leaves an empty K block of {}",
                grid.kb
            )));
        }
        Ok(grid)
    }

    pub fn tile(&self, i: u32, j: u32) -> u32 {
        i * self.nb + j
    }

    pub fn tiles(&self) -> Vec<u32> {
        (0..self.mb * self.nb).collect()
    }

    pub fn first_row(&self, i: u32) -> u32 {
        i * self.rows_padded
    }

    /// Real rows of row block i.
    pub fn rows(&self, i: u32) -> u32 {
        self.rows_padded.min(self.m - self.first_row(i))
    }

    pub fn k_padded(&self) -> u32 {
        self.kb * self.k_steps
    }

    /// Real K rows of K block s.
    pub fn k_rows(&self, s: u32) -> u32 {
        self.kb.min(self.k - s * self.kb)
    }

    pub fn grid(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.mb).flat_map(move |i| (0..self.nb).map(move |j| (i, j)))
    }
}

/// The precisions of one GEMM.
#[derive(Debug, Clone, Copy)]
pub struct GemmPrecision {
    /// Of the host tensors A and B.
    pub host: Precision,
    /// Of the AMP inputs (FP8 under the fp8 policy).
    pub input: Precision,
    /// FP8 scale exponent of both inputs.
    pub scale_exp: i32,
}

impl GemmPrecision {
    pub fn partials(&self) -> Precision {
        default_partials(self.input)
    }
}

/// The row-major A and B buffers of a GEMM, which host bindings fill before
/// [`lower_matmul`] runs.
pub fn input_buffers(
    program: &mut TileProgram,
    grid: &GemmGrid,
    precision: GemmPrecision,
    provenance: &str,
) -> (BufferId, BufferId) {
    let host = precision.host.bytes();
    let all = grid.tiles();
    let (k, cb) = (grid.k, grid.cb);
    let standard = MemoryClass::Standard;
    let a_rm = program.buffer(
        format!("{provenance}.a"),
        standard,
        grid.rows_padded * k * host,
        all.clone(),
    );
    let b_rm = program.buffer(format!("{provenance}.b"), standard, k * cb * host, all);
    (a_rm, b_rm)
}

/// Where a GEMM's left operand is when [`lower_matmul`] starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ASource {
    /// Row block i row-major (`rows(i) x k`) on its home tile `(i, i mod nb)`, broadcast
    /// along grid row i by the GEMM's exchange.
    Home(BufferId),
    /// Already on every tile of grid row i, block-major: K block s is row-major
    /// `rows(i) x kb` at byte `s * rows_padded * kb * host bytes`.
    Gathered(BufferId),
}

/// Emits the steps of one GEMM (see the module docs) reading A from `a` and the row-major B
/// on its home tiles; returns the row-major C buffer.
pub fn lower_matmul(
    program: &mut TileProgram,
    grid: &GemmGrid,
    precision: GemmPrecision,
    (a, b_rm): (ASource, BufferId),
    provenance: &str,
) -> BufferId {
    let (a_rm, gathered) = match a {
        ASource::Home(buffer) => (buffer, false),
        ASource::Gathered(buffer) => (buffer, true),
    };
    let host = precision.host.bytes();
    let input = precision.input.bytes();
    let partials = precision.partials();
    let pb = partials.bytes();
    let all = grid.tiles();
    let rp = grid.rows_padded;
    let (k, cb) = (grid.k, grid.cb);
    let standard = MemoryClass::Standard;

    // Under a narrowing precision policy the home tiles cast their blocks first, so the
    // broadcast moves the narrow bytes and no tile casts a block another tile also casts.
    let (mut a_in, mut b_in) = (a_rm, b_rm);
    let scale = Arg::Value(precision.scale_exp as u32);
    let mut element = host;
    if precision.input != precision.host {
        let a_c = program.buffer(
            format!("{provenance}.a.cast"),
            standard,
            rp * k * input,
            all.clone(),
        );
        let b_c = program.buffer(
            format!("{provenance}.b.cast"),
            standard,
            k * cb * input,
            all.clone(),
        );
        let cast = |elements| KernelSpec::Cast {
            from: precision.host,
            to: precision.input,
            elements,
        };
        let mut runs = Vec::new();
        if gathered {
            // Every tile of grid row i holds the whole row block: each casts its copy.
            for (i, j) in grid.grid() {
                runs.push(Run {
                    tile: grid.tile(i, j),
                    kernel: program.kernel(cast(rp * k)),
                    args: vec![
                        Arg::Address(Place::at(a_rm, 0)),
                        Arg::Address(Place::at(a_c, 0)),
                        scale,
                    ],
                });
            }
        } else {
            for i in 0..grid.mb {
                runs.push(Run {
                    tile: grid.tile(i, i % grid.nb),
                    kernel: program.kernel(cast(grid.rows(i) * k)),
                    args: vec![
                        Arg::Address(Place::at(a_rm, 0)),
                        Arg::Address(Place::at(a_c, 0)),
                        scale,
                    ],
                });
            }
        }
        for j in 0..grid.nb {
            runs.push(Run {
                tile: grid.tile(j % grid.mb, j),
                kernel: program.kernel(cast(k * cb)),
                args: vec![
                    Arg::Address(Place::at(b_rm, 0)),
                    Arg::Address(Place::at(b_c, 0)),
                    scale,
                ],
            });
        }
        // One tile may be home to both a row block and a column block: its runs are listed
        // in order, which is all a compute step needs.
        runs.sort_by_key(|r| r.tile);
        program.run.push(TileStep::Compute {
            provenance: format!("{provenance}.cast"),
            runs,
        });
        (a_in, b_in) = (a_c, b_c);
        element = input;
    }

    let mut moves = Vec::new();
    for i in (0..grid.mb).filter(|_| !gathered) {
        let home = grid.tile(i, i % grid.nb);
        let destinations: Vec<u32> = (0..grid.nb)
            .map(|j| grid.tile(i, j))
            .filter(|&t| t != home)
            .collect();
        if !destinations.is_empty() {
            moves.push(Move {
                source_tile: home,
                source: Place::at(a_in, 0),
                destinations,
                destination: Place::at(a_in, 0),
                bytes: grid.rows(i) * k * element,
            });
        }
    }
    for j in 0..grid.nb {
        let home = grid.tile(j % grid.mb, j);
        let destinations: Vec<u32> = (0..grid.mb)
            .map(|i| grid.tile(i, j))
            .filter(|&t| t != home)
            .collect();
        if !destinations.is_empty() {
            moves.push(Move {
                source_tile: home,
                source: Place::at(b_in, 0),
                destinations,
                destination: Place::at(b_in, 0),
                bytes: k * cb * element,
            });
        }
    }
    if !moves.is_empty() {
        let phase = program.exchange_phases() as u32;
        program.run.push(TileStep::Exchange { phase, moves });
    }

    let kp = grid.k_padded();
    let a_amp = program.buffer(
        format!("{provenance}.a.amp_left"),
        standard,
        rp * kp * input,
        all.clone(),
    );
    let b_amp = program.buffer(
        format!("{provenance}.b.amp_right"),
        MemoryClass::Interleaved,
        kp * cb * input,
        all.clone(),
    );
    let c_amp = program.buffer(
        format!("{provenance}.c.amp_output"),
        standard,
        rp * cb * pb,
        all.clone(),
    );
    let c_rm = program.buffer(
        format!("{provenance}.c"),
        standard,
        rp * cb * pb,
        all.clone(),
    );
    let address = |buffer, offset| Arg::Address(Place::at(buffer, offset));

    let mut runs = Vec::new();
    for (i, j) in grid.grid() {
        let tile = grid.tile(i, j);
        if gathered {
            // K block s of the block-major copy becomes K block s of the AMP-left operand.
            for s in 0..grid.k_steps {
                let spec = KernelSpec::Rearrange {
                    order: ElementOrder::AmpLeft,
                    to_amp: true,
                    precision: precision.input,
                    offset: 0,
                    rows: grid.rows(i),
                    rows_padded: rp,
                    cols: grid.kb,
                    cols_padded: grid.kb,
                };
                runs.push(Run {
                    tile,
                    kernel: program.kernel(spec),
                    args: vec![
                        address(a_in, s * rp * grid.kb * element),
                        address(a_amp, s * grid.kb * rp * input),
                    ],
                });
            }
        } else {
            let spec = KernelSpec::Rearrange {
                order: ElementOrder::AmpLeft,
                to_amp: true,
                precision: precision.input,
                offset: 0,
                rows: grid.rows(i),
                rows_padded: rp,
                cols: k,
                cols_padded: kp,
            };
            runs.push(Run {
                tile,
                kernel: program.kernel(spec),
                args: vec![address(a_in, 0), address(a_amp, 0)],
            });
        }
        for s in 0..grid.k_steps {
            let spec = KernelSpec::Rearrange {
                order: ElementOrder::AmpRight,
                to_amp: true,
                precision: precision.input,
                offset: 0,
                rows: grid.k_rows(s),
                rows_padded: grid.kb,
                cols: cb,
                cols_padded: cb,
            };
            let block = s * grid.kb * cb * input;
            runs.push(Run {
                tile,
                kernel: program.kernel(spec),
                args: vec![address(b_in, block), address(b_amp, block)],
            });
        }
    }
    program.run.push(TileStep::Compute {
        provenance: format!("{provenance}.rearrange"),
        runs,
    });

    let mut runs = Vec::new();
    for (i, j) in grid.grid() {
        let tile = grid.tile(i, j);
        for s in 0..grid.k_steps {
            let spec = KernelSpec::Gemm {
                input: precision.input,
                partials,
                weights: MemoryClass::Interleaved,
                k: grid.kb,
                c: cb,
                rows: vec![rp],
                accumulate: s > 0,
            };
            runs.push(Run {
                tile,
                kernel: program.kernel(spec),
                args: vec![
                    address(a_amp, s * grid.kb * rp * input),
                    address(b_amp, s * grid.kb * cb * input),
                    address(c_amp, 0),
                    Arg::Value(0),
                    scale,
                    scale,
                ],
            });
        }
    }
    program.run.push(TileStep::Compute {
        provenance: provenance.to_string(),
        runs,
    });

    let mut runs = Vec::new();
    for (i, j) in grid.grid() {
        let spec = KernelSpec::Rearrange {
            order: ElementOrder::AmpOutput,
            to_amp: false,
            precision: partials,
            offset: 0,
            rows: grid.rows(i),
            rows_padded: rp,
            cols: cb,
            cols_padded: cb,
        };
        runs.push(Run {
            tile: grid.tile(i, j),
            kernel: program.kernel(spec),
            args: vec![address(c_amp, 0), address(c_rm, 0)],
        });
    }
    program.run.push(TileStep::Compute {
        provenance: format!("{provenance}.output"),
        runs,
    });
    c_rm
}
