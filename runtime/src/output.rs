//! The one rule every tool that writes a file follows (`ipu-opt -o`, `ipu compile -o`,
//! `ipu-translate -o`, `ipu run`'s artifacts, `ipu profile report|trace -o`):
//!
//! * never one of the command's inputs (compared after resolving links and `.`/`..`), so a
//!   typo cannot destroy the model or profile being read;
//! * never *replace* something that is not a regular file: a character device (`/dev/null`),
//!   FIFO or socket is written in place, as a shell redirection would, instead of a temporary
//!   file being renamed over the node; a directory is refused;
//! * a regular file (or a new path) is written atomically: a temporary file beside it, synced,
//!   then renamed into place, so a failure never leaves a truncated output. A symbolic link is
//!   followed and its target replaced, not the link.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why an output could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("output '{output}' is the input '{input}'; refusing to overwrite it")]
    IsInput { output: String, input: String },
    #[error("output '{0}' is a directory")]
    IsDirectory(String),
    #[error("cannot {action} '{path}': {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> OutputError {
    let path = path.display().to_string();
    move |source| OutputError::Io {
        action,
        path,
        source,
    }
}

/// Refuses `output` when it names one of `inputs` (an input that does not exist yet cannot be
/// overwritten and is skipped).
pub fn check_not_input(output: &Path, inputs: &[&Path]) -> Result<(), OutputError> {
    let Ok(target) = std::fs::canonicalize(output) else {
        return Ok(());
    };
    for input in inputs {
        if std::fs::canonicalize(input).is_ok_and(|input| input == target) {
            return Err(OutputError::IsInput {
                output: output.display().to_string(),
                input: input.display().to_string(),
            });
        }
    }
    Ok(())
}

/// Writes `bytes` to `output` by the rule above; `inputs` are the command's input files.
pub fn write_output(output: &Path, inputs: &[&Path], bytes: &[u8]) -> Result<(), OutputError> {
    check_not_input(output, inputs)?;
    // Follow a link to what it names: the link stays, its target gets the bytes.
    let target: PathBuf = match std::fs::symlink_metadata(output) {
        Ok(metadata) if metadata.file_type().is_symlink() => {
            std::fs::canonicalize(output).unwrap_or_else(|_| output.to_path_buf())
        }
        _ => output.to_path_buf(),
    };
    match std::fs::metadata(&target) {
        Ok(metadata) if metadata.is_dir() => {
            return Err(OutputError::IsDirectory(output.display().to_string()))
        }
        Ok(metadata) if !metadata.is_file() => {
            // A device node, FIFO or socket: write into it, never replace it.
            return std::fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .and_then(|mut file| file.write_all(bytes).and_then(|()| file.flush()))
                .map_err(io("write", output));
        }
        _ => {}
    }
    write_atomic(&target, bytes)
}

fn write_atomic(target: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let directory = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = target
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let temporary = directory.join(format!(
        ".{file_name}.tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    // Errors name the output the user gave, not the temporary file.
    let result = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, target)
    })()
    .map_err(io("write", target));
    if result.is_err() {
        // Best effort: the temporary file is garbage either way.
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ipu-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_input_is_never_overwritten_by_any_spelling() {
        let dir = scratch("input");
        let input = dir.join("model.mlir");
        std::fs::write(&input, "module {}\n").unwrap();
        let spellings = [
            input.clone(),
            dir.join(".").join("model.mlir"),
            dir.join("sub").join("..").join("model.mlir"),
        ];
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for output in &spellings {
            let error = write_output(output, &[&input], b"package").unwrap_err();
            assert!(
                matches!(error, OutputError::IsInput { .. }),
                "{output:?}: {error}"
            );
        }
        // Through a link to the input, too.
        let link = dir.join("link.mlir");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        assert!(write_output(&link, &[&input], b"package").is_err());
        assert_eq!(std::fs::read(&input).unwrap(), b"module {}\n");
    }

    #[test]
    fn device_nodes_are_written_in_place_never_replaced() {
        let dir = scratch("device");
        // /dev/null stays a character device after a write through a link to it.
        let link = dir.join("null");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        write_output(&link, &[], b"bytes").unwrap();
        write_output(Path::new("/dev/null"), &[], b"bytes").unwrap();
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        // A full device reports the error instead of being replaced.
        if Path::new("/dev/full").exists() {
            assert!(write_output(Path::new("/dev/full"), &[], b"bytes").is_err());
            assert!(std::fs::metadata("/dev/full")
                .unwrap()
                .file_type()
                .is_char_device());
        }
    }

    #[test]
    fn regular_files_are_replaced_atomically_and_directories_refused() {
        let dir = scratch("regular");
        let output = dir.join("out.bin");
        std::fs::write(&output, b"old").unwrap();
        write_output(&output, &[], b"new").unwrap();
        assert_eq!(std::fs::read(&output).unwrap(), b"new");
        let leftovers = std::fs::read_dir(&dir)
            .unwrap()
            .filter(|entry| {
                entry
                    .as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().contains(".tmp-"))
            })
            .count();
        assert_eq!(leftovers, 0);
        assert!(matches!(
            write_output(&dir, &[], b"x"),
            Err(OutputError::IsDirectory(_))
        ));
        // A write into a missing directory fails and leaves nothing behind.
        assert!(write_output(&dir.join("missing").join("out"), &[], b"x").is_err());
    }
}
