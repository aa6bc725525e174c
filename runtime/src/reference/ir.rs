//! The plain-data form of an `ipu` graph module the evaluator runs: no MLIR types, so programs
//! can be built by hand in tests.

use std::collections::BTreeMap;

use ipu_dialects::ElementType;

use super::round::Grid;

/// A value of a function: arguments are `0..arguments`, then op results in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ValueId(pub usize);

/// A value's static type: shape, element type and, for FP8, the scale its codes carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueType {
    pub shape: Vec<usize>,
    pub element: ElementType,
    /// Power-of-two FP8 scale exponent (value = code * 2^scale); 0 for f16 and f32.
    pub scale: i32,
}

impl ValueType {
    pub fn new(shape: &[usize], element: ElementType) -> ValueType {
        ValueType {
            shape: shape.to_vec(),
            element,
            scale: 0,
        }
    }

    pub fn with_scale(mut self, scale: i32) -> ValueType {
        self.scale = scale;
        self
    }

    pub fn elements(&self) -> usize {
        self.shape.iter().product()
    }

    /// The grid results of this type are rounded onto.
    pub fn grid(&self) -> Grid {
        Grid::of(self.element, self.scale)
    }

    /// `tensor<4x8xf16>` (with ` scale=-3` for scaled FP8), for messages.
    pub fn describe(&self) -> String {
        let mut text = String::from("tensor<");
        for size in &self.shape {
            text.push_str(&format!("{size}x"));
        }
        text.push_str(self.element.mlir_name());
        text.push('>');
        if self.element.is_fp8() && self.scale != 0 {
            text.push_str(&format!(" scale={}", self.scale));
        }
        text
    }
}

/// GeLU's two forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeluApproximation {
    /// `0.5 x (1 + erf(x / sqrt 2))`.
    Erf,
    /// `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
    Tanh,
}

/// What an op computes, with its attributes.
#[derive(Debug, Clone, PartialEq)]
pub enum OpKind {
    Matmul {
        transpose_lhs: bool,
        transpose_rhs: bool,
    },
    Add,
    Gelu(GeluApproximation),
    Softmax,
    LayerNorm {
        epsilon: f64,
    },
    /// `scale: None` means `1/sqrt(D)`.
    Attention {
        causal: bool,
        scale: Option<f64>,
    },
    /// The `scale` attribute (0 when absent).
    Cast {
        scale: i32,
    },
    Rearrange {
        permutation: Option<Vec<usize>>,
    },
    Repeat {
        body: String,
        count: u64,
    },
    /// `arith.constant`: row-major values (one value for a splat).
    Constant {
        values: Vec<f64>,
    },
    Call {
        callee: String,
    },
}

impl OpKind {
    /// The MLIR op name, for messages.
    pub fn op_name(&self) -> &'static str {
        match self {
            OpKind::Matmul { .. } => "ipu.matmul",
            OpKind::Add => "ipu.add",
            OpKind::Gelu(_) => "ipu.gelu",
            OpKind::Softmax => "ipu.softmax",
            OpKind::LayerNorm { .. } => "ipu.layer_norm",
            OpKind::Attention { .. } => "ipu.attention",
            OpKind::Cast { .. } => "ipu.cast",
            OpKind::Rearrange { .. } => "ipu.rearrange",
            OpKind::Repeat { .. } => "ipu.repeat",
            OpKind::Constant { .. } => "arith.constant",
            OpKind::Call { .. } => "func.call",
        }
    }
}

/// One op: operands and results are values of the enclosing function.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    pub kind: OpKind,
    pub operands: Vec<ValueId>,
    pub results: Vec<ValueId>,
    /// The op's MLIR location as printed (`loc("model.mlir":4:8)`), for messages.
    pub location: String,
}

/// A `func.func`: argument and value types, and its body unless it is a declaration.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub name: String,
    /// Types of every value; the first `arguments` are the arguments.
    pub values: Vec<ValueType>,
    pub arguments: usize,
    pub result_types: Vec<ValueType>,
    /// `None` for a declaration.
    pub body: Option<Vec<Operation>>,
    /// The values `func.return` yields.
    pub returns: Vec<ValueId>,
}

impl Function {
    /// A function with the given argument types and no body yet.
    pub fn new(name: &str, arguments: Vec<ValueType>) -> Function {
        Function {
            name: name.to_string(),
            arguments: arguments.len(),
            values: arguments,
            result_types: Vec::new(),
            body: Some(Vec::new()),
            returns: Vec::new(),
        }
    }

    /// Appends an op with results of the given types; returns the result values.
    pub fn push(
        &mut self,
        kind: OpKind,
        operands: &[ValueId],
        results: Vec<ValueType>,
    ) -> Vec<ValueId> {
        let ids: Vec<ValueId> = (0..results.len())
            .map(|index| ValueId(self.values.len() + index))
            .collect();
        self.values.extend(results);
        let operation = Operation {
            kind,
            operands: operands.to_vec(),
            results: ids.clone(),
            location: format!("{}#op{}", self.name, self.body.as_ref().map_or(0, Vec::len)),
        };
        self.body.get_or_insert_with(Vec::new).push(operation);
        ids
    }

    /// Sets the returned values (their types become the function's result types).
    pub fn set_returns(&mut self, returns: &[ValueId]) {
        self.returns = returns.to_vec();
        self.result_types = returns
            .iter()
            .filter_map(|id| self.values.get(id.0).cloned())
            .collect();
    }

    /// The argument's value.
    pub fn argument(&self, index: usize) -> ValueId {
        ValueId(index)
    }

    /// Types of the arguments.
    pub fn argument_types(&self) -> &[ValueType] {
        &self.values[..self.arguments.min(self.values.len())]
    }

    /// Resolves an argument by name: `"2"`, `"arg2"` or `"%arg2"`.
    pub fn argument_index(&self, name: &str) -> Option<usize> {
        let digits = name.trim_start_matches('%').trim_start_matches("arg");
        let index: usize = digits.parse().ok()?;
        (index < self.arguments).then_some(index)
    }
}

/// Every function of a module, by symbol name.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    pub functions: BTreeMap<String, Function>,
}

impl Program {
    pub fn new() -> Program {
        Program::default()
    }

    pub fn insert(&mut self, function: Function) {
        self.functions.insert(function.name.clone(), function);
    }

    /// The entry function: the only function with a body that no `func.call` or
    /// `ipu.repeat` refers to (`None` when there is not exactly one).
    pub fn entry(&self) -> Option<&str> {
        let called: std::collections::BTreeSet<&str> = self
            .functions
            .values()
            .filter_map(|function| function.body.as_ref())
            .flatten()
            .filter_map(|operation| match &operation.kind {
                OpKind::Call { callee } => Some(callee.as_str()),
                OpKind::Repeat { body, .. } => Some(body.as_str()),
                _ => None,
            })
            .collect();
        let mut roots = self
            .functions
            .values()
            .filter(|function| function.body.is_some() && !called.contains(function.name.as_str()));
        match (roots.next(), roots.next()) {
            (Some(root), None) => Some(root.name.as_str()),
            _ => None,
        }
    }
}
