//! Device ownership: two holders in threads and in processes, stale-lock recovery, timeouts.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use ipu_runtime::lock::{DeviceLock, LockError};

/// A fresh directory under Cargo's temporary directory for this test binary.
pub fn scratch(name: &str) -> PathBuf {
    // Fixed names (no pid), so repeated runs reuse rather than accumulate directories.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("runtime-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

#[test]
fn second_holder_waits_for_the_first() {
    let path = DeviceLock::path_in(&scratch("threads"));
    let first = DeviceLock::acquire(&path, None).expect("first acquires");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap().trim(),
        std::process::id().to_string()
    );
    let (acquired_tx, acquired_rx) = mpsc::channel();
    let waiter = {
        let path = path.clone();
        thread::spawn(move || {
            let lock = DeviceLock::acquire(&path, Some(Duration::from_secs(20))).expect("second");
            acquired_tx.send(Instant::now()).unwrap();
            drop(lock);
        })
    };
    // The second session must still be waiting while the first holds the device.
    assert!(acquired_rx
        .recv_timeout(Duration::from_millis(400))
        .is_err());
    let released = Instant::now();
    drop(first);
    let acquired = acquired_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("second acquires after release");
    assert!(acquired >= released);
    waiter.join().unwrap();
    // Released: the pid is cleared.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
}

#[test]
fn busy_device_times_out_naming_the_holder() {
    let path = DeviceLock::path_in(&scratch("timeout"));
    let _first = DeviceLock::acquire(&path, None).unwrap();
    let started = Instant::now();
    let error = DeviceLock::acquire(&path, Some(Duration::from_millis(150))).unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(150));
    match &error {
        LockError::Busy { holder, .. } => {
            assert_eq!(holder, &format!("pid {}", std::process::id()))
        }
        other => panic!("unexpected {other}"),
    }
    assert!(error.to_string().contains("still held by pid"), "{error}");
}

#[test]
fn lock_left_by_a_dead_process_is_recovered() {
    let path = DeviceLock::path_in(&scratch("stale"));
    // A pid that certainly belongs to no live process: a child that has exited and been
    // reaped.
    let mut child = Command::new("true").spawn().expect("spawn true");
    let dead = child.id();
    child.wait().unwrap();
    std::fs::write(&path, format!("{dead}\n")).unwrap();
    let started = Instant::now();
    let lock = DeviceLock::acquire(&path, Some(Duration::from_secs(5))).expect("recovered");
    // Recovered at once, not after waiting out the 5 s timeout (the margin absorbs a loaded
    // machine).
    assert!(started.elapsed() < Duration::from_secs(4));
    assert_eq!(
        std::fs::read_to_string(lock.path()).unwrap().trim(),
        std::process::id().to_string()
    );
}

/// Not a test on its own: the body of the child process in
/// [`lock_held_by_another_process`]. It holds the lock named by `IPU_LOCK_CHILD_PATH` until
/// it is killed.
#[test]
#[ignore]
fn lock_holder_child() {
    let Some(path) = std::env::var_os("IPU_LOCK_CHILD_PATH") else {
        return;
    };
    let _lock = DeviceLock::acquire(&PathBuf::from(path), None).expect("child acquires");
    println!("LOCKED");
    thread::sleep(Duration::from_secs(60));
}

#[test]
fn lock_held_by_another_process() {
    use std::io::{BufRead, BufReader};
    let path = DeviceLock::path_in(&scratch("process"));
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "lock::lock_holder_child",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("IPU_LOCK_CHILD_PATH", &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    assert!(
        lines.any(|l| l.is_ok_and(|l| l.contains("LOCKED"))),
        "child did not lock"
    );
    let error = DeviceLock::acquire(&path, Some(Duration::from_millis(100))).unwrap_err();
    assert!(
        error.to_string().contains(&format!("pid {}", child.id())),
        "{error}"
    );
    // Killing the holder (no cleanup runs) releases the device.
    child.kill().unwrap();
    child.wait().unwrap();
    let lock = DeviceLock::acquire(&path, Some(Duration::from_secs(5))).expect("after kill");
    drop(lock);
}
