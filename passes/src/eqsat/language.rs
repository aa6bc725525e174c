//! The e-graph language of the pure `ipu` graph ops and its analysis (shape, element type and
//! splat constants of every e-class).
//!
//! | node | `ipu` op |
//! |---|---|
//! | `(matmul a b)`, `(matmul_tl a b)`, `(matmul_tr a b)`, `(matmul_tt a b)` | `ipu.matmul` without / with `transpose_lhs` / `transpose_rhs` / both |
//! | `(add a b)` | `ipu.add` |
//! | `(gelu a)`, `(gelu_tanh a)` | `ipu.gelu` (erf / tanh form) |
//! | `(softmax a)` | `ipu.softmax` |
//! | `(layer_norm eps:<bits> x gamma beta)` | `ipu.layer_norm` |
//! | `(cast to:<element>@<scale> a)` | `ipu.cast` |
//! | `(t a)` | `ipu.rearrange` swapping the last two axes, no format |
//! | `name:<shape>:<element>[=<splat>]` | a leaf: a function argument, a constant or another op's result |
//!
//! Matmuls whose result element differs from the operands' (F16 into F32 partials) are leaves:
//! the node carries no result element, and reassociating them would change the accumulator.

use std::fmt;
use std::str::FromStr;

use egg::{define_language, Analysis, DidMerge, EGraph, Id};
use ipu_dialects::{ipu::verify::broadcast_shapes, ipu::verify::matmul_shape, tensor::ElementType};

/// A leaf value: an SSA value the e-graph does not look into, with its type (and its value when
/// it is a splat constant), so the analysis needs no side table.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Leaf {
    pub name: String,
    pub shape: Vec<i64>,
    pub element: ElementType,
    /// The bits of the `f64` every element equals, for a splat constant.
    pub splat_bits: Option<u64>,
}

/// Attributes carried as leaf nodes: a cast's target and scale, a layer norm's epsilon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Attr {
    CastTo {
        element: ElementType,
        scale: i64,
    },
    /// The bits of the `f64` epsilon.
    Epsilon(u64),
}

define_language! {
    /// The pure `ipu` graph ops (see the module table).
    pub enum Ipu {
        "matmul" = Matmul([Id; 2]),
        "matmul_tl" = MatmulTl([Id; 2]),
        "matmul_tr" = MatmulTr([Id; 2]),
        "matmul_tt" = MatmulTt([Id; 2]),
        "add" = Add([Id; 2]),
        "gelu" = Gelu(Id),
        "gelu_tanh" = GeluTanh(Id),
        "softmax" = Softmax(Id),
        "layer_norm" = LayerNorm([Id; 4]),
        "cast" = Cast([Id; 2]),
        "t" = Transpose(Id),
        Attr(Attr),
        Leaf(Leaf),
    }
}

impl Ipu {
    /// The transpose flags of a matmul node, `None` for any other node.
    pub fn matmul_flags(&self) -> Option<(bool, bool)> {
        match self {
            Ipu::Matmul(_) => Some((false, false)),
            Ipu::MatmulTl(_) => Some((true, false)),
            Ipu::MatmulTr(_) => Some((false, true)),
            Ipu::MatmulTt(_) => Some((true, true)),
            _ => None,
        }
    }
}

fn shape_text(shape: &[i64]) -> String {
    let items: Vec<String> = shape.iter().map(|size| size.to_string()).collect();
    items.join("x")
}

impl fmt::Display for Leaf {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        write!(
            formatter,
            "{}:{}:{}",
            self.name,
            shape_text(&self.shape),
            self.element
        )?;
        if let Some(bits) = self.splat_bits {
            write!(formatter, "={}", f64::from_bits(bits))?;
        }
        Ok(())
    }
}

impl FromStr for Leaf {
    type Err = String;

    /// `a:16x32:f16` or `zero:16x32:f16=0`; a rank-0 shape is empty (`s::f32`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (text, splat_bits) = match text.split_once('=') {
            Some((head, value)) => {
                let value: f64 = value
                    .parse()
                    .map_err(|_| format!("bad splat value in leaf '{text}'"))?;
                (head, Some(value.to_bits()))
            }
            None => (text, None),
        };
        let mut parts = text.split(':');
        let (Some(name), Some(shape), Some(element), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(format!("leaf '{text}' is not name:shape:element"));
        };
        let shape = if shape.is_empty() {
            Vec::new()
        } else {
            shape
                .split('x')
                .map(|size| {
                    size.parse()
                        .map_err(|_| format!("bad shape in leaf '{text}'"))
                })
                .collect::<Result<_, _>>()?
        };
        let element = ElementType::from_mlir_name(element)
            .ok_or_else(|| format!("bad element type in leaf '{text}'"))?;
        if name.is_empty() || name.starts_with('?') {
            return Err(format!("leaf '{text}' needs a name"));
        }
        Ok(Leaf {
            name: name.to_string(),
            shape,
            element,
            splat_bits,
        })
    }
}

impl fmt::Display for Attr {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Attr::CastTo { element, scale } => write!(formatter, "to:{element}@{scale}"),
            Attr::Epsilon(bits) => write!(formatter, "eps:{}", f64::from_bits(*bits)),
        }
    }
}

impl FromStr for Attr {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if let Some(rest) = text.strip_prefix("to:") {
            let (element, scale) = rest.split_once('@').unwrap_or((rest, "0"));
            let element = ElementType::from_mlir_name(element)
                .ok_or_else(|| format!("bad cast target '{text}'"))?;
            let scale = scale
                .parse()
                .map_err(|_| format!("bad cast scale '{text}'"))?;
            return Ok(Attr::CastTo { element, scale });
        }
        if let Some(rest) = text.strip_prefix("eps:") {
            let epsilon: f64 = rest.parse().map_err(|_| format!("bad epsilon '{text}'"))?;
            return Ok(Attr::Epsilon(epsilon.to_bits()));
        }
        Err(format!("'{text}' is not an attribute"))
    }
}

/// What the analysis knows about a tensor e-class.
#[derive(Debug, Clone, PartialEq)]
pub struct Info {
    pub shape: Vec<i64>,
    pub element: ElementType,
    /// The value of every element, when the class is a splat constant.
    pub splat: Option<f64>,
}

impl Info {
    pub fn elements(&self) -> u64 {
        self.shape.iter().map(|&size| size.max(0) as u64).product()
    }

    /// Rows and columns when the last axis is kept and the others are flattened.
    pub fn rows_and_columns(&self) -> (u64, u64) {
        let columns = self
            .shape
            .last()
            .map(|&size| size.max(0) as u64)
            .unwrap_or(1);
        (self.elements() / columns.max(1), columns)
    }
}

/// The analysis data of an e-class: a tensor, an attribute, or a node whose shapes do not
/// type-check (rules are guarded so that such nodes are never added; see `rules`).
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    Tensor(Info),
    Attr(Attr),
    Invalid,
}

impl Data {
    pub fn tensor(&self) -> Option<&Info> {
        match self {
            Data::Tensor(info) => Some(info),
            _ => None,
        }
    }
}

/// Whether converting `from` (FP8 scale `scale`) to `to` loses nothing: the same table as
/// `ipu-canonicalize`'s cast folding.
pub fn exact_conversion(from: ElementType, scale: i64, to: ElementType) -> bool {
    match (from, to) {
        (a, b) if a == b => scale == 0,
        (ElementType::F16, ElementType::F32) => true,
        // Every scaled FP8 value is a small power-of-two multiple, well inside f32's range.
        (ElementType::F8E4M3 | ElementType::F8E5M2, ElementType::F32) => true,
        // Unscaled F143 (max 240, min 2^-10) and F152 (max 57344, min 2^-17) fit f16 exactly.
        (ElementType::F8E4M3 | ElementType::F8E5M2, ElementType::F16) => scale == 0,
        _ => false,
    }
}

fn swap_last_two(shape: &[i64]) -> Option<Vec<i64>> {
    let rank = shape.len();
    if rank < 2 {
        return None;
    }
    let mut swapped = shape.to_vec();
    swapped.swap(rank - 2, rank - 1);
    Some(swapped)
}

/// The data of `node` given its children's data: the one place shapes are inferred, used by
/// the analysis, the rule guards and the cost function.
pub fn node_data<'d>(node: &Ipu, child: impl Fn(Id) -> &'d Data) -> Data {
    let tensor = |id: Id| child(id).tensor();
    let inferred = (|| -> Option<Info> {
        match node {
            Ipu::Leaf(leaf) => Some(Info {
                shape: leaf.shape.clone(),
                element: leaf.element,
                splat: leaf.splat_bits.map(f64::from_bits),
            }),
            Ipu::Attr(_) => None,
            Ipu::Matmul([a, b])
            | Ipu::MatmulTl([a, b])
            | Ipu::MatmulTr([a, b])
            | Ipu::MatmulTt([a, b]) => {
                let (lhs, rhs) = (tensor(*a)?, tensor(*b)?);
                let (transpose_lhs, transpose_rhs) = node.matmul_flags()?;
                let shape =
                    matmul_shape(&lhs.shape, &rhs.shape, transpose_lhs, transpose_rhs).ok()?;
                (lhs.element == rhs.element).then_some(Info {
                    shape,
                    element: lhs.element,
                    splat: None,
                })
            }
            Ipu::Add([a, b]) => {
                let (lhs, rhs) = (tensor(*a)?, tensor(*b)?);
                let shape = broadcast_shapes(&lhs.shape, &rhs.shape)?;
                let splat = match (lhs.splat, rhs.splat) {
                    (Some(x), Some(y)) => Some(x + y),
                    _ => None,
                };
                (lhs.element == rhs.element).then_some(Info {
                    shape,
                    element: lhs.element,
                    splat,
                })
            }
            Ipu::Gelu(a) | Ipu::GeluTanh(a) => {
                let input = tensor(*a)?;
                let splat = input.splat.filter(|value| *value == 0.0);
                (!input.shape.is_empty()).then(|| Info {
                    splat,
                    ..input.clone()
                })
            }
            Ipu::Softmax(a) => {
                let input = tensor(*a)?;
                (!input.shape.is_empty()).then(|| Info {
                    splat: None,
                    ..input.clone()
                })
            }
            Ipu::LayerNorm([epsilon, x, gamma, beta]) => {
                let Data::Attr(Attr::Epsilon(_)) = child(*epsilon) else {
                    return None;
                };
                let (input, gamma, beta) = (tensor(*x)?, tensor(*gamma)?, tensor(*beta)?);
                let last = *input.shape.last()?;
                let ok = gamma.shape == [last] && beta.shape == [last];
                ok.then(|| Info {
                    splat: None,
                    ..input.clone()
                })
            }
            Ipu::Cast([to, a]) => {
                let Data::Attr(Attr::CastTo { element, scale }) = child(*to) else {
                    return None;
                };
                let input = tensor(*a)?;
                if *scale != 0 && !input.element.is_fp8() && !element.is_fp8() {
                    return None;
                }
                let source_scale = if input.element.is_fp8() { *scale } else { 0 };
                let splat = input
                    .splat
                    .filter(|_| exact_conversion(input.element, source_scale, *element));
                Some(Info {
                    shape: input.shape.clone(),
                    element: *element,
                    splat,
                })
            }
            Ipu::Transpose(a) => {
                let input = tensor(*a)?;
                Some(Info {
                    shape: swap_last_two(&input.shape)?,
                    ..input.clone()
                })
            }
        }
    })();
    match (node, inferred) {
        (Ipu::Attr(attr), _) => Data::Attr(*attr),
        (_, Some(info)) => Data::Tensor(info),
        (_, None) => Data::Invalid,
    }
}

/// Shapes, element types and splat constants of e-classes.
#[derive(Debug, Default, Clone)]
pub struct ShapeAnalysis;

/// The e-graph of this language.
pub type IpuGraph = EGraph<Ipu, ShapeAnalysis>;

impl Analysis<Ipu> for ShapeAnalysis {
    type Data = Data;

    fn make(egraph: &mut IpuGraph, enode: &Ipu) -> Data {
        node_data(enode, |id| &egraph[id].data)
    }

    fn merge(&mut self, to: &mut Data, from: Data) -> DidMerge {
        // Equal classes have equal types (guards keep it so); a splat learned on either side
        // holds for both.
        match (to, from) {
            (Data::Tensor(to), Data::Tensor(from))
                if to.splat.is_none() && from.splat.is_some() =>
            {
                to.splat = from.splat;
                DidMerge(true, false)
            }
            (Data::Tensor(to), Data::Tensor(from)) => {
                DidMerge(false, to.splat.is_some() && from.splat.is_none())
            }
            (to @ Data::Invalid, from @ (Data::Tensor(_) | Data::Attr(_))) => {
                *to = from;
                DidMerge(true, false)
            }
            (Data::Invalid, Data::Invalid) => DidMerge(false, false),
            (_, _) => DidMerge(false, true),
        }
    }
}
