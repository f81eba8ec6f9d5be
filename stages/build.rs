//! Fingerprints the sources of the per-file stages (`src/`, `queries/`, `rules/`) into
//! `AIC_STAGES_SOURCE_HASH`, so that cached facts computed by any other build
//! of the stages are never reused: a changed stage is a changed fingerprint.
//!
//! The hash is FNV-1a (64-bit, two lanes) over the sorted relative paths and
//! bytes of the files, with `\r\n` read as `\n` so a Windows checkout of the same
//! sources gives the same fingerprint.

use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut files = Vec::new();
    for directory in ["src", "queries", "rules"] {
        collect(&manifest.join(directory), &mut files);
        println!("cargo:rerun-if-changed={directory}");
    }
    files.sort();
    let mut lanes = [0xcbf2_9ce4_8422_2325_u64, 0x6c62_272e_07bb_0142_u64];
    let mut feed = |bytes: &[u8]| {
        for (i, lane) in lanes.iter_mut().enumerate() {
            for &byte in bytes {
                *lane ^= u64::from(byte) ^ (i as u64);
                *lane = lane.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    };
    for file in &files {
        let relative = file.strip_prefix(&manifest).unwrap_or(file);
        feed(relative.to_string_lossy().replace('\\', "/").as_bytes());
        feed(&[0]);
        #[allow(clippy::disallowed_methods, reason = "build scripts use std")]
        let bytes = std::fs::read(file).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes).replace("\r\n", "\n");
        feed(text.as_bytes());
        feed(&[0]);
    }
    feed(
        std::env::var("CARGO_PKG_VERSION")
            .unwrap_or_default()
            .as_bytes(),
    );
    println!(
        "cargo:rustc-env=AIC_STAGES_SOURCE_HASH={:016x}{:016x}",
        lanes[0], lanes[1]
    );
    println!("cargo:rerun-if-changed=build.rs");
}

fn collect(directory: &Path, files: &mut Vec<PathBuf>) {
    #[allow(clippy::disallowed_methods, reason = "build scripts use std")]
    let Ok(entries) = std::fs::read_dir(directory) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}
