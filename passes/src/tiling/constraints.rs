//! Plan constraints and plan dumps share one JSON form, so a dump fed back as constraints
//! reproduces a compile exactly:
//!
//! ```json
//! {"ops": [{"op": 0, "kind": "gemm_output_stationary",
//!           "params": {"grid": [1, 8, 8, 1], "weights": "interleaved"}}]}
//! ```
//!
//! `op` is the op's index in program order (the order `ipu-lower-mid` reads ops in; ops of an
//! `ipu.repeat` body are addressed as `"body:<function>:<index>"`). A constraint pins its
//! `kind` (if given) and every listed parameter; unlisted parameters stay free.

use std::collections::BTreeMap;

use ipu_dialects::format::PlanValue;
use ipu_dialects::plan::OperatorPlan;
use serde_json::{json, Map, Value as Json};

use super::options::PlannerError;

/// One op's pinned plan parts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Constraint {
    pub kind: Option<String>,
    pub params: BTreeMap<String, PlanValue>,
}

impl Constraint {
    /// Whether `plan` satisfies the constraint (compared in the attribute's form, the one
    /// constraints are written in).
    pub fn admits(&self, plan: &OperatorPlan) -> bool {
        if self.kind.as_ref().is_some_and(|kind| kind != plan.kind()) {
            return false;
        }
        if self.params.is_empty() {
            return true;
        }
        let generic = plan.to_generic();
        // A flag the plan does not carry is false (the attribute omits false flags).
        self.params.iter().all(|(key, value)| {
            generic.params.get(key) == Some(value)
                || (*value == PlanValue::Bool(false) && !generic.params.contains_key(key))
        })
    }
}

/// Constraints by op key (`"3"` or `"body:layer:0"`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Constraints {
    pub ops: BTreeMap<String, Constraint>,
}

fn to_json(value: &PlanValue) -> Json {
    match value {
        PlanValue::Int(value) => json!(value),
        PlanValue::Ints(values) => json!(values),
        PlanValue::Str(value) => json!(value),
        PlanValue::Bool(value) => json!(value),
    }
}

fn from_json(key: &str, value: &Json) -> Result<PlanValue, PlannerError> {
    match value {
        Json::Bool(value) => Ok(PlanValue::Bool(*value)),
        Json::Number(number) => number.as_i64().map(PlanValue::Int).ok_or_else(|| {
            PlannerError::Constraints(format!("parameter '{key}': {number} is not an integer"))
        }),
        Json::String(value) => Ok(PlanValue::Str(value.clone())),
        Json::Array(items) => items
            .iter()
            .map(|item| {
                item.as_i64().ok_or_else(|| {
                    PlannerError::Constraints(format!(
                        "parameter '{key}': list item {item} is not an integer"
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(PlanValue::Ints),
        other => Err(PlannerError::Constraints(format!(
            "parameter '{key}': unsupported value {other}"
        ))),
    }
}

impl Constraints {
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&Constraint> {
        self.ops.get(key)
    }

    /// Parses the JSON form.
    pub fn parse(text: &str) -> Result<Constraints, PlannerError> {
        let root: Json = serde_json::from_str(text)
            .map_err(|error| PlannerError::Constraints(format!("not valid JSON: {error}")))?;
        let ops = root.get("ops").and_then(Json::as_array).ok_or_else(|| {
            PlannerError::Constraints("expected an object with an \"ops\" array".into())
        })?;
        let mut constraints = Constraints::default();
        for (position, entry) in ops.iter().enumerate() {
            let key = match entry.get("op") {
                Some(Json::Number(number)) => number.to_string(),
                Some(Json::String(text)) => text.clone(),
                _ => {
                    return Err(PlannerError::Constraints(format!(
                        "ops[{position}] has no \"op\" (an index or \"body:<function>:<index>\")"
                    )))
                }
            };
            let kind = match entry.get("kind") {
                None => None,
                Some(Json::String(kind)) => Some(kind.clone()),
                Some(other) => {
                    return Err(PlannerError::Constraints(format!(
                        "ops[{position}]: kind {other} is not a string"
                    )))
                }
            };
            let mut params = BTreeMap::new();
            if let Some(object) = entry.get("params") {
                let object = object.as_object().ok_or_else(|| {
                    PlannerError::Constraints(format!("ops[{position}]: params is not an object"))
                })?;
                for (name, value) in object {
                    params.insert(name.clone(), from_json(name, value)?);
                }
            }
            constraints.ops.insert(key, Constraint { kind, params });
        }
        Ok(constraints)
    }

    /// The complete plans `plans` (key, plan) in the JSON form, pretty-printed.
    pub fn dump(plans: &[(String, OperatorPlan)]) -> String {
        serde_json::to_string_pretty(&Self::to_json(plans)).unwrap_or_default()
    }

    /// [`Constraints::dump`] as a JSON value.
    pub fn to_json(plans: &[(String, OperatorPlan)]) -> Json {
        let ops: Vec<Json> = plans
            .iter()
            .map(|(key, plan)| {
                let plan = plan.to_generic();
                let params: Map<String, Json> = plan
                    .params
                    .iter()
                    .map(|(name, value)| (name.clone(), to_json(value)))
                    .collect();
                let op = key
                    .parse::<u64>()
                    .map(Json::from)
                    .unwrap_or_else(|_| Json::String(key.clone()));
                json!({"op": op, "kind": plan.kind, "params": params})
            })
            .collect();
        json!({ "ops": ops })
    }
}

/// The constraint key of op `index` in a graph planned under `prefix` (`""` at top level,
/// `"body:<function>:"` inside a repeat body).
pub fn op_key(prefix: &str, index: usize) -> String {
    format!("{prefix}{index}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipu_dialects::plan::{GemmPlan, GemmTileGrid, Orientation};

    /// A flag's constraint: `true` admits plans carrying it; `false` admits plans without it
    /// (the plan attribute omits false flags) and refuses those carrying it.
    #[test]
    fn false_flags_admit_plans_that_omit_them() {
        let plan = |host_order| {
            OperatorPlan::Gemm(GemmPlan {
                grid: GemmTileGrid {
                    batch: 1,
                    rows: 4,
                    cols: 2,
                    k_split: 1,
                },
                tiles: 8,
                k_block: 64,
                c_block: 16,
                orientation: Orientation::Normal,
                weights: ipu_dialects::format::Memory::Interleaved,
                left: ipu_dialects::format::Memory::Interleaved,
                precision: ipu_device::Precision::F16,
                k_steps: 1,
                weights_resident: false,
                host_order,
                scales: None,
            })
        };
        let constraint = |flag: bool| {
            let text = format!(
                r#"{{"ops": [{{"op": 0, "kind": "gemm_output_stationary", "params": {{"grid": [1, 4, 2, 1], "host_order": {flag}}}}}]}}"#
            );
            Constraints::parse(&text).unwrap().get("0").unwrap().clone()
        };
        assert!(constraint(false).admits(&plan(false)));
        assert!(!constraint(false).admits(&plan(true)));
        assert!(constraint(true).admits(&plan(true)));
        assert!(!constraint(true).admits(&plan(false)));
    }
}
