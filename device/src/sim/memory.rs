//! Simulated tile SRAMs, allocated lazily: a tile that no segment, kernel, receive or host
//! write ever touches owns no memory. Reads of an untouched tile see zeros.
//!
//! A touched tile gets its whole SRAM at once because the kernel ABI hands kernels the full
//! SRAM slice (compiled kernels do not bounds-check). The buffer is zero-initialized through
//! the allocator's zeroed path, so the operating system commits pages only as they are written.

use std::ops::Range;

use rayon::prelude::*;

use super::error::SimError;
use crate::image::AddressRange;
use crate::target::Target;

pub(crate) struct TileMemories {
    sram_base: u32,
    sram_bytes: usize,
    tiles: Vec<Option<Box<[u8]>>>,
}

/// Runs of one tile inside a step's row list.
pub(crate) type TileGroup = (u32, Range<usize>);

impl TileMemories {
    pub fn new(target: &Target) -> Self {
        TileMemories {
            sram_base: target.memory.sram_base.value,
            sram_bytes: target.memory.sram_bytes.value as usize,
            tiles: (0..target.geometry.tiles.value).map(|_| None).collect(),
        }
    }

    pub fn sram_base(&self) -> u32 {
        self.sram_base
    }

    pub fn allocated_tiles(&self) -> usize {
        self.tiles.iter().filter(|t| t.is_some()).count()
    }

    pub fn allocated_bytes(&self) -> u64 {
        self.allocated_tiles() as u64 * self.sram_bytes as u64
    }

    pub fn is_allocated(&self, tile: u32) -> bool {
        matches!(self.tiles.get(tile as usize), Some(Some(_)))
    }

    /// Offsets into the tile buffer for an absolute range, or an error naming it.
    fn offsets(&self, tile: u32, address: u32, bytes: usize) -> Result<Range<usize>, SimError> {
        let start = (address as usize).wrapping_sub(self.sram_base as usize);
        let in_range = (tile as usize) < self.tiles.len()
            && address >= self.sram_base
            && start
                .checked_add(bytes)
                .is_some_and(|end| end <= self.sram_bytes);
        if !in_range {
            return Err(SimError::MemoryAccess {
                tile,
                range: AddressRange::new(address, u32::try_from(bytes).unwrap_or(u32::MAX)),
                sram_start: self.sram_base,
                sram_end: self.sram_base + self.sram_bytes as u32,
                tiles: self.tiles.len() as u32,
            });
        }
        Ok(start..start + bytes)
    }

    fn ensure(&mut self, tile: usize) -> &mut [u8] {
        let bytes = self.sram_bytes;
        self.tiles[tile].get_or_insert_with(|| vec![0u8; bytes].into_boxed_slice())
    }

    /// Allocates every tile of `groups` that is not yet allocated.
    pub fn ensure_tiles(&mut self, groups: &[TileGroup]) {
        for (tile, _) in groups {
            self.ensure(*tile as usize);
        }
    }

    pub fn write(&mut self, tile: u32, address: u32, bytes: &[u8]) -> Result<(), SimError> {
        let range = self.offsets(tile, address, bytes.len())?;
        self.ensure(tile as usize)[range].copy_from_slice(bytes);
        Ok(())
    }

    pub fn read_into(&self, tile: u32, address: u32, out: &mut [u8]) -> Result<(), SimError> {
        let range = self.offsets(tile, address, out.len())?;
        match &self.tiles[tile as usize] {
            Some(memory) => out.copy_from_slice(&memory[range]),
            None => out.fill(0),
        }
        Ok(())
    }

    pub fn read(&self, tile: u32, address: u32, bytes: usize) -> Result<Vec<u8>, SimError> {
        let mut out = vec![0u8; bytes];
        self.read_into(tile, address, &mut out)?;
        Ok(out)
    }

    /// Calls `work(tile, tile_memory, rows)` for every group in parallel (one task per tile,
    /// each with its own `&mut [u8]`), allocating the tiles first. `groups` must be sorted by
    /// tile without repeats. Results come back in group order, independent of thread count.
    pub fn par_for_groups<R, F>(&mut self, groups: &[TileGroup], work: F) -> Vec<R>
    where
        R: Send,
        F: Fn(u32, &mut [u8], Range<usize>) -> R + Sync,
    {
        self.ensure_tiles(groups);
        let mut tasks: Vec<(u32, &mut [u8], Range<usize>)> = Vec::with_capacity(groups.len());
        let mut pending = groups.iter().peekable();
        for (index, memory) in self.tiles.iter_mut().enumerate() {
            let Some((tile, rows)) = pending.peek() else {
                break;
            };
            if *tile as usize != index {
                continue;
            }
            if let Some(memory) = memory.as_deref_mut() {
                tasks.push((*tile, memory, rows.clone()));
            }
            pending.next();
        }
        tasks
            .into_par_iter()
            .map(|(tile, memory, rows)| work(tile, memory, rows))
            .collect()
    }
}

/// Groups row indices by tile: returns the permutation of `tiles` sorted by tile (stable, so a
/// tile's rows keep their order) and the `(tile, range into the permutation)` groups.
pub(crate) fn group_by_tile(tiles: &[u32]) -> (Vec<usize>, Vec<TileGroup>) {
    let mut order: Vec<usize> = (0..tiles.len()).collect();
    order.sort_by_key(|&i| tiles[i]);
    let mut groups: Vec<TileGroup> = Vec::new();
    for (position, &row) in order.iter().enumerate() {
        match groups.last_mut() {
            Some((tile, range)) if *tile == tiles[row] => range.end = position + 1,
            _ => groups.push((tiles[row], position..position + 1)),
        }
    }
    (order, groups)
}
