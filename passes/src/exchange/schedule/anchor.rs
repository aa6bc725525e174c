//! The measured runs' exchange scheduler, which the dated targets use
//! (`Exchange::anchor_schedule`): see [`schedule_anchor`].

use std::collections::BTreeMap;

use ipu_device::Target;

use super::{
    piece_elements, transfer_cycles, PhaseSchedule, Placement, Resource, ScheduledPiece,
    TransferAddresses, TransferRequest,
};

/// The measured runs' scheduler (a dated target's, `Exchange::anchor_schedule`): groups (one
/// sender and one set of receivers: a multicast, however many transfers carry it) ordered most
/// contended first (the sum over a group's tiles of how many of the phase's groups touch each),
/// then widest, then longest, then by sender; coloured first-fit so that no two groups of a
/// colour share a tile; placed colour by colour, each group starting one cycle after the last
/// of its tiles (its sender and receivers alike: a tile sends or receives, not both) and its
/// bus are free (no gap filling), a receiver switching sender also waiting the select latency,
/// and its transfers and their pieces following each other.
pub(super) fn schedule_anchor(
    transfers: &[TransferRequest],
    addresses: Option<&[TransferAddresses]>,
    target: &Target,
    plan: &Placement,
) -> PhaseSchedule {
    let max_piece = u64::from(target.exchange.max_transfer_words.value.max(1)) * 4;
    let select_latency = u64::from(target.exchange.latency_events.value);
    let Placement {
        used,
        group,
        group_bytes,
        lower_bound,
        ..
    } = plan;
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in (0..transfers.len()).filter(|&i| transfers[i].bytes > 0) {
        members.entry(group[i]).or_default().push(i);
    }
    let tiles_of = |g: usize| {
        let t = &transfers[g];
        std::iter::once(t.source).chain(t.destinations.iter().copied())
    };
    let mut touching: std::collections::HashMap<u32, u64> = Default::default();
    for &g in members.keys() {
        for tile in tiles_of(g) {
            *touching.entry(tile).or_default() += 1;
        }
    }
    let mut order: Vec<usize> = members.keys().copied().collect();
    order.sort_by_key(|&g| {
        let weight: u64 = tiles_of(g).map(|tile| touching[&tile]).sum();
        (
            std::cmp::Reverse((weight, transfers[g].destinations.len(), group_bytes[g])),
            transfers[g].source,
            g,
        )
    });
    // First-fit colouring over the groups' tiles.
    let mut colours: std::collections::HashMap<u32, Vec<u32>> = Default::default();
    let mut coloured: Vec<(u32, usize)> = Vec::with_capacity(order.len());
    for g in order {
        let mut colour = 0;
        while tiles_of(g).any(|tile| colours.get(&tile).is_some_and(|c| c.contains(&colour))) {
            colour += 1;
        }
        for tile in tiles_of(g) {
            colours.entry(tile).or_default().push(colour);
        }
        coloured.push((colour, g));
    }
    coloured.sort_by_key(|&(colour, _)| colour);
    let mut free: std::collections::HashMap<Resource, u64> = Default::default();
    let mut last_source: std::collections::HashMap<u32, u32> = Default::default();
    let mut pieces = Vec::new();
    let mut starts = vec![0u64; transfers.len()];
    for (_, g) in coloured {
        let mut previous_end: Option<u64> = None;
        for &index in &members[&g] {
            let request = &transfers[index];
            let mut offset = 0u64;
            while offset < request.bytes {
                let bytes = (request.bytes - offset).min(max_piece);
                let length = transfer_cycles(bytes, target);
                // A tile sends or receives in a slot, not both: the sender's receiver is held.
                let mut touched = used[index].clone();
                touched.push(Resource::Receiver(request.source));
                touched.extend(piece_elements(
                    request,
                    addresses.map(|a| a[index]),
                    (offset, bytes),
                    target,
                ));
                let start = match previous_end {
                    // The group's next piece follows the last (its resources are held).
                    Some(end)
                        if touched
                            .iter()
                            .all(|r| free.get(r).is_none_or(|&f| f <= end)) =>
                    {
                        end
                    }
                    _ => {
                        let busy = touched
                            .iter()
                            .filter_map(|r| free.get(r).copied())
                            .max()
                            .unwrap_or(0);
                        let selected = touched
                            .iter()
                            .filter_map(|r| match r {
                                Resource::Receiver(tile) => free.get(r).map(|&end| {
                                    let switch = last_source
                                        .get(tile)
                                        .is_some_and(|&from| from != request.source);
                                    end + if switch { select_latency } else { 0 }
                                }),
                                _ => None,
                            })
                            .max()
                            .unwrap_or(0);
                        if busy == 0 {
                            0
                        } else {
                            (busy + 1).max(selected)
                        }
                    }
                };
                let end = start + length;
                for resource in &touched {
                    free.insert(*resource, end);
                }
                for &destination in &request.destinations {
                    last_source.insert(destination, request.source);
                }
                if offset == 0 {
                    starts[index] = start;
                }
                pieces.push(ScheduledPiece {
                    transfer: index,
                    offset,
                    bytes,
                    start,
                    end,
                });
                previous_end = Some(end);
                offset += bytes;
            }
        }
    }
    super::finished(transfers, pieces, starts, *lower_bound, target)
}

#[cfg(test)]
mod tests {
    use super::super::tests::request;
    use super::super::{check_schedule, schedule_phase};
    use super::*;

    /// A dated target schedules as the measured runs' scheduler did: colour by colour, a
    /// group starting one cycle after the last of its tiles is free, never in an earlier gap.
    /// Here tile 7's long receive (colour 0 with the most contended group) delays the wide
    /// multicast that shares tile 7 until it ends, where our list scheduler overlaps them
    /// differently; both are hazard-free, the anchor's is longer.
    #[test]
    fn a_dated_target_schedules_as_the_measured_runs_did() {
        let ours = Target::c600();
        let anchor = Target::by_name("c600-5caa8bf").expect("a dated target");
        assert!(anchor.exchange.anchor_schedule.value);
        let latency = u64::from(anchor.exchange.latency_events.value);
        let transfers = [
            // Group A: 4,000 B from tile 1 to tile 7 (1,000 cycles).
            request(1, &[7], 4000),
            // Group B: 400 B from tile 2 to tiles 7 and 8 (100 cycles), after A on tile 7.
            request(2, &[7, 8], 400),
            // Group C: 400 B from tile 3 to tile 8 (100 cycles), sharing tile 8 with B.
            request(3, &[8], 400),
            // Group A again (same sender and receivers): follows A's first transfer.
            request(1, &[7], 400),
        ];
        let scheduled = |target: &Target| {
            let schedule = schedule_phase(&transfers, target).expect("schedules");
            check_schedule(&transfers, &schedule, target).expect("hazard-free");
            schedule
        };
        let anchor_schedule = scheduled(&anchor);
        // Contention: A touches 1 and 7 (7 is touched by A and B): weight 1 + 2 = 3; B touches
        // 2, 7, 8: 1 + 2 + 2 = 5; C touches 3, 8: 1 + 2 = 3. B first (colour 0), then A (wider
        // ties: same weight as C, one receiver each, longer) colour 1, C colour 1 (no shared
        // tile with A). B at 0; A one cycle after tile 7 is free plus the select latency (B
        // was tile 7's last sender): 101 + latency... then A's second transfer right after.
        assert_eq!(anchor_schedule.starts[1], 0);
        assert_eq!(anchor_schedule.starts[0], 100 + latency);
        assert_eq!(anchor_schedule.starts[3], 100 + latency + 1000);
        assert_eq!(anchor_schedule.starts[2], 100 + latency);
        assert_eq!(anchor_schedule.horizon, 100 + latency + 1100);
        // Our scheduler packs the same phase at least as tight.
        assert!(scheduled(&ours).horizon <= anchor_schedule.horizon);
    }
}
