//! Writing data to stdout. stdout carries data only (the prompt, JSON); everything
//! else goes to stderr through `tracing`. A closed pipe (`aic compile … | head`)
//! is not an error.

use std::io::{self, Write};

/// Writes `text` to stdout and flushes. A broken pipe counts as success.
///
/// # Errors
///
/// Any other I/O error.
pub fn print_stdout(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Replaces `target` with `bytes` atomically: the bytes go to a temporary
/// file in the same directory, which is then renamed over `target`, so a
/// reader sees the old file or the new one, never a part. A file that
/// exists keeps its permissions; a new one is 0644. Missing parent
/// directories are created.
///
/// # Errors
///
/// Any I/O error, naming the directory or the target.
pub fn replace_file(target: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context;

    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => std::path::Path::new("."),
    };
    fs_err::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("Cannot write in `{}`", dir.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.flush())
        .with_context(|| format!("Cannot write in `{}`", dir.display()))?;
    if let Ok(metadata) = fs_err::metadata(target) {
        file.as_file().set_permissions(metadata.permissions())?;
    } else {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            file.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))?;
        }
    }
    file.persist(target)
        .with_context(|| format!("Cannot replace `{}`", target.display()))?;
    Ok(())
}

/// [`replace_file`] through a symlink: a linked file (a dotfiles setup) is
/// written at its target and the link stays.
///
/// # Errors
///
/// The link cannot be resolved, or the target cannot be replaced.
pub fn replace_through_link(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    let is_link = fs_err::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if is_link {
        replace_file(&fs_err::canonicalize(path)?, bytes)
    } else {
        replace_file(path, bytes)
    }
}
