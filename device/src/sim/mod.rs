//! The BSP simulator of a whole IPU.
