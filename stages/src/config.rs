//! `aic.config.json` (`docs/configuration.md`): the typed configuration, its
//! defaults, and parsing from JSON text with errors that name the field path, the
//! value found and what was expected.
//!
//! Finding the file (walking up from the project root) and resolving `extends`
//! is I/O and lives in the binary; this module parses text that the binary read.
//! Every documented field is parsed and given its documented default. The
//! reserved keys `telemetry` and `output` are accepted without effect; any other
//! unknown key is reported in [`ParsedConfig::unknown_keys`] so the caller can
//! warn once, naming them.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::content_hash::ContentHash;
use crate::fit::assembler::PromptFormat;
use crate::fit::tokens::TokenCount;
use crate::select::intent::TaskClass;

/// The default cap on a file's size for the RepoMap scan: 1 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The default `cache.maxBytes`: 1 GiB of stored (compressed) per-file facts.
pub const DEFAULT_CACHE_MAX_BYTES: u64 = 1 << 30;

/// The effective configuration of one project.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AicConfig {
    /// Config format version (`version`, default 1).
    pub version: u32,
    /// `contextBudget.*`.
    pub context_budget: ContextBudgetConfig,
    /// Rule packs in priority order (`rulePacks`, default `["built-in:default"]`).
    pub rule_packs: Vec<String>,
    /// `contextSelector.*`.
    pub context_selector: ContextSelectorConfig,
    /// `model.*`.
    pub model: ModelConfig,
    /// `guard.*`.
    pub guard: GuardConfig,
    /// `contentTransformers.*`.
    pub content_transformers: ContentTransformersConfig,
    /// `cache.*`.
    pub cache: CacheConfig,
    /// `repoMap.*`: scan limits.
    pub repo_map: RepoMapConfig,
    /// `retention.*`: how long per-project logs are kept.
    pub retention: RetentionConfig,
    /// `extends`: local path of a parent config, resolved by the loader.
    pub extends: Option<String>,
    /// `devMode` (editor integrations).
    pub dev_mode: bool,
    /// `skipCompileGate` (editor integrations; only with `devMode`).
    pub skip_compile_gate: bool,
    /// `qualityGate.*`: the checks the editor hooks' Stop gate runs on the
    /// files an agent edited (`aic install <client> --with-gates`).
    pub quality_gate: QualityGateConfig,
    /// `output.*`: the prompt's layout.
    pub output: OutputConfig,
}

/// `qualityGate.*`: the checks of the Stop quality gate (any commands, not
/// only a linter and a type checker).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QualityGateConfig {
    /// `commands`: shell command lines run in the project root with the
    /// edited files (relative paths) appended as arguments, e.g.
    /// `"ruff check"` or `"npx eslint --max-warnings 0"`. A non-zero exit
    /// blocks the agent's stop once per failure (default: none).
    pub commands: Vec<String>,
    /// `timeoutSeconds`: each command's limit; one that runs longer counts
    /// as failed (default 120).
    pub timeout_seconds: u32,
}

/// `contextBudget.*` (`docs/budget.md`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextBudgetConfig {
    /// `maxTokens`: 0 = auto headroom; positive = manual cap on the base budget.
    pub max_tokens: TokenCount,
    /// `perTaskClass`: per-class base budgets, consulted before `maxTokens`.
    pub per_task_class: BTreeMap<TaskClass, TokenCount>,
    /// `contextWindow`: the model's context window in tokens, when known; `None`
    /// uses the default of 128,000.
    pub context_window: Option<TokenCount>,
}

/// `contextSelector.*`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextSelectorConfig {
    /// `type`: only `"heuristic"` is implemented; `"vector"` is accepted and falls
    /// back to heuristic with a warning from the binary.
    #[serde(rename = "type")]
    pub selector_type: String,
    /// `heuristic.maxFiles`: 0 = auto (`BudgetAllocator::auto_max_files`).
    pub max_files: u32,
    /// `heuristic.includePatterns`: globs; when non-empty, only matching files
    /// are candidates (added to the rule packs' `includePatterns`).
    pub include_patterns: Vec<String>,
    /// `heuristic.excludePatterns`: globs of files that are never candidates
    /// (added to the rule packs' `excludePatterns`).
    pub exclude_patterns: Vec<String>,
}

/// `output.*`: how prompts are laid out.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputConfig {
    /// `format`: `"markdown"`, `"xml"`, `"json"` or `"plain"`; `--format`
    /// and the MCP `format` argument override it. Unset, the model's layout
    /// is used (XML for Claude models, Markdown otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<PromptFormat>,
}

/// `model.*`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelConfig {
    /// `provider`: `openai`, `anthropic`, `ollama` or `custom`.
    pub provider: Option<String>,
    /// `endpoint`.
    pub endpoint: Option<String>,
    /// `apiKeyEnv`: the name of the variable that holds a key, never the key.
    pub api_key_env: Option<String>,
    /// `id`: the model id, when known.
    pub id: Option<String>,
}

/// `guard.*` (`docs/guard.md`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardConfig {
    /// `enabled` (default true).
    pub enabled: bool,
    /// `additionalExclusions`: globs added to the never-include list.
    pub additional_exclusions: Vec<String>,
    /// `allowPatterns`: globs whose files skip content scanners.
    pub allow_patterns: Vec<String>,
    /// `secretAction`: what the guard does with a file whose content holds a
    /// secret (default [`SecretAction::Redact`]).
    pub secret_action: SecretAction,
}

/// `guard.secretAction`: what happens to a file whose content holds a secret.
///
/// Never-include paths (`.env`, key files) are blocked whatever this says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SecretAction {
    /// `"redact"` (the default): the file stays in the context and each matched
    /// secret is replaced by a typed placeholder such as
    /// `[REDACTED aws-access-key #1]`.
    #[default]
    Redact,
    /// `"block"`: the file leaves the context.
    Block,
}

/// `contentTransformers.*`. All default to true.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContentTransformersConfig {
    /// `enabled`: `false` turns every transformer off.
    pub enabled: bool,
    /// `stripComments`: [`CommentStripper`](crate::transform::CommentStripper).
    pub strip_comments: bool,
    /// `normalizeWhitespace`:
    /// [`WhitespaceNormalizer`](crate::transform::WhitespaceNormalizer).
    pub normalize_whitespace: bool,
    /// `htmlToMarkdown`:
    /// [`HtmlToMarkdownTransformer`](crate::transform::HtmlToMarkdownTransformer).
    pub html_to_markdown: bool,
    /// `compactJson`: [`JsonCompactor`](crate::transform::JsonCompactor).
    pub compact_json: bool,
    /// `skipMinified`: [`MinifiedCodeSkipper`](crate::transform::MinifiedCodeSkipper).
    pub skip_minified: bool,
    /// `skipLockFiles`: [`LockFileSkipper`](crate::transform::LockFileSkipper).
    pub skip_lock_files: bool,
    /// `skipAutoGenerated`:
    /// [`AutoGeneratedSkipper`](crate::transform::AutoGeneratedSkipper).
    pub skip_auto_generated: bool,
    /// `stripLicenseHeaders` (an `aic` addition):
    /// [`LicenseHeaderStripper`](crate::transform::LicenseHeaderStripper).
    pub strip_license_headers: bool,
    /// `truncateLongStrings` (an `aic` addition):
    /// [`LongStringTruncator`](crate::transform::LongStringTruncator).
    pub truncate_long_strings: bool,
    /// `compactYaml` (an `aic` addition):
    /// [`YamlCompactor`](crate::transform::YamlCompactor).
    pub compact_yaml: bool,
}

/// `cache.*` (`docs/cache.md`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheConfig {
    /// `enabled` (default true).
    pub enabled: bool,
    /// `ttlMinutes` (default 60).
    pub ttl_minutes: u32,
    /// `invalidateOn` (default `["config-change", "file-change"]`).
    pub invalidate_on: Vec<String>,
    /// `maxBytes`: the per-file facts cache is trimmed to this many stored
    /// bytes, least recently used rows first (default 1 GiB; aic extension).
    pub max_bytes: u64,
    /// `remote`: the shared remote tier behind the local cache
    /// (`docs/remote-cache.md`); absent by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteCacheConfig>,
}

/// The default `cache.remote.timeoutMs`: 300 ms per read request.
pub const DEFAULT_REMOTE_TIMEOUT_MS: u32 = 300;

/// `cache.remote.*`: where the shared tier of the per-file cache lives. It
/// holds no credential: those come from the environment only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteCacheConfig {
    /// `url`: the store (`s3://bucket/prefix?endpoint=…&region=…`,
    /// `redis://host:port/db`, `webdav+https://host/path`, `https://host/path`
    /// read-only, `file:///dir`); `AIC_CACHE_REMOTE_URL` wins over it. A URL
    /// with a user name or password is refused.
    pub url: Option<String>,
    /// `readOnly`: never write to the store (default false).
    pub read_only: bool,
    /// `timeoutMs`: the longest one read request may take before the remote
    /// tier is given up for the rest of the process (default 300).
    pub timeout_ms: u32,
    /// `prefix`: the key prefix inside the store (default `aic`).
    pub prefix: String,
    /// `hmacKeyEnv`: the environment variable holding the HMAC key that signs
    /// and verifies entries (default `AIC_CACHE_HMAC_KEY`). The key itself is
    /// never in a config file.
    pub hmac_key_env: String,
}

impl Default for RemoteCacheConfig {
    fn default() -> Self {
        Self {
            url: None,
            read_only: false,
            timeout_ms: DEFAULT_REMOTE_TIMEOUT_MS,
            prefix: "aic".to_owned(),
            hmac_key_env: "AIC_CACHE_HMAC_KEY".to_owned(),
        }
    }
}

/// `repoMap.*`: limits of the RepoMap scan.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RepoMapConfig {
    /// `maxFileBytes`: files larger than this many bytes are left out of the map
    /// and counted (default 1 MiB).
    pub max_file_bytes: u64,
}

/// `retention.*`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RetentionConfig {
    /// `days`: compilation, finding, telemetry and server-session rows older
    /// than this many days are summarised into an archive row and pruned when a
    /// server starts (default 90).
    pub days: u32,
}

impl Default for AicConfig {
    fn default() -> Self {
        Self {
            version: 1,
            context_budget: ContextBudgetConfig::default(),
            rule_packs: vec!["built-in:default".to_owned()],
            context_selector: ContextSelectorConfig {
                selector_type: "heuristic".to_owned(),
                max_files: 0,
                include_patterns: Vec::new(),
                exclude_patterns: Vec::new(),
            },
            model: ModelConfig::default(),
            guard: GuardConfig {
                enabled: true,
                additional_exclusions: Vec::new(),
                allow_patterns: Vec::new(),
                secret_action: SecretAction::Redact,
            },
            content_transformers: ContentTransformersConfig {
                enabled: true,
                strip_comments: true,
                normalize_whitespace: true,
                html_to_markdown: true,
                compact_json: true,
                skip_minified: true,
                skip_lock_files: true,
                skip_auto_generated: true,
                strip_license_headers: true,
                truncate_long_strings: true,
                compact_yaml: true,
            },
            cache: CacheConfig {
                enabled: true,
                ttl_minutes: 60,
                invalidate_on: vec!["config-change".to_owned(), "file-change".to_owned()],
                max_bytes: DEFAULT_CACHE_MAX_BYTES,
                remote: None,
            },
            repo_map: RepoMapConfig {
                max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            },
            retention: RetentionConfig { days: 90 },
            extends: None,
            dev_mode: false,
            skip_compile_gate: false,
            quality_gate: QualityGateConfig {
                commands: Vec::new(),
                timeout_seconds: 120,
            },
            output: OutputConfig::default(),
        }
    }
}

impl AicConfig {
    /// xxh3-128 over the canonical JSON of the effective configuration (object
    /// keys sorted): equal configurations give equal hashes whatever the key order
    /// or whitespace of the file.
    pub fn config_hash(&self) -> ContentHash {
        // Where the cache lives changes no output: a compile with a remote
        // tier hashes as one without.
        let canonical = if self.cache.remote.is_some() {
            let mut local = self.clone();
            local.cache.remote = None;
            serde_json::to_vec(&local)
        } else {
            serde_json::to_vec(self)
        }
        .unwrap_or_default();
        ContentHash::of(&canonical)
    }
}

/// A configuration parsed from text, with the keys that were ignored.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedConfig {
    /// The configuration, defaults filled in.
    pub config: AicConfig,
    /// Dotted paths of keys not in the field reference, in document order.
    pub unknown_keys: Vec<String>,
}

/// An invalid configuration.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConfigError {
    /// The text is not JSON.
    #[error("not valid JSON at line {line}, column {column}: {message}")]
    Syntax {
        /// One-based line.
        line: usize,
        /// One-based column.
        column: usize,
        /// The parser's description.
        message: String,
    },
    /// A field holds a value of the wrong type or range.
    #[error("{path}: expected {expected}, found {found}")]
    InvalidValue {
        /// Dotted field path, e.g. `contextBudget.maxTokens`.
        path: String,
        /// What the field accepts.
        expected: String,
        /// The value found, as JSON (strings longer than 60 characters cut).
        found: String,
    },
}

impl ConfigError {
    fn invalid(path: &str, expected: &str, found: &Value) -> Self {
        Self::InvalidValue {
            path: path.to_owned(),
            expected: expected.to_owned(),
            found: shown_value(found),
        }
    }
}

/// A value as an error message shows it: its JSON, cut to 60 characters.
pub(crate) fn shown_value(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        text.chars().take(57).collect::<String>() + "..."
    } else {
        text
    }
}

/// Parses `aic.config.json` text.
///
/// An empty object, or a file holding only whitespace, gives the defaults.
///
/// # Errors
///
/// [`ConfigError::Syntax`] when the text is not JSON or not an object;
/// [`ConfigError::InvalidValue`] naming the first field whose value is invalid.
///
/// # Examples
///
/// ```
/// use aic_stages::config::parse_config;
/// let err = parse_config(r#"{"contextBudget": {"maxTokens": "lots"}}"#).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     r#"contextBudget.maxTokens: expected a non-negative integer, found "lots""#
/// );
/// ```
pub fn parse_config(text: &str) -> Result<ParsedConfig, ConfigError> {
    if text.trim().is_empty() {
        return Ok(ParsedConfig {
            config: AicConfig::default(),
            unknown_keys: Vec::new(),
        });
    }
    parse_config_value(&parse_json(text)?)
}

/// Decodes JSON text, reporting a syntax error with its one-based line and
/// column (the loader decodes each file of an `extends` chain with this before
/// merging them).
///
/// # Errors
///
/// [`ConfigError::Syntax`] when the text is not JSON.
pub fn parse_json(text: &str) -> Result<Value, ConfigError> {
    serde_json::from_str(text).map_err(|e| ConfigError::Syntax {
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    })
}

/// Parses an already-decoded JSON value (the loader merges `extends` chains as
/// values, then calls this).
///
/// # Errors
///
/// As [`parse_config`].
pub fn parse_config_value(value: &Value) -> Result<ParsedConfig, ConfigError> {
    let Value::Object(root) = value else {
        return Err(ConfigError::invalid("(root)", "a JSON object", value));
    };
    let mut reader = Reader::default();
    let mut config = AicConfig::default();
    for (key, value) in root {
        let config = &mut config;
        match key.as_str() {
            "version" => config.version = reader.u32("version", value)?,
            "$schema" | "telemetry" => {}
            "output" => reader.object(key, value, |reader, key, value| {
                output_key(reader, key, value, &mut config.output)
            })?,
            "rulePacks" => config.rule_packs = reader.strings("rulePacks", value)?,
            "extends" => config.extends = reader.optional_string("extends", value)?,
            "devMode" => config.dev_mode = reader.bool("devMode", value)?,
            "skipCompileGate" => {
                config.skip_compile_gate = reader.bool("skipCompileGate", value)?;
            }
            "contextBudget" => reader.object(key, value, |reader, key, value| {
                context_budget_key(reader, key, value, &mut config.context_budget)
            })?,
            "contextSelector" => reader.object(key, value, |reader, key, value| {
                context_selector_key(reader, key, value, &mut config.context_selector)
            })?,
            "model" => reader.object(key, value, |reader, key, value| {
                model_key(reader, key, value, &mut config.model)
            })?,
            "guard" => reader.object(key, value, |reader, key, value| {
                guard_key(reader, key, value, &mut config.guard)
            })?,
            "contentTransformers" => reader.object(key, value, |reader, key, value| {
                transformers_key(reader, key, value, &mut config.content_transformers)
            })?,
            "cache" => reader.object(key, value, |reader, key, value| {
                cache_key(reader, key, value, &mut config.cache)
            })?,
            "retention" => reader.object(key, value, |reader, key, value| {
                Ok(match key {
                    "days" => {
                        config.retention.days = reader.u32("retention.days", value)?;
                        true
                    }
                    _ => false,
                })
            })?,
            "repoMap" => reader.object(key, value, |reader, key, value| {
                Ok(match key {
                    "maxFileBytes" => {
                        config.repo_map.max_file_bytes =
                            reader.u64("repoMap.maxFileBytes", value)?;
                        true
                    }
                    _ => false,
                })
            })?,
            "qualityGate" => reader.object(key, value, |reader, key, value| {
                quality_gate_key(reader, key, value, &mut config.quality_gate)
            })?,
            other => reader.unknown.push(other.to_owned()),
        }
    }
    Ok(ParsedConfig {
        config,
        unknown_keys: reader.unknown,
    })
}

/// One key of `contextBudget`; `Ok(false)` for a key it does not know.
fn context_budget_key(
    reader: &mut Reader,
    key: &str,
    value: &Value,
    budget: &mut ContextBudgetConfig,
) -> Result<bool, ConfigError> {
    match key {
        "maxTokens" => budget.max_tokens = reader.tokens("contextBudget.maxTokens", value)?,
        "contextWindow" => {
            budget.context_window = match value {
                Value::Null => None,
                _ => Some(reader.tokens("contextBudget.contextWindow", value)?),
            };
        }
        "perTaskClass" => budget.per_task_class = reader.per_task_class(value)?,
        _ => return Ok(false),
    }
    Ok(true)
}

/// One key of `contextSelector`, and of its `heuristic` object.
fn context_selector_key(
    reader: &mut Reader,
    key: &str,
    value: &Value,
    selector: &mut ContextSelectorConfig,
) -> Result<bool, ConfigError> {
    match key {
        "type" => {
            selector.selector_type =
                reader.one_of("contextSelector.type", value, &["heuristic", "vector"])?;
        }
        "heuristic" => {
            reader.object("contextSelector.heuristic", value, |reader, key, value| {
                match key {
                    "maxFiles" => {
                        selector.max_files =
                            reader.u32("contextSelector.heuristic.maxFiles", value)?;
                    }
                    "includePatterns" => {
                        selector.include_patterns =
                            reader.globs("contextSelector.heuristic.includePatterns", value)?;
                    }
                    "excludePatterns" => {
                        selector.exclude_patterns =
                            reader.globs("contextSelector.heuristic.excludePatterns", value)?;
                    }
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// One key of `output`.
fn output_key(
    reader: &mut Reader,
    key: &str,
    value: &Value,
    output: &mut OutputConfig,
) -> Result<bool, ConfigError> {
    match key {
        "format" => {
            let name = reader.one_of("output.format", value, &FORMAT_NAMES)?;
            output.format = Some(name.parse().unwrap_or_default());
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The names `output.format` takes.
const FORMAT_NAMES: [&str; 4] = ["markdown", "xml", "json", "plain"];

/// One key of `model`.
fn model_key(
    reader: &mut Reader,
    key: &str,
    value: &Value,
    model: &mut ModelConfig,
) -> Result<bool, ConfigError> {
    match key {
        "provider" => {
            model.provider = match value {
                Value::Null => None,
                _ => Some(reader.one_of(
                    "model.provider",
                    value,
                    &["openai", "anthropic", "ollama", "custom"],
                )?),
            };
        }
        "endpoint" => model.endpoint = reader.optional_string("model.endpoint", value)?,
        "apiKeyEnv" => model.api_key_env = reader.optional_string("model.apiKeyEnv", value)?,
        "id" => model.id = reader.optional_string("model.id", value)?,
        "model" => {}
        _ => return Ok(false),
    }
    Ok(true)
}

/// One key of `guard`.
fn guard_key(
    reader: &mut Reader,
    key: &str,
    value: &Value,
    guard: &mut GuardConfig,
) -> Result<bool, ConfigError> {
    match key {
        "enabled" => guard.enabled = reader.bool("guard.enabled", value)?,
        "additionalExclusions" => {
            guard.additional_exclusions = reader.globs("guard.additionalExclusions", value)?;
        }
        "allowPatterns" => guard.allow_patterns = reader.globs("guard.allowPatterns", value)?,
        "secretAction" => {
            let action = reader.one_of("guard.secretAction", value, &["redact", "block"])?;
            guard.secret_action = if action == "block" {
                SecretAction::Block
            } else {
                SecretAction::Redact
            };
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// One switch of `contentTransformers`.
fn transformers_key(
    reader: &mut Reader,
    key: &str,
    value: &Value,
    transformers: &mut ContentTransformersConfig,
) -> Result<bool, ConfigError> {
    let flag = match key {
        "enabled" => &mut transformers.enabled,
        "stripComments" => &mut transformers.strip_comments,
        "normalizeWhitespace" => &mut transformers.normalize_whitespace,
        "htmlToMarkdown" => &mut transformers.html_to_markdown,
        "compactJson" => &mut transformers.compact_json,
        "skipMinified" => &mut transformers.skip_minified,
        "skipLockFiles" => &mut transformers.skip_lock_files,
        "skipAutoGenerated" => &mut transformers.skip_auto_generated,
        "stripLicenseHeaders" => &mut transformers.strip_license_headers,
        "truncateLongStrings" => &mut transformers.truncate_long_strings,
        "compactYaml" => &mut transformers.compact_yaml,
        _ => return Ok(false),
    };
    *flag = reader.bool(&format!("contentTransformers.{key}"), value)?;
    Ok(true)
}

/// One key of `cache`.
fn cache_key(
    reader: &mut Reader,
    key: &str,
    value: &Value,
    cache: &mut CacheConfig,
) -> Result<bool, ConfigError> {
    match key {
        "enabled" => cache.enabled = reader.bool("cache.enabled", value)?,
        "ttlMinutes" => cache.ttl_minutes = reader.u32("cache.ttlMinutes", value)?,
        "maxBytes" => cache.max_bytes = reader.u64("cache.maxBytes", value)?,
        "invalidateOn" => {
            let triggers = reader.strings("cache.invalidateOn", value)?;
            for (index, trigger) in triggers.iter().enumerate() {
                if trigger != "config-change" && trigger != "file-change" {
                    return Err(ConfigError::invalid(
                        &format!("cache.invalidateOn[{index}]"),
                        r#""config-change" or "file-change""#,
                        &Value::String(trigger.clone()),
                    ));
                }
            }
            cache.invalidate_on = triggers;
        }
        "remote" => {
            let remote = cache.remote.get_or_insert_with(RemoteCacheConfig::default);
            reader.object("cache.remote", value, |reader, key, value| {
                remote_key(reader, key, value, remote)
            })?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// One key of `cache.remote`.
fn remote_key(
    reader: &mut Reader,
    key: &str,
    value: &Value,
    remote: &mut RemoteCacheConfig,
) -> Result<bool, ConfigError> {
    match key {
        "url" => {
            let url = reader.optional_string("cache.remote.url", value)?;
            if let Some(url) = &url
                && has_credentials(url)
            {
                return Err(ConfigError::InvalidValue {
                    path: "cache.remote.url".to_owned(),
                    expected: "a URL without a user name or password (put credentials in the environment: AIC_CACHE_REMOTE_URL, AWS_ACCESS_KEY_ID, …)".to_owned(),
                    found: "a URL with credentials".to_owned(),
                });
            }
            remote.url = url;
        }
        "readOnly" => remote.read_only = reader.bool("cache.remote.readOnly", value)?,
        "timeoutMs" => {
            remote.timeout_ms = reader.u32("cache.remote.timeoutMs", value)?;
            if remote.timeout_ms == 0 {
                return Err(ConfigError::invalid(
                    "cache.remote.timeoutMs",
                    "a number of milliseconds above 0",
                    value,
                ));
            }
        }
        "prefix" => {
            remote.prefix = reader
                .optional_string("cache.remote.prefix", value)?
                .unwrap_or_default();
        }
        "hmacKeyEnv" => {
            remote.hmac_key_env = reader
                .optional_string("cache.remote.hmacKeyEnv", value)?
                .unwrap_or_default();
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Whether a URL's authority carries a user name or password
/// (`scheme://user:secret@host/…`).
fn has_credentials(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority.contains('@')
}

/// One key of `qualityGate`.
fn quality_gate_key(
    reader: &mut Reader,
    key: &str,
    value: &Value,
    gate: &mut QualityGateConfig,
) -> Result<bool, ConfigError> {
    match key {
        "commands" => gate.commands = reader.strings("qualityGate.commands", value)?,
        "timeoutSeconds" => {
            gate.timeout_seconds = reader.u32("qualityGate.timeoutSeconds", value)?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn strip_position(message: &str) -> String {
    match message.find(" at line ") {
        Some(index) => message[..index].to_owned(),
        None => message.to_owned(),
    }
}

#[derive(Default)]
struct Reader {
    unknown: Vec<String>,
}

#[expect(
    clippy::unused_self,
    reason = "every reader method is called through the reader that collects unknown keys"
)]
impl Reader {
    /// Visits the keys of an object field; `visit` returns `Ok(false)` for a key it
    /// does not know, which is then recorded as unknown.
    fn object(
        &mut self,
        path: &str,
        value: &Value,
        mut visit: impl FnMut(&mut Self, &str, &Value) -> Result<bool, ConfigError>,
    ) -> Result<(), ConfigError> {
        let Value::Object(map) = value else {
            return Err(ConfigError::invalid(path, "an object", value));
        };
        for (key, value) in map {
            if !visit(self, key, value)? {
                self.unknown.push(format!("{path}.{key}"));
            }
        }
        Ok(())
    }

    fn u64(&self, path: &str, value: &Value) -> Result<u64, ConfigError> {
        value
            .as_u64()
            .ok_or_else(|| ConfigError::invalid(path, "a non-negative integer", value))
    }

    fn u32(&self, path: &str, value: &Value) -> Result<u32, ConfigError> {
        let number = self.u64(path, value)?;
        u32::try_from(number).map_err(|_| {
            ConfigError::invalid(path, "a non-negative integer up to 4294967295", value)
        })
    }

    fn tokens(&self, path: &str, value: &Value) -> Result<TokenCount, ConfigError> {
        self.u32(path, value).map(TokenCount)
    }

    fn bool(&self, path: &str, value: &Value) -> Result<bool, ConfigError> {
        value
            .as_bool()
            .ok_or_else(|| ConfigError::invalid(path, "true or false", value))
    }

    fn optional_string(&self, path: &str, value: &Value) -> Result<Option<String>, ConfigError> {
        match value {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s.clone())),
            other => Err(ConfigError::invalid(path, "a string or null", other)),
        }
    }

    fn one_of(&self, path: &str, value: &Value, allowed: &[&str]) -> Result<String, ConfigError> {
        match value {
            Value::String(s) if allowed.contains(&s.as_str()) => Ok(s.clone()),
            other => {
                let expected = allowed
                    .iter()
                    .map(|a| format!("\"{a}\""))
                    .collect::<Vec<_>>()
                    .join(" or ");
                Err(ConfigError::invalid(path, &expected, other))
            }
        }
    }

    fn strings(&self, path: &str, value: &Value) -> Result<Vec<String>, ConfigError> {
        let Value::Array(items) = value else {
            return Err(ConfigError::invalid(path, "an array of strings", value));
        };
        items
            .iter()
            .enumerate()
            .map(|(index, item)| match item {
                Value::String(s) => Ok(s.clone()),
                other => Err(ConfigError::invalid(
                    &format!("{path}[{index}]"),
                    "a string",
                    other,
                )),
            })
            .collect()
    }

    fn globs(&self, path: &str, value: &Value) -> Result<Vec<String>, ConfigError> {
        let patterns = self.strings(path, value)?;
        for (index, pattern) in patterns.iter().enumerate() {
            if let Err(error) = globset::Glob::new(pattern) {
                return Err(ConfigError::InvalidValue {
                    path: format!("{path}[{index}]"),
                    expected: format!("a valid glob ({})", error.kind()),
                    found: Value::String(pattern.clone()).to_string(),
                });
            }
        }
        Ok(patterns)
    }

    fn per_task_class(
        &self,
        value: &Value,
    ) -> Result<BTreeMap<TaskClass, TokenCount>, ConfigError> {
        let Value::Object(map): &Value = value else {
            return Err(ConfigError::invalid(
                "contextBudget.perTaskClass",
                "an object of task class to token count",
                value,
            ));
        };
        let map: &Map<String, Value> = map;
        let mut out = BTreeMap::new();
        for (key, value) in map {
            let path = format!("contextBudget.perTaskClass.{key}");
            let Some(class) = TaskClass::parse(key) else {
                return Err(ConfigError::InvalidValue {
                    path,
                    expected: "a task class key: refactor, bugfix, feature, docs, test or general"
                        .to_owned(),
                    found: format!("\"{key}\""),
                });
            };
            out.insert(class, self.tokens(&path, value)?);
        }
        Ok(out)
    }
}

/// Deep-merges `child` over `parent`: objects merge key by key, any other value
/// in the child replaces the parent's. Used to resolve `extends` chains.
pub fn merge_config_values(parent: &Value, child: &Value) -> Value {
    match (parent, child) {
        (Value::Object(parent), Value::Object(child)) => {
            let mut merged = parent.clone();
            for (key, value) in child {
                let next = match merged.get(key) {
                    Some(existing) => merge_config_values(existing, value),
                    None => value.clone(),
                };
                merged.insert(key.clone(), next);
            }
            Value::Object(merged)
        }
        (_, child) => child.clone(),
    }
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    #[test]
    fn empty_inputs_give_defaults() {
        for text in ["", "  \n", "{}"] {
            let parsed = parse_config(text).unwrap();
            assert_eq!(parsed.config, AicConfig::default());
            assert!(parsed.unknown_keys.is_empty());
        }
        let defaults = AicConfig::default();
        assert_eq!(defaults.context_budget.max_tokens, TokenCount(0));
        assert_eq!(defaults.context_selector.max_files, 0);
        assert_eq!(defaults.rule_packs, vec!["built-in:default"]);
        assert_eq!(defaults.cache.ttl_minutes, 60);
        assert!(defaults.guard.enabled);
        assert!(defaults.content_transformers.skip_lock_files);
    }

    #[test]
    fn parses_a_typical_config() {
        let text = r#"{
          "contextBudget": { "maxTokens": 15000, "perTaskClass": { "bugfix": 12000, "docs": 4000 } },
          "contextSelector": { "heuristic": { "maxFiles": 25 } },
          "guard": { "allowPatterns": ["test/fixtures/**"] }
        }"#;
        let config = parse_config(text).unwrap().config;
        assert_eq!(config.context_budget.max_tokens, TokenCount(15000));
        assert_eq!(
            config.context_budget.per_task_class.get(&TaskClass::Bugfix),
            Some(&TokenCount(12000))
        );
        assert_eq!(config.context_selector.max_files, 25);
        assert_eq!(config.guard.allow_patterns, vec!["test/fixtures/**"]);
    }

    #[test_case(
        r#"{"contextBudget": {"maxTokens": "lots"}}"#,
        r#"contextBudget.maxTokens: expected a non-negative integer, found "lots""#
    )]
    #[test_case(
        r#"{"contextBudget": {"maxTokens": -5}}"#,
        "contextBudget.maxTokens: expected a non-negative integer, found -5"
    )]
    #[test_case(r#"{"contextBudget": {"perTaskClass": {"hotfix": 10}}}"#, r#"contextBudget.perTaskClass.hotfix: expected a task class key: refactor, bugfix, feature, docs, test or general, found "hotfix""#)]
    #[test_case(
        r#"{"guard": {"enabled": "yes"}}"#,
        r#"guard.enabled: expected true or false, found "yes""#
    )]
    #[test_case(
        r#"{"guard": {"secretAction": "x"}}"#,
        r#"guard.secretAction: expected "redact" or "block", found "x""#
    )]
    #[test_case(
        r#"{"guard": {"secretAction": true}}"#,
        r#"guard.secretAction: expected "redact" or "block", found true"#
    )]
    #[test_case(
        r#"{"guard": {"allowPatterns": ["a/[b"]}}"#,
        "guard.allowPatterns[0]: expected a valid glob (unclosed character class; missing ']'), found \"a/[b\""
    )]
    #[test_case(
        r#"{"model": {"provider": "gpt"}}"#,
        r#"model.provider: expected "openai" or "anthropic" or "ollama" or "custom", found "gpt""#
    )]
    #[test_case(
        r#"{"cache": {"invalidateOn": ["always"]}}"#,
        r#"cache.invalidateOn[0]: expected "config-change" or "file-change", found "always""#
    )]
    #[test_case(
        r#"{"cache": {"remote": {"url": "redis://:hunter2@cache:6379/0"}}}"#,
        "cache.remote.url: expected a URL without a user name or password (put credentials in the environment: AIC_CACHE_REMOTE_URL, AWS_ACCESS_KEY_ID, …), found a URL with credentials"
    )]
    #[test_case(
        r#"{"cache": {"remote": {"timeoutMs": 0}}}"#,
        "cache.remote.timeoutMs: expected a number of milliseconds above 0, found 0"
    )]
    #[test_case("[1, 2]", "(root): expected a JSON object, found [1,2]")]
    fn invalid_values_name_path_value_and_expectation(text: &str, message: &str) {
        assert_eq!(parse_config(text).unwrap_err().to_string(), message);
    }

    #[test_case("{}", SecretAction::Redact)]
    #[test_case(r#"{"guard": {"secretAction": "redact"}}"#, SecretAction::Redact)]
    #[test_case(r#"{"guard": {"secretAction": "block"}}"#, SecretAction::Block)]
    fn parses_guard_secret_action(text: &str, expected: SecretAction) {
        let config = parse_config(text).unwrap().config;
        assert_eq!(config.guard.secret_action, expected);
    }

    #[test]
    fn secret_action_changes_the_config_hash() {
        let redact = parse_config(r#"{"guard": {"secretAction": "redact"}}"#).unwrap();
        let block = parse_config(r#"{"guard": {"secretAction": "block"}}"#).unwrap();
        assert_eq!(
            redact.config.config_hash(),
            AicConfig::default().config_hash()
        );
        assert_ne!(redact.config.config_hash(), block.config.config_hash());
    }

    #[test]
    fn the_remote_tier_changes_no_config_hash() {
        let remote = parse_config(
            r#"{"cache": {"remote": {"url": "s3://bucket/aic", "readOnly": true, "timeoutMs": 500}}}"#,
        )
        .unwrap()
        .config;
        let settings = remote.cache.remote.as_ref().unwrap();
        assert_eq!(settings.url.as_deref(), Some("s3://bucket/aic"));
        assert!(settings.read_only);
        assert_eq!(settings.timeout_ms, 500);
        assert_eq!(settings.prefix, "aic");
        assert_eq!(remote.config_hash(), AicConfig::default().config_hash());
    }

    #[test]
    fn syntax_errors_carry_position() {
        let err = parse_config("{\n  \"version\": 1,\n}").unwrap_err();
        let ConfigError::Syntax { line, .. } = err else {
            panic!("expected a syntax error, got {err:?}");
        };
        assert_eq!(line, 3);
    }

    #[test]
    fn unknown_keys_are_reported_with_full_paths() {
        let parsed = parse_config(
            r#"{"colour": 1, "guard": {"mode": "x"}, "telemetry": {"enabled": true}, "output": {"style": 1}}"#,
        )
        .unwrap();
        assert_eq!(
            parsed.unknown_keys,
            vec!["colour", "guard.mode", "output.style"]
        );
    }

    #[test]
    fn output_format_and_selector_patterns_are_read() {
        let parsed = parse_config(
            r#"{"output": {"format": "xml"}, "contextSelector": {"heuristic": {"includePatterns": ["src/**"], "excludePatterns": ["**/*.snap"]}}}"#,
        )
        .unwrap();
        assert_eq!(parsed.config.output.format, Some(PromptFormat::Xml));
        assert_eq!(parsed.config.context_selector.include_patterns, ["src/**"]);
        assert_eq!(
            parsed.config.context_selector.exclude_patterns,
            ["**/*.snap"]
        );
        let error = parse_config(r#"{"output": {"format": "yaml"}}"#).unwrap_err();
        assert!(error.to_string().contains("output.format"), "{error}");
    }

    #[test]
    fn config_hash_ignores_key_order_and_whitespace() {
        let a = parse_config(r#"{"guard": {"enabled": false}, "version": 1}"#).unwrap();
        let b = parse_config(r#"{ "version": 1,"guard":{"enabled":false} }"#).unwrap();
        let c = parse_config(r#"{"guard": {"enabled": true}}"#).unwrap();
        assert_eq!(a.config.config_hash(), b.config.config_hash());
        assert_ne!(a.config.config_hash(), c.config.config_hash());
    }

    #[test]
    fn merge_overrides_leaves_and_keeps_siblings() {
        let parent: Value = serde_json::from_str(
            r#"{"guard": {"enabled": false, "allowPatterns": ["a"]}, "version": 1}"#,
        )
        .unwrap();
        let child: Value = serde_json::from_str(r#"{"guard": {"allowPatterns": ["b"]}}"#).unwrap();
        let merged = merge_config_values(&parent, &child);
        let config = parse_config_value(&merged).unwrap().config;
        assert!(!config.guard.enabled);
        assert_eq!(config.guard.allow_patterns, vec!["b"]);
    }
}
