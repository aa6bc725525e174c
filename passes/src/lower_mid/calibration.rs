//! The `calibration=FILE` option of `ipu-lower-mid`: data ranges of function arguments
//! (activations), so their FP8 scales can be chosen like those of constants.
//!
//! The file is a JSON object. Each entry calibrates one argument, keyed by its name `argN`
//! (`%argN` also accepted) or by its position `N`, and gives either the largest magnitude
//! directly or a `.npy` file of sample data (little-endian f16 or f32, read with
//! `ipu_runtime::npy`) whose largest `|x|` is taken:
//!
//! ```json
//! {
//!   "arg0": 3.5,
//!   "1": "samples/x1.npy",
//!   "arg2": {"max_abs": 0.25},
//!   "arg3": {"npy": "x3.npy"},
//!   "@decoder": {"arg0": 12.0}
//! }
//! ```
//!
//! Top-level entries apply to every planned function that has the argument; an `"@name"`
//! entry holds entries for function `@name` only, which take precedence. Relative `.npy`
//! paths are resolved against the calibration file's directory. A key naming an argument no
//! planned function has, an unknown function, an argument given twice, a negative or
//! non-finite bound, and an unreadable, non-f16/f32 or empty sample file are errors.
//! Functions used as `ipu.repeat` bodies are planned through their repeat and cannot be
//! calibrated (their argument is the carried value).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

/// One calibrated argument.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key as written in the file (for messages).
    pub key: String,
    pub max_abs: f64,
    /// Where the bound comes from: `max_abs` or the sample file's path.
    pub source: String,
}

/// Calibrated argument ranges, validated against the module with [`Calibration::check`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Calibration {
    /// The calibration file, as given (for messages).
    pub path: String,
    /// Entries for every function, by argument position.
    pub all: BTreeMap<usize, Entry>,
    /// Entries for one function, by function name and argument position.
    pub functions: BTreeMap<String, BTreeMap<usize, Entry>>,
}

/// The argument position a key names (`arg3`, `%arg3`, `3`).
fn argument_position(key: &str) -> Option<usize> {
    let digits = key
        .strip_prefix("%arg")
        .or_else(|| key.strip_prefix("arg"))
        .unwrap_or(key);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Largest `|x|` of the samples in the `.npy` file at `path`.
fn sample_max_abs(path: &Path) -> Result<f64, String> {
    let tensor = ipu_runtime::npy::Tensor::read(path).map_err(|error| error.to_string())?;
    if tensor.data.is_empty() {
        return Err(format!("{}: holds no samples", path.display()));
    }
    let mut max_abs = 0.0f64;
    for value in &tensor.data {
        if !value.is_finite() {
            return Err(format!(
                "{}: holds a non-finite sample ({value})",
                path.display()
            ));
        }
        max_abs = max_abs.max(f64::from(value.abs()));
    }
    Ok(max_abs)
}

impl Calibration {
    /// Reads and parses the file at `path`; errors name the file and the problem.
    pub fn load(path: &str) -> Result<Calibration, String> {
        let text = super::read_option_file("calibration file", path)?;
        let base = Path::new(path)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        Calibration::parse(&text, &base, path)
            .map_err(|problem| format!("calibration file '{path}': {problem}"))
    }

    /// Parses the JSON form; relative sample paths are resolved against `base`. Errors are
    /// the problem alone (the caller names the file).
    pub fn parse(text: &str, base: &Path, path: &str) -> Result<Calibration, String> {
        let root: Json =
            serde_json::from_str(text).map_err(|error| format!("is not valid JSON: {error}"))?;
        let object = root.as_object().ok_or_else(|| {
            "expected a JSON object of arguments, e.g. {\"arg0\": 3.5, \"arg1\": \"x.npy\"}"
                .to_string()
        })?;
        let mut calibration = Calibration {
            path: path.to_string(),
            ..Calibration::default()
        };
        for (key, value) in object {
            if let Some(function) = key.strip_prefix('@') {
                let inner = value.as_object().ok_or_else(|| {
                    format!("'{key}': expected an object of the function's arguments")
                })?;
                let mut entries = BTreeMap::new();
                for (key, value) in inner {
                    let (position, entry) = Self::entry(key, value, base)
                        .map_err(|problem| format!("'@{function}': {problem}"))?;
                    Self::insert(&mut entries, position, entry)
                        .map_err(|problem| format!("'@{function}': {problem}"))?;
                }
                calibration.functions.insert(function.to_string(), entries);
            } else {
                let (position, entry) = Self::entry(key, value, base)?;
                Self::insert(&mut calibration.all, position, entry)?;
            }
        }
        Ok(calibration)
    }

    fn insert(
        entries: &mut BTreeMap<usize, Entry>,
        position: usize,
        entry: Entry,
    ) -> Result<(), String> {
        if let Some(previous) = entries.get(&position) {
            return Err(format!(
                "argument {position} is given twice ('{}' and '{}')",
                previous.key, entry.key
            ));
        }
        entries.insert(position, entry);
        Ok(())
    }

    /// One entry: `key` names the argument, `value` its range.
    fn entry(key: &str, value: &Json, base: &Path) -> Result<(usize, Entry), String> {
        let position = argument_position(key).ok_or_else(|| {
            format!("'{key}' does not name an argument (use 'argN', '%argN' or the position 'N')")
        })?;
        let expected = || {
            format!(
                "'{key}': expected a max_abs number, a .npy path, {{\"max_abs\": number}} or {{\"npy\": path}}, found {value}"
            )
        };
        let bound = |number: &Json| -> Result<f64, String> {
            // JSON has no infinities or NaN: "inf", "NaN" (strings Rust reads as numbers)
            // stand for them and are refused below.
            let max_abs = match number {
                Json::String(text) => text.trim().parse::<f64>().ok(),
                _ => number.as_f64(),
            }
            .ok_or_else(expected)?;
            if !max_abs.is_finite() {
                return Err(format!("'{key}': max_abs {max_abs} is not finite"));
            }
            if max_abs < 0.0 {
                return Err(format!("'{key}': max_abs {max_abs} is negative"));
            }
            Ok(max_abs)
        };
        let samples = |file: &str| -> Result<(f64, String), String> {
            let path: PathBuf = if Path::new(file).is_absolute() {
                PathBuf::from(file)
            } else {
                base.join(file)
            };
            let max_abs =
                sample_max_abs(&path).map_err(|problem| format!("'{key}': samples {problem}"))?;
            Ok((max_abs, path.display().to_string()))
        };
        let (max_abs, source) = match value {
            Json::Number(_) => (bound(value)?, "max_abs".to_string()),
            Json::String(text) if text.trim().parse::<f64>().is_ok() => {
                (bound(value)?, "max_abs".to_string())
            }
            Json::String(file) => samples(file)?,
            Json::Object(fields) => {
                match (fields.get("max_abs"), fields.get("npy"), fields.len()) {
                    (Some(number @ (Json::Number(_) | Json::String(_))), None, 1) => {
                        (bound(number)?, "max_abs".to_string())
                    }
                    (None, Some(Json::String(file)), 1) => samples(file)?,
                    _ => return Err(expected()),
                }
            }
            _ => return Err(expected()),
        };
        Ok((
            position,
            Entry {
                key: key.to_string(),
                max_abs,
                source,
            },
        ))
    }

    /// Checks every entry against the planned functions (`(name, argument count)`): each
    /// `@name` must be one of them and each argument must exist (in that function, or for a
    /// top-level entry in at least one function).
    pub fn check(&self, functions: &[(String, usize)]) -> Result<(), String> {
        let fail = |problem: String| format!("calibration file '{}': {problem}", self.path);
        for (name, entries) in &self.functions {
            let Some((_, count)) = functions.iter().find(|(function, _)| function == name) else {
                return Err(fail(format!(
                    "'@{name}': no planned function is named @{name}"
                )));
            };
            if let Some((position, entry)) = entries.range(*count..).next() {
                return Err(fail(format!(
                    "'@{name}': '{}' names argument {position}, but @{name} has {count} argument{}",
                    entry.key,
                    if *count == 1 { "" } else { "s" }
                )));
            }
        }
        let most = functions.iter().map(|(_, count)| *count).max().unwrap_or(0);
        if let Some((position, entry)) = self.all.range(most..).next() {
            return Err(fail(format!(
                "'{}' names argument {position}, but no planned function has more than {most} argument{}",
                entry.key,
                if most == 1 { "" } else { "s" }
            )));
        }
        Ok(())
    }

    /// The calibrated bound of argument `position` of `function`.
    pub fn entry_for(&self, function: &str, position: usize) -> Option<&Entry> {
        self.functions
            .get(function)
            .and_then(|entries| entries.get(&position))
            .or_else(|| self.all.get(&position))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Calibration, String> {
        Calibration::parse(text, Path::new("."), "test.json")
    }

    #[test]
    fn keys_and_forms() {
        let calibration =
            parse(r#"{"arg0": 3.5, "%arg1": {"max_abs": 0}, "@f": {"0": {"max_abs": 2}}}"#)
                .expect("parses");
        assert_eq!(calibration.entry_for("g", 0).map(|e| e.max_abs), Some(3.5));
        assert_eq!(calibration.entry_for("f", 0).map(|e| e.max_abs), Some(2.0));
        assert_eq!(calibration.entry_for("f", 1).map(|e| e.max_abs), Some(0.0));
        assert_eq!(calibration.entry_for("f", 2), None);
        assert!(calibration
            .check(&[("f".into(), 2), ("g".into(), 1)])
            .is_ok());
        assert!(calibration
            .check(&[("g".into(), 2)])
            .unwrap_err()
            .contains("no planned function is named @f"));
    }

    #[test]
    fn errors() {
        for (text, problem) in [
            ("{", "is not valid JSON"),
            ("[1]", "expected a JSON object"),
            (r#"{"x": 1}"#, "'x' does not name an argument"),
            (r#"{"arg0": -1}"#, "max_abs -1 is negative"),
            (r#"{"arg0": "inf"}"#, "max_abs inf is not finite"),
            (
                r#"{"arg0": {"max_abs": "NaN"}}"#,
                "max_abs NaN is not finite",
            ),
            (r#"{"arg0": {"max_abs": "x"}}"#, "expected a max_abs number"),
            (r#"{"arg0": true}"#, "expected a max_abs number"),
            (
                r#"{"arg0": {"max_abs": 1, "npy": "a"}}"#,
                "expected a max_abs",
            ),
            (r#"{"arg0": 1, "0": 2}"#, "argument 0 is given twice"),
            (r#"{"arg0": "missing.npy"}"#, "'arg0': samples reading"),
        ] {
            let error = parse(text).expect_err(text);
            assert!(error.contains(problem), "{text}: {error}");
        }
        let calibration = parse(r#"{"arg3": 1}"#).expect("parses");
        let error = calibration.check(&[("f".into(), 2)]).unwrap_err();
        assert!(error.contains("'arg3' names argument 3"), "{error}");
    }
}
