//! F32, F16, F143 and F152 conversions with per-tensor power-of-two scales.
