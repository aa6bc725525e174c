//! End to end: `ipu` GEMMs lowered to packages (`ipu_passes::lower`), run on the simulator
//! through the runtime's session with the real compiled kernels, checked against the f64
//! host product of the same (device-rounded) inputs.

use std::collections::BTreeMap;
use std::sync::Arc;

use ipu_device::kernels::{KernelCache, KernelLibrary};
use ipu_device::numerics::{decode_bytes, encode_bytes, Rounding};
use ipu_device::{Precision, Target};
use ipu_passes::lower::gemm::GemmGrid;
use ipu_passes::lower::PrecisionPolicy;
use ipu_passes::strategies::split_gemm::SplitGrid;
use ipu_runtime::npy::Tensor;
use ipu_runtime::session::{run_package, SessionOptions};
use melior::ir::{operation::OperationLike, Module};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Values of `precision` (after encoding at `scale`) of `values`.
fn rounded(values: &[f32], precision: Precision, scale: i32) -> Vec<f32> {
    let bytes =
        encode_bytes(values, precision, scale, Rounding::NearestEvenSaturating).expect("encode");
    decode_bytes(&bytes, precision, scale).expect("decode")
}

struct Case {
    m: usize,
    k: usize,
    n: usize,
    tiles: u32,
    precision: PrecisionPolicy,
    /// The weight as a splat constant instead of an argument.
    splat_weight: Option<f32>,
}

/// The host-side operands of a case, already rounded to F16.
struct Operands {
    /// `m x k`, row-major.
    lhs: Vec<f32>,
    /// `k x n`, row-major.
    rhs: Vec<f32>,
}

/// The `func.func @gemm` of a case: one `ipu.matmul` of F16 operands, the weight an argument
/// or a splat constant.
fn gemm_source(case: &Case) -> String {
    let Case { m, k, n, .. } = *case;
    let (weight_arg, weight_def) = match case.splat_weight {
        Some(value) => (
            String::new(),
            format!("%w = arith.constant dense<{value:?}> : tensor<{k}x{n}xf16>\n"),
        ),
        None => (format!(", %w: tensor<{k}x{n}xf16>"), String::new()),
    };
    format!(
        "func.func @gemm(%x: tensor<{m}x{k}xf16>{weight_arg}) -> tensor<{m}x{n}xf16> {{\n\
         {weight_def}\
         %y = \"ipu.matmul\"(%x, %w) : (tensor<{m}x{k}xf16>, tensor<{k}x{n}xf16>) -> tensor<{m}x{n}xf16>\n\
         return %y : tensor<{m}x{n}xf16>\n}}\n"
    )
}

/// Lowers the case's GEMM to a package with the stages of ipu-compile after planning, and
/// round-trips the package through the file format.
fn lower_to_package(case: &Case, cache: &KernelCache) -> ipu_runtime::package::Package {
    let context = ipu_dialects::context::create_context(false).expect("context");
    let mut module = Module::parse(&context, &gemm_source(case)).expect("parse");
    assert!(module.as_operation().verify());
    // The stages of ipu-compile after planning, on the unplanned graph (the lowering's own
    // grids), kernels compiled through the cache.
    let precision = match case.precision {
        PrecisionPolicy::Native => "native",
        PrecisionPolicy::F32 => "f32",
        PrecisionPolicy::F16 => "f16",
        PrecisionPolicy::Fp8 => "fp8",
    };
    let pipeline = format!(
        "builtin.module(ipu-lower-to-tiles{{tiles={} precision={precision} fp8-scale=0}}, \
         ipu-plan-kernels, ipu-place-storage, ipu-lower-exchanges, \
         ipu-optimize-exchange-placement, ipu-emit-tile-code)",
        case.tiles
    );
    ipu_passes::register_upstream_passes();
    let registry = ipu_passes::Registry::with_builtin();
    let parsed = ipu_passes::pipeline::parse_pipeline(&pipeline).expect("pipeline");
    let built = ipu_passes::manager::build_pass_manager(
        &context,
        &registry,
        &parsed,
        "builtin.module",
        &ipu_passes::manager::PrintAround::default(),
        None,
    )
    .expect("pass manager");
    built.manager.run(&mut module).expect("lowering");
    let package = ipu_passes::lower::passes::package_from_module(
        module.as_operation(),
        &Target::c600(),
        Some(cache),
    )
    .expect("package");
    // Round trip through the file format, as `ipu run` would read it.
    let bytes = package.to_bytes().expect("encode package");
    ipu_runtime::package::Package::from_bytes(&bytes).expect("decode package")
}

/// Seeded random F16 operands of the case (the splat weight when the weight is constant).
fn random_operands(case: &Case) -> Operands {
    let Case { m, k, n, .. } = *case;
    let mut rng = ChaCha8Rng::seed_from_u64(0x9e44 + (m * k * n) as u64);
    let mut values = |count: usize| -> Vec<f32> {
        rounded(
            &(0..count)
                .map(|_| rng.random_range(-1.0f32..1.0))
                .collect::<Vec<_>>(),
            Precision::F16,
            0,
        )
    };
    let lhs = values(m * k);
    let rhs = match case.splat_weight {
        Some(value) => vec![value; k * n],
        None => values(k * n),
    };
    Operands { lhs, rhs }
}

/// Runs the package on the simulator with the case's operands; returns the `m x n` result.
fn run_on_simulator(
    case: &Case,
    package: ipu_runtime::package::Package,
    cache: KernelCache,
    operands: &Operands,
) -> Tensor {
    let Case { m, k, n, .. } = *case;
    let mut inputs = BTreeMap::new();
    inputs.insert(
        "arg0".to_string(),
        Tensor {
            shape: vec![m as u64, k as u64],
            data: operands.lhs.clone(),
        },
    );
    if case.splat_weight.is_none() {
        inputs.insert(
            "arg1".to_string(),
            Tensor {
                shape: vec![k as u64, n as u64],
                data: operands.rhs.clone(),
            },
        );
    }
    let lock_dir =
        std::env::temp_dir().join(format!("ipu-lower-gemm-{}-{m}x{k}x{n}", std::process::id()));
    std::fs::create_dir_all(&lock_dir).expect("lock dir");
    let runner = Arc::new(KernelLibrary::new(cache));
    let mut outcome = run_package(package, &SessionOptions::new(&lock_dir), runner, &inputs)
        .expect("run on the simulator");
    let _ = std::fs::remove_dir_all(&lock_dir);
    let output = outcome.outputs.remove("result0").expect("result0");
    assert_eq!(output.shape, vec![m as u64, n as u64]);
    output
}

/// Where the device rounds each output's running F16 partial, as the K index ending each
/// rounded panel, one list per K slice: the end of every K panel of every K slice (the split
/// GEMM, when both operands arrive in the AMP precision), or of every K block of the
/// output-stationary lowering.
fn rounding_points(case: &Case) -> Vec<Vec<usize>> {
    let Case { m, k, n, .. } = *case;
    let target = Target::c600();
    let split = match case.precision {
        PrecisionPolicy::Fp8 => None,
        _ => SplitGrid::best(
            (m as u32, k as u32, n as u32),
            case.tiles,
            Precision::F16,
            &target,
        ),
    };
    match &split {
        Some(grid) => (0..grid.gk)
            .map(|slice| {
                grid.panels_of(slice)
                    .into_iter()
                    .filter(|panel| panel.1 > 0)
                    .map(|(panel_start, length)| (panel_start + length) as usize)
                    .collect()
            })
            .collect(),
        None => {
            let k_block = GemmGrid::new(m as u32, k as u32, n as u32, case.tiles)
                .expect("grid")
                .kb;
            vec![(1..=k.div_ceil(k_block as usize))
                .map(|block| (block * k_block as usize).min(k))
                .collect()]
        }
    }
}

/// Checks every output element against the f64 host product of the device-rounded operands,
/// within the rounding the device does at `slices` (see [`rounding_points`]); a K split then
/// rounds the sum of the other slices' partials and the final sum once more each. Returns the
/// largest error.
fn check_against_host(
    case: &Case,
    operands: Operands,
    slices: &[Vec<usize>],
    output: &Tensor,
) -> f64 {
    let Case { m, k, n, .. } = *case;
    let Operands { lhs, rhs } = match case.precision {
        PrecisionPolicy::Fp8 => Operands {
            lhs: rounded(&operands.lhs, Precision::F8E4M3, 0),
            rhs: rounded(&operands.rhs, Precision::F8E4M3, 0),
        },
        PrecisionPolicy::Native | PrecisionPolicy::F16 | PrecisionPolicy::F32 => operands,
    };
    let slice_starts: Vec<usize> = std::iter::once(0)
        .chain(
            slices
                .iter()
                .take(slices.len() - 1)
                .map(|ends| *ends.last().expect("panel")),
        )
        .collect();
    let mut worst = 0.0f64;
    for row in 0..m {
        for col in 0..n {
            // One F16 rounding of the running partial per panel, f32 sums inside: half an F16
            // ulp of each panel's partial plus f32 rounding of the panel's terms.
            let (mut sum, mut bound, mut slice_magnitudes) = (0.0f64, 1e-6f64, 0.0f64);
            for (ends, &start) in slices.iter().zip(&slice_starts) {
                let (mut partial, mut magnitude) = (0.0f64, 0.0f64);
                let mut next = ends.iter().peekable();
                for inner in start..*ends.last().expect("panel") {
                    let product = f64::from(lhs[row * k + inner]) * f64::from(rhs[inner * n + col]);
                    partial += product;
                    magnitude += product.abs();
                    if next.peek().is_some_and(|&&end| end == inner + 1) {
                        next.next();
                        bound += partial.abs() * 2f64.powi(-11) + magnitude * 2f64.powi(-22);
                        magnitude = 0.0;
                    }
                }
                sum += partial;
                slice_magnitudes += partial.abs();
            }
            if slices.len() > 1 {
                bound += 2.0 * slice_magnitudes * 2f64.powi(-11);
            }
            let got = f64::from(output.data[row * n + col]);
            let error = (got - sum).abs();
            assert!(
                error <= bound,
                "C[{row}, {col}] = {got}, host {sum}, error {error:.3e} > {bound:.3e}"
            );
            worst = worst.max(error);
        }
    }
    worst
}

/// Lowers, runs and checks one case; returns the largest error.
fn run_case(case: &Case) -> f64 {
    let cache = KernelCache::from_env().expect("kernel cache");
    let package = lower_to_package(case, &cache);
    let operands = random_operands(case);
    let output = run_on_simulator(case, package, cache, &operands);
    check_against_host(case, operands, &rounding_points(case), &output)
}

/// The seed's shape class: FP8 on 64 tiles, rows that need padding (250 rows in 8 row blocks
/// of 32: the last one has 26 real rows), inputs cast to FP8 on the device.
#[test]
fn fp8_gemm_64_tiles_padded_rows() {
    run_case(&Case {
        m: 250,
        k: 256,
        n: 512,
        tiles: 64,
        precision: PrecisionPolicy::Fp8,
        splat_weight: None,
    });
}

/// FP16 on the whole C600 (1472 tiles), K split into two K blocks (k * c limit).
#[test]
fn f16_gemm_1472_tiles() {
    run_case(&Case {
        m: 300,
        k: 1040,
        n: 1024,
        tiles: 1472,
        precision: PrecisionPolicy::Native,
        splat_weight: None,
    });
}

/// A splat constant weight becomes a package weight streamed by `initialize`.
#[test]
fn f16_gemm_with_constant_weight() {
    run_case(&Case {
        m: 64,
        k: 64,
        n: 128,
        tiles: 16,
        precision: PrecisionPolicy::Native,
        splat_weight: Some(0.5),
    });
}

/// The package's memory plan follows storage placement: every binding piece lies in a buffer
/// of the binding's category (the constant weight's in a weights buffer, the input's and
/// output's in activations), every byte an exchange phase receives lands in an exchange buffer
/// or an activation, the support memory is on every loaded tile, and the busiest tile's peak
/// fits the tile's SRAM.
#[test]
fn memory_plan_categories_follow_placement() {
    use ipu_device::image::Step;
    use ipu_runtime::package::MemoryCategory;
    let cache = KernelCache::from_env().expect("kernel cache");
    let case = Case {
        m: 64,
        k: 64,
        n: 128,
        tiles: 16,
        precision: PrecisionPolicy::Native,
        splat_weight: Some(0.5),
    };
    let package = lower_to_package(&case, &cache);
    let memory = &package.memory;
    let target = Target::c600();
    let holding = |tile: u32, address: u32| {
        memory.buffers.iter().find(|b| {
            b.tiles.iter().any(|&(a, z)| (a..=z).contains(&tile))
                && (b.address..b.address + b.bytes).contains(&address)
        })
    };
    let mut seen = std::collections::BTreeSet::new();
    for binding in &package.bindings {
        for piece in &binding.pieces {
            let buffer = holding(piece.tile, piece.address).unwrap_or_else(|| {
                panic!(
                    "no buffer holds {}'s piece on tile {}",
                    binding.name, piece.tile
                )
            });
            let expected = match binding.role {
                ipu_runtime::BindingRole::Weight => MemoryCategory::Weights,
                _ => MemoryCategory::Activations,
            };
            assert_eq!(
                buffer.category, expected,
                "{} in {}",
                binding.name, buffer.name
            );
            seen.insert(buffer.category);
        }
    }
    assert!(seen.contains(&MemoryCategory::Weights), "{seen:?}");
    let run = package.image.program("run").expect("run program");
    let mut received = 0;
    for step in &run.steps {
        if let Step::Exchange(phase) = step {
            for row in &phase.receives {
                let buffer = holding(row.tile, row.address).expect("a buffer receives");
                assert!(
                    matches!(
                        buffer.category,
                        MemoryCategory::ExchangeBuffers | MemoryCategory::Activations
                    ),
                    "{} receives but is {:?}",
                    buffer.name,
                    buffer.category
                );
                received += usize::from(buffer.category == MemoryCategory::ExchangeBuffers);
            }
        }
    }
    assert!(
        received > 0,
        "the split GEMM receives its panels in exchange buffers"
    );
    let code: u32 = memory
        .support
        .iter()
        .filter(|s| s.category == MemoryCategory::Code)
        .map(|s| s.bytes)
        .sum();
    assert!(
        code > 0
            && memory
                .support
                .iter()
                .any(|s| s.category == MemoryCategory::Support)
    );
    let per_tile = memory.per_tile(target.geometry.tiles.value);
    for tile in &package.image.tiles {
        let bytes = per_tile[tile.tile as usize];
        assert!(
            bytes[MemoryCategory::Code.index()] >= u64::from(code),
            "tile {}",
            tile.tile
        );
    }
    let (_, busiest) = memory
        .busiest_tile(target.geometry.tiles.value)
        .expect("a busiest tile");
    assert!(busiest.iter().sum::<u64>() <= u64::from(target.memory.sram_bytes.value));
}
