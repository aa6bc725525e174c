//! The rewrite rules, as data: one row per rule with its law in algebraic form. Every rule's
//! right-hand side is type-checked by the shape analysis before it is added (`Guarded`), so a
//! rule that would build an ill-shaped node (a transposed 1-D bias, a broadcast that no longer
//! reaches the same shape) simply does not fire.

use egg::{Applier, Id, Pattern, PatternAst, Rewrite, Subst, Symbol, Var};

use super::language::{exact_conversion, node_data, Attr, Data, Ipu, IpuGraph, ShapeAnalysis};

/// What must hold, beyond shapes, for a rule to fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Always,
    /// `(cast ?t2 (cast ?t1 ?x))` is the identity on `?x`.
    ExactRoundTrip,
    /// `(cast ?t ?x)` with `?t` the element of `?x` and no scale.
    IdentityCast,
    /// The two variables have the same shape (no broadcasting between them).
    SameShape(&'static str, &'static str),
    /// The variable is a splat constant zero.
    SplatZero(&'static str),
    /// The variable is a splat constant.
    Splat(&'static str),
}

/// One rule: `lhs => rhs` (and back when `both_ways`) when `side` holds.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub name: &'static str,
    pub lhs: &'static str,
    pub rhs: &'static str,
    pub both_ways: bool,
    pub side: Side,
}

const fn rule(
    name: &'static str,
    lhs: &'static str,
    rhs: &'static str,
    both_ways: bool,
    side: Side,
) -> Rule {
    Rule {
        name,
        lhs,
        rhs,
        both_ways,
        side,
    }
}

use Side::*;

/// The rule set.
pub const RULES: &[Rule] = &[
    // (A B) C = A (B C)
    rule(
        "matmul-assoc",
        "(matmul (matmul ?a ?b) ?c)",
        "(matmul ?a (matmul ?b ?c))",
        true,
        Always,
    ),
    // (A B)^T = B^T A^T
    rule(
        "transpose-matmul",
        "(t (matmul ?a ?b))",
        "(matmul (t ?b) (t ?a))",
        true,
        Always,
    ),
    // (A^T)^T = A
    rule("transpose-transpose", "(t (t ?a))", "?a", false, Always),
    // A^T B = matmul{transpose_lhs}(A, B)
    rule(
        "flag-lhs",
        "(matmul (t ?a) ?b)",
        "(matmul_tl ?a ?b)",
        true,
        Always,
    ),
    // A B^T = matmul{transpose_rhs}(A, B)
    rule(
        "flag-rhs",
        "(matmul ?a (t ?b))",
        "(matmul_tr ?a ?b)",
        true,
        Always,
    ),
    // A^T B^T = matmul{transpose_lhs, transpose_rhs}(A, B), from either single flag
    rule(
        "flag-both-from-lhs",
        "(matmul_tl ?a (t ?b))",
        "(matmul_tt ?a ?b)",
        true,
        Always,
    ),
    rule(
        "flag-both-from-rhs",
        "(matmul_tr (t ?a) ?b)",
        "(matmul_tt ?a ?b)",
        true,
        Always,
    ),
    // (A + B)^T = A^T + B^T
    rule(
        "transpose-add",
        "(t (add ?a ?b))",
        "(add (t ?a) (t ?b))",
        true,
        Always,
    ),
    // gelu(A)^T = gelu(A^T)
    rule(
        "transpose-gelu",
        "(t (gelu ?a))",
        "(gelu (t ?a))",
        true,
        Always,
    ),
    rule(
        "transpose-gelu-tanh",
        "(t (gelu_tanh ?a))",
        "(gelu_tanh (t ?a))",
        true,
        Always,
    ),
    // cast(A)^T = cast(A^T)
    rule(
        "transpose-cast",
        "(t (cast ?to ?a))",
        "(cast ?to (t ?a))",
        true,
        Always,
    ),
    // cast_B->A(cast_A->B(x)) = x when A -> B is exact
    rule(
        "cast-round-trip",
        "(cast ?t2 (cast ?t1 ?x))",
        "?x",
        false,
        ExactRoundTrip,
    ),
    // cast_A->A(x) = x
    rule("cast-identity", "(cast ?t ?x)", "?x", false, IdentityCast),
    // A + B = B + A
    rule("add-comm", "(add ?a ?b)", "(add ?b ?a)", false, Always),
    // (A + B) + C = A + (B + C)
    rule(
        "add-assoc",
        "(add (add ?a ?b) ?c)",
        "(add ?a (add ?b ?c))",
        true,
        Always,
    ),
    // A B + A C = A (B + C)
    rule(
        "factor-lhs",
        "(add (matmul ?a ?b) (matmul ?a ?c))",
        "(matmul ?a (add ?b ?c))",
        false,
        SameShape("?b", "?c"),
    ),
    // A C + B C = (A + B) C
    rule(
        "factor-rhs",
        "(add (matmul ?a ?c) (matmul ?b ?c))",
        "(matmul (add ?a ?b) ?c)",
        false,
        SameShape("?a", "?b"),
    ),
    // A + 0 = A
    rule("add-zero", "(add ?a ?z)", "?a", false, SplatZero("?z")),
    // softmax(A + c) = softmax(A) for a splat c (shift invariance)
    rule(
        "softmax-shift",
        "(softmax (add ?a ?c))",
        "(softmax ?a)",
        false,
        Splat("?c"),
    ),
];

/// A right-hand side that is added only when it type-checks to the matched class's type and
/// its side condition holds.
#[derive(Debug, Clone)]
pub struct Guarded {
    rhs: Pattern<Ipu>,
    side: Side,
}

fn var(name: &str) -> Option<Var> {
    name.parse().ok()
}

fn data<'g>(egraph: &'g IpuGraph, subst: &Subst, name: &str) -> Option<&'g Data> {
    Some(&egraph[*subst.get(var(name)?)?].data)
}

fn cast_to(
    egraph: &IpuGraph,
    subst: &Subst,
    name: &str,
) -> Option<(ipu_dialects::tensor::ElementType, i64)> {
    match data(egraph, subst, name)? {
        Data::Attr(Attr::CastTo { element, scale }) => Some((*element, *scale)),
        _ => None,
    }
}

impl Side {
    fn holds(self, egraph: &IpuGraph, subst: &Subst) -> bool {
        let tensor = |name: &str| data(egraph, subst, name).and_then(Data::tensor);
        match self {
            Always => true,
            ExactRoundTrip => (|| {
                let source = tensor("?x")?;
                let (middle, inner_scale) = cast_to(egraph, subst, "?t1")?;
                let (target, outer_scale) = cast_to(egraph, subst, "?t2")?;
                // The scale attribute belongs to the FP8 side of each cast.
                let source_scale = if source.element.is_fp8() {
                    inner_scale
                } else {
                    0
                };
                let target_scale = if target.is_fp8() { outer_scale } else { 0 };
                Some(
                    target == source.element
                        && source_scale == target_scale
                        && exact_conversion(source.element, source_scale, middle),
                )
            })()
            .unwrap_or(false),
            IdentityCast => match (tensor("?x"), cast_to(egraph, subst, "?t")) {
                (Some(source), Some((element, scale))) => source.element == element && scale == 0,
                _ => false,
            },
            SameShape(a, b) => {
                matches!((tensor(a), tensor(b)), (Some(x), Some(y)) if x.shape == y.shape)
            }
            SplatZero(a) => tensor(a).and_then(|info| info.splat) == Some(0.0),
            Splat(a) => tensor(a).is_some_and(|info| info.splat.is_some()),
        }
    }
}

/// The data `ast` would have under `subst`, or `None` if some node does not type-check.
fn instantiate_data(ast: &PatternAst<Ipu>, egraph: &IpuGraph, subst: &Subst) -> Option<Data> {
    let mut computed: Vec<Data> = Vec::with_capacity(ast.as_ref().len());
    for node in ast.as_ref() {
        let data = match node {
            egg::ENodeOrVar::Var(variable) => egraph[*subst.get(*variable)?].data.clone(),
            egg::ENodeOrVar::ENode(node) => node_data(node, |id| &computed[usize::from(id)]),
        };
        if data == Data::Invalid {
            return None;
        }
        computed.push(data);
    }
    computed.pop()
}

impl Applier<Ipu, ShapeAnalysis> for Guarded {
    fn apply_one(
        &self,
        egraph: &mut IpuGraph,
        eclass: Id,
        subst: &Subst,
        searcher_ast: Option<&PatternAst<Ipu>>,
        rule_name: Symbol,
    ) -> Vec<Id> {
        if !self.side.holds(egraph, subst) {
            return Vec::new();
        }
        let same_type = match (
            instantiate_data(&self.rhs.ast, egraph, subst),
            egraph[eclass].data.tensor(),
        ) {
            (Some(Data::Tensor(new)), Some(old)) => {
                new.shape == old.shape && new.element == old.element
            }
            _ => false,
        };
        if !same_type {
            return Vec::new();
        }
        self.rhs
            .apply_one(egraph, eclass, subst, searcher_ast, rule_name)
    }

    fn vars(&self) -> Vec<Var> {
        self.rhs.vars()
    }
}

/// Why the rule table does not build (a typo in a pattern).
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("rule '{rule}': pattern '{pattern}' does not parse: {reason}")]
    Pattern {
        rule: &'static str,
        pattern: &'static str,
        reason: String,
    },
    #[error("rule '{rule}': {reason}")]
    Build { rule: String, reason: String },
}

fn pattern(rule: &'static str, text: &'static str) -> Result<Pattern<Ipu>, RuleError> {
    text.parse()
        .map_err(|error: egg::RecExprParseError<_>| RuleError::Pattern {
            rule,
            pattern: text,
            reason: error.to_string(),
        })
}

fn rewrite(
    name: String,
    lhs: Pattern<Ipu>,
    rhs: Pattern<Ipu>,
    side: Side,
) -> Result<Rewrite<Ipu, ShapeAnalysis>, RuleError> {
    Rewrite::new(name.clone(), lhs, Guarded { rhs, side })
        .map_err(|reason| RuleError::Build { rule: name, reason })
}

/// The rules of `table` as egg rewrites (a two-way rule gives `name` and `name-rev`).
pub fn build(table: &[Rule]) -> Result<Vec<Rewrite<Ipu, ShapeAnalysis>>, RuleError> {
    let mut rewrites = Vec::new();
    for rule in table {
        let (lhs, rhs) = (pattern(rule.name, rule.lhs)?, pattern(rule.name, rule.rhs)?);
        rewrites.push(rewrite(
            rule.name.to_string(),
            lhs.clone(),
            rhs.clone(),
            rule.side,
        )?);
        if rule.both_ways {
            rewrites.push(rewrite(format!("{}-rev", rule.name), rhs, lhs, rule.side)?);
        }
    }
    Ok(rewrites)
}

/// All rules of [`RULES`].
pub fn rules() -> Vec<Rewrite<Ipu, ShapeAnalysis>> {
    // The table is a constant checked by the unit tests; an error here is a bug in it.
    build(RULES).unwrap_or_else(|error| panic!("the eqsat rule table is malformed: {error}"))
}
