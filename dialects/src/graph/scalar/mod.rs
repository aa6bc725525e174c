//! Scalar programs: the per-element body of an elementwise op (`ipu.map`), as plain data.
//!
//! A program is a list of scalar ops in SSA order over three kinds of values: floats (computed
//! in f32 on the device, whatever the tensors' element types), integers (indices and integer
//! arithmetic, i64) and booleans (comparisons, masks). It is read from the arith/math ops of a
//! body function or a `linalg.generic` region ([`read_block`]), evaluated by the host
//! reference ([`ScalarProgram::eval`]), printed back as a `func.func` ([`ScalarProgram::to_function`])
//! and compiled into the device's map kernel from the same list, so all three agree on one
//! definition.

use serde::{Deserialize, Serialize};

mod read;

pub use read::{read_block, scalar_type, ArgumentRole, ScalarReadError};

/// The kind of a scalar value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ScalarType {
    /// A float, computed in f32.
    Float,
    /// An integer or index, computed in i64.
    Int,
    /// An `i1`.
    Bool,
}

/// One-operand float functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Unary {
    Neg,
    Abs,
    Exp,
    Exp2,
    Expm1,
    Log,
    Log2,
    Log1p,
    Tanh,
    Erf,
    Erfc,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Floor,
    Ceil,
    /// Rounds to f16 and back (an `arith.truncf` to f16 followed by use as a float).
    RoundF16,
}

/// Two-operand float functions. `Max`/`Min` propagate NaN (`arith.maximumf`), `MaxNum` and
/// `MinNum` prefer the number (`arith.maxnumf`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Binary {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Max,
    Min,
    MaxNum,
    MinNum,
    Pow,
}

/// Two-operand integer (and boolean) functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum IntBinary {
    Add,
    Sub,
    Mul,
    DivS,
    RemS,
    MaxS,
    MinS,
    And,
    Or,
    Xor,
}

/// Float comparison predicates (as `arith.cmpf` numbers them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum FloatPredicate {
    False,
    Oeq,
    Ogt,
    Oge,
    Olt,
    Ole,
    One,
    Ord,
    Ueq,
    Ugt,
    Uge,
    Ult,
    Ule,
    Une,
    Uno,
    True,
}

/// Integer comparison predicates (as `arith.cmpi` numbers them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum IntPredicate {
    Eq,
    Ne,
    Slt,
    Sle,
    Sgt,
    Sge,
    Ult,
    Ule,
    Ugt,
    Uge,
}

/// One scalar op; operands are indices of earlier ops.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ScalarOp {
    /// Element of input tensor `n` (a float).
    Input(usize),
    /// The element's index along result axis `n` (an integer).
    Index(usize),
    /// A float constant, by its f32 bits.
    Float(u32),
    Int(i64),
    Bool(bool),
    Unary(Unary, usize),
    Binary(Binary, usize, usize),
    /// `a * b + c` with one rounding.
    Fma(usize, usize, usize),
    IntBinary(IntBinary, usize, usize),
    CmpF(FloatPredicate, usize, usize),
    CmpI(IntPredicate, usize, usize),
    /// `cond ? a : b`.
    Select(usize, usize, usize),
    /// Signed integer to float.
    IntToFloat(usize),
    /// Boolean to integer (0 or 1; `arith.extui` of an i1).
    BoolToInt(usize),
    /// Float to signed integer, truncating.
    FloatToInt(usize),
}

/// A per-element program: `inputs` float inputs, `indices` result-axis indices (0, or the
/// result's rank), `ops` in order, `result` the float op it returns.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ScalarProgram {
    pub inputs: usize,
    pub indices: usize,
    pub ops: Vec<ScalarOp>,
    pub result: usize,
}

/// A scalar value during evaluation.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scalar {
    F(f64),
    I(i64),
    B(bool),
}

impl Scalar {
    fn f(self) -> f64 {
        match self {
            Scalar::F(x) => x,
            Scalar::I(i) => i as f64,
            Scalar::B(b) => f64::from(u8::from(b)),
        }
    }
    fn i(self) -> i64 {
        match self {
            Scalar::I(i) => i,
            Scalar::B(b) => i64::from(b),
            Scalar::F(x) => x as i64,
        }
    }
    fn b(self) -> bool {
        match self {
            Scalar::B(b) => b,
            Scalar::I(i) => i != 0,
            Scalar::F(x) => x != 0.0,
        }
    }
}

impl ScalarOp {
    /// The operands of the op (indices of earlier ops).
    pub fn operands(&self) -> Vec<usize> {
        match *self {
            ScalarOp::Input(_)
            | ScalarOp::Index(_)
            | ScalarOp::Float(_)
            | ScalarOp::Int(_)
            | ScalarOp::Bool(_) => Vec::new(),
            ScalarOp::Unary(_, a)
            | ScalarOp::IntToFloat(a)
            | ScalarOp::BoolToInt(a)
            | ScalarOp::FloatToInt(a) => vec![a],
            ScalarOp::Binary(_, a, b)
            | ScalarOp::IntBinary(_, a, b)
            | ScalarOp::CmpF(_, a, b)
            | ScalarOp::CmpI(_, a, b) => vec![a, b],
            ScalarOp::Fma(a, b, c) | ScalarOp::Select(a, b, c) => vec![a, b, c],
        }
    }

    /// The same op with its operands renumbered by `map`.
    pub fn renumbered(&self, map: impl Fn(usize) -> usize) -> ScalarOp {
        match *self {
            ScalarOp::Unary(f, a) => ScalarOp::Unary(f, map(a)),
            ScalarOp::IntToFloat(a) => ScalarOp::IntToFloat(map(a)),
            ScalarOp::BoolToInt(a) => ScalarOp::BoolToInt(map(a)),
            ScalarOp::FloatToInt(a) => ScalarOp::FloatToInt(map(a)),
            ScalarOp::Binary(f, a, b) => ScalarOp::Binary(f, map(a), map(b)),
            ScalarOp::IntBinary(f, a, b) => ScalarOp::IntBinary(f, map(a), map(b)),
            ScalarOp::CmpF(p, a, b) => ScalarOp::CmpF(p, map(a), map(b)),
            ScalarOp::CmpI(p, a, b) => ScalarOp::CmpI(p, map(a), map(b)),
            ScalarOp::Fma(a, b, c) => ScalarOp::Fma(map(a), map(b), map(c)),
            ScalarOp::Select(a, b, c) => ScalarOp::Select(map(a), map(b), map(c)),
            ref leaf => leaf.clone(),
        }
    }
}

impl Unary {
    /// The op's MLIR name.
    pub fn mlir(self) -> &'static str {
        match self {
            Unary::Neg => "arith.negf",
            Unary::Abs => "math.absf",
            Unary::Exp => "math.exp",
            Unary::Exp2 => "math.exp2",
            Unary::Expm1 => "math.expm1",
            Unary::Log => "math.log",
            Unary::Log2 => "math.log2",
            Unary::Log1p => "math.log1p",
            Unary::Tanh => "math.tanh",
            Unary::Erf => "math.erf",
            Unary::Erfc => "math.erfc",
            Unary::Sqrt => "math.sqrt",
            Unary::Rsqrt => "math.rsqrt",
            Unary::Sin => "math.sin",
            Unary::Cos => "math.cos",
            Unary::Floor => "math.floor",
            Unary::Ceil => "math.ceil",
            Unary::RoundF16 => "ipu.round_f16",
        }
    }

    fn apply(self, x: f64) -> f64 {
        match self {
            Unary::Neg => -x,
            Unary::Abs => x.abs(),
            Unary::Exp => x.exp(),
            Unary::Exp2 => x.exp2(),
            Unary::Expm1 => x.exp_m1(),
            Unary::Log => x.ln(),
            Unary::Log2 => x.log2(),
            Unary::Log1p => x.ln_1p(),
            Unary::Tanh => x.tanh(),
            Unary::Erf => erf(x),
            Unary::Erfc => 1.0 - erf(x),
            Unary::Sqrt => x.sqrt(),
            Unary::Rsqrt => 1.0 / x.sqrt(),
            Unary::Sin => x.sin(),
            Unary::Cos => x.cos(),
            Unary::Floor => x.floor(),
            Unary::Ceil => x.ceil(),
            Unary::RoundF16 => round_f16(x),
        }
    }

    /// Relative cost in vector cycles per element on a tile (see the map kernel's cost).
    pub fn is_transcendental(self) -> bool {
        !matches!(
            self,
            Unary::Neg | Unary::Abs | Unary::Floor | Unary::Ceil | Unary::RoundF16
        )
    }
}

impl Binary {
    pub fn mlir(self) -> &'static str {
        match self {
            Binary::Add => "arith.addf",
            Binary::Sub => "arith.subf",
            Binary::Mul => "arith.mulf",
            Binary::Div => "arith.divf",
            Binary::Rem => "arith.remf",
            Binary::Max => "arith.maximumf",
            Binary::Min => "arith.minimumf",
            Binary::MaxNum => "arith.maxnumf",
            Binary::MinNum => "arith.minnumf",
            Binary::Pow => "math.powf",
        }
    }

    fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            Binary::Add => a + b,
            Binary::Sub => a - b,
            Binary::Mul => a * b,
            Binary::Div => a / b,
            Binary::Rem => a % b,
            Binary::Max if a.is_nan() || b.is_nan() => f64::NAN,
            Binary::Min if a.is_nan() || b.is_nan() => f64::NAN,
            Binary::Max | Binary::MaxNum => a.max(b),
            Binary::Min | Binary::MinNum => a.min(b),
            Binary::Pow => a.powf(b),
        }
    }
}

impl IntBinary {
    pub fn mlir(self) -> &'static str {
        match self {
            IntBinary::Add => "arith.addi",
            IntBinary::Sub => "arith.subi",
            IntBinary::Mul => "arith.muli",
            IntBinary::DivS => "arith.divsi",
            IntBinary::RemS => "arith.remsi",
            IntBinary::MaxS => "arith.maxsi",
            IntBinary::MinS => "arith.minsi",
            IntBinary::And => "arith.andi",
            IntBinary::Or => "arith.ori",
            IntBinary::Xor => "arith.xori",
        }
    }

    fn apply(self, a: i64, b: i64) -> Option<i64> {
        Some(match self {
            IntBinary::Add => a.wrapping_add(b),
            IntBinary::Sub => a.wrapping_sub(b),
            IntBinary::Mul => a.wrapping_mul(b),
            IntBinary::DivS => a.checked_div(b)?,
            IntBinary::RemS => a.checked_rem(b)?,
            IntBinary::MaxS => a.max(b),
            IntBinary::MinS => a.min(b),
            IntBinary::And => a & b,
            IntBinary::Or => a | b,
            IntBinary::Xor => a ^ b,
        })
    }
}

const FLOAT_PREDICATES: [FloatPredicate; 16] = [
    FloatPredicate::False,
    FloatPredicate::Oeq,
    FloatPredicate::Ogt,
    FloatPredicate::Oge,
    FloatPredicate::Olt,
    FloatPredicate::Ole,
    FloatPredicate::One,
    FloatPredicate::Ord,
    FloatPredicate::Ueq,
    FloatPredicate::Ugt,
    FloatPredicate::Uge,
    FloatPredicate::Ult,
    FloatPredicate::Ule,
    FloatPredicate::Une,
    FloatPredicate::Uno,
    FloatPredicate::True,
];

const INT_PREDICATES: [IntPredicate; 10] = [
    IntPredicate::Eq,
    IntPredicate::Ne,
    IntPredicate::Slt,
    IntPredicate::Sle,
    IntPredicate::Sgt,
    IntPredicate::Sge,
    IntPredicate::Ult,
    IntPredicate::Ule,
    IntPredicate::Ugt,
    IntPredicate::Uge,
];

impl FloatPredicate {
    /// The predicate's name in `arith.cmpf` syntax.
    pub fn mlir(self) -> &'static str {
        [
            "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult",
            "ule", "une", "uno", "true",
        ][FLOAT_PREDICATES
            .iter()
            .position(|&p| p == self)
            .unwrap_or(0)]
    }

    fn apply(self, a: f64, b: f64) -> bool {
        let unordered = a.is_nan() || b.is_nan();
        let ordered = |f: fn(f64, f64) -> bool| !unordered && f(a, b);
        let or_unordered = |f: fn(f64, f64) -> bool| unordered || f(a, b);
        match self {
            FloatPredicate::False => false,
            FloatPredicate::True => true,
            FloatPredicate::Oeq => ordered(|a, b| a == b),
            FloatPredicate::Ogt => ordered(|a, b| a > b),
            FloatPredicate::Oge => ordered(|a, b| a >= b),
            FloatPredicate::Olt => ordered(|a, b| a < b),
            FloatPredicate::Ole => ordered(|a, b| a <= b),
            FloatPredicate::One => ordered(|a, b| a != b),
            FloatPredicate::Ord => !unordered,
            FloatPredicate::Ueq => or_unordered(|a, b| a == b),
            FloatPredicate::Ugt => or_unordered(|a, b| a > b),
            FloatPredicate::Uge => or_unordered(|a, b| a >= b),
            FloatPredicate::Ult => or_unordered(|a, b| a < b),
            FloatPredicate::Ule => or_unordered(|a, b| a <= b),
            FloatPredicate::Une => or_unordered(|a, b| a != b),
            FloatPredicate::Uno => unordered,
        }
    }
}

impl IntPredicate {
    pub fn mlir(self) -> &'static str {
        [
            "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
        ][INT_PREDICATES.iter().position(|&p| p == self).unwrap_or(0)]
    }

    fn apply(self, a: i64, b: i64) -> bool {
        let (ua, ub) = (a as u64, b as u64);
        match self {
            IntPredicate::Eq => a == b,
            IntPredicate::Ne => a != b,
            IntPredicate::Slt => a < b,
            IntPredicate::Sle => a <= b,
            IntPredicate::Sgt => a > b,
            IntPredicate::Sge => a >= b,
            IntPredicate::Ult => ua < ub,
            IntPredicate::Ule => ua <= ub,
            IntPredicate::Ugt => ua > ub,
            IntPredicate::Uge => ua >= ub,
        }
    }
}

/// erf in f64 from the everywhere-positive series
/// `erf(x) = 2/sqrt(pi) e^(-x^2) sum_n 2^n x^(2n+1) / (1*3*...*(2n+1))`, which has no
/// cancellation; beyond |x| = 6, erf is 1 to within 2e-17. (The host reference's one erf:
/// `ipu.gelu`'s and map bodies'.)
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.abs() >= 6.0 {
        return x.signum();
    }
    let square = x * x;
    let mut term = x;
    let mut sum = x;
    let mut n = 0.0;
    while term.abs() > sum.abs() * 1e-17 {
        n += 1.0;
        term *= 2.0 * square / (2.0 * n + 1.0);
        sum += term;
    }
    2.0 / std::f64::consts::PI.sqrt() * (-square).exp() * sum
}

/// `x` rounded to the nearest f16 (ties to even), saturating to infinity beyond 65520.
fn round_f16(x: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let a = x.abs();
    if a >= 65520.0 {
        return f64::INFINITY.copysign(x);
    }
    // Spacing of f16 values around a: 2^(e - 10) for normals, 2^-24 for subnormals.
    let exponent = a.log2().floor().max(-14.0);
    let quantum = (exponent - 10.0).exp2();
    let q = a / quantum;
    let rounded = {
        let floor = q.floor();
        let diff = q - floor;
        if diff > 0.5 || (diff == 0.5 && floor % 2.0 != 0.0) {
            floor + 1.0
        } else {
            floor
        }
    };
    (rounded * quantum).copysign(x)
}

impl ScalarProgram {
    /// The program returning its one input (a copy, or a broadcast).
    pub fn identity() -> ScalarProgram {
        ScalarProgram {
            inputs: 1,
            indices: 0,
            ops: vec![ScalarOp::Input(0)],
            result: 0,
        }
    }

    /// The type of each op's value, or why the program is ill-typed.
    pub fn types(&self) -> Result<Vec<ScalarType>, String> {
        let mut types: Vec<ScalarType> = Vec::with_capacity(self.ops.len());
        for (index, op) in self.ops.iter().enumerate() {
            for operand in op.operands() {
                if operand >= index {
                    return Err(format!(
                        "op {index} ({op:?}) reads op {operand}, which does not come before it"
                    ));
                }
            }
            let want = |operand: usize, kind: ScalarType| -> Result<(), String> {
                if types[operand] == kind {
                    Ok(())
                } else {
                    Err(format!(
                        "op {index} ({op:?}) needs a {kind:?} operand, op {operand} is {:?}",
                        types[operand]
                    ))
                }
            };
            let kind = match *op {
                ScalarOp::Input(n) if n < self.inputs => ScalarType::Float,
                ScalarOp::Index(n) if n < self.indices => ScalarType::Int,
                ScalarOp::Input(n) | ScalarOp::Index(n) => {
                    return Err(format!("op {index} ({op:?}): argument {n} does not exist"))
                }
                ScalarOp::Float(_) => ScalarType::Float,
                ScalarOp::Int(_) => ScalarType::Int,
                ScalarOp::Bool(_) => ScalarType::Bool,
                ScalarOp::Unary(_, a) => {
                    want(a, ScalarType::Float)?;
                    ScalarType::Float
                }
                ScalarOp::Binary(_, a, b) => {
                    want(a, ScalarType::Float)?;
                    want(b, ScalarType::Float)?;
                    ScalarType::Float
                }
                ScalarOp::Fma(a, b, c) => {
                    for x in [a, b, c] {
                        want(x, ScalarType::Float)?;
                    }
                    ScalarType::Float
                }
                ScalarOp::IntBinary(f, a, b) => {
                    let kind = types[a];
                    let logical = matches!(f, IntBinary::And | IntBinary::Or | IntBinary::Xor);
                    if kind == ScalarType::Float || (kind == ScalarType::Bool && !logical) {
                        return Err(format!(
                            "op {index} ({op:?}) on a {kind:?} operand (op {a})"
                        ));
                    }
                    want(b, kind)?;
                    kind
                }
                ScalarOp::CmpF(_, a, b) => {
                    want(a, ScalarType::Float)?;
                    want(b, ScalarType::Float)?;
                    ScalarType::Bool
                }
                ScalarOp::CmpI(_, a, b) => {
                    want(a, ScalarType::Int)?;
                    want(b, ScalarType::Int)?;
                    ScalarType::Bool
                }
                ScalarOp::Select(c, a, b) => {
                    want(c, ScalarType::Bool)?;
                    let kind = types[a];
                    want(b, kind)?;
                    kind
                }
                ScalarOp::IntToFloat(a) => {
                    want(a, ScalarType::Int)?;
                    ScalarType::Float
                }
                ScalarOp::BoolToInt(a) => {
                    want(a, ScalarType::Bool)?;
                    ScalarType::Int
                }
                ScalarOp::FloatToInt(a) => {
                    want(a, ScalarType::Float)?;
                    ScalarType::Int
                }
            };
            types.push(kind);
        }
        match types.get(self.result) {
            Some(ScalarType::Float) => Ok(types),
            Some(kind) => Err(format!(
                "returns op {} of type {kind:?}, not a float",
                self.result
            )),
            None => Err(format!("returns op {}, which does not exist", self.result)),
        }
    }

    /// The program's value for one element: `inputs` (as f64) and the element's `indices`.
    /// Floats are evaluated in f64 (the host reference); integer division by zero gives NaN.
    pub fn eval(&self, inputs: &[f64], indices: &[i64]) -> f64 {
        let mut values: Vec<Scalar> = Vec::with_capacity(self.ops.len());
        for op in &self.ops {
            let v = |i: usize| values[i];
            let value = match *op {
                ScalarOp::Input(n) => Scalar::F(inputs.get(n).copied().unwrap_or(f64::NAN)),
                ScalarOp::Index(n) => Scalar::I(indices.get(n).copied().unwrap_or(0)),
                ScalarOp::Float(bits) => Scalar::F(f64::from(f32::from_bits(bits))),
                ScalarOp::Int(i) => Scalar::I(i),
                ScalarOp::Bool(b) => Scalar::B(b),
                ScalarOp::Unary(f, a) => Scalar::F(f.apply(v(a).f())),
                ScalarOp::Binary(f, a, b) => Scalar::F(f.apply(v(a).f(), v(b).f())),
                ScalarOp::Fma(a, b, c) => Scalar::F(v(a).f().mul_add(v(b).f(), v(c).f())),
                ScalarOp::IntBinary(f, a, b) => match (v(a), v(b)) {
                    (Scalar::B(x), Scalar::B(y)) => {
                        Scalar::B(f.apply(i64::from(x), i64::from(y)).unwrap_or(0) != 0)
                    }
                    (x, y) => match f.apply(x.i(), y.i()) {
                        Some(i) => Scalar::I(i),
                        None => return f64::NAN,
                    },
                },
                ScalarOp::CmpF(p, a, b) => Scalar::B(p.apply(v(a).f(), v(b).f())),
                ScalarOp::CmpI(p, a, b) => Scalar::B(p.apply(v(a).i(), v(b).i())),
                ScalarOp::Select(c, a, b) => {
                    if v(c).b() {
                        v(a)
                    } else {
                        v(b)
                    }
                }
                ScalarOp::IntToFloat(a) => Scalar::F(v(a).i() as f64),
                ScalarOp::BoolToInt(a) => Scalar::I(i64::from(v(a).b())),
                ScalarOp::FloatToInt(a) => Scalar::I(v(a).f() as i64),
            };
            values.push(value);
        }
        values.get(self.result).map_or(f64::NAN, |v| v.f())
    }

    /// How many ops of each cost class one element runs: (simple float or integer ops,
    /// transcendental functions, divisions and square roots).
    pub fn op_counts(&self) -> (u32, u32) {
        let mut simple = 0;
        let mut transcendental = 0;
        for op in &self.ops {
            match op {
                ScalarOp::Input(_)
                | ScalarOp::Index(_)
                | ScalarOp::Float(_)
                | ScalarOp::Int(_)
                | ScalarOp::Bool(_) => {}
                ScalarOp::Unary(f, _) if f.is_transcendental() => transcendental += 1,
                ScalarOp::Binary(Binary::Div | Binary::Rem | Binary::Pow, ..) => {
                    transcendental += 1
                }
                _ => simple += 1,
            }
        }
        (simple, transcendental)
    }

    /// Whether the program reads element indices (a mask or an iota).
    pub fn uses_indices(&self) -> bool {
        self.ops.iter().any(|op| matches!(op, ScalarOp::Index(_)))
    }

    /// The program as MLIR ops on SSA values named `{prefix}{n}` for op n, reading inputs
    /// through `input(n)` and indices through `index(n)` (SSA names of an f32 and an index
    /// value); the returned name is the result's (an f32).
    pub fn to_mlir_ops(
        &self,
        prefix: &str,
        input: &dyn Fn(usize) -> String,
        index: &dyn Fn(usize) -> String,
    ) -> (String, String) {
        let types = self.types().unwrap_or_default();
        let mut text = String::new();
        let name = |n: usize| -> String {
            match self.ops[n] {
                ScalarOp::Input(k) => input(k),
                ScalarOp::Index(k) => format!("%{prefix}ix{k}_{n}"),
                _ => format!("%{prefix}{n}"),
            }
        };
        let ty = |n: usize| match types.get(n) {
            Some(ScalarType::Int) => "i64",
            Some(ScalarType::Bool) => "i1",
            _ => "f32",
        };
        for (n, op) in self.ops.iter().enumerate() {
            let me = name(n);
            let line = match *op {
                ScalarOp::Input(_) => continue,
                ScalarOp::Index(k) => {
                    format!("{me} = arith.index_cast {} : index to i64", index(k))
                }
                ScalarOp::Float(bits) => {
                    format!("{me} = arith.constant {} : f32", float_literal(bits))
                }
                ScalarOp::Int(i) => format!("{me} = arith.constant {i} : i64"),
                ScalarOp::Bool(b) => format!("{me} = arith.constant {b}"),
                ScalarOp::Unary(Unary::RoundF16, a) => format!(
                    "{me}h = arith.truncf {} : f32 to f16\n{me} = arith.extf {me}h : f16 to f32",
                    name(a)
                ),
                ScalarOp::Unary(f, a) => format!("{me} = {} {} : f32", f.mlir(), name(a)),
                ScalarOp::Binary(f, a, b) => {
                    format!("{me} = {} {}, {} : f32", f.mlir(), name(a), name(b))
                }
                ScalarOp::Fma(a, b, c) => {
                    format!(
                        "{me} = math.fma {}, {}, {} : f32",
                        name(a),
                        name(b),
                        name(c)
                    )
                }
                ScalarOp::IntBinary(f, a, b) => {
                    format!("{me} = {} {}, {} : {}", f.mlir(), name(a), name(b), ty(a))
                }
                ScalarOp::CmpF(p, a, b) => {
                    format!(
                        "{me} = arith.cmpf {}, {}, {} : f32",
                        p.mlir(),
                        name(a),
                        name(b)
                    )
                }
                ScalarOp::CmpI(p, a, b) => {
                    format!(
                        "{me} = arith.cmpi {}, {}, {} : i64",
                        p.mlir(),
                        name(a),
                        name(b)
                    )
                }
                ScalarOp::Select(c, a, b) => format!(
                    "{me} = arith.select {}, {}, {} : {}",
                    name(c),
                    name(a),
                    name(b),
                    ty(a)
                ),
                ScalarOp::IntToFloat(a) => format!("{me} = arith.sitofp {} : i64 to f32", name(a)),
                ScalarOp::BoolToInt(a) => format!("{me} = arith.extui {} : i1 to i64", name(a)),
                ScalarOp::FloatToInt(a) => format!("{me} = arith.fptosi {} : f32 to i64", name(a)),
            };
            text.push_str(&line);
            text.push('\n');
        }
        (text, name(self.result))
    }

    /// The program as a private `func.func @name` taking the inputs as f32 (then the indices
    /// as `index`) and returning an f32: the body function of an `ipu.map`.
    pub fn to_function(&self, name: &str) -> String {
        let mut arguments: Vec<String> = (0..self.inputs).map(|k| format!("%x{k}: f32")).collect();
        arguments.extend((0..self.indices).map(|k| format!("%i{k}: index")));
        let (ops, result) = self.to_mlir_ops("v", &|k| format!("%x{k}"), &|k| format!("%i{k}"));
        let mut text = format!(
            "func.func private @{name}({}) -> f32 {{\n",
            arguments.join(", ")
        );
        for line in ops.lines() {
            text.push_str("  ");
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(&format!("  func.return {result} : f32\n}}\n"));
        text
    }

    /// This program with its input `k` computed by `producer` (whose inputs take input `k`'s
    /// place, in order: inputs `0..k`, then the producer's, then `k + 1..`), the two reading
    /// the same element indices: the body of a map of a map.
    pub fn substitute(&self, k: usize, producer: &ScalarProgram) -> ScalarProgram {
        let extra = producer.inputs;
        let mut ops: Vec<ScalarOp> = producer
            .ops
            .iter()
            .map(|op| match *op {
                ScalarOp::Input(j) => ScalarOp::Input(k + j),
                ref other => other.clone(),
            })
            .collect();
        let produced = producer.result;
        // This program's ops after the producer's: input `k` is the producer's result (an op
        // that only forwards it is mapped onto that op), the others renumbered.
        let mut index = Vec::with_capacity(self.ops.len());
        for op in &self.ops {
            match *op {
                ScalarOp::Input(i) if i == k => index.push(produced),
                ScalarOp::Input(i) => {
                    let i = if i < k { i } else { i - 1 + extra };
                    index.push(ops.len());
                    ops.push(ScalarOp::Input(i));
                }
                ref other => {
                    index.push(ops.len());
                    ops.push(other.renumbered(|a| index[a]));
                }
            }
        }
        ScalarProgram {
            inputs: self.inputs - 1 + extra,
            indices: self.indices.max(producer.indices),
            result: index[self.result],
            ops,
        }
        .pruned()
    }

    /// Removes ops the result does not depend on and renumbers the rest.
    pub fn pruned(&self) -> ScalarProgram {
        let mut live = vec![false; self.ops.len()];
        if self.result < live.len() {
            live[self.result] = true;
        }
        for n in (0..self.ops.len()).rev() {
            if live[n] {
                for operand in self.ops[n].operands() {
                    live[operand] = true;
                }
            }
        }
        let mut new_index = vec![usize::MAX; self.ops.len()];
        let mut ops = Vec::new();
        for (n, op) in self.ops.iter().enumerate() {
            if live[n] {
                new_index[n] = ops.len();
                ops.push(op.renumbered(|a| new_index[a]));
            }
        }
        ScalarProgram {
            inputs: self.inputs,
            indices: self.indices,
            result: new_index.get(self.result).copied().unwrap_or(0),
            ops,
        }
    }
}

/// An f32 as an MLIR float literal that reads back exactly: the shortest decimal when it has
/// the point MLIR's syntax needs, else the hex bits (exponent forms, infinities, NaNs).
fn float_literal(bits: u32) -> String {
    let text = format!("{:?}", f32::from_bits(bits));
    if text.contains('.') && !text.contains(['e', 'i', 'N']) {
        text
    } else {
        format!("0x{bits:08X}")
    }
}

#[cfg(test)]
mod tests;
