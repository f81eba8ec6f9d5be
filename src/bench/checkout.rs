//! Repositories and scratch worktrees for the harness, through the `git`
//! binary (the harness is a developer tool: it runs `git clone`, `git
//! worktree`, `git ls-tree`, `git cat-file` and `git checkout` as processes,
//! as the Python scripts it replaces did; the compile itself reads git with
//! `gix`).
//!
//! A clone may be a bare mirror that lacks some large blobs, so a checkout
//! lists the commit's tree, asks `git cat-file --batch-check` which blobs are
//! missing, and checks out with a non-cone sparse checkout that leaves exactly
//! those out (`/*` then `!/path` per missing blob, written to the worktree's
//! own `info/sparse-checkout` and enabled with `-c core.sparseCheckout=true`,
//! so the clone's config is not changed). The clone's objects and refs are
//! never changed; a worktree's administrative files live in the clone until
//! [`Worktree::remove`].

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use crate::bench::manifest::{Places, RepoSpec};

/// Runs git in `cwd` with `args` (and `input` on stdin); returns stdout.
///
/// # Errors
///
/// When git cannot start or exits with an error: the message has its stderr.
pub fn git(cwd: &Path, args: &[&str], input: Option<&[u8]>) -> anyhow::Result<Vec<u8>> {
    let mut child = Command::new("git")
        .args(["-c", "advice.detachedHead=false"])
        .args(args)
        .current_dir(cwd)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("Failed to run `git`: is git installed and on PATH?")?;
    let writer = input.map(|bytes| {
        let mut stdin = child.stdin.take();
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            if let Some(stdin) = stdin.as_mut() {
                let _ = stdin.write_all(&bytes);
            }
        })
    });
    let output = child.wait_with_output().context("Failed to wait for git")?;
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    if !output.status.success() {
        bail!(
            "git {} in {}: {}",
            args.iter().take(3).copied().collect::<Vec<_>>().join(" "),
            cwd.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(output.stdout)
}

/// Finds the clone of `spec`: its `path` when that exists, else
/// `{clones}/<owner>+<name>/repo`, else a bare clone of its `url` made there.
///
/// # Errors
///
/// When no clone exists and there is no `url`, or the clone fails.
pub fn find_clone(spec: &RepoSpec, places: &Places) -> anyhow::Result<PathBuf> {
    if let Some(path) = &spec.path {
        let path = places.resolve(path);
        if path.exists() {
            return Ok(path);
        }
    }
    let cached = places.clones.join(spec.name.replace('/', "+")).join("repo");
    if cached.exists() {
        return Ok(cached);
    }
    let Some(url) = &spec.url else {
        bail!(crate::error::UserError::new(
            format!(
                "No clone of `{}`: neither its `path` nor `{}` exists, and it has no `url`",
                spec.name,
                cached.display()
            ),
            "set `path` to a local clone, or `url` to clone from, in the manifest's [[repos]] entry (or pass --clones DIR)",
        ));
    };
    let parent = cached.parent().unwrap_or(&places.clones);
    fs_err::create_dir_all(parent)?;
    let url = if url.contains("://") || url.contains('@') {
        url.clone()
    } else {
        places.resolve(url).to_string_lossy().into_owned()
    };
    git(parent, &["clone", "--quiet", "--bare", &url, "repo"], None)
        .with_context(|| format!("Failed to clone `{}` from {url}", spec.name))?;
    Ok(cached)
}

/// Whether `clone` has `commit` as a commit object.
pub fn has_commit(clone: &Path, commit: &str) -> bool {
    git(
        clone,
        &["cat-file", "-e", &format!("{commit}^{{commit}}")],
        None,
    )
    .is_ok()
}

/// A detached worktree of a clone, reused across checkouts.
#[derive(Debug)]
pub struct Worktree {
    clone: PathBuf,
    /// The worktree's directory (absolute).
    pub path: PathBuf,
}

/// What a checkout put in the worktree.
#[derive(Debug, Default)]
pub struct Checkout {
    /// The commit's files that were checked out, sorted.
    pub files: Vec<String>,
    /// The commit's files left out because the clone lacks their blobs, sorted.
    pub missing: Vec<String>,
}

impl Worktree {
    /// Adds a worktree of `clone` at `path` (with no files yet), replacing a
    /// broken or foreign directory left there by an earlier run.
    ///
    /// # Errors
    ///
    /// When git fails.
    pub fn add(clone: &Path, path: &Path) -> anyhow::Result<Self> {
        let clone = fs_err::canonicalize(clone)?;
        if path.exists() {
            let _ = git(
                &clone,
                &["worktree", "remove", "--force", &path.to_string_lossy()],
                None,
            );
            if path.exists() {
                fs_err::remove_dir_all(path)?;
            }
        }
        git(&clone, &["worktree", "prune"], None)?;
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent)?;
        }
        git(
            &clone,
            &[
                "worktree",
                "add",
                "--no-checkout",
                "--detach",
                "--force",
                &path.to_string_lossy(),
                "HEAD",
            ],
            None,
        )?;
        Ok(Self {
            clone,
            path: fs_err::canonicalize(path)?,
        })
    }

    /// Checks `commit` out, leaving out files whose blobs the clone lacks,
    /// and removes untracked files.
    ///
    /// # Errors
    ///
    /// When git fails (for example, an unknown commit).
    pub fn checkout(&self, commit: &str) -> anyhow::Result<Checkout> {
        let listing = git(
            &self.path,
            &["ls-tree", "-r", "-z", "--full-tree", commit],
            None,
        )?;
        let mut entries: Vec<(String, String)> = Vec::new();
        for record in listing.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            let Some(tab) = record.iter().position(|&b| b == b'\t') else {
                continue;
            };
            let meta = String::from_utf8_lossy(&record[..tab]);
            let path = String::from_utf8_lossy(&record[tab + 1..]).into_owned();
            let mut parts = meta.split(' ');
            let (_mode, kind, oid) = (parts.next(), parts.next(), parts.next());
            if let (Some("blob"), Some(oid)) = (kind, oid) {
                entries.push((oid.to_owned(), path));
            }
        }
        let mut missing = Vec::new();
        if !entries.is_empty() {
            let input: String = entries.iter().fold(String::new(), |mut input, (oid, _)| {
                input.push_str(oid);
                input.push('\n');
                input
            });
            let out = git(
                &self.path,
                &["cat-file", "--batch-check=%(objectname)"],
                Some(input.as_bytes()),
            )?;
            let absent: std::collections::HashSet<&str> = std::str::from_utf8(&out)
                .unwrap_or("")
                .lines()
                .filter(|line| line.ends_with(" missing"))
                .filter_map(|line| line.split(' ').next())
                .collect();
            missing = entries
                .iter()
                .filter(|(oid, _)| absent.contains(oid.as_str()))
                .map(|(_, path)| path.clone())
                .collect();
        }
        missing.sort();
        let sparse = git(
            &self.path,
            &[
                "rev-parse",
                "--path-format=absolute",
                "--git-path",
                "info/sparse-checkout",
            ],
            None,
        )?;
        let sparse = PathBuf::from(String::from_utf8_lossy(&sparse).trim());
        if let Some(parent) = sparse.parent() {
            fs_err::create_dir_all(parent)?;
        }
        let mut patterns = String::from("/*\n");
        for path in missing.iter().filter(|p| !p.contains('\n')) {
            patterns.push('!');
            patterns.push_str(&escape_pattern(path));
            patterns.push('\n');
        }
        fs_err::write(&sparse, patterns)?;
        git(
            &self.path,
            &[
                "-c",
                "core.sparseCheckout=true",
                "-c",
                "core.sparseCheckoutCone=false",
                "checkout",
                "--quiet",
                "--force",
                "--detach",
                commit,
            ],
            None,
        )?;
        git(&self.path, &["clean", "-fdxq"], None)?;
        let mut files: Vec<String> = entries
            .into_iter()
            .map(|(_, path)| path)
            .filter(|path| missing.binary_search(path).is_err())
            .collect();
        files.sort();
        files.dedup();
        Ok(Checkout { files, missing })
    }

    /// Removes the worktree and its administrative files from the clone.
    pub fn remove(self) {
        let path = self.path.to_string_lossy().into_owned();
        if git(&self.clone, &["worktree", "remove", "--force", &path], None).is_err() {
            let _ = fs_err::remove_dir_all(&self.path);
        }
        let _ = git(&self.clone, &["worktree", "prune"], None);
    }
}

/// A path as a literal gitignore-style pattern anchored at the root.
fn escape_pattern(path: &str) -> String {
    let mut out = String::from("/");
    for c in path.chars() {
        if "\\*?[]!#".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    if out.ends_with(' ') {
        out.pop();
        out.push_str("\\ ");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape_pattern;

    #[test]
    fn escapes_pattern_characters() {
        assert_eq!(escape_pattern("a/b.txt"), "/a/b.txt");
        assert_eq!(escape_pattern("a[1]*.py"), "/a\\[1\\]\\*.py");
        assert_eq!(escape_pattern("trailing "), "/trailing\\ ");
    }
}
