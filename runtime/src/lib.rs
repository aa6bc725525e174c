//! The ipu-opt runtime: the `.ipuexe` application package and `.ipuprof` profile formats,
//! device sessions on the simulated C600 (with the device ownership lock), `.npy` tensors and
//! seeded inputs.
//!
//! Both file formats share one container ([`container`]): a versioned header, a sha256 over
//! the whole file, and length-prefixed sections that are validated before use, so a
//! truncated, corrupted or hostile file is a clear error, never a panic or a huge allocation.

pub mod compare;
pub mod config;
pub mod container;
pub mod inputs;
pub mod inspect;
pub mod lock;
pub mod npy;
pub mod output;
pub mod package;
pub mod profile;
pub mod query;
pub mod reference;
pub mod report;
pub mod session;
pub mod trace;

pub use config::{DeviceConfig, Register, RegisterWrite};
pub use lock::{DeviceLock, LockError};
pub use npy::{NpyDtype, NpyError, Sigma, Tensor};
pub use package::{Binding, BindingPiece, BindingRole, HostCall, Package, PackageError};
pub use profile::{ProfileError, ProfileFile};
pub use session::{run_package, Session, SessionError, SessionOptions, DEFAULT_DEVICE};

/// Lowercase hex sha256 of `bytes` (the content hash of kernel objects).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
