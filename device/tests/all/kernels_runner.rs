//! The kernel runner: argument validation, refused specs, sharing across threads, and the
//! GEMM throughput check.

use half::f16;
use ipu_device::kernels::spec::GeluForm;
use ipu_device::kernels::{Access, KernelError};
use ipu_device::{KernelRunner, KernelSpec, MemoryClass, Precision};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::kernels::{bad_argument, run};
use crate::kernels_support::{library, random_tensor};

#[test]
fn runner_rejects_bad_arguments_without_touching_memory() {
    let copy = KernelSpec::Copy { bytes: 64 };
    let mut memory = vec![5u8; 256];
    let lib = library();
    assert_eq!(
        bad_argument(lib.run(&copy, &mut memory, &[0, 200])).0,
        1,
        "destination beyond memory"
    );
    assert_eq!(
        bad_argument(lib.run(&copy, &mut memory, &[0, 32])).0,
        1,
        "overlapping copy"
    );
    assert_eq!(
        bad_argument(lib.run(&copy, &mut memory, &[0])).0,
        1,
        "missing argument"
    );
    assert_eq!(
        bad_argument(lib.run(&copy, &mut memory, &[u32::MAX - 3, 100])).0,
        0,
        "offset overflow"
    );
    let gemm = KernelSpec::Gemm {
        input: Precision::F16,
        partials: Precision::F16,
        weights: MemoryClass::Standard,
        k: 16,
        c: 16,
        rows: vec![2],
        accumulate: true,
    };
    let mut memory = vec![5u8; 4096];
    assert_eq!(
        bad_argument(lib.run(&gemm, &mut memory, &[0, 512, 1024, 1, 0, 0])).0,
        3,
        "row index"
    );
    assert_eq!(
        bad_argument(lib.run(&gemm, &mut memory, &[1, 512, 1024, 0, 0, 0])).0,
        0,
        "misaligned"
    );
    let (index, detail) = bad_argument(lib.run(&gemm, &mut memory, &[0, 512, 1024, 0, 32, 0]));
    assert_eq!(index, 4, "{detail}");
    assert_eq!(
        bad_argument(lib.run(&gemm, &mut memory, &[0, 512, 4064, 0, 0, 0])).0,
        2,
        "C beyond memory"
    );
    assert!(
        memory.iter().all(|&b| b == 5),
        "a rejected call changed memory"
    );
    // In place is allowed where the kernel supports it, exactly aliased only.
    let gelu = KernelSpec::Gelu {
        precision: Precision::F16,
        form: GeluForm::Tanh,
        elements: 8,
    };
    assert!(gelu.check_call(64, &[0, 0]).is_ok());
    assert_eq!(bad_argument(gelu.check_call(64, &[0, 2]).map(|_| ())).0, 1);
    let ranges = gemm
        .operand_ranges(&[0, 512, 1024, 0, 0, 0])
        .expect("ranges");
    assert_eq!(ranges[2].access, Access::ReadWrite);
    assert_eq!(ranges[2].bytes, 1024..1024 + 2 * 16 * 2);
}

#[test]
fn invalid_specs_are_refused_before_compiling() {
    let bad = KernelSpec::Gemm {
        input: Precision::F16,
        partials: Precision::F16,
        weights: MemoryClass::Standard,
        k: 24,
        c: 16,
        rows: vec![4],
        accumulate: false,
    };
    assert!(matches!(
        library().load(&bad),
        Err(KernelError::InvalidSpec { .. })
    ));
    let fp8_gelu = KernelSpec::Gelu {
        precision: Precision::F8E4M3,
        form: GeluForm::Erf,
        elements: 4,
    };
    let message = library().load(&fp8_gelu).expect_err("fp8 gelu").to_string();
    assert!(
        message.contains("gelu_erf_f8_n4") && message.contains("f8"),
        "{message}"
    );
    // Scale is arithmetic (f16 or f32 only); Transpose moves bytes and takes FP8.
    let fp8_scale = KernelSpec::Scale {
        precision: Precision::F8E4M3,
        elements: 4,
    };
    let message = library()
        .load(&fp8_scale)
        .expect_err("fp8 scale")
        .to_string();
    assert!(message.contains("scale_f8_n4"), "{message}");
    for bad in [
        KernelSpec::Transpose {
            precision: Precision::F16,
            rows: 0,
            cols: 4,
        },
        KernelSpec::Scale {
            precision: Precision::F16,
            elements: 0,
        },
        KernelSpec::AttentionBlock {
            precision: Precision::F8E4M3,
            rows: 1,
            keys: 1,
            width: 1,
            causal: false,
        },
        KernelSpec::AttentionBlock {
            precision: Precision::F16,
            rows: 1,
            keys: 0,
            width: 1,
            causal: false,
        },
        KernelSpec::AttentionBlock {
            precision: Precision::F16,
            rows: 1,
            keys: 65_537,
            width: 1,
            causal: false,
        },
        KernelSpec::AttentionFinish {
            precision: Precision::F8E5M2,
            rows: 1,
            width: 1,
        },
        KernelSpec::AttentionFinish {
            precision: Precision::F32,
            rows: 1,
            width: 0,
        },
    ] {
        assert!(
            matches!(library().load(&bad), Err(KernelError::InvalidSpec { .. })),
            "{}",
            bad.name()
        );
    }
}

#[test]
fn runner_is_shared_across_rayon_threads() {
    use rayon::prelude::*;
    let spec = KernelSpec::Gemm {
        input: Precision::F16,
        partials: Precision::F16,
        weights: MemoryClass::Interleaved,
        k: 32,
        c: 32,
        rows: vec![8],
        accumulate: false,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(0x7a);
    let tiles: Vec<Vec<u8>> = (0..16)
        .map(|_| {
            let mut memory = vec![0u8; 8192];
            let a = random_tensor(&mut rng, Precision::F16, 8 * 32, 1.0);
            let b = random_tensor(&mut rng, Precision::F16, 32 * 32, 1.0);
            memory[..a.len()].copy_from_slice(&a);
            memory[1024..1024 + b.len()].copy_from_slice(&b);
            memory
        })
        .collect();
    let mut serial = tiles.clone();
    for memory in &mut serial {
        run(&spec, memory, &[0, 1024, 4096, 0, 0, 0]);
    }
    let mut parallel = tiles;
    parallel
        .par_iter_mut()
        .for_each(|memory| run(&spec, memory, &[0, 1024, 4096, 0, 0, 0]));
    assert_eq!(serial, parallel);
    assert_ne!(
        serial[0][4096..4608],
        vec![0u8; 512][..],
        "the GEMM wrote nothing"
    );
    let f = f16::from_le_bytes([serial[0][4096], serial[0][4097]]);
    assert!(f.is_finite());
}

/// Throughput of the F16 GEMM kernel at the per-tile shape of a 4096^3 GEMM on 1472 tiles
/// (about 176 output rows x 64 columns per tile, K in blocks of 64). Ignored by default (it
/// measures, it does not check); run with
/// `cargo test --release -p ipu-device --test all gemm_throughput -- --ignored --nocapture`.
#[test]
#[ignore]
fn gemm_throughput() {
    use rayon::prelude::*;
    use std::time::Instant;
    let rows = 176u32;
    let spec = KernelSpec::Gemm {
        input: Precision::F16,
        partials: Precision::F16,
        weights: MemoryClass::Interleaved,
        k: 64,
        c: 64,
        rows: vec![rows],
        accumulate: true,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let (a_off, b_off, c_off) = (0usize, 32 * 1024, 48 * 1024);
    let tile = || {
        let mut memory = vec![0u8; 96 * 1024];
        let a = random_tensor(
            &mut ChaCha8Rng::seed_from_u64(2),
            Precision::F16,
            rows as usize * 64,
            1.0,
        );
        memory[a_off..a_off + a.len()].copy_from_slice(&a);
        memory
    };
    let b = random_tensor(&mut rng, Precision::F16, 64 * 64, 0.01);
    let args = [a_off as u32, b_off as u32, c_off as u32, 0, 0, 0];
    let calls = 2000usize;
    let flops_per_call = 2.0 * f64::from(rows) * 64.0 * 64.0;
    let mut memory = tile();
    memory[b_off..b_off + b.len()].copy_from_slice(&b);
    run(&spec, &mut memory, &args);
    let started = Instant::now();
    for _ in 0..calls {
        run(&spec, &mut memory, &args);
    }
    let one = started.elapsed().as_secs_f64();
    let threads = rayon::current_num_threads();
    let mut tiles: Vec<Vec<u8>> = (0..threads * 4).map(|_| memory.clone()).collect();
    let started = Instant::now();
    tiles.par_iter_mut().for_each(|m| {
        for _ in 0..calls / 4 {
            run(&spec, m, &args);
        }
    });
    let all = started.elapsed().as_secs_f64();
    let single = flops_per_call * calls as f64 / one / 1e9;
    let parallel = flops_per_call * (calls / 4 * threads * 4) as f64 / all / 1e9;
    let total_flops = 2.0 * 4096f64.powi(3);
    eprintln!(
        "gemm f16 k64 c64 r{rows}: {:.1} us/call, {single:.1} GFLOP/s on 1 thread, {parallel:.1} GFLOP/s on {threads} threads; 4096^3 kernel time {:.2} s",
        one / calls as f64 * 1e6,
        total_flops / (parallel * 1e9)
    );
}
