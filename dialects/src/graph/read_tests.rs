//! Tests of the graph reader.
use super::*;
use crate::context::{create_context, parse_module};

const MODULE: &str = r#"
func.func private @layer(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %0 = "ipu.gelu"(%x) {approximate = "tanh"} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  return %0 : tensor<64x64xf16>
}
func.func @main(%a: tensor<64x32xf16>, %b: tensor<32x64xf16>) -> tensor<64x64xf16> {
  %bias = arith.constant dense<2.5> : tensor<64xf16>
  %0 = "ipu.matmul"(%a, %b) {transpose_rhs} : (tensor<64x32xf16>, tensor<32x64xf16>) -> tensor<64x64xf16>
  %1 = "ipu.add"(%0, %bias) : (tensor<64x64xf16>, tensor<64xf16>) -> tensor<64x64xf16>
  %2 = "ipu.repeat"(%1) {body = @layer, count = 3 : i64} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  return %2 : tensor<64x64xf16>
}
"#;

#[test]
fn a_function_reads_as_its_values_ops_and_repeat_bodies() {
    let context = create_context(false).expect("context");
    let module = parse_module(&context, MODULE).expect("parse");
    let table = functions(module.as_operation());
    assert_eq!(
        table.keys().collect::<Vec<_>>(),
        ["layer", "main"].iter().collect::<Vec<_>>()
    );
    assert_eq!(body_names(module.as_operation()), ["layer"]);
    let Ok(read) = read_function(table["main"], &table) else {
        panic!("main reads");
    };
    let graph = &read.graph;
    let origins: Vec<Origin> = graph.values.iter().map(|v| v.origin).collect();
    assert_eq!(
        origins,
        [
            Origin::Argument,
            Origin::Argument,
            Origin::Constant,
            Origin::Op(0),
            Origin::Op(1),
            Origin::Op(2)
        ]
    );
    assert_eq!(graph.values[2].max_abs, Some(2.5));
    assert_eq!(
        (graph.values[2].shape.as_slice(), graph.values[2].element),
        (&[64][..], ElementType::F16)
    );
    assert_eq!(
        graph.ops[0].kind,
        OpKind::Matmul {
            transpose_lhs: false,
            transpose_rhs: true
        }
    );
    assert_eq!(graph.ops[1].operands, [3, 2]);
    let OpKind::Repeat {
        count, name, body, ..
    } = &graph.ops[2].kind
    else {
        panic!("op 2 is the repeat");
    };
    assert_eq!((*count, name.as_str(), body.ops.len()), (3, "layer", 1));
    assert_eq!(body.ops[0].kind, OpKind::Gelu { tanh: true });
    assert_eq!(graph.outputs, [5]);
    assert_eq!((read.ops.len(), read.values.len()), (3, 6));
    assert!(read.bodies.contains_key(&2));
    assert!(graph.check().is_ok());
}

/// An `ipu.scan` reads as a repeat of its carried value whose stacks are the stacked
/// tensors (each `ipu.stack` is its tensor, not an op), kept in the kind, not as operands;
/// its body takes the carried value, then the slices.
#[test]
fn a_scan_reads_as_a_repeat_with_its_stacks() {
    let context = create_context(false).expect("context");
    let source = r#"
func.func private @layer(%x: tensor<4x8xf16>, %w: tensor<8x8xf16>, %b: tensor<8xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.matmul"(%x, %w) : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
  %1 = "ipu.add"(%0, %b) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  return %1 : tensor<4x8xf16>
}
func.func @main(%x: tensor<4x8xf16>, %ws: tensor<3x8x8xf16>, %bs: tensor<3x8xf16>) -> tensor<4x8xf16> {
  %sw = "ipu.stack"(%ws) : (tensor<3x8x8xf16>) -> !ipu.stacked
  %sb = "ipu.stack"(%bs) : (tensor<3x8xf16>) -> !ipu.stacked
  %y = "ipu.scan"(%x, %sw, %sb) {body = @layer, count = 3 : i64} : (tensor<4x8xf16>, !ipu.stacked, !ipu.stacked) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}
"#;
    let module = parse_module(&context, source).expect("parse");
    let table = functions(module.as_operation());
    assert_eq!(body_names(module.as_operation()), ["layer"]);
    let Ok(read) = read_function(table["main"], &table) else {
        panic!("main reads");
    };
    let graph = &read.graph;
    assert_eq!(graph.ops.len(), 1);
    let op = &graph.ops[0];
    let OpKind::Repeat {
        count,
        name,
        body,
        iterated,
    } = &op.kind
    else {
        panic!("the scan is a repeat");
    };
    assert_eq!(
        (*count, name.as_str(), iterated.as_slice()),
        (3, "layer", &[1, 2][..])
    );
    assert_eq!(op.operands, [0]);
    assert_eq!(op.reads().copied().collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(body.arguments().len(), 3);
    assert!(graph.check().is_ok());
    // A stack whose leading axis is not the count is refused at the scan.
    let wrong = source.replace("count = 3", "count = 2");
    let module = parse_module(&context, &wrong).expect("parse");
    let table = functions(module.as_operation());
    let Err(error) = read_function(table["main"], &table) else {
        panic!("a stack of 3 slices for 2 iterations is refused");
    };
    assert!(
        error
            .message
            .contains("its leading axis must be the count, 2"),
        "{}",
        error.message
    );
}

#[test]
fn what_is_not_a_graph_is_refused_at_its_op() {
    let context = create_context(false).expect("context");
    let source = r#"
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.negf %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @repeat(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ipu.repeat"(%a) {body = @missing, count = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"#;
    let module = parse_module(&context, source).expect("parse");
    let table = functions(module.as_operation());
    let message = |name: &str| match read_function(table[name], &table) {
        Ok(_) => panic!("@{name} must be refused"),
        Err(error) => (op_name(&error.op), error.message),
    };
    assert_eq!(
        message("main"),
        (
            "arith.negf".to_string(),
            "cannot be planned: 'arith.negf' is not an ipu graph op".to_string()
        )
    );
    assert_eq!(
        message("repeat"),
        (
            "ipu.repeat".to_string(),
            "body @missing is not a function with a body".to_string()
        )
    );
}

fn decode_f32(bits: u64, _: ElementType) -> f64 {
    f64::from(f32::from_bits(bits as u32))
}

const CLIENTS: &str = r#"
func.func private @scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, -2.5, 3.0, 0.5]> : tensor<4xf32>
  %0 = "ipu.add"(%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @caller(%x: tensor<4xf32>) -> tensor<4xf8E4M3FNUZ> {
  %0 = func.call @scale(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) {scale = -3 : i64} : (tensor<4xf32>) -> tensor<4xf8E4M3FNUZ>
  return %1 : tensor<4xf8E4M3FNUZ>
}
func.func @recursive(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @recursive(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @mixed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.negf %x : tensor<4xf32>
  %1 = "ipu.add"(%0, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
"#;

#[test]
fn the_evaluators_read_decodes_constants_inlines_calls_and_keeps_scales() {
    let context = create_context(false).expect("context");
    let module = parse_module(&context, CLIENTS).expect("parse");
    let table = functions(module.as_operation());
    let options = ReadOptions {
        decode: Some(decode_f32),
        inline_calls: true,
        opaque: false,
    };
    let read = match read_function_with(table["caller"], &table, options) {
        Ok(read) => read,
        Err(error) => panic!("@caller reads: {}", error.message),
    };
    let graph = &read.graph;
    // The argument, the callee's constant and add, then the cast.
    assert_eq!(graph.ops.len(), 2);
    assert_eq!(graph.ops[0].kind, OpKind::Add);
    assert_eq!(graph.ops[0].operands[0], 0);
    let constant = &graph.values[graph.ops[0].operands[1]];
    assert_eq!(constant.origin, Origin::Constant);
    assert_eq!(constant.data.as_deref(), Some(&[1.0, -2.5, 3.0, 0.5][..]));
    assert_eq!(constant.max_abs, Some(3.0));
    assert_eq!(graph.ops[1].kind, OpKind::Cast { scale: -3 });
    assert_eq!(graph.values[graph.ops[1].results[0]].scale, -3);
    assert_eq!(graph.outputs, graph.ops[1].results);
    // Inlined ops keep their own locations (in the callee).
    assert!(
        graph.ops[0].location.contains(":4:"),
        "{}",
        graph.ops[0].location
    );
    assert_eq!(read.ops.len(), graph.ops.len());
    assert_eq!(read.values.len(), graph.values.len());
    assert!(graph.check().is_ok());
    assert_eq!(
        referenced_functions(module.as_operation()),
        ["recursive", "scale"]
    );

    // Planning refuses the call, and recursion is an error, not a stack overflow.
    let planning = read_function(table["caller"], &table)
        .err()
        .map(|e| e.message);
    assert_eq!(
        planning.as_deref(),
        Some("cannot be planned: 'func.call' is not an ipu graph op")
    );
    let recursive = read_function_with(table["recursive"], &table, options)
        .err()
        .map(|e| e.message);
    assert_eq!(
        recursive.as_deref(),
        Some("@recursive is recursive: @recursive -> @recursive")
    );
}

#[test]
fn an_opaque_read_keeps_other_ops_as_leaves() {
    let context = create_context(false).expect("context");
    let module = parse_module(&context, CLIENTS).expect("parse");
    let table = functions(module.as_operation());
    let function = table["mixed"];
    let block = entry_block(function).expect("body");
    let options = ReadOptions {
        opaque: true,
        ..ReadOptions::default()
    };
    let Ok(read) = read_block(function, block, &table, options) else {
        panic!("@mixed reads opaquely");
    };
    let origins: Vec<Origin> = read.graph.values.iter().map(|v| v.origin).collect();
    assert_eq!(origins, [Origin::Argument, Origin::Opaque, Origin::Op(0)]);
    assert_eq!(read.graph.values[1].shape, [4]);
    assert_eq!(read.opaque.len(), 1);
    assert_eq!(op_name(&read.opaque[0]), "arith.negf");
    assert_eq!(read.graph.ops[0].operands, [1, 0]);
    assert!(read_function(function, &table).is_err());
}

#[test]
fn an_opaque_read_of_a_later_block_keeps_outside_values_and_scalar_arguments_as_leaves() {
    let context = create_context(false).expect("context");
    let source = r#"
func.func @blocks(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  cf.br ^next(%n : index)
^next(%i: index):
  %0 = "ipu.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %x : tensor<4xf32>
}
"#;
    let module = parse_module(&context, source).expect("parse");
    let table = functions(module.as_operation());
    let function = table["blocks"];
    let options = ReadOptions {
        opaque: true,
        ..ReadOptions::default()
    };
    let entry = entry_block(function).expect("body");
    let Ok(read) = read_block(function, entry, &table, options) else {
        panic!("the entry block reads opaquely");
    };
    let origins: Vec<Origin> = read.graph.values.iter().map(|v| v.origin).collect();
    assert_eq!(origins, [Origin::Argument, Origin::Opaque]);
    assert_eq!(read.opaque.len(), 1);
    assert_eq!(op_name(&read.opaque[0]), "cf.br");

    let next = entry.next_in_region().expect("a second block");
    let Ok(read) = read_block(function, next, &table, options) else {
        panic!("the second block reads opaquely");
    };
    // The index argument, then %x from the entry block, bound at its first use.
    let origins: Vec<Origin> = read.graph.values.iter().map(|v| v.origin).collect();
    assert_eq!(origins, [Origin::Opaque, Origin::Opaque, Origin::Op(0)]);
    assert_eq!(read.graph.values[1].shape, [4]);
    assert_eq!(read.graph.ops[0].kind, OpKind::Add);
    assert_eq!(read.graph.ops[0].operands, [1, 1]);
    assert_eq!(read.graph.outputs, [1]);
    assert!(read.opaque.is_empty());
    assert!(read_block(function, next, &table, ReadOptions::default()).is_err());
}

/// An entry-function argument with the unit attribute `ipu.parameter` reads as a resident
/// constant without data that remembers its argument number; an argument whose attribute
/// dictionary only mentions the name in a value, and a repeat body's argument, stay arguments.
#[test]
fn parameter_arguments_read_as_resident_constants() {
    let text = r#"
func.func private @layer(%x: tensor<8x16xf16> {ipu.parameter}) -> tensor<8x16xf16> {
  %0 = "ipu.gelu"(%x) : (tensor<8x16xf16>) -> tensor<8x16xf16>
  return %0 : tensor<8x16xf16>
}
func.func @main(%x: tensor<8x16xf16> {ipu.note = "ipu.parameter"}, %w: tensor<16x16xf16> {ipu.parameter}) -> tensor<8x16xf16> {
  %0 = "ipu.matmul"(%x, %w) : (tensor<8x16xf16>, tensor<16x16xf16>) -> tensor<8x16xf16>
  %1 = "ipu.repeat"(%0) {body = @layer, count = 2 : i64} : (tensor<8x16xf16>) -> tensor<8x16xf16>
  return %1 : tensor<8x16xf16>
}
"#;
    let context = create_context(false).expect("context");
    let module = parse_module(&context, text).expect("parse");
    let table = functions(module.as_operation());
    let Ok(read) = read_function(table["main"], &table) else {
        panic!("main reads");
    };
    let values = &read.graph.values;
    assert_eq!(
        (values[0].origin, values[0].parameter),
        (Origin::Argument, None)
    );
    assert_eq!(
        (values[1].origin, values[1].parameter),
        (Origin::Constant, Some(1))
    );
    assert_eq!(values[1].data, None);
    let OpKind::Repeat { body, .. } = &read.graph.ops[1].kind else {
        panic!("op 1 is the repeat");
    };
    assert_eq!(
        (body.values[0].origin, body.values[0].parameter),
        (Origin::Argument, None)
    );
}
