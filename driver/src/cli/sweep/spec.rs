//! The sweep file and the points it expands to.
//!
//! A sweep file (TOML, or JSON when its name ends in `.json`) has a `[product]` table, whose
//! axes expand to their cartesian product, and any number of `[[point]]` tables, each one
//! point; both may be given, and the points are the product's followed by the list's. A key
//! left out takes the compiler's default. Keys of both:
//!
//! ```toml
//! [product]
//! tiles = [64, 128]                      # --tiles
//! precision = ["f16", "fp8"]             # native, f16, f32, fp8
//! weight_memory = ["auto", "standard"]   # auto, interleaved, standard
//! beam_width = [4, 8]
//! candidates_per_op = [12, 24]
//! finalists = [1, 4]
//! constraints = [{ name = "free" }, { name = "k5", file = "k5.json" }]
//!
//! [[point]]
//! tiles = 64
//! constraints = { name = "pin", ops = [{ op = 0, kind = "gemm_k_split", params = { grid = [1, 4, 3, 5] } }] }
//! ```
//!
//! A constraint set has a `name` (shown in the tables) and either `file` (a JSON file in the
//! form `ipu run --constraints` reads, relative to the sweep file) or `ops` (that file's
//! `ops` array inline), or neither (no constraints). Unknown keys, empty axes and an empty
//! sweep are errors that name the file.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context};
use serde::{Deserialize, Serialize};

/// The values `--precision` takes.
pub const PRECISIONS: [&str; 4] = ["native", "f16", "f32", "fp8"];
/// The values `--weight-memory` takes.
pub const WEIGHT_MEMORY: [&str; 3] = ["auto", "interleaved", "standard"];

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    #[serde(default)]
    pub product: Option<Axes>,
    #[serde(default, rename = "point")]
    pub points: Vec<PointSpec>,
}

/// The product's axes; an axis left out is not swept.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Axes {
    pub tiles: Option<Vec<u32>>,
    pub precision: Option<Vec<String>>,
    pub weight_memory: Option<Vec<String>>,
    pub beam_width: Option<Vec<u32>>,
    pub candidates_per_op: Option<Vec<u32>>,
    pub finalists: Option<Vec<u32>>,
    pub constraints: Option<Vec<ConstraintSpec>>,
}

/// One explicit point.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointSpec {
    pub tiles: Option<u32>,
    pub precision: Option<String>,
    pub weight_memory: Option<String>,
    pub beam_width: Option<u32>,
    pub candidates_per_op: Option<u32>,
    pub finalists: Option<u32>,
    pub constraints: Option<ConstraintSpec>,
}

/// A named constraint set, from a file or inline.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstraintSpec {
    pub name: String,
    pub file: Option<PathBuf>,
    pub ops: Option<serde_json::Value>,
}

/// A constraint set resolved to the document `--constraints` reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Constraints {
    pub name: String,
    /// `{"ops": [...]}`; `null` for a set without constraints.
    pub document: serde_json::Value,
}

/// One point of a sweep: the options its `ipu run` gets (`None`: the compiler's default).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub tiles: Option<u32>,
    pub precision: Option<String>,
    pub weight_memory: Option<String>,
    pub beam_width: Option<u32>,
    pub candidates_per_op: Option<u32>,
    pub finalists: Option<u32>,
    pub constraints: Option<Constraints>,
}

impl Point {
    /// The key a results file knows the point by: its parameters as compact JSON (fields in
    /// declaration order, so the same point always has the same key).
    pub fn key(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A short stable name for the point's directory: 16 hex digits of the key's FNV-1a hash.
    pub fn id(&self) -> String {
        format!("{:016x}", fnv1a(self.key().as_bytes()))
    }

    /// `tiles=64 precision=f16 ...`, the parameters that are set.
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        let mut push = |key: &str, value: Option<String>| {
            if let Some(value) = value {
                parts.push(format!("{key}={value}"));
            }
        };
        push("tiles", self.tiles.map(|v| v.to_string()));
        push("precision", self.precision.clone());
        push("weight_memory", self.weight_memory.clone());
        push("beam_width", self.beam_width.map(|v| v.to_string()));
        push(
            "candidates_per_op",
            self.candidates_per_op.map(|v| v.to_string()),
        );
        push("finalists", self.finalists.map(|v| v.to_string()));
        push(
            "constraints",
            self.constraints.as_ref().map(|c| c.name.clone()),
        );
        if parts.is_empty() {
            "defaults".into()
        } else {
            parts.join(" ")
        }
    }
}

/// 64-bit FNV-1a.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Parses sweep-file text; `path` names the file in errors and anchors constraint files.
pub fn parse(text: &str, path: &Path) -> anyhow::Result<SweepFile> {
    let is_json = path.extension().is_some_and(|e| e == "json");
    let file: SweepFile = if is_json {
        serde_json::from_str(text).map_err(|e| anyhow!("{}: {e}", path.display()))?
    } else {
        toml::from_str(text)
            .map_err(|e| anyhow!("{}: {}", path.display(), e.to_string().trim_end()))?
    };
    Ok(file)
}

/// Reads and parses the sweep file at `path`.
pub fn read(path: &Path) -> anyhow::Result<SweepFile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the sweep file '{}'", path.display()))?;
    parse(&text, path)
}

/// Every point of `file`: the product's, then the explicit list's, without repeats.
/// `base` resolves constraint files; `origin` names the sweep in errors.
pub fn expand(file: &SweepFile, base: &Path, origin: &str) -> anyhow::Result<Vec<Point>> {
    let mut points = Vec::new();
    if let Some(axes) = &file.product {
        points.extend(product(axes, base, origin)?);
    }
    for (index, spec) in file.points.iter().enumerate() {
        let at = format!("{origin}: point {}", index + 1);
        points.push(explicit(spec, base, &at)?);
    }
    if points.is_empty() {
        bail!("{origin}: the sweep is empty: give a [product] table or [[point]] tables");
    }
    let mut unique: Vec<Point> = Vec::with_capacity(points.len());
    for point in points {
        if !unique.contains(&point) {
            unique.push(point);
        }
    }
    Ok(unique)
}

/// An axis's values, `[None]` when it is not swept; an empty axis is an error.
fn axis<T: Clone>(
    values: &Option<Vec<T>>,
    name: &str,
    origin: &str,
) -> anyhow::Result<Vec<Option<T>>> {
    match values {
        None => Ok(vec![None]),
        Some(values) if values.is_empty() => {
            bail!("{origin}: product axis '{name}' is empty (leave it out to keep the default)")
        }
        Some(values) => Ok(values.iter().cloned().map(Some).collect()),
    }
}

/// `points` times `values`: each point once per value, set by `set`.
fn times<T: Clone>(
    points: Vec<Point>,
    values: &[Option<T>],
    set: impl Fn(&mut Point, Option<T>),
) -> Vec<Point> {
    let mut out = Vec::with_capacity(points.len() * values.len());
    for point in &points {
        for value in values {
            let mut next = point.clone();
            set(&mut next, value.clone());
            out.push(next);
        }
    }
    out
}

/// The cartesian product of the axes, in the order the keys are documented, the last
/// varying fastest.
fn product(axes: &Axes, base: &Path, origin: &str) -> anyhow::Result<Vec<Point>> {
    let at = format!("{origin}: [product]");
    let constraints: Vec<Option<Constraints>> = axis(&axes.constraints, "constraints", origin)?
        .into_iter()
        .map(|spec| spec.map(|spec| resolve(&spec, base, &at)).transpose())
        .collect::<anyhow::Result<_>>()?;
    let mut points = vec![Point::default()];
    points = times(points, &axis(&axes.tiles, "tiles", origin)?, |p, v| {
        p.tiles = v
    });
    points = times(
        points,
        &axis(&axes.precision, "precision", origin)?,
        |p, v| p.precision = v,
    );
    points = times(
        points,
        &axis(&axes.weight_memory, "weight_memory", origin)?,
        |p, v| p.weight_memory = v,
    );
    points = times(
        points,
        &axis(&axes.beam_width, "beam_width", origin)?,
        |p, v| p.beam_width = v,
    );
    points = times(
        points,
        &axis(&axes.candidates_per_op, "candidates_per_op", origin)?,
        |p, v| p.candidates_per_op = v,
    );
    points = times(
        points,
        &axis(&axes.finalists, "finalists", origin)?,
        |p, v| p.finalists = v,
    );
    points = times(points, &constraints, |p, v| p.constraints = v);
    for point in &points {
        validate(point, &at)?;
    }
    Ok(points)
}

fn explicit(spec: &PointSpec, base: &Path, at: &str) -> anyhow::Result<Point> {
    let point = Point {
        tiles: spec.tiles,
        precision: spec.precision.clone(),
        weight_memory: spec.weight_memory.clone(),
        beam_width: spec.beam_width,
        candidates_per_op: spec.candidates_per_op,
        finalists: spec.finalists,
        constraints: spec
            .constraints
            .as_ref()
            .map(|c| resolve(c, base, at))
            .transpose()?,
    };
    validate(&point, at)?;
    Ok(point)
}

/// Checks the values `ipu run` would refuse, so the sweep file is blamed, not a point.
fn validate(point: &Point, at: &str) -> anyhow::Result<()> {
    if let Some(p) = &point.precision {
        if !PRECISIONS.contains(&p.as_str()) {
            bail!(
                "{at}: precision '{p}': expected one of {}",
                PRECISIONS.join(", ")
            );
        }
    }
    if let Some(w) = &point.weight_memory {
        if !WEIGHT_MEMORY.contains(&w.as_str()) {
            bail!(
                "{at}: weight_memory '{w}': expected one of {}",
                WEIGHT_MEMORY.join(", ")
            );
        }
    }
    let counts = [
        ("tiles", point.tiles),
        ("beam_width", point.beam_width),
        ("candidates_per_op", point.candidates_per_op),
        ("finalists", point.finalists),
    ];
    for (key, value) in counts {
        if value == Some(0) {
            bail!("{at}: {key} must be at least 1");
        }
    }
    Ok(())
}

/// Reads a constraint set's file or takes its inline ops.
pub fn resolve(spec: &ConstraintSpec, base: &Path, at: &str) -> anyhow::Result<Constraints> {
    let name = &spec.name;
    if name.is_empty() {
        bail!("{at}: a constraint set needs a non-empty name");
    }
    let document = match (&spec.file, &spec.ops) {
        (Some(_), Some(_)) => bail!("{at}: constraints '{name}' gives both 'file' and 'ops'"),
        (None, None) => serde_json::Value::Null,
        (None, Some(ops)) => {
            if !ops.is_array() {
                bail!("{at}: constraints '{name}': 'ops' must be an array of op constraints");
            }
            serde_json::json!({ "ops": ops })
        }
        (Some(file), None) => {
            let path = base.join(file);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                anyhow!(
                    "{at}: constraints '{name}': cannot read '{}': {e}",
                    path.display()
                )
            })?;
            let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
                anyhow!(
                    "{at}: constraints '{name}': '{}' is not JSON: {e}",
                    path.display()
                )
            })?;
            if !value.get("ops").is_some_and(|ops| ops.is_array()) {
                bail!(
                    "{at}: constraints '{name}': '{}' has no \"ops\" array",
                    path.display()
                );
            }
            value
        }
    };
    Ok(Constraints {
        name: name.clone(),
        document,
    })
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
