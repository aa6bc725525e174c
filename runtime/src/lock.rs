//! Device ownership: one session at a time per device, through `<dir>/device.lock`.
//!
//! The lock is `flock(2)` on the file, not the file's existence: the kernel releases a flock
//! when the last descriptor of its holder closes, including when the holder is killed, so a
//! lock left by a dead process can never block a device (no pid-liveness guessing, no
//! "remove the stale file" races). The file holds the holder's pid for messages: a waiting
//! session says who it waits for, and a file whose recorded pid is dead is reported as a
//! recovered stale lock.
//!
//! The file is never deleted: deleting a locked file lets one process lock the old inode
//! while another creates and locks a new one, and both would own the device.
//!
//! flock is per open file description, so two sessions in one process (threads) exclude
//! each other as two processes do. Rust opens files close-on-exec, so a process the session
//! spawns (the kernel compiler's linker) does not inherit the lock and cannot keep the device
//! owned after the session ends.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{flock, FlockOperation};
use tracing::{info, warn};

/// File name of the lock inside a device's directory.
pub const LOCK_FILE: &str = "device.lock";

/// Why ownership could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("hardware ownership: {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("hardware ownership: {path} is still held by {holder} after waiting {waited_ms} ms")]
    Busy {
        path: String,
        holder: String,
        waited_ms: u128,
    },
}

/// Ownership of one device; released on drop.
#[derive(Debug)]
pub struct DeviceLock {
    file: File,
    path: PathBuf,
}

fn io_error<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> LockError + 'a {
    move |source| LockError::Io {
        action,
        path: path.display().to_string(),
        source,
    }
}

/// The pid recorded in the lock file, if it holds one.
fn recorded_pid(file: &mut File) -> Option<i32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    // The file is ours and tiny; a hostile huge file is read only up to 32 bytes.
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

fn is_alive(pid: i32) -> bool {
    match rustix::process::Pid::from_raw(pid) {
        // Signal 0 checks existence; EPERM means it exists under another user.
        Some(pid) => !matches!(
            rustix::process::test_kill_process(pid),
            Err(rustix::io::Errno::SRCH)
        ),
        None => false,
    }
}

fn try_lock(file: &File) -> Result<bool, std::io::Error> {
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

impl DeviceLock {
    /// The lock file of the device whose directory is `dir`.
    pub fn path_in(dir: &Path) -> PathBuf {
        dir.join(LOCK_FILE)
    }

    /// Takes ownership through the lock file at `path`, waiting while another session holds
    /// it (forever with `timeout` `None`).
    pub fn acquire(path: &Path, timeout: Option<Duration>) -> Result<DeviceLock, LockError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io_error("creating directory of", path))?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io_error("opening", path))?;
        info!(path = %path.display(), "waiting for hardware ownership");
        let started = Instant::now();
        let mut pause = Duration::from_millis(5);
        let mut announced = false;
        while !try_lock(&file).map_err(io_error("locking", path))? {
            let holder = recorded_pid(&mut file)
                .map_or_else(|| "another session".to_string(), |pid| format!("pid {pid}"));
            if !announced {
                info!(path = %path.display(), holder = %holder, "hardware ownership is held by another session");
                announced = true;
            }
            if let Some(limit) = timeout {
                if started.elapsed() >= limit {
                    return Err(LockError::Busy {
                        path: path.display().to_string(),
                        holder,
                        waited_ms: started.elapsed().as_millis(),
                    });
                }
            }
            std::thread::sleep(pause);
            // Polling rather than a blocking flock keeps the timeout exact without signals;
            // 200 ms bounds the extra latency after the holder releases.
            pause = (pause * 2).min(Duration::from_millis(200));
        }
        let own = std::process::id() as i32;
        if let Some(previous) = recorded_pid(&mut file) {
            if previous != own && !is_alive(previous) {
                warn!(path = %path.display(), stale_pid = previous, "recovered hardware ownership left by a process that no longer exists");
            }
        }
        file.set_len(0).map_err(io_error("truncating", path))?;
        file.seek(SeekFrom::Start(0))
            .map_err(io_error("seeking", path))?;
        writeln!(file, "{own}").map_err(io_error("writing", path))?;
        info!(path = %path.display(), "acquired hardware ownership");
        Ok(DeviceLock {
            file,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DeviceLock {
    fn drop(&mut self) {
        // Clear our pid first so nobody reports a released lock as held by us; the flock
        // itself goes with the descriptor. Failures here cannot be reported and do not
        // matter: the kernel releases the lock when the file closes.
        let _ = self.file.set_len(0);
        let _ = flock(&self.file, FlockOperation::Unlock);
        info!(path = %self.path.display(), "released hardware ownership");
    }
}
