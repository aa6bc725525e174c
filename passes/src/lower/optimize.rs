//! Exchange-aware buffer placement (`ipu-optimize-exchange-placement`).
//!
//! A tile cannot read a memory element for a send while the exchange writes a receive into
//! the same element: the device refuses such a phase at load, and the only schedule-side fix
//! is to serialize the two transfers, which lengthens the phase's horizon. Placement decides
//! which element a buffer lands in, so it can remove the conflict for free: this pass finds,
//! per phase, receive buffers that share an element with a send-read on the same tile at
//! overlapping cycles, moves each such buffer to the lowest address of its class where no
//! buffer live at the same time on its tiles sits and whose elements no send of a phase it
//! receives in reads, and keeps a move when it lowers the number of conflicting buffers
//! (independent conflicts are resolved one at a time). A conflict no move removes (a tile
//! sending one part of a buffer while receiving another part of it, as an all-gather into one
//! buffer does) is fixed on the schedule side: that phase is rescheduled at the current
//! addresses with the conflicting transfers serialized (`rescheduled exchange phase around
//! memory-element conflicts placement could not remove phase=N cycles_before= cycles_after=`).
//! Every other phase keeps its stored schedule, which must validate at the new addresses (only
//! addresses moved); it logs `reused exchange optimization after validating relocated rows
//! phase=N` for each of them.

use std::collections::{BTreeMap, BTreeSet};

use ipu_device::image::AddressRange;
use ipu_device::Target;
use tracing::info;

use super::exchange::validate_relocated;
use super::ir::{StoredSchedule, TileDesign};
use super::place::ALIGNMENT;
use super::program::{BufferId, Move};
use super::LowerError;
use crate::exchange::TransferAddresses;

/// Per tile, the code range every tile that holds data runs from (the package declares one
/// code range per used tile).
pub fn code_ranges(design: &TileDesign) -> Vec<(u32, AddressRange)> {
    let Some(support) = &design.support else {
        return Vec::new();
    };
    let range = AddressRange::new(support.code_address, support.generated_code_bytes.max(1));
    let tiles: BTreeSet<u32> = design
        .program
        .buffers
        .iter()
        .flat_map(|b| b.tiles.iter().copied())
        .collect();
    tiles.into_iter().map(|t| (t, range)).collect()
}

fn phases(design: &TileDesign) -> Vec<(u32, &[Move])> {
    design.program.exchange_steps().collect()
}

/// Element indices of `[address, address + bytes)`.
fn elements(target: &Target, address: u32, bytes: u32) -> Vec<u32> {
    crate::exchange::schedule::elements(target, address, u64::from(bytes))
}

/// Receive buffers of one phase that share an element with a send-read on the same tile at
/// overlapping cycles.
fn conflicting_receives(
    design: &TileDesign,
    phase: u32,
    moves: &[Move],
    target: &Target,
) -> BTreeSet<BufferId> {
    let Some(schedule) = design.schedules.get(&phase) else {
        return BTreeSet::new();
    };
    let program = &design.program;
    let address = |buffer: BufferId| program.buffers[buffer].address.unwrap_or(0);
    let per_cycle = u64::from(target.exchange.bytes_per_cycle.value.max(1));
    // (tile, element) -> send-read intervals.
    let mut reads: BTreeMap<(u32, u32), Vec<(u64, u64)>> = BTreeMap::new();
    for &[index, offset, bytes, slot] in &schedule.pieces {
        let m = &moves[index as usize];
        let at = address(m.source.buffer) + m.source.offset + offset as u32;
        for e in elements(target, at, bytes as u32) {
            reads
                .entry((m.source_tile, e))
                .or_default()
                .push((slot, slot + bytes.div_ceil(per_cycle)));
        }
    }
    let mut found = BTreeSet::new();
    for &[index, offset, bytes, slot] in &schedule.pieces {
        let m = &moves[index as usize];
        let at = address(m.destination.buffer) + m.destination.offset + offset as u32;
        let end = slot + bytes.div_ceil(per_cycle);
        for e in elements(target, at, bytes as u32) {
            for &tile in &m.destinations {
                if reads
                    .get(&(tile, e))
                    .is_some_and(|v| v.iter().any(|&(s, t)| s < end && slot < t))
                {
                    found.insert(m.destination.buffer);
                }
            }
        }
    }
    found
}

/// The lowest aligned address for `buffer` in its class's ranges that overlaps no buffer live
/// at the same time on a shared tile and none of the `avoid` elements, and (for a buffer of at
/// most one memory element) does not straddle two elements, as storage placement requires.
fn relocation(
    design: &TileDesign,
    buffer: BufferId,
    avoid: &BTreeSet<u32>,
    target: &Target,
) -> Option<u32> {
    let support = design.support.as_ref()?;
    let program = &design.program;
    let b = &program.buffers[buffer];
    let ranges = match b.class {
        ipu_device::MemoryClass::Standard => &support.standard_ranges,
        ipu_device::MemoryClass::Interleaved => &support.interleaved_ranges,
    };
    let tiles: BTreeSet<u32> = b.tiles.iter().copied().collect();
    let mut taken: Vec<(u32, u32)> = program
        .buffers
        .iter()
        .enumerate()
        .filter(|&(id, o)| {
            id != buffer
                && o.class == b.class
                && o.live.0 <= b.live.1
                && b.live.0 <= o.live.1
                && o.tiles.iter().any(|t| tiles.contains(t))
        })
        .filter_map(|(_, o)| o.address.map(|a| (a, a + o.bytes)))
        .collect();
    taken.sort_unstable();
    for &(start, end) in ranges {
        let mut candidates: Vec<u32> = std::iter::once(start)
            .chain(taken.iter().map(|&(_, e)| e))
            .chain(avoid.iter().filter_map(|&e| {
                // The first address after an avoided element.
                let probe = (start..end).step_by(target.memory.element_bytes.value as usize);
                probe
                    .filter(|&a| target.element_of(a).is_ok_and(|x| x.index == e))
                    .map(|a| {
                        let el = target.element_of(a).ok()?;
                        Some(el.start + el.bytes)
                    })
                    .next()
                    .flatten()
            }))
            // Element starts: where a buffer of at most one element fits without straddling.
            .chain({
                let element = target.memory.element_bytes.value;
                (start.div_ceil(element)..end.div_ceil(element)).map(move |i| i * element)
            })
            .filter(|&c| c >= start)
            .map(|c| c.div_ceil(ALIGNMENT) * ALIGNMENT)
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        for at in candidates {
            if u64::from(at) + u64::from(b.bytes) > u64::from(end) {
                continue;
            }
            if taken.iter().any(|&(s, e)| at < e && s < at + b.bytes) {
                continue;
            }
            let spanned = elements(target, at, b.bytes);
            if spanned.iter().any(|e| avoid.contains(e)) {
                continue;
            }
            // The placement rule: a buffer of at most one element lies inside one element.
            if b.bytes <= target.memory.element_bytes.value && spanned.len() > 1 {
                continue;
            }
            return Some(at);
        }
    }
    None
}

/// Elements any send of a phase in which `buffer` receives reads on `buffer`'s tiles.
fn read_elements(design: &TileDesign, buffer: BufferId, target: &Target) -> BTreeSet<u32> {
    let program = &design.program;
    let tiles: BTreeSet<u32> = program.buffers[buffer].tiles.iter().copied().collect();
    let mut out = BTreeSet::new();
    for (_, moves) in phases(design) {
        if !moves.iter().any(|m| m.destination.buffer == buffer) {
            continue;
        }
        for m in moves.iter().filter(|m| tiles.contains(&m.source_tile)) {
            if let Some(a) = program.buffers[m.source.buffer].address {
                out.extend(elements(target, a + m.source.offset, m.bytes));
            }
        }
    }
    out
}

/// Moves conflicting receive buffers (see the module docs); returns how many moved.
pub fn optimize_exchange_placement(
    design: &mut TileDesign,
    target: &Target,
) -> Result<u64, LowerError> {
    if design.support.is_none() {
        return Err(LowerError::Input(
            "the program is not placed; run ipu-place-storage first".into(),
        ));
    }
    let mut candidates = BTreeSet::new();
    for (phase, moves) in phases(design) {
        candidates.extend(conflicting_receives(design, phase, moves, target));
    }
    // A move is kept when it lowers the number of conflicting receive buffers: independent
    // conflicts are resolved one by one (the relocation itself never overlaps a live buffer).
    let conflicts = |design: &TileDesign| -> usize {
        phases(design)
            .into_iter()
            .map(|(phase, moves)| conflicting_receives(design, phase, moves, target).len())
            .sum()
    };
    let mut remaining = conflicts(design);
    let mut moved = 0;
    for buffer in candidates {
        let avoid = read_elements(design, buffer, target);
        let Some(at) = relocation(design, buffer, &avoid, target) else {
            continue;
        };
        let before = design.program.buffers[buffer].address;
        design.program.buffers[buffer].address = Some(at);
        let after = conflicts(design);
        if after < remaining {
            remaining = after;
            moved += 1;
        } else {
            design.program.buffers[buffer].address = before;
        }
    }
    let rescheduled = reschedule_conflicting(design, target)?;
    validate_all(design, target, Some(&rescheduled))?;
    info!(
        moved_buffers = moved,
        rescheduled_phases = rescheduled.len(),
        phases = design.schedules.len(),
        "optimized exchange placement"
    );
    Ok(moved)
}

/// Reschedules at the current addresses every phase whose stored schedule still has a tile
/// read a memory element for a send while a receive writes it (a conflict no move removed,
/// such as a tile sending one part of a buffer while receiving another part of it): the
/// conflicting pieces are serialized ([`crate::exchange::schedule_phase_at`]). Returns the
/// phases rescheduled.
fn reschedule_conflicting(
    design: &mut TileDesign,
    target: &Target,
) -> Result<BTreeSet<u32>, LowerError> {
    let program = &design.program;
    let address = |buffer: BufferId| program.buffers[buffer].address.unwrap_or(0);
    let mut updates = Vec::new();
    for (phase, moves) in phases(design) {
        if conflicting_receives(design, phase, moves, target).is_empty() {
            continue;
        }
        let requests = super::exchange::phase_requests(moves);
        let addresses: Vec<TransferAddresses> = moves
            .iter()
            .map(|m| TransferAddresses {
                source: address(m.source.buffer) + m.source.offset,
                destination: address(m.destination.buffer) + m.destination.offset,
            })
            .collect();
        let fail = |detail: String| LowerError::Exchange { phase, detail };
        let schedule = crate::exchange::schedule_phase_at(&requests, &addresses, target)
            .map_err(|e| fail(e.to_string()))?;
        crate::exchange::check_schedule(&requests, &schedule, target).map_err(fail)?;
        let before = design.schedules.get(&phase).map_or(0, |s| s.cycles);
        info!(
            phase,
            cycles_before = before,
            cycles_after = schedule.cycles,
            "rescheduled exchange phase around memory-element conflicts placement could not remove"
        );
        let key = design.schedules.get(&phase).map_or(0, |s| s.key);
        updates.push((phase, StoredSchedule::new(key, &schedule)));
    }
    let phases = updates.iter().map(|(phase, _)| *phase).collect();
    design.schedules.extend(updates);
    Ok(phases)
}

/// Validates every phase's stored schedule at the current addresses (with `log`, one
/// `reused exchange optimization after validating relocated rows` line per phase not in the
/// set: those were rescheduled, not reused).
pub fn validate_all(
    design: &TileDesign,
    target: &Target,
    log: Option<&BTreeSet<u32>>,
) -> Result<(), LowerError> {
    use rayon::prelude::*;
    let code = code_ranges(design);
    // Phases are independent: validated in parallel, reported in program order (the first
    // invalid phase's error, then one line per phase).
    let results: Vec<Result<u32, LowerError>> = phases(design)
        .par_iter()
        .map(|&(phase, moves)| {
            let stored = design
                .schedules
                .get(&phase)
                .ok_or_else(|| LowerError::Exchange {
                    phase,
                    detail: "has no schedule; run ipu-lower-exchanges first".into(),
                })?;
            validate_relocated(&design.program, phase, moves, stored, target, &code)?;
            Ok(phase)
        })
        .collect();
    for result in results {
        let phase = result?;
        if log.is_some_and(|rescheduled| !rescheduled.contains(&phase)) {
            info!(
                phase,
                "reused exchange optimization after validating relocated rows"
            );
        }
    }
    Ok(())
}
