//! The runtime's integration tests (one binary: one link, shared fixtures).

mod alloc_probe;
mod fixture;
mod formats;
mod inspect;
mod lock;
mod npy;
mod package;
mod profile;
mod reference;
mod session;
