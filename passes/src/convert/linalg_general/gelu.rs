//! Recognizing GeLU by what a map's body computes.

use super::*;

/// Whether a one-input `body` computes GeLU: `Some(false)` the exact form
/// `0.5 x (1 + erf(x / sqrt 2))`, `Some(true)` the tanh form, `None` neither. Decided by
/// evaluating the body (in f64, its constants as the f32 they are) at 2,001 points over
/// [-20, 20] and at the ends of the f16 range: every value within 2e-6 relative (1e-6 absolute
/// near 0) of the form. Frontends' expansions (IREE's f32 erf polynomial) agree to ~1e-7;
/// a body that differs anywhere on that grid (another coefficient, a missing scale) does not.
pub fn gelu_form(body: &ScalarProgram) -> Option<bool> {
    if body.inputs != 1 || body.indices != 0 {
        return None;
    }
    let exact = |x: f64| 0.5 * x * (1.0 + scalar::erf(x / std::f64::consts::SQRT_2));
    let tanh = |x: f64| {
        let inner = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
        0.5 * x * (1.0 + inner.tanh())
    };
    let points = (0..=2000)
        .map(|i| -20.0 + 40.0 * f64::from(i) / 2000.0)
        .chain([-65504.0, -100.0, 100.0, 65504.0, 1e-4, -1e-4]);
    let matches = |form: &dyn Fn(f64) -> f64| {
        points.clone().all(|x| {
            let want = form(x);
            let got = body.eval(&[x], &[]);
            (got - want).abs() <= 2e-6 * want.abs().max(0.5)
        })
    };
    if matches(&exact) {
        Some(false)
    } else if matches(&tanh) {
        Some(true)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scalar::Unary;

    fn float(x: f32) -> ScalarOp {
        ScalarOp::Float(x.to_bits())
    }

    /// `0.5 x (1 + erf(x * c))`.
    fn erf_gelu(c: f32) -> ScalarProgram {
        ScalarProgram {
            inputs: 1,
            indices: 0,
            ops: vec![
                ScalarOp::Input(0),
                float(c),
                ScalarOp::Binary(Binary::Mul, 0, 1),
                ScalarOp::Unary(Unary::Erf, 2),
                float(1.0),
                ScalarOp::Binary(Binary::Add, 3, 4),
                float(0.5),
                ScalarOp::Binary(Binary::Mul, 0, 6),
                ScalarOp::Binary(Binary::Mul, 7, 5),
            ],
            result: 8,
        }
    }

    #[test]
    fn gelu_is_recognized_by_what_the_body_computes() {
        assert_eq!(
            gelu_form(&erf_gelu(std::f32::consts::FRAC_1_SQRT_2)),
            Some(false)
        );
        // erf(x) without the 1/sqrt(2) scale, or a slightly wrong scale, is not GeLU.
        assert_eq!(gelu_form(&erf_gelu(1.0)), None);
        assert_eq!(gelu_form(&erf_gelu(0.7)), None);
        // The tanh form: 0.5 x (1 + tanh(k (x + 0.044715 x^3))).
        let tanh = |cubic: f32| ScalarProgram {
            inputs: 1,
            indices: 0,
            ops: vec![
                ScalarOp::Input(0),
                ScalarOp::Binary(Binary::Mul, 0, 0),
                ScalarOp::Binary(Binary::Mul, 1, 0),
                float(cubic),
                ScalarOp::Binary(Binary::Mul, 2, 3),
                ScalarOp::Binary(Binary::Add, 0, 4),
                float(0.797_884_6),
                ScalarOp::Binary(Binary::Mul, 5, 6),
                ScalarOp::Unary(Unary::Tanh, 7),
                float(1.0),
                ScalarOp::Binary(Binary::Add, 8, 9),
                float(0.5),
                ScalarOp::Binary(Binary::Mul, 0, 11),
                ScalarOp::Binary(Binary::Mul, 12, 10),
            ],
            result: 13,
        };
        assert_eq!(gelu_form(&tanh(0.044_715)), Some(true));
        assert_eq!(gelu_form(&tanh(0.447_15)), None);
        // Two inputs, or element indices, are never GeLU.
        let mut two = erf_gelu(std::f32::consts::FRAC_1_SQRT_2);
        two.inputs = 2;
        assert_eq!(gelu_form(&two), None);
    }
}
