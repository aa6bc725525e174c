//! Keys and values homed over the tiles of the streamed attention ([`DistributedKeys`]): where
//! each head's keys live, which tile packs each 16-key panel, and the transfers every key block
//! makes from there, as the lowering moves them and the planner prices them.

use ipu_device::Target;

use super::{pad16, StreamedTile};
use crate::tiling::candidate::{generated_phases, InternalPhase, PhaseTransfers};
use std::sync::Arc;

/// The streamed attention's keys and values homed over the tiles: each batch-head's `keys`
/// rows split evenly over `home_tiles` tiles (tile `head * home_tiles + j` holds keys
/// `[j * keys / home_tiles, ...)`, as a row grid over the stacked heads lays them out), so no
/// tile holds a whole head. `home_tiles` is the head's query tiles (`tiles_per_head`) when
/// they divide the keys, else the most tiles up to them that do ([`home_tiles`]): the homes
/// are then not the head's own query tiles, which does not matter to a multicast. Every key
/// block is then one exchange phase: its keys and values multicast from the tiles that hold
/// them to the head's other tiles (the owner copies its own), as the lowering's fetches of
/// each block from that home move them.
///
/// Packed in panels (`panels`): where a tile's home keys are not whole 16-key panels, the
/// keys are packed once anyway, panel by panel: panel `p` of a head (keys `[16 p, 16 p + 16)`,
/// the last one shorter and padded) is gathered from the homes to the head's tile `p` in one
/// exchange phase before the first key block, packed there, and every key block then
/// multicasts its packed panels from those tiles; the values still move from their homes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DistributedKeys {
    pub heads: u32,
    /// The head's tiles (`head * tiles_per_head + j`), every key block's receivers (with the
    /// keys split over tiles, [`StreamedTile::splits`], split `s`'s blocks go to its tiles
    /// `head * tiles_per_head + b * splits + s` of every query block `b`).
    pub tiles_per_head: u32,
    /// Tiles homing each head's keys and values.
    pub home_tiles: u32,
    /// A tile's calls (its keys, head size, value width, key block and precision).
    pub tile: StreamedTile,
    /// The keys are packed in 16-key panels on the head's first tiles, not at their homes.
    pub panels: bool,
}

impl DistributedKeys {
    /// The layout over [`home_tiles`] tiles per head; `None` when there are none.
    pub fn of(heads: u32, tiles_per_head: u32, tile: StreamedTile) -> Option<DistributedKeys> {
        home_tiles(tile.keys, tiles_per_head).map(|home_tiles| DistributedKeys {
            heads,
            tiles_per_head,
            home_tiles,
            tile,
            panels: false,
        })
    }

    /// Keys per home block.
    pub fn rows_per_tile(&self) -> u32 {
        self.tile.keys / self.home_tiles.max(1)
    }

    /// The tile with its home keys packed ([`StreamedTile::home_keys`]) when the home blocks and
    /// key blocks are whole 16-key panels and every block's score GEMM is one call (its packed
    /// keys one contiguous weight buffer); else the tile as it is (each block transposed and
    /// packed where it arrives). Packed either way, the tile takes the column formulation
    /// wherever it fits ([`StreamedTile::columns_fit`]).
    pub fn packed(mut self) -> DistributedKeys {
        let home = self.rows_per_tile();
        let whole = |keys: u32| keys.is_multiple_of(16);
        let mut tile = StreamedTile {
            home_keys: Some(home),
            ..self.tile
        };
        let one_call =
            |tile: &StreamedTile, keys: u32| tile.scores(keys).k_block() >= pad16(tile.d);
        let fits = whole(home)
            && tile
                .key_blocks()
                .iter()
                .all(|&(first, keys)| whole(first) && whole(keys) && one_call(&tile, keys));
        if fits {
            tile.columns = tile.columns_fit();
            self.tile = tile;
            return self;
        }
        // In 16-key panels on the head's first tiles: every block starts at a panel and all
        // but the last are whole panels; the last panel of the keys is padded.
        tile.home_keys = Some(16);
        let panels = tile.keys.div_ceil(16) <= self.tiles_per_head
            && tile.key_blocks().iter().all(|&(first, keys)| {
                whole(first) && (whole(keys) || first + keys == tile.keys) && one_call(&tile, keys)
            });
        if !panels {
            tile.home_keys = None;
        }
        tile.columns = tile.columns_fit();
        self.panels = panels;
        self.tile = tile;
        self
    }

    /// The op's exchange phases, one per key block (and, packed in panels, the gather of the
    /// panels): the phases, their cycles by the endpoint rule and the encoded row bytes of
    /// the tile with the most over all of them.
    pub fn exchange_phases(&self, target: &Target) -> (Vec<InternalPhase>, u64, u64) {
        let blocks = self.tile.key_blocks().len() as u32 + u32::from(self.panels);
        let tiles = self.heads * self.tiles_per_head;
        generated_phases(Arc::new(*self), 0..blocks, tiles, target)
    }
}

/// Tiles homing each head's keys when it has `tiles_per_head` query tiles: all of them when
/// they divide the keys, else the most that do, if at least half of them (fewer would leave a
/// few tiles sending every key block to all the head's tiles; the keys are then fetched from
/// wherever their producer left them).
pub fn home_tiles(keys: u32, tiles_per_head: u32) -> Option<u32> {
    (1..=tiles_per_head)
        .rev()
        .take_while(|&tiles| 2 * tiles >= tiles_per_head)
        .find(|&tiles| keys.is_multiple_of(tiles))
}

/// The part of one key block one home tile holds: `keys` keys from key `offset_in_owner` of
/// its home block, at key `offset_in_block` of the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockPiece {
    pub owner: u32,
    pub offset_in_owner: u32,
    pub offset_in_block: u32,
    pub keys: u32,
}

impl DistributedKeys {
    /// Calls `visit` with each home tile's piece of keys `[first, first + count)` of `head`,
    /// in key order: the pieces of the values (and of keys packed at home) the lowering moves
    /// and [`PhaseTransfers::transfers`] prices.
    pub fn for_each_block_piece(
        &self,
        head: u32,
        range: (u32, u32),
        visit: impl FnMut(BlockPiece),
    ) {
        self.for_each_piece(head, range, (self.rows_per_tile(), self.home_tiles), visit);
    }

    /// The packed keys' pieces of keys `[first, first + count)` of `head`: from their homes, or,
    /// packed in panels, one per panel from the panel's tile.
    pub fn for_each_key_piece(&self, head: u32, range: (u32, u32), visit: impl FnMut(BlockPiece)) {
        let holders = if self.panels {
            (16, self.tiles_per_head)
        } else {
            (self.rows_per_tile(), self.home_tiles)
        };
        self.for_each_piece(head, range, holders, visit);
    }

    /// Bytes a packed key piece of `keys` keys moves: a panel moves whole (the last one of the
    /// keys padded to 16: AMP-right order keeps each 16-key panel contiguous).
    /// In the column formulation every panel moves whole with its packed values transposed
    /// (`16 x (pad16(d) + width)` elements).
    pub fn packed_piece_bytes(&self, keys: u32) -> u64 {
        if self.tile.columns {
            let row = pad16(self.tile.d) + self.tile.width;
            return u64::from(pad16(keys))
                * u64::from(row)
                * u64::from(self.tile.precision.bytes());
        }
        let keys = if self.panels { pad16(keys) } else { keys };
        u64::from(keys) * u64::from(self.tile.packed_key_bytes())
    }

    /// Keys `[16 p, ...)` of a head gathered to its tile `p` before packing (panels only), as
    /// `(panel, first key, keys)`.
    pub fn panels_of_head(&self) -> Vec<(u32, u32, u32)> {
        if !self.panels {
            return Vec::new();
        }
        (0..self.tile.keys.div_ceil(16))
            .map(|p| (p, 16 * p, 16.min(self.tile.keys - 16 * p)))
            .collect()
    }

    /// Calls `visit` with each holder's piece of keys `[first, first + count)` of `head`, the
    /// holders `per_tile` keys each from tile `head * tiles + 0`.
    fn for_each_piece(
        &self,
        head: u32,
        (first, count): (u32, u32),
        (per_tile, tiles): (u32, u32),
        mut visit: impl FnMut(BlockPiece),
    ) {
        let per_tile = per_tile.max(1);
        let mut key = first;
        while key < first + count {
            let owner = key / per_tile;
            let end = ((owner + 1) * per_tile).min(first + count);
            visit(BlockPiece {
                owner: head * tiles + owner,
                offset_in_owner: key - owner * per_tile,
                offset_in_block: key - first,
                keys: end - key,
            });
            key = end;
        }
    }
}

impl PhaseTransfers for DistributedKeys {
    /// Key block `phase` of every head: its keys from the tiles holding them (their homes, or
    /// the panels' tiles), then its values from their homes, to the head's other tiles. With
    /// panels, phase `key blocks` (after the last block) is the gather of each panel's keys to
    /// its tile.
    fn transfers(&self, phase: u32, visit: &mut dyn FnMut(u32, &[u32], u64)) {
        let e = u64::from(self.tile.precision.bytes());
        let blocks = self.tile.key_blocks();
        if self.panels && phase as usize == blocks.len() {
            let panels = self.panels_of_head();
            for head in 0..self.heads {
                for &(panel, first, keys) in &panels {
                    let packer = head * self.tiles_per_head + panel;
                    // The column formulation packs the panel's values there too.
                    let row = self.tile.d
                        + if self.tile.columns {
                            self.tile.width
                        } else {
                            0
                        };
                    self.for_each_block_piece(head, (first, keys), |piece| {
                        if piece.owner != packer {
                            let bytes = u64::from(piece.keys) * u64::from(row) * e;
                            visit(piece.owner, &[packer], bytes);
                        }
                    });
                }
            }
            return;
        }
        if phase as usize >= blocks.len() {
            return;
        }
        if phase == 0 && self.tile.shares_query_packing() {
            self.for_each_packed_query_group(visit);
        }
        // With the keys split, a block of split j goes to split j's tile of every query block.
        let splits = self.tile.splits.max(1);
        let split_blocks: Vec<Vec<(u32, u32)>> =
            (0..splits).map(|j| self.tile.split_blocks(j)).collect();
        let mut receivers = Vec::with_capacity(self.tiles_per_head as usize);
        for head in 0..self.heads {
            for (split, blocks) in split_blocks.iter().enumerate() {
                let Some(&(first, count)) = blocks.get(phase as usize) else {
                    continue;
                };
                let tiles = (0..self.tiles_per_head / splits)
                    .map(|block| head * self.tiles_per_head + block * splits + split as u32);
                // A head on one tile moves nothing (its owner copies).
                let mut send = |owner: u32, bytes: u64| {
                    receivers.clear();
                    receivers.extend(tiles.clone().filter(|&tile| tile != owner));
                    if !receivers.is_empty() {
                        visit(owner, &receivers, bytes);
                    }
                };
                self.for_each_key_piece(head, (first, count), |piece| {
                    let bytes = match self.tile.home_keys {
                        Some(_) => self.packed_piece_bytes(piece.keys),
                        None => u64::from(piece.keys) * u64::from(self.tile.d) * e,
                    };
                    send(piece.owner, bytes);
                });
                if self.tile.columns {
                    // The values move packed with their keys (see `packed_piece_bytes`).
                    continue;
                }
                self.for_each_block_piece(head, (first, count), |piece| {
                    send(
                        piece.owner,
                        u64::from(piece.keys) * u64::from(self.tile.width) * e,
                    );
                });
            }
        }
    }
}

impl DistributedKeys {
    /// With the query packing shared out ([`StreamedTile::shares_query_packing`]), the first
    /// key block's phase also multicasts every packed 16-query group (`[pad16(d)][16]`) from
    /// its packer to the other tiles of its query block: `visit(packer, receivers, bytes)`.
    fn for_each_packed_query_group(&self, visit: &mut dyn FnMut(u32, &[u32], u64)) {
        let splits = self.tile.splits.max(1);
        let bytes = u64::from(pad16(self.tile.d)) * 16 * u64::from(self.tile.precision.bytes());
        let mut receivers = Vec::with_capacity(splits as usize);
        for block in 0..self.heads * (self.tiles_per_head / splits) {
            for group in 0..self.tile.rows.div_ceil(16) {
                let packer = block * splits + self.tile.group_packer(group);
                receivers.clear();
                receivers.extend((block * splits..(block + 1) * splits).filter(|&t| t != packer));
                visit(packer, &receivers, bytes);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipu_device::{KernelSpec, Precision};

    fn cost(spec: &KernelSpec, target: &Target) -> u64 {
        ipu_device::cost::kernel_cycles(spec, target)
    }

    fn tile(keys: u32, key_block: u32) -> StreamedTile {
        StreamedTile {
            rows: 8,
            d: 16,
            keys,
            width: 32,
            key_block,
            precision: Precision::F16,
            causal: false,
            home_keys: None,
            columns: false,
            splits: 1,
        }
    }

    /// Every tile of a head receives each key and value it does not hold exactly once over the
    /// key blocks, from the tile that holds it and no other; no transfer leaves the head.
    #[test]
    fn distributed_keys_bring_every_other_key_block_once() {
        let (heads, per_head, keys) = (3u32, 4u32, 64u32);
        let keys_home = DistributedKeys::of(heads, per_head, tile(keys, 24)).expect("splits");
        assert_eq!(keys_home.rows_per_tile(), 16);
        let (d, width, e) = (16u64, 32u64, 2u64);
        let mut received = vec![0u64; (heads * per_head) as usize];
        let phases = keys_home.tile.key_blocks().len() as u32;
        assert_eq!(phases, 3);
        for phase in 0..phases {
            keys_home.transfers(phase, &mut |home, receivers, bytes| {
                let head = home / per_head;
                assert_eq!(receivers.len() as u32, per_head - 1);
                for &receiver in receivers {
                    assert_ne!(receiver, home);
                    assert_eq!(receiver / per_head, head, "stays in the head");
                    received[receiver as usize] += bytes;
                }
            });
        }
        let others = u64::from(keys - keys / per_head);
        assert!(received
            .iter()
            .all(|&bytes| bytes == others * (d + width) * e));
        // Keys that do not split evenly over the head's tiles are homed over the most tiles up
        // to them that they do (64 keys over 4 of 5), if at least half of them; prime keys are
        // not homed this way.
        let homed = DistributedKeys::of(heads, 5, tile(keys, 24)).expect("4 of 5 tiles");
        assert_eq!((homed.home_tiles, homed.rows_per_tile()), (4, 16));
        // Head h's keys come from its homes, tiles 4h..4h+3, to its query tiles 5h..5h+4.
        let mut sent = 0;
        homed.transfers(0, &mut |home, receivers, _| {
            let head = home / 4;
            assert!(receivers.iter().all(|&r| r / 5 == head && r != home));
            sent += 1;
        });
        assert!(sent > 0);
        assert_eq!(DistributedKeys::of(heads, 5, tile(61, 24)), None);
    }

    /// Home keys are packed once when home blocks and key blocks are whole 16-key panels; the
    /// packed keys then move with the head dimension padded to 16, and no block is transposed.
    /// (The row formulation, which FP8 keeps: F16 takes the column one, tested below.)
    #[test]
    fn keys_are_packed_at_home_only_in_whole_panels() {
        let target = Target::c600();
        let mut base = tile(64, 32);
        base.d = 40;
        let mut packed = DistributedKeys::of(2, 4, base).expect("splits").packed();
        assert!(packed.tile.columns);
        packed.tile.columns = false;
        assert_eq!(packed.tile.home_keys, Some(16));
        assert_eq!(packed.tile.packed_key_bytes(), 48 * 2);
        assert!(packed.tile.scores(32).b_packed);
        let mut bytes = Vec::new();
        packed.transfers(0, &mut |_, _, b| bytes.push(b));
        // Tiles 0 and 1 of each head hold block 0: per head their 16 packed keys each, then
        // their 16 values of 32 each.
        assert_eq!(bytes, [1536, 1536, 1024, 1024, 1536, 1536, 1024, 1024]);
        // Packed, a tile transposes and packs its 16 home keys once instead of transposing and
        // packing each of its two blocks of 32: its cycles differ from the unpacked tile's by
        // exactly those calls.
        let unpacked = StreamedTile {
            home_keys: None,
            ..packed.tile
        };
        let [transpose, rearrange] = packed.tile.pack_home().expect("packs");
        let per_block = |tile: &StreamedTile| {
            tile.scores(32).cycles(&target)
                + if tile.home_keys.is_some() {
                    0
                } else {
                    cost(&tile.transpose(32), &target)
                }
        };
        assert_eq!(
            packed.tile.cycles(&target) - 2 * per_block(&packed.tile),
            unpacked.cycles(&target) - 2 * per_block(&unpacked)
                + cost(&transpose, &target)
                + cost(&rearrange, &target)
        );
        assert!(packed.tile.cycles(&target) < unpacked.cycles(&target));
        // The packing's transpose (16 keys x 40 in f16) does not fit the accumulator of 8 rows
        // x 32 in f32 and is counted; of 16 rows it fits there and takes no buffer of its own.
        assert!(!packed.tile.pack_scratch_in_output());
        let sixteen_rows = StreamedTile {
            rows: 16,
            ..packed.tile
        };
        assert!(sixteen_rows.pack_scratch_in_output());
        let block = u64::from(packed.tile.key_block);
        assert_eq!(
            packed.tile.working_bytes() + 8 * block * 2 + 8 * 32 * 4 + 8 * 8,
            sixteen_rows.working_bytes() + 16 * 40 * 2
        );
        // Eight keys per tile are packed in 16-key panels on the head's first tiles; a block not
        // of whole panels is packed where it arrives.
        let eight = DistributedKeys::of(2, 8, base).expect("splits").packed();
        assert_eq!(eight.tile.home_keys, Some(16));
        assert!(eight.panels);
        let ragged = DistributedKeys::of(2, 4, tile(64, 24))
            .expect("splits")
            .packed();
        assert_eq!(ragged.tile.home_keys, None);
    }

    /// The phases' cycles are the endpoint rule over those transfers, one phase per key block.
    #[test]
    fn distributed_keys_price_one_phase_per_key_block() {
        let target = Target::c600();
        let keys_home = DistributedKeys::of(2, 4, tile(64, 32)).expect("splits");
        let (phases, cycles, row_bytes) = keys_home.exchange_phases(&target);
        assert_eq!(phases.len(), 2);
        // Block 0 is held by tiles 0 and 1 of each head, which send their 32 keys of 16 + 32
        // columns once, and tiles 2 and 3 each receive all of them, from those two tiles.
        let busiest = 32 * (16 + 32) * 2;
        let received = ipu_device::cost::receive_load(busiest, 2, &target);
        let phase = ipu_device::cost::exchange_phase_cycles(busiest, received, &target);
        assert_eq!(cycles, 2 * phase);
        assert!(row_bytes > 0);
    }

    /// Keys that split evenly but not in whole panels (9 per tile, as SigLIP's 729 over 81
    /// tiles) are packed once in 16-key panels: one phase gathers panel p of every head to the
    /// head's tile p from the homes, and each key block then moves whole packed panels from
    /// those tiles (the last panel of the keys padded to 16) and the values from their homes.
    #[test]
    fn keys_not_in_whole_panels_are_packed_in_panels_on_the_heads_first_tiles() {
        let (heads, per_head) = (2u32, 9u32);
        let base = StreamedTile {
            d: 40,
            ..tile(81, 48)
        };
        let mut keys = DistributedKeys::of(heads, per_head, base)
            .expect("81 keys split over 9 tiles")
            .packed();
        // The row formulation (FP8's); the column one is tested below.
        keys.tile.columns = false;
        assert!(keys.panels);
        assert_eq!(keys.tile.home_keys, Some(16));
        assert_eq!(keys.panels_of_head().len(), 6);
        assert_eq!(keys.panels_of_head()[5], (5, 80, 1));
        let (d, width, e) = (40u64, 32u64, 2u64);
        let packed = u64::from(keys.tile.packed_key_bytes());
        assert_eq!(packed, 48 * 2);
        // The gather (the phase after the two key blocks): every key reaches its panel's tile
        // once, unless that tile is its home.
        let blocks = keys.tile.key_blocks();
        assert_eq!(blocks, [(0, 48), (48, 33)]);
        let mut gathered = vec![0u64; (heads * per_head) as usize];
        keys.transfers(2, &mut |home, receivers, bytes| {
            assert_eq!(receivers.len(), 1);
            let packer = receivers[0];
            assert_ne!(home, packer);
            assert_eq!(home / per_head, packer / per_head, "stays in the head");
            gathered[packer as usize] += bytes;
        });
        for head in 0..heads {
            for (panel, first, count) in keys.panels_of_head() {
                // Keys of the panel already on its tile (home j holds keys 9j..9j+9).
                let own = (first..first + count).filter(|k| k / 9 == panel).count() as u64;
                let packer = (head * per_head + panel) as usize;
                assert_eq!(gathered[packer], (u64::from(count) - own) * d * e);
            }
        }
        // Block 1 (keys 48..81): panels 3, 4 and the padded panel 5, each to the other eight
        // tiles; the values from their homes (tiles 5..8 of each head).
        let mut key_sends = Vec::new();
        let mut value_bytes = 0;
        keys.transfers(1, &mut |home, receivers, bytes| {
            assert_eq!(receivers.len() as u32, per_head - 1);
            if bytes % packed == 0 && bytes / packed == 16 {
                key_sends.push(home % per_head);
            } else {
                value_bytes += bytes;
            }
        });
        assert_eq!(key_sends, [3, 4, 5, 3, 4, 5]);
        assert_eq!(value_bytes, 2 * 33 * width * e);
        assert_eq!(keys.packed_piece_bytes(1), 16 * packed);
        // Priced: a gather phase more than the key blocks.
        let (phases, ..) = keys.exchange_phases(&Target::c600());
        assert_eq!(phases.len(), 3);
        // More panels than the head has tiles: not packed.
        let wide = DistributedKeys::of(1, 3, tile(81, 48))
            .expect("splits")
            .packed();
        assert!(!wide.panels && wide.tile.home_keys.is_none() && !wide.tile.columns);
    }

    /// In the column formulation a panel's tile gathers its keys and values, and every key
    /// block multicasts whole packed panels - keys padded to 16 columns and the values
    /// transposed, 16 keys each even when the last panel of the keys is short - from those
    /// tiles alone; FP8 keeps the row formulation.
    #[test]
    fn column_panels_move_keys_and_values_together_from_their_tile() {
        let (heads, per_head) = (2u32, 9u32);
        let base = StreamedTile {
            d: 40,
            ..tile(81, 48)
        };
        let keys = DistributedKeys::of(heads, per_head, base)
            .expect("81 keys split over 9 tiles")
            .packed();
        assert!(keys.panels && keys.tile.columns);
        let (d, width, e) = (40u64, 32u64, 2u64);
        let mut gathered = 0;
        keys.transfers(2, &mut |_, _, bytes| gathered += bytes);
        // Every key not already on its panel's tile, with its values.
        let own: u64 = (0..81u32).filter(|k| k / 16 == k / 9).count() as u64;
        assert_eq!(gathered, u64::from(heads) * (81 - own) * (d + width) * e);
        let mut sends = Vec::new();
        keys.transfers(1, &mut |home, receivers, bytes| {
            assert_eq!(receivers.len() as u32, per_head - 1);
            sends.push((home % per_head, bytes));
        });
        let panel = 16 * (48 + width) * e;
        assert_eq!(sends, [3, 4, 5, 3, 4, 5].map(|tile| (tile, panel)));
        let fp8 = StreamedTile {
            precision: Precision::F8E4M3,
            ..base
        };
        let fp8 = DistributedKeys::of(heads, per_head, fp8)
            .expect("splits")
            .packed();
        assert!(fp8.panels && !fp8.tile.columns);
    }
}
