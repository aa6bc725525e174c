//! Simulated tile SRAMs, allocated lazily: a tile that no segment, kernel, receive or host
//! write ever touches owns no memory. Reads of an untouched tile see zeros.
//!
//! A touched tile gets its whole SRAM address range at once because the kernel ABI hands
//! kernels the full SRAM slice (compiled kernels do not bounds-check). Memory is zeroed by
//! the operating system's fresh mappings (see [`TILES_PER_BLOCK`]), so only written pages are
//! ever committed.

use std::ops::Range;

use rayon::prelude::*;

use super::error::SimError;
use crate::image::AddressRange;
use crate::target::Target;

pub(crate) struct TileMemories {
    sram_base: u32,
    sram_bytes: usize,
    tiles: usize,
    /// One buffer per block of `TILES_PER_BLOCK` consecutive tiles, created when the first
    /// tile of the block is touched.
    blocks: Vec<Option<Box<[u8]>>>,
    touched: Vec<bool>,
}

/// Tiles share one zeroed allocation per block of 64 (40.9 MB on IPU21). Blocks that large
/// are always mapped fresh from the operating system by the allocator (glibc maps anything
/// above its 32 MiB ceiling directly), so the zeros cost nothing until a page is written.
/// One allocation per tile (624 KiB) was below that ceiling once glibc had raised its
/// threshold after the first simulator was dropped: the next simulator's tiles then came
/// from the heap and were cleared byte by byte, which made a second load 5x slower.
const TILES_PER_BLOCK: usize = 64;

/// Runs of one tile inside a step's row list.
pub(crate) type TileGroup = (u32, Range<usize>);

impl TileMemories {
    pub fn new(target: &Target) -> Self {
        let tiles = target.geometry.tiles.value as usize;
        TileMemories {
            sram_base: target.memory.sram_base.value,
            sram_bytes: target.memory.sram_bytes.value as usize,
            tiles,
            blocks: (0..tiles.div_ceil(TILES_PER_BLOCK)).map(|_| None).collect(),
            touched: vec![false; tiles],
        }
    }

    pub fn sram_base(&self) -> u32 {
        self.sram_base
    }

    /// Tiles that have been touched (written by a segment, kernel, receive or host write).
    pub fn allocated_tiles(&self) -> usize {
        self.touched.iter().filter(|&&t| t).count()
    }

    /// SRAM bytes of the touched tiles. Untouched tiles of a block share its address range
    /// but no written pages.
    pub fn allocated_bytes(&self) -> u64 {
        self.allocated_tiles() as u64 * self.sram_bytes as u64
    }

    pub fn is_allocated(&self, tile: u32) -> bool {
        self.touched.get(tile as usize).copied().unwrap_or(false)
    }

    /// Offsets into the tile buffer for an absolute range, or an error naming it.
    fn offsets(&self, tile: u32, address: u32, bytes: usize) -> Result<Range<usize>, SimError> {
        let start = (address as usize).wrapping_sub(self.sram_base as usize);
        let in_range = (tile as usize) < self.tiles
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
                tiles: self.tiles as u32,
            });
        }
        Ok(start..start + bytes)
    }

    fn block_tiles(&self, block: usize) -> usize {
        TILES_PER_BLOCK.min(self.tiles - block * TILES_PER_BLOCK)
    }

    /// Marks `tile` touched, creating its block if needed, and returns its memory.
    fn touch(&mut self, tile: usize) -> &mut [u8] {
        let block = tile / TILES_PER_BLOCK;
        let block_bytes = self.block_tiles(block) * self.sram_bytes;
        let offset = (tile % TILES_PER_BLOCK) * self.sram_bytes;
        let sram_bytes = self.sram_bytes;
        self.touched[tile] = true;
        let memory =
            self.blocks[block].get_or_insert_with(|| vec![0u8; block_bytes].into_boxed_slice());
        &mut memory[offset..offset + sram_bytes]
    }

    fn tile(&self, tile: usize) -> Option<&[u8]> {
        let offset = (tile % TILES_PER_BLOCK) * self.sram_bytes;
        self.blocks[tile / TILES_PER_BLOCK]
            .as_deref()
            .map(|block| &block[offset..offset + self.sram_bytes])
    }

    pub fn write(&mut self, tile: u32, address: u32, bytes: &[u8]) -> Result<(), SimError> {
        let range = self.offsets(tile, address, bytes.len())?;
        self.touch(tile as usize)[range].copy_from_slice(bytes);
        Ok(())
    }

    pub fn read_into(&self, tile: u32, address: u32, out: &mut [u8]) -> Result<(), SimError> {
        let range = self.offsets(tile, address, out.len())?;
        match self.tile(tile as usize) {
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
    /// each with its own `&mut [u8]`), touching the tiles first. `groups` must be sorted by
    /// tile without repeats. Results come back in group order, independent of thread count.
    pub fn par_for_groups<R, F>(&mut self, groups: &[TileGroup], work: F) -> Vec<R>
    where
        R: Send,
        F: Fn(u32, &mut [u8], Range<usize>) -> R + Sync,
    {
        for (tile, _) in groups {
            self.touch(*tile as usize);
        }
        let sram_bytes = self.sram_bytes;
        let mut tasks: Vec<(u32, &mut [u8], Range<usize>)> = Vec::with_capacity(groups.len());
        let mut pending = groups.iter().peekable();
        for (block_index, block) in self.blocks.iter_mut().enumerate() {
            let Some(block) = block.as_deref_mut() else {
                continue;
            };
            for (offset, memory) in block.chunks_mut(sram_bytes).enumerate() {
                let index = block_index * TILES_PER_BLOCK + offset;
                let Some((tile, rows)) = pending.peek() else {
                    break;
                };
                if *tile as usize != index {
                    continue;
                }
                tasks.push((*tile, memory, rows.clone()));
                pending.next();
            }
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
