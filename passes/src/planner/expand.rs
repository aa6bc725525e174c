//! A finalist expanded to per-tile work (filled in below).
