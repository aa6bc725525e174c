//! The physical exchange scheduler: given one phase's transfers (source tile, destination
//! tiles, bytes), assigns every transfer a start cycle so that no send bus and no receiver is
//! used by two transfers at once. The timing model is the simulator's (`ipu_device::sim`):
//! a transfer of `bytes` occupies its sender's bus and each receiver for
//! `ceil(bytes / bytes_per_cycle)` cycles (4 B/cycle on the C600 [PopLibs, HW-C600]); each tile
//! sends on its own bus (`Target::send_bus`: a physical pair shares one only on a table with
//! `exchange.send_bus_tiles` = 2); receives are independent per tile, and a receive from
//! another tile than the receiver's previous one starts `exchange.latency_events` cycles
//! after it at the earliest (the receiver selects its new source); the phase costs
//! `phase_cycles` plus its horizon (the last busy cycle, or the last landing of a word on a
//! receiver, its route time after the send: `Target::route_cycles`).
//!
//! Transfers longer than the largest single transfer (`max_transfer_words` words) are cut
//! into pieces. Pieces are placed longest-first on the most loaded resources (the classic
//! list-scheduling order for makespan), each at the earliest cycle where its bus and all its
//! receivers are free, filling gaps left by earlier placements. Transfers with the same sender
//! and receivers go together, ordered as one by their total length (however finely a program
//! cuts a block, its receivers select the sender once). Ties break on sending tile (a
//! receiver then takes one sender's transfers back to back), then on transfer index, so the
//! schedule is deterministic. `ipu-select-finalist` prices finalists with this and
//! `ipu-lower-exchanges` encodes its output as exchange rows.

use std::collections::BTreeMap;

use ipu_device::Target;

mod anchor;

/// One transfer to schedule: `bytes` from logical tile `source` to every tile of
/// `destinations` (a multicast when there are several).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TransferRequest {
    pub source: u32,
    pub destinations: Vec<u32>,
    pub bytes: u64,
}

/// A scheduled piece of a transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduledPiece {
    /// Index of the transfer in the request list.
    pub transfer: usize,
    /// Byte offset of the piece inside the transfer.
    pub offset: u64,
    pub bytes: u64,
    /// First exchange cycle (after the phase's fixed cost).
    pub start: u64,
    /// One past the last busy cycle.
    pub end: u64,
}

/// A phase's schedule.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PhaseSchedule {
    pub pieces: Vec<ScheduledPiece>,
    /// Start cycle of each transfer's first piece.
    pub starts: Vec<u64>,
    /// Last busy exchange cycle (0 for an empty phase).
    pub horizon: u64,
    /// Phase cycles: the fixed phase cost plus the horizon; 0 when nothing moves.
    pub cycles: u64,
    /// The busiest resource's load in cycles: no schedule can beat it.
    pub lower_bound: u64,
}

/// Why a phase cannot be scheduled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("transfer {transfer}: tile {tile} is outside the target's {tiles} tiles")]
    TileOutOfRange {
        transfer: usize,
        tile: u32,
        tiles: u32,
    },
    #[error("transfer {transfer} from tile {from_tile} has no destination")]
    NoDestination { transfer: usize, from_tile: u32 },
    #[error("transfer {transfer}: tile {tile} cannot send to itself")]
    SelfTransfer { transfer: usize, tile: u32 },
    #[error("{addresses} transfer addresses given for {transfers} transfers")]
    Addresses { addresses: usize, transfers: usize },
}

/// Where one transfer touches tile memory: its bytes are read from `source` on the sending
/// tile and written at `destination` on every receiving tile (absolute tile addresses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferAddresses {
    pub source: u32,
    pub destination: u32,
}

/// What a piece occupies: the sender's bus and each receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Resource {
    Bus(u32),
    Receiver(u32),
    /// A memory element of a tile: a send may not read it while a receive writes it. (Two
    /// sends of one tile, or two receives, never overlap anyway: they share a bus or a
    /// receiver.)
    Element {
        tile: u32,
        element: u32,
    },
}

/// Indices of the memory elements `[address, address + bytes)` touches.
pub(crate) fn elements(target: &Target, address: u32, bytes: u64) -> Vec<u32> {
    let mut out = Vec::new();
    let end = u64::from(address) + bytes;
    let mut cursor = u64::from(address);
    while cursor < end {
        let Ok(element) = target.element_of(cursor as u32) else {
            break;
        };
        out.push(element.index);
        cursor = u64::from(element.start) + u64::from(element.bytes);
    }
    out
}

/// The memory elements a piece (`bytes` at `offset` of `request`) reads on its sender and
/// writes on its receivers, at known addresses (none without them: nothing is allocated on
/// the planner's path).
fn piece_elements(
    request: &TransferRequest,
    at: Option<TransferAddresses>,
    (offset, bytes): (u64, u64),
    target: &Target,
) -> Vec<Resource> {
    let Some(at) = at else {
        return Vec::new();
    };
    let elements_of = |tile: u32, base: u32| {
        elements(target, base.saturating_add(offset as u32), bytes)
            .into_iter()
            .map(move |element| Resource::Element { tile, element })
    };
    let mut touched: Vec<Resource> = elements_of(request.source, at.source).collect();
    for &destination in &request.destinations {
        touched.extend(elements_of(destination, at.destination));
    }
    touched
}

/// Busy intervals of one resource, disjoint, keyed by start, each with the tile whose
/// transfer holds it.
#[derive(Debug, Default)]
struct Busy(BTreeMap<u64, (u64, u32)>);

impl Busy {
    /// The first cycle at or after which `[start, start + length)` may go past the interval
    /// it conflicts with, if it conflicts with one. Intervals held by a transfer from a tile
    /// other than `source` must keep `gap` cycles away on either side (a receiver's
    /// select latency; 0 on buses and memory elements).
    fn conflict(&self, start: u64, length: u64, source: u32, gap: u64) -> Option<u64> {
        let pad = |holder: u32| if holder == source { 0 } else { gap };
        // Intervals are disjoint, so their ends grow with their starts: walking back from
        // the last one starting before the padded window, stop once none can reach `start`.
        for (&begin, &(end, holder)) in self.0.range(..start + length + gap).rev() {
            if end + gap <= start {
                break;
            }
            let pad = pad(holder);
            if begin < start + length + pad && end + pad > start {
                return Some(end + pad);
            }
        }
        None
    }

    /// The first cycle at or after `start` at which `[s, s + length)` conflicts with no
    /// interval ([`Busy::conflict`]).
    fn earliest(&self, start: u64, length: u64, source: u32, gap: u64) -> u64 {
        let mut start = start;
        while let Some(end) = self.conflict(start, length, source, gap) {
            start = end;
        }
        start
    }

    /// Marks `[start, end)` busy for `source`'s transfer. An interval that touches a
    /// neighbour merges with it where the merged interval conflicts exactly as the two did
    /// (same holder, or no gap on this resource), so a resource kept busy back to back is
    /// one interval however many pieces fill it.
    fn insert(&mut self, start: u64, end: u64, source: u32, gap: u64) {
        let (mut start, mut end) = (start, end);
        let merges = |holder: u32| gap == 0 || holder == source;
        if let Some((&begin, &(before_end, holder))) = self.0.range(..start).next_back() {
            if before_end == start && merges(holder) {
                self.0.remove(&begin);
                start = begin;
            }
        }
        if let Some(&(after_end, holder)) = self.0.get(&end) {
            if merges(holder) {
                self.0.remove(&end);
                end = after_end;
            }
        }
        self.0.insert(start, (end, source));
    }
}

/// The busy intervals of every resource of a phase: buses and receivers by index, memory
/// elements by tile and element.
#[derive(Debug, Default)]
struct BusyTable {
    buses: Vec<Busy>,
    receivers: Vec<Busy>,
    elements: std::collections::HashMap<(u32, u32), Busy>,
}

impl BusyTable {
    fn get(&self, resource: &Resource) -> Option<&Busy> {
        match *resource {
            Resource::Bus(bus) => self.buses.get(bus as usize),
            Resource::Receiver(tile) => self.receivers.get(tile as usize),
            Resource::Element { tile, element } => self.elements.get(&(tile, element)),
        }
    }

    fn get_mut(&mut self, resource: &Resource) -> &mut Busy {
        let slot = |list: &mut Vec<Busy>, at: u32| -> usize {
            let at = at as usize;
            if list.len() <= at {
                list.resize_with(at + 1, Busy::default);
            }
            at
        };
        match *resource {
            Resource::Bus(bus) => {
                let at = slot(&mut self.buses, bus);
                &mut self.buses[at]
            }
            Resource::Receiver(tile) => {
                let at = slot(&mut self.receivers, tile);
                &mut self.receivers[at]
            }
            Resource::Element { tile, element } => {
                self.elements.entry((tile, element)).or_default()
            }
        }
    }
}

/// The resources a transfer uses.
pub(crate) fn resources(
    request: &TransferRequest,
    index: usize,
    target: &Target,
) -> Result<Vec<Resource>, ScheduleError> {
    let tiles = target.geometry.tiles.value;
    let physical = |tile: u32| {
        target
            .logical_to_physical(tile)
            .map_err(|_| ScheduleError::TileOutOfRange {
                transfer: index,
                tile,
                tiles,
            })
    };
    if request.destinations.is_empty() {
        return Err(ScheduleError::NoDestination {
            transfer: index,
            from_tile: request.source,
        });
    }
    let mut used = vec![Resource::Bus(
        target.send_bus(physical(request.source)?.index),
    )];
    for &destination in &request.destinations {
        physical(destination)?;
        if destination == request.source {
            return Err(ScheduleError::SelfTransfer {
                transfer: index,
                tile: destination,
            });
        }
        used.push(Resource::Receiver(destination));
    }
    used.sort();
    used.dedup();
    Ok(used)
}

/// Cycles one piece of `bytes` occupies its resources.
pub fn transfer_cycles(bytes: u64, target: &Target) -> u64 {
    bytes.div_ceil(u64::from(target.exchange.bytes_per_cycle.value.max(1)))
}

/// Orders in which transfers are placed; the scheduler keeps the shortest result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Priority {
    /// Busiest resource first, then longest.
    Pressure,
    /// Widest multicast first (it needs many receivers free at once), then longest.
    Fanout,
    /// Longest first.
    Length,
}

/// Schedules kept by [`schedule_phase_cached`]: by hash of (target, requests), each entry with
/// its requests (compared in full on a hit) and its schedule, set once by the first asker
/// (concurrent askers wait for it).
type ScheduleCache = BTreeMap<u64, Vec<(String, Vec<TransferRequest>, ScheduleCell)>>;

type ScheduleCell = std::sync::Arc<std::sync::OnceLock<Result<PhaseSchedule, ScheduleError>>>;

/// Entries kept before the cache starts over (a process compiles a handful of graphs; this
/// bounds memory for one that compiles many).
const SCHEDULE_CACHE_ENTRIES: usize = 4096;

static SCHEDULE_CACHE: std::sync::Mutex<ScheduleCache> = std::sync::Mutex::new(BTreeMap::new());

/// [`schedule_phase`] through a process-wide cache: a phase with the same requests on the
/// same target (the near-identical finalists `ipu-select-finalist` schedules in parallel,
/// repeated compiles) is scheduled once, by the first to ask; the others wait for it. The
/// schedule depends only on the requests and the target.
pub fn schedule_phase_cached(
    transfers: &[TransferRequest],
    target: &Target,
) -> Result<PhaseSchedule, ScheduleError> {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    target.name.hash(&mut hasher);
    transfers.hash(&mut hasher);
    let key = hasher.finish();
    let cell: ScheduleCell = {
        // A poisoned lock only means a panic elsewhere; the entries are whole.
        let mut cache = SCHEDULE_CACHE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let found = cache.get(&key).and_then(|entries| {
            entries
                .iter()
                .find(|(t, r, _)| *t == target.name && r == transfers)
                .map(|(.., cell)| cell.clone())
        });
        match found {
            Some(cell) => cell,
            None => {
                if cache.len() >= SCHEDULE_CACHE_ENTRIES {
                    cache.clear();
                }
                let cell = ScheduleCell::default();
                cache.entry(key).or_default().push((
                    target.name.clone(),
                    transfers.to_vec(),
                    cell.clone(),
                ));
                cell
            }
        }
    };
    // The scheduler uses no rayon, so a waiting asker cannot be the scheduling one.
    cell.get_or_init(|| schedule_phase(transfers, target))
        .clone()
}

/// Schedules one phase (see the module documentation): list scheduling under a few priority
/// orders, keeping the shortest horizon (ties: the first order).
pub fn schedule_phase(
    transfers: &[TransferRequest],
    target: &Target,
) -> Result<PhaseSchedule, ScheduleError> {
    schedule_best(transfers, None, target)
}

/// [`schedule_phase`] at known addresses: no piece reads a memory element of its sending
/// tile while another piece writes the same element of that tile (the device refuses such a
/// phase). This is the schedule-side fix for a conflict placement cannot remove (a tile
/// sending one part of a buffer while receiving another part of it): the two transfers are
/// serialized, so the horizon may grow. `addresses[i]` belongs to `transfers[i]`.
pub fn schedule_phase_at(
    transfers: &[TransferRequest],
    addresses: &[TransferAddresses],
    target: &Target,
) -> Result<PhaseSchedule, ScheduleError> {
    if addresses.len() != transfers.len() {
        return Err(ScheduleError::Addresses {
            addresses: addresses.len(),
            transfers: transfers.len(),
        });
    }
    schedule_best(transfers, Some(addresses), target)
}

fn schedule_best(
    transfers: &[TransferRequest],
    addresses: Option<&[TransferAddresses]>,
    target: &Target,
) -> Result<PhaseSchedule, ScheduleError> {
    let plan = Placement::of(transfers, target)?;
    if target.exchange.anchor_schedule.value {
        return Ok(anchor::schedule_anchor(transfers, addresses, target, &plan));
    }
    let mut best: Option<PhaseSchedule> = None;
    for priority in [Priority::Pressure, Priority::Fanout, Priority::Length] {
        let schedule = schedule_with(transfers, addresses, target, &plan, priority);
        if best.as_ref().is_none_or(|b| schedule.horizon < b.horizon) {
            best = Some(schedule);
        }
        if best.as_ref().is_some_and(|b| b.horizon == b.lower_bound) {
            break;
        }
    }
    Ok(best.unwrap_or_default())
}

/// What every placement order of one phase shares: each transfer's resources, its
/// pressure (the busiest resource it touches), its group (the first transfer with the same
/// sender and receivers) and the groups' bytes, and the phase's lower bound.
struct Placement {
    used: Vec<Vec<Resource>>,
    pressure: Vec<u64>,
    group: Vec<usize>,
    group_bytes: Vec<u64>,
    lower_bound: u64,
}

impl Placement {
    fn of(transfers: &[TransferRequest], target: &Target) -> Result<Placement, ScheduleError> {
        let select_latency = u64::from(target.exchange.latency_events.value);
        let mut used = Vec::with_capacity(transfers.len());
        let mut load: std::collections::HashMap<Resource, u64> = Default::default();
        // Each receiver's sources: one select latency per source after its first.
        let mut sources: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for (index, request) in transfers.iter().enumerate() {
            let resources = resources(request, index, target)?;
            let cycles = transfer_cycles(request.bytes, target);
            for resource in &resources {
                *load.entry(*resource).or_default() += cycles;
                if let Resource::Receiver(tile) = resource {
                    if request.bytes > 0 {
                        let from = sources.entry(*tile).or_default();
                        if from.last() != Some(&request.source) {
                            from.push(request.source);
                        }
                    }
                }
            }
            used.push(resources);
        }
        for (tile, mut from) in sources {
            from.sort_unstable();
            from.dedup();
            let switches = from.len() as u64 - 1;
            *load.entry(Resource::Receiver(tile)).or_default() += switches * select_latency;
        }
        let lower_bound = load.values().copied().max().unwrap_or(0);
        let pressure = used
            .iter()
            .map(|resources: &Vec<Resource>| {
                resources
                    .iter()
                    .map(|r| load.get(r).copied().unwrap_or(0))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        // Transfers with one sender and one set of receivers are a group, placed one after
        // another and ordered by the group's total length: a program that moves a block in
        // many row pieces is scheduled as one that moves it whole (its receivers select the
        // sender once).
        let mut group_of: std::collections::HashMap<(u32, &[u32]), usize> = Default::default();
        let group: Vec<usize> = transfers
            .iter()
            .enumerate()
            .map(|(i, t)| {
                *group_of
                    .entry((t.source, t.destinations.as_slice()))
                    .or_insert(i)
            })
            .collect();
        let mut group_bytes = vec![0u64; transfers.len()];
        for (i, t) in transfers.iter().enumerate() {
            group_bytes[group[i]] += t.bytes;
        }
        Ok(Placement {
            used,
            pressure,
            group,
            group_bytes,
            lower_bound,
        })
    }
}

fn schedule_with(
    transfers: &[TransferRequest],
    addresses: Option<&[TransferAddresses]>,
    target: &Target,
    plan: &Placement,
    priority: Priority,
) -> PhaseSchedule {
    let max_piece = u64::from(target.exchange.max_transfer_words.value.max(1)) * 4;
    let select_latency = u64::from(target.exchange.latency_events.value);
    let Placement {
        used,
        pressure,
        group,
        group_bytes,
        lower_bound,
    } = plan;
    let lower_bound = *lower_bound;
    // Longest pressure first: the busiest resource a transfer touches, then its length.
    let mut order: Vec<usize> = (0..transfers.len())
        .filter(|&i| transfers[i].bytes > 0)
        .collect();
    // Ties go by sending tile, so a receiver takes one sender's groups back to back.
    let length = |i: usize| std::cmp::Reverse(group_bytes[group[i]]);
    let tie = |i: usize| (transfers[i].source, group[i], i);
    match priority {
        Priority::Pressure => {
            order.sort_by_key(|&i| (std::cmp::Reverse(pressure[i]), length(i), tie(i)))
        }
        Priority::Fanout => {
            order.sort_by_key(|&i| (std::cmp::Reverse(used[i].len()), length(i), tie(i)))
        }
        Priority::Length => order.sort_by_key(|&i| (length(i), tie(i))),
    }
    let mut busy = BusyTable::default();
    let mut pieces = Vec::new();
    let mut starts = vec![0u64; transfers.len()];
    for index in order {
        let request = &transfers[index];
        let mut offset = 0u64;
        let mut earliest = 0u64;
        while offset < request.bytes {
            let bytes = (request.bytes - offset).min(max_piece);
            let length = transfer_cycles(bytes, target);
            // The piece's resources: the transfer's bus and receivers, and at known
            // addresses the memory elements it reads and writes (none without addresses:
            // nothing is allocated on the planner's path).
            let touched = piece_elements(
                request,
                addresses.map(|a| a[index]),
                (offset, bytes),
                target,
            );
            let piece_resources = || used[index].iter().chain(&touched);
            let gap = |resource: &Resource| match resource {
                Resource::Receiver(_) => select_latency,
                _ => 0,
            };
            // Each resource in turn moves the start to where it is free, until all agree.
            let mut start = earliest;
            loop {
                let mut moved = false;
                for resource in piece_resources() {
                    if let Some(busy) = busy.get(resource) {
                        let free = busy.earliest(start, length, request.source, gap(resource));
                        moved |= free != start;
                        start = free;
                    }
                }
                if !moved {
                    break;
                }
            }
            for resource in piece_resources() {
                busy.get_mut(resource)
                    .insert(start, start + length, request.source, gap(resource));
            }
            if offset == 0 {
                starts[index] = start;
            }
            pieces.push(ScheduledPiece {
                transfer: index,
                offset,
                bytes,
                start,
                end: start + length,
            });
            // Pieces of one transfer go in order (the receiver writes them in address order).
            earliest = start + length;
            offset += bytes;
        }
    }
    finished(transfers, pieces, starts, lower_bound, target)
}

/// The schedule of a phase whose pieces are placed: pieces in start order, its horizon the
/// last piece's end or the landing of a piece's last word on its farthest receiver (its route
/// time, `Target::route_cycles`, after the piece ends), the phase's cycles its fixed cost and
/// its horizon (none without a piece).
pub(super) fn finished(
    transfers: &[TransferRequest],
    mut pieces: Vec<ScheduledPiece>,
    starts: Vec<u64>,
    lower_bound: u64,
    target: &Target,
) -> PhaseSchedule {
    pieces.sort_by_key(|piece| (piece.start, piece.transfer, piece.offset));
    let mut routes: BTreeMap<usize, u64> = BTreeMap::new();
    let horizon = pieces
        .iter()
        .map(|piece| {
            let route = *routes.entry(piece.transfer).or_insert_with(|| {
                let request = &transfers[piece.transfer];
                request
                    .destinations
                    .iter()
                    .map(|&d| target.route_cycles(request.source, d))
                    .max()
                    .unwrap_or(0)
            });
            piece.end + route
        })
        .max()
        .unwrap_or(0);
    let cycles = if pieces.is_empty() {
        0
    } else {
        u64::from(target.exchange.phase_cycles.value) + horizon
    };
    PhaseSchedule {
        pieces,
        starts,
        horizon,
        cycles,
        lower_bound,
    }
}

/// Checks a schedule against its requests: every byte of every transfer scheduled once, and
/// no bus or receiver used by two pieces at once. Returns the first violation.
pub fn check_schedule(
    transfers: &[TransferRequest],
    schedule: &PhaseSchedule,
    target: &Target,
) -> Result<(), String> {
    let mut covered = vec![0u64; transfers.len()];
    let mut intervals: BTreeMap<Resource, Vec<(u64, u64, usize, u32)>> = BTreeMap::new();
    for piece in &schedule.pieces {
        let request = transfers.get(piece.transfer).ok_or_else(|| {
            format!(
                "piece names transfer {} of {}",
                piece.transfer,
                transfers.len()
            )
        })?;
        if piece.end != piece.start + transfer_cycles(piece.bytes, target) {
            return Err(format!(
                "piece of transfer {} lasts {} cycles for {} bytes",
                piece.transfer,
                piece.end - piece.start,
                piece.bytes
            ));
        }
        covered[piece.transfer] += piece.bytes;
        for resource in resources(request, piece.transfer, target).map_err(|e| e.to_string())? {
            intervals.entry(resource).or_default().push((
                piece.start,
                piece.end,
                piece.transfer,
                request.source,
            ));
        }
        if piece.end > schedule.horizon {
            return Err(format!(
                "piece of transfer {} ends at {} after the horizon {}",
                piece.transfer, piece.end, schedule.horizon
            ));
        }
    }
    for (index, request) in transfers.iter().enumerate() {
        if covered[index] != request.bytes {
            return Err(format!(
                "transfer {index}: {} of {} bytes scheduled",
                covered[index], request.bytes
            ));
        }
    }
    let latency = u64::from(target.exchange.latency_events.value);
    for (resource, mut list) in intervals {
        list.sort_unstable();
        for pair in list.windows(2) {
            if pair[1].0 < pair[0].1 {
                return Err(format!(
                    "{resource:?}: transfers {} and {} overlap at cycle {}",
                    pair[0].2, pair[1].2, pair[1].0
                ));
            }
            let switch = pair[0].3 != pair[1].3;
            if matches!(resource, Resource::Receiver(_))
                && switch
                && pair[1].0 < pair[0].1 + latency
            {
                return Err(format!(
                    "{resource:?}: transfer {} from tile {} starts at cycle {}, within the \
                     select latency ({latency}) of transfer {} from tile {} ending at {}",
                    pair[1].2, pair[1].3, pair[1].0, pair[0].2, pair[0].3, pair[0].1
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
