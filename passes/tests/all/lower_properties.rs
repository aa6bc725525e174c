//! Properties of the lowering passes over seeded random GEMMs (M x K x N, 1..=64 tiles, F16
//! and FP8 inputs): every exchange schedule hazard-free (the device's own load-time check
//! plus no sender bus or receiver used twice at once), every byte of every move sent once,
//! buffer placements disjoint per tile while live and inside their class's ranges, every
//! stream element (the output's above all) covered by exactly one piece, and the `ipu_tile`
//! IR round trip exact after every stage. The same properties on the general lowering are in
//! [`crate::lower_general_properties`], determinism in [`crate::lower_determinism`]; both use
//! the helpers here.

use std::collections::BTreeMap;

use ipu_device::{MemoryClass, Target};
use ipu_passes::exchange::schedule::transfer_cycles;
use ipu_passes::lower::ir::{self, TileDesign};
use ipu_passes::lower::program::{Move, Place, TileProgram, TileStep};
use ipu_passes::lower::{lower_graph, optimize, passes, LowerOptions, PrecisionPolicy};
use ipu_passes::plan_ir;
use ipu_runtime::package::BindingRole;
use melior::ir::{operation::OperationLike, Location, Module};
use melior::Context;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One random GEMM case.
#[derive(Debug, Clone, Copy)]
struct Case {
    m: u32,
    k: u32,
    n: u32,
    tiles: u32,
    precision: PrecisionPolicy,
}

/// The `func.func @gemm` of one F16 `ipu.matmul` of `m x k` by `k x n`.
pub(crate) fn gemm_source(m: u32, k: u32, n: u32) -> String {
    format!(
        "func.func @gemm(%x: tensor<{m}x{k}xf16>, %w: tensor<{k}x{n}xf16>) -> tensor<{m}x{n}xf16> {{\n\
         %y = \"ipu.matmul\"(%x, %w) : (tensor<{m}x{k}xf16>, tensor<{k}x{n}xf16>) -> tensor<{m}x{n}xf16>\n\
         return %y : tensor<{m}x{n}xf16>\n}}\n"
    )
}

/// `count` seeded cases the lowering accepts: N a multiple of 16 with at most `tiles` column
/// blocks, K a multiple of 16 (the AMP K group) and any M (rows are padded per row block).
/// Every fourth case has K above 1024 (two K blocks for 64-column blocks) and at most two rows
/// per tile, F16, so that B (over 130 KiB) and A's two copies fit standard memory (see
/// `placement_fits_when_the_element_rule_allows` for what happens with more rows).
fn cases(seed: u64, count: usize) -> Vec<Case> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let tiles = rng.random_range(1..=64u32);
        let case = if out.len() % 4 == 3 {
            Case {
                m: rng.random_range(1..=2 * tiles),
                k: 16 * rng.random_range(65..=72u32),
                n: 64,
                tiles,
                precision: PrecisionPolicy::Native,
            }
        } else {
            Case {
                m: rng.random_range(1..=128u32),
                k: 16 * rng.random_range(1..=24u32),
                // Column blocks of 64 (or 48/32/16 when N is not a multiple of 64).
                n: 16 * rng.random_range(1..=(4 * tiles).min(32)),
                tiles,
                precision: if rng.random_bool(0.5) {
                    PrecisionPolicy::Fp8
                } else {
                    PrecisionPolicy::Native
                },
            }
        };
        if ipu_passes::lower::gemm::GemmGrid::new(case.m, case.k, case.n, case.tiles).is_ok() {
            out.push(case);
        }
    }
    out
}

#[test]
fn cases_cover_the_shapes_of_interest() {
    let cases = cases(SEED, 64);
    let grids: Vec<_> = cases
        .iter()
        .map(|c| ipu_passes::lower::gemm::GemmGrid::new(c.m, c.k, c.n, c.tiles).expect("grid"))
        .collect();
    assert!(cases.iter().any(|c| c.tiles == 1) || cases.iter().any(|c| c.tiles <= 2));
    assert!(cases.iter().any(|c| c.tiles >= 48));
    assert!(cases.iter().any(|c| c.precision == PrecisionPolicy::Fp8));
    assert!(
        grids.iter().any(|g| g.k_steps > 1),
        "a case with several K blocks"
    );
    assert!(
        grids.iter().any(|g| g.m % g.rows_padded != 0),
        "a case with padded rows"
    );
    assert!(
        grids.iter().any(|g| g.nb > 1 && g.mb > 1),
        "a case with both broadcasts"
    );
}

/// The design of `case` after `ipu-lower-to-tiles` (through the Rust entry points).
fn lowered(context: &Context, case: &Case, target: &Target) -> TileDesign {
    let source = gemm_source(case.m, case.k, case.n);
    lowered_source(
        context,
        &source,
        case.tiles,
        case.precision,
        target,
        &format!("{case:?}"),
    )
}

/// The design of the first function of `source` after `ipu-lower-to-tiles`.
pub(crate) fn lowered_source(
    context: &Context,
    source: &str,
    tiles: u32,
    precision: PrecisionPolicy,
    target: &Target,
    label: &str,
) -> TileDesign {
    let module = Module::parse(context, source).unwrap_or_else(|| panic!("{label}: parse"));
    let table = plan_ir::functions(module.as_operation());
    let bodies = plan_ir::body_names(module.as_operation());
    let (_, function) = table
        .iter()
        .find(|(name, _)| !bodies.contains(*name))
        .unwrap_or_else(|| panic!("{label}: no function"));
    let read = plan_ir::read_function(*function, &table)
        .unwrap_or_else(|e| panic!("{label}: read: {}", e.message));
    let options = LowerOptions {
        target: target.clone(),
        tiles,
        precision,
        fp8_scale: 0,
    };
    let program = lower_graph(&read.name, &read.graph, &BTreeMap::new(), &options)
        .unwrap_or_else(|e| panic!("{label}: lower: {e}"));
    TileDesign::new(program, &read.name, target)
}

/// Every stage of the lowering after `ipu-lower-to-tiles`, with the design after each.
fn stages(context: &Context, case: &Case, target: &Target) -> Vec<(&'static str, TileDesign)> {
    stages_of(lowered(context, case, target), target, &format!("{case:?}"))
}

/// The stages after `ipu-lower-to-tiles` applied to `design`.
fn stages_of(
    mut design: TileDesign,
    target: &Target,
    case: &str,
) -> Vec<(&'static str, TileDesign)> {
    let mut out = vec![("lower-to-tiles", design.clone())];
    passes::place_storage(&mut design, target).unwrap_or_else(|e| panic!("{case:?}: place: {e}"));
    out.push(("place-storage", design.clone()));
    passes::lower_exchanges(&mut design, target, true)
        .unwrap_or_else(|e| panic!("{case:?}: exchanges: {e}"));
    out.push(("lower-exchanges", design.clone()));
    optimize::optimize_exchange_placement(&mut design, target)
        .unwrap_or_else(|e| panic!("{case:?}: optimize: {e}"));
    out.push(("optimize-exchange-placement", design.clone()));
    passes::emit_tile_code(&mut design, target).unwrap_or_else(|e| panic!("{case:?}: emit: {e}"));
    out.push(("emit-tile-code", design));
    out
}

/// The final (emitted) design of `case`.
fn emitted(context: &Context, case: &Case, target: &Target) -> TileDesign {
    stages(context, case, target)
        .pop()
        .map(|(_, design)| design)
        .expect("stages")
}

/// A context with the ipu dialects.
pub(crate) fn context() -> Context {
    ipu_dialects::context::create_context(false).expect("context")
}

pub(crate) const SEED: u64 = 0x5eed_0005;
const CASES: usize = 40;

/// `intervals` (start, end) are pairwise disjoint.
fn disjoint(intervals: &mut [(u64, u64)]) -> Option<((u64, u64), (u64, u64))> {
    intervals.sort_unstable();
    intervals
        .windows(2)
        .find(|w| w[1].0 < w[0].1)
        .map(|w| (w[0], w[1]))
}

/// Every byte of every move sent exactly once by its stored schedule; the encoded phases pass
/// the device's load-time check, and no sender bus or receiver carries two pieces at once.
fn check_exchanges(label: &str, design: &TileDesign, target: &Target) {
    let program = &design.program;
    for (phase, moves) in program.exchange_steps() {
        let stored = &design.schedules[&phase];
        assert_eq!(stored.key, ir::schedule_key(moves), "{label} phase {phase}");
        let mut per_move: BTreeMap<u64, Vec<(u64, u64)>> = BTreeMap::new();
        for &[index, offset, bytes, _] in &stored.pieces {
            assert!(bytes > 0, "{label} phase {phase}: empty piece");
            per_move
                .entry(index)
                .or_default()
                .push((offset, offset + bytes));
        }
        for (index, m) in moves.iter().enumerate() {
            let mut pieces = per_move.remove(&(index as u64)).unwrap_or_default();
            pieces.sort_unstable();
            let mut cursor = 0;
            for (start, end) in pieces {
                assert_eq!(
                    start,
                    cursor,
                    "{label} phase {phase} move {index}: bytes {cursor}..{start} sent {}",
                    if start > cursor { "never" } else { "twice" }
                );
                cursor = end;
            }
            assert_eq!(
                cursor,
                u64::from(m.bytes),
                "{label} phase {phase} move {index}"
            );
        }
        assert!(
            per_move.is_empty(),
            "{label} phase {phase}: rows name missing moves"
        );
    }
    let code = optimize::code_ranges(design);
    let lowered = passes::lowered_phases(design, target).expect("encode phases");
    assert_eq!(lowered.len(), program.exchange_phases());
    for lowered in &lowered {
        let phase = &lowered.phase;
        ipu_device::sim::check_exchange_phase(target, phase, &code, "run", phase.phase)
            .unwrap_or_else(|e| panic!("{label} phase {}: {e}", phase.phase));
        let mut buses: BTreeMap<u32, Vec<(u64, u64)>> = BTreeMap::new();
        for send in &phase.sends {
            let start = u64::from(send.slot);
            buses.entry(send.tile).or_default().push((
                start,
                start + transfer_cycles(u64::from(send.bytes), target),
            ));
        }
        let mut receivers: BTreeMap<u32, Vec<(u64, u64)>> = BTreeMap::new();
        for receive in &phase.receives {
            let start = u64::from(receive.slot);
            receivers.entry(receive.tile).or_default().push((
                start,
                start + transfer_cycles(u64::from(receive.bytes), target),
            ));
        }
        for (what, table) in [("sender", buses), ("receiver", receivers)] {
            for (tile, mut intervals) in table {
                if let Some((a, b)) = disjoint(&mut intervals) {
                    panic!(
                        "{label} phase {}: {what} tile {tile} busy at {a:?} and {b:?}",
                        phase.phase
                    );
                }
            }
        }
    }
}

#[test]
fn exchange_schedules_are_hazard_free() {
    let target = Target::c600();
    let context = context();
    for case in cases(SEED, CASES) {
        check_exchanges(
            &format!("{case:?}"),
            &emitted(&context, &case, &target),
            &target,
        );
    }
}

/// Placement after every placing stage: aligned, inside the class's ranges, disjoint on every
/// shared tile while both are live, and (at most one element) inside one memory element.
fn check_placement(label: &str, design: &TileDesign, target: &Target) {
    let support = design.support.as_ref().expect("placed");
    let buffers = &design.program.buffers;
    let element = target.memory.element_bytes.value;
    for (id, buffer) in buffers.iter().enumerate() {
        let at = buffer
            .address
            .unwrap_or_else(|| panic!("{label}: buffer {id} unplaced"));
        let end = at + buffer.bytes;
        assert_eq!(at % 16, 0, "{label}: buffer {id} at {at:#x} unaligned");
        let ranges = match buffer.class {
            MemoryClass::Standard => &support.standard_ranges,
            MemoryClass::Interleaved => &support.interleaved_ranges,
        };
        assert!(
            ranges.iter().any(|&(s, e)| s <= at && end <= e),
            "{label}: buffer {id} ({}) {at:#x}..{end:#x} outside its class's ranges {ranges:x?}",
            buffer.name
        );
        if buffer.bytes <= element {
            let first = target.element_of(at).expect("element").index;
            let last = target.element_of(end - 1).expect("element").index;
            assert_eq!(
                first, last,
                "{label}: buffer {id} ({}, {} B) at {at:#x} straddles elements",
                buffer.name, buffer.bytes
            );
        }
        for (other_id, other) in buffers.iter().enumerate().skip(id + 1) {
            let live = buffer.live.0 <= other.live.1 && other.live.0 <= buffer.live.1;
            let shared = buffer
                .tiles
                .iter()
                .any(|t| other.tiles.binary_search(t).is_ok());
            let other_at = other.address.expect("placed");
            let overlap = at < other_at + other.bytes && other_at < end;
            assert!(
                !(live && shared && overlap),
                "{label}: buffers {id} ({}) and {other_id} ({}) overlap at \
                 {at:#x}+{} / {other_at:#x}+{} while both live",
                buffer.name,
                other.name,
                buffer.bytes,
                other.bytes
            );
        }
    }
}

#[test]
fn placements_are_disjoint_and_inside_their_class() {
    let target = Target::c600();
    let context = context();
    for case in cases(SEED + 1, CASES) {
        for (stage, design) in stages(&context, &case, &target) {
            if design.support.is_some() {
                check_placement(&format!("{case:?} {stage}"), &design, &target);
            }
        }
    }
}

#[test]
fn every_stream_element_is_covered_exactly_once() {
    let target = Target::c600();
    let context = context();
    for case in cases(SEED + 2, CASES) {
        let design = emitted(&context, &case, &target);
        let program = &design.program;
        let roles: Vec<BindingRole> = program.bindings.iter().map(|b| b.role).collect();
        assert_eq!(
            roles.iter().filter(|&&r| r == BindingRole::Output).count(),
            1,
            "{case:?}: one output stream"
        );
        for binding in &program.bindings {
            let element_bytes = u64::from(binding.precision.bytes());
            let tensor_bytes = binding.shape.iter().product::<u64>() * element_bytes;
            if binding.role == BindingRole::Output {
                assert_eq!(binding.shape, vec![u64::from(case.m), u64::from(case.n)]);
            }
            // Every run of every piece (a strided piece gathers several).
            let mut runs: Vec<(u64, u64)> = binding
                .pieces
                .iter()
                .flat_map(|p| {
                    let buffer = &program.buffers[p.place.buffer];
                    assert!(
                        buffer.tiles.binary_search(&p.tile).is_ok(),
                        "{case:?} {}: piece on tile {} not holding {}",
                        binding.name,
                        p.tile,
                        buffer.name
                    );
                    assert!(p.place.offset + p.bytes <= buffer.bytes);
                    assert!(
                        p.runs >= 1 && p.bytes % p.runs == 0,
                        "{case:?} {}: {} B in {} runs",
                        binding.name,
                        p.bytes,
                        p.runs
                    );
                    assert!(p.runs > 1 || p.stride == 0, "one run records stride 0");
                    p.tensor_ranges()
                })
                .inspect(|run| {
                    assert_eq!(run.start % element_bytes, 0, "split element");
                    assert_eq!(run.end % element_bytes, 0, "split element");
                })
                .map(|run| (run.start, run.end))
                .collect();
            runs.sort_unstable();
            let mut cursor = 0;
            for (start, end) in runs {
                assert_eq!(
                    start,
                    cursor,
                    "{case:?} {}: tensor bytes {cursor}..{start} {}",
                    binding.name,
                    if start > cursor {
                        "never written"
                    } else {
                        "written twice"
                    }
                );
                cursor = end;
            }
            assert_eq!(
                cursor, tensor_bytes,
                "{case:?} {}: tail not covered",
                binding.name
            );
        }
    }
}

/// `design` written as an `ipu_tile` module reads back equal, and so does its printed text.
fn assert_ir_round_trip(context: &Context, design: &TileDesign, target: &Target, label: &str) {
    let module = Module::new(Location::unknown(context));
    ir::append_tile_module(
        context,
        module.as_operation(),
        Location::unknown(context),
        design,
    )
    .unwrap_or_else(|e| panic!("{label}: write: {e}"));
    assert!(module.as_operation().verify(), "{label}: verify");
    let modules = ir::tile_modules(module.as_operation());
    assert_eq!(modules.len(), 1);
    let read = ir::read_design(modules[0], target).unwrap_or_else(|e| panic!("{label}: read: {e}"));
    assert!(read == *design, "{label}: the design read back differs");
    // The printed text parses back to the same design too.
    let text = module.as_operation().to_string();
    let reparsed = Module::parse(context, &text).expect("reparse");
    let modules = ir::tile_modules(reparsed.as_operation());
    let again = ir::read_design(modules[0], target).expect("read reparsed");
    assert!(again == *design, "{label}: the reparsed design differs");
}

#[test]
fn tile_ir_round_trips_after_every_stage() {
    let target = Target::c600();
    let context = context();
    for case in cases(SEED + 3, CASES / 2) {
        for (stage, design) in stages(&context, &case, &target) {
            assert_ir_round_trip(&context, &design, &target, &format!("{case:?} {stage}"));
        }
    }
}

/// Emitted designs with their contiguous pieces rewritten as strided gathers of the same
/// bytes (each split into 2 to 4 runs, each run starting where the previous ends) round-trip
/// through the `ipu_tile` IR, and their packages carry the runs, validate, have the same
/// image and stream exactly the bytes of the contiguous packages.
#[test]
fn strided_pieces_round_trip_and_stream_the_same_bytes() {
    let target = Target::c600();
    let context = context();
    let mut rng = ChaCha8Rng::seed_from_u64(SEED + 6);
    for case in cases(SEED + 6, 8) {
        let label = format!("{case:?}");
        let design = emitted(&context, &case, &target);
        let mut strided = design.clone();
        let mut rewritten = 0;
        for binding in &mut strided.program.bindings {
            let elements_of = |bytes: u32| bytes / binding.precision.bytes();
            for piece in binding.pieces.iter_mut().filter(|p| p.runs == 1) {
                let elements = elements_of(piece.bytes);
                if let Some(runs) = [4, 3, 2].into_iter().find(|&r| elements % r == 0) {
                    piece.runs = runs;
                    piece.stride = u64::from(piece.bytes / runs);
                    rewritten += 1;
                }
            }
        }
        // Designs the split GEMM lowered already stream strided runs.
        let strided_already = design
            .program
            .bindings
            .iter()
            .any(|b| b.pieces.iter().any(|p| p.runs > 1));
        assert!(
            rewritten > 0 || strided_already,
            "{label}: no piece splits into runs"
        );
        assert_ir_round_trip(&context, &strided, &target, &label);

        let contiguous = passes::package_of_design(&design, &target, None)
            .unwrap_or_else(|e| panic!("{label}: package: {e}"));
        let gathered = passes::package_of_design(&strided, &target, None)
            .unwrap_or_else(|e| panic!("{label}: strided package: {e}"));
        gathered
            .validate()
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        assert!(gathered.image == contiguous.image, "{label}: images differ");
        // The package's bindings are the program's, in order.
        let hosts = &strided.program.bindings;
        assert_eq!(gathered.bindings.len(), hosts.len());
        for ((plain, binding), host) in contiguous
            .bindings
            .iter()
            .zip(&gathered.bindings)
            .zip(hosts)
        {
            for (piece, host) in binding.pieces.iter().zip(&host.pieces) {
                assert_eq!((piece.runs, piece.stride), (host.runs, host.stride));
            }
            let length = plain.tensor_bytes().expect("tensor size") as usize;
            let tensor: Vec<u8> = (0..length).map(|_| rng.random()).collect();
            let stream = binding.to_stream(&tensor).expect("gather");
            assert!(
                stream == plain.to_stream(&tensor).expect("gather"),
                "{label} {}: streams differ",
                binding.name
            );
            if binding.role == BindingRole::Output {
                assert!(binding.from_stream(&stream).expect("scatter") == tensor);
            }
        }
    }
}

/// A seeded program of tile pairs swapping buffers in one exchange phase (x_p from tile a to
/// b, y_p from b to a): the moves of a pair use different buses and receivers, so they run at
/// once and placement puts small x_p and y_p in one memory element, the conflict
/// ipu-optimize-exchange-placement resolves by moving receive buffers.
fn swap_program(seed: u64, pairs: std::ops::RangeInclusive<u32>, target: &Target) -> TileDesign {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut program = TileProgram {
        name: "swap".into(),
        tiles: target.geometry.tiles.value,
        ..TileProgram::default()
    };
    // Tiles 2p and 2p + 2k (k >= 1) never share a sender bus (tiles 2i and 2i + 1 do).
    let pairs = rng.random_range(pairs);
    let mut moves = Vec::new();
    for pair in 0..pairs {
        let a = 4 * pair;
        let b = a + 2;
        let tiles = vec![a, b];
        let bytes = |rng: &mut ChaCha8Rng| 16 * rng.random_range(1..=1280u32);
        let (x_bytes, y_bytes) = (bytes(&mut rng), bytes(&mut rng));
        let class = |rng: &mut ChaCha8Rng| {
            if rng.random_bool(0.25) {
                MemoryClass::Interleaved
            } else {
                MemoryClass::Standard
            }
        };
        let (x_class, y_class) = (class(&mut rng), class(&mut rng));
        let x = program.buffer(format!("x{pair}"), x_class, x_bytes, tiles.clone());
        let y = program.buffer(format!("y{pair}"), y_class, y_bytes, tiles);
        moves.push(Move {
            source_tile: a,
            source: Place::at(x, 0),
            destinations: vec![b],
            destination: Place::at(x, 0),
            bytes: x_bytes,
        });
        moves.push(Move {
            source_tile: b,
            source: Place::at(y, 0),
            destinations: vec![a],
            destination: Place::at(y, 0),
            bytes: y_bytes,
        });
    }
    program.run.push(TileStep::Exchange { phase: 0, moves });
    TileDesign::new(program, "swap", target)
}

/// Optimizes and emits seeded swap programs of `pairs` pairs; returns the buffers moved.
fn optimize_swap_programs(pairs: std::ops::RangeInclusive<u32>) -> u64 {
    let target = Target::c600();
    let mut moved = 0;
    for seed in 0..32 {
        let label = format!("swap program {seed} ({pairs:?} pairs)");
        let mut design = swap_program(SEED + seed, pairs.clone(), &target);
        passes::place_storage(&mut design, &target).expect("place");
        check_placement(&format!("{label} placed"), &design, &target);
        passes::lower_exchanges(&mut design, &target, true).expect("exchanges");
        moved += optimize::optimize_exchange_placement(&mut design, &target)
            .unwrap_or_else(|e| panic!("{label}: optimize: {e}"));
        check_placement(&format!("{label} optimized"), &design, &target);
        passes::emit_tile_code(&mut design, &target)
            .unwrap_or_else(|e| panic!("{label}: emit: {e}"));
        check_exchanges(&label, &design, &target);
    }
    moved
}

/// The optimizer's moves keep every placement rule, and what it emits is hazard-free.
#[test]
fn optimized_swap_pairs_keep_placement_rules_and_are_hazard_free() {
    assert!(
        optimize_swap_programs(1..=1) > 0,
        "no swap program needed a move"
    );
}

/// Several independent conflicts in one phase: each must be resolved.
#[test]
fn optimized_swap_programs_with_several_pairs_are_hazard_free() {
    assert!(optimize_swap_programs(2..=6) > 0);
}

/// 119x1088x64 on 31 tiles (F16): B takes 139,264 B of the 163,840 B of standard memory and
/// A and its AMP copy 8,704 B each, live together. It fits (A at the range start, B right
/// after it, the AMP copy in the last element), but largest-first placement puts B first,
/// after which no 16 KiB element has 8,704 B free for the AMP copy.
#[test]
fn placement_fits_when_the_element_rule_allows() {
    let target = Target::c600();
    let context = context();
    let case = Case {
        m: 119,
        k: 1088,
        n: 64,
        tiles: 31,
        precision: PrecisionPolicy::Native,
    };
    let mut design = lowered(&context, &case, &target);
    passes::place_storage(&mut design, &target).unwrap_or_else(|e| panic!("{case:?}: {e}"));
    check_placement(&format!("{case:?}"), &design, &target);
}

/// Runs `design` through every stage after `ipu-lower-to-tiles`, checks the placement rules
/// after each placed stage and the exchange rules of the final design; returns it.
pub(crate) fn check_every_stage(design: TileDesign, target: &Target, label: &str) -> TileDesign {
    let staged = stages_of(design, target, label);
    for (stage, design) in &staged {
        if design.support.is_some() {
            check_placement(&format!("{label} {stage}"), design, target);
        }
    }
    let (_, last) = staged.into_iter().last().expect("stages");
    check_exchanges(label, &last, target);
    last
}
