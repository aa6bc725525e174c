//! The one correspondence between the dialect's `#ipu.format` orders and memory classes and
//! the device's (`ElementOrder`, `MemoryClass`). Each mapping is total, so no value falls back
//! to another. (Element types need none: the device's `Precision` is the dialect's
//! `ElementType`.)

use ipu_device::kernels::spec::ElementOrder;
use ipu_device::MemoryClass;
use ipu_dialects::format::{Memory, Order};

/// The `#ipu.format` order of a device element order.
pub const fn order(order: ElementOrder) -> Order {
    match order {
        ElementOrder::RowMajor => Order::RowMajor,
        ElementOrder::AmpLeft => Order::AmpLeft,
        ElementOrder::AmpRight => Order::AmpRight,
        ElementOrder::AmpOutput => Order::AmpOutput,
    }
}

/// The `#ipu.format` memory class of a device memory class.
pub const fn memory(class: MemoryClass) -> Memory {
    match class {
        MemoryClass::Standard => Memory::Standard,
        MemoryClass::Interleaved => Memory::Interleaved,
    }
}

/// The device memory class of a `#ipu.format` memory class.
pub const fn memory_class(memory: Memory) -> MemoryClass {
    match memory {
        Memory::Standard => MemoryClass::Standard,
        Memory::Interleaved => MemoryClass::Interleaved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mappings_are_inverse_and_keep_names() {
        for class in [MemoryClass::Standard, MemoryClass::Interleaved] {
            assert_eq!(memory_class(memory(class)), class);
            assert_eq!(memory(class).name(), class.name());
        }
        for device_order in [
            ElementOrder::RowMajor,
            ElementOrder::AmpLeft,
            ElementOrder::AmpRight,
            ElementOrder::AmpOutput,
        ] {
            assert_eq!(order(device_order).name(), device_order.name());
        }
    }
}
