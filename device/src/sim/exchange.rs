//! Exchange phases: the hazard analysis done once at load (`hardwareTest`) and the data
//! movement done at run time.
//!
//! Timing model (see `image` for the encoding): a send of `bytes` starting at exchange cycle
//! `slot` occupies its sender's bus, and each matching receiver, for
//! `ceil(bytes / bytes_per_cycle)` cycles, moving `bytes_per_cycle` bytes per cycle in address
//! order. Each tile sends on its own bus (`Target::send_bus`; physical tiles `t` and
//! `t ^ pair_mask` share one only on a table with `exchange.send_bus_tiles` = 2); receives
//! are independent per tile. A receiver selects its source before each receive: the first
//! selection is part of the fixed phase cost, and a receive from another tile than the
//! tile's previous receive starts at least `exchange.latency_events` cycles after that one
//! ended (the select latency, paid per source switch). A receive's last word lands its route
//! time (`Target::route_cycles`, by folded column distance) after the receive ends; the
//! hazard checks below run in the senders' cycles, where every receive from one sender is
//! delayed alike and a source switch's latency exceeds any route difference. A phase costs
//! `phase_cycles` plus its horizon, the last cycle any transfer is busy or lands.
//!
//! Hazards, each refused with tile, step and address range:
//! * two sends on one bus at once (scheduler assigned overlapping slots to a physical pair);
//! * a tile receiving two transfers at once, or switching source sooner than the select
//!   latency after its previous receive;
//! * two receives writing the same bytes of one tile in one phase;
//! * a tile sending bytes it also receives in the same phase (the result would depend on
//!   timing; with this refused, reading every payload before writing any is exact);
//! * send-read and receive-write on the same memory element in the same cycle; an exchange
//!   access to an element holding code declared by the image, because the tile fetches its
//!   exchange instructions from there throughout the phase;
//! * a receive with no matching send (the receiver would wait forever).
//!
//! Every check sorts its intervals once and sweeps them, so analysis is O(n log n) in rows.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::error::{Cycles, SimError, StepAt};
use super::memory::{group_by_tile, TileGroup, TileMemories};
use crate::image::{AddressRange, ExchangePhase, ReceiveRow, SendRow};
use crate::target::Target;

/// Memory-element indices holding code, per tile (only tiles that declare code).
pub(crate) type CodeElements = BTreeMap<u32, Vec<u32>>;

/// A phase ready to apply.
#[derive(Debug)]
pub(crate) struct PhasePlan {
    pub sends: Vec<SendRow>,
    /// Receives sorted by tile (stable), each with the index of its send.
    pub receives: Vec<(ReceiveRow, usize)>,
    pub receive_groups: Vec<TileGroup>,
    /// Whether any receive reads this send (unheard sends need not be read).
    pub send_heard: Vec<bool>,
    /// Offset of each heard send's payload in the staging buffer, in send order.
    pub payload_offsets: Vec<Option<usize>>,
    pub payload_bytes: usize,
    /// Exchange cycles after the fixed phase cost.
    pub horizon: u64,
}

pub(crate) fn transfer_cycles(target: &Target, bytes: u32) -> u64 {
    u64::from(bytes).div_ceil(u64::from(target.exchange.bytes_per_cycle.value.max(1)))
}

fn range(address: u32, bytes: u32) -> AddressRange {
    AddressRange::new(address, bytes)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    SendRead,
    ReceiveWrite,
}

impl Use {
    fn name(self) -> &'static str {
        match self {
            Use::SendRead => "exchange send-read",
            Use::ReceiveWrite => "exchange receive-write",
        }
    }
}

/// An interval `[start, end)` with an owner, swept for overlaps between owners of different
/// kinds (or any two owners if `kinds_conflict` is not used).
#[derive(Clone, Copy)]
struct Interval {
    key: (u32, u32),
    start: u64,
    end: u64,
    kind: Use,
    row: usize,
}

/// Sorts by key then start and returns the first pair of intervals with equal key that
/// overlap and conflict according to `conflict(earlier_kind, later_kind)`. Keeps, per kind,
/// the interval reaching furthest, so each check is O(1) after the sort.
fn first_overlap(
    intervals: &mut [Interval],
    conflict: impl Fn(Use, Use) -> bool,
) -> Option<(Interval, Interval)> {
    intervals.sort_by_key(|i| (i.key, i.start, i.end, i.row));
    let mut furthest: [Option<Interval>; 2] = [None, None];
    let mut key = None;
    for &interval in intervals.iter() {
        if key != Some(interval.key) {
            key = Some(interval.key);
            furthest = [None, None];
        }
        for earlier in furthest.iter().flatten() {
            if earlier.end > interval.start && conflict(earlier.kind, interval.kind) {
                return Some((*earlier, interval));
            }
        }
        let slot = &mut furthest[interval.kind as usize];
        if slot.is_none_or(|f| f.end < interval.end) {
            *slot = Some(interval);
        }
    }
    None
}

/// Receives matched to their sends: each receive with the index of its send, in the phase's
/// receive order, and whether any receive reads each send.
struct MatchedReceives {
    matched: Vec<(ReceiveRow, usize)>,
    send_heard: Vec<bool>,
}

/// The rows of one phase, for naming the address range of an interval's row.
#[derive(Clone, Copy)]
struct PhaseRows<'a> {
    sends: &'a [SendRow],
    matched: &'a [(ReceiveRow, usize)],
}

impl PhaseRows<'_> {
    /// The address range of the send or receive row `row` of kind `kind`.
    fn row_range(self, kind: Use, row: usize) -> AddressRange {
        match kind {
            Use::ReceiveWrite => range(self.matched[row].0.address, self.matched[row].0.bytes),
            Use::SendRead => range(self.sends[row].address, self.sends[row].bytes),
        }
    }
}

/// The error for an exchange access by `tile` to `address..address + bytes` outside memory.
fn memory_access_error(target: &Target, tile: u32, address: u32, bytes: u32) -> SimError {
    SimError::MemoryAccess {
        tile,
        range: range(address, bytes),
        sram_start: target.memory.sram_base.value,
        sram_end: target.sram_end(),
        tiles: target.geometry.tiles.value,
    }
}

/// The exchange cycles `[start, end)` a send occupies its bus.
fn send_cycles(target: &Target, send: &SendRow) -> (u64, u64) {
    (
        u64::from(send.slot),
        u64::from(send.slot) + transfer_cycles(target, send.bytes),
    )
}

/// The phase's last busy cycle: the end of its last send, or the landing of a receive's last
/// word, its route time after the receive ends (`Target::route_cycles`).
fn phase_horizon(target: &Target, sends: &[SendRow], matched: &[(ReceiveRow, usize)]) -> u64 {
    let sent = sends.iter().map(|s| send_cycles(target, s).1);
    let landed = matched.iter().map(|(r, _)| {
        u64::from(r.slot)
            + transfer_cycles(target, r.bytes)
            + target.route_cycles(r.from_tile, r.tile)
    });
    sent.chain(landed).max().unwrap_or(0)
}

/// Refuses two sends on one send bus at once (one tile's, or a pair's where they share one).
fn check_sender_buses(target: &Target, sends: &[SendRow], at: &StepAt) -> Result<(), SimError> {
    let mut buses = Vec::with_capacity(sends.len());
    for (row, send) in sends.iter().enumerate() {
        let physical = target
            .logical_to_physical(send.tile)
            .map_err(|_| memory_access_error(target, send.tile, send.address, send.bytes))?;
        let (start, end) = send_cycles(target, send);
        buses.push(Interval {
            key: (target.send_bus(physical.index), 0),
            start,
            end,
            kind: Use::SendRead,
            row,
        });
    }
    if let Some((a, b)) = first_overlap(&mut buses, |_, _| true) {
        let (first, second) = (&sends[a.row], &sends[b.row]);
        return Err(SimError::SenderBusConflict {
            at: at.clone(),
            tile: second.tile,
            other_tile: first.tile,
            bus: a.key.0,
            cycles: Cycles {
                start: b.start,
                end: a.end.min(b.end),
            },
            range: range(second.address, second.bytes),
            other_range: range(first.address, first.bytes),
        });
    }
    Ok(())
}

/// Matches each receive to its send by (sender tile, slot), refusing receives with no send
/// or with a size differing from the send's.
fn match_receives(
    sends: &[SendRow],
    receives: &[ReceiveRow],
    at: &StepAt,
) -> Result<MatchedReceives, SimError> {
    let mut by_sender: Vec<(u32, u32, usize)> = sends
        .iter()
        .enumerate()
        .map(|(i, s)| (s.tile, s.slot, i))
        .collect();
    by_sender.sort_unstable();
    let mut matched = Vec::with_capacity(receives.len());
    let mut send_heard = vec![false; sends.len()];
    for receive in receives {
        let found = by_sender
            .binary_search_by(|&(tile, slot, _)| {
                (tile, slot).cmp(&(receive.from_tile, receive.slot))
            })
            .ok()
            .map(|at| by_sender[at].2);
        let Some(send_index) = found else {
            return Err(SimError::ReceiveWithoutSender {
                at: at.clone(),
                tile: receive.tile,
                from_tile: receive.from_tile,
                slot: receive.slot,
                bytes: receive.bytes,
                range: range(receive.address, receive.bytes),
            });
        };
        let send = &sends[send_index];
        if send.bytes != receive.bytes {
            return Err(SimError::ReceiveSizeMismatch {
                at: at.clone(),
                tile: receive.tile,
                from_tile: receive.from_tile,
                slot: receive.slot,
                bytes: receive.bytes,
                sent: send.bytes,
                range: range(receive.address, receive.bytes),
            });
        }
        send_heard[send_index] = true;
        matched.push((*receive, send_index));
    }
    Ok(MatchedReceives {
        matched,
        send_heard,
    })
}

/// Refuses a tile receiving two transfers at once, or starting a receive from a new source
/// less than the receive-select latency (`exchange.latency_events`) after its previous
/// receive (from another tile) ended.
fn check_receiver_occupancy(
    target: &Target,
    matched: &[(ReceiveRow, usize)],
    at: &StepAt,
) -> Result<(), SimError> {
    let mut busy: Vec<Interval> = matched
        .iter()
        .enumerate()
        .map(|(row, (r, _))| {
            let start = u64::from(r.slot);
            Interval {
                key: (r.tile, 0),
                start,
                end: start + transfer_cycles(target, r.bytes),
                kind: Use::ReceiveWrite,
                row,
            }
        })
        .collect();
    if let Some((a, b)) = first_overlap(&mut busy, |_, _| true) {
        let (first, second) = (&matched[a.row].0, &matched[b.row].0);
        return Err(SimError::ReceiverBusy {
            at: at.clone(),
            tile: second.tile,
            from_tile: second.from_tile,
            other_from: first.from_tile,
            cycles: Cycles {
                start: b.start,
                end: a.end.min(b.end),
            },
            range: range(second.address, second.bytes),
            other_range: range(first.address, first.bytes),
        });
    }
    // `first_overlap` left `busy` sorted by (tile, start) and found no overlap, so each
    // receive's predecessor on its tile is the one before it.
    let latency = u64::from(target.exchange.latency_events.value);
    for pair in busy.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let (first, second) = (&matched[a.row].0, &matched[b.row].0);
        if a.key == b.key && first.from_tile != second.from_tile && b.start < a.end + latency {
            return Err(SimError::ReceiveSelectTooSoon {
                at: at.clone(),
                tile: second.tile,
                from_tile: second.from_tile,
                other_from: first.from_tile,
                start: b.start,
                gap: b.start - a.end,
                latency,
                range: range(second.address, second.bytes),
                other_range: range(first.address, first.bytes),
            });
        }
    }
    Ok(())
}

/// Refuses, per tile, two receives writing the same bytes and a send reading bytes that are
/// also received.
fn check_byte_overlaps(rows: PhaseRows<'_>, at: &StepAt) -> Result<(), SimError> {
    let PhaseRows { sends, matched } = rows;
    let mut spans: Vec<Interval> = matched
        .iter()
        .enumerate()
        .map(|(row, (r, _))| Interval {
            key: (r.tile, 0),
            start: u64::from(r.address),
            end: range(r.address, r.bytes).end(),
            kind: Use::ReceiveWrite,
            row,
        })
        .chain(sends.iter().enumerate().map(|(row, s)| Interval {
            key: (s.tile, 0),
            start: u64::from(s.address),
            end: range(s.address, s.bytes).end(),
            kind: Use::SendRead,
            row,
        }))
        .collect();
    let Some((a, b)) = first_overlap(&mut spans, |x, y| {
        x == Use::ReceiveWrite || y == Use::ReceiveWrite
    }) else {
        return Ok(());
    };
    let row_range = |i: &Interval| rows.row_range(i.kind, i.row);
    Err(
        if a.kind == Use::ReceiveWrite && b.kind == Use::ReceiveWrite {
            SimError::OverlappingWrites {
                at: at.clone(),
                tile: b.key.0,
                range: row_range(&b),
                from_tile: matched[b.row].0.from_tile,
                other_range: row_range(&a),
                other_from: matched[a.row].0.from_tile,
            }
        } else {
            let (send, receive) = if a.kind == Use::SendRead {
                (a, b)
            } else {
                (b, a)
            };
            SimError::SendReceiveOverlap {
                at: at.clone(),
                tile: a.key.0,
                send_range: row_range(&send),
                receive_range: row_range(&receive),
            }
        },
    )
}

/// One send or receive row as an access to tile memory during the phase.
struct RowAccess {
    tile: u32,
    address: u32,
    bytes: u32,
    slot: u32,
    kind: Use,
    row: usize,
}

/// Every send and receive row of the phase as a memory access, sends first.
fn row_accesses<'a>(rows: PhaseRows<'a>) -> impl Iterator<Item = RowAccess> + 'a {
    let sends = rows.sends.iter().enumerate().map(|(row, s)| RowAccess {
        tile: s.tile,
        address: s.address,
        bytes: s.bytes,
        slot: s.slot,
        kind: Use::SendRead,
        row,
    });
    let receives = rows
        .matched
        .iter()
        .enumerate()
        .map(|(row, (r, _))| RowAccess {
            tile: r.tile,
            address: r.address,
            bytes: r.bytes,
            slot: r.slot,
            kind: Use::ReceiveWrite,
            row,
        });
    sends.chain(receives)
}

/// Splits every row's access into per-memory-element intervals in exchange cycles, refusing
/// any access to an element holding code.
fn element_accesses(
    target: &Target,
    rows: PhaseRows<'_>,
    code: &CodeElements,
    at: &StepAt,
) -> Result<Vec<Interval>, SimError> {
    let bytes_per_cycle = u64::from(target.exchange.bytes_per_cycle.value.max(1));
    let mut accesses: Vec<Interval> = Vec::new();
    for access in row_accesses(rows) {
        let RowAccess {
            tile,
            address,
            bytes,
            slot,
            kind,
            row,
        } = access;
        let end = u64::from(address) + u64::from(bytes);
        let mut cursor = u64::from(address);
        while cursor < end {
            let element = target
                .element_of(cursor as u32)
                .map_err(|_| memory_access_error(target, tile, address, bytes))?;
            let element_end = (u64::from(element.start) + u64::from(element.bytes)).min(end);
            if code
                .get(&tile)
                .is_some_and(|elements| elements.contains(&element.index))
            {
                let start = u64::from(slot) + (cursor - u64::from(address)) / bytes_per_cycle;
                return Err(SimError::ElementConflict {
                    at: at.clone(),
                    tile,
                    element: element.index,
                    element_range: range(element.start, element.bytes),
                    first: "instruction fetch",
                    range: range(element.start, element.bytes),
                    second: kind.name(),
                    other_range: rows.row_range(kind, row),
                    cycles: Cycles {
                        start,
                        end: u64::from(slot)
                            + (element_end - u64::from(address)).div_ceil(bytes_per_cycle),
                    },
                });
            }
            accesses.push(Interval {
                key: (tile, element.index),
                start: u64::from(slot) + (cursor - u64::from(address)) / bytes_per_cycle,
                end: u64::from(slot) + (element_end - u64::from(address)).div_ceil(bytes_per_cycle),
                kind,
                row,
            });
            cursor = element_end;
        }
    }
    Ok(accesses)
}

/// Refuses a send-read and a receive-write on the same memory element in the same cycle, and
/// any exchange access to an element holding code.
fn check_element_accesses(
    target: &Target,
    rows: PhaseRows<'_>,
    code: &CodeElements,
    at: &StepAt,
) -> Result<(), SimError> {
    let mut accesses = element_accesses(target, rows, code, at)?;
    let Some((a, b)) = first_overlap(&mut accesses, |x, y| x != y) else {
        return Ok(());
    };
    let element = target.element_of(
        rows.row_range(b.kind, b.row)
            .start
            .max(target.memory.sram_base.value),
    );
    let (element_start, element_bytes) = element.map(|e| (e.start, e.bytes)).unwrap_or((0, 0));
    let element_start = if element_bytes == 0 { 0 } else { element_start };
    Err(SimError::ElementConflict {
        at: at.clone(),
        tile: b.key.0,
        element: b.key.1,
        element_range: range(element_start, element_bytes),
        first: a.kind.name(),
        range: rows.row_range(a.kind, a.row),
        second: b.kind.name(),
        other_range: rows.row_range(b.kind, b.row),
        cycles: Cycles {
            start: b.start,
            end: a.end.min(b.end),
        },
    })
}

/// Offsets of each heard send's payload in the staging buffer, in send order, and the
/// buffer's total size.
fn payload_layout(sends: &[SendRow], send_heard: &[bool]) -> (Vec<Option<usize>>, usize) {
    let mut payload_bytes = 0usize;
    let payload_offsets = sends
        .iter()
        .zip(send_heard)
        .map(|(send, &heard)| {
            heard.then(|| {
                payload_bytes += send.bytes as usize;
                payload_bytes - send.bytes as usize
            })
        })
        .collect();
    (payload_offsets, payload_bytes)
}

/// Checks one exchange phase for every hazard and plans its data movement.
pub(crate) fn analyse(
    target: &Target,
    phase: &ExchangePhase,
    code: &CodeElements,
    at: &StepAt,
) -> Result<PhasePlan, SimError> {
    let sends = phase.sends.clone();
    check_sender_buses(target, &sends, at)?;
    let MatchedReceives {
        matched,
        send_heard,
    } = match_receives(&sends, &phase.receives, at)?;
    check_receiver_occupancy(target, &matched, at)?;
    let rows = PhaseRows {
        sends: &sends,
        matched: &matched,
    };
    check_byte_overlaps(rows, at)?;
    check_element_accesses(target, rows, code, at)?;

    let horizon = phase_horizon(target, &sends, &matched);
    let (payload_offsets, payload_bytes) = payload_layout(&sends, &send_heard);
    let receive_tiles: Vec<u32> = matched.iter().map(|(r, _)| r.tile).collect();
    let (order, receive_groups) = group_by_tile(&receive_tiles);
    let receives = order.into_iter().map(|i| matched[i]).collect();
    Ok(PhasePlan {
        sends,
        receives,
        receive_groups,
        send_heard,
        payload_offsets,
        payload_bytes,
        horizon,
    })
}

impl PhasePlan {
    /// Moves the phase's data: reads every heard payload first, then writes every receiver's
    /// memory in parallel over receiving tiles.
    pub fn apply(&self, memory: &mut TileMemories, staging: &mut Vec<u8>) -> Result<(), SimError> {
        // Payloads go through one staging buffer the simulator keeps across phases: a fresh
        // buffer per send would page-fault its memory in again on every phase.
        let heard: Vec<&SendRow> = self
            .sends
            .iter()
            .zip(&self.send_heard)
            .filter_map(|(send, &heard)| heard.then_some(send))
            .collect();
        staging.resize(self.payload_bytes, 0);
        let mut chunks: Vec<&mut [u8]> = Vec::with_capacity(heard.len());
        let mut rest = staging.as_mut_slice();
        for send in &heard {
            let (chunk, tail) = rest.split_at_mut(send.bytes as usize);
            chunks.push(chunk);
            rest = tail;
        }
        {
            let memory = &*memory;
            chunks
                .into_par_iter()
                .zip(heard.par_iter())
                .try_for_each(|(chunk, send)| memory.read_into(send.tile, send.address, chunk))?;
        }
        let base = memory.sram_base();
        let staging = staging.as_slice();
        memory.par_for_groups(&self.receive_groups, |_tile, tile_memory, rows| {
            for (receive, send_index) in &self.receives[rows] {
                let Some(offset) = self.payload_offsets[*send_index] else {
                    continue;
                };
                let payload = &staging[offset..offset + receive.bytes as usize];
                let start = (receive.address - base) as usize;
                tile_memory[start..start + payload.len()].copy_from_slice(payload);
            }
        });
        Ok(())
    }

    /// Bytes each tile sent and received in this phase, as (tile, sent, received) deltas.
    pub fn traffic(&self) -> impl Iterator<Item = (u32, u64, u64)> + '_ {
        self.sends
            .iter()
            .map(|s| (s.tile, u64::from(s.bytes), 0))
            .chain(
                self.receives
                    .iter()
                    .map(|(r, _)| (r.tile, 0, u64::from(r.bytes))),
            )
    }
}
