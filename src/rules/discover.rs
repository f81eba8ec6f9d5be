//! Finding a project's rule and hook files, and the hooks registered twice.

use std::path::Path;

use serde::Serialize;

use crate::rules::Finding;
use crate::rules::hooks::{self, Registration, doubled_hooks};

/// What a rule file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleFileKind {
    /// Standing instructions in prose.
    Instructions,
    /// Hook registrations (editor settings) or a hook script (git).
    Hooks,
}

/// When an instruction file is paid for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "when", content = "of")]
pub enum Applies {
    /// On every prompt.
    Always,
    /// When the agent works under this directory (a nested `CLAUDE.md`).
    Directory(String),
    /// When a file matching one of these globs is in play (`.mdc` globs).
    Globs(Vec<String>),
    /// Only when asked for by name (an `.mdc` rule with neither).
    Manual,
    /// Not an instruction file (hooks).
    Never,
}

impl Applies {
    /// Whether an agent that reads an instruction under `other` always
    /// reads one under `self` too: every prompt covers every scope; a
    /// directory covers itself and the directories under it; a set of globs
    /// only the same set. Two nested `CLAUDE.md` files of sibling
    /// directories cover neither: no agent reads both at once.
    pub fn covers(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Never, _) | (_, Self::Never) => false,
            (Self::Always, _) => true,
            (Self::Directory(outer), Self::Directory(inner)) => {
                inner == outer
                    || inner
                        .strip_prefix(outer.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            }
            (Self::Globs(a), Self::Globs(b)) => a == b,
            _ => false,
        }
    }
}

/// One rule or hook file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuleFile {
    /// Relative to the project root, or under `~/` for a user file.
    pub path: String,
    /// The client that reads it: `claude`, `codex`, `gemini`, `cursor`,
    /// `copilot`, `windsurf`, `git`.
    pub client: &'static str,
    /// `project` or `user`.
    pub scope: &'static str,
    /// What it holds.
    pub kind: RuleFileKind,
    /// Its tokens (`cl100k_base`); 0 when unreadable.
    pub tokens: u64,
    /// When it is paid for.
    pub applies: Applies,
}

/// What discovery found: the files with their texts (same order), the
/// project's files for glob checks, and the hook findings.
pub(super) struct Discovered {
    pub(super) files: Vec<RuleFile>,
    pub(super) texts: Vec<String>,
    pub(super) tracked: Vec<String>,
    pub(super) hook_findings: Vec<Finding>,
}

/// Instruction files read wherever they are in the project, by name.
const INSTRUCTION_NAMES: &[(&str, &str)] = &[
    ("CLAUDE.md", "claude"),
    ("CLAUDE.local.md", "claude"),
    ("AGENTS.md", "codex"),
    ("GEMINI.md", "gemini"),
];

/// Editor settings files that register hooks, relative to the project root
/// (and to the home directory for the user level).
const HOOK_SETTINGS: &[(&str, &str)] = &[
    (".claude/settings.json", "claude"),
    (".claude/settings.local.json", "claude"),
    (".cursor/hooks.json", "cursor"),
    (".gemini/settings.json", "gemini"),
];

/// User-level instruction files, relative to the home directory.
const USER_INSTRUCTIONS: &[(&str, &str)] = &[
    (".claude/CLAUDE.md", "claude"),
    (".codex/AGENTS.md", "codex"),
    (".gemini/GEMINI.md", "gemini"),
];

/// The rule and hook files of the project at `root` (walked with the
/// project's ignore files), then those of the user under `home`.
pub(super) fn discover(root: &Path, home: Option<&Path>) -> Discovered {
    let mut found = Discovered {
        files: Vec::new(),
        texts: Vec::new(),
        tracked: Vec::new(),
        hook_findings: Vec::new(),
    };
    let mut paths: Vec<String> = ignore::WalkBuilder::new(root)
        .hidden(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build()
        .filter_map(Result::ok)
        // A linked rule file (`CLAUDE.md -> AGENTS.md`) is read like any
        // other; the walk does not follow links into directories.
        .filter(|entry| {
            entry
                .file_type()
                .is_some_and(|t| t.is_file() || (t.is_symlink() && entry.path().is_file()))
        })
        .filter_map(|entry| {
            entry
                .path()
                .strip_prefix(root)
                .ok()
                .map(|p| p.to_string_lossy().replace('\\', "/"))
        })
        .collect();
    paths.sort();
    for path in &paths {
        let name = path.rsplit('/').next().unwrap_or(path);
        let directory = path.rsplit_once('/').map(|(d, _)| d);
        // `None`: an `.mdc` rule, which says in its front matter.
        let (client, applies) =
            if let Some((_, client)) = INSTRUCTION_NAMES.iter().find(|(n, _)| *n == name) {
                let applies = match directory {
                    None | Some(".claude") => Applies::Always,
                    Some(d) => Applies::Directory(d.to_owned()),
                };
                (*client, Some(applies))
            } else if path == ".cursorrules" {
                ("cursor", Some(Applies::Always))
            } else if path == ".windsurfrules" {
                ("windsurf", Some(Applies::Always))
            } else if path == ".github/copilot-instructions.md" {
                ("copilot", Some(Applies::Always))
            } else if path.starts_with(".cursor/rules/")
                && Path::new(path)
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("mdc"))
            {
                ("cursor", None)
            } else {
                continue;
            };
        let text = read_text(&root.join(path));
        let applies = applies.unwrap_or_else(|| mdc_applies(&text));
        push(
            &mut found,
            text,
            path.clone(),
            client,
            "project",
            RuleFileKind::Instructions,
            applies,
        );
    }
    let mut registrations = Vec::new();
    let settings = HookBase {
        root,
        home,
        prefix: "",
        scope: "project",
    };
    hook_settings(&mut found, &mut registrations, root, &settings);
    git_hooks(root, &mut found);
    if let Some(home) = home {
        for (relative, client) in USER_INSTRUCTIONS {
            let full = home.join(relative);
            if full.is_file() {
                push(
                    &mut found,
                    read_text(&full),
                    format!("~/{relative}"),
                    client,
                    "user",
                    RuleFileKind::Instructions,
                    Applies::Always,
                );
            }
        }
        let settings = HookBase {
            prefix: "~/",
            scope: "user",
            ..settings
        };
        hook_settings(&mut found, &mut registrations, home, &settings);
    }
    found.hook_findings = doubled_hooks(&registrations);
    found.tracked = paths;
    found
}

/// The text of `full`, empty when it cannot be read.
fn read_text(full: &Path) -> String {
    fs_err::read_to_string(full).unwrap_or_default()
}

/// Adds one file with its text.
fn push(
    found: &mut Discovered,
    text: String,
    path: String,
    client: &'static str,
    scope: &'static str,
    kind: RuleFileKind,
    applies: Applies,
) {
    found.files.push(RuleFile {
        path,
        client,
        scope,
        kind,
        tokens: 0,
        applies,
    });
    found.texts.push(text);
}

/// Where a level's hook settings are shown and what their commands' paths
/// lead to.
#[derive(Clone, Copy)]
struct HookBase<'a> {
    /// The project root (the directory hook commands run in).
    root: &'a Path,
    /// The user's home directory.
    home: Option<&'a Path>,
    /// Put before a settings file's path: `""` or `~/`.
    prefix: &'static str,
    /// `project` or `user`.
    scope: &'static str,
}

/// The editor settings files under `base` that register hooks, added with
/// their registrations.
fn hook_settings(
    found: &mut Discovered,
    registrations: &mut Vec<Registration>,
    base: &Path,
    settings: &HookBase<'_>,
) {
    for (relative, client) in HOOK_SETTINGS {
        let full = base.join(relative);
        if !full.is_file() {
            continue;
        }
        let shown = format!("{}{relative}", settings.prefix);
        let text = read_text(&full);
        registrations.extend(hooks::registrations(
            &shown,
            &text,
            settings.root,
            settings.home,
        ));
        push(
            found,
            text,
            shown,
            client,
            settings.scope,
            RuleFileKind::Hooks,
            Applies::Never,
        );
    }
}

/// When a `.mdc` rule applies, from its front matter: `alwaysApply: true`,
/// else its `globs` (a comma-separated string or a YAML list), else only
/// when asked for.
fn mdc_applies(text: &str) -> Applies {
    let Some(rest) = text.strip_prefix("---") else {
        return Applies::Manual;
    };
    let front = rest.split("\n---").next().unwrap_or("");
    let mut globs = Vec::new();
    let mut in_list = false;
    for line in front.lines() {
        let trimmed = line.trim();
        if let Some(value) = trimmed.strip_prefix("alwaysApply:") {
            if value.trim() == "true" {
                return Applies::Always;
            }
            in_list = false;
        } else if let Some(value) = trimmed.strip_prefix("globs:") {
            let value = value.trim().trim_start_matches('[').trim_end_matches(']');
            globs.extend(
                value
                    .split(',')
                    .map(|g| g.trim().trim_matches(['"', '\'']).to_owned())
                    .filter(|g| !g.is_empty()),
            );
            in_list = value.is_empty();
        } else if in_list && let Some(item) = trimmed.strip_prefix('-') {
            let glob = item.trim().trim_matches(['"', '\'']);
            if !glob.is_empty() {
                globs.push(glob.to_owned());
            }
        } else {
            in_list = false;
        }
    }
    if globs.is_empty() {
        Applies::Manual
    } else {
        Applies::Globs(globs)
    }
}

/// The project's git hooks: executable files under `.git/hooks` that are
/// not the shipped `*.sample` files.
fn git_hooks(root: &Path, found: &mut Discovered) {
    let Ok(entries) = fs_err::read_dir(root.join(".git/hooks")) else {
        return;
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !name.ends_with(".sample"))
        .collect();
    names.sort();
    for name in names {
        push(
            found,
            read_text(&root.join(".git/hooks").join(&name)),
            format!(".git/hooks/{name}"),
            "git",
            "project",
            RuleFileKind::Hooks,
            Applies::Never,
        );
    }
}
