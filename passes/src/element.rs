//! The one correspondence between the dialect's types (`ElementType`, `#ipu.format` orders and
//! memory classes) and the device's (`Precision`, `ElementOrder`, `MemoryClass`). Each mapping
//! is total, so no value falls back to another.

use ipu_device::kernels::spec::ElementOrder;
use ipu_device::{MemoryClass, Precision};
use ipu_dialects::format::{Memory, Order};
use ipu_dialects::ElementType;

/// The device precision of an element type.
pub const fn precision(element: ElementType) -> Precision {
    match element {
        ElementType::F32 => Precision::F32,
        ElementType::F16 => Precision::F16,
        ElementType::F8E4M3FNUZ => Precision::F8E4M3,
        ElementType::F8E5M2FNUZ => Precision::F8E5M2,
    }
}

/// The element type of a device precision.
pub const fn element(precision: Precision) -> ElementType {
    match precision {
        Precision::F32 => ElementType::F32,
        Precision::F16 => ElementType::F16,
        Precision::F8E4M3 => ElementType::F8E4M3FNUZ,
        Precision::F8E5M2 => ElementType::F8E5M2FNUZ,
    }
}

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
        for element_type in ElementType::ALL {
            assert_eq!(element(precision(element_type)), element_type);
            assert_eq!(
                precision(element_type).mlir_name(),
                element_type.mlir_name()
            );
        }
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
