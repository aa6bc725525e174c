//! Shared helpers for the kernel tests: one kernel library per test run (so every distinct
//! spec compiles once), tile memory accessors and host reference conversions in plain Rust.

use std::path::PathBuf;
use std::sync::OnceLock;

use half::f16;
use ipu_device::kernels::{KernelCache, KernelLibrary};
use ipu_device::numerics::{decode, encode, Fp8Format, Rounding};
use ipu_device::Precision;

/// The library shared by the kernel tests, over a cache in Cargo's per-target temp directory
/// (warm across runs; the cache tests use their own fresh directories).
pub fn library() -> &'static KernelLibrary {
    static LIBRARY: OnceLock<KernelLibrary> = OnceLock::new();
    LIBRARY.get_or_init(|| KernelLibrary::new(KernelCache::new(test_dir("kernel-cache-shared"))))
}

/// A directory under Cargo's temp dir for this test binary.
pub fn test_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// A fresh, empty directory unique to this process and call.
pub fn fresh_dir(name: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let dir = test_dir(&format!(
        "{name}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create test dir");
    dir
}

pub fn fp8_format(precision: Precision) -> Option<Fp8Format> {
    match precision {
        Precision::F8E4M3 => Some(Fp8Format::F143),
        Precision::F8E5M2 => Some(Fp8Format::F152),
        _ => None,
    }
}

/// Element `i` of a tensor of `precision` at byte `offset`, widened to f32 (FP8 times 2^scale).
pub fn load(memory: &[u8], offset: usize, i: usize, precision: Precision, scale: i32) -> f32 {
    let bytes = precision.bytes() as usize;
    let at = offset + i * bytes;
    let b = &memory[at..at + bytes];
    match precision {
        Precision::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        Precision::F16 => f16::from_le_bytes([b[0], b[1]]).to_f32(),
        p => decode(b[0], fp8_format(p).expect("fp8"), scale).expect("scale in range"),
    }
}

/// The bytes the kernels store for `value` (round to nearest even, saturating).
pub fn encode_value(value: f32, precision: Precision, scale: i32) -> Vec<u8> {
    match precision {
        Precision::F32 => value.to_le_bytes().to_vec(),
        Precision::F16 => {
            // Finite values beyond the f16 range saturate; infinities and NaN pass through.
            let v = if value.is_finite() && value.abs() > 65504.0 {
                65504f32.copysign(value)
            } else {
                value
            };
            f16::from_f32(v).to_le_bytes().to_vec()
        }
        p => vec![encode(
            value,
            fp8_format(p).expect("fp8"),
            scale,
            Rounding::NearestEvenSaturating,
        )
        .expect("scale")],
    }
}

pub fn store(
    memory: &mut [u8],
    offset: usize,
    i: usize,
    precision: Precision,
    scale: i32,
    value: f32,
) {
    let bytes = encode_value(value, precision, scale);
    let at = offset + i * bytes.len();
    memory[at..at + bytes.len()].copy_from_slice(&bytes);
}

/// Random element bytes of `precision` for `n` elements with values of magnitude about `range`
/// (FP8: random codes other than NaN).
pub fn random_tensor(
    rng: &mut impl rand::Rng,
    precision: Precision,
    n: usize,
    range: f32,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * precision.bytes() as usize);
    for _ in 0..n {
        match precision {
            Precision::F8E4M3 | Precision::F8E5M2 => {
                let code = loop {
                    let c: u8 = rng.random();
                    if c != 0x80 {
                        break c;
                    }
                };
                out.push(code);
            }
            p => out.extend(encode_value(rng.random_range(-range..range), p, 0)),
        }
    }
    out
}

/// Distance in units in the last place between two f16 values (both finite).
pub fn f16_ulps(a: f32, b: f32) -> u32 {
    let key = |x: f32| {
        let bits = f16::from_f32(x).to_bits() as i32;
        if bits & 0x8000 != 0 {
            -(bits & 0x7fff)
        } else {
            bits
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// Exact equality of stored bytes, NaN payloads aside; reports the first mismatch.
pub fn assert_same_elements(what: &str, got: &[u8], want: &[u8], precision: Precision) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let bytes = precision.bytes() as usize;
    for (i, (g, w)) in got.chunks(bytes).zip(want.chunks(bytes)).enumerate() {
        let (gv, wv) = (load(g, 0, 0, precision, 0), load(w, 0, 0, precision, 0));
        if gv.is_nan() && wv.is_nan() {
            continue;
        }
        assert_eq!(
            g, w,
            "{what}: element {i}: got {gv} ({g:02x?}), want {wv} ({w:02x?})"
        );
    }
}

/// erf in f64: Maclaurin series for |x| < 3, continued fraction for erfc beyond.
pub fn erf(x: f64) -> f64 {
    let a = x.abs();
    let value = if a < 3.0 {
        let mut term = a;
        let mut sum = a;
        let mut n = 0.0;
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -a * a / n;
            sum += term / (2.0 * n + 1.0);
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    } else {
        // erfc(a) = exp(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...))))
        let mut tail = a;
        for k in (1..80).rev() {
            tail = a + (k as f64 / 2.0) / tail;
        }
        1.0 - (-a * a).exp() / std::f64::consts::PI.sqrt() / tail
    };
    value.copysign(x)
}
