//! `aic install <client> [--project] [--dry-run]` and `aic uninstall <client>
//! [--project]`: register aic with an editor (integrations brief §1.7, §1.10,
//! §2.4, §3).
//!
//! Every file is planned before any is written: a malformed file stops the
//! whole install with a message naming it, and nothing is touched. Writes are
//! atomic renames; a file whose content would not change is not written (a
//! second install writes nothing). The first install keeps the original bytes
//! of each file under `$AIC_HOME/install-backups/`; `uninstall` takes aic's
//! entries out and, when what is left is what the file held before, restores
//! those bytes exactly (or removes a file aic created).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use aic_integrations::install::{
    EditError, claude_mcp_entry, merge_claude_hooks, merge_mcp_server, merge_section,
    remove_claude_hooks, remove_mcp_server, remove_section, trigger_rule,
};
use aic_stages::repo_map::ContentHash;
use anyhow::Context;
use serde_json::{Value, json};

use crate::cli::{InstallArgs, InstallClient};
use crate::error::UserError;
use crate::facts_cache::aic_home;
use crate::printer::print_stdout;

/// One file's planned change.
struct Edit {
    path: PathBuf,
    /// The bytes now; `None` when the file does not exist.
    before: Option<Vec<u8>>,
    /// The bytes to write; `None` to remove the file.
    after: Option<Vec<u8>>,
    /// What the file is, for the report.
    what: &'static str,
}

/// What kind of content a file holds.
#[derive(Clone, Copy)]
enum Kind {
    /// Claude Code settings: aic's hook handlers.
    ClaudeHooks,
    /// An MCP server registry under this key.
    McpServers(&'static str),
    /// A Markdown file with aic's managed section.
    TriggerRule,
}

/// `aic install`.
pub fn install(args: &InstallArgs) -> anyhow::Result<()> {
    run(args, true)
}

/// `aic uninstall`.
pub fn uninstall(args: &InstallArgs) -> anyhow::Result<()> {
    run(args, false)
}

fn run(args: &InstallArgs, install: bool) -> anyhow::Result<()> {
    let exe = std::env::current_exe()
        .and_then(fs_err::canonicalize)
        .context("Cannot find the path of this aic binary")?;
    // Files under the project are shared (committed): they name `aic` and
    // leave finding it to PATH. User files name `aic` too when PATH finds this
    // very binary, so an upgrade or a rebuild elsewhere does not break them;
    // otherwise they name this binary's absolute path.
    let on_path = path_lookup("aic").is_some_and(|found| found == exe);
    let binary = if args.project || on_path {
        if !on_path {
            tracing::warn!(
                "`aic` is not on PATH (or is another binary): the project's hooks and MCP entry run `aic` from PATH"
            );
        }
        "aic".to_owned()
    } else {
        exe.to_string_lossy().into_owned()
    };
    let project = fs_err::canonicalize(&args.root).map_err(|_| {
        UserError::new(
            format!(
                "The project `{}` is not an existing directory",
                args.root.display()
            ),
            "pass the project's directory with --root",
        )
    })?;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| UserError::new("HOME is not set", "set HOME to your home directory"))?;
    let files = files(args.client, args.project, &project, &home)?;
    let mut edits = Vec::new();
    for (path, kind, what) in files {
        edits.push(plan(&path, kind, what, &binary, install)?);
    }
    let mut report = String::new();
    for edit in &edits {
        let verb = match (&edit.before, &edit.after) {
            (before, after) if before == after => "unchanged",
            (None, Some(_)) => "create",
            (Some(_), None) => "remove",
            _ => "update",
        };
        if !args.dry_run && edit.before != edit.after {
            apply(edit, install)?;
        }
        let verb = if args.dry_run && verb != "unchanged" {
            format!("would {verb}")
        } else {
            match verb {
                "create" => "created".to_owned(),
                "remove" => "removed".to_owned(),
                "update" => "updated".to_owned(),
                other => other.to_owned(),
            }
        };
        let _ = writeln!(
            report,
            "{verb:>14}  {}  ({})",
            edit.path.display(),
            edit.what
        );
    }
    print_stdout(&report).context("Failed to write to stdout")
}

/// The canonical path of `name` as PATH finds it.
fn path_lookup(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
        .and_then(|found| fs_err::canonicalize(found).ok())
}

/// The files a client's install touches.
fn files(
    client: InstallClient,
    project_scope: bool,
    project: &Path,
    home: &Path,
) -> anyhow::Result<Vec<(PathBuf, Kind, &'static str)>> {
    let claude_dir =
        std::env::var_os("CLAUDE_CONFIG_DIR").map_or_else(|| home.join(".claude"), PathBuf::from);
    Ok(match (client, project_scope) {
        (InstallClient::Claude, false) => vec![
            (claude_dir.join("settings.json"), Kind::ClaudeHooks, "hooks"),
            (
                home.join(".claude.json"),
                Kind::McpServers("mcpServers"),
                "MCP server",
            ),
            (
                claude_dir.join("CLAUDE.md"),
                Kind::TriggerRule,
                "trigger rule",
            ),
        ],
        (InstallClient::Claude, true) => vec![
            (
                project.join(".claude/settings.json"),
                Kind::ClaudeHooks,
                "hooks",
            ),
            (
                project.join(".mcp.json"),
                Kind::McpServers("mcpServers"),
                "MCP server",
            ),
            (project.join("CLAUDE.md"), Kind::TriggerRule, "trigger rule"),
        ],
        (InstallClient::Cursor, false) => vec![(
            home.join(".cursor/mcp.json"),
            Kind::McpServers("mcpServers"),
            "MCP server",
        )],
        (InstallClient::Cursor, true) => vec![(
            project.join(".cursor/mcp.json"),
            Kind::McpServers("mcpServers"),
            "MCP server",
        )],
        (InstallClient::Gemini, false) => vec![(
            home.join(".gemini/settings.json"),
            Kind::McpServers("mcpServers"),
            "MCP server",
        )],
        (InstallClient::Gemini, true) => vec![(
            project.join(".gemini/settings.json"),
            Kind::McpServers("mcpServers"),
            "MCP server",
        )],
        (InstallClient::Vscode, true) => vec![(
            project.join(".vscode/mcp.json"),
            Kind::McpServers("servers"),
            "MCP server",
        )],
        (InstallClient::Vscode, false) => {
            return Err(UserError::new(
                "VS Code's user-level MCP file lives in the editor's profile, whose path aic does not guess",
                "run `aic install vscode --project` in the project (writes .vscode/mcp.json), or use VS Code's `MCP: Add Server` command",
            )
            .into());
        }
    })
}

fn read(path: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    match fs_err::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(UserError::new(
            format!("Cannot read `{}`: {error}", path.display()),
            "check its permissions; nothing was changed",
        )
        .into()),
    }
}

fn parse_json(path: &Path, bytes: Option<&[u8]>) -> anyhow::Result<Value> {
    let Some(bytes) = bytes.filter(|b| !b.iter().all(u8::is_ascii_whitespace)) else {
        return Ok(json!({}));
    };
    serde_json::from_slice(bytes).map_err(|error| {
        UserError::new(
            format!("`{}` is not valid JSON ({error})", path.display()),
            "fix the file or move it aside, then run the command again; nothing was changed",
        )
        .into()
    })
}

fn edit_failed(path: &Path, error: &EditError) -> anyhow::Error {
    UserError::new(
        format!("Cannot edit `{}`: {}", path.display(), error.message),
        "fix the file or move it aside, then run the command again; nothing was changed",
    )
    .into()
}

fn pretty(value: &Value) -> Vec<u8> {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text.into_bytes()
}

fn plan(
    path: &Path,
    kind: Kind,
    what: &'static str,
    binary: &str,
    install: bool,
) -> anyhow::Result<Edit> {
    let before = read(path)?;
    let after = match kind {
        Kind::TriggerRule => {
            let text = before
                .as_deref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            let edited = if install {
                merge_section(&text, &trigger_rule(env!("CARGO_PKG_VERSION")))
            } else {
                remove_section(&text)
            };
            if edited == text {
                before.clone()
            } else {
                Some(edited.into_bytes())
            }
        }
        Kind::ClaudeHooks | Kind::McpServers(_) => {
            let current = parse_json(path, before.as_deref())?;
            let edited = match (kind, install) {
                (Kind::ClaudeHooks, true) => merge_claude_hooks(&current, binary),
                (Kind::ClaudeHooks, false) => remove_claude_hooks(&current),
                (Kind::McpServers(key), true) => {
                    merge_mcp_server(&current, key, &mcp_entry(path, key, binary))
                }
                (Kind::McpServers(key), false) => {
                    remove_mcp_server(&current, key, &mcp_entry(path, key, binary))
                }
                (Kind::TriggerRule, _) => unreachable!("handled above"),
            }
            .map_err(|error| edit_failed(path, &error))?;
            if edited == current {
                before.clone()
            } else if !install
                && let Original::Bytes(original) = backup(path)
                && parse_json(path, Some(&original)).is_ok_and(|value| value == edited)
            {
                // What is left is what the file held before aic: its exact bytes.
                Some(original)
            } else {
                Some(pretty(&edited))
            }
        }
    };
    // Uninstalling from a file aic created leaves nothing of the user's.
    let after = match (&after, install) {
        (Some(bytes), false)
            if backup(path) == Original::Absent && is_empty_content(kind, bytes) =>
        {
            None
        }
        _ => after,
    };
    Ok(Edit {
        path: path.to_path_buf(),
        before,
        after,
        what,
    })
}

/// The MCP entry aic writes into `path` under `key`.
fn mcp_entry(path: &Path, key: &str, binary: &str) -> Value {
    let claude = path
        .file_name()
        .is_some_and(|name| name == ".claude.json" || name == ".mcp.json");
    if claude || key == "servers" {
        claude_mcp_entry(binary)
    } else {
        json!({"command": binary, "args": ["mcp"]})
    }
}

fn is_empty_content(kind: Kind, bytes: &[u8]) -> bool {
    match kind {
        Kind::TriggerRule => bytes.iter().all(u8::is_ascii_whitespace),
        _ => serde_json::from_slice::<Value>(bytes).is_ok_and(|v| v == json!({})),
    }
}

/// Where the original of `path` is kept.
fn backup_paths(path: &Path) -> Option<(PathBuf, PathBuf)> {
    let hash = ContentHash::of(path.to_string_lossy().as_bytes()).to_hex();
    aic_home().map(|home| {
        let dir = home.join("install-backups");
        (
            dir.join(format!("{hash}.orig")),
            dir.join(format!("{hash}.absent")),
        )
    })
}

/// The original of a file, as its first install found it.
#[derive(PartialEq, Eq)]
enum Original {
    /// No backup: aic never installed into this file (or it was uninstalled).
    Unknown,
    /// The file did not exist.
    Absent,
    /// Its bytes.
    Bytes(Vec<u8>),
}

/// The original of `path` from its first install.
fn backup(path: &Path) -> Original {
    let Some((orig, absent)) = backup_paths(path) else {
        return Original::Unknown;
    };
    if absent.exists() {
        return Original::Absent;
    }
    fs_err::read(orig).map_or(Original::Unknown, Original::Bytes)
}

fn apply(edit: &Edit, install: bool) -> anyhow::Result<()> {
    if let Some((orig, absent)) = backup_paths(&edit.path) {
        if install && !orig.exists() && !absent.exists() {
            if let Some(parent) = orig.parent() {
                fs_err::create_dir_all(parent)?;
            }
            match &edit.before {
                Some(bytes) => fs_err::write(&orig, bytes)?,
                None => fs_err::write(&absent, b"")?,
            }
        } else if !install {
            let _ = fs_err::remove_file(&orig);
            let _ = fs_err::remove_file(&absent);
        }
    }
    // A symlinked file (a dotfiles setup) is written through the link.
    let is_link = fs_err::symlink_metadata(&edit.path).is_ok_and(|m| m.file_type().is_symlink());
    let target = if is_link {
        fs_err::canonicalize(&edit.path)?
    } else {
        edit.path.clone()
    };
    match &edit.after {
        None => fs_err::remove_file(&edit.path)?,
        Some(bytes) => {
            let dir = target
                .parent()
                .context("A configuration file has no parent directory")?;
            fs_err::create_dir_all(dir)?;
            let mut file = tempfile::NamedTempFile::new_in(dir)
                .with_context(|| format!("Cannot write in `{}`", dir.display()))?;
            std::io::Write::write_all(&mut file, bytes)?;
            // Keep the file's mode; a new file is 0644 like any editor's (a
            // temp file is created 0600).
            if let Ok(metadata) = fs_err::metadata(&target) {
                file.as_file().set_permissions(metadata.permissions())?;
            } else {
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    file.as_file()
                        .set_permissions(std::fs::Permissions::from_mode(0o644))?;
                }
            }
            file.persist(&target)
                .with_context(|| format!("Cannot replace `{}`", target.display()))?;
        }
    }
    Ok(())
}
