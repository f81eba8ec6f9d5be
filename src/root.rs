//! The project-root policy, the same for the command line, the hooks and the
//! MCP server: a project root is an existing, readable directory, and neither
//! the filesystem root nor the home directory itself — either would make a
//! compile walk the whole machine or the whole home directory — nor a system
//! directory (`/etc`, `/proc`, `/usr`, …) or a credential directory (`~/.ssh`,
//! `~/.aws`, `~/.kube`, …), nor anything inside one, unless the directory is
//! listed in `AIC_ALLOWED_ROOTS`. A leading `~` is the home directory.

use std::path::{Path, PathBuf};

use crate::error::CompileError;

/// The environment variable listing roots the policy lets through although
/// they are in a system or credential directory: paths separated as in
/// `PATH` (`:` on Unix), each allowing itself and everything below it. It is an
/// environment setting, not a project config field, because the policy runs
/// before any project config is read and a config inside a refused directory
/// must not vouch for itself.
pub const ALLOWED_ROOTS_VAR: &str = "AIC_ALLOWED_ROOTS";

/// System directories: a root that is one of them or inside one is refused.
const SYSTEM_DIRS: &[&str] = &[
    "/etc",
    "/proc",
    "/sys",
    "/dev",
    "/var",
    "/usr",
    "/boot",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/run",
    "/snap",
    "/lost+found",
    "/System",
    "/Library",
    "/private/etc",
    "/private/var",
    "/cores",
];

/// Credential directories under the home directory (relative to it): a root
/// that is one of them or inside one is refused.
const CREDENTIAL_DIRS: &[&str] = &[
    ".ssh",
    ".aws",
    ".docker",
    ".kube",
    ".gnupg",
    ".config/gh",
    ".config/gcloud",
    ".config/op",
    ".config/hub",
    ".azure",
    ".password-store",
    ".terraform.d",
    ".local/share/keyrings",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".vault-token",
    ".cargo/credentials.toml",
    ".m2",
    ".gradle",
];

/// Why a directory was taken as the project when no root was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FoundBy {
    /// It holds `.git` (the enclosing git work tree).
    GitRoot,
    /// It holds `aic.config.json`.
    Config,
}

impl FoundBy {
    /// How the note names it: `git root`, `aic.config.json`.
    pub fn label(self) -> &'static str {
        match self {
            Self::GitRoot => "git root",
            Self::Config => "holds aic.config.json",
        }
    }
}

/// The project a command started in `start` (with no `--root`) works on: the
/// nearest directory at or above `start` that holds `aic.config.json` or
/// `.git` (a directory, or a file as in a linked worktree or submodule),
/// with which it was; `start` itself with `None` when there is none. The
/// search stops below the home directory and the filesystem root, which are
/// never projects.
pub fn discover_root(start: &Path) -> (PathBuf, Option<FoundBy>) {
    let start = fs_err::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
    let home = home();
    for dir in start.ancestors() {
        if dir.parent().is_none() || home.as_deref() == Some(dir) {
            break;
        }
        if dir.join("aic.config.json").is_file() {
            return (dir.to_path_buf(), Some(FoundBy::Config));
        }
        if dir.join(".git").exists() {
            return (dir.to_path_buf(), Some(FoundBy::GitRoot));
        }
    }
    (start, None)
}

/// The project root of a command: `given` when the user gave one, else the
/// project [`discover_root`] finds from the working directory — with one
/// `note:` on stderr when that is not the working directory itself.
pub fn given_or_discovered(given: Option<&Path>) -> PathBuf {
    if let Some(given) = given {
        return given.to_path_buf();
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let (root, found) = discover_root(&cwd);
    let canonical_cwd = fs_err::canonicalize(&cwd).unwrap_or(cwd);
    if let Some(found) = found
        && root != canonical_cwd
    {
        tracing::warn!(
            target: crate::logging::NOTE_TARGET,
            "using {} ({}) as the project; pass --root DIR to choose another",
            root.display(),
            found.label()
        );
    }
    root
}

/// `root` with a leading `~` (alone or before a `/`) replaced by the home
/// directory (`HOME`); any other path is returned as it is.
pub fn expand_home(root: &Path) -> PathBuf {
    let Some(text) = root.to_str() else {
        return root.to_path_buf();
    };
    let rest = match text.strip_prefix('~') {
        Some("") => "",
        Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/'),
        _ => return root.to_path_buf(),
    };
    match home() {
        Some(home) if rest.is_empty() => home,
        Some(home) => home.join(rest),
        None => root.to_path_buf(),
    }
}

/// Canonicalises `root` (after [`expand_home`]) and checks it is a project root.
///
/// # Errors
///
/// [`CompileError::RootNotFound`], [`CompileError::RootUnreadable`],
/// [`CompileError::RootNotDirectory`] or [`CompileError::RootTooBroad`],
/// naming the root as given.
pub fn resolve_root(root: &Path) -> Result<PathBuf, CompileError> {
    let given = root;
    let root = &expand_home(root);
    if !root.exists() {
        return Err(CompileError::RootNotFound {
            path: given.to_path_buf(),
        });
    }
    let canonical = fs_err::canonicalize(root).map_err(|source| CompileError::RootUnreadable {
        path: given.to_path_buf(),
        source: std::io::Error::new(source.kind(), source.to_string()),
    })?;
    if !canonical.is_dir() {
        return Err(CompileError::RootNotDirectory {
            path: given.to_path_buf(),
        });
    }
    refuse_broad(given)?;
    fs_err::read_dir(&canonical).map_err(|source| CompileError::RootUnreadable {
        path: given.to_path_buf(),
        source: std::io::Error::new(source.kind(), source.to_string()),
    })?;
    Ok(canonical)
}

/// Refuses the filesystem root, the home directory itself and any directory
/// above it (`/home`), and system and credential directories and everything
/// inside them, unless listed in
/// [`ALLOWED_ROOTS_VAR`] (a directory below the home directory, or anywhere
/// else, is fine). A root that does not exist is not refused here:
/// [`resolve_root`] says so.
///
/// # Errors
///
/// [`CompileError::RootTooBroad`] naming the root and which it is.
pub fn refuse_broad(root: &Path) -> Result<(), CompileError> {
    let expanded = expand_home(root);
    let canonical = fs_err::canonicalize(&expanded).unwrap_or(expanded);
    let what = if canonical.parent().is_none() {
        "the filesystem root".to_owned()
    } else if home().is_some_and(|home| home == canonical) {
        "your home directory".to_owned()
    } else if home().is_some_and(|home| home.starts_with(&canonical)) && !allowed(&canonical) {
        // `/home`, `/Users`: a walk from there reaches every credential
        // directory of the home directories below it.
        "a directory that holds your home directory".to_owned()
    } else if let Some(kind) = sensitive(&canonical)
        && !allowed(&canonical)
    {
        kind
    } else {
        return Ok(());
    };
    Err(CompileError::RootTooBroad {
        path: root.to_path_buf(),
        what,
    })
}

/// What a canonical path is when it is, or is inside, a system or credential
/// directory: ``in the system directory `/etc` ``; `None` otherwise. A path
/// inside the temporary directory is not in a system directory (on macOS it
/// lives under `/var`).
fn sensitive(canonical: &Path) -> Option<String> {
    let temp = fs_err::canonicalize(std::env::temp_dir()).unwrap_or_else(|_| std::env::temp_dir());
    let in_temp = temp.parent().is_some() && canonical.starts_with(&temp);
    if !in_temp
        && let Some(dir) = SYSTEM_DIRS
            .iter()
            .find(|dir| canonical.starts_with(Path::new(dir)))
    {
        return Some(format!("in the system directory `{dir}`"));
    }
    let home = home()?;
    CREDENTIAL_DIRS
        .iter()
        .find(|dir| canonical.starts_with(home.join(dir)))
        .map(|dir| format!("in the credential directory `~/{dir}`"))
}

/// Whether [`ALLOWED_ROOTS_VAR`] lists `canonical` or a directory above it.
fn allowed(canonical: &Path) -> bool {
    std::env::var_os(ALLOWED_ROOTS_VAR).is_some_and(|list| allowed_by(&list, canonical))
}

/// Whether the path list `list` holds `canonical` or a directory above it.
fn allowed_by(list: &std::ffi::OsStr, canonical: &Path) -> bool {
    std::env::split_paths(list)
        .filter(|path| !path.as_os_str().is_empty())
        .map(|path| {
            let path = expand_home(&path);
            fs_err::canonicalize(&path).unwrap_or(path)
        })
        .any(|path| canonical.starts_with(path))
}

/// The home directory (`HOME`), canonical.
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .map(|home| fs_err::canonicalize(&home).unwrap_or(home))
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

    #[cfg(target_os = "linux")]
    #[test]
    fn system_directories_and_everything_inside_them_are_refused() {
        for root in [
            "/etc",
            "/proc",
            "/proc/self",
            "/sys",
            "/dev",
            "/usr/lib",
            "/var/log",
        ] {
            let error = resolve_root(Path::new(root)).unwrap_err();
            assert!(
                matches!(error, CompileError::RootTooBroad { .. }),
                "{root}: {error}"
            );
            assert!(error.to_string().contains("system directory"), "{error}");
        }
    }

    #[test]
    fn credential_directories_are_refused_by_their_path() {
        let home = home().expect("these tests need HOME set to a directory");
        for dir in [".ssh", ".aws", ".docker", ".kube", ".gnupg", ".config/gh"] {
            let error = refuse_broad(&home.join(dir).join("config")).unwrap_err();
            assert!(
                error.to_string().contains("credential directory"),
                "{error}"
            );
            let error = refuse_broad(&Path::new("~").join(dir)).unwrap_err();
            assert!(error.to_string().contains(&format!("`~/{dir}`")), "{error}");
        }
        assert!(refuse_broad(&home.join("src/project")).is_ok());
    }

    #[test]
    fn an_allowed_root_is_let_through_with_what_is_below_it() {
        let list = std::env::join_paths(["/opt/none", "/etc/app"]).unwrap();
        assert!(allowed_by(&list, Path::new("/etc/app")));
        assert!(allowed_by(&list, Path::new("/etc/app/conf.d")));
        assert!(!allowed_by(&list, Path::new("/etc")));
        assert!(!allowed_by(&list, Path::new("/etc/application")));
    }

    #[test]
    fn a_directory_above_the_home_directory_is_refused() {
        let home = home().expect("these tests need HOME set to a directory");
        if let Some(parent) = home.parent().filter(|parent| parent.parent().is_some()) {
            let error = refuse_broad(parent).unwrap_err();
            assert!(
                error.to_string().contains("holds your home directory"),
                "{error}"
            );
        }
    }

    #[test]
    fn the_nearest_git_work_tree_or_config_is_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let repo = fs_err::canonicalize(dir.path()).unwrap().join("repo");
        fs_err::create_dir_all(repo.join(".git")).unwrap();
        fs_err::create_dir_all(repo.join("docs/api")).unwrap();
        fs_err::create_dir_all(repo.join("packages/app/src")).unwrap();
        fs_err::write(repo.join("packages/app/aic.config.json"), "{}").unwrap();
        assert_eq!(
            discover_root(&repo.join("docs/api")),
            (repo.clone(), Some(FoundBy::GitRoot))
        );
        assert_eq!(discover_root(&repo), (repo.clone(), Some(FoundBy::GitRoot)));
        assert_eq!(
            discover_root(&repo.join("packages/app/src")),
            (repo.join("packages/app"), Some(FoundBy::Config))
        );
        // A linked worktree's `.git` is a file.
        let linked = repo.parent().unwrap().join("linked");
        fs_err::create_dir_all(linked.join("src")).unwrap();
        fs_err::write(
            linked.join(".git"),
            "gitdir: ../repo/.git/worktrees/linked\n",
        )
        .unwrap();
        assert_eq!(
            discover_root(&linked.join("src")),
            (linked.clone(), Some(FoundBy::GitRoot))
        );
        let plain = repo.parent().unwrap().join("plain/sub");
        fs_err::create_dir_all(&plain).unwrap();
        assert_eq!(discover_root(&plain), (plain.clone(), None));
    }

    #[test]
    fn a_tilde_is_the_home_directory() {
        let home = PathBuf::from(std::env::var_os("HOME").expect("these tests need HOME set"));
        assert_eq!(expand_home(Path::new("~")), home);
        assert_eq!(expand_home(Path::new("~/src/app")), home.join("src/app"));
        assert_eq!(
            expand_home(Path::new("~user/app")),
            PathBuf::from("~user/app")
        );
        assert_eq!(expand_home(Path::new("src/~")), PathBuf::from("src/~"));
        let error = refuse_broad(Path::new("~")).unwrap_err();
        assert!(error.to_string().contains("your home directory"), "{error}");
    }
}
