//! The results of a sweep: one JSON object per finished point in `results.jsonl` (appended
//! and flushed as each point finishes, so an interrupted sweep leaves every finished point
//! on record), the same points' scalar columns in `results.csv`, and resuming: a point whose
//! key is on record is not run again.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use serde::{Deserialize, Serialize};

use super::spec::Point;
use crate::cli::run_result::RunResult;

/// `ok`: the point compiled, ran and passed its numerical test; `failed` otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Failed,
}

/// One line of `results.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The point's key ([`Point::key`]): what resuming matches.
    pub key: String,
    pub id: String,
    /// The model's path as given, and the FNV-1a hash of its text.
    pub model: String,
    pub model_hash: String,
    pub params: Point,
    pub status: Status,
    /// Why the point failed: the compiler's or the run's error, the failed test, the crash.
    pub diagnostic: Option<String>,
    /// The `ipu run` process's exit code (`null`: killed by a signal or not started).
    pub exit_code: Option<i32>,
    /// Wall time of the whole point (compile, simulate, test), seconds.
    pub wall_seconds: f64,
    /// What the run measured (absent fields were not reached).
    #[serde(flatten)]
    pub result: RunResult,
    /// The selected plans, as `ipu run --dump-plans` writes them (`null` when the planner did
    /// not finish).
    pub plans: Option<serde_json::Value>,
}

/// The CSV's columns, in order.
pub const CSV_COLUMNS: [&str; 23] = [
    "id",
    "status",
    "tiles",
    "precision",
    "weight_memory",
    "beam_width",
    "candidates_per_op",
    "finalists",
    "constraints",
    "device_program_cycles",
    "simulated_cycles",
    "host_exchange_cycles",
    "refined_cycles",
    "final_cycles",
    "refined_error_percent",
    "peak_standard_bytes",
    "peak_interleaved_bytes",
    "peak_total_bytes",
    "compile_seconds",
    "wall_seconds",
    "numerical",
    "max_abs_error",
    "diagnostic",
];

fn cell<T: ToString>(value: Option<T>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

/// A CSV field, quoted when it holds a comma, quote or line break.
fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

impl Record {
    /// The record's CSV row, in [`CSV_COLUMNS`] order.
    pub fn csv_row(&self) -> String {
        let p = &self.params;
        let r = &self.result;
        let status = match self.status {
            Status::Ok => "ok",
            Status::Failed => "failed",
        };
        let fields = [
            self.id.clone(),
            status.to_string(),
            cell(p.tiles),
            cell(p.precision.as_ref()),
            cell(p.weight_memory.as_ref()),
            cell(p.beam_width),
            cell(p.candidates_per_op),
            cell(p.finalists),
            cell(p.constraints.as_ref().map(|c| &c.name)),
            cell(r.device_program_cycles),
            cell(r.simulated_cycles),
            cell(r.host_exchange_cycles),
            cell(r.refined_cycles),
            cell(r.final_cycles),
            cell(r.refined_error_percent.map(|v| format!("{v:.3}"))),
            cell(r.peak_standard_bytes),
            cell(r.peak_interleaved_bytes),
            cell(r.peak_total_bytes),
            cell(r.compile_seconds.map(|v| format!("{v:.3}"))),
            format!("{:.3}", self.wall_seconds),
            cell(r.numerical.as_ref()),
            cell(r.max_abs_error),
            cell(self.diagnostic.as_ref()),
        ];
        let fields: Vec<String> = fields.iter().map(|f| quote(f)).collect();
        fields.join(",")
    }
}

/// The records on file, by key, and the lines that did not read (a line cut short by an
/// interrupt, or not a record).
pub struct Loaded {
    pub records: BTreeMap<String, Record>,
    pub unreadable: Vec<usize>,
}

/// Reads `results.jsonl` (none yet: no records). A later record of a key replaces an earlier
/// one (a retried point).
pub fn load(path: &Path) -> anyhow::Result<Loaded> {
    let mut loaded = Loaded {
        records: BTreeMap::new(),
        unreadable: Vec::new(),
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(loaded),
        Err(e) => return Err(anyhow!(e).context(format!("reading '{}'", path.display()))),
    };
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(line) {
            Ok(record) => {
                loaded.records.insert(record.key.clone(), record);
            }
            Err(_) => loaded.unreadable.push(index + 1),
        }
    }
    Ok(loaded)
}

/// `results.jsonl` open for appending: each record is one write of one line, flushed.
pub struct Appender {
    file: File,
    path: PathBuf,
}

impl Appender {
    /// Opens (creates) the file; a last line cut short by an interrupt gets its line break,
    /// so the next record starts a line of its own.
    pub fn open(path: &Path) -> anyhow::Result<Appender> {
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(path)
            .with_context(|| format!("opening '{}'", path.display()))?;
        let length = file.metadata().map(|m| m.len()).unwrap_or(0);
        if length > 0 {
            let mut last = [0u8; 1];
            file.seek(SeekFrom::Start(length - 1))?;
            file.read_exact(&mut last)?;
            if last[0] != b'\n' {
                file.write_all(b"\n")?;
            }
        }
        Ok(Appender {
            file,
            path: path.to_path_buf(),
        })
    }

    pub fn append(&mut self, record: &Record) -> anyhow::Result<()> {
        let mut line = serde_json::to_string(record)?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .with_context(|| format!("appending to '{}'", self.path.display()))
    }
}

/// Writes `results.csv` with `records` (written whole, through a temporary file renamed over
/// the old one, so a reader never sees half a file).
pub fn write_csv<'r>(path: &Path, records: impl Iterator<Item = &'r Record>) -> anyhow::Result<()> {
    let mut text = CSV_COLUMNS.join(",");
    text.push('\n');
    for record in records {
        text.push_str(&record.csv_row());
        text.push('\n');
    }
    let temporary = path.with_extension("csv.tmp");
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, path))
        .with_context(|| format!("writing '{}'", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(tiles: u32, status: Status) -> Record {
        let params = Point {
            tiles: Some(tiles),
            ..Point::default()
        };
        Record {
            key: params.key(),
            id: params.id(),
            model: "m.mlir".into(),
            model_hash: "0".into(),
            params,
            status,
            diagnostic: (status == Status::Failed).then(|| "error: \"no\", plan".to_string()),
            exit_code: Some(0),
            wall_seconds: 1.5,
            result: RunResult {
                device_program_cycles: Some(1000 + u64::from(tiles)),
                ..RunResult::default()
            },
            plans: None,
        }
    }

    #[test]
    fn resume_reads_back_every_whole_line() {
        let dir = std::env::temp_dir().join(format!("ipu-sweep-results-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("results.jsonl");
        let _ = std::fs::remove_file(&path);
        assert!(load(&path).unwrap().records.is_empty());
        let mut appender = Appender::open(&path).unwrap();
        appender.append(&record(64, Status::Ok)).unwrap();
        appender.append(&record(128, Status::Failed)).unwrap();
        drop(appender);
        // An interrupt mid-write leaves a torn last line.
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"key\": \"half").unwrap();
        drop(file);
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.records.len(), 2);
        assert_eq!(loaded.unreadable, vec![3]);
        let ok = &loaded.records[&record(64, Status::Ok).key];
        assert_eq!(ok, &record(64, Status::Ok));
        // The next record starts a line of its own.
        let mut appender = Appender::open(&path).unwrap();
        appender.append(&record(32, Status::Ok)).unwrap();
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.records.len(), 3);
        assert_eq!(loaded.unreadable, vec![3]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn csv_rows_quote_and_leave_missing_values_empty() {
        let row = record(128, Status::Failed).csv_row();
        assert_eq!(
            row.split(',').next(),
            Some(record(128, Status::Failed).id.as_str())
        );
        assert!(row.contains(",failed,128,,,,,,,1128,"), "{row}");
        assert!(
            row.ends_with(",1.500,,,\"error: \"\"no\"\", plan\""),
            "{row}"
        );
        let header_fields = CSV_COLUMNS.len();
        let ok = record(64, Status::Ok).csv_row();
        assert_eq!(ok.split(',').count(), header_fields);
    }
}
