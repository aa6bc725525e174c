//! Kernel cycle models: one function of a [`crate::KernelSpec`] and the target table.
