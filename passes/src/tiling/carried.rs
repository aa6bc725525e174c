//! Which buffers of a repeat's body carry bytes from one iteration to the next.
//!
//! Storage placement lets buffers whose lifetimes do not overlap share memory. Inside a
//! repeat, a step may read bytes an earlier iteration left (a carried value, a counter):
//! such a buffer must keep its memory over the whole repeat. Every other buffer of the body
//! is the iteration's own: each iteration writes its bytes before it reads them, so it only
//! needs memory from its first to its last use, as outside a repeat. The analysis follows
//! the bytes per (buffer, tile): a read of bytes the same iteration has not written on that
//! tile before makes the buffer carried. It is conservative: a kernel call whose operands
//! cannot be sized counts as reading every buffer it names.

use std::collections::{BTreeSet, HashMap};

use super::program::{Arg, BufferId, TileProgram, TileStep};

/// Byte intervals `[start, end)` written so far, sorted and merged.
#[derive(Default)]
struct Written(Vec<(u32, u32)>);

impl Written {
    fn covers(&self, (start, end): (u32, u32)) -> bool {
        start >= end || self.0.iter().any(|&(s, e)| s <= start && end <= e)
    }

    fn add(&mut self, (start, end): (u32, u32)) {
        if start >= end {
            return;
        }
        self.0.push((start, end));
        self.0.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(self.0.len());
        for &(s, e) in &self.0 {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        self.0 = merged;
    }
}

/// One access of a step: buffer, tile, byte range inside the buffer.
type Access = (BufferId, u32, (u32, u32));

/// Records accesses that happen together: each read not covered by what this iteration
/// wrote before makes its buffer carried; then the writes are added.
fn note(
    written: &mut HashMap<(BufferId, u32), Written>,
    carried: &mut BTreeSet<BufferId>,
    reads: Vec<Access>,
    writes: Vec<Access>,
) {
    for (buffer, tile, span) in reads {
        if !carried.contains(&buffer)
            && !written
                .get(&(buffer, tile))
                .is_some_and(|bytes| bytes.covers(span))
        {
            carried.insert(buffer);
        }
    }
    for (buffer, tile, span) in writes {
        if !carried.contains(&buffer) {
            written.entry((buffer, tile)).or_default().add(span);
        }
    }
}

/// The buffers some step of `body` (a repeat's steps) reads on a tile before the same
/// iteration wrote those bytes there.
pub fn carried_buffers(program: &TileProgram, body: &[TileStep]) -> BTreeSet<BufferId> {
    let mut written: HashMap<(BufferId, u32), Written> = HashMap::new();
    let mut carried = BTreeSet::new();
    for step in body {
        let (mut reads, mut writes): (Vec<Access>, Vec<Access>) = (Vec::new(), Vec::new());
        match step {
            TileStep::Compute { runs, .. } => {
                // A tile's runs execute in order: each reads what the runs before it wrote.
                for run in runs {
                    let (mut run_reads, mut run_writes) = (Vec::new(), Vec::new());
                    run_accesses(program, run, &mut run_reads, &mut run_writes, &mut carried);
                    note(&mut written, &mut carried, run_reads, run_writes);
                }
            }
            TileStep::Exchange { moves, .. } => {
                for m in moves {
                    let span = |offset: u32| (offset, offset.saturating_add(m.bytes));
                    reads.push((m.source.buffer, m.source_tile, span(m.source.offset)));
                    for &tile in &m.destinations {
                        writes.push((m.destination.buffer, tile, span(m.destination.offset)));
                    }
                }
            }
            TileStep::HostWrite { binding } | TileStep::HostRead { binding } => {
                let into = if matches!(step, TileStep::HostWrite { .. }) {
                    &mut writes
                } else {
                    &mut reads
                };
                for piece in program
                    .bindings
                    .get(*binding)
                    .into_iter()
                    .flat_map(|b| &b.pieces)
                {
                    let offset = piece.place.offset;
                    into.push((
                        piece.place.buffer,
                        piece.tile,
                        (offset, offset.saturating_add(piece.bytes)),
                    ));
                }
            }
            TileStep::Sync | TileStep::Repeat { .. } => {}
        }
        note(&mut written, &mut carried, reads, writes);
    }
    carried
}

/// The byte ranges one kernel run reads and writes, by its kernel's operands; a run whose
/// operands cannot be sized makes every buffer it names carried.
fn run_accesses(
    program: &TileProgram,
    run: &super::program::Run,
    reads: &mut Vec<Access>,
    writes: &mut Vec<Access>,
    carried: &mut BTreeSet<BufferId>,
) {
    let values: Vec<u32> = run
        .args
        .iter()
        .map(|arg| match arg {
            Arg::Address(place) => place.offset,
            Arg::Value(value) => *value,
        })
        .collect();
    let operands = program
        .kernels
        .get(run.kernel as usize)
        .and_then(|spec| spec.operand_ranges(&values).ok());
    let Some(operands) = operands else {
        carried.extend(run.args.iter().filter_map(|arg| match arg {
            Arg::Address(place) => Some(place.buffer),
            Arg::Value(_) => None,
        }));
        return;
    };
    for operand in operands {
        let Some(Arg::Address(place)) = run.args.get(operand.arg) else {
            continue;
        };
        let access = (
            place.buffer,
            run.tile,
            (operand.bytes.start, operand.bytes.end),
        );
        if operand.access.reads() {
            reads.push(access);
        }
        if operand.access.writes() {
            writes.push(access);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tiling::program::{Move, Place, Run};
    use ipu_device::{KernelSpec, MemoryClass};

    fn program(buffers: usize) -> TileProgram {
        let mut program = TileProgram {
            tiles: 4,
            ..TileProgram::default()
        };
        for b in 0..buffers {
            program.buffer(format!("b{b}"), MemoryClass::Standard, 64, vec![0, 1]);
        }
        program.kernels.push(KernelSpec::Copy { bytes: 32 });
        program
    }

    /// A step of 32-byte copies `(tile, from, to)`.
    fn copies(runs: &[(u32, Place, Place)]) -> TileStep {
        TileStep::Compute {
            provenance: "op".into(),
            runs: runs
                .iter()
                .map(|&(tile, from, to)| Run {
                    tile,
                    kernel: 0,
                    args: vec![Arg::Address(from), Arg::Address(to)],
                })
                .collect(),
        }
    }

    fn send(tile: u32, from: Place, to: (u32, Place)) -> Move {
        Move {
            source_tile: tile,
            source: from,
            destinations: vec![to.0],
            destination: to.1,
            bytes: 32,
        }
    }

    /// A buffer written before it is read in each iteration is the iteration's own; one
    /// read before it is written (a carried value) is carried, and so is one whose read
    /// covers bytes the iteration wrote only in part, or wrote on another tile only.
    #[test]
    fn reads_before_writes_are_carried() {
        let p = program(6);
        let at = Place::at;
        let body = vec![
            // b0 read first (carried) into b1 (written first: own).
            copies(&[(0, at(0, 0), at(1, 0))]),
            // b1 read where it was written; b2 written on tile 0 only.
            copies(&[(0, at(1, 0), at(2, 0))]),
            // b4 arrives on tile 0, b5 on tile 1.
            TileStep::Exchange {
                phase: 0,
                moves: vec![
                    send(0, at(1, 0), (0, at(4, 0))),
                    send(0, at(1, 0), (1, at(5, 0))),
                ],
            },
            // Read on tile 1: b4 (written on tile 0 only: carried), b5 (own), b2 (carried).
            copies(&[
                (1, at(4, 0), at(3, 0)),
                (1, at(5, 0), at(3, 32)),
                (1, at(2, 0), at(3, 0)),
            ]),
        ];
        assert_eq!(carried_buffers(&p, &body), BTreeSet::from([0, 2, 4]));
        // b2 written on tile 1 at 0..32, then read at 16..48: carried (16 bytes unwritten).
        let partly = vec![
            copies(&[(1, at(1, 0), at(2, 0))]),
            copies(&[(1, at(2, 16), at(3, 0))]),
        ];
        assert!(carried_buffers(&p, &partly).contains(&2));
        // Written at 0..32 and 32..64, then read at 16..48: the iteration's own.
        let whole = vec![
            copies(&[(1, at(1, 0), at(2, 0)), (1, at(1, 0), at(2, 32))]),
            copies(&[(1, at(2, 16), at(3, 0))]),
        ];
        assert!(!carried_buffers(&p, &whole).contains(&2));
        // A tile's runs of one step execute in order: written then read is the iteration's
        // own, read then written is carried.
        let in_order = vec![copies(&[(1, at(1, 0), at(2, 0)), (1, at(2, 0), at(3, 0))])];
        assert!(!carried_buffers(&p, &in_order).contains(&2));
        let reversed = vec![copies(&[(1, at(2, 0), at(3, 0)), (1, at(1, 0), at(2, 0))])];
        assert!(carried_buffers(&p, &reversed).contains(&2));
    }

    /// Lifetimes in a repeat: the body's own buffers live from their first to their last
    /// use; a carried one, and one used before the repeat, over the whole repeat; one read
    /// after it from its first use in the body on.
    #[test]
    fn only_carried_buffers_live_over_the_whole_repeat() {
        let mut p = program(6);
        let at = Place::at;
        p.run = vec![
            copies(&[(0, at(5, 0), at(4, 0))]), // 0: b4 written before the repeat
            TileStep::Repeat { count: 3, steps: 4 },
            copies(&[(0, at(0, 0), at(1, 0))]), // 2: b0 carried, b1 own
            copies(&[(0, at(1, 0), at(2, 0))]), // 3: b2 own
            copies(&[(0, at(2, 0), at(3, 0))]), // 4: b3 own, read after the repeat
            copies(&[(0, at(4, 0), at(0, 0))]), // 5: b4 read, b0 written for the next
            copies(&[(0, at(3, 0), at(5, 0))]), // 6: after the repeat
        ];
        p.compute_lifetimes();
        let live: Vec<(usize, usize)> = p.buffers.iter().map(|b| b.live).collect();
        assert_eq!(live[0], (1, 5), "carried");
        assert_eq!(live[1], (2, 3), "own");
        assert_eq!(live[2], (3, 4), "own");
        assert_eq!(live[3], (4, 6), "read after the repeat");
        assert_eq!(live[4], (0, 5), "used before the repeat");
    }
}
