//! `aic install <client> [--project] [--dry-run] [--with-gates]
//! [--with-compile-gate]` and `aic uninstall <client> [--project]`: register
//! aic with an editor (what each gets: `docs/claude-code.md` and the other
//! client pages): its MCP server, and where the editor has them its hooks
//! and trigger rule.
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
    EditError, HookOptions, HookSpec, RuleState, claude_hooks, claude_mcp_entry, codex_hooks,
    cursor_hooks, cursor_rule, cursor_rule_state, merge_codex_server, merge_cursor_hooks,
    merge_grouped_hooks, merge_mcp_server, merge_section, merge_zed_server, remove_codex_server,
    remove_cursor_hooks, remove_grouped_hooks, remove_mcp_server, remove_section,
    remove_zed_server, trigger_rule,
};
use aic_stages::content_hash::ContentHash;
use anyhow::Context;
use serde_json::{Value, json};

use crate::args::{EditorTarget, InstallArgs, InstallClient, UninstallArgs};
use crate::error::UserError;
use crate::host::Host;
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
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Claude-shaped hook settings (Claude Code `settings.json`, Codex
    /// `hooks.json`) with aic's handlers for this editor (`claude`, `codex`).
    GroupedHooks(&'static str),
    /// Cursor's `hooks.json`: flat entries.
    CursorHooks,
    /// An MCP server registry under this key.
    McpServers(&'static str),
    /// A Markdown file with aic's managed section; the client that removes it.
    TriggerRule(&'static str),
    /// Cursor's `.cursor/rules/AIC.mdc`, a file that is all aic's.
    CursorRule,
    /// Codex CLI's `config.toml`.
    CodexConfig,
    /// Zed's `settings.json` (JSON with comments).
    ZedSettings,
}

/// One file a client's install touches.
pub(crate) struct Target {
    /// The file.
    pub(crate) path: PathBuf,
    /// What it holds.
    pub(crate) kind: Kind,
    /// What it is, for reports.
    pub(crate) what: &'static str,
}

impl Kind {
    /// The handlers an install writes into a hooks file.
    pub(crate) fn hook_specs(self, options: HookOptions) -> Vec<HookSpec> {
        match self {
            Self::GroupedHooks("claude") => claude_hooks(options),
            Self::GroupedHooks(_) => codex_hooks(options),
            Self::CursorHooks => cursor_hooks(options),
            _ => Vec::new(),
        }
    }
}

/// `aic install`.
pub fn install(args: &InstallArgs, host: &Host) -> anyhow::Result<()> {
    let options = HookOptions {
        gates: args.with_gates,
        compile_gate: args.with_compile_gate,
    };
    run(&args.target, options, true, host)
}

/// `aic uninstall`.
pub fn uninstall(args: &UninstallArgs, host: &Host) -> anyhow::Result<()> {
    run(&args.target, HookOptions::default(), false, host)
}

fn run(
    args: &EditorTarget,
    options: HookOptions,
    install: bool,
    host: &Host,
) -> anyhow::Result<()> {
    let backups = Backups(host.home().map(|home| home.dir().join("install-backups")));
    let exe = std::env::current_exe()
        .and_then(fs_err::canonicalize)
        .context("Cannot find the path of this aic binary")?;
    // Files under the project are shared (committed): they name `aic` and
    // leave finding it to PATH. User files name `aic` too when PATH finds this
    // very binary, so an upgrade or a rebuild elsewhere does not break them;
    // otherwise they name this binary's absolute path.
    let on_path = path_lookup("aic").is_some_and(|found| found == exe);
    let binary = if args.project || on_path {
        "aic".to_owned()
    } else {
        exe.to_string_lossy().into_owned()
    };
    if args.root.is_some() && !args.project {
        return Err(UserError::new(
            "--root names the project of a --project install; without --project aic writes your user files",
            "add --project to write the project's files, or drop --root",
        )
        .into());
    }
    let root = args.root.clone().unwrap_or_else(|| PathBuf::from("."));
    let project = fs_err::canonicalize(&root).map_err(|_| {
        UserError::new(
            format!(
                "The project `{}` is not an existing directory",
                root.display()
            ),
            "pass the project's directory with --root",
        )
    })?;
    if args.project && crate::root::refuse_broad(&project).is_err() {
        return Err(UserError::new(
            format!(
                "`{}` is your home directory or the filesystem root, not a project",
                project.display()
            ),
            "run the command in the project's directory, or pass it with --root",
        )
        .into());
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| UserError::new("HOME is not set", "set HOME to your home directory"))?;
    check_options(args.client, options)?;
    let mut targets = targets(args.client, args.project, &project, &home)?;
    let mut report = String::new();
    // Cursor runs every hooks.json it finds and merges the MCP files: a
    // project install beside a user install would run each handler twice.
    if install && args.project && matches!(args.client, InstallClient::Cursor) {
        skip_cursor_user_duplicates(&home, &project, options, &mut targets, &mut report)?;
    }
    if install && !on_path && binary == "aic" && edits_name_binary(&targets) {
        tracing::warn!(
            "`aic` is not on PATH (or is another binary): the project's files run `aic` from PATH"
        );
    }
    let mut edits = Vec::new();
    for target in &targets {
        edits.push(plan(
            target,
            &binary,
            install,
            options,
            args.project,
            &backups,
        )?);
    }
    // Directories an install created, removed (when empty) after every file.
    let mut created_dirs: Vec<PathBuf> = Vec::new();
    for edit in &edits {
        let verb = match (&edit.before, &edit.after) {
            (before, after) if before == after => "unchanged",
            (None, Some(_)) => "create",
            (Some(_), None) => "remove",
            _ => "update",
        };
        if !args.dry_run && edit.before != edit.after {
            created_dirs.extend(apply(
                edit,
                install,
                &[home.as_path(), project.as_path()],
                &backups,
            )?);
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
    created_dirs.sort_by_key(|dir| std::cmp::Reverse(dir.components().count()));
    created_dirs.dedup();
    for dir in &created_dirs {
        if fs_err::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none()) {
            let _ = fs_err::remove_dir(dir);
        }
    }
    if install && !args.project && matches!(args.client, InstallClient::Cursor) {
        report.push_str(
            "\nCursor reads trigger rules from projects only: run `aic install cursor --project` in a project to add .cursor/rules/AIC.mdc there.\n",
        );
    }
    if install && matches!(args.client, InstallClient::Codex) {
        report.push_str(
            "\nCodex CLI runs hooks when its `hooks` feature is on (the default in recent versions; `[features] hooks = true` in config.toml otherwise).\n",
        );
    }
    print_stdout(&report).context("Failed to write to stdout")
}

/// Refuses gate options for clients without hooks.
fn check_options(client: InstallClient, options: HookOptions) -> anyhow::Result<()> {
    let gates_ok = matches!(
        client,
        InstallClient::Claude | InstallClient::Codex | InstallClient::Cursor
    );
    if options.gates && !gates_ok {
        return Err(UserError::new(
            "--with-gates needs an editor with hooks",
            "use it with `claude`, `codex` or `cursor`",
        )
        .into());
    }
    if options.compile_gate && !matches!(client, InstallClient::Claude | InstallClient::Cursor) {
        return Err(UserError::new(
            "--with-compile-gate needs an editor whose hooks can refuse a tool call and see MCP calls",
            "use it with `claude` or `cursor`",
        )
        .into());
    }
    Ok(())
}

/// The canonical path of `name` as PATH finds it.
pub(crate) fn path_lookup(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
        .and_then(|found| fs_err::canonicalize(found).ok())
}

/// The files a client's install touches.
pub(crate) fn targets(
    client: InstallClient,
    project_scope: bool,
    project: &Path,
    home: &Path,
) -> anyhow::Result<Vec<Target>> {
    let target = |path: PathBuf, kind: Kind, what: &'static str| Target { path, kind, what };
    let config_dir = std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    // With CLAUDE_CONFIG_DIR, Claude Code keeps `.claude.json` (user MCP
    // servers) in that directory too.
    let claude_json = config_dir
        .as_ref()
        .map_or_else(|| home.join(".claude.json"), |dir| dir.join(".claude.json"));
    let claude_dir = config_dir.unwrap_or_else(|| home.join(".claude"));
    let codex_dir = std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map_or_else(|| home.join(".codex"), PathBuf::from);
    let zed_dir = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map_or_else(|| home.join(".config"), PathBuf::from)
        .join("zed");
    let mcp = Kind::McpServers("mcpServers");
    Ok(match (client, project_scope) {
        (InstallClient::Claude, false) => vec![
            target(
                claude_dir.join("settings.json"),
                Kind::GroupedHooks("claude"),
                "hooks",
            ),
            target(claude_json, mcp, "MCP server"),
            target(
                claude_dir.join("CLAUDE.md"),
                Kind::TriggerRule("claude"),
                "trigger rule",
            ),
        ],
        (InstallClient::Claude, true) => vec![
            target(
                project.join(".claude/settings.json"),
                Kind::GroupedHooks("claude"),
                "hooks",
            ),
            target(project.join(".mcp.json"), mcp, "MCP server"),
            target(
                project.join("CLAUDE.md"),
                Kind::TriggerRule("claude"),
                "trigger rule",
            ),
        ],
        (InstallClient::Cursor, false) => vec![
            target(home.join(".cursor/hooks.json"), Kind::CursorHooks, "hooks"),
            target(home.join(".cursor/mcp.json"), mcp, "MCP server"),
        ],
        (InstallClient::Cursor, true) => vec![
            target(
                project.join(".cursor/hooks.json"),
                Kind::CursorHooks,
                "hooks",
            ),
            target(project.join(".cursor/mcp.json"), mcp, "MCP server"),
            target(
                project.join(".cursor/rules/AIC.mdc"),
                Kind::CursorRule,
                "trigger rule",
            ),
        ],
        (InstallClient::Codex, false) => vec![
            target(
                codex_dir.join("config.toml"),
                Kind::CodexConfig,
                "MCP server",
            ),
            target(
                codex_dir.join("hooks.json"),
                Kind::GroupedHooks("codex"),
                "hooks",
            ),
            target(
                codex_dir.join("AGENTS.md"),
                Kind::TriggerRule("codex"),
                "trigger rule",
            ),
        ],
        (InstallClient::Codex, true) => vec![
            target(
                project.join(".codex/config.toml"),
                Kind::CodexConfig,
                "MCP server",
            ),
            target(
                project.join(".codex/hooks.json"),
                Kind::GroupedHooks("codex"),
                "hooks",
            ),
            target(
                project.join("AGENTS.md"),
                Kind::TriggerRule("codex"),
                "trigger rule",
            ),
        ],
        (InstallClient::Gemini, false) => vec![target(
            home.join(".gemini/settings.json"),
            mcp,
            "MCP server",
        )],
        (InstallClient::Gemini, true) => vec![target(
            project.join(".gemini/settings.json"),
            mcp,
            "MCP server",
        )],
        (InstallClient::Vscode, true) => vec![target(
            project.join(".vscode/mcp.json"),
            Kind::McpServers("servers"),
            "MCP server",
        )],
        (InstallClient::Zed, false) => vec![target(
            zed_dir.join("settings.json"),
            Kind::ZedSettings,
            "context server",
        )],
        (InstallClient::Zed, true) => vec![target(
            project.join(".zed/settings.json"),
            Kind::ZedSettings,
            "context server",
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
    target: &Target,
    binary: &str,
    install: bool,
    options: HookOptions,
    project_scope: bool,
    backups: &Backups,
) -> anyhow::Result<Edit> {
    let scope = if project_scope { " --project" } else { "" };
    let Target { path, kind, what } = target;
    let (path, kind, what) = (path.as_path(), *kind, *what);
    let before = read(path)?;
    let text = || {
        before
            .as_deref()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default()
    };
    let keep_or = |edited: String, text: &str| {
        if edited == text {
            before.clone()
        } else {
            Some(edited.into_bytes())
        }
    };
    let after = match kind {
        Kind::TriggerRule(client) => {
            let text = text();
            let section = trigger_rule(env!("CARGO_PKG_VERSION"), &format!("{client}{scope}"));
            if install {
                keep_or(merge_section(&text, &section, client), &text)
            } else {
                let edited = remove_section(&text, client);
                match backups.original(path) {
                    // Nothing else changed since the install: the original
                    // bytes, trailing newlines and all.
                    Original::Bytes(original)
                        if edited != text
                            && merge_section(
                                &String::from_utf8_lossy(&original),
                                &section,
                                client,
                            ) == text =>
                    {
                        Some(original)
                    }
                    _ => keep_or(edited, &text),
                }
            }
        }
        Kind::CursorRule => {
            let version = env!("CARGO_PKG_VERSION");
            let rule = || cursor_rule(version, &format!("aic uninstall cursor{scope}"));
            match (before.as_deref(), install) {
                (None, true) => Some(rule().into_bytes()),
                (None, false) => None,
                (Some(bytes), _) => {
                    let state = cursor_rule_state(&String::from_utf8_lossy(bytes), version);
                    match (state, install) {
                        (RuleState::Foreign, true) => {
                            tracing::warn!(
                                "`{}` exists and was not written by aic: left as it is",
                                path.display()
                            );
                            before.clone()
                        }
                        (RuleState::Foreign, false) | (RuleState::Current, true) => before.clone(),
                        (RuleState::Stale, true) => Some(rule().into_bytes()),
                        (_, false) => None,
                    }
                }
            }
        }
        Kind::CodexConfig => {
            let text = text();
            let edited = if install {
                merge_codex_server(&text, binary)
            } else {
                remove_codex_server(&text, binary)
            }
            .map_err(|error| edit_failed(path, &error))?;
            keep_or(edited, &text)
        }
        Kind::ZedSettings => {
            let text = text();
            let edited = if install {
                merge_zed_server(&text, binary)
            } else {
                remove_zed_server(&text, binary)
            }
            .map_err(|error| edit_failed(path, &error))?;
            keep_or(edited, &text)
        }
        Kind::GroupedHooks(_) | Kind::CursorHooks | Kind::McpServers(_) => {
            let current = parse_json(path, before.as_deref())?;
            let specs = kind.hook_specs(options);
            let edited = match (kind, install) {
                (Kind::GroupedHooks(editor), true) => {
                    merge_grouped_hooks(&current, editor, binary, &specs)
                }
                (Kind::GroupedHooks(editor), false) => remove_grouped_hooks(&current, editor),
                (Kind::CursorHooks, true) => merge_cursor_hooks(&current, binary, &specs),
                (Kind::CursorHooks, false) => remove_cursor_hooks(&current),
                (Kind::McpServers(key), true) => {
                    merge_mcp_server(&current, key, &mcp_entry(path, key, binary))
                }
                (Kind::McpServers(key), false) => {
                    remove_mcp_server(&current, key, &mcp_entry(path, key, binary))
                }
                _ => unreachable!("text kinds are handled above"),
            }
            .map_err(|error| edit_failed(path, &error))?;
            if edited == current {
                before.clone()
            } else if !install
                && let Original::Bytes(original) = backups.original(path)
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
            if backups.original(path) == Original::Absent && is_empty_content(kind, bytes) =>
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
        Kind::TriggerRule(_) | Kind::CodexConfig | Kind::CursorRule => {
            bytes.iter().all(u8::is_ascii_whitespace)
        }
        Kind::ZedSettings => {
            let text = String::from_utf8_lossy(bytes);
            jsonc_parser::cst::CstRootNode::parse(&text, &jsonc_parser::ParseOptions::default())
                .ok()
                .and_then(|root| root.to_serde_value())
                .is_some_and(|v| v == json!({}))
        }
        _ => serde_json::from_slice::<Value>(bytes).is_ok_and(|v| v == json!({})),
    }
}

/// The directory of the originals of files aic installed into
/// (`<aic home>/install-backups`), when there is a home.
struct Backups(Option<PathBuf>);

impl Backups {
    /// Where the original of `path` is kept: its bytes, or a marker that it
    /// did not exist.
    fn paths(&self, path: &Path) -> Option<(PathBuf, PathBuf)> {
        let hash = ContentHash::of(path.to_string_lossy().as_bytes()).to_hex();
        self.0.as_ref().map(|dir| {
            (
                dir.join(format!("{hash}.orig")),
                dir.join(format!("{hash}.absent")),
            )
        })
    }

    /// The original of `path` from its first install.
    fn original(&self, path: &Path) -> Original {
        let Some((orig, absent)) = self.paths(path) else {
            return Original::Unknown;
        };
        if absent.exists() {
            return Original::Absent;
        }
        fs_err::read(orig).map_or(Original::Unknown, Original::Bytes)
    }
}

/// The first line of an "absent" backup marker that lists, one per line, the
/// directories the install created for the file (deepest first).
const CREATED_DIRS_HEADER: &str = "created-dirs\n";

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

/// Applies one edit. On uninstall, returns the directories the first install
/// created for the file (for the caller to remove once every file is gone).
fn apply(
    edit: &Edit,
    install: bool,
    stops: &[&Path],
    backups: &Backups,
) -> anyhow::Result<Vec<PathBuf>> {
    // The directories the first install created for a file that was absent:
    // uninstall removes those (when empty), never ones that were there before.
    let mut created: Option<Vec<PathBuf>> = None;
    if let Some((orig, absent)) = backups.paths(&edit.path) {
        if !install && let Ok(text) = fs_err::read_to_string(&absent) {
            created = text.strip_prefix(CREATED_DIRS_HEADER).map(|list| {
                list.lines()
                    .filter(|line| !line.is_empty())
                    .map(PathBuf::from)
                    .collect()
            });
        }
        if install && !orig.exists() && !absent.exists() {
            if let Some(parent) = orig.parent() {
                fs_err::create_dir_all(parent)?;
                // Backups can hold tokens (an MCP entry's `env`): private.
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    fs_err::set_permissions(parent, std::fs::Permissions::from_mode(0o700))?;
                }
            }
            if let Some(bytes) = &edit.before {
                write_private(&orig, bytes)?;
            } else {
                let mut record = CREATED_DIRS_HEADER.to_owned();
                for dir in edit.path.ancestors().skip(1).take(2) {
                    if stops.contains(&dir) || dir.exists() {
                        break;
                    }
                    record.push_str(&dir.to_string_lossy());
                    record.push('\n');
                }
                write_private(&absent, record.as_bytes())?;
            }
        } else if !install {
            let _ = fs_err::remove_file(&orig);
            let _ = fs_err::remove_file(&absent);
        }
    }
    match &edit.after {
        None => {
            fs_err::remove_file(&edit.path)?;
            if created.is_none() {
                // An install older than the record: the dot-directories left
                // empty go.
                remove_empty_config_dirs(&edit.path, stops);
            }
        }
        Some(bytes) => crate::printer::replace_file(&edit.path, bytes)?,
    }
    Ok(created.unwrap_or_default())
}

/// After removing a file aic created, removes the configuration directories
/// it leaves empty (`.cursor/rules`, `.cursor`, `.codex`, `.zed`, …): at most
/// two levels, and only dot-directories and `rules`.
fn remove_empty_config_dirs(file: &Path, stops: &[&Path]) {
    for dir in file.ancestors().skip(1).take(2) {
        if stops.contains(&dir) {
            break;
        }
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let config_dir = name.starts_with('.') || name == "rules";
        let empty = fs_err::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none());
        if !config_dir || !empty || fs_err::remove_dir(dir).is_err() {
            break;
        }
    }
}

/// Writes a file only its owner can read (mode 0600 on Unix).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = fs_err::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use fs_err::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    std::io::Write::write_all(&mut file, bytes)
}

/// Whether any of `targets` names the binary (hooks or an MCP entry).
fn edits_name_binary(targets: &[Target]) -> bool {
    targets
        .iter()
        .any(|target| !matches!(target.kind, Kind::TriggerRule(_) | Kind::CursorRule))
}

/// A file's JSON, when it exists and parses.
fn read_value(path: &Path) -> Option<Value> {
    let text = fs_err::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// For a Cursor project install: drops the project's `hooks.json` and
/// `mcp.json` from `targets` when the user install already has aic's (saying
/// so in `report`), and refuses when the user's hooks were installed with
/// other options than `options` (the project would silently lose or double
/// the gates).
fn skip_cursor_user_duplicates(
    home: &Path,
    project: &Path,
    options: HookOptions,
    targets: &mut Vec<Target>,
    report: &mut String,
) -> anyhow::Result<()> {
    // Handlers without their program: the user file may name another path.
    let tails = |found: Vec<(String, Vec<String>)>| {
        let mut tails: Vec<(String, Vec<String>)> = found
            .into_iter()
            .map(|(event, argv)| (event, argv.into_iter().skip(1).collect()))
            .collect();
        tails.sort();
        tails
    };
    let user_hooks = home.join(".cursor/hooks.json");
    let user_found = read_value(&user_hooks)
        .and_then(|value| aic_integrations::install::found_argvs(&value, "cursor", false))
        .unwrap_or_default();
    if !user_found.is_empty() {
        let wanted = aic_integrations::install::expected_handlers(
            "cursor",
            "aic",
            &Kind::CursorHooks.hook_specs(options),
        );
        if tails(user_found) != tails(wanted) {
            return Err(UserError::new(
                format!(
                    "{} already runs aic's Cursor hooks with other options, and Cursor runs both files",
                    user_hooks.display()
                ),
                "change the user install instead (`aic install cursor` with the options you want), or remove it first (`aic uninstall cursor`)",
            )
            .into());
        }
        targets.retain(|target| target.kind != Kind::CursorHooks);
        let _ = writeln!(
            report,
            "{:>14}  {}  (hooks: {} already runs aic's, and Cursor runs both files)",
            "skipped",
            project.join(".cursor/hooks.json").display(),
            user_hooks.display()
        );
    }
    let user_mcp = home.join(".cursor/mcp.json");
    if read_value(&user_mcp).is_some_and(|value| value["mcpServers"].get("aic").is_some()) {
        targets.retain(|target| target.kind != Kind::McpServers("mcpServers"));
        let _ = writeln!(
            report,
            "{:>14}  {}  (MCP server: {} already registers `aic`)",
            "skipped",
            project.join(".cursor/mcp.json").display(),
            user_mcp.display()
        );
    }
    Ok(())
}
