//! Content-addressed cache of compiled kernels.
//!
//! Layout: `<root>/<sha256>/kernel.o` (the object inkwell emitted), `kernel.so` (the same
//! object linked with the system `cc -shared`, which the loader opens) and `kernel.json`
//! ([`KernelMetadata`], with the sha256 of both binaries). Root: `$IPU_KERNEL_CACHE`, else
//! `$XDG_CACHE_HOME/ipu-opt/kernels`, else `~/.cache/ipu-opt/kernels`.
//!
//! The key is sha256 over the expanded source (the kernel file, everything it includes and the
//! generated entry points), the constant parameters, the pipelines, the compiler version and
//! revision, the LLVM version and the host target (triple, CPU, features).
//!
//! Entries are built in a private temporary directory and renamed into place, so a reader sees
//! a whole entry or none. Concurrent builders of one key (threads or processes) each build;
//! the first rename wins and the others discard their copy and use the winner's. An entry that
//! fails validation (missing file, bad json, other key, hash mismatch) is moved aside and
//! rebuilt.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tracing::{debug, info, warn};

use super::compile::{compile_object, host_target, COMPILER_REVISION, LLVM_PIPELINE, PIPELINE};
use super::error::KernelError;
use super::source::{module_text, source_path};
use super::spec::KernelSpec;

/// Version of the entry layout and of [`KernelMetadata`].
pub const CACHE_FORMAT: u32 = 1;
pub const OBJECT_FILE: &str = "kernel.o";
pub const LIBRARY_FILE: &str = "kernel.so";
pub const METADATA_FILE: &str = "kernel.json";
/// How often one call rebuilds an entry that keeps failing validation before giving up.
const MAX_BUILD_ATTEMPTS: u32 = 3;

/// `kernel.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelMetadata {
    pub format: u32,
    pub key: String,
    pub name: String,
    pub source: String,
    pub spec: KernelSpec,
    /// Symbols the loader calls (`_mlir_ciface_<entry>`), in the spec's entry order.
    pub entries: Vec<String>,
    pub object_sha256: String,
    pub library_sha256: String,
    pub compiler: String,
    pub llvm: String,
    pub triple: String,
    pub cpu: String,
    pub compile_ms: f64,
}

/// A validated cache entry.
#[derive(Debug, Clone)]
pub struct CachedKernel {
    pub dir: PathBuf,
    pub object: PathBuf,
    pub library: PathBuf,
    pub metadata: KernelMetadata,
    /// True when this call compiled it (a miss), false on a hit.
    pub built: bool,
}

/// The on-disk kernel cache.
#[derive(Debug, Clone)]
pub struct KernelCache {
    root: PathBuf,
}

enum Invalid {
    Missing,
    Damaged(String),
}

impl KernelCache {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        KernelCache { root: root.into() }
    }

    /// The cache at its default location (see the module documentation).
    pub fn from_env() -> Result<Self, KernelError> {
        Ok(Self::new(Self::default_root()?))
    }

    pub fn default_root() -> Result<PathBuf, KernelError> {
        let non_empty = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        if let Some(root) = non_empty("IPU_KERNEL_CACHE") {
            return Ok(root);
        }
        if let Some(xdg) = non_empty("XDG_CACHE_HOME") {
            return Ok(xdg.join("ipu-opt").join("kernels"));
        }
        non_empty("HOME")
            .map(|home| home.join(".cache").join("ipu-opt").join("kernels"))
            .ok_or(KernelError::NoCacheDirectory)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The content key of `spec` (hex sha256). Cheap: no MLIR, no LLVM.
    pub fn key(&self, spec: &KernelSpec) -> Result<String, KernelError> {
        spec.validate()?;
        let target = host_target()?;
        let mut hasher = Sha256::new();
        let mut field = |name: &str, value: &str| {
            hasher.update(name.as_bytes());
            hasher.update((value.len() as u64).to_le_bytes());
            hasher.update(value.as_bytes());
        };
        field("format", &CACHE_FORMAT.to_string());
        field("compiler", &compiler_version());
        field("llvm", &target.llvm_version);
        field("triple", &target.triple);
        field("cpu", &target.cpu);
        field("features", &target.features);
        field("mlir-pipeline", PIPELINE);
        field("llvm-pipeline", LLVM_PIPELINE);
        field("name", &spec.name());
        field("source-file", spec.source_file());
        field("source", &module_text(spec)?);
        for (name, value) in spec.params() {
            field(name, &value.to_string());
        }
        Ok(hex(&hasher.finalize()))
    }

    /// Directory of the entry with `key`.
    pub fn entry_dir(&self, key: &str) -> PathBuf {
        self.root.join(key)
    }

    /// Returns the valid entry for `spec`, compiling (and replacing a damaged entry) if needed.
    pub fn ensure(&self, spec: &KernelSpec) -> Result<CachedKernel, KernelError> {
        let key = self.key(spec)?;
        let dir = self.entry_dir(&key);
        let mut built = false;
        let mut last_problem = String::new();
        for _ in 0..=MAX_BUILD_ATTEMPTS {
            match self.validate(&dir, &key) {
                Ok(metadata) => {
                    if !built {
                        debug!(name = %metadata.name, object = %dir.join(OBJECT_FILE).display(), "kernel cache hit");
                    }
                    return Ok(CachedKernel {
                        object: dir.join(OBJECT_FILE),
                        library: dir.join(LIBRARY_FILE),
                        dir,
                        metadata,
                        built,
                    });
                }
                Err(Invalid::Missing) => {}
                Err(Invalid::Damaged(problem)) => {
                    warn!(name = %spec.name(), entry = %dir.display(), problem = %problem, "damaged kernel cache entry, rebuilding");
                    self.discard(&dir)?;
                    last_problem = problem;
                }
            }
            self.build(spec, &key, &dir)?;
            built = true;
        }
        Err(KernelError::Unstable {
            kernel: spec.name(),
            path: dir,
            attempts: MAX_BUILD_ATTEMPTS,
            detail: last_problem,
        })
    }

    fn validate(&self, dir: &Path, key: &str) -> Result<KernelMetadata, Invalid> {
        let json_path = dir.join(METADATA_FILE);
        let json = match fs::read(&json_path) {
            Ok(json) => json,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !dir.exists() => {
                return Err(Invalid::Missing)
            }
            Err(e) => return Err(Invalid::Damaged(format!("{}: {e}", json_path.display()))),
        };
        let metadata: KernelMetadata = serde_json::from_slice(&json).map_err(|e| {
            Invalid::Damaged(format!("{} does not parse: {e}", json_path.display()))
        })?;
        if metadata.format != CACHE_FORMAT || metadata.key != key {
            return Err(Invalid::Damaged(format!(
                "{} records format {} key {}, expected format {CACHE_FORMAT} key {key}",
                json_path.display(),
                metadata.format,
                metadata.key
            )));
        }
        for (file, expected) in [
            (OBJECT_FILE, &metadata.object_sha256),
            (LIBRARY_FILE, &metadata.library_sha256),
        ] {
            let path = dir.join(file);
            let bytes = fs::read(&path)
                .map_err(|e| Invalid::Damaged(format!("{}: {e}", path.display())))?;
            let actual = sha256_hex(&bytes);
            if &actual != expected {
                return Err(Invalid::Damaged(format!(
                    "{} ({} bytes) has sha256 {actual}, kernel.json records {expected}",
                    path.display(),
                    bytes.len()
                )));
            }
        }
        Ok(metadata)
    }

    /// Moves a damaged entry out of the way (atomically), then deletes it.
    fn discard(&self, dir: &Path) -> Result<(), KernelError> {
        let trash = self.root.join(format!(".trash-{}", unique_suffix()));
        match fs::rename(dir, &trash) {
            Ok(()) => {
                // Best effort: a leftover trash directory is harmless.
                let _ = fs::remove_dir_all(&trash);
                Ok(())
            }
            // Another builder already moved it.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(KernelError::io("moving aside damaged entry", dir, e)),
        }
    }

    /// Links `object`, a kernel object shipped in an application package and built under
    /// `key`, into the cache as the entry of `spec`, so loading the package compiles nothing.
    ///
    /// An object is native code for the host that built it: it is installed only when `key`
    /// is the key this host computes for `spec` (same source, parameters, compiler, LLVM and
    /// host target); otherwise `Ok(None)` and the kernel is compiled from its spec as usual.
    /// A valid entry already present wins; a damaged one is replaced. The entry is built and
    /// renamed into place exactly like a compiled one, so readers see all of it or none.
    pub fn install(
        &self,
        spec: &KernelSpec,
        object: &[u8],
        key: &str,
    ) -> Result<Option<CachedKernel>, KernelError> {
        let expected = self.key(spec)?;
        if key != expected {
            debug!(name = %spec.name(), packaged_key = %key, host_key = %expected, "packaged kernel object was built for another host or compiler; compiling from the spec");
            return Ok(None);
        }
        let dir = self.entry_dir(key);
        match self.validate(&dir, key) {
            Ok(metadata) => {
                return Ok(Some(CachedKernel {
                    object: dir.join(OBJECT_FILE),
                    library: dir.join(LIBRARY_FILE),
                    dir,
                    metadata,
                    built: false,
                }))
            }
            Err(Invalid::Missing) => {}
            Err(Invalid::Damaged(problem)) => {
                warn!(name = %spec.name(), entry = %dir.display(), problem = %problem, "damaged kernel cache entry, replacing it with the packaged object");
                self.discard(&dir)?;
            }
        }
        let source = source_path(spec.source_file());
        info!(name = ?spec.name(), bytes = object.len(), "installing packaged kernel object");
        self.write_entry(spec, key, &dir, object, &source, Instant::now())?;
        match self.validate(&dir, key) {
            Ok(metadata) => Ok(Some(CachedKernel {
                object: dir.join(OBJECT_FILE),
                library: dir.join(LIBRARY_FILE),
                dir,
                metadata,
                built: true,
            })),
            Err(Invalid::Missing) => Err(KernelError::io(
                "installing packaged kernel object into",
                &dir,
                std::io::Error::from(std::io::ErrorKind::NotFound),
            )),
            Err(Invalid::Damaged(problem)) => Err(KernelError::Unstable {
                kernel: spec.name(),
                path: dir,
                attempts: 1,
                detail: problem,
            }),
        }
    }

    fn build(&self, spec: &KernelSpec, key: &str, dir: &Path) -> Result<(), KernelError> {
        let name = spec.name();
        let source = source_path(spec.source_file());
        info!(source = %source, name = ?name, target = %"ipu21", "compiling kernel");
        let started = Instant::now();
        let object = compile_object(spec)?;
        self.write_entry(spec, key, dir, &object, &source, started)
    }

    /// Writes `object`, its linked library and metadata into a private directory and renames
    /// it to `dir`; losing the rename to a concurrent writer of the same key is success.
    fn write_entry(
        &self,
        spec: &KernelSpec,
        key: &str,
        dir: &Path,
        object: &[u8],
        source: &str,
        started: Instant,
    ) -> Result<(), KernelError> {
        let name = spec.name();
        fs::create_dir_all(&self.root)
            .map_err(|e| KernelError::io("creating cache root", &self.root, e))?;
        let tmp = self
            .root
            .join(format!(".tmp-{}-{}", &key[..16], unique_suffix()));
        fs::create_dir(&tmp).map_err(|e| KernelError::io("creating", &tmp, e))?;
        let result = (|| {
            let object_path = tmp.join(OBJECT_FILE);
            fs::write(&object_path, object)
                .map_err(|e| KernelError::io("writing", &object_path, e))?;
            let library_path = tmp.join(LIBRARY_FILE);
            link_shared(&name, &object_path, &library_path)?;
            let library = fs::read(&library_path)
                .map_err(|e| KernelError::io("reading", &library_path, e))?;
            let target = host_target()?;
            let metadata = KernelMetadata {
                format: CACHE_FORMAT,
                key: key.to_string(),
                name: name.clone(),
                source: source.to_string(),
                spec: spec.clone(),
                entries: spec
                    .entries()
                    .into_iter()
                    .map(|(symbol, _)| symbol)
                    .collect(),
                object_sha256: sha256_hex(object),
                library_sha256: sha256_hex(&library),
                compiler: compiler_version(),
                llvm: target.llvm_version.clone(),
                triple: target.triple.clone(),
                cpu: target.cpu.clone(),
                compile_ms: started.elapsed().as_secs_f64() * 1e3,
            };
            let json_path = tmp.join(METADATA_FILE);
            let json = serde_json::to_vec_pretty(&metadata).map_err(|e| KernelError::Load {
                kernel: name.clone(),
                path: json_path.clone(),
                detail: e.to_string(),
            })?;
            fs::write(&json_path, json).map_err(|e| KernelError::io("writing", &json_path, e))
        })();
        if let Err(e) = result {
            let _ = fs::remove_dir_all(&tmp);
            return Err(e);
        }
        match fs::rename(&tmp, dir) {
            Ok(()) => {
                info!(
                    object = %dir.join(OBJECT_FILE).display(),
                    metadata = %dir.join(METADATA_FILE).display(),
                    "kernel artifact created"
                );
                Ok(())
            }
            Err(e) => {
                let _ = fs::remove_dir_all(&tmp);
                if dir.exists() {
                    // Another builder won the race; the caller validates its entry.
                    debug!(name = %name, entry = %dir.display(), "kernel built concurrently elsewhere, using that entry");
                    Ok(())
                } else {
                    Err(KernelError::io("renaming new entry into", dir, e))
                }
            }
        }
    }
}

/// Links the object into a shared library the loader can open (libm for erff/tanhf/expf).
fn link_shared(kernel: &str, object: &Path, library: &Path) -> Result<(), KernelError> {
    let output = Command::new("cc")
        .arg("-shared")
        .arg("-o")
        .arg(library)
        .arg(object)
        .arg("-lm")
        .output()
        .map_err(|e| KernelError::Link {
            kernel: kernel.to_string(),
            object: object.to_path_buf(),
            status: "not started".into(),
            stderr: e.to_string(),
        })?;
    if !output.status.success() {
        return Err(KernelError::Link {
            kernel: kernel.to_string(),
            object: object.to_path_buf(),
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Ok(())
}

/// The compiler identity in the key and metadata.
pub fn compiler_version() -> String {
    format!(
        "ipu-device {} kernel-compiler r{COMPILER_REVISION}",
        env!("CARGO_PKG_VERSION")
    )
}

fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
