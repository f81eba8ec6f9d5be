//! `aic tree`: the repository as the compiler sees it — every file in scope
//! with its raw and compiled tokens, summed per directory — and what the scan
//! leaves out, and why.
//!
//! Raw tokens count a file's text as it is; compiled tokens count its full
//! tier after the content transformers (comments, licence headers, lock files,
//! minified code, …), the most a prompt would show of it. Both are exact
//! (cl100k) counts from the file's facts, which the tree computes through the
//! per-file cache like `aic precompute` (so a second run reads them back).

use std::collections::BTreeMap;

use aic_stages::fit::tokens::Tokenizer;
use aic_stages::relative_path::RelativePath;
use serde::Serialize;

use crate::error::CompileError;
use crate::host::Host;
use crate::pipeline::file_cache;
use crate::pipeline::prepare::Project;
use crate::pipeline::scan::walk::{SkippedFiles, builtin_exclusion};
use crate::pipeline::scan::{git::tracked_files, scan};

/// One line of the tree: a directory (its files summed) or a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeEntry {
    /// The path relative to the root (`""` for the root, `src/` style with
    /// a trailing `/` for directories).
    pub path: String,
    /// Whether this is a directory.
    pub directory: bool,
    /// Files below it (1 for a file).
    pub files: usize,
    /// Tokens of the text as it is.
    pub raw_tokens: u64,
    /// Tokens at the full tier after the content transformers.
    pub compiled_tokens: u64,
}

/// A tracked file the scan leaves out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeftOutFile {
    /// The file.
    pub path: String,
    /// Why, as a code: `builtin` (the built-in ignore list), `tooLarge`
    /// (over `repoMap.maxFileBytes`), `binary` (a NUL byte in its first 8 KiB)
    /// or `ignored` (the project's ignore files or the guard's path rules).
    pub kind: String,
    /// Why, and how to bring it back when a setting can.
    pub reason: String,
}

/// What `aic tree` reports.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenTree {
    /// The project root.
    pub project_root: std::path::PathBuf,
    /// Every directory and file in scope, in path order (a directory before
    /// what it holds).
    pub entries: Vec<TreeEntry>,
    /// Files the scan skipped after reading or looking at them, by reason.
    pub skipped: SkippedFiles,
    /// Files git tracks that are not in scope (ignore files, the built-in
    /// list, the size cap, binary or guarded paths), each with its reason;
    /// empty outside a git work tree.
    pub left_out: Vec<LeftOutFile>,
}

/// Computes the tree of the project at `root` (facts of files missing from
/// the cache are computed and stored, see [`super::precompute::precompute`],
/// which the caller runs first).
///
/// # Errors
///
/// [`CompileError`] for a bad root or config, and
/// [`CompileError::Internal`] when the cache cannot be opened.
pub fn token_tree(project: &Project, host: &Host) -> Result<TokenTree, CompileError> {
    let cache = file_cache(host, project).map_err(|error| CompileError::Internal {
        message: format!("The per-file cache cannot be opened: {}", error.with_hint()),
    })?;
    let snapshot = scan(project, Some(&cache), None, None);
    let mut directories: BTreeMap<String, TreeEntry> = BTreeMap::new();
    let mut entries = Vec::with_capacity(snapshot.repo.files.len());
    for file in &snapshot.repo.files {
        let facts = cache.facts(
            file.content_hash,
            &file.path,
            file.language,
            false,
            false,
            Tokenizer::Cl100k,
        );
        let (raw, compiled) = facts.map_or(
            (file.estimated_tokens.0, file.estimated_tokens.0),
            |facts| (facts.original_tokens.0, facts.transformed_tokens.0),
        );
        let (raw, compiled) = (u64::from(raw), u64::from(compiled));
        for directory in directories_of(&file.path) {
            let entry = directories
                .entry(directory.clone())
                .or_insert_with(|| TreeEntry {
                    path: directory,
                    directory: true,
                    files: 0,
                    raw_tokens: 0,
                    compiled_tokens: 0,
                });
            entry.files += 1;
            entry.raw_tokens += raw;
            entry.compiled_tokens += compiled;
        }
        entries.push(TreeEntry {
            path: file.path.to_string(),
            directory: false,
            files: 1,
            raw_tokens: raw,
            compiled_tokens: compiled,
        });
    }
    entries.extend(directories.into_values());
    // A directory `a/` sorts before `a/b.rs` and after `a.rs`, as in a listing.
    entries.sort_by(|a, b| tree_order(&a.path).cmp(&tree_order(&b.path)));
    let left_out = left_out_tracked(
        &project.root,
        &snapshot.repo,
        project.config.repo_map.max_file_bytes,
    );
    Ok(TokenTree {
        project_root: project.root.clone(),
        entries,
        skipped: snapshot.skipped,
        left_out,
    })
}

/// The files git tracks under `root` that are not in `repo` (and exist),
/// each with why; empty outside a git work tree.
pub fn left_out_tracked(
    root: &std::path::Path,
    repo: &aic_stages::repo_map::RepoMap,
    max_file_bytes: u64,
) -> Vec<LeftOutFile> {
    let in_scope: std::collections::HashSet<&str> =
        repo.files.iter().map(|f| f.path.as_str()).collect();
    tracked_files(root)
        .unwrap_or_default()
        .into_iter()
        .filter(|path| !in_scope.contains(path.as_str()))
        .filter(|path| root.join(path).is_file())
        .map(|path| left_out(root, path, max_file_bytes))
        .collect()
}

/// Why a tracked file is not in scope.
fn left_out(root: &std::path::Path, path: String, max_file_bytes: u64) -> LeftOutFile {
    if let Some(reason) = builtin_exclusion(root, &path, max_file_bytes) {
        let kind = if reason.contains("repoMap.maxFileBytes") {
            "tooLarge"
        } else {
            "builtin"
        };
        return LeftOutFile {
            path,
            kind: kind.to_owned(),
            reason,
        };
    }
    let binary = fs_err::File::open(root.join(&path)).is_ok_and(|file| {
        let mut head = Vec::with_capacity(8 * 1024);
        std::io::Read::read_to_end(&mut std::io::Read::take(file, 8 * 1024), &mut head).is_ok()
            && head.contains(&0)
    });
    if binary {
        let reason = format!("`{path}` is binary (a NUL byte in its first 8 KiB)");
        return LeftOutFile {
            path,
            kind: "binary".to_owned(),
            reason,
        };
    }
    let reason = format!(
        "`{path}` is left out by the project's ignore files (`.gitignore`, `.git/info/exclude`) or the guard's path rules"
    );
    LeftOutFile {
        path,
        kind: "ignored".to_owned(),
        reason,
    }
}

/// The directories holding `path`, outermost first, each with a trailing
/// `/`; the root is `""`.
fn directories_of(path: &RelativePath) -> Vec<String> {
    let mut out = vec![String::new()];
    let text = path.as_str();
    for (index, _) in text.match_indices('/') {
        out.push(text[..=index].to_owned());
    }
    out
}

/// The sort key of a tree path: its components, so that a directory comes
/// right before its contents.
fn tree_order(path: &str) -> Vec<&str> {
    path.split_inclusive('/').collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_listed_before_their_contents() {
        let mut paths = vec![
            "a.rs", "a/", "a/b.rs", "", "a/c/", "a/c/d.rs", "b/", "b/x.rs",
        ];
        paths.reverse();
        paths.sort_by(|a, b| tree_order(a).cmp(&tree_order(b)));
        assert_eq!(
            paths,
            [
                "", "a.rs", "a/", "a/b.rs", "a/c/", "a/c/d.rs", "b/", "b/x.rs"
            ]
        );
        let path = RelativePath::new("src/user/service.ts").unwrap();
        assert_eq!(directories_of(&path), ["", "src/", "src/user/"]);
    }
}
