//! Runs the intent redaction ([`redact_secrets`]) over real task texts and
//! reports which ones it changed and by which rules: the text's id, the rule
//! ids and the words before each placeholder, never the redacted value. Used
//! to measure false positives of the rules for pasted text
//! (`docs/guard.md`, "The intent").
//!
//! ```text
//! cargo run --release --example intent_redaction -- <file>...
//! ```
//!
//! A `.jsonl` file holds one task a line; its `intent` and `intent_long`
//! fields are redacted (the benchmark's `tasks-*.jsonl`). Any other file
//! holds texts separated by NUL bytes (`git log -z --format=%B`).

#![expect(
    clippy::print_stdout,
    reason = "a measuring tool that prints its report"
)]

use std::collections::BTreeMap;

use aic_stages::guard::redact_secrets;

/// How many characters before a placeholder the report shows.
const CONTEXT: usize = 40;

fn main() -> anyhow::Result<()> {
    let files: Vec<String> = std::env::args().skip(1).collect();
    anyhow::ensure!(
        !files.is_empty(),
        "usage: intent_redaction <file.jsonl | NUL-separated texts>..."
    );
    let mut texts = 0_usize;
    let mut redacted = 0_usize;
    let mut by_rule: BTreeMap<String, usize> = BTreeMap::new();
    for file in &files {
        let content = fs_err::read_to_string(file)?;
        for (id, text) in texts_of(file, &content)? {
            texts += 1;
            let Some(output) = redact_secrets(&text) else {
                continue;
            };
            redacted += 1;
            println!("{file}: {id}");
            let mut rest = output.as_str();
            while let Some(start) = rest.find("[REDACTED ") {
                let Some(length) = rest[start..].find(']') else {
                    break;
                };
                let placeholder = &rest[start + "[REDACTED ".len()..start + length];
                let rule = placeholder.split(" #").next().unwrap_or_default();
                *by_rule.entry(rule.to_owned()).or_default() += 1;
                let before = &rest[rest.floor_char_boundary(start.saturating_sub(CONTEXT))..start];
                println!("  {rule}: …{}", before.replace('\n', "⏎"));
                rest = &rest[start + length + 1..];
            }
        }
    }
    println!("{redacted} of {texts} texts redacted");
    for (rule, count) in by_rule {
        println!("  {rule}: {count}");
    }
    Ok(())
}

/// The texts of a file, each with an id: `id`/`intent` and `id`/`intent_long`
/// of each line of a `.jsonl` file, or the NUL-separated records of any
/// other file, numbered.
fn texts_of(file: &str, content: &str) -> anyhow::Result<Vec<(String, String)>> {
    let mut texts = Vec::new();
    let jsonl = std::path::Path::new(file)
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("jsonl"));
    if jsonl {
        for (number, line) in content.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let task: serde_json::Value = serde_json::from_str(line)?;
            let id = task["id"]
                .as_str()
                .map_or_else(|| format!("line {}", number + 1), ToOwned::to_owned);
            for field in ["intent", "intent_long"] {
                if let Some(text) = task[field].as_str() {
                    texts.push((format!("{id} {field}"), text.to_owned()));
                }
            }
        }
    } else {
        for (number, record) in content.split('\0').enumerate() {
            if !record.trim().is_empty() {
                texts.push((format!("#{}", number + 1), record.to_owned()));
            }
        }
    }
    Ok(texts)
}
