//! Tile memory map helpers: which region and which memory element an address is in.
//!
//! Memory elements matter because instruction fetch, exchange send-read and exchange
//! receive-write contend per element [HW-C600]. In region 0 (standard) an element is one
//! 16 KiB bank. Region 1 is interleaved with factor 2: consecutive 128-bit words alternate
//! between two banks, so any access touches the pair, and the contention unit is the 32 KiB
//! pair [HW-C600]. [`MemoryElement`] therefore describes the *contention unit* containing an
//! address: two accesses conflict exactly when their `index` is equal.

use serde::{Deserialize, Serialize};

use super::{Target, TargetError};
use crate::precision::MemoryClass;

/// The memory element (contention unit) containing an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MemoryElement {
    /// 0-based from the SRAM base: standard elements first, then interleaved element pairs.
    pub index: u32,
    /// First address of the element.
    pub start: u32,
    /// Size in bytes: `element_bytes` in standard memory, `element_bytes * interleave_factor`
    /// in interleaved memory.
    pub bytes: u32,
    pub class: MemoryClass,
}

impl Target {
    /// One past the last SRAM address.
    pub fn sram_end(&self) -> u32 {
        self.memory.sram_base.value + self.memory.sram_bytes.value
    }

    fn check_address(&self, address: u32) -> Result<(), TargetError> {
        let start = self.memory.sram_base.value;
        let end = self.sram_end();
        if address < start || address >= end {
            return Err(TargetError::AddressOutOfRange {
                address,
                start,
                end,
                target: self.name.clone(),
            });
        }
        Ok(())
    }

    /// The region of `address`: standard (region 0, executable) or interleaved (region 1).
    pub fn region_of(&self, address: u32) -> Result<MemoryClass, TargetError> {
        self.check_address(address)?;
        let interleaved = &self.memory;
        if address >= interleaved.interleaved_start.value
            && address < interleaved.interleaved_end.value
        {
            Ok(MemoryClass::Interleaved)
        } else {
            Ok(MemoryClass::Standard)
        }
    }

    /// Whether `address` is in interleaved memory; false for addresses outside SRAM.
    pub fn is_interleaved(&self, address: u32) -> bool {
        matches!(self.region_of(address), Ok(MemoryClass::Interleaved))
    }

    /// The memory element (contention unit) containing `address`.
    pub fn element_of(&self, address: u32) -> Result<MemoryElement, TargetError> {
        let class = self.region_of(address)?;
        let memory = &self.memory;
        let base = memory.sram_base.value;
        let element = memory.element_bytes.value;
        match class {
            MemoryClass::Standard => {
                let index = (address - base) / element;
                Ok(MemoryElement {
                    index,
                    start: base + index * element,
                    bytes: element,
                    class,
                })
            }
            MemoryClass::Interleaved => {
                let start = memory.interleaved_start.value;
                let pair = element * memory.interleave_factor.value;
                let standard_elements = (start - base) / element;
                let offset = (address - start) / pair;
                Ok(MemoryElement {
                    index: standard_elements + offset,
                    start: start + offset * pair,
                    bytes: pair,
                    class,
                })
            }
        }
    }

    /// Number of contention units in tile SRAM (13 standard + 13 interleaved pairs on IPU21).
    pub fn element_count(&self) -> u32 {
        let memory = &self.memory;
        let element = memory.element_bytes.value;
        let standard = (memory.interleaved_start.value - memory.sram_base.value).div_ceil(element);
        let pair = element * memory.interleave_factor.value;
        let interleaved =
            (memory.interleaved_end.value - memory.interleaved_start.value).div_ceil(pair);
        standard + interleaved
    }

    /// Whether the loader can populate `bytes` bytes at `address` (inside SRAM and below the
    /// loadable limit: the last 0x450 bytes of IPU21 SRAM cannot be loaded [HW-C600]).
    pub fn is_loadable(&self, address: u32, bytes: u32) -> bool {
        let end = u64::from(address) + u64::from(bytes);
        address >= self.memory.sram_base.value && end <= u64::from(self.memory.loadable_limit.value)
    }

    /// Bytes per tile left for planned data after runtime and support reservations
    /// (standard + interleaved budgets: 162,080 + 424,880 = 586,960 B on the C600 [HW-C600]).
    pub fn planned_budget_bytes(&self) -> u32 {
        self.memory.standard_budget.value + self.memory.interleaved_budget.value
    }

    /// The planned-data budget of one memory class.
    pub fn budget_bytes(&self, class: MemoryClass) -> u32 {
        match class {
            MemoryClass::Standard => self.memory.standard_budget.value,
            MemoryClass::Interleaved => self.memory.interleaved_budget.value,
        }
    }
}
