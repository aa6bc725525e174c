//! Logical-to-physical tile topology.
//!
//! The physical grid is `physical_rows` x `physical_columns` (23 x 64 on IPU21) with physical
//! index `row * columns + column`. Physical tiles `t` and `t ^ pair_mask` (mask 2: columns `c`
//! and `c ^ 2` of one row) form a *physical pair*: they share the resources of 64-bit paired
//! transfers [HW-C600]. Their 32-bit sends are independent (`exchange.send_bus_tiles` = 1,
//! fitted to the SigLIP MLP replay); a table may make a pair share one send bus instead.
//!
//! Logical tiles are laid out as a snake over those pairs, so that logical tiles `2k` and
//! `2k + 1` always land on one physical pair (a planner that gives a pair of shards to
//! neighbouring logical tiles knows they are a pair), and consecutive logical tiles stay close
//! in column (route time grows with column distance [HW-C600]):
//!
//! * logical row `r = l / columns`, position `i = l % columns`;
//! * within a row, positions walk the pairs in column order: the position's bit 0 selects the
//!   member of the pair (column bit 1, the pair bit) and its bit 1 selects which of the two
//!   interleaved pairs in a 4-column group (column bit 0): `column = swap_bits_0_1(i)`. Row 0
//!   therefore visits columns 0, 2, 1, 3, 4, 6, 5, 7, ...;
//! * odd rows run right to left (`column = columns - 1 - swap_bits_0_1(i)`), which is the
//!   snake. Mirroring preserves pairs because `columns - 1 - c = c ^ (columns - 1)` for a
//!   power-of-two column count and XOR commutes with the pair mask.
//!
//! The mapping needs a power-of-two column count of at least 4 (true of every IPU), with the
//! pair mask 2; [`Target::logical_to_physical`] checks the tile index, and a unit test checks
//! the bijection and the pair property on every table.

use serde::{Deserialize, Serialize};

use super::{Target, TargetError};

/// A tile's place on the physical grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PhysicalTile {
    pub row: u32,
    pub column: u32,
    /// `row * columns + column`.
    pub index: u32,
}

/// Swaps bits 0 and 1 (an involution, so it is its own inverse).
const fn swap_bits_0_1(i: u32) -> u32 {
    (i & !3) | ((i & 1) << 1) | ((i >> 1) & 1)
}

impl Target {
    /// Number of physical tiles on the grid (rows x columns).
    pub fn physical_tiles(&self) -> u32 {
        self.geometry.physical_rows.value * self.geometry.physical_columns.value
    }

    /// Where logical tile `tile` sits on the physical grid (the snake over pairs above).
    pub fn logical_to_physical(&self, tile: u32) -> Result<PhysicalTile, TargetError> {
        let tiles = self.geometry.tiles.value;
        if tile >= tiles || tile >= self.physical_tiles() {
            return Err(TargetError::LogicalTileOutOfRange {
                tile,
                tiles,
                target: self.name.clone(),
            });
        }
        let columns = self.geometry.physical_columns.value;
        let row = tile / columns;
        let in_row = swap_bits_0_1(tile % columns);
        let column = if row & 1 == 0 {
            in_row
        } else {
            columns - 1 - in_row
        };
        Ok(PhysicalTile {
            row,
            column,
            index: row * columns + column,
        })
    }

    /// The logical tile at physical index `index` (inverse of [`Target::logical_to_physical`]).
    pub fn physical_to_logical(&self, index: u32) -> Result<u32, TargetError> {
        let columns = self.geometry.physical_columns.value;
        let out_of_range = || TargetError::PhysicalTileOutOfRange {
            index,
            rows: self.geometry.physical_rows.value,
            columns,
            tiles: self.physical_tiles(),
            target: self.name.clone(),
        };
        if index >= self.physical_tiles() {
            return Err(out_of_range());
        }
        let row = index / columns;
        let column = index % columns;
        let in_row = if row & 1 == 0 {
            column
        } else {
            columns - 1 - column
        };
        let tile = row * columns + swap_bits_0_1(in_row);
        if tile >= self.geometry.tiles.value {
            // A grid position no logical tile uses (only if a table has spare physical tiles).
            return Err(out_of_range());
        }
        Ok(tile)
    }

    /// The physical tile paired with `index` (`index ^ pair_mask`).
    pub fn physical_pair(&self, index: u32) -> Result<u32, TargetError> {
        if index >= self.physical_tiles() {
            return Err(TargetError::PhysicalTileOutOfRange {
                index,
                rows: self.geometry.physical_rows.value,
                columns: self.geometry.physical_columns.value,
                tiles: self.physical_tiles(),
                target: self.name.clone(),
            });
        }
        Ok(index ^ self.exchange.pair_mask.value)
    }

    /// Identifier of the send bus physical tile `index` uses: its own index, or the lower index
    /// of its pair when a pair shares one (`exchange.send_bus_tiles` = 2). The simulator
    /// charges sender occupancy per bus.
    pub fn send_bus(&self, physical_index: u32) -> u32 {
        if self.exchange.send_bus_tiles.value >= 2 {
            physical_index & !self.exchange.pair_mask.value
        } else {
            physical_index
        }
    }

    /// Whether physical tiles `a` and `b` send over the same bus (equal, or a physical pair
    /// when pairs share one).
    pub fn same_bus(&self, a: u32, b: u32) -> bool {
        self.send_bus(a) == self.send_bus(b)
    }

    /// Whether logical tiles `a` and `b` send over the same bus; false for out-of-range tiles.
    pub fn logical_same_bus(&self, a: u32, b: u32) -> bool {
        match (self.logical_to_physical(a), self.logical_to_physical(b)) {
            (Ok(pa), Ok(pb)) => self.same_bus(pa.index, pb.index),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_is_an_involution() {
        for i in 0..64 {
            assert_eq!(swap_bits_0_1(swap_bits_0_1(i)), i);
        }
        assert_eq!(
            (0..8).map(swap_bits_0_1).collect::<Vec<_>>(),
            vec![0, 2, 1, 3, 4, 6, 5, 7]
        );
    }

    #[test]
    fn first_row_walks_pairs_and_second_row_snakes_back() {
        let target = Target::c600();
        let columns: Vec<u32> = (0..4)
            .map(|t| {
                target
                    .logical_to_physical(t)
                    .map(|p| p.column)
                    .unwrap_or(99)
            })
            .collect();
        assert_eq!(columns, vec![0, 2, 1, 3]);
        let second_row: Vec<(u32, u32)> = (64..68)
            .map(|t| {
                target
                    .logical_to_physical(t)
                    .map(|p| (p.row, p.column))
                    .unwrap_or((99, 99))
            })
            .collect();
        assert_eq!(second_row, vec![(1, 63), (1, 61), (1, 62), (1, 60)]);
    }
}
