//! Errors of the kernel compiler, its cache and its loader.

use std::path::PathBuf;

/// Why a kernel could not be specialized, compiled, cached or loaded.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    #[error("kernel {kernel}: invalid specialization: {detail}")]
    InvalidSpec { kernel: String, detail: String },
    #[error("kernel source {file}: {detail}")]
    Source { file: String, detail: String },
    #[error("kernel {kernel}: MLIR rejected the specialized source: {diagnostics}")]
    Parse { kernel: String, diagnostics: String },
    #[error("kernel {kernel}: lowering pipeline failed: {diagnostics}")]
    Lowering { kernel: String, diagnostics: String },
    #[error("kernel {kernel}: LLVM: {detail}")]
    Llvm { kernel: String, detail: String },
    #[error("kernel {kernel}: linking {object} into a shared object failed ({status}): {stderr}")]
    Link {
        kernel: String,
        object: PathBuf,
        status: String,
        stderr: String,
    },
    #[error("kernel cache: {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("kernel cache: no cache directory: set IPU_KERNEL_CACHE, XDG_CACHE_HOME or HOME")]
    NoCacheDirectory,
    #[error("kernel {kernel}: loading {path}: {detail}")]
    Load {
        kernel: String,
        path: PathBuf,
        detail: String,
    },
    #[error(
        "kernel {kernel}: cache entry {path} stayed invalid after {attempts} rebuilds: {detail}"
    )]
    Unstable {
        kernel: String,
        path: PathBuf,
        attempts: u32,
        detail: String,
    },
}

impl KernelError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        KernelError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
