//! Logical-to-physical tile topology and route time.
//!
//! The physical grid is `physical_rows` x `physical_columns` (23 x 64 on IPU21) with physical
//! index `row * columns + column`. Physical tiles `t` and `t ^ pair_mask` (mask 2: columns `c`
//! and `c ^ 2` of one row) form a *physical pair*: they share the resources of 64-bit paired
//! transfers [HW-C600]. Their 32-bit sends are independent (`exchange.send_bus_tiles` = 1,
//! fitted to the SigLIP MLP replay); a table may make a pair share one send bus instead.
//!
//! Logical tiles are numbered as the C600 numbers them (its logical-to-physical map, a fact
//! recorded by the anchor's topology at osmarks/ipu-stack `crates/ipu-target`): logical tiles
//! `2p` and `2p + 1` form logical pair `p` and sit on one physical pair (lane 0 on the pair's
//! column, lane 1 two columns on); the pairs fill *column blocks* of `physical_rows` pairs
//! down the grid, snaking (even blocks top to bottom, odd blocks bottom to top), and block `b`
//! takes the column pair `4 (b / 2) + (b mod 2)` and that plus 2. So logical tiles 0-45 are
//! columns 0 and 2 of every row, 46-91 columns 1 and 3, 92-137 columns 4 and 6, and so on.
//!
//! Route time grows with column distance [HW-C600]. The two halves of the grid face each
//! other across the exchange: column `c` and column `columns - 1 - c` are at the same distance
//! along it (the anchor's geometry folds physical columns at the middle), so a tile's place
//! along the exchange is its *folded column* `min(c, columns - 1 - c)`. A word from a sender
//! reaches a receiver `exchange.route_cycles_per_column` cycles per folded column between them
//! later than at the sender's own folded column; the multicast timing table (root tile 0,
//! receivers at physical columns 32 and 53, folded 31 and 10) finishes 21 cycles later on the
//! farther one at every size, which fits one cycle per column exactly and is that constant's
//! source. Physical rows are not timed: both of the table's receivers are in row 0, and no
//! measurement separates rows.
//!
//! The mapping needs a column count that is a multiple of 4 and an even tile count within the
//! grid (true of every IPU table); [`Target::logical_to_physical`] checks the tile index, and
//! unit tests check the bijection and the pair property on every table.

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

impl Target {
    /// Number of physical tiles on the grid (rows x columns).
    pub fn physical_tiles(&self) -> u32 {
        self.geometry.physical_rows.value * self.geometry.physical_columns.value
    }

    /// Where logical tile `tile` sits on the physical grid (the C600's numbering above).
    pub fn logical_to_physical(&self, tile: u32) -> Result<PhysicalTile, TargetError> {
        let tiles = self.geometry.tiles.value;
        if tile >= tiles || tile >= self.physical_tiles() {
            return Err(TargetError::LogicalTileOutOfRange {
                tile,
                tiles,
                target: self.name.clone(),
            });
        }
        let rows = self.geometry.physical_rows.value;
        let columns = self.geometry.physical_columns.value;
        let (pair, lane) = (tile / 2, tile % 2);
        let block = pair / rows;
        let down = pair % rows;
        let row = if block.is_multiple_of(2) {
            down
        } else {
            rows - 1 - down
        };
        let column = 4 * (block / 2) + block % 2 + 2 * lane;
        Ok(PhysicalTile {
            row,
            column,
            index: row * columns + column,
        })
    }

    /// The logical tile at physical index `index` (inverse of [`Target::logical_to_physical`]).
    pub fn physical_to_logical(&self, index: u32) -> Result<u32, TargetError> {
        let rows = self.geometry.physical_rows.value;
        let columns = self.geometry.physical_columns.value;
        let out_of_range = || TargetError::PhysicalTileOutOfRange {
            index,
            rows,
            columns,
            tiles: self.physical_tiles(),
            target: self.name.clone(),
        };
        if index >= self.physical_tiles() {
            return Err(out_of_range());
        }
        let (row, column) = (index / columns, index % columns);
        let lane = (column / 2) % 2;
        let block = 2 * (column / 4) + column % 2;
        let down = if block.is_multiple_of(2) {
            row
        } else {
            rows - 1 - row
        };
        let tile = 2 * (block * rows + down) + lane;
        if tile >= self.geometry.tiles.value {
            // A grid position no logical tile uses (only if a table has spare physical tiles).
            return Err(out_of_range());
        }
        Ok(tile)
    }

    /// A physical column's place along the exchange: the grid folded at its middle.
    pub fn folded_column(&self, column: u32) -> u32 {
        let columns = self.geometry.physical_columns.value;
        column.min(columns.saturating_sub(1).saturating_sub(column))
    }

    /// Cycles a word takes to reach logical tile `receiver` beyond the time it takes to reach
    /// the sender's own folded column (see the module text); 0 for out-of-range tiles, which
    /// the image checks refuse elsewhere.
    pub fn route_cycles(&self, sender: u32, receiver: u32) -> u64 {
        match (
            self.logical_to_physical(sender),
            self.logical_to_physical(receiver),
        ) {
            (Ok(s), Ok(r)) => {
                let distance = self
                    .folded_column(s.column)
                    .abs_diff(self.folded_column(r.column));
                u64::from(distance) * u64::from(self.exchange.route_cycles_per_column.value)
            }
            _ => 0,
        }
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

    fn place(target: &Target, tile: u32) -> (u32, u32) {
        target
            .logical_to_physical(tile)
            .map(|p| (p.row, p.column))
            .unwrap_or((99, 99))
    }

    #[test]
    fn pairs_fill_column_blocks_down_then_up() {
        let target = Target::c600();
        let first: Vec<(u32, u32)> = (0..4).map(|t| place(&target, t)).collect();
        assert_eq!(first, vec![(0, 0), (0, 2), (1, 0), (1, 2)]);
        // The first block ends at the bottom row; the second climbs back up columns 1 and 3.
        assert_eq!(place(&target, 45), (22, 2));
        assert_eq!(place(&target, 46), (22, 1));
        assert_eq!(place(&target, 47), (22, 3));
        assert_eq!(place(&target, 91), (0, 3));
        assert_eq!(place(&target, 92), (0, 4));
        assert_eq!(place(&target, 1471), (0, 63));
    }

    #[test]
    fn route_time_follows_the_folded_column() {
        let target = Target::c600();
        assert_eq!(target.exchange.route_cycles_per_column.value, 1);
        // The multicast table's receivers: physical tiles 32 and 53 of row 0.
        let receiver_32 = target.physical_to_logical(32).expect("on the grid");
        let receiver_53 = target.physical_to_logical(53).expect("on the grid");
        assert_eq!((receiver_32, receiver_53), (736, 1286));
        assert_eq!(target.route_cycles(0, receiver_32), 31);
        assert_eq!(target.route_cycles(0, receiver_53), 10);
        // Symmetric, zero within a folded column (column 0 faces column 63).
        assert_eq!(target.route_cycles(receiver_53, 0), 10);
        assert_eq!(target.route_cycles(0, 1471), 0);
        assert_eq!(target.route_cycles(0, 1), 2);
        assert_eq!(target.route_cycles(0, 99_999), 0);
    }
}
