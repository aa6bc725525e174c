//! Properties of the general lowering over seeded graphs (attention, batched and transposed
//! matmuls, row ops, permutations, a repeat) and of chained split GEMMs (MLP blocks): every
//! placement and exchange rule of [`crate::lower_properties`] holds through every stage.

use ipu_device::Target;
use ipu_passes::lower::PrecisionPolicy;
use ipu_runtime::package::BindingRole;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::lower_properties::{check_every_stage, context, lowered_source, SEED};

/// Seeded graphs on the general lowering, each with its tile count: causal or cross
/// attention with ragged sizes, batched matmuls with transposes and broadcasts, softmax and
/// layer norm over ragged rows, permutations of leading axes and of the last two, and a repeat.
fn general_cases(seed: u64, count: usize) -> Vec<(String, u32)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let t = |shape: &[u32]| {
        format!(
            "tensor<{}xf32>",
            shape
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join("x")
        )
    };
    (0..count)
        .map(|i| {
            let tiles = rng.random_range(4..=64u32);
            let source = match i % 5 {
                0 => {
                    let b = rng.random_range(1..=tiles.min(4));
                    // A third of them with long keys, which stream through in blocks.
                    let long = rng.random_bool(0.35);
                    let (s, tk) = if long {
                        (rng.random_range(64..=128u32), rng.random_range(150..=300u32))
                    } else {
                        (rng.random_range(1..=40u32), rng.random_range(1..=40u32))
                    };
                    let (d, e) = if long {
                        (64, rng.random_range(33..=64u32))
                    } else {
                        (rng.random_range(1..=48u32), rng.random_range(1..=48u32))
                    };
                    let causal = rng.random_bool(0.5);
                    let (q, k, v, o) = (t(&[b, s, d]), t(&[b, tk, d]), t(&[b, tk, e]), t(&[b, s, e]));
                    format!(
                        "func.func @f(%q: {q}, %k: {k}, %v: {v}) -> {o} {{\n\
                         %0 = \"ipu.attention\"(%q, %k, %v) {{{}}} : ({q}, {k}, {v}) -> {o}\n\
                         return %0 : {o}\n}}\n",
                        if causal { "causal" } else { "" }
                    )
                }
                1 => {
                    let b = rng.random_range(1..=3u32);
                    let (m, k, n) = (
                        rng.random_range(1..=24u32),
                        rng.random_range(1..=40u32),
                        rng.random_range(1..=300u32),
                    );
                    let (tl, tr) = (rng.random_bool(0.5), rng.random_bool(0.5));
                    let a = if tl { t(&[b, k, m]) } else { t(&[b, m, k]) };
                    // The right operand is broadcast over the batch in half the cases.
                    let wb = if rng.random_bool(0.5) { vec![] } else { vec![b] };
                    let mut w = wb.clone();
                    w.extend(if tr { [n, k] } else { [k, n] });
                    let (w, c) = (t(&w), t(&[b, m, n]));
                    format!(
                        "func.func @f(%a: {a}, %w: {w}) -> {c} {{\n\
                         %0 = \"ipu.matmul\"(%a, %w) {{transpose_lhs = {tl}, transpose_rhs = {tr}}} : ({a}, {w}) -> {c}\n\
                         return %0 : {c}\n}}\n"
                    )
                }
                2 => {
                    let (m, n) = (rng.random_range(1..=100u32), rng.random_range(1..=80u32));
                    let (x, v) = (t(&[m, n]), t(&[n]));
                    format!(
                        "func.func @f(%x: {x}, %g: {v}) -> {x} {{\n\
                         %0 = \"ipu.layer_norm\"(%x, %g, %g) {{epsilon = 1.0e-05 : f32}} : ({x}, {v}, {v}) -> {x}\n\
                         %1 = \"ipu.softmax\"(%0) : ({x}) -> {x}\n\
                         %2 = \"ipu.add\"(%1, %x) : ({x}, {x}) -> {x}\n\
                         return %2 : {x}\n}}\n"
                    )
                }
                3 => {
                    let (a, b, c) = (
                        rng.random_range(1..=6u32),
                        rng.random_range(1..=6u32),
                        rng.random_range(1..=50u32),
                    );
                    let (x, y, z) = (t(&[a, b, c]), t(&[b, a, c]), t(&[b, c, a]));
                    format!(
                        "func.func @f(%x: {x}) -> {z} {{\n\
                         %0 = \"ipu.rearrange\"(%x) {{permutation = array<i64: 1, 0, 2>}} : ({x}) -> {y}\n\
                         %1 = \"ipu.rearrange\"(%0) {{permutation = array<i64: 0, 2, 1>}} : ({y}) -> {z}\n\
                         return %1 : {z}\n}}\n"
                    )
                }
                _ => {
                    let (m, n) = (rng.random_range(1..=40u32), 16 * rng.random_range(1..=4u32));
                    let count = rng.random_range(1..=5u32);
                    let x = t(&[m, n]);
                    format!(
                        "func.func private @body(%x: {x}) -> {x} {{\n\
                         %0 = \"ipu.softmax\"(%x) : ({x}) -> {x}\n\
                         %1 = \"ipu.add\"(%0, %x) : ({x}, {x}) -> {x}\n\
                         return %1 : {x}\n}}\n\
                         func.func @f(%x: {x}) -> {x} {{\n\
                         %0 = \"ipu.repeat\"(%x) {{body = @body, count = {count} : i64}} : ({x}) -> {x}\n\
                         return %0 : {x}\n}}\n"
                    )
                }
            };
            (source, tiles)
        })
        .collect()
}

#[test]
fn general_lowering_exchanges_and_placements_hold_their_rules() {
    let target = Target::c600();
    let context = context();
    let cases = general_cases(SEED + 7, 30);
    // The generator reaches every family, ragged sizes included.
    assert!(cases.iter().any(|(s, _)| s.contains("causal")));
    assert!(cases
        .iter()
        .any(|(s, _)| s.contains("transpose_lhs = true")));
    assert!(cases.iter().any(|(s, _)| s.contains("ipu.repeat")));
    let streamed = cases
        .iter()
        .filter(|(source, tiles)| {
            lowered_source(
                &context,
                source,
                *tiles,
                PrecisionPolicy::Native,
                &target,
                source,
            )
            .program
            .kernels
            .iter()
            .any(|k| matches!(k, ipu_device::KernelSpec::AttentionBlock { .. }))
        })
        .count();
    assert!(streamed > 0, "a case streams its keys in blocks");
    let mut phases = 0;
    for (source, tiles) in &cases {
        let label = format!("{tiles} tiles: {source}");
        let design = lowered_source(
            &context,
            source,
            *tiles,
            PrecisionPolicy::Native,
            &target,
            &label,
        );
        let last = check_every_stage(design, &target, &label);
        phases += last.program.exchange_phases();
    }
    assert!(
        phases >= cases.len() / 2,
        "the cases exchange data ({phases} phases)"
    );
}

/// A seeded MLP block `x @ w1 + b1 -> gelu -> @ w2 + b2` (F16; K and N in whole 16-groups,
/// any rows), with its tile count.
fn mlp_cases(seed: u64, count: usize) -> Vec<(String, u32)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let tiles = rng.random_range(4..=64u32);
            let (b, s) = (rng.random_range(1..=3u32), rng.random_range(1..=40u32));
            let d = 16 * rng.random_range(1..=8u32);
            let h = 16 * rng.random_range(1..=12u32);
            let t = |shape: &str| format!("tensor<{shape}xf16>");
            let (x, w1, hb, w2) = (
                t(&format!("{b}x{s}x{d}")),
                t(&format!("{d}x{h}")),
                t(&format!("{b}x{s}x{h}")),
                t(&format!("{h}x{d}")),
            );
            let (b1, b2) = (t(&h.to_string()), t(&d.to_string()));
            let source = format!(
                "func.func @mlp(%x: {x}, %w1: {w1}, %b1: {b1}, %w2: {w2}, %b2: {b2}) -> {x} {{\n\
                 %h = \"ipu.matmul\"(%x, %w1) : ({x}, {w1}) -> {hb}\n\
                 %hb = \"ipu.add\"(%h, %b1) : ({hb}, {b1}) -> {hb}\n\
                 %g = \"ipu.gelu\"(%hb) {{approximate = \"tanh\"}} : ({hb}) -> {hb}\n\
                 %o = \"ipu.matmul\"(%g, %w2) : ({hb}, {w2}) -> {x}\n\
                 %ob = \"ipu.add\"(%b2, %o) : ({b2}, {x}) -> {x}\n\
                 return %ob : {x}\n}}\n"
            );
            (source, tiles)
        })
        .collect()
}

/// Chained split GEMMs (the bias adds and the GeLU in place on the first GEMM's ranges, the
/// second GEMM gathering its A panels from them) keep every placement and exchange rule
/// through every stage, and the result is read back exactly once.
#[test]
fn chained_split_mlps_hold_their_rules() {
    let target = Target::c600();
    let context = context();
    for (source, tiles) in mlp_cases(SEED + 11, 16) {
        let label = format!("{tiles} tiles: {source}");
        let design = lowered_source(
            &context,
            &source,
            tiles,
            PrecisionPolicy::Native,
            &target,
            &label,
        );
        let program = &design.program;
        assert!(
            program
                .kernels
                .iter()
                .any(|k| matches!(k, ipu_device::KernelSpec::AddGroupBias { .. })),
            "{label}: the bias adds on the ranges"
        );
        assert!(
            program.buffers.iter().any(|b| b.name == "op3.a.amp_left")
                && !program.buffers.iter().any(|b| b.name == "op3.a.home"),
            "{label}: the second GEMM gathers its A panels"
        );
        let output = program
            .bindings
            .iter()
            .find(|b| b.role == BindingRole::Output)
            .expect("an output");
        let mut runs: Vec<(u64, u64)> = output
            .pieces
            .iter()
            .flat_map(|p| p.tensor_ranges())
            .map(|r| (r.start, r.end))
            .collect();
        runs.sort_unstable();
        let mut cursor = 0;
        for (start, end) in runs {
            assert_eq!(start, cursor, "{label}: output bytes read once");
            cursor = end;
        }
        assert_eq!(
            cursor,
            output.shape.iter().product::<u64>() * 2,
            "{label}: output covered"
        );
        check_every_stage(design, &target, &label);
    }
}
