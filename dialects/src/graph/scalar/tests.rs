use super::*;

fn program(ops: Vec<ScalarOp>, inputs: usize, result: usize) -> ScalarProgram {
    ScalarProgram {
        inputs,
        indices: 0,
        ops,
        result,
    }
}

#[test]
fn erf_matches_known_values() {
    for (x, want) in [
        (0.0, 0.0),
        (0.5, 0.520_499_877_813_046_5),
        (1.0, 0.842_700_792_949_714_9),
        (2.0, 0.995_322_265_018_952_7),
        (3.0, 0.999_977_909_503_001_4),
        (-1.5, -0.966_105_146_475_310_7),
    ] {
        assert!(
            (erf(x) - want).abs() < 1e-14,
            "erf({x}) = {} not {want}",
            erf(x)
        );
    }
}

#[test]
fn f16_rounding_is_to_nearest_even() {
    assert_eq!(round_f16(1.0 + 2f64.powi(-11)), 1.0); // a tie: even (1.0)
    assert_eq!(
        round_f16(1.0 + 3.0 * 2f64.powi(-11)),
        1.0 + 2.0 * 2f64.powi(-10)
    );
    assert_eq!(round_f16(70000.0), f64::INFINITY);
    assert_eq!(round_f16(65504.0), 65504.0);
    assert_eq!(round_f16(2f64.powi(-25) * 3.0), 2f64.powi(-24) * 2.0);
}

#[test]
fn a_causal_mask_evaluates_from_indices() {
    // x if j <= i else -inf-like
    let p = ScalarProgram {
        inputs: 1,
        indices: 2,
        ops: vec![
            ScalarOp::Input(0),
            ScalarOp::Index(0),
            ScalarOp::Index(1),
            ScalarOp::CmpI(IntPredicate::Sle, 2, 1),
            ScalarOp::Float((-3.0e38f32).to_bits()),
            ScalarOp::Select(3, 0, 4),
        ],
        result: 5,
    };
    p.types().unwrap();
    assert_eq!(p.eval(&[2.5], &[3, 1]), 2.5);
    assert_eq!(p.eval(&[2.5], &[1, 3]), f64::from(-3.0e38f32));
}

#[test]
fn ill_typed_programs_are_refused_with_the_op() {
    let p = program(
        vec![
            ScalarOp::Input(0),
            ScalarOp::CmpF(FloatPredicate::Olt, 0, 0),
        ],
        1,
        1,
    );
    assert!(p.types().unwrap_err().contains("not a float"));
    let p = program(vec![ScalarOp::Int(1), ScalarOp::Unary(Unary::Exp, 0)], 0, 1);
    assert!(p.types().unwrap_err().contains("needs a Float operand"));
    let p = program(
        vec![ScalarOp::Unary(Unary::Exp, 1), ScalarOp::Input(0)],
        1,
        0,
    );
    assert!(p.types().unwrap_err().contains("does not come before"));
    let p = program(vec![ScalarOp::Input(3)], 1, 0);
    assert!(p.types().unwrap_err().contains("does not exist"));
}

#[test]
fn pruning_drops_dead_ops_and_keeps_values() {
    let p = program(
        vec![
            ScalarOp::Input(0),
            ScalarOp::Unary(Unary::Exp, 0),
            ScalarOp::Input(1),
            ScalarOp::Binary(Binary::Mul, 0, 2),
        ],
        2,
        3,
    );
    let q = p.pruned();
    assert_eq!(q.ops.len(), 3);
    assert_eq!(p.eval(&[2.0, 3.0], &[]), q.eval(&[2.0, 3.0], &[]));
}

#[test]
fn printed_functions_name_every_op() {
    let p = program(
        vec![
            ScalarOp::Input(0),
            ScalarOp::Float(0.5f32.to_bits()),
            ScalarOp::Binary(Binary::Mul, 0, 1),
            ScalarOp::Unary(Unary::Tanh, 2),
        ],
        1,
        3,
    );
    let text = p.to_function("body");
    assert!(
        text.contains("func.func private @body(%x0: f32) -> f32"),
        "{text}"
    );
    assert!(text.contains("%v2 = arith.mulf %x0, %v1 : f32"), "{text}");
    assert!(text.contains("func.return %v3 : f32"), "{text}");
}

#[test]
fn substitute_composes_a_map_of_a_map() {
    // f(a, b, c) = (a - b) * c, with input 1 computed by g(x, y) = exp(x) + y.
    let f = program(
        vec![
            ScalarOp::Input(0),
            ScalarOp::Input(1),
            ScalarOp::Binary(Binary::Sub, 0, 1),
            ScalarOp::Input(2),
            ScalarOp::Binary(Binary::Mul, 2, 3),
        ],
        3,
        4,
    );
    let g = program(
        vec![
            ScalarOp::Input(0),
            ScalarOp::Unary(Unary::Exp, 0),
            ScalarOp::Input(1),
            ScalarOp::Binary(Binary::Add, 1, 2),
        ],
        2,
        3,
    );
    let fused = f.substitute(1, &g);
    // Inputs: a, then g's x and y, then c.
    assert_eq!(fused.inputs, 4);
    for (a, x, y, c) in [(1.5, 0.25, -2.0, 3.0), (-4.0, 1.0, 0.5, -0.5)] {
        let expected = (a - (f64::exp(x) + y)) * c;
        assert!((fused.eval(&[a, x, y, c], &[]) - expected).abs() < 1e-12);
    }
    // Substituting the last input keeps the earlier ones in place.
    let last = f.substitute(2, &g);
    assert!(
        (last.eval(&[1.0, 2.0, 0.5, 1.0], &[]) - (1.0 - 2.0) * (f64::exp(0.5) + 1.0)).abs() < 1e-12
    );
    // Element indices are shared: a producer reading index 1 keeps reading it.
    let index_reader = ScalarProgram {
        inputs: 0,
        indices: 2,
        ops: vec![ScalarOp::Index(1), ScalarOp::IntToFloat(0)],
        result: 1,
    };
    let with_index = f.substitute(0, &index_reader);
    assert_eq!((with_index.inputs, with_index.indices), (2, 2));
    assert_eq!(with_index.eval(&[1.0, 2.0], &[0, 5]), (5.0 - 1.0) * 2.0);
}
