//! FP8 numerics: exhaustive and randomized comparison with PyPI ml_dtypes, plus the properties
//! the device relies on (round trips, scales, saturation, buffer conversions).

use std::path::PathBuf;
use std::process::Command;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use ipu_device::numerics::{
    cast_bytes, choose_scale, decode, decode_slice, encode, encode_slice, f16_bytes_to_f32,
    f32_to_f16_bytes, Fp8Format, NumericsError, Rounding, SCALE_RANGE,
};
use ipu_device::precision::Precision;

const ENCODE: u8 = 0;
const DECODE: u8 = 1;
const RANDOM_VALUES_PER_FORMAT: usize = 120_000;

#[derive(Clone, Copy, Debug)]
struct Record {
    op: u8,
    format: Fp8Format,
    scale: i32,
    payload: u32,
}

fn format_id(format: Fp8Format) -> u8 {
    match format {
        Fp8Format::F143 => 0,
        Fp8Format::F152 => 1,
    }
}

fn pow2_f64(n: i32) -> f64 {
    2f64.powi(n)
}

/// Random f32 inputs for `format`, spread over everything that can go wrong: the whole f32 bit
/// space (NaN, infinities, f32 subnormals), the format's range and a few binades either side,
/// exact ties between neighbouring codes and one f32 ulp either side of them, the overflow
/// threshold, and scaled copies of all of these.
fn random_inputs(format: Fp8Format, rng: &mut ChaCha8Rng) -> Vec<(f32, i32)> {
    let bias = format.bias();
    let mantissa_bits = format.mantissa_bits() as i32;
    let min_exponent = 1 - bias - mantissa_bits - 4;
    let max_exponent = (1 << format.exponent_bits()) - 1 - bias + 2;
    let max_finite = format.max_finite();
    let mut inputs = Vec::with_capacity(RANDOM_VALUES_PER_FORMAT + 32);

    let specials = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(0xffc0_0000),
        f32::from_bits(0x7f80_0001),
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        max_finite,
        -max_finite,
        format.min_subnormal(),
        format.min_subnormal() / 2.0,
        -format.min_subnormal() / 2.0,
        format.min_normal(),
    ];
    inputs.extend(specials.iter().map(|&v| (v, 0)));

    while inputs.len() < RANDOM_VALUES_PER_FORMAT {
        let sign = if rng.random::<bool>() {
            0x8000_0000u32
        } else {
            0
        };
        let value = match rng.random_range(0..8u32) {
            0 => f32::from_bits(rng.random::<u32>()),
            1..=3 => {
                let exponent = rng.random_range(min_exponent..=max_exponent);
                let mantissa = rng.random::<u32>() & 0x007f_ffff;
                f32::from_bits(sign | (((exponent + 127) as u32) << 23) | mantissa)
            }
            4 | 5 => {
                // Midpoint between code c and c + 1 (for 0x7f: between max and the next binade
                // step, the overflow tie), exact in f32; case 5 moves one ulp off the tie.
                let code = rng.random_range(0..=0x7fu8);
                let low = decode(code, format, 0).unwrap_or(0.0);
                let high = if code == 0x7f {
                    let below = decode(0x7e, format, 0).unwrap_or(0.0);
                    2.0 * max_finite - below
                } else {
                    decode(code + 1, format, 0).unwrap_or(0.0)
                };
                let tie = f32::from_bits(((low + high) / 2.0).to_bits() | sign);
                if rng.random_range(0..2) == 0 {
                    tie
                } else {
                    let step: i64 = if rng.random::<bool>() { 1 } else { -1 };
                    f32::from_bits((i64::from(tie.to_bits()) + step) as u32)
                }
            }
            6 => f32::from_bits(sign | (rng.random::<u32>() & 0x007f_ffff)),
            _ => {
                let factor = 1.0 + rng.random_range(-0.1f32..0.1f32);
                f32::from_bits((max_finite * factor).to_bits() | sign)
            }
        };
        // A quarter of the inputs carry a random tensor scale, moving the value with it.
        let scale = if rng.random_range(0..4) == 0 {
            rng.random_range(SCALE_RANGE)
        } else {
            0
        };
        let scaled = if scale == 0 || !value.is_finite() {
            value
        } else {
            (f64::from(value) * pow2_f64(scale)) as f32
        };
        inputs.push((scaled, scale));
    }
    inputs
}

fn oracle_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/fp8_oracle.py")
}

/// Runs the ml_dtypes oracle on `records`. Panics (the test fails) when python3 or ml_dtypes is
/// missing: this comparison is the only independent check of the FP8 codecs, so it never skips.
fn run_oracle(records: &[Record]) -> Vec<u32> {
    let directory = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let input = directory.join(format!("fp8_oracle_{}_in.bin", std::process::id()));
    let output = directory.join(format!("fp8_oracle_{}_out.bin", std::process::id()));
    let mut bytes = Vec::with_capacity(records.len() * 8);
    for record in records {
        bytes.extend([
            record.op,
            format_id(record.format),
            record.scale as i8 as u8,
            0,
        ]);
        bytes.extend(record.payload.to_le_bytes());
    }
    std::fs::write(&input, &bytes).expect("writing the oracle input");
    let result = Command::new("python3")
        .arg(oracle_script())
        .arg(&input)
        .arg(&output)
        .output();
    let result = match result {
        Ok(result) => result,
        Err(error) => panic!(
            "cannot run python3 for the FP8 oracle ({error}); run scripts/setup.sh to install python3, numpy and ml_dtypes"
        ),
    };
    let stderr = String::from_utf8_lossy(&result.stderr);
    if result.status.code() == Some(3) {
        panic!("the FP8 oracle needs numpy and ml_dtypes: run scripts/setup.sh\n{stderr}");
    }
    assert!(
        result.status.success(),
        "fp8_oracle.py failed ({}):\n{stderr}",
        result.status
    );
    let out = std::fs::read(&output).expect("reading the oracle output");
    let _ = std::fs::remove_file(&input);
    let _ = std::fs::remove_file(&output);
    assert_eq!(out.len(), records.len() * 4, "oracle output length");
    out.chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[test]
fn fp8_matches_ml_dtypes_exhaustively_and_on_random_values() {
    let mut records = Vec::new();
    for format in Fp8Format::ALL {
        for scale in [0, -31, -7, 5, 31] {
            for code in 0..=255u32 {
                records.push(Record {
                    op: DECODE,
                    format,
                    scale,
                    payload: code,
                });
            }
        }
    }
    let decodes = records.len();
    let mut rng = ChaCha8Rng::seed_from_u64(0x1b21_f8f8);
    for format in Fp8Format::ALL {
        for (value, scale) in random_inputs(format, &mut rng) {
            records.push(Record {
                op: ENCODE,
                format,
                scale,
                payload: value.to_bits(),
            });
        }
    }
    assert!(records.len() - decodes >= 2 * 100_000);
    let expected = run_oracle(&records);

    let mut mismatches = Vec::new();
    for (record, &oracle) in records.iter().zip(&expected) {
        if record.op == DECODE {
            let got =
                decode(record.payload as u8, record.format, record.scale).expect("valid scale");
            let want = f32::from_bits(oracle);
            let same = got.to_bits() == oracle || (got.is_nan() && want.is_nan());
            if !same {
                mismatches.push(format!(
                    "{record:?}: decode {got:e} ({:#010x}), ml_dtypes {want:e} ({oracle:#010x})",
                    got.to_bits()
                ));
            }
            continue;
        }
        let value = f32::from_bits(record.payload);
        let got = encode(
            value,
            record.format,
            record.scale,
            Rounding::NearestEvenNanOnOverflow,
        )
        .expect("valid scale");
        if u32::from(got) != oracle {
            mismatches.push(format!(
                "{record:?} value {value:e}: encode {got:#04x}, ml_dtypes {oracle:#04x}"
            ));
        }
        // The saturating mode differs exactly where the oracle overflowed a non-NaN value.
        let saturated = encode(
            value,
            record.format,
            record.scale,
            Rounding::NearestEvenSaturating,
        )
        .expect("valid");
        let want_saturated = if oracle == 0x80 && !value.is_nan() {
            if value.is_sign_negative() {
                0xff
            } else {
                0x7f
            }
        } else {
            oracle as u8
        };
        if saturated != want_saturated {
            mismatches.push(format!("{record:?} value {value:e}: saturating {saturated:#04x}, expected {want_saturated:#04x}"));
        }
    }
    let shown: Vec<&String> = mismatches.iter().take(20).collect();
    assert!(
        mismatches.is_empty(),
        "{} of {} records differ from ml_dtypes:\n{shown:#?}",
        mismatches.len(),
        records.len()
    );
}

#[test]
fn codes_round_trip_at_every_scale() {
    for format in Fp8Format::ALL {
        for scale in SCALE_RANGE {
            for code in 0..=255u8 {
                let value = decode(code, format, scale).expect("valid scale");
                if code == 0x80 {
                    assert!(value.is_nan());
                    continue;
                }
                for rounding in [
                    Rounding::NearestEvenSaturating,
                    Rounding::NearestEvenNanOnOverflow,
                ] {
                    assert_eq!(
                        encode(value, format, scale, rounding),
                        Ok(code),
                        "{format:?} {code:#04x} scale {scale}"
                    );
                }
            }
        }
    }
}

#[test]
fn scale_is_validated_and_the_error_names_it() {
    for scale in [-32, 32, i32::MIN, i32::MAX] {
        let error =
            encode(1.0, Fp8Format::F143, scale, Rounding::default()).expect_err("out of range");
        assert!(
            matches!(error, NumericsError::ScaleOutOfRange { scale: s, min: -31, max: 31 } if s == scale)
        );
        assert!(error.to_string().contains(&scale.to_string()), "{error}");
        assert!(decode(0x10, Fp8Format::F152, scale).is_err());
        assert!(decode_slice(&[1, 2], Fp8Format::F152, scale).is_err());
    }
}

#[test]
fn scaled_values_are_q_times_two_to_the_scale() {
    assert_eq!(decode(0x40, Fp8Format::F143, 0), Ok(1.0));
    assert_eq!(decode(0x40, Fp8Format::F143, 3), Ok(8.0));
    assert_eq!(decode(0x40, Fp8Format::F143, -2), Ok(0.25));
    assert_eq!(
        encode(8.0, Fp8Format::F143, 3, Rounding::default()),
        Ok(0x40)
    );
    assert_eq!(
        decode(0x7f, Fp8Format::F152, 31),
        Ok(57344.0 * 2f32.powi(31))
    );
    assert_eq!(decode(0x01, Fp8Format::F143, -31), Ok(2f32.powi(-41)));
}

#[test]
fn zero_has_one_encoding_and_nan_is_0x80() {
    for format in Fp8Format::ALL {
        for rounding in [
            Rounding::NearestEvenSaturating,
            Rounding::NearestEvenNanOnOverflow,
        ] {
            assert_eq!(encode(-0.0, format, 0, rounding), Ok(0x00));
            assert_eq!(
                encode(-format.min_subnormal() / 2.0, format, 0, rounding),
                Ok(0x00)
            );
            assert_eq!(encode(f32::NAN, format, 0, rounding), Ok(0x80));
        }
        assert_eq!(decode(0x00, format, 0).map(f32::to_bits), Ok(0));
    }
}

#[test]
fn choose_scale_maps_the_range_into_the_format() {
    assert_eq!(choose_scale(240.0, Fp8Format::F143), Ok(0));
    assert_eq!(choose_scale(241.0, Fp8Format::F143), Ok(1));
    assert_eq!(choose_scale(120.0, Fp8Format::F143), Ok(-1));
    assert_eq!(choose_scale(1.0, Fp8Format::F143), Ok(-7));
    assert_eq!(choose_scale(0.0, Fp8Format::F152), Ok(0));
    assert_eq!(choose_scale(1e-30, Fp8Format::F143), Ok(-31));
    assert!(matches!(
        choose_scale(1e30, Fp8Format::F143),
        Err(NumericsError::DataRangeTooLarge { .. })
    ));
    assert!(matches!(
        choose_scale(f32::NAN, Fp8Format::F143),
        Err(NumericsError::NonFiniteRange { .. })
    ));
    assert!(choose_scale(-1.0, Fp8Format::F143).is_err());

    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..10_000 {
        let format = if rng.random::<bool>() {
            Fp8Format::F143
        } else {
            Fp8Format::F152
        };
        let max_abs = f32::from_bits(rng.random_range(0x2000_0000u32..0x5000_0000));
        let scale = choose_scale(max_abs, format).expect("in range");
        // The largest element encodes without saturating, and one scale lower it would not fit.
        let top = decode(0x7f, format, scale).expect("valid");
        assert!(max_abs <= top, "{max_abs:e} > {top:e} at scale {scale}");
        if scale > *SCALE_RANGE.start() {
            let lower_top = decode(0x7f, format, scale - 1).expect("valid");
            assert!(max_abs > lower_top, "{max_abs:e} fits scale {}", scale - 1);
        }
    }
}

#[test]
fn buffer_conversions() {
    let values = [1.0f32, -2.5, 0.1, 300.0, f32::NAN, 65504.0, 1e6];
    let codes =
        encode_slice(&values, Fp8Format::F143, 0, Rounding::NearestEvenSaturating).expect("valid");
    assert_eq!(codes[0], 0x40);
    assert_eq!(codes[3], 0x7f);
    assert_eq!(codes[4], 0x80);
    let decoded = decode_slice(&codes, Fp8Format::F143, 0).expect("valid");
    assert_eq!(decoded[0], 1.0);
    assert_eq!(decoded[1], -2.5);
    assert_eq!(decoded[3], 240.0);

    let f16_bytes = f32_to_f16_bytes(&values);
    assert_eq!(f16_bytes.len(), 14);
    let back = f16_bytes_to_f32(&f16_bytes).expect("whole");
    assert_eq!(back[0], 1.0);
    assert_eq!(back[5], 65504.0);
    assert!(back[6].is_infinite());
    assert!(matches!(
        f16_bytes_to_f32(&[0, 1, 2]),
        Err(NumericsError::RaggedBuffer { bytes: 3, .. })
    ));

    // Cast F16 -> F152 with scale 4 then back, equals encoding the f16 values directly.
    let halves = f32_to_f16_bytes(&[3.0, -1000.0, 0.001]);
    let fp8 = cast_bytes(
        &halves,
        Precision::F16,
        Precision::F8E5M2,
        4,
        Rounding::default(),
    )
    .expect("cast");
    let direct = encode_slice(
        &f16_bytes_to_f32(&halves).expect("whole"),
        Fp8Format::F152,
        4,
        Rounding::default(),
    )
    .expect("valid");
    assert_eq!(fp8, direct);
    let round_trip = cast_bytes(
        &fp8,
        Precision::F8E5M2,
        Precision::F32,
        4,
        Rounding::default(),
    )
    .expect("cast");
    assert_eq!(round_trip.len(), 12);
    assert_eq!(
        f32::from_le_bytes([round_trip[0], round_trip[1], round_trip[2], round_trip[3]]),
        3.0
    );
    assert!(cast_bytes(
        &[1, 2, 3],
        Precision::F32,
        Precision::F16,
        0,
        Rounding::default()
    )
    .is_err());
}
