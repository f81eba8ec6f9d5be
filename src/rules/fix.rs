//! `aic rules --fix`: the duplicate instructions of a [`RulesAnalysis`]
//! taken out, the first copy kept.
//!
//! Only a whole line goes: a list item or a line that holds the duplicate
//! and nothing else. A line that also says something else stays, so an
//! instruction that is not a duplicate is never deleted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::rules::text::instructions;
use crate::rules::{RulesAnalysis, Severity};

/// The change to one rule file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEdit {
    /// The display path (relative to the project, or `~/…`).
    pub path: String,
    /// Where it is on disk.
    pub full: PathBuf,
    /// Its text now.
    pub before: String,
    /// Its text without the duplicate lines.
    pub after: String,
    /// The one-based lines taken out.
    pub removed: Vec<usize>,
}

impl FileEdit {
    /// The change as a unified diff (`a/path`, `b/path`, 3 lines of context).
    pub fn unified_diff(&self) -> String {
        similar::TextDiff::from_lines(&self.before, &self.after)
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{}", self.path), &format!("b/{}", self.path))
            .to_string()
    }
}

/// The edits that take out every later copy of a duplicate instruction
/// found in `analysis` of the project at `root`. User-level files are never
/// edited, nor a file that is another rule file through a link; files that
/// cannot be read are left alone.
pub fn plan(analysis: &RulesAnalysis, root: &Path) -> Vec<FileEdit> {
    let mut lines_by_file: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for finding in &analysis.findings {
        if finding.code != "duplicate" || finding.severity != Severity::Warn {
            continue;
        }
        // The first place is the copy kept (its scope covers the others').
        // A user-level file is never edited: it serves every project, and
        // the project's copy may be gone for a teammate.
        for later in finding
            .places
            .iter()
            .skip(1)
            .filter(|p| !p.path.starts_with("~/"))
        {
            lines_by_file
                .entry(later.path.clone())
                .or_default()
                .push(later.line);
        }
    }
    let mut edits = Vec::new();
    for (path, mut lines) in lines_by_file {
        // A file that is the same file as another rule file through a link
        // (`CLAUDE.md -> AGENTS.md`) is read by more than one client.
        if let Some(target) = analysis.real_paths.get(&path)
            && analysis
                .real_paths
                .iter()
                .any(|(other, real)| *other != path && real == target)
        {
            continue;
        }
        let full = root.join(&path);
        let Ok(before) = fs_err::read_to_string(&full) else {
            continue;
        };
        // A line goes only when the duplicate is all it says.
        let found = instructions(&path, &before);
        lines.retain(|&line| found.iter().filter(|i| i.line == line).count() == 1);
        lines.sort_unstable();
        lines.dedup();
        if lines.is_empty() {
            continue;
        }
        let after: String = before
            .split_inclusive('\n')
            .enumerate()
            .filter(|(index, _)| lines.binary_search(&(index + 1)).is_err())
            .map(|(_, line)| line)
            .collect();
        edits.push(FileEdit {
            path,
            full,
            before,
            after,
            removed: lines,
        });
    }
    edits
}

/// Writes `edits`: each file replaced atomically (through a symlink to its
/// target, its mode kept), after its original bytes are copied into
/// `backups` (mode 0600) when given. Returns the backup paths written.
///
/// # Errors
///
/// The first file that cannot be backed up or replaced, named.
pub fn apply(edits: &[FileEdit], backups: Option<&Path>) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for edit in edits {
        if let Some(dir) = backups {
            crate::home::create_private_dir(dir)?;
            let name = format!(
                "{}-{}.orig",
                aic_stages::content_hash::ContentHash::of(edit.full.to_string_lossy().as_bytes())
                    .to_hex(),
                aic_stages::content_hash::ContentHash::of(edit.before.as_bytes()).to_hex()
            );
            let backup = dir.join(name);
            fs_err::write(&backup, edit.before.as_bytes())?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                fs_err::set_permissions(&backup, std::fs::Permissions::from_mode(0o600))?;
            }
            written.push(backup);
        }
        crate::printer::replace_file(&edit.full, edit.after.as_bytes())?;
    }
    Ok(written)
}
