//! How a tensor is spread over tiles: a grid of blocks over the canonical `[batch, rows,
//! columns]` view, each block held by one tile (a value's home) or needed by several (an
//! operand of a plan whose tiles all read the same block).
//!
//! Blocks are even ceil-splits: block `i` of an axis of size `d` in `p` parts covers
//! `[i * s, min((i + 1) * s, d))` with `s = ceil(d / p)`; tile memory holds the padded block
//! (`s` elements per axis), so the last block's padding costs memory but carries no data.
//! Candidates never choose a split with an empty block, so blocks are disjoint and cover the
//! tensor exactly once (a property test checks this).

pub use ipu_dialects::graph::canonical_dims;

/// Block size of an axis of `size` elements in `parts` parts.
pub fn block_size(size: u64, parts: u32) -> u64 {
    size.div_ceil(u64::from(parts.max(1)))
}

/// Whether splitting `size` in `parts` leaves no block empty.
pub fn split_is_exact_cover(size: u64, parts: u32) -> bool {
    let parts = u64::from(parts.max(1));
    parts <= size.max(1) && (parts - 1) * size.div_ceil(parts) < size.max(1)
}

/// The element range of block `index` of an axis.
pub fn block_range(size: u64, parts: u32, index: u32) -> (u64, u64) {
    let step = block_size(size, parts);
    let start = (u64::from(index) * step).min(size);
    (start, (start + step).min(size))
}

/// The tiles of one block: most blocks have one or two, held inline (a program's plans hold
/// hundreds of thousands of blocks, and one allocation each dominated planning).
pub type Owners = smallvec::SmallVec<[u32; 2]>;

/// A tensor's blocks and the tiles that hold (or need) each one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shards {
    pub dims: [u64; 3],
    pub parts: [u32; 3],
    pub element_bytes: u32,
    /// Tiles per block, blocks in row-major order over `parts`; sorted, non-empty. Shared:
    /// the plans of a step hold thousands of copies of a few blockings.
    pub owners: std::sync::Arc<[Owners]>,
}

impl Shards {
    /// Blocks spread one per tile in row-major block order starting at tile `first`.
    pub fn homed(dims: [u64; 3], parts: [u32; 3], element_bytes: u32, first: u32) -> Shards {
        let blocks = parts.iter().map(|&p| p.max(1)).product::<u32>();
        Shards {
            dims,
            parts,
            element_bytes,
            owners: (0..blocks)
                .map(|block| smallvec::smallvec![first + block])
                .collect(),
        }
    }

    /// Blocks `parts` of a tensor needed by the tiles of a `grid`, where `axis_of[g]` says
    /// which tensor axis grid axis `g` splits (`None`: every block is replicated along it).
    /// Tiles are numbered row-major over the grid.
    pub fn needed_by_grid(
        dims: [u64; 3],
        element_bytes: u32,
        grid: &[u32],
        axis_of: &[Option<usize>],
    ) -> Shards {
        let mut parts = [1u32; 3];
        for (g, axis) in axis_of.iter().enumerate() {
            if let Some(axis) = axis {
                parts[*axis] = grid[g].max(1);
            }
        }
        let blocks = parts.iter().product::<u32>() as usize;
        let mut owners = vec![Owners::new(); blocks];
        let tiles: u32 = grid.iter().map(|&g| g.max(1)).product();
        let mut coordinate = vec![0u32; grid.len()];
        for tile in 0..tiles {
            let mut rest = tile;
            for g in (0..grid.len()).rev() {
                coordinate[g] = rest % grid[g].max(1);
                rest /= grid[g].max(1);
            }
            let mut block_coordinate = [0u32; 3];
            for (g, axis) in axis_of.iter().enumerate() {
                if let Some(axis) = axis {
                    block_coordinate[*axis] = coordinate[g];
                }
            }
            let block = (block_coordinate[0] * parts[1] + block_coordinate[1]) * parts[2]
                + block_coordinate[2];
            owners[block as usize].push(tile);
        }
        Shards {
            dims,
            parts,
            element_bytes,
            owners: owners.into(),
        }
    }

    /// The per-axis block coordinates of linear block `block`.
    pub fn block_coordinates(&self, block: usize) -> [u32; 3] {
        let block = block as u32;
        let (p1, p2) = (self.parts[1].max(1), self.parts[2].max(1));
        [block / (p1 * p2), (block / p2) % p1, block % p2]
    }

    /// Element ranges of block `block` per axis.
    pub fn block_ranges(&self, block: usize) -> [(u64, u64); 3] {
        let coordinates = self.block_coordinates(block);
        [0, 1, 2].map(|axis| block_range(self.dims[axis], self.parts[axis], coordinates[axis]))
    }

    /// Bytes of one padded block (what a tile allocates for it).
    pub fn padded_block_bytes(&self) -> u64 {
        (0..3)
            .map(|axis| block_size(self.dims[axis], self.parts[axis]))
            .product::<u64>()
            * u64::from(self.element_bytes)
    }

    /// Blocks held by the busiest tile.
    fn max_blocks_per_tile(&self) -> u64 {
        let mut counts: Vec<u32> = Vec::new();
        let mut busiest = 0;
        for &tile in self.owners.iter().flatten() {
            let tile = tile as usize;
            if counts.len() <= tile {
                counts.resize(tile + 1, 0);
            }
            counts[tile] += 1;
            busiest = busiest.max(counts[tile]);
        }
        u64::from(busiest)
    }

    /// Largest number of bytes any one tile allocates for this tensor.
    pub fn max_tile_bytes(&self) -> u64 {
        self.max_blocks_per_tile() * self.padded_block_bytes()
    }

    /// Number of distinct tiles holding a block.
    pub fn tile_count(&self) -> u32 {
        let mut seen: Vec<bool> = Vec::new();
        let mut count = 0;
        for &tile in self.owners.iter().flatten() {
            let tile = tile as usize;
            if seen.len() <= tile {
                seen.resize(tile + 1, false);
            }
            if !seen[tile] {
                seen[tile] = true;
                count += 1;
            }
        }
        count
    }

    /// Padding elements per axis (`parts * block - size`).
    pub fn padding(&self) -> [u64; 3] {
        [0, 1, 2].map(|axis| {
            block_size(self.dims[axis], self.parts[axis]) * u64::from(self.parts[axis].max(1))
                - self.dims[axis]
        })
    }

    /// The same blocks with every tile renamed through `mapping` (virtual -> logical tile).
    pub fn mapped(&self, mapping: &[u32]) -> Shards {
        let owners = self
            .owners
            .iter()
            .map(|owners| {
                let mut renamed: Owners = owners
                    .iter()
                    .map(|&tile| mapping.get(tile as usize).copied().unwrap_or(tile))
                    .collect();
                renamed.sort_unstable();
                renamed
            })
            .collect();
        Shards {
            owners,
            ..self.clone()
        }
    }
}

/// Index range `[first, last]` of the blocks of an axis (`size`, `parts`) overlapping `[lo, hi)`.
fn overlapping_blocks(size: u64, parts: u32, lo: u64, hi: u64) -> (u32, u32) {
    let step = block_size(size, parts).max(1);
    let last_block = parts.max(1) - 1;
    (
        (lo / step).min(u64::from(last_block)) as u32,
        ((hi.max(lo + 1) - 1) / step).min(u64::from(last_block)) as u32,
    )
}

/// Calls `visit(source_tile, destinations, bytes)` for every piece of `destination`'s blocks
/// that lives on another tile in `source`: the piece is sent once and every destination tile
/// that needs it and does not hold it receives it (a multicast). Source blocks must have one
/// owner (a home). Sizes are in the destination's element bytes (a conversion happens at the
/// source before sending). `source.dims` and `destination.dims` must be equal.
pub fn for_each_transfer(
    source: &Shards,
    destination: &Shards,
    mut visit: impl FnMut(u32, &[u32], u64),
) {
    for_each_transfer_counted(source, destination, |home, receivers, bytes, count| {
        for _ in 0..count {
            visit(home, receivers, bytes);
        }
    });
}

/// [`for_each_transfer`] with equal transfers of one block visited once with their count
/// (`visit(home, receivers, bytes, count)`): the row pieces of a column block.
pub fn for_each_transfer_counted(
    source: &Shards,
    destination: &Shards,
    visit: impl FnMut(u32, &[u32], u64, u64),
) {
    for_each_transfer_within(source, destination, None, visit);
}

/// [`for_each_transfer_counted`] of the part of `destination` inside `window`
/// (`(axis, first, end)`: elements `first..end` along `axis`; `None`: all of it).
pub fn for_each_transfer_within(
    source: &Shards,
    destination: &Shards,
    window: Option<(usize, u64, u64)>,
    mut visit: impl FnMut(u32, &[u32], u64, u64),
) {
    let mut receivers = Vec::new();
    for (block, owners) in destination.owners.iter().enumerate() {
        let mut ranges = destination.block_ranges(block);
        if let Some((axis, first, end)) = window.filter(|w| w.0 < 3) {
            let (lo, hi) = (ranges[axis].0.max(first), ranges[axis].1.min(end));
            if lo >= hi {
                continue;
            }
            ranges[axis] = (lo, hi);
        }
        let spans: Vec<(u32, u32)> = (0..3)
            .map(|axis| {
                overlapping_blocks(
                    source.dims[axis],
                    source.parts[axis],
                    ranges[axis].0,
                    ranges[axis].1,
                )
            })
            .collect();
        for b0 in spans[0].0..=spans[0].1 {
            for b1 in spans[1].0..=spans[1].1 {
                for b2 in spans[2].0..=spans[2].1 {
                    let source_block =
                        ((b0 * source.parts[1].max(1) + b1) * source.parts[2].max(1) + b2) as usize;
                    let Some(&home) = source
                        .owners
                        .get(source_block)
                        .and_then(|owners| owners.first())
                    else {
                        continue;
                    };
                    let source_ranges = source.block_ranges(source_block);
                    let extent = |axis: usize| {
                        let lo = ranges[axis].0.max(source_ranges[axis].0);
                        let hi = ranges[axis].1.min(source_ranges[axis].1);
                        hi.saturating_sub(lo)
                    };
                    let (rows, width) = (extent(0) * extent(1), extent(2));
                    if rows * width == 0 {
                        continue;
                    }
                    receivers.clear();
                    receivers.extend(owners.iter().copied().filter(|&tile| tile != home));
                    if receivers.is_empty() {
                        continue;
                    }
                    // Rows that are whole on both sides are contiguous in both and move as
                    // one transfer; a column piece of them moves row by row (as the lowering
                    // moves them: an exchange transfer is one contiguous range).
                    let whole = |r: [(u64, u64); 3]| r[2].1 - r[2].0 == width;
                    let pieces = if whole(ranges) && whole(source_ranges) {
                        1
                    } else {
                        rows
                    };
                    let bytes = rows / pieces * width * u64::from(destination.element_bytes);
                    visit(home, &receivers, bytes, pieces);
                }
            }
        }
    }
}

/// Bytes of the encoded exchange rows: a send row is 4 words (tile, address, bytes, slot) and
/// a receive row 5 (tile, from, address, bytes, slot), as in `ipu_device::image`.
pub const SEND_ROW_BYTES: u64 = 16;
pub const RECEIVE_ROW_BYTES: u64 = 20;

/// Adds per-tile figures `from` into `into` (grown to hold every tile of `from`).
pub fn add_per_tile(into: &mut Vec<u64>, from: &[u64]) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

/// Endpoint loads of moving a set of tensors in one exchange phase.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhaseLoad {
    /// Bytes sent per tile (logical tiles `2k` and `2k + 1` are a physical pair: one send bus
    /// when the target's pairs share one, see [`PhaseLoad::max_bus_out`]).
    pub tile_out: Vec<u64>,
    pub tile_in: Vec<u64>,
    /// The distinct sending tiles each tile receives from, sorted (each source after a
    /// tile's first costs it a select latency: `cost::receive_load`).
    pub tile_sources: Vec<Vec<u32>>,
    /// Encoded row bytes per tile.
    pub row_bytes: Vec<u64>,
}

impl PhaseLoad {
    pub fn new(tiles: u32) -> PhaseLoad {
        let tiles = tiles as usize;
        PhaseLoad {
            tile_out: vec![0; tiles],
            tile_in: vec![0; tiles],
            tile_sources: vec![Vec::new(); tiles],
            row_bytes: vec![0; tiles],
        }
    }

    /// Adds the transfers that turn `source` into `destination`.
    pub fn add(&mut self, source: &Shards, destination: &Shards) {
        for_each_transfer_counted(source, destination, |home, receivers, bytes, count| {
            self.add_transfers(home, receivers, bytes, count);
        });
    }

    /// Adds the loads of `other` (another part of the same phase).
    pub fn merge(&mut self, other: &PhaseLoad) {
        add_per_tile(&mut self.tile_out, &other.tile_out);
        add_per_tile(&mut self.tile_in, &other.tile_in);
        add_per_tile(&mut self.row_bytes, &other.row_bytes);
        if self.tile_sources.len() < other.tile_sources.len() {
            self.tile_sources
                .resize(other.tile_sources.len(), Vec::new());
        }
        for (mine, theirs) in self.tile_sources.iter_mut().zip(&other.tile_sources) {
            for &home in theirs {
                if let Err(at) = mine.binary_search(&home) {
                    mine.insert(at, home);
                }
            }
        }
    }

    pub fn add_transfer(&mut self, home: u32, receivers: &[u32], bytes: u64) {
        self.add_transfers(home, receivers, bytes, 1);
    }

    /// Adds `count` transfers of `bytes` from `home` to every tile of `receivers`.
    pub fn add_transfers(&mut self, home: u32, receivers: &[u32], bytes: u64, count: u64) {
        let bytes = bytes * count;
        let grow = |vector: &mut Vec<u64>, index: usize| {
            if vector.len() <= index {
                vector.resize(index + 1, 0);
            }
        };
        grow(&mut self.tile_out, home as usize);
        self.tile_out[home as usize] += bytes;
        grow(&mut self.row_bytes, home as usize);
        self.row_bytes[home as usize] += SEND_ROW_BYTES * count;
        for &tile in receivers {
            grow(&mut self.tile_in, tile as usize);
            grow(&mut self.row_bytes, tile as usize);
            self.tile_in[tile as usize] += bytes;
            if self.tile_sources.len() <= tile as usize {
                self.tile_sources.resize(tile as usize + 1, Vec::new());
            }
            let sources = &mut self.tile_sources[tile as usize];
            // Senders mostly come in order: appending is the common case.
            match sources.last() {
                Some(&last) if last == home => {}
                Some(&last) if last > home => {
                    if let Err(at) = sources.binary_search(&home) {
                        sources.insert(at, home);
                    }
                }
                _ => sources.push(home),
            }
            self.row_bytes[tile as usize] += RECEIVE_ROW_BYTES * count;
        }
    }

    /// The most bytes one send bus carries: a tile's own, or a physical pair's (logical `2k`
    /// and `2k + 1`) when the target's pairs share a bus (`exchange.send_bus_tiles`).
    pub fn max_bus_out(&self, target: &ipu_device::Target) -> u64 {
        if target.exchange.send_bus_tiles.value >= 2 {
            self.tile_out
                .chunks(2)
                .map(|pair| pair.iter().sum::<u64>())
                .max()
                .unwrap_or(0)
        } else {
            self.tile_out.iter().copied().max().unwrap_or(0)
        }
    }

    pub fn max_tile_in(&self) -> u64 {
        self.tile_in.iter().copied().max().unwrap_or(0)
    }

    /// The largest receive load: bytes in plus a select latency per source after a tile's
    /// first (`cost::receive_load`).
    pub fn max_receive_load(&self, target: &ipu_device::Target) -> u64 {
        let none = Vec::new();
        self.tile_in
            .iter()
            .zip(self.tile_sources.iter().chain(std::iter::repeat(&none)))
            .map(|(&bytes, sources)| {
                ipu_device::cost::receive_load(bytes, sources.len() as u64, target)
            })
            .max()
            .unwrap_or(0)
    }

    pub fn max_row_bytes(&self) -> u64 {
        self.row_bytes.iter().copied().max().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.tile_out.iter().all(|&bytes| bytes == 0) && self.max_tile_in() == 0
    }

    /// The phase's cycles by the target table's endpoint rule (0 when nothing moves: no phase).
    pub fn cycles(&self, target: &ipu_device::Target) -> u64 {
        if self.is_empty() {
            0
        } else {
            ipu_device::cost::exchange_phase_cycles(
                self.max_bus_out(target),
                self.max_receive_load(target),
                target,
            )
        }
    }
}

/// The smallest piece [`host_home`] cuts a replicated block into: a reader selects each
/// piece's sender (the C600's select latency, 112 cycles, is 448 bytes at 4 bytes per cycle),
/// so pieces below twice that cost their readers more in selects than in bytes.
pub const MIN_HOST_PIECE_BYTES: u64 = 1024;

/// Where the host writes a value its first consumer reads as `need`: each block once, spread
/// over the block's readers (a replicated block is cut along its longest splittable axis into
/// one piece per reader, or for a small row vector's block (a bias, a layer norm's scale) into
/// pieces of at least [`MIN_HOST_PIECE_BYTES`] held by readers spread evenly over its
/// readers), so host-written data occupies the reading tiles evenly.
pub fn host_home(need: &Shards, element_bytes: u32) -> Shards {
    let replicas = need
        .owners
        .first()
        .map_or(1, |owners| owners.len() as u32)
        .max(1);
    let uniform = need
        .owners
        .iter()
        .all(|owners| owners.len() as u32 == replicas);
    // Each reader selects every piece's sender in turn: a small row vector's block (a bias, a
    // layer norm's scale) is cut into pieces of at least MIN_HOST_PIECE_BYTES, held by
    // readers spread over its readers.
    let block_bytes = if need.dims[..2] == [1, 1] {
        need.padded_block_bytes() / u64::from(need.element_bytes.max(1)) * u64::from(element_bytes)
    } else {
        u64::MAX
    };
    let pieces = replicas.min(
        u32::try_from(block_bytes / MIN_HOST_PIECE_BYTES)
            .unwrap_or(u32::MAX)
            .max(1),
    );
    let axis = host_cut_axis(need.dims, need.parts, pieces);
    match (uniform && pieces > 1, axis) {
        (true, Some(axis)) => {
            let mut parts = need.parts;
            parts[axis] *= pieces;
            let blocks = parts.iter().map(|&p| p.max(1)).product::<u32>() as usize;
            let mut owners = vec![Owners::new(); blocks];
            for (block, readers) in need.owners.iter().enumerate() {
                let coordinates = need.block_coordinates(block);
                for piece in 0..pieces as usize {
                    let reader = readers[piece * replicas as usize / pieces as usize];
                    let mut c = coordinates;
                    c[axis] = c[axis] * pieces + piece as u32;
                    let index = ((c[0] * parts[1] + c[1]) * parts[2] + c[2]) as usize;
                    owners[index] = smallvec::smallvec![reader];
                }
            }
            Shards {
                dims: need.dims,
                parts,
                element_bytes,
                owners: owners.into(),
            }
        }
        _ => Shards {
            owners: need
                .owners
                .iter()
                .map(|owners| Owners::from_slice(&owners[..1.min(owners.len())]))
                .collect(),
            element_bytes,
            ..need.clone()
        },
    }
}

/// The axis [`host_home`] cuts each block of a value of `dims` in `parts` along into `pieces`
/// pieces (the longest whose blocks split exactly into that many, ties to the outer axis);
/// `None` when no axis does, and each block is then written whole to its first reader. The
/// lowerings that cut host-written blocks among their readers follow it.
pub fn host_cut_axis(dims: [u64; 3], parts: [u32; 3], pieces: u32) -> Option<usize> {
    (0..3)
        .filter(|&axis| split_is_exact_cover(dims[axis], parts[axis] * pieces))
        .max_by_key(|&axis| (block_size(dims[axis], parts[axis]), std::cmp::Reverse(axis)))
}

/// The axis a broadcast operand's canonical axis maps to: `None` where the operand has size 1
/// and the result does not (it is replicated along that grid axis).
pub fn broadcast_axes(operand: [u64; 3], result: [u64; 3]) -> [Option<usize>; 3] {
    [0, 1, 2].map(|axis| {
        if operand[axis] == result[axis] {
            Some(axis)
        } else {
            None
        }
    })
}
