//! The ipu-opt runtime: packages, profiles, device sessions, host reference and reports.
