//! Blocks as the graph reader gives them to the e-graph: ops the graph does not model, calls
//! and inserted conversions are leaves, and the rewrite happens around them.

use ipu_device::target::Target;
use ipu_dialects::context::{create_context, parse_module};
use ipu_dialects::graph::read::{entry_block, functions};
use ipu_dialects::ipu::op_name;
use melior::ir::{
    block::BlockLike, operation::OperationLike, BlockRef, OperationRef, Value, ValueLike,
};

use super::ir::BlockGraph;
use super::{Eqsat, EqsatOptions, Outcome};
use crate::pass::Pass;

fn raw(value: Value) -> usize {
    value.to_raw().ptr as usize
}

fn raw_op(op: OperationRef) -> usize {
    op.to_raw().ptr as usize
}

/// The ops of `block` in order.
fn ops<'c, 'a>(block: BlockRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut found = Vec::new();
    let mut next = block.first_operation();
    while let Some(op) = next {
        next = op.next_in_block();
        found.push(op);
    }
    found
}

fn names(block: BlockRef) -> Vec<String> {
    ops(block).iter().map(op_name).collect()
}

fn operands(op: OperationRef) -> Vec<usize> {
    op.operands().map(raw).collect()
}

fn result(op: OperationRef) -> usize {
    raw(op.result(0).expect("a result").into())
}

/// Runs the pass on `block` of `owner` with the default options.
fn run<'c, 'a>(
    context: &'c melior::Context,
    owner: OperationRef<'c, 'a>,
    block: BlockRef<'c, 'a>,
) -> Outcome {
    let eqsat = Eqsat::new(EqsatOptions::default());
    match eqsat.run_block(owner, block, context, &Target::c600()) {
        Some(Ok(outcome)) => outcome,
        Some(Err(error)) => panic!("the block is rewritten in place: {error}"),
        None => panic!("the block has e-graph ops"),
    }
}

const MIXED: &str = r#"
func.func private @sink(tensor<64x32xf16>) -> tensor<64x32xf16>
func.func @mixed(%x: tensor<64x32xf16>) -> tensor<64x32xf16> {
  %t = "ipu.rearrange"(%x) {permutation = array<i64: 1, 0>} : (tensor<64x32xf16>) -> tensor<32x64xf16>
  %tt = "ipu.rearrange"(%t) {permutation = array<i64: 1, 0>} : (tensor<32x64xf16>) -> tensor<64x32xf16>
  %n = arith.negf %tt : tensor<64x32xf16>
  %c = func.call @sink(%n) : (tensor<64x32xf16>) -> tensor<64x32xf16>
  %u = "ipu.rearrange"(%c) {permutation = array<i64: 1, 0>} : (tensor<64x32xf16>) -> tensor<32x64xf16>
  %uu = "ipu.rearrange"(%u) {permutation = array<i64: 1, 0>} : (tensor<32x64xf16>) -> tensor<64x32xf16>
  %s = "ipu.add"(%uu, %n) : (tensor<64x32xf16>, tensor<64x32xf16>) -> tensor<64x32xf16>
  return %s : tensor<64x32xf16>
}
"#;

#[test]
fn other_dialects_and_calls_are_leaves_and_the_rewrite_happens_around_them() {
    let context = create_context(false).expect("context");
    let module = parse_module(&context, MIXED).expect("parse");
    let function = functions(module.as_operation())["mixed"];
    let block = entry_block(function).expect("body");
    let input = ops(block);
    let (negf, call) = (input[2], input[3]);

    let graph = BlockGraph::new(function, block).unwrap_or_else(|e| panic!("{}", e.message));
    // The four rearranges and the add; the argument, the call's and the negation's results
    // are the leaves, in order of first use.
    assert_eq!(graph.op_count(), 5);
    assert!(!graph.is_original(&negf) && !graph.is_original(&call));
    let leaf = |name: &str| graph.leaf_value(name).map(|(value, _)| raw(value));
    assert_eq!(leaf("v0"), Some(raw(block.argument(0).expect("%x").into())));
    assert_eq!(leaf("v1"), Some(result(call)));
    assert_eq!(leaf("v2"), Some(result(negf)));
    assert_eq!(leaf("v3"), None);
    drop(graph);

    let outcome = run(&context, function, block);
    assert!(outcome.rewritten);
    assert_eq!(
        names(block),
        ["arith.negf", "func.call", "ipu.add", "func.return"]
    );
    let output = ops(block);
    assert_eq!(
        operands(output[0]),
        [raw(block.argument(0).expect("%x").into())]
    );
    assert_eq!(operands(output[1]), [result(output[0])]);
    assert_eq!(operands(output[2]), [result(output[1]), result(output[0])]);
    assert_eq!(operands(output[3]), [result(output[2])]);
    assert!(module.as_operation().verify());
}

const INSERTED: &str = r#"
func.func @inserted(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %w = "ipu.cast"(%x) {ipu.inserted} : (tensor<64x64xf16>) -> tensor<64x64xf32>
  %n = "ipu.cast"(%w) : (tensor<64x64xf32>) -> tensor<64x64xf16>
  return %n : tensor<64x64xf16>
}
"#;

#[test]
fn an_inserted_conversion_is_a_leaf_not_looked_through() {
    let context = create_context(false).expect("context");
    let module = parse_module(&context, INSERTED).expect("parse");
    let function = functions(module.as_operation())["inserted"];
    let block = entry_block(function).expect("body");
    let input = ops(block);

    // The reader maps the conversion's result to %x; the e-graph reads the user cast as a
    // cast of the f32 conversion result (looked through, it would be an f16 -> f16 identity
    // cast and disappear).
    let graph = BlockGraph::new(function, block).unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!(graph.op_count(), 1);
    assert_eq!(raw_op(graph.original_op(0)), raw_op(input[1]));
    let leaf = graph.leaf_value("v0").map(|(value, _)| raw(value));
    assert_eq!(leaf, Some(result(input[0])));
    drop(graph);

    let outcome = run(&context, function, block);
    assert!(!outcome.rewritten);
    assert_eq!(names(block), ["ipu.cast", "ipu.cast", "func.return"]);
    let output = ops(block);
    assert_eq!(operands(output[1]), [result(output[0])]);
    assert_eq!(operands(output[2]), [result(output[1])]);
}

const BLOCKS: &str = r#"
func.func @blocks(%x: tensor<64x32xf16>, %n: index) -> tensor<64x32xf16> {
  cf.br ^next(%n : index)
^next(%i: index):
  %t = "ipu.rearrange"(%x) {permutation = array<i64: 1, 0>} : (tensor<64x32xf16>) -> tensor<32x64xf16>
  %tt = "ipu.rearrange"(%t) {permutation = array<i64: 1, 0>} : (tensor<32x64xf16>) -> tensor<64x32xf16>
  return %tt : tensor<64x32xf16>
}
"#;

#[test]
fn a_later_block_is_rewritten_over_values_of_the_blocks_before_it() {
    let context = create_context(false).expect("context");
    let module = parse_module(&context, BLOCKS).expect("parse");
    let function = functions(module.as_operation())["blocks"];
    let entry = entry_block(function).expect("body");
    let next = entry.next_in_region().expect("a second block");
    let eqsat = Eqsat::new(EqsatOptions::default());
    assert!(eqsat
        .run_block(function, entry, &context, &Target::c600())
        .is_none());
    let outcome = run(&context, function, next);
    assert!(outcome.rewritten);
    assert_eq!(names(next), ["func.return"]);
    let x = raw(entry.argument(0).expect("%x").into());
    assert_eq!(operands(ops(next)[0]), [x]);
    assert!(module.as_operation().verify());
}
