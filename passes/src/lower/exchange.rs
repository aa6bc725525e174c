//! Exchange encoding for the lowering: the scheduler's requests of a phase, the slotted
//! transfers of a stored schedule at the program's current addresses, and the validation of
//! a schedule whose rows moved (the device's own load-time check). Scheduling itself is
//! `ipu-lower-exchanges` ([`super::passes::lower_exchanges`]) with the shared scheduler
//! (`crate::exchange::schedule_phase`, the one `ipu-select-finalist` prices with).

use ipu_device::image::{ExchangePhase, Transfer};
use ipu_device::Target;

use super::ir::StoredSchedule;
use super::program::{Move, TileProgram};
use super::LowerError;
use crate::exchange::{
    check_schedule, schedule::transfer_cycles, PhaseSchedule, ScheduledPiece, TransferRequest,
};

/// One lowered phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoweredPhase {
    pub phase: ExchangePhase,
    /// Scheduled exchange cycles (fixed phase cost plus horizon).
    pub cycles: u64,
}

fn address_of(program: &TileProgram, place: super::program::Place) -> Result<u32, LowerError> {
    let buffer = &program.buffers[place.buffer];
    buffer
        .address
        .map(|a| a + place.offset)
        .ok_or_else(|| LowerError::Unplaced {
            buffer: buffer.name.clone(),
        })
}

/// The scheduler's requests for a phase's moves (what a schedule depends on).
pub fn phase_requests(moves: &[Move]) -> Vec<TransferRequest> {
    moves
        .iter()
        .map(|m| TransferRequest {
            source: m.source_tile,
            destinations: m.destinations.clone(),
            bytes: u64::from(m.bytes),
        })
        .collect()
}

/// The slotted transfers of a stored schedule at the program's current addresses.
fn transfers(
    program: &TileProgram,
    phase: u32,
    moves: &[Move],
    stored: &StoredSchedule,
) -> Result<Vec<Transfer>, LowerError> {
    let mut transfers = Vec::with_capacity(stored.pieces.len());
    for &[index, offset, bytes, slot] in &stored.pieces {
        let bad = |detail: String| LowerError::Exchange { phase, detail };
        let m = moves.get(index as usize).ok_or_else(|| {
            bad(format!(
                "schedule row names move {index} of {}",
                moves.len()
            ))
        })?;
        if offset + bytes > u64::from(m.bytes) {
            return Err(bad(format!(
                "schedule row {offset}+{bytes} overruns move {index} of {} B",
                m.bytes
            )));
        }
        let offset = offset as u32;
        transfers.push(Transfer {
            source_tile: m.source_tile,
            source_address: address_of(program, m.source)? + offset,
            destinations: m.destinations.clone(),
            destination_address: address_of(program, m.destination)? + offset,
            bytes: bytes as u32,
            slot: u32::try_from(slot).map_err(|_| bad(format!("slot {slot} exceeds 32 bits")))?,
        });
    }
    Ok(transfers)
}

/// Encodes a phase from its stored schedule.
pub fn encode_phase(
    program: &TileProgram,
    phase: u32,
    moves: &[Move],
    stored: &StoredSchedule,
    _target: &Target,
) -> Result<LoweredPhase, LowerError> {
    Ok(LoweredPhase {
        phase: ExchangePhase::from_transfers(phase, &transfers(program, phase, moves, stored)?),
        cycles: stored.cycles,
    })
}

/// Validates a stored schedule whose rows may have moved to new addresses: the schedule
/// still covers every byte once without two pieces on one bus or receiver, and the encoded
/// phase passes the device's own load-time check (overlapping writes, send-read vs
/// receive-write on one memory element, exchange access to code elements).
pub fn validate_relocated(
    program: &TileProgram,
    phase: u32,
    moves: &[Move],
    stored: &StoredSchedule,
    target: &Target,
    code: &[(u32, ipu_device::image::AddressRange)],
) -> Result<(), LowerError> {
    let requests = phase_requests(moves);
    let mut schedule = PhaseSchedule {
        pieces: stored
            .pieces
            .iter()
            .map(|&[transfer, offset, bytes, start]| ScheduledPiece {
                transfer: transfer as usize,
                offset,
                bytes,
                start,
                end: start + transfer_cycles(bytes, target),
            })
            .collect(),
        starts: Vec::new(),
        horizon: 0,
        cycles: stored.cycles,
        lower_bound: 0,
    };
    schedule.horizon = schedule.pieces.iter().map(|p| p.end).max().unwrap_or(0);
    check_schedule(&requests, &schedule, target)
        .map_err(|detail| LowerError::Exchange { phase, detail })?;
    let encoded = ExchangePhase::from_transfers(phase, &transfers(program, phase, moves, stored)?);
    ipu_device::sim::check_exchange_phase(target, &encoded, code, "run", phase).map_err(|e| {
        LowerError::Exchange {
            phase,
            detail: e.to_string(),
        }
    })
}
