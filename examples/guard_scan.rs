//! Runs the Context Guard (default settings) over every text file of a
//! directory and reports, per file, what it would block or redact: the file,
//! the rule ids and lines, never the matched text. Used to measure false
//! positives and the guard's cost on real repositories (`docs/guard.md`).
//!
//! ```text
//! cargo run --release --example guard_scan -- <directory> [--injection-warnings]
//! ```
//!
//! With `--injection-warnings` it also lists the files kept with a
//! prompt-injection warning (a finding excused by its context), to review
//! what the injection rules see in real text.
//!
//! Files over 1 MiB, files with a NUL byte and the `.git`, `node_modules` and
//! `target` directories are skipped, as the compile's walk does.

#![expect(
    clippy::print_stdout,
    reason = "a measuring tool that prints its report"
)]

use std::path::Path;
use std::time::Instant;

use aic_stages::config::AicConfig;
use aic_stages::guard::{ContextGuard, GuardFinding, GuardFindingType, GuardSeverity};
use aic_stages::language::Language;
use aic_stages::relative_path::RelativePath;

/// The largest file scanned, in bytes.
const MAX_FILE: u64 = 1024 * 1024;

fn main() -> anyhow::Result<()> {
    let root = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: guard_scan <directory> [--injection-warnings]"))?;
    let injection_warnings = std::env::args().nth(2).as_deref() == Some("--injection-warnings");
    let root = Path::new(&root);
    let mut files = Vec::new();
    collect(root, root, &mut files)?;
    files.sort();
    let guard = ContextGuard::new(&AicConfig::default().guard)?;
    let (mut scanned, mut bytes, mut by_path, mut by_content, mut redacted) = (0, 0, 0, 0, 0);
    let started = Instant::now();
    let mut seconds = 0.0;
    for (relative, path) in &files {
        let data = fs_err::read(path)?;
        if memchr::memchr(0, &data).is_some() {
            continue;
        }
        let text = String::from_utf8_lossy(&data);
        let Some(relative) = RelativePath::new(relative) else {
            continue;
        };
        scanned += 1;
        bytes += data.len();
        let start = Instant::now();
        let outcome = guard.scan_file(&relative, Language::detect(&relative), &text);
        seconds += start.elapsed().as_secs_f64();
        let secrets = labels(&outcome.findings, GuardFindingType::Secret);
        if injection_warnings && !outcome.blocked {
            let warned = labels(&outcome.findings, GuardFindingType::PromptInjection);
            if !warned.is_empty() {
                println!("warned   {relative} {}", warned.join(" "));
            }
        }
        let path_rule = outcome
            .findings
            .iter()
            .find(|f| f.finding_type == GuardFindingType::ExcludedFile);
        if let Some(finding) = path_rule {
            by_path += 1;
            println!(
                "path     {relative} {}",
                finding.pattern.as_deref().unwrap_or("?")
            );
        } else if outcome.blocked {
            by_content += 1;
            let ids: Vec<String> = outcome
                .findings
                .iter()
                .filter(|f| f.severity == GuardSeverity::Block)
                .map(|f| {
                    format!(
                        "{}@{}",
                        f.pattern.as_deref().unwrap_or("?"),
                        f.line.unwrap_or(0)
                    )
                })
                .collect();
            println!("blocked  {relative} {}", ids.join(" "));
        } else if outcome.secrets_redacted {
            redacted += 1;
            println!("redacted {relative} {}", secrets.join(" "));
        }
    }
    println!(
        "files {scanned}, {:.1} MB; blocked by path {by_path}, by content {by_content}; redacted {redacted}; guard {seconds:.2} s ({:.1} MB/s); total {:.2} s",
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 / seconds.max(1e-9),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn collect(
    root: &Path,
    dir: &Path,
    files: &mut Vec<(String, std::path::PathBuf)>,
) -> anyhow::Result<()> {
    for entry in fs_err::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        let name = entry.file_name();
        if kind.is_dir() {
            if !matches!(name.to_str(), Some(".git" | "node_modules" | "target")) {
                collect(root, &path, files)?;
            }
        } else if kind.is_file() && entry.metadata()?.len() <= MAX_FILE {
            let relative = path
                .strip_prefix(root)?
                .to_string_lossy()
                .replace('\\', "/");
            files.push((relative, path));
        }
    }
    Ok(())
}

/// `pattern@line` of each finding of `kind`.
fn labels(findings: &[GuardFinding], kind: GuardFindingType) -> Vec<String> {
    findings
        .iter()
        .filter(|f| f.finding_type == kind)
        .map(|f| {
            format!(
                "{}@{}",
                f.pattern.as_deref().unwrap_or("?"),
                f.line.unwrap_or(0)
            )
        })
        .collect()
}
