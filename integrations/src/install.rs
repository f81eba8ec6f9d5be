//! What `aic install` writes into editor configuration files, as pure edits of
//! parsed JSON (integrations brief §1.7, §1.10, §2.4, §3): merge aic's entries
//! in, take them out, and leave every other entry as it was.
//!
//! aic's Claude Code hook handlers are recognised by their arguments
//! (`["hook", "claude", …]`) and a command whose file name is `aic`, so an
//! entry left by an older install (another path to the binary) is replaced,
//! not duplicated.

use serde_json::{Map, Value, json};

/// The Claude Code events aic registers, with their matchers (brief §0.4).
pub const CLAUDE_HOOKS: [(&str, Option<&str>); 5] = [
    ("UserPromptSubmit", None),
    ("SessionStart", Some("startup|resume|clear|compact|fork")),
    ("SubagentStart", None),
    ("SubagentStop", None),
    ("SessionEnd", None),
];

/// Why a file cannot be edited.
#[derive(Debug, PartialEq, Eq)]
pub struct EditError {
    /// What is wrong, naming the JSON location.
    pub message: String,
}

fn error(message: impl Into<String>) -> EditError {
    EditError {
        message: message.into(),
    }
}

/// Whether a hook handler object is one aic installed: exec form, a command
/// whose file name starts with `aic` (`aic`, `aic.exe`, `aic-0.2.0`), and
/// arguments starting `hook claude`. A shell-form handler the user wrote
/// (`"command": "aic hook claude …"`) is the user's and is left alone.
pub fn is_aic_handler(handler: &Value) -> bool {
    let command = handler
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let named_aic = !command.contains(char::is_whitespace)
        && std::path::Path::new(command)
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.starts_with("aic"));
    let args: Vec<&str> = handler
        .get("args")
        .and_then(Value::as_array)
        .map(|args| args.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    named_aic && args.starts_with(&["hook", "claude"])
}

/// `settings` with every aic hook handler removed (groups left empty are
/// dropped, then events left empty, then `hooks` if it is left empty).
///
/// # Errors
///
/// [`EditError`] when `settings` or its `hooks` has a shape Claude Code would
/// not accept (not an object, an event that is not an array).
pub fn remove_claude_hooks(settings: &Value) -> Result<Value, EditError> {
    let mut settings = object(settings, "the settings file")?.clone();
    let Some(hooks) = settings.get_mut("hooks") else {
        return Ok(Value::Object(settings));
    };
    let Value::Object(events) = hooks else {
        return Err(error("`hooks` is not an object"));
    };
    for (event, groups) in events.iter_mut() {
        let Value::Array(list) = groups else {
            return Err(error(format!("`hooks.{event}` is not an array")));
        };
        for group in list.iter_mut() {
            if let Some(Value::Array(handlers)) = group.get_mut("hooks") {
                handlers.retain(|handler| !is_aic_handler(handler));
            }
        }
        list.retain(|group| {
            group
                .get("hooks")
                .and_then(Value::as_array)
                .is_none_or(|handlers| !handlers.is_empty())
        });
    }
    events.retain(|_, groups| groups.as_array().is_none_or(|list| !list.is_empty()));
    if events.is_empty() {
        settings.remove("hooks");
    }
    Ok(Value::Object(settings))
}

/// `settings` with aic's hook handlers for [`CLAUDE_HOOKS`], running `binary`
/// in exec form, after any earlier aic handler is removed.
///
/// # Errors
///
/// As [`remove_claude_hooks`].
pub fn merge_claude_hooks(settings: &Value, binary: &str) -> Result<Value, EditError> {
    if has_exact_claude_hooks(settings, binary) {
        return Ok(settings.clone());
    }
    let Value::Object(mut settings) = remove_claude_hooks(settings)? else {
        unreachable!("remove_claude_hooks returns an object")
    };
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(events) = hooks else {
        return Err(error("`hooks` is not an object"));
    };
    for (event, matcher) in CLAUDE_HOOKS {
        let mut group = Map::new();
        if let Some(matcher) = matcher {
            group.insert("matcher".to_owned(), json!(matcher));
        }
        group.insert(
            "hooks".to_owned(),
            json!([{
                "type": "command",
                "command": binary,
                "args": ["hook", "claude", event],
            }]),
        );
        let groups = events
            .entry(event.to_owned())
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(list) = groups else {
            return Err(error(format!("`hooks.{event}` is not an array")));
        };
        list.push(Value::Object(group));
    }
    Ok(Value::Object(settings))
}

/// Whether `settings` already holds aic's handlers: one per event of
/// [`CLAUDE_HOOKS`] running `binary`, and no other aic handler. A handler the
/// user tuned (a `timeout`, a wider matcher) still counts: the same command
/// for the same event is enough.
fn has_exact_claude_hooks(settings: &Value, binary: &str) -> bool {
    let Some(events) = settings.get("hooks").and_then(Value::as_object) else {
        return false;
    };
    let mut found = 0;
    for (event, groups) in events {
        let Some(groups) = groups.as_array() else {
            return false;
        };
        for group in groups {
            let handlers = group.get("hooks").and_then(Value::as_array);
            for handler in handlers.into_iter().flatten() {
                if !is_aic_handler(handler) {
                    continue;
                }
                let ok = CLAUDE_HOOKS.iter().any(|(name, _)| name == event)
                    && handler.get("command").and_then(Value::as_str) == Some(binary)
                    && handler.get("args") == Some(&json!(["hook", "claude", event]));
                if !ok {
                    return false;
                }
                found += 1;
            }
        }
    }
    found == CLAUDE_HOOKS.len()
}

/// `config` with `config[key].aic = entry` (an MCP server registration:
/// `mcpServers` for Claude Code, Cursor and Gemini, `servers` for VS Code).
/// An `aic` entry already there (the user's own, with its `env` say) is kept.
///
/// # Errors
///
/// [`EditError`] when `config` or `config[key]` is not an object.
pub fn merge_mcp_server(config: &Value, key: &str, entry: &Value) -> Result<Value, EditError> {
    let mut config = object(config, "the configuration file")?.clone();
    let servers = config
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        return Err(error(format!("`{key}` is not an object")));
    };
    servers
        .entry("aic".to_owned())
        .or_insert_with(|| entry.clone());
    Ok(Value::Object(config))
}

/// `config` without `config[key].aic` when it is `entry` (what install
/// wrote; a registration of the user's own stays), and without `config[key]`
/// when that leaves it empty.
///
/// # Errors
///
/// As [`merge_mcp_server`].
pub fn remove_mcp_server(config: &Value, key: &str, entry: &Value) -> Result<Value, EditError> {
    let mut config = object(config, "the configuration file")?.clone();
    if let Some(servers) = config.get_mut(key) {
        let Value::Object(map) = servers else {
            return Err(error(format!("`{key}` is not an object")));
        };
        if map.get("aic") == Some(entry) {
            map.remove("aic");
        }
        if map.is_empty() {
            config.remove(key);
        }
    }
    Ok(Value::Object(config))
}

/// The MCP registration of `binary` for Claude Code (`~/.claude.json`,
/// `.mcp.json`): a stdio server running `aic mcp`.
pub fn claude_mcp_entry(binary: &str) -> Value {
    json!({"type": "stdio", "command": binary, "args": ["mcp"]})
}

fn object<'a>(value: &'a Value, what: &str) -> Result<&'a Map<String, Value>, EditError> {
    value
        .as_object()
        .ok_or_else(|| error(format!("{what} is not a JSON object")))
}

/// The markers around aic's section of a Markdown file (CLAUDE.md).
const SECTION_BEGIN: &str = "<!-- aic:begin -->";
const SECTION_END: &str = "<!-- aic:end -->";

/// The trigger rule: facts, not imperatives (brief §1.3).
pub fn trigger_rule(version: &str) -> String {
    format!(
        "{SECTION_BEGIN}\n<!-- managed by aic {version}; `aic uninstall claude` removes it -->\n## aic\n\naic, the Agent Input Compiler, is installed. Its MCP tool `aic_compile` (arguments: `intent`, the task in the user's words, and optionally `conversationId`) returns the repository context relevant to a task, with secrets removed, sized to a token budget. Hooks may already have added that context to the conversation.\n{SECTION_END}\n"
    )
}

/// `text` with aic's section replaced by `section` (appended when absent).
pub fn merge_section(text: &str, section: &str) -> String {
    let stripped = remove_section(text);
    if stripped.is_empty() {
        return section.to_owned();
    }
    let separator = if stripped.ends_with("\n\n") {
        ""
    } else if stripped.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    };
    format!("{stripped}{separator}{section}")
}

/// `text` without aic's section (and the blank line before it).
pub fn remove_section(text: &str) -> String {
    let (Some(begin), Some(end)) = (text.find(SECTION_BEGIN), text.find(SECTION_END)) else {
        return text.to_owned();
    };
    if end < begin {
        return text.to_owned();
    }
    let after = end + SECTION_END.len();
    let after = if text[after..].starts_with('\n') {
        after + 1
    } else {
        after
    };
    let before = text[..begin].trim_end_matches('\n');
    let rest = &text[after..];
    match (before.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_owned(),
        (false, true) => format!("{before}\n"),
        (false, false) => format!("{before}\n\n{rest}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_merge_beside_the_users_and_replace_stale_aic_entries() {
        let settings = json!({
            "model": "opus",
            "hooks": {
                "UserPromptSubmit": [
                    {"hooks": [{"type": "command", "command": "/usr/bin/my-hook"}]},
                    {"hooks": [{"type": "command", "command": "/old/path/aic", "args": ["hook", "claude", "UserPromptSubmit"]}]}
                ],
                "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
            }
        });
        let merged = merge_claude_hooks(&settings, "/new/bin/aic").unwrap();
        let prompt = merged["hooks"]["UserPromptSubmit"].as_array().unwrap();
        assert_eq!(prompt.len(), 2);
        assert_eq!(prompt[0]["hooks"][0]["command"], "/usr/bin/my-hook");
        assert_eq!(prompt[1]["hooks"][0]["command"], "/new/bin/aic");
        assert_eq!(
            merged["hooks"]["SessionStart"][0]["matcher"],
            "startup|resume|clear|compact|fork"
        );
        assert_eq!(merged["hooks"]["Stop"], settings["hooks"]["Stop"]);
        assert_eq!(merged["model"], "opus");
        // Idempotent.
        assert_eq!(merge_claude_hooks(&merged, "/new/bin/aic").unwrap(), merged);
        // Removal gives back the user's own entries.
        let removed = remove_claude_hooks(&merged).unwrap();
        assert_eq!(
            removed,
            json!({"model": "opus", "hooks": {
                "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "/usr/bin/my-hook"}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
            }})
        );
    }

    #[test]
    fn shapes_claude_code_rejects_are_refused() {
        assert!(merge_claude_hooks(&json!([]), "aic").is_err());
        assert!(merge_claude_hooks(&json!({"hooks": 3}), "aic").is_err());
        assert!(merge_claude_hooks(&json!({"hooks": {"Stop": {}}}), "aic").is_err());
        assert!(merge_mcp_server(&json!({"mcpServers": []}), "mcpServers", &json!({})).is_err());
    }

    #[test]
    fn only_exec_form_handlers_are_aics() {
        assert!(!is_aic_handler(
            &json!({"command": "aic hook claude SessionStart"})
        ));
        assert!(is_aic_handler(
            &json!({"command": "/opt/aic-0.2.0", "args": ["hook", "claude", "X"]})
        ));
        assert!(!is_aic_handler(&json!({"command": "aic compile x"})));
        assert!(!is_aic_handler(
            &json!({"command": "/bin/other", "args": ["hook", "claude"]})
        ));
    }

    #[test]
    fn mcp_entries_merge_and_go() {
        let config = json!({"mcpServers": {"other": {"command": "x"}}, "numStartups": 3});
        let merged = merge_mcp_server(&config, "mcpServers", &claude_mcp_entry("/b/aic")).unwrap();
        assert_eq!(merged["mcpServers"]["aic"]["args"], json!(["mcp"]));
        assert_eq!(
            remove_mcp_server(&merged, "mcpServers", &claude_mcp_entry("/b/aic")).unwrap(),
            config
        );
        let alone = merge_mcp_server(&json!({}), "mcpServers", &json!({})).unwrap();
        assert_eq!(
            remove_mcp_server(&alone, "mcpServers", &json!({})).unwrap(),
            json!({})
        );
        // The user's own registration is neither replaced nor removed.
        let own = json!({"mcpServers": {"aic": {"command": "aic", "args": ["mcp"], "env": {"AIC_HOME": "/d"}}}});
        assert_eq!(
            merge_mcp_server(&own, "mcpServers", &claude_mcp_entry("aic")).unwrap(),
            own
        );
        assert_eq!(
            remove_mcp_server(&own, "mcpServers", &claude_mcp_entry("aic")).unwrap(),
            own
        );
    }

    #[test]
    fn the_trigger_rule_section_is_replaced_in_place_and_removed_cleanly() {
        let user = "# My rules\n\nUse tabs.\n";
        let once = merge_section(user, &trigger_rule("0.1.0"));
        assert!(once.starts_with(user));
        assert_eq!(merge_section(&once, &trigger_rule("0.1.0")), once);
        assert_eq!(remove_section(&once), user);
        assert_eq!(remove_section(&merge_section("", &trigger_rule("1"))), "");
    }
}
