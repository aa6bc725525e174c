//! Reshapes of boolean and integer tensors that only add or drop size-1 axes (PyTorch and
//! Hugging Face build attention masks from an iota through `tensor.expand_shape` /
//! `collapse_shape`): folded into the `linalg.generic`s that read them, which then read the
//! reshape's source through an indexing map with the size-1 axes added or dropped. ipu tensors
//! are floats, so such values are recomputed in their float readers; a reshape between the
//! producer and the reader would otherwise be an integer tensor the import cannot hold.

use melior::ir::{
    attribute::AttributeLike, operation::OperationLike, Attribute, OperationRef, Value, ValueLike,
};

use super::super::ir::{shape_of, users};
use super::element_kind;
use ipu_dialects::graph::scalar::ScalarType;
use ipu_dialects::ipu::op_name;

/// For a reshape from `source` to `result` shapes that only inserts or drops size-1 axes: for
/// each source axis, the result axis holding it (`None`: a size-1 source axis, index 0).
fn unit_axes_map(source: &[i64], result: &[i64]) -> Option<Vec<Option<usize>>> {
    let big =
        |shape: &[i64]| -> Vec<usize> { (0..shape.len()).filter(|&a| shape[a] != 1).collect() };
    let (from, to) = (big(source), big(result));
    if from.len() != to.len() || from.iter().zip(&to).any(|(&a, &b)| source[a] != result[b]) {
        return None;
    }
    let mut map = vec![None; source.len()];
    for (&a, &b) in from.iter().zip(&to) {
        map[a] = Some(b);
    }
    Some(map)
}

/// The `(dims)` and result expressions of an `affine_map<(dims) -> (results)>` text.
fn split_map(text: &str) -> Option<(String, Vec<String>)> {
    let inner = text.strip_prefix("affine_map<")?.strip_suffix('>')?;
    let (dims, results) = inner.split_once("->")?;
    let results = results.trim().strip_prefix('(')?.strip_suffix(')')?;
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in results.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(results[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !results.trim().is_empty() {
        parts.push(results[start..].trim().to_string());
    }
    Some((dims.trim().to_string(), parts))
}

/// Folds every such reshape of `root`'s functions into its generic readers; returns how many
/// were folded (each is erased).
pub fn fold_unit_reshapes(root: OperationRef) -> usize {
    let mut folded = 0;
    let reshapes: Vec<OperationRef> = super::super::tosa::ops_with_prefix(root, "tensor.")
        .into_iter()
        .filter(|op| {
            matches!(
                op_name(op).as_str(),
                "tensor.expand_shape" | "tensor.collapse_shape"
            )
        })
        .collect();
    for reshape in reshapes {
        let (Ok(source), Ok(result)) = (reshape.operand(0), reshape.result(0)) else {
            continue;
        };
        let result: Value = result.into();
        if element_kind(result) == Some(ScalarType::Float) || element_kind(result).is_none() {
            continue;
        }
        let (Some(from), Some(to)) = (shape_of(source.r#type()), shape_of(result.r#type())) else {
            continue;
        };
        let Some(axes) = unit_axes_map(&from, &to) else {
            continue;
        };
        let readers = users(result);
        // Every reader must be a generic reading the reshape as an input.
        let mut rewrites = Vec::new();
        for reader in &readers {
            if op_name(reader) != "linalg.generic" {
                rewrites.clear();
                break;
            }
            let inputs = reader.operand_count().saturating_sub(reader.result_count());
            let Ok(maps) = reader.attribute("indexing_maps") else {
                rewrites.clear();
                break;
            };
            let Some(texts) = array_items(maps) else {
                rewrites.clear();
                break;
            };
            let positions: Vec<usize> = (0..inputs)
                .filter(|&k| reader.operand(k).ok().map(|v| v == result) == Some(true))
                .collect();
            if positions.is_empty()
                || (inputs..reader.operand_count())
                    .any(|k| reader.operand(k).ok().map(|v| v == result) == Some(true))
            {
                rewrites.clear();
                break;
            }
            let mut texts = texts;
            let mut ok = true;
            for &k in &positions {
                match split_map(&texts[k]) {
                    Some((dims, results)) if results.len() == to.len() => {
                        let exprs: Vec<String> = axes
                            .iter()
                            .map(|axis| axis.map_or("0".to_string(), |b| results[b].clone()))
                            .collect();
                        texts[k] = format!("affine_map<{dims} -> ({})>", exprs.join(", "));
                    }
                    _ => ok = false,
                }
            }
            if !ok {
                rewrites.clear();
                break;
            }
            rewrites.push((*reader, positions, texts));
        }
        if rewrites.len() != readers.len() || readers.is_empty() {
            continue;
        }
        let context = reshape.context();
        // SAFETY: the context outlives the pass run.
        let context = unsafe { context.to_ref() };
        let parsed: Option<Vec<_>> = rewrites
            .iter()
            .map(|(_, _, texts)| Attribute::parse(context, &format!("[{}]", texts.join(", "))))
            .collect();
        let Some(parsed) = parsed else {
            continue;
        };
        for ((reader, positions, _), maps) in rewrites.iter().zip(parsed) {
            // SAFETY: the reader is a live op; the source has the element type the reader's
            // block argument expects (a reshape keeps it), and the new maps index its shape.
            unsafe {
                for &k in positions {
                    mlir_sys::mlirOperationSetOperand(reader.to_raw(), k as isize, source.to_raw());
                }
                let name = mlir_sys::mlirStringRefCreateFromCString(c"indexing_maps".as_ptr());
                mlir_sys::mlirOperationSetAttributeByName(reader.to_raw(), name, maps.to_raw());
            }
        }
        // SAFETY: the reshape has no uses left.
        unsafe {
            mlir_sys::mlirOperationRemoveFromParent(reshape.to_raw());
            mlir_sys::mlirOperationDestroy(reshape.to_raw());
        }
        folded += 1;
    }
    folded
}

/// The printed items of an array attribute of affine maps.
fn array_items(attribute: Attribute) -> Option<Vec<String>> {
    let raw = attribute.to_raw();
    // SAFETY: the attribute is live; items are read only from an array attribute.
    unsafe {
        if !mlir_sys::mlirAttributeIsAArray(raw) {
            return None;
        }
        let count = mlir_sys::mlirArrayAttrGetNumElements(raw);
        Some(
            (0..count)
                .map(|i| Attribute::from_raw(mlir_sys::mlirArrayAttrGetElement(raw, i)).to_string())
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_axes_map_pairs_the_axes_that_are_not_one() {
        assert_eq!(unit_axes_map(&[17], &[1, 1, 17, 1]), Some(vec![Some(2)]));
        assert_eq!(
            unit_axes_map(&[1, 1, 17, 1], &[1, 1, 17]),
            Some(vec![None, None, Some(2), None])
        );
        assert_eq!(unit_axes_map(&[4, 6], &[24]), None);
        assert_eq!(unit_axes_map(&[4, 6], &[6, 4]), None);
    }

    #[test]
    fn split_map_keeps_nested_expressions_whole() {
        let (dims, results) =
            split_map("affine_map<(d0, d1) -> (d0 floordiv 2, (d1 + d0) mod 3, 0)>").unwrap();
        assert_eq!(dims, "(d0, d1)");
        assert_eq!(results, vec!["d0 floordiv 2", "(d1 + d0) mod 3", "0"]);
    }
}
