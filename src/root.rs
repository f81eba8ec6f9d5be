//! The project-root policy, the same for the command line, the hooks and the
//! MCP server: a project root is an existing, readable directory, and neither
//! the filesystem root nor the home directory itself — either would make a
//! compile walk the whole machine or the whole home directory.

use std::path::{Path, PathBuf};

use crate::error::CompileError;

/// Canonicalises `root` and checks it is a project root.
///
/// # Errors
///
/// [`CompileError::RootNotFound`], [`CompileError::RootUnreadable`],
/// [`CompileError::RootNotDirectory`] or [`CompileError::RootTooBroad`],
/// naming the root as given.
pub fn resolve_root(root: &Path) -> Result<PathBuf, CompileError> {
    if !root.exists() {
        return Err(CompileError::RootNotFound {
            path: root.to_path_buf(),
        });
    }
    let canonical = fs_err::canonicalize(root).map_err(|source| CompileError::RootUnreadable {
        path: root.to_path_buf(),
        source: std::io::Error::new(source.kind(), source.to_string()),
    })?;
    if !canonical.is_dir() {
        return Err(CompileError::RootNotDirectory {
            path: root.to_path_buf(),
        });
    }
    refuse_broad(root)?;
    fs_err::read_dir(&canonical).map_err(|source| CompileError::RootUnreadable {
        path: root.to_path_buf(),
        source: std::io::Error::new(source.kind(), source.to_string()),
    })?;
    Ok(canonical)
}

/// Refuses the filesystem root and the home directory itself as a project
/// root (a directory below either is fine). A root that does not exist is not
/// refused here: [`resolve_root`] says so.
///
/// # Errors
///
/// [`CompileError::RootTooBroad`] naming the root and which it is.
pub fn refuse_broad(root: &Path) -> Result<(), CompileError> {
    let canonical = fs_err::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let what = if canonical.parent().is_none() {
        "the filesystem root"
    } else if std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|home| fs_err::canonicalize(home).ok())
        .is_some_and(|home| home == canonical)
    {
        "your home directory"
    } else {
        return Ok(());
    };
    Err(CompileError::RootTooBroad {
        path: root.to_path_buf(),
        what,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filesystem_root_is_refused_and_a_project_is_not() {
        let error = resolve_root(Path::new("/")).unwrap_err();
        assert!(error.to_string().contains("the filesystem root"), "{error}");
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            resolve_root(dir.path()).unwrap(),
            fs_err::canonicalize(dir.path()).unwrap()
        );
        assert!(matches!(
            resolve_root(&dir.path().join("missing")),
            Err(CompileError::RootNotFound { .. })
        ));
    }
}
