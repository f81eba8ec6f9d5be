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
/// directories are created. A target that exists and is neither a regular
/// file nor a directory (`/dev/null`, `/dev/stdout` on a terminal or a pipe,
/// a named pipe) is written to, not replaced: renaming a file over a device
/// would replace the device itself for every program on the machine. A
/// symbolic link is followed (`/dev/stdout` redirected to a file, a
/// dotfiles link): the file it leads to is replaced and the link stays.
///
/// # Errors
///
/// Any I/O error, naming the directory or the target.
pub fn replace_file(target: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context;

    if fs_err::metadata(target).is_ok_and(|metadata| !metadata.is_file() && !metadata.is_dir()) {
        return fs_err::OpenOptions::new()
            .write(true)
            .open(target)
            .and_then(|mut file| file.write_all(bytes).and_then(|()| file.flush()))
            .with_context(|| format!("Cannot write to `{}`", target.display()));
    }
    if fs_err::symlink_metadata(target).is_ok_and(|metadata| metadata.file_type().is_symlink()) {
        let resolved = fs_err::canonicalize(target)
            .with_context(|| format!("Cannot follow the link `{}`", target.display()))?;
        return replace_file(&resolved, bytes);
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_keeps_its_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("deep/prompt.md");
        replace_file(&target, b"first, longer text").unwrap();
        replace_file(&target, b"second").unwrap();
        assert_eq!(fs_err::read(&target).unwrap(), b"second");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs_err::metadata(&target).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o644);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_written_through_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("real.md");
        fs_err::write(&file, "old").unwrap();
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        replace_file(&link, b"new").unwrap();
        assert!(
            fs_err::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs_err::read(&file).unwrap(), b"new");
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_written_to_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("prompt.fifo");
        nix::unistd::mkfifo(&pipe, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let reader = {
            let pipe = pipe.clone();
            std::thread::spawn(move || fs_err::read(&pipe).unwrap())
        };
        replace_file(&pipe, b"the prompt").unwrap();
        // Checked before the reader is joined: a replaced pipe leaves it
        // waiting for a writer forever.
        let kind = fs_err::symlink_metadata(&pipe).unwrap().file_type();
        assert!(kind.is_fifo(), "the pipe was replaced by {kind:?}");
        assert_eq!(reader.join().unwrap(), b"the prompt");
    }
}
