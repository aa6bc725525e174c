//! Simulator speed (issue 3, "Speed"): an F16 GEMM C[M x N] = A[M x K] @ B[K x N] spread over
//! all 1472 tiles of a C600 with the real compiled GEMM kernel, timed against the host's own
//! SGEMM (`matrixmultiply`) on the same machine, shapes and thread counts; plus cold compile
//! and warm cache-hit times of the kernels it uses.
//!
//! `cargo bench -p ipu-device --bench sim_gemm [-- --m 1024 --n 1024 --k 1024 --threads 1,2]`,
//! or `SIM_GEMM_SHAPE=1024x1024x1024`. Defaults: 4096 x 4096 x 4096, threads 1 and 2.
//!
//! ## Decomposition (built by hand, as `tests/all/sim_gemm.rs` does for 64 tiles)
//! Output columns are split into `N / 64` column blocks and rows into as many row blocks as
//! fit the remaining tiles (4096: 64 x 23 = 1472 tiles, 178 or 179 rows each); tile (i, j)
//! owns C block (i, j). K runs in blocks of 64. A block (i, kk) lives on tile (i, kk % nb)
//! and B block (kk, j) on tile (kk % mb, j), so every K step has different senders. Per K
//! step one exchange phase broadcasts A (i, kk) along grid row i and B (kk, j) along grid
//! column j, then one compute step runs one GEMM call per tile (the first K step
//! initializes C, the others accumulate). The owners of a block read it where it lives.

use std::collections::BTreeMap;
use std::error::Error;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use half::f16;
use ipu_device::image::{
    ComputeStep, DeviceImage, ExchangePhase, KernelRun, Program, Step, StreamBinding,
    StreamDirection, StreamSlice, Transfer,
};
use ipu_device::kernels::{KernelCache, KernelLibrary};
use ipu_device::sim::{Simulator, StepKind};
use ipu_device::{KernelSpec, MemoryClass, Precision, Target};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

type BenchResult<T> = Result<T, Box<dyn Error>>;

/// The kernel's K and C block (the AMP works on 16-column groups; 64 x 64 keeps B at 8 KiB).
const KB: usize = 64;
const CB: usize = 64;
const B_BLOCK_BYTES: u32 = (KB * CB * 2) as u32;
/// Output entries checked against the f64 host product.
const SAMPLES: usize = 512;
/// Warm cache hits timed per spec (the median is reported).
const WARM_REPEATS: usize = 21;

#[derive(Debug, Clone, Copy)]
struct Shape {
    m: usize,
    n: usize,
    k: usize,
}

struct Options {
    shape: Shape,
    threads: Vec<usize>,
    /// Runs per thread count; the fastest of each side is reported (the box is shared).
    repeats: usize,
}

fn parse_options() -> BenchResult<Options> {
    let mut shape = Shape {
        m: 4096,
        n: 4096,
        k: 4096,
    };
    if let Ok(text) = std::env::var("SIM_GEMM_SHAPE") {
        let parts: Vec<usize> = text
            .split('x')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("SIM_GEMM_SHAPE={text}: expected MxNxK ({e})"))?;
        let [m, n, k] = parts[..] else {
            return Err(format!("SIM_GEMM_SHAPE={text}: expected MxNxK").into());
        };
        shape = Shape { m, n, k };
    }
    let mut threads = vec![1, 2];
    let mut repeats = 3;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| format!("{name} needs a value"))
                .map(|v| v.to_string())
        };
        match arg.as_str() {
            "--m" => shape.m = value("--m")?.parse()?,
            "--n" => shape.n = value("--n")?.parse()?,
            "--k" => shape.k = value("--k")?.parse()?,
            "--repeats" => repeats = value("--repeats")?.parse::<usize>()?.max(1),
            "--threads" => {
                threads = value("--threads")?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?
            }
            // `cargo bench` passes `--bench`; other harness flags are ignored too.
            _ => {}
        }
    }
    Ok(Options {
        shape,
        threads,
        repeats,
    })
}

/// Where every block lives and which tile computes what.
struct Layout {
    shape: Shape,
    /// Column blocks (grid columns), row blocks (grid rows), K blocks.
    nb: usize,
    mb: usize,
    kb: usize,
    /// Rows of the smaller row blocks; the first `m % mb` blocks have one more.
    base_rows: usize,
    a_work: u32,
    c_addr: u32,
    a_home: u32,
    /// Bytes between the A blocks a tile keeps (the largest block).
    a_stride: u32,
    b_work: u32,
    b_home: u32,
    sram_base: u32,
}

fn align_up(value: u32, to: u32) -> u32 {
    value.div_ceil(to) * to
}

impl Layout {
    fn new(shape: Shape, target: &Target) -> BenchResult<Self> {
        let tiles = target.geometry.tiles.value as usize;
        if !shape.n.is_multiple_of(CB) || !shape.k.is_multiple_of(KB) || shape.m == 0 {
            return Err(format!("N and K must be multiples of 64, M positive: {shape:?}").into());
        }
        let nb = shape.n / CB;
        if nb > tiles {
            return Err(format!("N = {} needs {nb} tile columns, {tiles} tiles", shape.n).into());
        }
        let mb = (tiles / nb).min(shape.m);
        let kb = shape.k / KB;
        let base_rows = shape.m / mb;
        let max_rows = shape.m.div_ceil(mb) as u32;
        let memory = &target.memory;
        let element = memory.element_bytes.value;
        let a_stride = max_rows * (KB as u32) * 2;
        let a_work = memory.standard_start.value;
        let c_addr = align_up(a_work + a_stride, element);
        let a_home = align_up(c_addr + max_rows * (CB as u32) * 2, element);
        let a_end = a_home + kb.div_ceil(nb) as u32 * a_stride;
        let b_work = memory.interleaved_start.value;
        let b_home = align_up(b_work + B_BLOCK_BYTES, element);
        let b_end = b_home + kb.div_ceil(mb) as u32 * B_BLOCK_BYTES;
        if a_end > memory.standard_end.value || b_end > memory.interleaved_end.value {
            return Err(format!(
                "{shape:?} does not fit a tile: A/C end at {a_end:#x} (standard ends at {:#x}), \
                 B ends at {b_end:#x} (interleaved ends at {:#x})",
                memory.standard_end.value, memory.interleaved_end.value
            )
            .into());
        }
        Ok(Layout {
            shape,
            nb,
            mb,
            kb,
            base_rows,
            a_work,
            c_addr,
            a_home,
            a_stride,
            b_work,
            b_home,
            sram_base: memory.sram_base.value,
        })
    }

    fn tiles(&self) -> usize {
        self.nb * self.mb
    }

    fn tile(&self, i: usize, j: usize) -> u32 {
        (i * self.nb + j) as u32
    }

    fn rows(&self, i: usize) -> usize {
        self.base_rows + usize::from(i < self.shape.m % self.mb)
    }

    fn first_row(&self, i: usize) -> usize {
        i * self.base_rows + i.min(self.shape.m % self.mb)
    }

    /// Row block of output row `row`, and the row inside it.
    fn row_block(&self, row: usize) -> (usize, usize) {
        let big = self.shape.m % self.mb;
        let big_rows = big * (self.base_rows + 1);
        let i = if row < big_rows {
            row / (self.base_rows + 1)
        } else {
            big + (row - big_rows) / self.base_rows
        };
        (i, row - self.first_row(i))
    }

    /// Row counts the kernel is specialized for (its entry points).
    fn row_counts(&self) -> Vec<u32> {
        let mut rows = vec![self.base_rows as u32];
        if !self.shape.m.is_multiple_of(self.mb) {
            rows.push(self.base_rows as u32 + 1);
        }
        rows
    }

    fn gemm_spec(&self, accumulate: bool) -> KernelSpec {
        KernelSpec::Gemm {
            input: Precision::F16,
            partials: Precision::F16,
            weights: MemoryClass::Interleaved,
            k: KB as u32,
            c: CB as u32,
            rows: self.row_counts(),
            accumulate,
        }
    }

    /// Tile and address of A block (i, kk) and of B block (kk, j).
    fn a_home_of(&self, i: usize, kk: usize) -> (u32, u32) {
        let slot = (kk / self.nb) as u32;
        (
            self.tile(i, kk % self.nb),
            self.a_home + slot * self.a_stride,
        )
    }

    fn b_home_of(&self, kk: usize, j: usize) -> (u32, u32) {
        let slot = (kk / self.mb) as u32;
        (
            self.tile(kk % self.mb, j),
            self.b_home + slot * B_BLOCK_BYTES,
        )
    }

    /// A blocks kept by grid column j, B blocks kept by grid row i.
    fn a_blocks_on(&self, j: usize) -> usize {
        (j..self.kb).step_by(self.nb).count()
    }

    fn b_blocks_on(&self, i: usize) -> usize {
        (i..self.kb).step_by(self.mb).count()
    }
}

/// Gives each transfer, in list order, the earliest slot at which its sender's bus (shared by
/// a physical pair) and all its receivers are free. Returns the phase horizon.
fn assign_slots(target: &Target, transfers: &mut [Transfer]) -> BenchResult<u64> {
    let rate = u64::from(target.exchange.bytes_per_cycle.value);
    let mut bus_free: BTreeMap<u32, u64> = BTreeMap::new();
    let mut receiver_free: BTreeMap<u32, u64> = BTreeMap::new();
    let mut horizon = 0;
    for transfer in transfers.iter_mut() {
        let bus = target.send_bus(target.logical_to_physical(transfer.source_tile)?.index);
        let mut slot = bus_free.get(&bus).copied().unwrap_or(0);
        for d in &transfer.destinations {
            slot = slot.max(receiver_free.get(d).copied().unwrap_or(0));
        }
        let end = slot + u64::from(transfer.bytes).div_ceil(rate);
        bus_free.insert(bus, end);
        for d in &transfer.destinations {
            receiver_free.insert(*d, end);
        }
        transfer.slot = u32::try_from(slot)?;
        horizon = horizon.max(end);
    }
    Ok(horizon)
}

/// Splits transfers longer than the hardware's largest single transfer into consecutive
/// pieces of equal size (the C600 limit, 4148 words, is below one 179-row A block).
fn split_transfers(target: &Target, transfers: Vec<Transfer>) -> Vec<Transfer> {
    let limit = target.exchange.max_transfer_words.value * 4;
    let mut out = Vec::with_capacity(transfers.len());
    for transfer in transfers {
        let pieces = transfer.bytes.div_ceil(limit);
        let piece = align_up(transfer.bytes.div_ceil(pieces), 4);
        let mut done = 0;
        while done < transfer.bytes {
            let bytes = piece.min(transfer.bytes - done);
            out.push(Transfer {
                source_address: transfer.source_address + done,
                destination_address: transfer.destination_address + done,
                bytes,
                ..transfer.clone()
            });
            done += bytes;
        }
    }
    out
}

fn slices(tiles: impl Iterator<Item = (u32, u32, u32)>) -> Vec<StreamSlice> {
    tiles
        .filter(|&(_, _, bytes)| bytes > 0)
        .map(|(tile, address, bytes)| StreamSlice {
            tile,
            address,
            bytes,
        })
        .collect()
}

/// Programs `load` (host writes A and B), `run` (the K loop) and `read` (host reads C).
fn build_image(layout: &Layout, target: &Target) -> BenchResult<DeviceImage> {
    let mut image = DeviceImage::new(target.name.clone());
    let init = image.kernel_index(layout.gemm_spec(false));
    let accumulate = image.kernel_index(layout.gemm_spec(true));
    let grid = || (0..layout.mb).flat_map(|i| (0..layout.nb).map(move |j| (i, j)));
    let offset = |address: u32| address - layout.sram_base;
    let mut steps = Vec::with_capacity(2 * layout.kb);
    for kk in 0..layout.kb {
        let mut transfers = Vec::new();
        for i in 0..layout.mb {
            let (source_tile, source_address) = layout.a_home_of(i, kk);
            transfers.push(Transfer {
                source_tile,
                source_address,
                destinations: (0..layout.nb)
                    .map(|j| layout.tile(i, j))
                    .filter(|&t| t != source_tile)
                    .collect(),
                destination_address: layout.a_work,
                bytes: (layout.rows(i) * KB * 2) as u32,
                slot: 0,
            });
        }
        for j in 0..layout.nb {
            let (source_tile, source_address) = layout.b_home_of(kk, j);
            transfers.push(Transfer {
                source_tile,
                source_address,
                destinations: (0..layout.mb)
                    .map(|i| layout.tile(i, j))
                    .filter(|&t| t != source_tile)
                    .collect(),
                destination_address: layout.b_work,
                bytes: B_BLOCK_BYTES,
                slot: 0,
            });
        }
        transfers.retain(|t| !t.destinations.is_empty());
        let mut transfers = split_transfers(target, transfers);
        assign_slots(target, &mut transfers)?;
        steps.push(Step::Exchange(ExchangePhase::from_transfers(
            kk as u32, &transfers,
        )));
        let runs = grid()
            .map(|(i, j)| {
                let (a_tile, a_home) = layout.a_home_of(i, kk);
                let (b_tile, b_home) = layout.b_home_of(kk, j);
                let tile = layout.tile(i, j);
                let a = if tile == a_tile {
                    a_home
                } else {
                    layout.a_work
                };
                let b = if tile == b_tile {
                    b_home
                } else {
                    layout.b_work
                };
                let row_entry = u32::from(layout.rows(i) != layout.base_rows);
                KernelRun {
                    tile,
                    kernel: if kk == 0 { init } else { accumulate },
                    args: vec![offset(a), offset(b), offset(layout.c_addr), row_entry, 0, 0],
                }
            })
            .collect();
        steps.push(Step::Compute(ComputeStep {
            provenance: format!("loc(\"sim_gemm\":{kk}:0)"),
            runs,
        }));
    }
    image.streams = vec![
        StreamBinding {
            name: "a".into(),
            direction: StreamDirection::HostToDevice,
            slices: slices(grid().map(|(i, j)| {
                let bytes = layout.a_blocks_on(j) as u32 * layout.a_stride;
                (layout.tile(i, j), layout.a_home, bytes)
            })),
        },
        StreamBinding {
            name: "b".into(),
            direction: StreamDirection::HostToDevice,
            slices: slices(grid().map(|(i, j)| {
                let bytes = layout.b_blocks_on(i) as u32 * B_BLOCK_BYTES;
                (layout.tile(i, j), layout.b_home, bytes)
            })),
        },
        StreamBinding {
            name: "c".into(),
            direction: StreamDirection::DeviceToHost,
            slices: slices(grid().map(|(i, j)| {
                let bytes = (layout.rows(i) * CB * 2) as u32;
                (layout.tile(i, j), layout.c_addr, bytes)
            })),
        },
    ];
    image.programs = vec![
        Program {
            name: "load".into(),
            steps: vec![
                Step::HostWrite { stream: "a".into() },
                Step::HostWrite { stream: "b".into() },
            ],
        },
        Program {
            name: "run".into(),
            steps,
        },
        Program {
            name: "read".into(),
            steps: vec![Step::HostRead { stream: "c".into() }],
        },
    ];
    Ok(image)
}

/// Index of element (r, c) in a 16-column panel order with `panel_rows` rows (`spec.rs`).
fn panel(r: usize, c: usize, panel_rows: usize) -> usize {
    ((c / 16) * panel_rows + r) * 16 + c % 16
}

fn put(bytes: &mut [u8], index: usize, value: f32) {
    bytes[2 * index..2 * index + 2].copy_from_slice(&f16::from_f32(value).to_le_bytes());
}

/// Stream "a": per tile in slice order, its A blocks in AMP-left order, padded to the stride.
fn pack_a(layout: &Layout, a: &[f32]) -> Vec<u8> {
    let k = layout.shape.k;
    let mut out = Vec::new();
    for (i, j) in (0..layout.mb).flat_map(|i| (0..layout.nb).map(move |j| (i, j))) {
        for kk in (j..layout.kb).step_by(layout.nb) {
            let mut block = vec![0u8; layout.a_stride as usize];
            let (rows, first) = (layout.rows(i), layout.first_row(i));
            for r in 0..rows {
                for x in 0..KB {
                    put(
                        &mut block,
                        panel(r, x, rows),
                        a[(first + r) * k + kk * KB + x],
                    );
                }
            }
            out.extend(block);
        }
    }
    out
}

/// Stream "b": per tile in slice order, its B blocks in AMP-right order.
fn pack_b(layout: &Layout, b: &[f32]) -> Vec<u8> {
    let n = layout.shape.n;
    let mut out = Vec::new();
    for (i, j) in (0..layout.mb).flat_map(|i| (0..layout.nb).map(move |j| (i, j))) {
        for kk in (i..layout.kb).step_by(layout.mb) {
            let mut block = vec![0u8; B_BLOCK_BYTES as usize];
            for x in 0..KB {
                for y in 0..CB {
                    put(
                        &mut block,
                        panel(x, y, KB),
                        b[(kk * KB + x) * n + j * CB + y],
                    );
                }
            }
            out.extend(block);
        }
    }
    out
}

/// C[row, col] from stream "c".
fn c_entry(layout: &Layout, c_stream: &[u8], row: usize, col: usize) -> f32 {
    let (i, r) = layout.row_block(row);
    let (j, y) = (col / CB, col % CB);
    let before: usize = (0..i).map(|b| layout.rows(b) * CB * layout.nb).sum();
    let at = before + j * layout.rows(i) * CB + panel(r, y, layout.rows(i));
    f16::from_le_bytes([c_stream[2 * at], c_stream[2 * at + 1]]).to_f32()
}

/// Values exactly representable in F16, so the simulator and SGEMM multiply the same numbers.
fn random_f16_values(rng: &mut ChaCha8Rng, count: usize) -> Vec<f32> {
    (0..count)
        .map(|_| f16::from_f32(rng.random_range(-1.0f32..1.0)).to_f32())
        .collect()
}

/// Checks sampled C entries against the f64 product. The kernel rounds the partial to F16 at
/// the end of every 64-deep K block (`KernelSpec::Gemm`), so the bound is half an F16 ulp
/// (2^-11 relative) of each block's running partial, plus f32 rounding inside the blocks.
fn check(layout: &Layout, a: &[f32], b: &[f32], c_stream: &[u8]) -> BenchResult<f64> {
    let Shape { m, n, k } = layout.shape;
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eedc);
    let mut worst_ratio = 0.0f64;
    for _ in 0..SAMPLES {
        let (row, col) = (rng.random_range(0..m), rng.random_range(0..n));
        let (mut sum, mut bound, mut magnitude) = (0.0f64, 1e-6f64, 0.0f64);
        for x in 0..k {
            let product = f64::from(a[row * k + x]) * f64::from(b[x * n + col]);
            sum += product;
            magnitude += product.abs();
            if (x + 1) % KB == 0 {
                bound += sum.abs() * 2f64.powi(-11) + magnitude * 2f64.powi(-22);
                magnitude = 0.0;
            }
        }
        let got = f64::from(c_entry(layout, c_stream, row, col));
        let error = (got - sum).abs();
        if error > bound {
            return Err(format!(
                "C[{row}, {col}] = {got}, f64 product {sum}, error {error:.3e} > bound {bound:.3e}"
            )
            .into());
        }
        worst_ratio = worst_ratio.max(error / bound);
    }
    Ok(worst_ratio)
}

/// Host SGEMM on `threads` threads: row panels of C, one single-threaded `matrixmultiply`
/// call per panel (no `threading` feature, so each call stays on its thread). Returns the wall
/// time of one run.
fn host_sgemm(shape: Shape, a: &[f32], b: &[f32], c: &mut [f32], threads: usize) -> f64 {
    let Shape { m, n, k } = shape;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let panel_rows = m.div_ceil(threads);
    let started = Instant::now();
    pool.install(|| {
        c.par_chunks_mut(panel_rows * n)
            .enumerate()
            .for_each(|(p, c_panel)| {
                let rows = c_panel.len() / n;
                let a_panel = &a[p * panel_rows * k..(p * panel_rows + rows) * k];
                // SAFETY: the pointers cover rows x k, k x n and rows x n row-major f32
                // matrices with the strides given.
                unsafe {
                    matrixmultiply::sgemm(
                        rows,
                        k,
                        n,
                        1.0,
                        a_panel.as_ptr(),
                        k as isize,
                        1,
                        b.as_ptr(),
                        n as isize,
                        1,
                        0.0,
                        c_panel.as_mut_ptr(),
                        n as isize,
                        1,
                    )
                }
            })
    });
    started.elapsed().as_secs_f64()
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown cpu".into())
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Cold compile (fresh cache) and warm hits of each spec: `KernelCache::ensure` (key, read and
/// hash-check the entry) and a fresh `KernelLibrary::load` (that plus opening the library).
fn measure_cache(cache: &KernelCache, specs: &[KernelSpec]) -> BenchResult<()> {
    println!("\nkernel cache ({}):", cache.root().display());
    for spec in specs {
        let started = Instant::now();
        let entry = cache.ensure(spec)?;
        let cold = started.elapsed().as_secs_f64();
        assert!(entry.built, "{} was expected to compile", spec.name());
        let mut hits = Vec::new();
        let mut loads = Vec::new();
        for _ in 0..WARM_REPEATS {
            let started = Instant::now();
            let entry = cache.ensure(spec)?;
            hits.push(started.elapsed().as_secs_f64());
            assert!(!entry.built, "{} rebuilt on a warm cache", spec.name());
            let library = KernelLibrary::new(cache.clone());
            let started = Instant::now();
            library.load(spec)?;
            loads.push(started.elapsed().as_secs_f64());
        }
        println!(
            "  {}: cold compile {:.2} s (compile_ms in kernel.json {:.0}); warm hit median {:.2} ms, \
             warm load (hit + dlopen) median {:.2} ms over {WARM_REPEATS}",
            spec.name(),
            cold,
            entry.metadata.compile_ms,
            median(hits) * 1e3,
            median(loads) * 1e3
        );
    }
    Ok(())
}

fn main() -> BenchResult<()> {
    let options = parse_options()?;
    let shape = options.shape;
    let target = Target::c600();
    let layout = Layout::new(shape, &target)?;
    let flops = 2.0 * shape.m as f64 * shape.n as f64 * shape.k as f64;
    println!(
        "sim_gemm: F16 GEMM {} x {} x {} on {} tiles ({} row x {} column blocks, {} K steps, \
         rows per tile {:?})",
        shape.m,
        shape.n,
        shape.k,
        layout.tiles(),
        layout.mb,
        layout.nb,
        layout.kb,
        layout.row_counts()
    );

    let cache_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sim-gemm-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache_dir);
    let cache = KernelCache::new(&cache_dir);
    let specs = [layout.gemm_spec(false), layout.gemm_spec(true)];
    measure_cache(&cache, &specs)?;

    let started = Instant::now();
    let image = build_image(&layout, &target)?;
    let library = Arc::new(KernelLibrary::new(cache));
    library.load_all(&image.kernels)?;
    let mut sim = Simulator::new(target.clone(), library);
    sim.load(&image)?;
    let mut rng = ChaCha8Rng::seed_from_u64(0x6e3d);
    let a = random_f16_values(&mut rng, shape.m * shape.k);
    let b = random_f16_values(&mut rng, shape.k * shape.n);
    sim.write_stream("a", &pack_a(&layout, &a))?;
    sim.write_stream("b", &pack_b(&layout, &b))?;
    sim.run("load")?;
    println!(
        "\nsetup (image, load with hazard analysis, host packing, host writes): {:.2} s",
        started.elapsed().as_secs_f64()
    );

    let mut host_c = vec![0.0f32; shape.m * shape.n];
    println!(
        "machine: {} cpus ({}), load average {}; fastest of {} runs per side",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpu_model(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim(),
        options.repeats
    );
    println!(
        "\nthreads | simulator wall s | sim GFLOP/s | host SGEMM wall s | SGEMM GFLOP/s | ratio"
    );
    let mut profile = None;
    for &threads in &options.threads {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()?;
        let (mut sim_wall, mut host_wall, mut run) = (f64::MAX, f64::MAX, None);
        // Alternate the two sides so that load from other users hits both alike.
        for _ in 0..options.repeats {
            let started = Instant::now();
            run = Some(pool.install(|| sim.run("run").map_err(|e| e.to_string()))?);
            sim_wall = sim_wall.min(started.elapsed().as_secs_f64());
            host_wall = host_wall.min(host_sgemm(shape, &a, &b, &mut host_c, threads));
        }
        let run = run.ok_or("no repeats")?;
        sim.run("read")?;
        let worst = check(&layout, &a, &b, sim.read_stream("c")?)?;
        let (sim_rate, host_rate) = (flops / sim_wall / 1e9, flops / host_wall / 1e9);
        println!(
            "{threads} | {sim_wall:.2} | {sim_rate:.1} | {host_wall:.2} | {host_rate:.1} | {:.1} %  \
             (C check: {SAMPLES} samples, worst error {:.2} of bound)",
            100.0 * sim_rate / host_rate,
            worst
        );
        if let Some(previous) = &profile {
            assert_eq!(previous, &run, "profile depends on the thread count");
        }
        profile = Some(run);
    }
    // SGEMM sanity: the same sampled entries, f32 against f64.
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..64 {
        let (row, col) = (rng.random_range(0..shape.m), rng.random_range(0..shape.n));
        let want: f64 = (0..shape.k)
            .map(|x| f64::from(a[row * shape.k + x]) * f64::from(b[x * shape.n + col]))
            .sum();
        let got = f64::from(host_c[row * shape.n + col]);
        assert!(
            (got - want).abs() < 1e-3 * (1.0 + want.abs()),
            "sgemm C[{row}, {col}]"
        );
    }

    if let Some(profile) = profile {
        let seconds = profile.seconds();
        let peak = target.peak_flops(Precision::F16);
        println!(
            "\nsimulated: {} cycles ({:.3} ms at {:.2} GHz), compute {} / exchange {} cycles; \
             {:.1} TFLOP/s = {:.1} % of C600 F16 peak ({:.1} TFLOP/s)",
            profile.total_cycles,
            seconds * 1e3,
            profile.clock_hz / 1e9,
            profile.cycles_of(StepKind::Compute),
            profile.cycles_of(StepKind::Exchange),
            flops / seconds / 1e12,
            100.0 * flops / seconds / peak,
            peak / 1e12
        );
    }
    let _ = std::fs::remove_dir_all(&cache_dir);
    Ok(())
}
