//! The tools of the MCP server (`docs/mcp.md`): their `tools/list` entries
//! (input schema, output schema, annotations) and their argument types.
//!
//! Arguments are parsed by hand from the raw JSON object ([`parse_args`]) so a
//! wrong argument is a tool result with `isError` and a message the model can
//! act on, never a protocol error it cannot see.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::history::conversations::ToolOutput;

/// `_meta["anthropic/maxResultSizeChars"]` on `aic_compile`'s list entry: a
/// compiled prompt at the default budget (123,500 tokens, about 4 characters
/// each) plus its JSON envelope fits.
pub const MAX_RESULT_SIZE_CHARS: u64 = 500_000;

/// The longest intent accepted, in characters.
pub const MAX_INTENT_CHARS: usize = 20_000;

/// The longest id (`conversationId`, `probeId`, …) accepted, in characters.
pub const MAX_ID_CHARS: usize = 256;

/// `aic_compile` arguments, the agent-session fields included.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(description = "What to compile context for, and where.")]
pub struct CompileArgs {
    /// The task, in the user's words (e.g. "fix the null check in the user
    /// service"). With `conversationId`, an empty or placeholder intent falls back
    /// to the conversation's last real intent.
    pub intent: String,
    /// Absolute path of the repository. Default: the client's workspace root,
    /// else `CLAUDE_PROJECT_DIR`, else the server's working directory.
    pub project_root: Option<String>,
    /// The model the prompt is for (`gpt-4o`, `claude-sonnet-4-5`, …;
    /// overrides `model.id`): picks the tokenizer budgets are counted in, the
    /// context window and the default layout; an unknown id gets the
    /// defaults. Logged; `unknown` when absent.
    pub model_id: Option<String>,
    /// The editor calling (`claude-code`, `cursor`, `generic`, …).
    pub editor_id: Option<String>,
    /// An aic.config.json to use instead of the project's.
    pub config_path: Option<String>,
    /// A total token budget overriding config and rule packs (0 = auto).
    #[schemars(range(max = 1_000_000))]
    pub budget: Option<u32>,
    /// What triggered the call (editor hooks set it; a model can leave it out).
    #[schemars(extend("enum" = ["session_start", "prompt_submit", "tool_gate", "subagent_start", "subagent_stop", "cli", "model_initiated", "internal_test"]))]
    pub trigger_source: Option<String>,
    /// The agent conversation: keys the session (deduplication, session header,
    /// budget clamp).
    pub conversation_id: Option<String>,
    /// With `triggerSource: "subagent_stop"`: move this (subagent) conversation's
    /// compilations onto `conversationId` instead of compiling.
    pub reparent_from_conversation_id: Option<String>,
    /// The step of the agent session (0-based).
    pub step_index: Option<u32>,
    /// What this step does, for the session header.
    pub step_intent: Option<String>,
    /// Files the agent already read (accepted; selection does not use it).
    pub previous_files: Option<Vec<String>>,
    /// Outputs of the agent's tools since the last compile; `relatedFiles` are
    /// boosted in selection.
    pub tool_outputs: Option<Vec<ToolOutput>>,
    /// Tokens already in the agent's context window (default: the tokens this
    /// session's earlier steps compiled).
    pub conversation_tokens: Option<u32>,
    /// The prompt's layout (default: the project's `output.format`, else
    /// `xml` for a Claude model and `markdown` for any other).
    #[schemars(extend("enum" = ["markdown", "xml", "json", "plain"]))]
    pub format: Option<String>,
    /// Compile for changes: a revision to compare the working tree with
    /// (`HEAD`, `main`), `staged` for the index against HEAD, or `A..B` for
    /// two revisions. The changed files come first and the diff gets its own
    /// section.
    pub diff: Option<String>,
}

/// `aic_inspect` arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InspectArgs {
    /// The task, in the user's words.
    pub intent: String,
    /// Absolute path of the repository (default as for `aic_compile`).
    pub project_root: Option<String>,
    /// An aic.config.json to use instead of the project's.
    pub config_path: Option<String>,
    /// A total token budget overriding config and rule packs (0 = auto).
    pub budget: Option<u32>,
    /// The model the prompt is for, as for `aic_compile` (picks the
    /// tokenizer, the window and the default layout).
    pub model_id: Option<String>,
}

/// `aic_status` arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatusArgs {
    /// Only count the last N days (1..3660); default: all time.
    #[schemars(range(min = 1, max = 3660))]
    pub time_range_days: Option<u32>,
    /// Absolute path of the repository (default as for `aic_compile`).
    pub project_root: Option<String>,
}

/// Arguments of tools that only need a project.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectArgs {
    /// Absolute path of the repository (default as for `aic_compile`).
    pub project_root: Option<String>,
}

/// `aic_projects` takes no arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `aic_chat_summary` arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChatSummaryArgs {
    /// The conversation (default: the project's most recent one).
    pub conversation_id: Option<String>,
    /// Absolute path of the repository (default as for `aic_compile`).
    pub project_root: Option<String>,
}

/// `aic_quality_report` arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QualityArgs {
    /// The rolling window in days (1..365, default 7).
    #[schemars(range(min = 1, max = 365))]
    pub window_days: Option<u32>,
    /// Absolute path of the repository (default as for `aic_compile`).
    pub project_root: Option<String>,
}

/// `aic_compile_spec` arguments (the spec is validated by the specification
/// compiler, which names the bad field).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompileSpecArgs {
    /// The specification: `types` (name, path, content, usage), `codeBlocks`,
    /// `prose`; see docs/spec-compiler.md.
    pub spec: JsonObject,
    /// The token budget of the briefing (default 4,000).
    pub budget: Option<u32>,
    /// The model the briefing is for, as for `aic_compile` (picks the
    /// encoding the budget is counted in); default `model.id`.
    pub model_id: Option<String>,
}

/// `aic_model_test` arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelTestArgs {
    /// Absolute path of the repository.
    pub project_root: Option<String>,
    /// The probe to validate (8 letters A–Z), from the first call's answer.
    pub probe_id: Option<String>,
    /// The answers to challenges 1 and 2: `[number, string]`, e.g. `[101, "ZYXWVUTS"]`.
    pub answers: Option<Vec<Value>>,
}

/// Parses a tool's raw arguments; the error names the tool and the field.
///
/// # Errors
///
/// A message for the model: what is wrong and what the tool expects.
pub fn parse_args<T: DeserializeOwned>(tool: &str, args: Option<&JsonObject>) -> Result<T, String> {
    let value = Value::Object(args.cloned().unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        if path == "." {
            format!("Invalid arguments for {tool}: {inner}. See the tool's inputSchema.")
        } else {
            format!("Invalid arguments for {tool}: `{path}`: {inner}. See the tool's inputSchema.")
        }
    })
}

/// The input schema of `T` as a JSON object, in the portable subset clients
/// accept (Gemini's among them): subschemas inlined (no `$defs`/`$ref`), an
/// optional field has its plain type (optional by not being `required`), no
/// `null` type unions.
fn schema_of<T: JsonSchema>() -> Arc<JsonObject> {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).unwrap_or_else(|_| json!({}));
    portable(&mut value);
    if let Some(object) = value.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
        object.insert("type".to_owned(), json!("object"));
        return Arc::new(object.clone());
    }
    Arc::new(JsonObject::new())
}

/// Rewrites `{"type": [T, "null"]}` to `{"type": T}` and `{"anyOf": [S,
/// {"type": "null"}]}` to `S`, everywhere in a schema; drops integer `format`s.
fn portable(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if let Some(Value::Array(types)) = object.get("type") {
                let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                if kept.len() == 1 {
                    object.insert("type".to_owned(), kept[0].clone());
                }
            }
            if let Some(Value::Array(any)) = object.get("anyOf") {
                let kept: Vec<Value> = any
                    .iter()
                    .filter(|s| s.get("type") != Some(&json!("null")))
                    .cloned()
                    .collect();
                if kept.len() == 1
                    && let Value::Object(inner) = &kept[0]
                {
                    object.remove("anyOf");
                    for (key, value) in inner {
                        object.entry(key.clone()).or_insert_with(|| value.clone());
                    }
                }
            }
            if object.get("type") == Some(&json!("integer")) {
                object.remove("format");
            }
            for child in object.values_mut() {
                portable(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(portable),
        _ => {}
    }
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// A loose output schema: an object with these documented properties, any of
/// them optional, more allowed.
fn output(properties: &Value, required: &[&str]) -> Arc<JsonObject> {
    object(json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": true,
    }))
}

fn annotations(title: &str, read_only: bool) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(read_only)
        .destructive(false)
        .idempotent(read_only)
        .open_world(false)
}

fn tool(
    name: &'static str,
    description: &'static str,
    input: Arc<JsonObject>,
    output_schema: Arc<JsonObject>,
    annotations: ToolAnnotations,
) -> Tool {
    Tool::new(Cow::Borrowed(name), Cow::Borrowed(description), input)
        .with_raw_output_schema(output_schema)
        .with_annotations(annotations)
}

/// Every tool, in a fixed order (deterministic `tools/list`).
pub fn tools() -> Vec<Tool> {
    let project_root = json!({"type": ["string", "null"]});
    let mut compile = tool(
        "aic_compile",
        "Compile the context for a coding task: aic selects the repository files relevant to the intent, keeps secrets and injected instructions out, compresses to a token budget and returns one prompt (the result's text) plus `meta` (its structured content). Call it before answering or editing, with the user's task as `intent`.",
        schema_of::<CompileArgs>(),
        output(
            &json!({
                "meta": {"type": "object"},
                "conversationId": {"type": ["string", "null"]},
                "updateMessage": {"type": ["string", "null"]},
                "warnings": {"type": "array", "items": {"type": "string"}},
                "reparented": {"type": "boolean"},
                "rowsUpdated": {"type": "integer"},
            }),
            &[],
        ),
        annotations("Compile context", true),
    );
    let mut meta = rmcp::model::MetaObject::new();
    meta.insert(
        "anthropic/maxResultSizeChars".to_owned(),
        json!(MAX_RESULT_SIZE_CHARS),
    );
    compile = compile.with_meta(meta);
    vec![
        compile,
        tool(
            "aic_inspect",
            "Show how aic would compile an intent without returning file contents: task class, rule packs, budget, every selected file with its score, signals, tier and tokens, guard findings and token totals per step.",
            schema_of::<InspectArgs>(),
            output(&json!({"trace": {"type": "object"}}), &["trace"]),
            annotations("Inspect a compile", true),
        ),
        tool(
            "aic_status",
            "Project summary: compilations, tokens saved, cache hit rate, guard findings, budget use, the agents' rule files (count, tokens paid on every prompt, findings by severity; details in the resource aic://rules-analysis), server sessions.",
            schema_of::<StatusArgs>(),
            output(
                &json!({
                    "projectRoot": project_root,
                    "compilations": {},
                    "rules": {
                        "type": "object",
                        "properties": {
                            "files": {"type": "integer"},
                            "alwaysAppliedTokens": {"type": "integer"},
                            "findings": {
                                "type": "object",
                                "properties": {
                                    "error": {"type": "integer"},
                                    "warn": {"type": "integer"},
                                    "info": {"type": "integer"},
                                },
                            },
                            "details": {"type": "string"},
                        },
                    },
                }),
                &["rules"],
            ),
            annotations("aic status", true),
        ),
        tool(
            "aic_last",
            "The project's most recent compilation: intent, task class, tokens, and the selection (paths, scores, tiers; no content).",
            schema_of::<ProjectArgs>(),
            output(&json!({"compilationCount": {"type": "integer"}}), &[]),
            annotations("aic last", true),
        ),
        tool(
            "aic_projects",
            "Every project aic has compiled: id, path, first and last seen, compilations.",
            schema_of::<NoArgs>(),
            output(
                &json!({"projects": {"type": "array"}, "truncated": {"type": "integer"}}),
                &["projects"],
            ),
            annotations("aic projects", true),
        ),
        tool(
            "aic_chat_summary",
            "Compilations of one agent conversation (default: the latest): count, tokens saved, cache hits, task classes.",
            schema_of::<ChatSummaryArgs>(),
            output(
                &json!({"conversationId": {"type": ["string", "null"]}}),
                &[],
            ),
            annotations("aic chat summary", true),
        ),
        tool(
            "aic_quality_report",
            "Rolling-window compile quality: medians of token reduction, selection ratio and budget use, cache hit rate, tier shares, per task class, per day.",
            schema_of::<QualityArgs>(),
            output(&json!({"windowDays": {"type": "integer"}}), &[]),
            annotations("aic quality report", true),
        ),
        tool(
            "aic_compile_spec",
            "Compile a task specification (types with how the executor uses each, code blocks, prose) into one briefing that fits a token budget: each type verbatim, as signatures and path, or path only.",
            schema_of::<CompileSpecArgs>(),
            output(
                &json!({"compiledSpec": {"type": "string"}, "meta": {"type": "object"}}),
                &["compiledSpec", "meta"],
            ),
            annotations("Compile a specification", true),
        ),
        tool(
            "aic_model_test",
            "Probe whether the agent can use aic: a first call returns challenges and a probeId; answer them, call aic_compile with the constructed intent, then call again with probeId and answers for a pass/fail report.",
            schema_of::<ModelTestArgs>(),
            output(
                &json!({"probeId": {"type": "string"}, "passed": {"type": "boolean"}}),
                &[],
            ),
            annotations("aic model test", false),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_input_schema_and_a_valid_name() {
        let tools = tools();
        assert_eq!(tools.len(), 9);
        for tool in &tools {
            assert_eq!(tool.input_schema.get("type"), Some(&json!("object")));
            assert!(tool.output_schema.is_some());
            assert!(
                tool.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_'),
            );
        }
        let compile = &tools[0].input_schema;
        assert_eq!(compile["required"], json!(["intent"]));
    }

    #[test]
    fn schemas_are_portable() {
        for tool in tools() {
            let text = serde_json::to_string(&*tool.input_schema).unwrap();
            for word in ["$ref", "$defs", "\"null\"", "prefixItems", "anyOf"] {
                assert!(!text.contains(word), "{}: {word} in {text}", tool.name);
            }
        }
        let compile = serde_json::to_value(&*tools()[0].input_schema).unwrap();
        assert_eq!(
            compile["properties"]["toolOutputs"]["items"]["properties"]["type"]["enum"][0],
            "test-result"
        );
        assert_eq!(
            compile["properties"]["triggerSource"]["enum"][1],
            "prompt_submit"
        );
        let quality = serde_json::to_value(&*tools()[6].input_schema).unwrap();
        assert_eq!(quality["properties"]["windowDays"]["minimum"], 1);
        assert_eq!(quality["properties"]["windowDays"]["maximum"], 365);
    }

    #[test]
    fn unknown_arguments_are_named() {
        let args = json!({"intent": "x", "project_root": "/tmp"})
            .as_object()
            .cloned();
        let error = parse_args::<CompileArgs>("aic_compile", args.as_ref()).unwrap_err();
        assert!(
            error.contains("unknown field `project_root`") && error.contains("projectRoot"),
            "{error}"
        );
    }

    #[test]
    fn bad_arguments_name_the_field() {
        let args = json!({"intent": 3}).as_object().cloned();
        let error = parse_args::<CompileArgs>("aic_compile", args.as_ref()).unwrap_err();
        assert!(
            error.contains("aic_compile") && error.contains("invalid type"),
            "{error}"
        );
        let error = parse_args::<CompileArgs>("aic_compile", None).unwrap_err();
        assert!(error.contains("missing field `intent`"), "{error}");
    }
}
