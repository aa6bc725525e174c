//! The memory plan a package records for reports: every placed buffer with what it holds
//! (its [`MemoryCategory`]), its tiles, address, size and the `run` program steps it is live
//! over, and the support memory every loaded tile carries (linked runtime, host exchange and
//! generated code, profile counters, exchange tables).
//!
//! Storage placement (`ipu-place-storage`) decides all of it; package emission records it so
//! that `ipu profile report` can show memory per tile by category and the liveness of the
//! largest buffers without the compiler. The plan is descriptive: nothing loads from it.

use serde::{Deserialize, Serialize};

use ipu_device::MemoryClass;

/// What a piece of tile memory holds, the categories a memory report groups by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum MemoryCategory {
    /// Values of the model's weights (written by `initialize`, live over every run).
    Weights,
    /// Inputs, outputs, intermediate results and kernel working buffers.
    Activations,
    /// Landing buffers of exchange phases: bytes received from other tiles.
    ExchangeBuffers,
    /// Code: the linked tile runtime, host exchange handlers and generated step code.
    Code,
    /// Support data: profile counters and exchange tables.
    Support,
}

impl MemoryCategory {
    pub const ALL: [MemoryCategory; 5] = [
        MemoryCategory::Weights,
        MemoryCategory::Activations,
        MemoryCategory::ExchangeBuffers,
        MemoryCategory::Code,
        MemoryCategory::Support,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            MemoryCategory::Weights => "weights",
            MemoryCategory::Activations => "activations",
            MemoryCategory::ExchangeBuffers => "exchange buffers",
            MemoryCategory::Code => "code",
            MemoryCategory::Support => "support",
        }
    }

    /// Position in [`MemoryCategory::ALL`].
    pub const fn index(self) -> usize {
        match self {
            MemoryCategory::Weights => 0,
            MemoryCategory::Activations => 1,
            MemoryCategory::ExchangeBuffers => 2,
            MemoryCategory::Code => 3,
            MemoryCategory::Support => 4,
        }
    }

    /// The category of a placed buffer: a weight binding's buffer holds weights; otherwise a
    /// buffer some exchange phase writes into is an exchange buffer, unless a host stream also
    /// lands in it (a model input or output, an activation); everything else is an activation.
    pub const fn of_buffer(
        holds_weight: bool,
        holds_host_stream: bool,
        exchange_destination: bool,
    ) -> MemoryCategory {
        if holds_weight {
            MemoryCategory::Weights
        } else if exchange_destination && !holds_host_stream {
            MemoryCategory::ExchangeBuffers
        } else {
            MemoryCategory::Activations
        }
    }
}

/// Bytes per category, indexed by [`MemoryCategory::index`].
pub type CategoryBytes = [u64; 5];

/// One placed buffer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacedBuffer {
    /// What it holds (`op0.a_panel`).
    pub name: String,
    pub category: MemoryCategory,
    pub class: MemoryClass,
    /// Bytes on each of its tiles.
    pub bytes: u32,
    /// Absolute tile address, the same on every tile.
    pub address: u32,
    /// Tiles holding it, as inclusive ranges `(first, last)`, ascending.
    pub tiles: Vec<(u32, u32)>,
    /// First and last step (pre-order number in the `run` program) it is live over.
    pub live: (u32, u32),
}

impl PlacedBuffer {
    /// Number of tiles holding the buffer.
    pub fn tile_count(&self) -> u64 {
        self.tiles
            .iter()
            .map(|&(a, b)| u64::from(b.saturating_sub(a)) + 1)
            .sum()
    }
}

/// One item of the support memory every loaded tile carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SupportItem {
    pub name: String,
    pub category: MemoryCategory,
    pub bytes: u32,
}

/// The package's memory plan (see the module docs). Empty for packages built before it was
/// recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryPlan {
    pub buffers: Vec<PlacedBuffer>,
    pub support: Vec<SupportItem>,
    /// Tiles carrying the support memory (the loaded tiles), as inclusive ranges.
    pub support_tiles: Vec<(u32, u32)>,
}

/// Inclusive ranges of an ascending list of tiles.
pub fn tile_ranges(tiles: &[u32]) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for &tile in tiles {
        match out.last_mut() {
            Some((_, last)) if last.checked_add(1) == Some(tile) || *last == tile => *last = tile,
            _ => out.push((tile, tile)),
        }
    }
    out
}

/// Calls `f` for every tile of `ranges` below `tiles` (ranges past the end are clipped, so a
/// malformed plan cannot make a reader loop over billions of tiles).
fn for_tiles(ranges: &[(u32, u32)], tiles: u32, mut f: impl FnMut(usize)) {
    for &(first, last) in ranges {
        if first >= tiles || first > last {
            continue;
        }
        for tile in first..=last.min(tiles - 1) {
            f(tile as usize);
        }
    }
}

impl MemoryPlan {
    pub fn is_empty(&self) -> bool {
        self.buffers.is_empty() && self.support.is_empty()
    }

    /// Bytes each tile holds per category at its busiest step: the buffers live at the step
    /// of the `run` program where the tile's live buffers are largest (the earliest such
    /// step), plus the support memory, which is always there. Buffers whose lifetimes do not
    /// overlap share addresses, so this, not their sum, is what the tile needs.
    pub fn per_tile(&self, tiles: u32) -> Vec<CategoryBytes> {
        // Per tile: (step, +bytes or -bytes, category) events.
        let mut events: Vec<Vec<(u32, bool, usize, u64)>> = vec![Vec::new(); tiles as usize];
        for buffer in &self.buffers {
            let index = buffer.category.index();
            let bytes = u64::from(buffer.bytes);
            for_tiles(&buffer.tiles, tiles, |t| {
                events[t].push((buffer.live.0, true, index, bytes));
                if let Some(after) = buffer.live.1.checked_add(1) {
                    events[t].push((after, false, index, bytes));
                }
            });
        }
        let mut out = vec![[0u64; 5]; tiles as usize];
        for (tile, mut list) in events.into_iter().enumerate() {
            // Ends before starts at the same step: a buffer freed at a step is not live there.
            list.sort_by_key(|&(step, start, ..)| (step, start));
            let mut live = [0u64; 5];
            let mut best = [0u64; 5];
            let mut i = 0;
            while i < list.len() {
                let step = list[i].0;
                while i < list.len() && list[i].0 == step {
                    let (_, start, index, bytes) = list[i];
                    if start {
                        live[index] += bytes;
                    } else {
                        live[index] = live[index].saturating_sub(bytes);
                    }
                    i += 1;
                }
                if live.iter().sum::<u64>() > best.iter().sum::<u64>() {
                    best = live;
                }
            }
            out[tile] = best;
        }
        let mut support = [0u64; 5];
        for item in &self.support {
            support[item.category.index()] += u64::from(item.bytes);
        }
        for_tiles(&self.support_tiles, tiles, |t| {
            for (slot, bytes) in out[t].iter_mut().zip(support) {
                *slot += bytes;
            }
        });
        out
    }

    /// Bytes per category summed over every tile.
    pub fn totals(&self, tiles: u32) -> CategoryBytes {
        let mut out = [0u64; 5];
        for tile in self.per_tile(tiles) {
            for (slot, bytes) in out.iter_mut().zip(tile) {
                *slot += bytes;
            }
        }
        out
    }

    /// The tile holding the most bytes (the lowest such tile), with its bytes per category.
    pub fn busiest_tile(&self, tiles: u32) -> Option<(u32, CategoryBytes)> {
        let per_tile = self.per_tile(tiles);
        let mut best: Option<(u32, CategoryBytes)> = None;
        for (tile, bytes) in per_tile.into_iter().enumerate() {
            let total: u64 = bytes.iter().sum();
            if total > 0 && best.is_none_or(|(_, b)| b.iter().sum::<u64>() < total) {
                best = Some((tile as u32, bytes));
            }
        }
        best
    }

    /// Checks what a reader relies on: ranges ascending and inside `tiles`, live ranges in
    /// order. The message names the buffer.
    pub fn validate(&self, tiles: u32) -> Result<(), String> {
        let check = |what: &str, ranges: &[(u32, u32)]| -> Result<(), String> {
            let mut previous: Option<u32> = None;
            for &(first, last) in ranges {
                if first > last || last >= tiles || previous.is_some_and(|p| first <= p) {
                    return Err(format!(
                        "{what}: tile range {first}..={last} is out of order or outside 0..{tiles}"
                    ));
                }
                previous = Some(last);
            }
            Ok(())
        };
        for buffer in &self.buffers {
            check(&format!("buffer '{}'", buffer.name), &buffer.tiles)?;
            if buffer.live.0 > buffer.live.1 {
                return Err(format!(
                    "buffer '{}': live range {}..={} is reversed",
                    buffer.name, buffer.live.0, buffer.live.1
                ));
            }
        }
        check("support memory", &self.support_tiles)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(name: &str, category: MemoryCategory, bytes: u32, tiles: &[u32]) -> PlacedBuffer {
        PlacedBuffer {
            name: name.into(),
            category,
            class: MemoryClass::Standard,
            bytes,
            address: 0x4c000,
            tiles: tile_ranges(tiles),
            live: (0, 3),
        }
    }

    #[test]
    fn per_tile_counts_what_is_live_at_once() {
        // Two buffers one after the other on tile 0 share memory; the larger counts.
        let mut early = buffer("early", MemoryCategory::ExchangeBuffers, 300, &[0]);
        early.live = (0, 2);
        let mut late = buffer("late", MemoryCategory::Activations, 200, &[0]);
        late.live = (3, 5);
        // Overlapping the late one: 200 + 150 = 350 at steps 4..5 beats 300.
        let mut overlap = buffer("overlap", MemoryCategory::Activations, 150, &[0]);
        overlap.live = (4, 9);
        let plan = MemoryPlan {
            buffers: vec![early.clone(), late.clone(), overlap],
            ..MemoryPlan::default()
        };
        assert_eq!(plan.per_tile(1)[0], [0, 350, 0, 0, 0]);
        // A buffer ending at step 2 and one starting at step 3 never add up.
        let plan = MemoryPlan {
            buffers: vec![early, late],
            ..MemoryPlan::default()
        };
        assert_eq!(plan.per_tile(1)[0], [0, 0, 300, 0, 0]);
    }

    #[test]
    fn categories_follow_what_a_buffer_holds() {
        use MemoryCategory::*;
        assert_eq!(MemoryCategory::of_buffer(true, true, true), Weights);
        assert_eq!(MemoryCategory::of_buffer(true, false, false), Weights);
        assert_eq!(
            MemoryCategory::of_buffer(false, false, true),
            ExchangeBuffers
        );
        // An input that is also exchanged further stays an activation.
        assert_eq!(MemoryCategory::of_buffer(false, true, true), Activations);
        assert_eq!(MemoryCategory::of_buffer(false, false, false), Activations);
        for (i, c) in MemoryCategory::ALL.iter().enumerate() {
            assert_eq!(c.index(), i);
        }
    }

    #[test]
    fn tile_ranges_compress_runs() {
        assert_eq!(tile_ranges(&[]), vec![]);
        assert_eq!(
            tile_ranges(&[0, 1, 2, 5, 7, 8]),
            vec![(0, 2), (5, 5), (7, 8)]
        );
        assert_eq!(tile_ranges(&[u32::MAX]), vec![(u32::MAX, u32::MAX)]);
    }

    #[test]
    fn per_tile_sums_buffers_and_support_by_category() {
        let plan = MemoryPlan {
            buffers: vec![
                buffer("w", MemoryCategory::Weights, 100, &[0, 1]),
                buffer("x", MemoryCategory::Activations, 40, &[1, 2]),
                buffer("recv", MemoryCategory::ExchangeBuffers, 8, &[2]),
            ],
            support: vec![
                SupportItem {
                    name: "runtime".into(),
                    category: MemoryCategory::Code,
                    bytes: 10,
                },
                SupportItem {
                    name: "tables".into(),
                    category: MemoryCategory::Support,
                    bytes: 3,
                },
            ],
            support_tiles: vec![(0, 2)],
        };
        let per_tile = plan.per_tile(4);
        assert_eq!(per_tile[0], [100, 0, 0, 10, 3]);
        assert_eq!(per_tile[1], [100, 40, 0, 10, 3]);
        assert_eq!(per_tile[2], [0, 40, 8, 10, 3]);
        assert_eq!(per_tile[3], [0; 5]);
        assert_eq!(plan.totals(4), [200, 80, 8, 30, 9]);
        assert_eq!(plan.busiest_tile(4), Some((1, [100, 40, 0, 10, 3])));
        assert!(plan.validate(4).is_ok());
        // Ranges beyond the tile count are clipped when summing and refused by validation.
        let mut outside = plan.clone();
        outside.buffers[0].tiles = vec![(2, 9)];
        assert_eq!(outside.per_tile(4)[3][0], 100);
        assert!(outside.validate(4).unwrap_err().contains("buffer 'w'"));
        let mut reversed = plan;
        reversed.buffers[1].live = (5, 2);
        assert!(reversed.validate(4).unwrap_err().contains("reversed"));
    }
}
