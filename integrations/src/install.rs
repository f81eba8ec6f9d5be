//! What `aic install` writes into editor configuration files, as pure edits of
//! parsed JSON: merge aic's entries in, take them out, and leave every other
//! entry as it was.
//!
//! aic's hook handlers are recognised by their command line: a program whose
//! file name starts with `aic` run with `hook <editor> …` (exec form
//! `command` + `args` for Claude Code, one shell command line for Codex and
//! Cursor), so an entry left by an older install (another path to the
//! binary, other options) is replaced, not duplicated.

use serde_json::{Map, Value, json};

/// One hook handler aic registers: the event, its matcher, and the check the
/// handler runs (the last argument of `aic hook <editor> <event> [check]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HookSpec {
    /// The event, as the editor names it.
    pub event: &'static str,
    /// The matcher, when the handler applies to some tools or sources only.
    pub matcher: Option<&'static str>,
    /// The check, for events with several aic handlers (`no-verify`,
    /// `compile-gate`).
    pub check: Option<&'static str>,
}

const fn spec(
    event: &'static str,
    matcher: Option<&'static str>,
    check: Option<&'static str>,
) -> HookSpec {
    HookSpec {
        event,
        matcher,
        check,
    }
}

/// Which optional handlers an install adds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HookOptions {
    /// `--with-gates`: the edit tracker, the Stop quality gate and the
    /// `--no-verify` blocker.
    pub gates: bool,
    /// `--with-compile-gate`: refuse other tools until the turn called
    /// `aic_compile`.
    pub compile_gate: bool,
}

/// The Claude Code events aic registers, with their matchers.
pub const CLAUDE_HOOKS: [(&str, Option<&str>); 5] = [
    ("UserPromptSubmit", None),
    ("SessionStart", Some("startup|resume|clear|compact|fork")),
    ("SubagentStart", None),
    ("SubagentStop", None),
    ("SessionEnd", None),
];

/// The Claude Code handlers of an install: the context
/// events of [`CLAUDE_HOOKS`], the conversation id for `aic_compile` calls,
/// and the opt-in gates.
pub fn claude_hooks(options: HookOptions) -> Vec<HookSpec> {
    let mut specs: Vec<HookSpec> = CLAUDE_HOOKS
        .iter()
        .map(|(event, matcher)| spec(event, *matcher, None))
        .collect();
    specs.push(spec("PreToolUse", Some("mcp__.*__aic_compile"), None));
    if options.gates {
        specs.push(spec(
            "PostToolUse",
            Some("Edit|Write|MultiEdit|NotebookEdit"),
            None,
        ));
        specs.push(spec("Stop", None, None));
        specs.push(spec("PreToolUse", Some("Bash"), Some("no-verify")));
    }
    if options.compile_gate {
        specs.push(spec("PreToolUse", None, Some("compile-gate")));
    }
    specs
}

/// The Codex CLI handlers of an install (Claude-shaped hooks in `hooks.json`):
/// session and prompt context, and the opt-in gates.
pub fn codex_hooks(options: HookOptions) -> Vec<HookSpec> {
    let mut specs = vec![
        spec("SessionStart", Some("startup|resume|clear"), None),
        spec("UserPromptSubmit", None, None),
    ];
    if options.gates {
        specs.push(spec("PostToolUse", Some("apply_patch|Edit|Write"), None));
        specs.push(spec("Stop", None, None));
        specs.push(spec("PreToolUse", Some("Bash"), Some("no-verify")));
    }
    specs
}

/// The Cursor handlers of an install: session context,
/// the turn start, the conversation id for aic's MCP calls, subagent
/// reparenting and cleanup; the opt-in gates; the optional compile gate
/// (fails open: no `failClosed`).
pub fn cursor_hooks(options: HookOptions) -> Vec<HookSpec> {
    let mut specs = vec![
        spec("sessionStart", None, None),
        spec("beforeSubmitPrompt", None, None),
        spec("preToolUse", Some("MCP"), None),
        spec("subagentStart", None, None),
        spec("subagentStop", None, None),
        spec("sessionEnd", None, None),
    ];
    if options.gates {
        specs.push(spec("afterFileEdit", None, None));
        specs.push(spec("stop", None, None));
        specs.push(spec("beforeShellExecution", Some("git"), None));
    }
    if options.compile_gate {
        specs.push(spec("preToolUse", None, Some("compile-gate")));
    }
    specs
}

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

/// The command line of a handler: `command` + `args` (exec form), or the
/// shell words of `command` (shell form, `None` when it cannot be split).
fn argv(handler: &Value) -> Option<Vec<String>> {
    let command = handler.get("command").and_then(Value::as_str)?;
    match handler.get("args").and_then(Value::as_array) {
        Some(args) => {
            let mut words = vec![command.to_owned()];
            words.extend(args.iter().filter_map(Value::as_str).map(str::to_owned));
            Some(words)
        }
        None => shlex::split(command),
    }
}

/// Whether a hook handler object is one aic installed for `editor`
/// (`claude`, `codex`, `cursor`): a command whose file name starts with
/// `aic` (`aic`, `aic.exe`, `aic-0.2.0`) run with `hook <editor>`. For
/// Claude Code only the exec form counts: a shell-form handler there
/// (`"command": "aic hook claude …"`) is one the user wrote, and is left
/// alone.
pub fn is_aic_handler_for(handler: &Value, editor: &str) -> bool {
    let exec_form = handler.get("args").is_some();
    if editor == "claude" && !exec_form {
        return false;
    }
    let Some(argv) = argv(handler) else {
        return false;
    };
    // The program: a path that may hold spaces (`C:\\Users\\Jane Doe\\…`):
    // exec form gives it whole, shell form quoted.
    let named_aic = argv.first().is_some_and(|program| is_aic_program(program));
    named_aic && argv.len() >= 3 && argv[1] == "hook" && argv[2] == editor
}

/// [`is_aic_handler_for`] Claude Code.
pub fn is_aic_handler(handler: &Value) -> bool {
    is_aic_handler_for(handler, "claude")
}

/// The handler object aic writes for `spec`: exec form for Claude Code, a
/// shell command line (the binary quoted when it needs it) for the others.
fn handler_for(editor: &str, binary: &str, spec: &HookSpec) -> Value {
    let mut args = vec!["hook".to_owned(), editor.to_owned(), spec.event.to_owned()];
    if let Some(check) = spec.check {
        args.push(check.to_owned());
    }
    if editor == "claude" {
        return json!({"type": "command", "command": binary, "args": args});
    }
    let mut line =
        shlex::try_quote(binary).map_or_else(|_| binary.to_owned(), std::borrow::Cow::into_owned);
    for arg in &args {
        line.push(' ');
        line.push_str(arg);
    }
    json!({"type": "command", "command": line})
}

fn expected_argvs(editor: &str, binary: &str, specs: &[HookSpec]) -> Vec<(String, Vec<String>)> {
    let mut expected: Vec<(String, Vec<String>)> = specs
        .iter()
        .filter_map(|spec| {
            argv(&handler_for(editor, binary, spec)).map(|argv| (spec.event.to_owned(), argv))
        })
        .collect();
    expected.sort();
    expected
}

/// `settings` with every aic hook handler of `editor` removed from a
/// Claude-shaped `hooks` object (Claude Code settings, Codex `hooks.json`):
/// groups left empty are dropped, then events left empty, then `hooks` if it
/// is left empty.
///
/// # Errors
///
/// [`EditError`] when `settings` or its `hooks` has a shape the editor would
/// not accept (not an object, an event that is not an array).
pub fn remove_grouped_hooks(settings: &Value, editor: &str) -> Result<Value, EditError> {
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
                handlers.retain(|handler| !is_aic_handler_for(handler, editor));
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

/// [`remove_grouped_hooks`] for Claude Code.
///
/// # Errors
///
/// As [`remove_grouped_hooks`].
pub fn remove_claude_hooks(settings: &Value) -> Result<Value, EditError> {
    remove_grouped_hooks(settings, "claude")
}

/// `settings` with aic's handlers for `specs`, running `binary`, after any
/// earlier aic handler of `editor` is removed; unchanged when exactly those
/// handlers are there already (a handler the user tuned with a `timeout` or
/// a wider matcher still counts).
///
/// # Errors
///
/// As [`remove_grouped_hooks`].
pub fn merge_grouped_hooks(
    settings: &Value,
    editor: &str,
    binary: &str,
    specs: &[HookSpec],
) -> Result<Value, EditError> {
    if found_argvs(settings, editor, true) == Some(expected_argvs(editor, binary, specs)) {
        return Ok(settings.clone());
    }
    let Value::Object(mut settings) = remove_grouped_hooks(settings, editor)? else {
        unreachable!("remove_grouped_hooks returns an object")
    };
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(events) = hooks else {
        return Err(error("`hooks` is not an object"));
    };
    for spec in specs {
        let mut group = Map::new();
        if let Some(matcher) = spec.matcher {
            group.insert("matcher".to_owned(), json!(matcher));
        }
        group.insert(
            "hooks".to_owned(),
            json!([handler_for(editor, binary, spec)]),
        );
        let groups = events
            .entry(spec.event.to_owned())
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(list) = groups else {
            return Err(error(format!("`hooks.{}` is not an array", spec.event)));
        };
        list.push(Value::Object(group));
    }
    Ok(Value::Object(settings))
}

/// [`merge_grouped_hooks`] for Claude Code with the default handlers.
///
/// # Errors
///
/// As [`remove_grouped_hooks`].
pub fn merge_claude_hooks(settings: &Value, binary: &str) -> Result<Value, EditError> {
    merge_grouped_hooks(
        settings,
        "claude",
        binary,
        &claude_hooks(HookOptions::default()),
    )
}

/// The aic handlers of `editor` in `settings`, as sorted (event, command
/// line) pairs; `None` when the shape is not one the editor accepts.
/// `grouped`: Claude-shaped groups (`{matcher, hooks: [...]}`) rather than
/// Cursor's flat entries.
pub fn found_argvs(
    settings: &Value,
    editor: &str,
    grouped: bool,
) -> Option<Vec<(String, Vec<String>)>> {
    let events = settings.get("hooks")?.as_object()?;
    let mut found = Vec::new();
    for (event, entries) in events {
        for entry in entries.as_array()? {
            let handlers: Vec<&Value> = if grouped {
                entry
                    .get("hooks")
                    .and_then(Value::as_array)
                    .map(|h| h.iter().collect())
                    .unwrap_or_default()
            } else {
                vec![entry]
            };
            for handler in handlers {
                if is_aic_handler_for(handler, editor)
                    && let Some(argv) = argv(handler)
                {
                    found.push((event.clone(), argv));
                }
            }
        }
    }
    found.sort();
    Some(found)
}

/// The aic handlers a settings file should hold, as [`found_argvs`] reports
/// them: for `aic doctor` to tell a current install from a stale one.
pub fn expected_handlers(
    editor: &str,
    binary: &str,
    specs: &[HookSpec],
) -> Vec<(String, Vec<String>)> {
    expected_argvs(editor, binary, specs)
}

/// `hooks` (Cursor's `hooks.json`) without aic's entries; events left empty
/// are dropped, then `hooks` and `version` when nothing else is left.
///
/// # Errors
///
/// [`EditError`] when the file or its `hooks` has a shape Cursor would not
/// accept.
pub fn remove_cursor_hooks(config: &Value) -> Result<Value, EditError> {
    let mut config = object(config, "the hooks file")?.clone();
    let Some(hooks) = config.get_mut("hooks") else {
        return Ok(Value::Object(config));
    };
    let Value::Object(events) = hooks else {
        return Err(error("`hooks` is not an object"));
    };
    for (event, entries) in events.iter_mut() {
        let Value::Array(list) = entries else {
            return Err(error(format!("`hooks.{event}` is not an array")));
        };
        list.retain(|entry| !is_aic_handler_for(entry, "cursor"));
    }
    events.retain(|_, entries| entries.as_array().is_none_or(|list| !list.is_empty()));
    if events.is_empty() {
        config.remove("hooks");
        if config.len() == 1 && config.get("version") == Some(&json!(1)) {
            config.remove("version");
        }
    }
    Ok(Value::Object(config))
}

/// `config` (Cursor's `hooks.json`) with aic's entries for `specs` running
/// `binary` (flat entries); unchanged when exactly those
/// are there already.
///
/// # Errors
///
/// As [`remove_cursor_hooks`].
pub fn merge_cursor_hooks(
    config: &Value,
    binary: &str,
    specs: &[HookSpec],
) -> Result<Value, EditError> {
    if found_argvs(config, "cursor", false) == Some(expected_argvs("cursor", binary, specs)) {
        return Ok(config.clone());
    }
    let Value::Object(mut config) = remove_cursor_hooks(config)? else {
        unreachable!("remove_cursor_hooks returns an object")
    };
    if !config.contains_key("version") {
        config.insert("version".to_owned(), json!(1));
    }
    let hooks = config
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(events) = hooks else {
        return Err(error("`hooks` is not an object"));
    };
    for spec in specs {
        let mut entry = handler_for("cursor", binary, spec);
        if let Some(matcher) = spec.matcher {
            entry["matcher"] = json!(matcher);
        }
        if spec.event == "sessionStart" {
            entry["timeout"] = json!(20);
        }
        let Value::Array(list) = events
            .entry(spec.event.to_owned())
            .or_insert_with(|| Value::Array(Vec::new()))
        else {
            return Err(error(format!("`hooks.{}` is not an array", spec.event)));
        };
        list.push(entry);
    }
    Ok(Value::Object(config))
}

/// `config` with `config[key].aic = entry` (an MCP server registration:
/// `mcpServers` for Claude Code, Cursor and Gemini, `servers` for VS Code).
/// An `aic` entry of the user's own (with its `env`, say) is kept; one an
/// earlier install wrote for another binary path is replaced.
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
    match servers.get("aic") {
        // The user's own registration (its own `env`, other settings) stays.
        Some(found) if found == entry || !is_aic_mcp_entry(found) => {}
        // Absent, or written by an aic install naming another binary path
        // (an older install): this install's entry.
        _ => {
            servers.insert("aic".to_owned(), entry.clone());
        }
    }
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
        if map
            .get("aic")
            .is_some_and(|found| found == entry || is_aic_mcp_entry(found))
        {
            map.remove("aic");
        }
        if map.is_empty() {
            config.remove(key);
        }
    }
    Ok(Value::Object(config))
}

/// Whether an MCP registration is one an aic install wrote, whatever binary
/// path it names: only `type`/`source`/`command`/`args` (and an empty
/// `env`), `args` exactly `["mcp"]`, a command whose file name starts with
/// `aic`. One with its own `env` or other settings is the user's.
pub fn is_aic_mcp_entry(entry: &Value) -> bool {
    let Some(map) = entry.as_object() else {
        return false;
    };
    let known = map.iter().all(|(key, value)| match key.as_str() {
        "type" | "source" | "command" | "args" => true,
        "env" => value.as_object().is_some_and(Map::is_empty),
        _ => false,
    });
    known
        && map.get("args") == Some(&json!(["mcp"]))
        && map
            .get("command")
            .and_then(Value::as_str)
            .is_some_and(is_aic_program)
}

/// Whether a program path names an aic binary (`aic`, `/opt/bin/aic`,
/// `/Users/Jane Doe/bin/aic-0.2.0`).
fn is_aic_program(command: &str) -> bool {
    std::path::Path::new(command)
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.starts_with("aic"))
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

/// The markers around aic's section of a Markdown file: CLAUDE.md (Claude
/// Code) and AGENTS.md (Codex CLI) have their own, so a CLAUDE.md that is a
/// link to AGENTS.md holds both sections.
const SECTION_BEGIN: &str = "<!-- aic:begin -->";
const SECTION_END: &str = "<!-- aic:end -->";
const CODEX_SECTION_BEGIN: &str = "<!-- aic:codex:begin -->";
const CODEX_SECTION_END: &str = "<!-- aic:codex:end -->";

/// The markers of `client`'s section.
fn markers(client: &str) -> (&'static str, &'static str) {
    if client.starts_with("codex") {
        (CODEX_SECTION_BEGIN, CODEX_SECTION_END)
    } else {
        (SECTION_BEGIN, SECTION_END)
    }
}

/// The trigger rule for CLAUDE.md (Claude Code) or AGENTS.md (Codex CLI), as
/// a managed, version-stamped section: facts, not imperatives.
/// `client` names the `aic uninstall` arguments that remove it (`claude`,
/// `codex --project`); its first word picks the section's markers.
pub fn trigger_rule(version: &str, client: &str) -> String {
    let (begin, end) = markers(client);
    format!(
        "{begin}\n<!-- managed by aic {version}; `aic uninstall {client}` removes it -->\n## aic\n\naic, the Agent Input Compiler, is installed. Its MCP tool `aic_compile` (arguments: `intent`, the task in the user's words, and optionally `conversationId`) returns the repository context relevant to a task, with secrets removed, sized to a token budget. Hooks may already have added that context to the conversation.\n{end}\n"
    )
}

/// The stamp that marks `.cursor/rules/AIC.mdc` as aic's.
const CURSOR_RULE_STAMP: &str = "<!-- aic rule version: ";

/// Cursor's trigger rule, `.cursor/rules/AIC.mdc`: always
/// applied, version-stamped. Cursor hooks cannot add context to each message,
/// so the rule is what asks the model to call `aic_compile`.
///
/// `uninstall` names the command that removes it (`aic uninstall cursor
/// --project`).
pub fn cursor_rule(version: &str, uninstall: &str) -> String {
    format!(
        "---\ndescription: aic (Agent Input Compiler) compiles the repository context for each request\nglobs:\nalwaysApply: true\n---\n{CURSOR_RULE_STAMP}{version}; `{uninstall}` removes this file -->\n# aic\n\naic, the Agent Input Compiler, is installed as the MCP server `aic`. Its tool `aic_compile` returns the repository files relevant to a request: ranked, with secrets removed, compressed to a token budget.\n\n- At the start of each new user message, call `aic_compile` once, before reading or searching files, with `intent` set to the user's request in their own words (a search-like phrase: \"fix the null check in UserService.login\").\n- Use the files it returns as the starting point; read further files only when they are missing from it.\n- When the task changes within the conversation, call it again with the new intent.\n"
    )
}

/// What an install does with an existing `.cursor/rules/AIC.mdc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleState {
    /// aic's rule of this version: leave it.
    Current,
    /// aic's rule of another version: replace it.
    Stale,
    /// A file aic did not write: leave it, and say so.
    Foreign,
}

/// Classifies an existing rule file's text for `version`.
pub fn cursor_rule_state(text: &str, version: &str) -> RuleState {
    match text.find(CURSOR_RULE_STAMP) {
        None => RuleState::Foreign,
        Some(at) if text[at + CURSOR_RULE_STAMP.len()..].starts_with(&format!("{version};")) => {
            RuleState::Current
        }
        Some(_) => RuleState::Stale,
    }
}

/// The `[mcp_servers.aic]` table aic writes into Codex CLI's `config.toml`.
fn codex_entry(binary: &str) -> toml_edit::Table {
    let mut table = toml_edit::Table::new();
    table["command"] = toml_edit::value(binary);
    let mut args = toml_edit::Array::new();
    args.push("mcp");
    table["args"] = toml_edit::value(args);
    table
}

/// The command of a Codex `[mcp_servers.aic]` table when it has the shape
/// aic writes (`command` and `args = ["mcp"]`, nothing else).
fn codex_entry_command(entry: &dyn toml_edit::TableLike) -> Option<&str> {
    let args_ok = entry
        .get("args")
        .and_then(toml_edit::Item::as_array)
        .is_some_and(|args| args.len() == 1 && args.get(0).and_then(|a| a.as_str()) == Some("mcp"));
    (entry.len() == 2 && args_ok)
        .then(|| entry.get("command").and_then(toml_edit::Item::as_str))
        .flatten()
        .filter(|command| is_aic_program(command))
}

fn parse_toml(text: &str) -> Result<toml_edit::DocumentMut, EditError> {
    text.parse::<toml_edit::DocumentMut>()
        .map_err(|e| error(format!("not valid TOML ({})", e.to_string().trim())))
}

/// Codex CLI's `config.toml` with `[mcp_servers.aic]` running `binary mcp`
/// formatting and comments kept; an `aic` entry already there
/// (the user's own) is kept as it is.
///
/// # Errors
///
/// [`EditError`] when the text is not TOML or `mcp_servers` is not a table.
pub fn merge_codex_server(text: &str, binary: &str) -> Result<String, EditError> {
    let mut doc = parse_toml(text)?;
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut table = toml_edit::Table::new();
            table.set_implicit(true);
            toml_edit::Item::Table(table)
        })
        .as_table_like_mut()
        .ok_or_else(|| error("`mcp_servers` is not a table"))?;
    let stale = servers
        .get("aic")
        .and_then(toml_edit::Item::as_table_like)
        .is_some_and(|entry| codex_entry_command(entry).is_some_and(|command| command != binary));
    if servers.get("aic").is_none() || stale {
        servers.insert("aic", toml_edit::Item::Table(codex_entry(binary)));
    }
    Ok(doc.to_string())
}

/// Codex CLI's `config.toml` without `[mcp_servers.aic]` when it is the
/// entry aic writes (a registration of the user's own stays), and without
/// `mcp_servers` when that leaves it empty.
///
/// # Errors
///
/// As [`merge_codex_server`].
pub fn remove_codex_server(text: &str, binary: &str) -> Result<String, EditError> {
    let mut doc = parse_toml(text)?;
    let Some(servers) = doc.get_mut("mcp_servers") else {
        return Ok(text.to_owned());
    };
    let servers = servers
        .as_table_like_mut()
        .ok_or_else(|| error("`mcp_servers` is not a table"))?;
    let ours = servers
        .get("aic")
        .and_then(toml_edit::Item::as_table_like)
        .and_then(codex_entry_command)
        .is_some_and(|command| command == binary || is_aic_program(command));
    if !ours {
        return Ok(text.to_owned());
    }
    servers.remove("aic");
    if servers.is_empty() {
        doc.remove("mcp_servers");
    }
    Ok(doc.to_string())
}

/// Whether Codex CLI's `config.toml` text registers an `aic` server.
pub fn codex_has_server(text: &str) -> bool {
    parse_toml(text).is_ok_and(|doc| {
        doc.get("mcp_servers")
            .and_then(toml_edit::Item::as_table_like)
            .is_some_and(|servers| servers.get("aic").is_some())
    })
}

fn parse_jsonc(text: &str) -> Result<jsonc_parser::cst::CstRootNode, EditError> {
    jsonc_parser::cst::CstRootNode::parse(text, &jsonc_parser::ParseOptions::default())
        .map_err(|e| error(format!("not valid JSON with comments ({e})")))
}

/// The `context_servers.aic` entry aic writes into Zed's settings.
pub fn zed_entry(binary: &str) -> Value {
    json!({"source": "custom", "command": binary, "args": ["mcp"], "env": {}})
}

fn to_input(value: &Value) -> jsonc_parser::cst::CstInputValue {
    use jsonc_parser::cst::CstInputValue as Input;
    match value {
        Value::Null => Input::Null,
        Value::Bool(b) => Input::Bool(*b),
        Value::Number(n) => Input::Number(n.to_string()),
        Value::String(s) => Input::String(s.clone()),
        Value::Array(items) => Input::Array(items.iter().map(to_input).collect()),
        Value::Object(map) => Input::Object(
            map.iter()
                .map(|(key, value)| (key.clone(), to_input(value)))
                .collect(),
        ),
    }
}

/// Zed's `settings.json` (JSON with comments and trailing commas) with
/// `context_servers.aic` running `binary mcp`; every comment and the rest of
/// the text kept as it was. An `aic` entry already there is kept.
///
/// # Errors
///
/// [`EditError`] when the text is not JSONC, or the root or
/// `context_servers` is not an object.
pub fn merge_zed_server(text: &str, binary: &str) -> Result<String, EditError> {
    let root = parse_jsonc(text)?;
    let object = match root.value() {
        None => root.object_value_or_set(),
        Some(_) => root
            .object_value()
            .ok_or_else(|| error("the settings file is not a JSON object"))?,
    };
    let servers = match object.get("context_servers") {
        None => object.object_value_or_set("context_servers"),
        Some(_) => object
            .object_value("context_servers")
            .ok_or_else(|| error("`context_servers` is not an object"))?,
    };
    match servers.get("aic") {
        None => {
            servers.append("aic", to_input(&zed_entry(binary)));
        }
        Some(prop) => {
            let found = prop.value().and_then(|v| v.to_serde_value());
            if found.is_some_and(|found| found != zed_entry(binary) && is_aic_mcp_entry(&found)) {
                prop.set_value(to_input(&zed_entry(binary)));
            }
        }
    }
    Ok(root.to_string())
}

/// Zed's `settings.json` without `context_servers.aic` when it is the entry
/// aic writes, and without `context_servers` when that leaves it empty.
///
/// # Errors
///
/// As [`merge_zed_server`].
pub fn remove_zed_server(text: &str, binary: &str) -> Result<String, EditError> {
    let root = parse_jsonc(text)?;
    let Some(object) = root.object_value() else {
        return Ok(text.to_owned());
    };
    let Some(servers) = object.object_value("context_servers") else {
        return Ok(text.to_owned());
    };
    let Some(entry) = servers.get("aic") else {
        return Ok(text.to_owned());
    };
    let found = entry.value().and_then(|v| v.to_serde_value());
    if !found.is_some_and(|found| found == zed_entry(binary) || is_aic_mcp_entry(&found)) {
        return Ok(text.to_owned());
    }
    entry.remove();
    if servers.properties().is_empty()
        && let Some(prop) = object.get("context_servers")
    {
        prop.remove();
    }
    Ok(root.to_string())
}

/// Whether Zed's settings text registers an `aic` context server.
pub fn zed_has_server(text: &str) -> bool {
    parse_jsonc(text).is_ok_and(|root| {
        root.object_value()
            .and_then(|o| o.object_value("context_servers"))
            .is_some_and(|servers| servers.get("aic").is_some())
    })
}

/// `text` with `client`'s aic section replaced by `section` (appended when
/// absent).
pub fn merge_section(text: &str, section: &str, client: &str) -> String {
    let stripped = remove_section(text, client);
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

/// `text` without `client`'s aic section (and the blank line before it).
pub fn remove_section(text: &str, client: &str) -> String {
    let (begin_marker, end_marker) = markers(client);
    let (Some(begin), Some(end)) = (text.find(begin_marker), text.find(end_marker)) else {
        return text.to_owned();
    };
    if end < begin {
        return text.to_owned();
    }
    let after = end + end_marker.len();
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
    fn handlers_of_a_binary_path_with_spaces_are_aics() {
        assert!(is_aic_handler(
            &json!({"command": "/Users/Jane Doe/bin/aic", "args": ["hook", "claude", "Stop"]})
        ));
        assert!(is_aic_handler_for(
            &json!({"command": "'/Users/Jane Doe/bin/aic' hook cursor stop"}),
            "cursor"
        ));
        let specs = claude_hooks(HookOptions::default());
        let once =
            merge_grouped_hooks(&json!({}), "claude", "/Users/Jane Doe/aic", &specs).unwrap();
        assert_eq!(
            merge_grouped_hooks(&once, "claude", "/Users/Jane Doe/aic", &specs).unwrap(),
            once
        );
        assert_eq!(remove_claude_hooks(&once).unwrap(), json!({}));
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
        // An entry an older install wrote for another binary path is replaced.
        let stale =
            merge_mcp_server(&config, "mcpServers", &claude_mcp_entry("/gone/aic")).unwrap();
        let fresh = merge_mcp_server(&stale, "mcpServers", &claude_mcp_entry("/new/aic")).unwrap();
        assert_eq!(fresh["mcpServers"]["aic"]["command"], "/new/aic");
        let spaced =
            json!({"mcpServers": {"aic": {"command": "/Users/Jane Doe/bin/aic", "args": ["mcp"]}}});
        assert_eq!(
            remove_mcp_server(&spaced, "mcpServers", &claude_mcp_entry("aic")).unwrap(),
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
        let once = merge_section(user, &trigger_rule("0.1.0", "claude"), "claude");
        assert!(once.starts_with(user));
        assert_eq!(
            merge_section(&once, &trigger_rule("0.1.0", "claude"), "claude"),
            once
        );
        assert_eq!(remove_section(&once, "claude"), user);
        let alone = merge_section("", &trigger_rule("1", "claude"), "claude");
        assert_eq!(remove_section(&alone, "claude"), "");
        // A CLAUDE.md linked to AGENTS.md holds both clients' sections.
        let both = merge_section(&once, &trigger_rule("0.1.0", "codex --project"), "codex");
        assert!(both.contains("aic:begin") && both.contains("aic:codex:begin"));
        assert_eq!(
            remove_section(&remove_section(&both, "codex"), "claude"),
            user
        );
    }

    #[test]
    fn codex_config_keeps_its_comments_and_the_users_servers() {
        let text =
            "# my codex config\nmodel = \"o5\"\n\n[mcp_servers.other]\ncommand = \"x\" # keep\n";
        let merged = merge_codex_server(text, "aic").unwrap();
        assert!(merged.starts_with(text), "{merged}");
        assert!(merged.contains("[mcp_servers.aic]\ncommand = \"aic\"\nargs = [\"mcp\"]"));
        assert!(codex_has_server(&merged));
        assert_eq!(merge_codex_server(&merged, "aic").unwrap(), merged);
        assert_eq!(remove_codex_server(&merged, "aic").unwrap(), text);
        let alone = merge_codex_server("", "/b/aic").unwrap();
        assert_eq!(
            alone,
            "[mcp_servers.aic]\ncommand = \"/b/aic\"\nargs = [\"mcp\"]\n"
        );
        assert_eq!(remove_codex_server(&alone, "/b/aic").unwrap(), "");
        let own = "[mcp_servers.aic]\ncommand = \"aic\"\nargs = [\"mcp\"]\nenv = { A = \"1\" }\n";
        assert_eq!(remove_codex_server(own, "aic").unwrap(), own);
        assert!(merge_codex_server("mcp_servers = 3\n", "aic").is_err());
        assert!(merge_codex_server("[broken\n", "aic").is_err());
    }

    #[test]
    fn zed_settings_keep_comments_and_trailing_commas() {
        let text = "// Zed settings\n{\n  // theme\n  \"theme\": \"One Dark\",\n}\n";
        let merged = merge_zed_server(text, "aic").unwrap();
        assert!(
            merged.contains("// Zed settings") && merged.contains("// theme"),
            "{merged}"
        );
        assert!(zed_has_server(&merged));
        let value: Value = parse_jsonc(&merged).unwrap().to_serde_value().unwrap();
        assert_eq!(value["context_servers"]["aic"], zed_entry("aic"));
        assert_eq!(value["theme"], "One Dark");
        assert_eq!(merge_zed_server(&merged, "aic").unwrap(), merged);
        let removed = remove_zed_server(&merged, "aic").unwrap();
        let value: Value = parse_jsonc(&removed).unwrap().to_serde_value().unwrap();
        assert_eq!(value, json!({"theme": "One Dark"}));
        assert!(removed.contains("// theme"));
        assert!(merge_zed_server("[1]", "aic").is_err());
        assert!(merge_zed_server("{\"context_servers\": 2}", "aic").is_err());
        assert!(merge_zed_server("{ broken", "aic").is_err());
        assert!(zed_has_server(&merge_zed_server("", "aic").unwrap()));
    }

    #[test]
    fn cursor_hooks_are_flat_entries_beside_the_users() {
        let config = json!({"version": 1, "hooks": {"stop": [{"command": "./notify.sh"}]}});
        let specs = cursor_hooks(HookOptions {
            gates: true,
            compile_gate: false,
        });
        let merged = merge_cursor_hooks(&config, "/opt/my tools/aic", &specs).unwrap();
        assert_eq!(merged["hooks"]["stop"][0]["command"], "./notify.sh");
        assert_eq!(
            merged["hooks"]["stop"][1]["command"],
            "'/opt/my tools/aic' hook cursor stop"
        );
        assert_eq!(merged["hooks"]["preToolUse"][0]["matcher"], "MCP");
        assert_eq!(
            merge_cursor_hooks(&merged, "/opt/my tools/aic", &specs).unwrap(),
            merged
        );
        // Fewer options: the gate entries go.
        let fewer = merge_cursor_hooks(
            &merged,
            "/opt/my tools/aic",
            &cursor_hooks(HookOptions::default()),
        )
        .unwrap();
        assert_eq!(fewer["hooks"]["stop"].as_array().unwrap().len(), 1);
        assert_eq!(remove_cursor_hooks(&merged).unwrap(), config);
        let alone = merge_cursor_hooks(&json!({}), "aic", &specs).unwrap();
        assert_eq!(remove_cursor_hooks(&alone).unwrap(), json!({}));
    }

    #[test]
    fn gate_options_add_handlers_with_their_checks() {
        let specs = claude_hooks(HookOptions {
            gates: true,
            compile_gate: true,
        });
        let merged = merge_grouped_hooks(&json!({}), "claude", "aic", &specs).unwrap();
        let pre = merged["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 3);
        assert_eq!(pre[1]["matcher"], "Bash");
        assert_eq!(
            pre[1]["hooks"][0]["args"],
            json!(["hook", "claude", "PreToolUse", "no-verify"])
        );
        assert!(pre[2].get("matcher").is_none());
        assert_eq!(
            merged["hooks"]["Stop"][0]["hooks"][0]["args"],
            json!(["hook", "claude", "Stop"])
        );
        let codex = merge_grouped_hooks(
            &json!({}),
            "codex",
            "aic",
            &codex_hooks(HookOptions::default()),
        )
        .unwrap();
        assert_eq!(
            codex["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
            "aic hook codex UserPromptSubmit"
        );
        assert!(is_aic_handler_for(
            &codex["hooks"]["UserPromptSubmit"][0]["hooks"][0],
            "codex"
        ));
        assert_eq!(remove_grouped_hooks(&codex, "codex").unwrap(), json!({}));
    }

    #[test]
    fn the_cursor_rule_is_aics_only_when_stamped() {
        let rule = cursor_rule("0.1.0", "aic uninstall cursor --project");
        assert!(rule.starts_with("---\n"));
        assert!(rule.contains("alwaysApply: true"));
        assert_eq!(cursor_rule_state(&rule, "0.1.0"), RuleState::Current);
        assert_eq!(cursor_rule_state(&rule, "0.2.0"), RuleState::Stale);
        assert_eq!(
            cursor_rule_state("my own rule", "0.1.0"),
            RuleState::Foreign
        );
    }
}
