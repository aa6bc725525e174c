//! One-line equivalences per rule (egg `tests/math.rs` style), the guards that keep rules from
//! firing, extraction by shapes, and the numerics test: no rule changes values beyond rounding.

use std::collections::BTreeMap;

use egg::{CostFunction, Extractor, Id, Language, RecExpr, Runner};
use ipu_device::target::Target;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::cost::CycleCost;
use super::eval::{evaluate, round_to, Tensor};
use super::language::{Data, Ipu, IpuGraph, ShapeAnalysis};
use super::rules::{build, rules, RULES};

egg::test_fn! { matmul_assoc, rules(),
"(matmul (matmul a:8x64:f16 b:64x8:f16) c:8x64:f16)" => "(matmul a:8x64:f16 (matmul b:64x8:f16 c:8x64:f16))" }
egg::test_fn! { matmul_assoc_batched, rules(),
"(matmul (matmul a:2x8x64:f16 b:64x8:f16) c:8x4:f16)" => "(matmul a:2x8x64:f16 (matmul b:64x8:f16 c:8x4:f16))" }
egg::test_fn! { transpose_matmul, rules(),
"(t (matmul a:8x16:f16 b:16x4:f16))" => "(matmul (t b:16x4:f16) (t a:8x16:f16))" }
egg::test_fn! { transpose_transpose, rules(), "(t (t a:8x16:f16))" => "a:8x16:f16" }
egg::test_fn! { flag_lhs, rules(), "(matmul (t a:16x8:f16) b:16x4:f16)" => "(matmul_tl a:16x8:f16 b:16x4:f16)" }
egg::test_fn! { flag_rhs, rules(), "(matmul a:8x16:f16 (t b:4x16:f16))" => "(matmul_tr a:8x16:f16 b:4x16:f16)" }
egg::test_fn! { flag_both, rules(), "(matmul (t a:16x8:f16) (t b:4x16:f16))" => "(matmul_tt a:16x8:f16 b:4x16:f16)" }
egg::test_fn! { transposed_product_as_flags, rules(),
"(t (matmul a:8x16:f16 b:16x4:f16))" => "(matmul_tt b:16x4:f16 a:8x16:f16)" }
egg::test_fn! { transpose_add, rules(), "(t (add a:8x16:f16 b:8x16:f16))" => "(add (t a:8x16:f16) (t b:8x16:f16))" }
egg::test_fn! { transpose_gelu, rules(), "(t (gelu a:8x16:f16))" => "(gelu (t a:8x16:f16))" }
egg::test_fn! { transpose_gelu_tanh, rules(), "(t (gelu_tanh a:8x16:f16))" => "(gelu_tanh (t a:8x16:f16))" }
egg::test_fn! { transpose_cast, rules(), "(t (cast to:f32@0 a:8x16:f16))" => "(cast to:f32@0 (t a:8x16:f16))" }
egg::test_fn! { cast_round_trip, rules(), "(cast to:f16@0 (cast to:f32@0 a:8x16:f16))" => "a:8x16:f16" }
egg::test_fn! { cast_round_trip_fp8_same_scale, rules(),
"(cast to:f8E4M3FNUZ@2 (cast to:f32@2 q:4x4:f8E4M3FNUZ))" => "q:4x4:f8E4M3FNUZ" }
egg::test_fn! { cast_identity, rules(), "(cast to:f16@0 a:4x4:f16)" => "a:4x4:f16" }
egg::test_fn! { add_comm, rules(), "(add a:4x4:f16 b:4:f16)" => "(add b:4:f16 a:4x4:f16)" }
egg::test_fn! { add_assoc, rules(),
"(add (add a:4x4:f16 b:4x4:f16) c:4x4:f16)" => "(add a:4x4:f16 (add b:4x4:f16 c:4x4:f16))" }
egg::test_fn! { factor_lhs, rules(),
"(add (matmul a:4x8:f16 b:8x2:f16) (matmul a:4x8:f16 c:8x2:f16))" => "(matmul a:4x8:f16 (add b:8x2:f16 c:8x2:f16))" }
egg::test_fn! { factor_rhs, rules(),
"(add (matmul a:4x8:f16 c:8x2:f16) (matmul b:4x8:f16 c:8x2:f16))" => "(matmul (add a:4x8:f16 b:4x8:f16) c:8x2:f16)" }
egg::test_fn! { add_zero, rules(), "(add a:4x4:f16 z:4x4:f16=0)" => "a:4x4:f16" }
egg::test_fn! { softmax_shift, rules(), "(softmax (add a:4x4:f32 c:4x4:f32=3))" => "(softmax a:4x4:f32)" }

fn saturate(start: &str) -> (Runner<Ipu, ShapeAnalysis>, Id) {
    let expr: RecExpr<Ipu> = start
        .parse()
        .unwrap_or_else(|error| panic!("{start}: {error}"));
    let runner = Runner::default()
        .with_iter_limit(12)
        .with_node_limit(20_000)
        .with_expr(&expr)
        .run(&rules());
    let root = runner.egraph.find(runner.roots[0]);
    (runner, root)
}

fn equivalent(start: &str, other: &str) -> bool {
    let (runner, root) = saturate(start);
    let other: RecExpr<Ipu> = other
        .parse()
        .unwrap_or_else(|error| panic!("{other}: {error}"));
    runner
        .egraph
        .lookup_expr(&other)
        .is_some_and(|id| runner.egraph.find(id) == root)
}

fn no_invalid_class(egraph: &IpuGraph) -> bool {
    egraph.classes().all(|class| class.data != Data::Invalid)
}

#[test]
fn rule_table_builds_with_unique_names() {
    let rewrites = build(RULES).expect("the rule table parses");
    let mut names: Vec<String> = rewrites
        .iter()
        .map(|rewrite| rewrite.name.to_string())
        .collect();
    let count = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), count);
}

#[test]
fn guards_keep_inexact_and_ill_shaped_rewrites_out() {
    // f32 -> f16 rounds, so the round trip is not the identity.
    assert!(!equivalent(
        "(cast to:f32@0 (cast to:f16@0 a:4x4:f32))",
        "a:4x4:f32"
    ));
    // A scaled FP8 value need not fit f16 exactly.
    assert!(!equivalent(
        "(cast to:f8E4M3FNUZ@3 (cast to:f16@3 q:4x4:f8E4M3FNUZ))",
        "q:4x4:f8E4M3FNUZ"
    ));
    // Another scale on the way back is a different value.
    assert!(!equivalent(
        "(cast to:f8E4M3FNUZ@1 (cast to:f32@2 q:4x4:f8E4M3FNUZ))",
        "q:4x4:f8E4M3FNUZ"
    ));
    // softmax(a + c) with a broadcast `a` is not softmax(a): another shape.
    assert!(!equivalent(
        "(softmax (add a:1x4:f32 c:4x4:f32=3))",
        "(softmax a:1x4:f32)"
    ));
    // A non-zero splat is not dropped.
    assert!(!equivalent("(add a:4x4:f16 z:4x4:f16=1)", "a:4x4:f16"));
    // A 1-D bias has no transpose: the rule does not fire, and no ill-shaped node appears.
    let (runner, _) = saturate("(t (add a:4x8:f16 b:8:f16))");
    assert!(no_invalid_class(&runner.egraph));
    let (runner, _) = saturate("(add (matmul a:4x8:f16 b:8x2:f16) (matmul a:4x8:f16 c:8x1:f16))");
    assert!(no_invalid_class(&runner.egraph));
}

fn extract(start: &str, tiles: u32) -> String {
    let (runner, root) = saturate(start);
    let target = Target::c600();
    let cost = CycleCost {
        egraph: &runner.egraph,
        tiles,
        target: &target,
    };
    let extractor = Extractor::new(&runner.egraph, cost);
    extractor.find_best(root).1.to_string()
}

#[test]
fn extraction_picks_the_cheaper_association_by_shapes() {
    // Narrow middle: (A B) C does 2 * 16 * 16 * 2048 MACs, A (B C) 2 * 16 * 2048 * 2048.
    let narrow = "(matmul (matmul a:16x2048:f16 b:2048x16:f16) c:16x2048:f16)";
    assert_eq!(extract(narrow, 1472), narrow);
    // Wide middle: A (B C) does 2 * 16 * 2048 * 16 + 2 * 2048 * 16 * 16 MACs.
    let wide = "(matmul (matmul a:2048x16:f16 b:16x2048:f16) c:2048x16:f16)";
    assert_eq!(
        extract(wide, 1472),
        "(matmul a:2048x16:f16 (matmul b:16x2048:f16 c:2048x16:f16))"
    );
}

#[test]
fn extraction_drops_round_trips_and_folds_transposes_into_flags() {
    assert_eq!(
        extract("(cast to:f16@0 (cast to:f32@0 a:64x64:f16))", 4),
        "a:64x64:f16"
    );
    assert_eq!(extract("(t (t a:64x64:f16))", 4), "a:64x64:f16");
    assert_eq!(
        extract("(t (matmul a:64x32:f16 b:32x16:f16))", 4),
        "(matmul_tt b:32x16:f16 a:64x32:f16)"
    );
}

/// Seeded random per-kind weights: extracts some other member of each class.
struct RandomCost {
    weights: [u64; 13],
}

impl CostFunction<Ipu> for RandomCost {
    type Cost = u64;
    fn cost<C: FnMut(Id) -> u64>(&mut self, enode: &Ipu, mut costs: C) -> u64 {
        let kind = match enode {
            Ipu::Matmul(_) => 0,
            Ipu::MatmulTl(_) => 1,
            Ipu::MatmulTr(_) => 2,
            Ipu::MatmulTt(_) => 3,
            Ipu::Add(_) => 4,
            Ipu::Gelu(_) => 5,
            Ipu::GeluTanh(_) => 6,
            Ipu::Softmax(_) => 7,
            Ipu::LayerNorm(_) => 8,
            Ipu::Cast(_) => 9,
            Ipu::Transpose(_) => 10,
            Ipu::Attr(_) => 11,
            Ipu::Leaf(_) => 12,
        };
        enode
            .children()
            .iter()
            .fold(self.weights[kind], |total, &child| {
                total.saturating_add(costs(child))
            })
    }
}

fn random_inputs(expr: &RecExpr<Ipu>, rng: &mut ChaCha8Rng) -> BTreeMap<String, Tensor> {
    let mut inputs = BTreeMap::new();
    for node in expr.as_ref() {
        if let Ipu::Leaf(leaf) = node {
            let shape: Vec<usize> = leaf.shape.iter().map(|&size| size as usize).collect();
            let count = shape.iter().product();
            let data = (0..count)
                .map(|_| round_to(leaf.element, rng.random_range(-2.0..2.0)))
                .collect();
            inputs.insert(leaf.name.clone(), Tensor { shape, data });
        }
    }
    inputs
}

const PROGRAMS: &[&str] = &[
    "(matmul (matmul a:3x5:f32 b:5x2:f32) c:2x4:f32)",
    "(matmul a:2x3x5:f32 (matmul b:5x2:f32 c:2x4:f32))",
    "(t (matmul (t a:5x3:f16) (add b:5x4:f16 d:4:f16)))",
    "(t (gelu (t (cast to:f32@0 x:3x4:f16))))",
    "(cast to:f16@0 (t (cast to:f32@0 (gelu_tanh x:3x4:f16))))",
    "(cast to:f8E5M2FNUZ@1 (cast to:f32@1 (t q:3x4:f8E5M2FNUZ)))",
    "(cast to:f16@0 (cast to:f32@0 (softmax (add x:3x4:f16 c:3x4:f16=2.5))))",
    "(add (add (matmul a:3x5:f32 b:5x2:f32) (matmul a:3x5:f32 c:5x2:f32)) z:3x2:f32=0)",
    "(add (matmul (t a:5x3:f32) c:5x2:f32) (matmul_tl b:5x3:f32 c:5x2:f32))",
    "(layer_norm eps:0.00001 (t (t (add x:3x4:f32 y:4:f32))) g:4:f32 b:4:f32)",
    "(cast to:f32@0 (cast to:f16@0 x:3x4:f32))",
];

/// Equal within `tolerance` of the largest magnitude (a few units in the last place).
fn close(expected: &Tensor, actual: &Tensor, tolerance: f64) -> bool {
    let scale = expected.data.iter().fold(1.0f64, |max, x| max.max(x.abs()));
    expected.shape == actual.shape
        && expected
            .data
            .iter()
            .zip(&actual.data)
            .all(|(x, y)| (x - y).abs() <= tolerance * scale)
}

/// A few f16 units in the last place for programs with narrow types, a few f32 ones otherwise.
fn tolerance(program: &str) -> f64 {
    if program.contains("f16") || program.contains("f8") {
        8.0 * 2f64.powi(-11)
    } else {
        8.0 * 2f64.powi(-24)
    }
}

#[test]
fn no_rule_changes_numerics_beyond_rounding() {
    let target = Target::c600();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for program in PROGRAMS {
        let original: RecExpr<Ipu> = program
            .parse()
            .unwrap_or_else(|error| panic!("{program}: {error}"));
        let (runner, root) = saturate(program);
        assert!(no_invalid_class(&runner.egraph), "{program}");
        let mut variants: Vec<RecExpr<Ipu>> = Vec::new();
        for tiles in [1, 1472] {
            let cost = CycleCost {
                egraph: &runner.egraph,
                tiles,
                target: &target,
            };
            variants.push(Extractor::new(&runner.egraph, cost).find_best(root).1);
        }
        for _ in 0..8 {
            let weights = std::array::from_fn(|_| rng.random_range(1..50));
            variants.push(
                Extractor::new(&runner.egraph, RandomCost { weights })
                    .find_best(root)
                    .1,
            );
        }
        for trial in 0..3 {
            let inputs = random_inputs(&original, &mut rng);
            let expected =
                evaluate(&original, &inputs).unwrap_or_else(|error| panic!("{program}: {error}"));
            for variant in &variants {
                let actual =
                    evaluate(variant, &inputs).unwrap_or_else(|error| panic!("{variant}: {error}"));
                assert!(
                    close(&expected, &actual, tolerance(program)),
                    "{program} => {variant} differs (trial {trial})"
                );
            }
        }
    }
}

#[test]
fn the_evaluator_sees_a_dropped_rounding_cast() {
    // The check of the numerics test has teeth: f32 -> f16 -> f32 is not x.
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let rounded: RecExpr<Ipu> = "(cast to:f32@0 (cast to:f16@0 x:8x8:f32))"
        .parse()
        .expect("parses");
    let plain: RecExpr<Ipu> = "x:8x8:f32".parse().expect("parses");
    let mut inputs = BTreeMap::new();
    let data = (0..64)
        .map(|_| rng.random_range(-2.0f64..2.0) as f32 as f64)
        .collect();
    inputs.insert(
        "x".to_string(),
        Tensor {
            shape: vec![8, 8],
            data,
        },
    );
    let (a, b) = (
        evaluate(&rounded, &inputs).expect("evaluates"),
        evaluate(&plain, &inputs).expect("evaluates"),
    );
    assert!(!close(&a, &b, tolerance("f32")));
}
