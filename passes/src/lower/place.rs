//! Storage placement: package support memory first, then every buffer an address.
//!
//! ## Support memory
//! Standard memory starts with what every tile needs besides planned data: the linked runtime
//! (`RUNTIME_BYTES`), the profile counters, the tile's exchange tables (one row per send and
//! receive of the busiest tile), the host exchange code and the generated step code (one
//! record per step). Planned standard data starts at the next memory element boundary after
//! that (and never below the target's support reservation), so support code and data never
//! share an element: instruction fetch contends with exchange per element.
//!
//! ## Buffers
//! A buffer holds one address on all its tiles. Buffers are placed largest first (ties: id),
//! each at the lowest aligned address of its class's range that no placed buffer overlapping
//! it in tiles and lifetime occupies. Element rule: a buffer of at most one memory element
//! (16 KiB on the C600) never straddles an element boundary, so one transfer into it touches
//! one element. Out of memory names the tile, the class, the shortfall and the largest
//! buffers live there.

use std::collections::BTreeSet;

use ipu_device::{MemoryClass, Target};
use tracing::info;

use super::program::TileProgram;
use super::LowerError;

/// Bytes of the linked tile runtime (supervisor, vertex dispatch, sync) at the start of
/// standard memory.
pub const RUNTIME_BYTES: u32 = 6328;
/// Profile counters per tile: cycle counters of the run and the last step.
pub const PROFILE_BYTES: u32 = 32;
/// Host exchange code per tile (stream page handlers).
pub const HOST_CODE_BYTES: u32 = 436;
/// Bytes of one exchange table row (address, bytes, slot, peer).
pub const EXCHANGE_ROW_BYTES: u32 = 16;
/// Bytes of generated code per step (a call or exchange dispatch record).
pub const STEP_CODE_BYTES: u32 = 8;
/// Alignment of every buffer (128-bit loads from interleaved memory).
pub const ALIGNMENT: u32 = 16;
/// Steps (calls and exchange dispatches) the planner leaves room for in the support
/// reservation: planning does not know a program's steps; real programs have a few per op
/// (the 27-layer encoder, a scan, 140; the So400m layer at batch 4, 136).
pub const PLANNED_STEPS: u32 = 256;

/// Where the support memory's code starts and the planned data in standard memory starts, for
/// `exchange_table_bytes` of exchange code and `generated_code_bytes` of step code: after the
/// runtime, the profile counters, the exchange table and the host code, the code, and the
/// data from the next memory element at or beyond the reservation.
fn support_layout(
    exchange_table_bytes: u64,
    generated_code_bytes: u64,
    target: &Target,
) -> (u64, u64) {
    let memory = &target.memory;
    let start = u64::from(memory.standard_start.value);
    let code_address =
        (start + u64::from(RUNTIME_BYTES + PROFILE_BYTES + HOST_CODE_BYTES) + exchange_table_bytes)
            .next_multiple_of(u64::from(ALIGNMENT));
    let support_end = (code_address + generated_code_bytes)
        .max(start + u64::from(memory.support_reservation.value));
    let standard_start = support_end.next_multiple_of(u64::from(memory.element_bytes.value.max(1)));
    (code_address, standard_start)
}

/// Bytes of standard memory the support memory takes beyond its reservation on every tile
/// when the busiest tile's exchange code is `code_bytes` and the program has
/// [`PLANNED_STEPS`] steps, as [`support_memory`] lays it out: what the planner charges
/// against the planned data.
pub fn support_beyond_reservation(code_bytes: u64, target: &Target) -> u64 {
    let memory = &target.memory;
    let step_code = u64::from(PLANNED_STEPS * STEP_CODE_BYTES);
    let (_, standard_start) = support_layout(code_bytes, step_code, target);
    let reserved =
        u64::from(memory.standard_start.value) + u64::from(memory.support_reservation.value);
    standard_start
        .saturating_sub(reserved.next_multiple_of(u64::from(memory.element_bytes.value.max(1))))
}

/// The support memory of every tile (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupportMemory {
    pub linked_end: u32,
    pub profile_bytes: u32,
    pub exchange_table_bytes: u32,
    pub host_code_bytes: u32,
    pub generated_code_bytes: u32,
    pub code_address: u32,
    /// Address ranges `[start, end)` for planned data, per class.
    pub standard_ranges: Vec<(u32, u32)>,
    pub interleaved_ranges: Vec<(u32, u32)>,
}

fn align_up(value: u32, to: u32) -> u32 {
    value.div_ceil(to) * to
}

/// The tile with the most exchange rows (transfers it sends or receives) over the program,
/// and their count.
fn busiest_exchange_tile(program: &TileProgram) -> (u32, u32) {
    let mut rows = vec![0u32; program.tiles as usize];
    for (_, moves) in program.exchange_steps() {
        for m in moves {
            for tile in std::iter::once(m.source_tile).chain(m.destinations.iter().copied()) {
                if let Some(r) = rows.get_mut(tile as usize) {
                    *r += 1;
                }
            }
        }
    }
    rows.into_iter()
        .enumerate()
        .max_by_key(|&(tile, r)| (r, std::cmp::Reverse(tile)))
        .map_or((0, 0), |(tile, r)| (tile as u32, r))
}

/// Sizes the support memory from the program's steps.
pub fn support_memory(program: &TileProgram, target: &Target) -> SupportMemory {
    let memory = &target.memory;
    let steps = program.initialize.len() + program.run.len();
    let (_, busiest) = busiest_exchange_tile(program);
    let linked_end = memory.standard_start.value + RUNTIME_BYTES;
    let exchange_table_bytes = busiest * EXCHANGE_ROW_BYTES;
    let generated_code_bytes = steps as u32 * STEP_CODE_BYTES;
    let (code_address, standard_start) = support_layout(
        u64::from(exchange_table_bytes),
        u64::from(generated_code_bytes),
        target,
    );
    let address = |a: u64| u32::try_from(a).unwrap_or(u32::MAX);
    let (code_address, standard_start) = (address(code_address), address(standard_start));
    SupportMemory {
        linked_end,
        profile_bytes: PROFILE_BYTES,
        exchange_table_bytes,
        host_code_bytes: HOST_CODE_BYTES,
        generated_code_bytes,
        code_address,
        standard_ranges: vec![(standard_start, memory.standard_end.value)],
        interleaved_ranges: vec![(
            memory.interleaved_start.value,
            memory
                .interleaved_end
                .value
                .min(memory.loadable_limit.value),
        )],
    }
}

/// Places every buffer (see the module docs); logs the support memory line.
pub fn place_storage(
    program: &mut TileProgram,
    target: &Target,
) -> Result<SupportMemory, LowerError> {
    program.compute_lifetimes();
    let support = support_memory(program, target);
    if let Some(&(start, end)) = support.standard_ranges.first() {
        if start >= end {
            let (tile, rows) = busiest_exchange_tile(program);
            let needed = u64::from(start - target.memory.standard_start.value);
            let room = u64::from(end - target.memory.standard_start.value);
            return Err(LowerError::OutOfMemory {
                tile,
                class: MemoryClass::Standard.name(),
                buffer: format!(
                    "support memory (runtime, exchange code of {rows} exchange rows, step code)"
                ),
                needed,
                free: room,
                shortfall: needed.saturating_sub(room),
                largest: "none: the support memory alone does not fit".into(),
            });
        }
    }
    info!(
        linked_end = support.linked_end,
        profile_bytes = support.profile_bytes,
        exchange_table_bytes = support.exchange_table_bytes,
        host_code_bytes = support.host_code_bytes,
        generated_code_bytes = support.generated_code_bytes,
        code_address = support.code_address,
        standard_ranges = ?support.standard_ranges,
        "allocated package support memory"
    );
    let tile_sets: Vec<BTreeSet<u32>> = program
        .buffers
        .iter()
        .map(|b| b.tiles.iter().copied().collect())
        .collect();
    if tracing::enabled!(tracing::Level::DEBUG) {
        // Bytes per tile of the buffers that live over the whole run (weights, parameters,
        // resident stores): their busiest tile bounds every buffer spanning it.
        let end = program.run.len();
        let mut resident = vec![0u64; program.tiles as usize];
        for buffer in program.buffers.iter().filter(|b| b.live == (0, end)) {
            for &tile in &buffer.tiles {
                if let Some(bytes) = resident.get_mut(tile as usize) {
                    *bytes += u64::from(buffer.bytes);
                }
            }
        }
        let (busiest, most) = resident
            .iter()
            .enumerate()
            .max_by_key(|&(tile, bytes)| (*bytes, std::cmp::Reverse(tile)))
            .map_or((0, 0), |(tile, bytes)| (tile, *bytes));
        let mean = resident.iter().sum::<u64>() / resident.len().max(1) as u64;
        tracing::debug!(
            busiest,
            most,
            mean,
            "bytes per tile living over the whole run"
        );
    }
    // First fit in a few orders: largest first, then by first use (buffers that live early
    // pack below those that live late), then smallest first (small buffers that must not
    // straddle an element take the element tails). The first order that places everything
    // wins; when none does, the largest-first failure is reported.
    let ids = || (0..program.buffers.len()).collect::<Vec<usize>>();
    let mut by_size = ids();
    by_size.sort_by_key(|&b| (std::cmp::Reverse(program.buffers[b].bytes), b));
    let mut by_start = ids();
    by_start.sort_by_key(|&b| {
        let buffer = &program.buffers[b];
        (buffer.live.0, std::cmp::Reverse(buffer.bytes), b)
    });
    let mut by_size_up = ids();
    by_size_up.sort_by_key(|&b| (program.buffers[b].bytes, b));
    let mut first_error = None;
    let classes: Vec<MemoryClass> = program.buffers.iter().map(|b| b.class).collect();
    let reset = |program: &mut TileProgram| {
        for (buffer, &class) in program.buffers.iter_mut().zip(&classes) {
            buffer.address = None;
            buffer.class = class;
        }
    };
    for order in [by_size, by_start, by_size_up] {
        reset(program);
        // Interleaved buffers (GEMM weights the AMP streams) first, so a standard buffer that
        // spills into interleaved memory never takes their room.
        let order: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&b| classes[b] == MemoryClass::Interleaved)
            .chain(
                order
                    .iter()
                    .copied()
                    .filter(|&b| classes[b] == MemoryClass::Standard),
            )
            .collect();
        match place_in_order(program, &support, &order, &tile_sets, target) {
            Ok(()) => {
                let spilled = program
                    .buffers
                    .iter()
                    .zip(&classes)
                    .filter(|(b, &class)| b.class != class)
                    .count();
                if spilled > 0 {
                    info!(
                        spilled,
                        "standard buffers placed in interleaved memory (standard memory is full)"
                    );
                }
                return Ok(support);
            }
            Err(error) => {
                first_error.get_or_insert(error);
            }
        }
    }
    reset(program);
    Err(first_error.unwrap_or_else(|| LowerError::Input("placement failed".into())))
}

/// First-fit placement of the buffers in `order`.
fn place_in_order(
    program: &mut TileProgram,
    support: &SupportMemory,
    order: &[usize],
    tile_sets: &[BTreeSet<u32>],
    target: &Target,
) -> Result<(), LowerError> {
    let mut placed: Vec<usize> = Vec::new();
    for &id in order {
        let class = program.buffers[id].class;
        let address = match first_fit(program, support, (id, class), &placed, tile_sets, target) {
            Ok(address) => address,
            // Data needs no instruction fetch: a standard buffer that does not fit standard
            // memory may live in interleaved memory (every kernel and the exchange read and
            // write both); only code must stay standard.
            Err(error) if class == MemoryClass::Standard => {
                match first_fit(
                    program,
                    support,
                    (id, MemoryClass::Interleaved),
                    &placed,
                    tile_sets,
                    target,
                ) {
                    Ok(address) => {
                        program.buffers[id].class = MemoryClass::Interleaved;
                        address
                    }
                    Err(_) => return Err(error),
                }
            }
            Err(error) => return Err(error),
        };
        program.buffers[id].address = Some(address);
        placed.push(id);
    }
    Ok(())
}

/// The lowest address of `class`'s ranges where buffer `id` fits beside the `placed` buffers
/// it overlaps (in tiles and lifetime), or the out-of-memory error naming it there.
fn first_fit(
    program: &TileProgram,
    support: &SupportMemory,
    (id, class): (usize, MemoryClass),
    placed: &[usize],
    tile_sets: &[BTreeSet<u32>],
    target: &Target,
) -> Result<u32, LowerError> {
    let element = target.memory.element_bytes.value;
    {
        let buffer = &program.buffers[id];
        let ranges = match class {
            MemoryClass::Standard => &support.standard_ranges,
            MemoryClass::Interleaved => &support.interleaved_ranges,
        };
        let conflicts: Vec<(u32, u32)> = placed
            .iter()
            .filter(|&&other| {
                let o = &program.buffers[other];
                o.class == class
                    && o.live.0 <= buffer.live.1
                    && buffer.live.0 <= o.live.1
                    && !tile_sets[id].is_disjoint(&tile_sets[other])
            })
            .filter_map(|&other| {
                let o = &program.buffers[other];
                o.address.map(|a| (a, a + o.bytes))
            })
            .collect();
        let fits = |start: u32| -> Option<u32> {
            let mut at = align_up(start, ALIGNMENT);
            if buffer.bytes <= element && at / element != (at + buffer.bytes - 1) / element {
                at = align_up(at, element);
            }
            let clash = conflicts
                .iter()
                .any(|&(s, e)| at < e && s < at + buffer.bytes);
            (!clash).then_some(at)
        };
        let mut found = None;
        for &(start, end) in ranges {
            let candidates = std::iter::once(start).chain(conflicts.iter().map(|&(_, e)| e));
            let mut best: Option<u32> = None;
            for candidate in candidates.filter(|&c| c >= start) {
                if let Some(at) = fits(candidate) {
                    if u64::from(at) + u64::from(buffer.bytes) <= u64::from(end)
                        && best.is_none_or(|b| at < b)
                    {
                        best = Some(at);
                    }
                }
            }
            if best.is_some() {
                found = best;
                break;
            }
        }
        found.ok_or_else(|| {
            out_of_memory(
                program,
                id,
                ranges,
                &conflicts,
                tile_sets,
                support_overrun(program, support, target),
            )
        })
    }
}

/// The ops whose exchange phases give `tile` the most exchange rows, largest first (at most
/// `count`): each phase counted for the compute step that follows it (the op it feeds).
/// With `debug` tracing on, every phase's sends and receives on `tile` are logged.
fn exchange_rows_by_op(program: &TileProgram, tile: u32, count: usize) -> Vec<(String, u32)> {
    let mut rows: std::collections::BTreeMap<String, u32> = std::collections::BTreeMap::new();
    let mut pending = 0u32;
    for step in program.initialize.iter().chain(&program.run) {
        match step {
            super::program::TileStep::Exchange { moves, phase } => {
                let sends = moves.iter().filter(|m| m.source_tile == tile).count() as u32;
                let receives = moves
                    .iter()
                    .map(|m| m.destinations.iter().filter(|&&t| t == tile).count() as u32)
                    .sum::<u32>();
                if sends + receives > 0 {
                    tracing::debug!(tile, phase, sends, receives, "exchange rows");
                }
                pending += sends + receives;
            }
            super::program::TileStep::Compute { provenance, .. } if pending > 0 => {
                *rows.entry(provenance.clone()).or_default() += pending;
                pending = 0;
            }
            _ => {}
        }
    }
    if pending > 0 {
        *rows.entry("the end of the program".into()).or_default() += pending;
    }
    let mut rows: Vec<(String, u32)> = rows.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    rows.truncate(count);
    rows
}

/// How the support memory outgrew its reservation, when it did (the planner's budgets leave
/// only the reservation to it): its bytes beyond it and its exchange code, with the ops that
/// give the busiest tile most of its rows.
fn support_overrun(
    program: &TileProgram,
    support: &SupportMemory,
    target: &Target,
) -> Option<String> {
    let reserved = target.memory.standard_start.value + target.memory.support_reservation.value;
    let start = support.standard_ranges.first().map_or(0, |range| range.0);
    (start > reserved).then(|| {
        let (busiest, _) = busiest_exchange_tile(program);
        let shares = exchange_rows_by_op(program, busiest, 3)
            .into_iter()
            .map(|(op, rows)| format!("{op} {rows}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "the support memory takes {} B of standard memory beyond its {} B reservation (exchange code {} B: {} exchange rows on the busiest tile, tile {busiest}; most from {shares})",
            start - reserved,
            target.memory.support_reservation.value,
            support.exchange_table_bytes,
            support.exchange_table_bytes / EXCHANGE_ROW_BYTES,
        )
    })
}

fn out_of_memory(
    program: &TileProgram,
    id: usize,
    ranges: &[(u32, u32)],
    conflicts: &[(u32, u32)],
    tile_sets: &[BTreeSet<u32>],
    support: Option<String>,
) -> LowerError {
    let buffer = &program.buffers[id];
    let capacity: u64 = ranges
        .iter()
        .map(|&(s, e)| u64::from(e.saturating_sub(s)))
        .sum();
    let used: u64 = conflicts
        .iter()
        .map(|&(s, e)| u64::from(e.saturating_sub(s)))
        .sum();
    let free = capacity.saturating_sub(used);
    let tile = buffer.tiles.first().copied().unwrap_or(0);
    let mut live: Vec<(u32, String)> = program
        .buffers
        .iter()
        .enumerate()
        .filter(|(other, o)| {
            o.class == buffer.class
                && o.address.is_some()
                && tile_sets[*other].contains(&tile)
                && o.live.0 <= buffer.live.1
                && buffer.live.0 <= o.live.1
        })
        .map(|(_, o)| (o.bytes, o.name.clone()))
        .collect();
    live.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let largest = live
        .iter()
        .take(3)
        .map(|(bytes, name)| format!("{name} ({bytes} B)"))
        .collect::<Vec<_>>()
        .join(", ");
    let shortfall = u64::from(buffer.bytes).saturating_sub(free);
    let largest = match (support, buffer.class) {
        (Some(support), MemoryClass::Standard) if largest.is_empty() => support,
        (Some(support), MemoryClass::Standard) => format!("{largest}; {support}"),
        _ => largest,
    };
    if shortfall == 0 {
        return LowerError::Fragmented {
            tile,
            class: buffer.class.name(),
            buffer: buffer.name.clone(),
            needed: u64::from(buffer.bytes),
            free,
            largest: if largest.is_empty() {
                "none".into()
            } else {
                largest
            },
        };
    }
    LowerError::OutOfMemory {
        tile,
        class: buffer.class.name(),
        buffer: buffer.name.clone(),
        needed: u64::from(buffer.bytes),
        free,
        shortfall,
        largest: if largest.is_empty() {
            "none".into()
        } else {
            largest
        },
    }
}

#[cfg(test)]
mod support_tests {

    #[test]
    fn support_beyond_its_reservation_is_what_support_memory_lays_out() {
        let target = Target::c600();
        let reservation = u64::from(target.memory.support_reservation.value);
        let element = u64::from(target.memory.element_bytes.value);
        // What the reservation holds beside the runtime, profile, host code and steps' code.
        let fixed = u64::from(
            RUNTIME_BYTES + PROFILE_BYTES + HOST_CODE_BYTES + PLANNED_STEPS * STEP_CODE_BYTES,
        );
        let room = reservation - fixed;
        assert_eq!(support_beyond_reservation(0, &target), 0);
        assert_eq!(support_beyond_reservation(room - 64, &target), 0);
        // One byte over takes a whole memory element; one element more, two.
        assert_eq!(support_beyond_reservation(room + 1, &target), element);
        assert_eq!(
            support_beyond_reservation(room + element + 1, &target),
            2 * element
        );
        // The 4,558-row exchange code of the batch-4 So400m layer's first plan: 32 KiB, as
        // storage placement laid it out (with its 140 steps).
        assert_eq!(support_beyond_reservation(4558 * 16, &target), 2 * element);
    }
    use super::*;
    use crate::tiling::program::{Move, Place, TileStep};

    /// A 4-tile program whose one exchange phase sends `rows` 16-byte transfers from tile 1
    /// to tile 0 (one exchange row each on both).
    fn program_with_rows(rows: u32) -> TileProgram {
        let mut program = TileProgram {
            tiles: 4,
            ..TileProgram::default()
        };
        let a = program.buffer("a", MemoryClass::Standard, 64, vec![0, 1]);
        let moves: Vec<Move> = (0..rows)
            .map(|i| Move {
                source_tile: 1,
                source: Place::at(a, 0),
                destinations: vec![0],
                destination: Place::at(a, 32 + (i % 2) * 16),
                bytes: 16,
            })
            .collect();
        program.run.push(TileStep::Exchange { phase: 0, moves });
        program
    }

    /// A program whose exchange code (one row per transfer a tile takes part in) leaves no
    /// standard memory for data is refused with the tile, the rows and the shortfall, not a
    /// panic (its support range used to end below its start).
    #[test]
    fn exchange_code_beyond_the_standard_memory_is_an_out_of_memory_error() {
        let target = Target::c600();
        let region = target.memory.standard_end.value - target.memory.standard_start.value;
        let rows = region / EXCHANGE_ROW_BYTES + 1;
        let mut program = program_with_rows(rows);
        let error = place_storage(&mut program, &target).unwrap_err();
        let text = error.to_string();
        assert!(
            matches!(error, LowerError::OutOfMemory { tile: 0, .. }),
            "{text}"
        );
        assert!(text.contains(&format!("{rows} exchange rows")), "{text}");
    }

    /// A buffer that no longer fits because the exchange code outgrew the support
    /// reservation (which the planner's budgets assume) is refused naming that overrun.
    #[test]
    fn an_out_of_memory_error_names_support_beyond_its_reservation() {
        let target = Target::c600();
        let mut program = program_with_rows(6000);
        // Larger than the interleaved memory too: it cannot spill there.
        program.buffer("big", MemoryClass::Standard, 500_000, vec![0]);
        let text = place_storage(&mut program, &target)
            .unwrap_err()
            .to_string();
        assert!(text.contains("for big"), "{text}");
        assert!(
            text.contains(
                "beyond its 49152 B reservation (exchange code 96000 B: 6000 exchange rows on the busiest tile, tile 0; most from the end of the program 6000)"
            ),
            "{text}"
        );
    }

    /// Standard buffers that do not fit standard memory spill into interleaved memory (data
    /// needs no instruction fetch), after the interleaved buffers took their room; what fits
    /// neither is refused in standard memory's terms.
    #[test]
    fn standard_data_spills_into_interleaved_memory_after_the_interleaved_buffers() {
        let target = Target::c600();
        let standard = target.memory.standard_budget.value;
        let interleaved = target.memory.interleaved_budget.value;
        let mut program = TileProgram {
            tiles: 2,
            ..TileProgram::default()
        };
        // Three standard buffers of 60 % of the standard budget, live together on tile 0,
        // and one interleaved buffer of half the interleaved budget.
        let ids: Vec<usize> = (0..3)
            .map(|i| {
                program.buffer(
                    format!("s{i}"),
                    MemoryClass::Standard,
                    standard / 10 * 6,
                    vec![0],
                )
            })
            .collect();
        let weights = program.buffer("w", MemoryClass::Interleaved, interleaved / 2, vec![0]);
        let runs = ids
            .iter()
            .chain([&weights])
            .map(|&b| crate::tiling::program::Run {
                tile: 0,
                kernel: 0,
                args: vec![crate::tiling::program::Arg::Address(Place::at(b, 0))],
            })
            .collect();
        program.kernels.push(ipu_device::KernelSpec::Count);
        program.run.push(TileStep::Compute {
            provenance: "op0".into(),
            runs,
        });
        place_storage(&mut program, &target).unwrap();
        let classes: Vec<MemoryClass> = ids.iter().map(|&b| program.buffers[b].class).collect();
        let spilled = classes
            .iter()
            .filter(|&&c| c == MemoryClass::Interleaved)
            .count();
        assert_eq!(spilled, 2, "{classes:?}");
        assert_eq!(program.buffers[weights].class, MemoryClass::Interleaved);
        // Every interleaved buffer lies in the interleaved range, none overlapping.
        let mut spans: Vec<(u32, u32)> = program
            .buffers
            .iter()
            .filter(|b| b.class == MemoryClass::Interleaved)
            .map(|b| {
                let at = b.address.unwrap();
                assert!(at >= target.memory.interleaved_start.value, "{}", b.name);
                (at, at + b.bytes)
            })
            .collect();
        spans.sort_unstable();
        assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0), "{spans:?}");
        // A fourth standard buffer fits nowhere: refused as standard memory, on tile 0.
        let mut program_full = program.clone();
        let extra = program_full.buffer("s3", MemoryClass::Standard, standard / 10 * 6, vec![0]);
        if let TileStep::Compute { runs, .. } = &mut program_full.run[0] {
            runs.push(crate::tiling::program::Run {
                tile: 0,
                kernel: 0,
                args: vec![crate::tiling::program::Arg::Address(Place::at(extra, 0))],
            });
        }
        for buffer in &mut program_full.buffers {
            buffer.class = if buffer.name == "w" {
                MemoryClass::Interleaved
            } else {
                MemoryClass::Standard
            };
        }
        let error = place_storage(&mut program_full, &target).unwrap_err();
        assert!(
            matches!(
                error,
                LowerError::OutOfMemory {
                    tile: 0,
                    class: "standard",
                    ..
                }
            ),
            "{error}"
        );
    }
}
