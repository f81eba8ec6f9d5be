//! The specification's prompt commands ("show aic status", …) as MCP prompts
//! (`prompts/list`, `prompts/get`; `docs/mcp.md`, "Prompts").
//!
//! A client that lists server prompts as commands (Claude Code shows them as
//! `/mcp__aic__status`) offers them without the user knowing the words. Each
//! prompt is one user message that tells the model which aic tool to call,
//! with which arguments, and how to present the answer. The prompts hold no
//! data: the tool call made from them does the work.

use rmcp::ErrorData as McpError;
use rmcp::model::{GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role};
use serde_json::{Map, Value};

/// One prompt command.
struct PromptCommand {
    /// The prompt's name (`prompts/get`'s `name`).
    name: &'static str,
    /// The words a user says for it in the specification.
    title: &'static str,
    /// What it shows.
    description: &'static str,
    /// The aic tool the model is told to call.
    tool: &'static str,
    /// The optional string arguments passed on to the tool: name, description.
    arguments: &'static [(&'static str, &'static str)],
    /// How the model presents the tool's answer.
    present: &'static str,
}

const PROJECT_ROOT: (&str, &str) = (
    "projectRoot",
    "The project's directory; left out, the tool uses the client's workspace root.",
);

/// The prompt commands, in the specification's order.
const COMMANDS: [PromptCommand; 6] = [
    PromptCommand {
        name: "status",
        title: "show aic status",
        description: "The project's aic status: compilations, token reduction, budget use, guard findings, the agents' rule files and installation checks, as a table.",
        tool: "aic_status",
        arguments: &[PROJECT_ROOT],
        present: "Show the answer as a two-column Markdown table (Field, Value): one row per field, a nested object as `parent.child` rows, empty and null fields left out. Put every installation problem or warning the answer names after the table, one line each with the fix it gives.",
    },
    PromptCommand {
        name: "last",
        title: "show aic last",
        description: "The most recent compilation: its intent, task class, files and tokens, and the files it selected, as tables.",
        tool: "aic_last",
        arguments: &[PROJECT_ROOT],
        present: "Show `lastCompilation` as a two-column Markdown table (Field, Value), then `promptSummary` in one line. When `selection` is not null, add a second table of the selected files (path, tier, tokens, score) in the order given. Say so plainly when there has been no compilation yet.",
    },
    PromptCommand {
        name: "chat-summary",
        title: "show aic chat summary",
        description: "Compilation statistics of the current conversation, as a table.",
        tool: "aic_chat_summary",
        arguments: &[
            (
                "conversationId",
                "The conversation to summarise; left out, the current one (pass the id you were given, if any).",
            ),
            PROJECT_ROOT,
        ],
        present: "If you know the current conversation's id and none was given here, pass it as `conversationId`. Show the answer as a two-column Markdown table (Field, Value), one row per field, nested objects as `parent.child` rows.",
    },
    PromptCommand {
        name: "quality",
        title: "show aic quality",
        description: "aic's rolling-window quality metrics (as `aic quality` prints them), as a table.",
        tool: "aic_quality_report",
        arguments: &[
            (
                "windowDays",
                "The window in days (a whole number; default 7).",
            ),
            PROJECT_ROOT,
        ],
        present: "Show the metrics as a Markdown table (Metric, Value), percentages with one decimal, then any series the answer holds (per day or per task class) as a second table with one row per entry.",
    },
    PromptCommand {
        name: "projects",
        title: "show aic projects",
        description: "Every project aic has compiled for, as a table.",
        tool: "aic_projects",
        arguments: &[],
        present: "Show one Markdown table row per project with its fields as columns (root, compilations, last compilation …), in the order given. Say so plainly when the list is empty.",
    },
    PromptCommand {
        name: "model-test",
        title: "run aic model test",
        description: "Checks that the model can use aic: challenges, an aic_compile call, then validation, reported as a pass/fail table.",
        tool: "aic_model_test",
        arguments: &[PROJECT_ROOT],
        present: "The answer holds challenges and instructions: solve the challenges, make the aic_compile call it asks for, then call aic_model_test again with the `probeId` and your answers, within the time it gives. Show the final answer as a Markdown table (Test, Result, Note) with ✅ for a pass and ❌ for a failure, and a one-line verdict.",
    },
];

/// The prompts `prompts/list` answers with, in the specification's order.
pub fn prompts() -> Vec<Prompt> {
    COMMANDS
        .iter()
        .map(|command| {
            let arguments: Vec<PromptArgument> = command
                .arguments
                .iter()
                .map(|(name, description)| {
                    let mut argument = PromptArgument::new(*name);
                    argument.description = Some((*description).to_owned());
                    argument.required = Some(false);
                    argument
                })
                .collect();
            let mut prompt = Prompt::new(
                command.name,
                Some(command.description),
                (!arguments.is_empty()).then_some(arguments),
            );
            prompt.title = Some(command.title.to_owned());
            prompt
        })
        .collect()
}

/// The answer to `prompts/get` for `name` with `arguments`.
///
/// # Errors
///
/// JSON-RPC −32602 (invalid params) for an unknown prompt, an argument the
/// prompt does not take, or an argument that is not a string (MCP prompt
/// arguments are strings).
pub fn get(name: &str, arguments: Option<&JsonObject>) -> Result<GetPromptResult, McpError> {
    let Some(command) = COMMANDS.iter().find(|command| command.name == name) else {
        let names: Vec<&str> = COMMANDS.iter().map(|command| command.name).collect();
        return Err(McpError::invalid_params(
            format!(
                "unknown prompt `{name}`: aic's prompts are {}",
                names.join(", ")
            ),
            None,
        ));
    };
    let mut passed = Map::new();
    for (key, value) in arguments.into_iter().flatten() {
        if !command.arguments.iter().any(|(known, _)| known == key) {
            return Err(McpError::invalid_params(
                format!(
                    "prompt `{name}` takes no argument `{key}`{}",
                    takes(command)
                ),
                None,
            ));
        }
        let Value::String(text) = value else {
            return Err(McpError::invalid_params(
                format!("prompt `{name}`: argument `{key}` must be a string"),
                None,
            ));
        };
        if text.trim().is_empty() {
            continue;
        }
        let value = if key == "windowDays" {
            let Some(number) = text
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|days| (1..=365).contains(days))
            else {
                return Err(McpError::invalid_params(
                    format!(
                        "prompt `{name}`: argument `windowDays` must be a whole number of days from 1 to 365, not `{}`",
                        text.trim()
                    ),
                    None,
                ));
            };
            Value::from(number)
        } else {
            Value::String(text.trim().to_owned())
        };
        passed.insert(key.clone(), value);
    }
    let call = Value::Object(passed).to_string();
    // The model test asks for one `aic_compile` call of its own; the other
    // commands only present what their tool returns.
    let only = if command.tool == "aic_model_test" {
        "Use only what the tools return; do not read files or call tools other than those it asks for."
    } else {
        "Use only what the tool returns; do not read files or call other tools for this."
    };
    let text = format!(
        "{title}: call the aic MCP tool `{tool}` with the arguments {call}. {present} {only}",
        title = command.title,
        tool = command.tool,
        present = command.present,
    );
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(command.description),
    )
}

/// ` (it takes a, b)` or ` (it takes none)`.
fn takes(command: &PromptCommand) -> String {
    if command.arguments.is_empty() {
        " (it takes none)".to_owned()
    } else {
        let names: Vec<&str> = command.arguments.iter().map(|(name, _)| *name).collect();
        format!(" (it takes {})", names.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prompt_names_an_existing_tool() {
        let tools: Vec<String> = crate::mcp::tools::tools()
            .into_iter()
            .map(|tool| tool.name.to_string())
            .collect();
        for command in &COMMANDS {
            assert!(tools.iter().any(|t| t == command.tool), "{}", command.tool);
        }
        assert_eq!(prompts().len(), 6);
    }

    #[test]
    fn arguments_are_passed_on_and_checked() {
        let mut arguments = JsonObject::new();
        arguments.insert("windowDays".to_owned(), Value::from("14"));
        let result = get("quality", Some(&arguments)).unwrap();
        let json = serde_json::to_string(&result).unwrap();
        assert!(json.contains("aic_quality_report"), "{json}");
        assert!(json.contains(r#"{\"windowDays\":14}"#), "{json}");
        assert!(get("projects", Some(&arguments)).is_err());
        assert!(get("nope", None).is_err());
        // A window that is not a number is refused, naming it.
        arguments.insert("windowDays".to_owned(), Value::from("abc"));
        let error = get("quality", Some(&arguments)).unwrap_err();
        assert!(error.message.contains("`abc`"), "{error:?}");
    }
}
