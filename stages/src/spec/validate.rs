//! Parsing and validating a [`SpecificationInput`] from JSON, with errors that name the field
//! (`types[2].usage`), what it accepts and what was found: the validation boundary of
//! `aic spec` and of the `aic_compile_spec` MCP tool.
//!
//! The rules, beyond each field's JSON type:
//!
//! - Unknown fields are errors (a misspelt `codeblocks` would otherwise drop its blocks
//!   silently).
//! - `name` and `label` are non-empty and on one line; `path` is a relative path inside the
//!   project (`/`-separated, no `..`; a leading `./` is dropped).
//! - Type names are unique: they key `meta.typeTiers`.
//! - At least one of `types`, `codeBlocks` and `prose` is non-empty.
//! - `estimatedTokens` is optional and, when given, a non-negative integer; the compiler counts
//!   tokens itself and never reads it.

use serde_json::{Map, Value};

use super::{
    SpecCodeBlock, SpecCompileRequest, SpecProseBlock, SpecTypeRef, SpecTypeUsage,
    SpecificationInput,
};
use crate::fit::tokens::TokenCount;
use crate::relative_path::RelativePath;

/// Why a specification (or an `aic_compile_spec` request) is invalid.
///
/// Every variant but [`SpecValidationError::Syntax`] and [`SpecValidationError::Empty`] names
/// the field as a path from the root of the parsed value (`types[2].usage`, or
/// `spec.types[2].usage` inside a request); [`SpecValidationError::field`] returns it. An MCP
/// handler answers any of them with `{ error, code: "validation-error" }`
/// ([`SpecValidationError::CODE`]) and does not run the compiler.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecValidationError {
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
    /// A field holds a value of the wrong type, range or form.
    #[error("{path}: expected {expected}, found {found}")]
    InvalidValue {
        /// The field, e.g. `types[2].usage`.
        path: String,
        /// What the field accepts.
        expected: String,
        /// The value found, as JSON (cut after 60 characters).
        found: String,
    },
    /// A required field is missing.
    #[error("{path}: missing; expected {expected}")]
    MissingField {
        /// The missing field, e.g. `types[0].usage`.
        path: String,
        /// What the field accepts.
        expected: String,
    },
    /// An object has a field the format does not define.
    #[error("{path}: unknown field; the fields here are {allowed}")]
    UnknownField {
        /// The unknown field, e.g. `codeblocks`.
        path: String,
        /// The fields the object may have, in backticks.
        allowed: String,
    },
    /// Two types have the same name.
    #[error("{path}: the name `{name}` is already used by {first}; each type needs its own name")]
    DuplicateName {
        /// The later type's `name` field, e.g. `types[3].name`.
        path: String,
        /// The repeated name.
        name: String,
        /// The earlier type, e.g. `types[1]`.
        first: String,
    },
    /// `types`, `codeBlocks` and `prose` are all missing or empty.
    #[error(
        "the specification is empty: `types`, `codeBlocks` and `prose` are all missing or empty"
    )]
    Empty,
}

impl SpecValidationError {
    /// The error code an MCP handler returns for any validation failure of
    /// `aic_compile_spec`.
    pub const CODE: &'static str = "validation-error";

    /// The field the error is about (`types[2].usage`), when there is one.
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::InvalidValue { path, .. }
            | Self::MissingField { path, .. }
            | Self::UnknownField { path, .. }
            | Self::DuplicateName { path, .. } => Some(path),
            Self::Syntax { .. } | Self::Empty => None,
        }
    }

    fn invalid(path: &str, expected: &str, found: &Value) -> Self {
        Self::InvalidValue {
            path: path.to_owned(),
            expected: expected.to_owned(),
            found: crate::config::shown_value(found),
        }
    }
}

/// Parses JSON text into a value, or a [`SpecValidationError::Syntax`].
fn parse_text(text: &str) -> Result<Value, SpecValidationError> {
    serde_json::from_str(text).map_err(|error| {
        let message = error.to_string();
        // serde_json appends " at line L column C"; the variant carries them.
        let message = message
            .rfind(" at line ")
            .map_or(message.as_str(), |at| &message[..at])
            .to_owned();
        SpecValidationError::Syntax {
            line: error.line(),
            column: error.column(),
            message,
        }
    })
}

/// Parses and validates a specification from JSON text: a [`SpecificationInput`] object
/// (`{types, codeBlocks, prose}`).
///
/// # Errors
///
/// [`SpecValidationError`] naming the first invalid field found (`types`, then `codeBlocks`,
/// then `prose`, each item in order).
///
/// # Examples
///
/// ```
/// use aic_stages::spec::{SpecTypeUsage, SpecValidationError, parse_specification};
///
/// let input = parse_specification(
///     r#"{"types": [{"name": "Store", "path": "src/store.rs", "content": "pub struct Store;",
///                   "usage": "constructs"}]}"#,
/// )?;
/// assert_eq!(input.types[0].usage, SpecTypeUsage::Constructs);
///
/// let error = parse_specification(r#"{"types": [{"name": "Store", "path": "src/store.rs",
///     "content": "", "usage": "extends"}]}"#).unwrap_err();
/// assert_eq!(error.field(), Some("types[0].usage"));
/// assert_eq!(SpecValidationError::CODE, "validation-error");
/// # Ok::<(), SpecValidationError>(())
/// ```
pub fn parse_specification(text: &str) -> Result<SpecificationInput, SpecValidationError> {
    specification_from_value(&parse_text(text)?)
}

/// Validates an already-decoded specification value (an MCP handler's `spec` argument).
///
/// # Errors
///
/// As [`parse_specification`].
pub fn specification_from_value(value: &Value) -> Result<SpecificationInput, SpecValidationError> {
    read_specification("", value)
}

/// Parses and validates an `aic_compile_spec` request, `{spec, budget?}`, from JSON
/// text. Field paths in errors start with `spec.`.
///
/// # Errors
///
/// As [`parse_specification`], plus `budget` when it is not a non-negative integer that fits
/// in 32 bits.
pub fn parse_compile_request(text: &str) -> Result<SpecCompileRequest, SpecValidationError> {
    compile_request_from_value(&parse_text(text)?)
}

/// Validates an already-decoded `aic_compile_spec` request value.
///
/// # Errors
///
/// As [`parse_compile_request`].
pub fn compile_request_from_value(
    value: &Value,
) -> Result<SpecCompileRequest, SpecValidationError> {
    let object = object("(root)", value)?;
    reject_unknown("", object, &["spec", "budget"])?;
    let spec = object
        .get("spec")
        .ok_or_else(|| SpecValidationError::MissingField {
            path: "spec".to_owned(),
            expected: "a specification object `{types, codeBlocks, prose}`".to_owned(),
        })?;
    let spec = read_specification("spec", spec)?;
    let budget = object
        .get("budget")
        .filter(|v| !v.is_null())
        .map(|v| tokens("budget", v))
        .transpose()?;
    Ok(SpecCompileRequest { spec, budget })
}

/// Parses either shape an input file may have: an `aic_compile_spec` request (an object with a
/// `spec` field) or a bare specification.
///
/// # Errors
///
/// As [`parse_compile_request`] or [`parse_specification`], by shape.
pub fn parse_specification_file(text: &str) -> Result<SpecCompileRequest, SpecValidationError> {
    let value = parse_text(text)?;
    if value.get("spec").is_some() {
        compile_request_from_value(&value)
    } else {
        Ok(SpecCompileRequest {
            spec: specification_from_value(&value)?,
            budget: None,
        })
    }
}

/// `prefix.key`, or `key` at the root.
fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

fn object<'a>(path: &str, value: &'a Value) -> Result<&'a Map<String, Value>, SpecValidationError> {
    value
        .as_object()
        .ok_or_else(|| SpecValidationError::invalid(path, "a JSON object", value))
}

fn reject_unknown(
    prefix: &str,
    object: &Map<String, Value>,
    allowed: &[&str],
) -> Result<(), SpecValidationError> {
    match object.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(key) => Err(SpecValidationError::UnknownField {
            path: join(prefix, key),
            allowed: allowed
                .iter()
                .map(|field| format!("`{field}`"))
                .collect::<Vec<_>>()
                .join(", "),
        }),
        None => Ok(()),
    }
}

fn required<'a>(
    prefix: &str,
    object: &'a Map<String, Value>,
    key: &str,
    expected: &str,
) -> Result<&'a Value, SpecValidationError> {
    object
        .get(key)
        .ok_or_else(|| SpecValidationError::MissingField {
            path: join(prefix, key),
            expected: expected.to_owned(),
        })
}

fn string<'a>(path: &str, value: &'a Value) -> Result<&'a str, SpecValidationError> {
    value
        .as_str()
        .ok_or_else(|| SpecValidationError::invalid(path, "a string", value))
}

/// A non-empty string without line breaks (names and labels head sections of the output).
fn one_line(path: &str, value: &Value) -> Result<String, SpecValidationError> {
    const EXPECTED: &str = "a non-empty string on one line";
    let text = value
        .as_str()
        .ok_or_else(|| SpecValidationError::invalid(path, EXPECTED, value))?;
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed.contains(['\n', '\r']) {
        return Err(SpecValidationError::invalid(path, EXPECTED, value));
    }
    Ok(trimmed.to_owned())
}

fn tokens(path: &str, value: &Value) -> Result<TokenCount, SpecValidationError> {
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .map(TokenCount)
        .ok_or_else(|| {
            SpecValidationError::invalid(path, "a non-negative integer up to 4294967295", value)
        })
}

fn optional_tokens(
    prefix: &str,
    object: &Map<String, Value>,
) -> Result<Option<TokenCount>, SpecValidationError> {
    object
        .get("estimatedTokens")
        .filter(|v| !v.is_null())
        .map(|v| tokens(&join(prefix, "estimatedTokens"), v))
        .transpose()
}

fn array<'a>(
    prefix: &str,
    object: &'a Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<&'a [Value], SpecValidationError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(other) => Err(SpecValidationError::invalid(
            &join(prefix, key),
            &format!("an array of {what}"),
            other,
        )),
    }
}

fn read_specification(
    prefix: &str,
    value: &Value,
) -> Result<SpecificationInput, SpecValidationError> {
    let root = object(if prefix.is_empty() { "(root)" } else { prefix }, value)?;
    reject_unknown(prefix, root, &["types", "codeBlocks", "prose"])?;
    let types_path = join(prefix, "types");
    let mut types: Vec<SpecTypeRef> = Vec::new();
    for (index, item) in array(prefix, root, "types", "type objects")?
        .iter()
        .enumerate()
    {
        let at = format!("{types_path}[{index}]");
        let item = read_type(&at, item)?;
        if let Some(first) = types.iter().position(|t| t.name == item.name) {
            return Err(SpecValidationError::DuplicateName {
                path: format!("{at}.name"),
                name: item.name,
                first: format!("{types_path}[{first}]"),
            });
        }
        types.push(item);
    }
    let code_path = join(prefix, "codeBlocks");
    let code_blocks = array(prefix, root, "codeBlocks", "code block objects")?
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let (label, content, estimated_tokens) =
                read_block(&format!("{code_path}[{index}]"), item)?;
            Ok(SpecCodeBlock {
                label,
                content,
                estimated_tokens,
            })
        })
        .collect::<Result<Vec<_>, SpecValidationError>>()?;
    let prose_path = join(prefix, "prose");
    let prose = array(prefix, root, "prose", "prose block objects")?
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let (label, content, estimated_tokens) =
                read_block(&format!("{prose_path}[{index}]"), item)?;
            Ok(SpecProseBlock {
                label,
                content,
                estimated_tokens,
            })
        })
        .collect::<Result<Vec<_>, SpecValidationError>>()?;
    if types.is_empty() && code_blocks.is_empty() && prose.is_empty() {
        return Err(SpecValidationError::Empty);
    }
    Ok(SpecificationInput {
        types,
        code_blocks,
        prose,
    })
}

fn read_type(at: &str, value: &Value) -> Result<SpecTypeRef, SpecValidationError> {
    let item = object(at, value)?;
    reject_unknown(
        at,
        item,
        &["name", "path", "content", "usage", "estimatedTokens"],
    )?;
    let name = one_line(
        &join(at, "name"),
        required(at, item, "name", "a non-empty string on one line")?,
    )?;
    let path_value = required(at, item, "path", "a relative path such as `src/store.rs`")?;
    let path = string(&join(at, "path"), path_value)?;
    let path = RelativePath::new(path)
        .filter(|_| !path.contains(['\n', '\r']))
        .ok_or_else(|| {
            SpecValidationError::invalid(
                &join(at, "path"),
                "a relative path inside the project, such as `src/store.rs` (no `..`)",
                path_value,
            )
        })?;
    let content = string(
        &join(at, "content"),
        required(at, item, "content", "a string (the type's source)")?,
    )?
    .to_owned();
    let usage_expected = format!(
        "one of {}",
        SpecTypeUsage::ALL
            .iter()
            .map(|usage| format!("`{}`", usage.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let usage_value = required(at, item, "usage", &usage_expected)?;
    let usage = usage_value
        .as_str()
        .and_then(SpecTypeUsage::from_name)
        .ok_or_else(|| {
            SpecValidationError::invalid(&join(at, "usage"), &usage_expected, usage_value)
        })?;
    Ok(SpecTypeRef {
        name,
        path,
        content,
        usage,
        estimated_tokens: optional_tokens(at, item)?,
    })
}

fn read_block(
    at: &str,
    value: &Value,
) -> Result<(String, String, Option<TokenCount>), SpecValidationError> {
    let item = object(at, value)?;
    reject_unknown(at, item, &["label", "content", "estimatedTokens"])?;
    let label = one_line(
        &join(at, "label"),
        required(at, item, "label", "a non-empty string on one line")?,
    )?;
    let content = string(
        &join(at, "content"),
        required(at, item, "content", "a string")?,
    )?
    .to_owned();
    Ok((label, content, optional_tokens(at, item)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> SpecValidationError {
        parse_specification(text).unwrap_err()
    }

    #[test]
    fn a_full_specification_parses() {
        let input = parse_specification(
            r#"{
              "types": [{"name": " Store ", "path": "./src/store.rs", "content": "pub struct Store;",
                         "usage": "passes-through", "estimatedTokens": 5}],
              "codeBlocks": [{"label": "Example", "content": "let s = Store;"}],
              "prose": [{"label": "Task", "content": "Add a field.", "estimatedTokens": null}]
            }"#,
        )
        .unwrap();
        assert_eq!(input.types[0].name, "Store");
        assert_eq!(input.types[0].path.as_str(), "src/store.rs");
        assert_eq!(input.types[0].usage, SpecTypeUsage::PassesThrough);
        assert_eq!(input.types[0].estimated_tokens, Some(TokenCount(5)));
        assert_eq!(input.code_blocks[0].label, "Example");
        assert_eq!(input.prose[0].estimated_tokens, None);
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (r#"{"types": {}}"#, "types"),
            (r#"{"types": [1]}"#, "types[0]"),
            (
                r#"{"types": [{"path": "a.rs", "content": "", "usage": "constructs"}]}"#,
                "types[0].name",
            ),
            (
                r#"{"types": [{"name": "A\nB", "path": "a.rs", "content": "", "usage": "constructs"}]}"#,
                "types[0].name",
            ),
            (
                r#"{"types": [{"name": "A", "path": "../a.rs", "content": "", "usage": "constructs"}]}"#,
                "types[0].path",
            ),
            (
                r#"{"types": [{"name": "A", "path": "a.rs", "content": 3, "usage": "constructs"}]}"#,
                "types[0].content",
            ),
            (
                r#"{"types": [{"name": "A", "path": "a.rs", "content": "", "usage": "uses"}]}"#,
                "types[0].usage",
            ),
            (
                r#"{"types": [{"name": "A", "path": "a.rs", "content": "", "usage": "constructs", "estimatedTokens": -1}]}"#,
                "types[0].estimatedTokens",
            ),
            (
                r#"{"types": [{"name": "A", "path": "a.rs", "content": "", "usage": "constructs", "kind": "x"}]}"#,
                "types[0].kind",
            ),
            (r#"{"codeblocks": []}"#, "codeblocks"),
            (
                r#"{"codeBlocks": [{"label": "", "content": ""}]}"#,
                "codeBlocks[0].label",
            ),
            (r#"{"prose": [{"label": "Task"}]}"#, "prose[0].content"),
        ];
        for (text, field) in cases {
            assert_eq!(error(text).field(), Some(field), "{text}");
        }
        let usage =
            error(r#"{"types": [{"name": "A", "path": "a.rs", "content": "", "usage": "uses"}]}"#);
        assert_eq!(
            usage.to_string(),
            "types[0].usage: expected one of `implements`, `calls-methods`, `constructs`, `passes-through`, `names-only`, found \"uses\""
        );
    }

    #[test]
    fn duplicate_names_empty_specs_and_bad_json_are_rejected() {
        let duplicate = error(
            r#"{"types": [{"name": "A", "path": "a.rs", "content": "", "usage": "constructs"},
                          {"name": "A", "path": "b.rs", "content": "", "usage": "implements"}]}"#,
        );
        assert_eq!(
            duplicate.to_string(),
            "types[1].name: the name `A` is already used by types[0]; each type needs its own name"
        );
        assert_eq!(error("{}"), SpecValidationError::Empty);
        assert_eq!(error(r#"{"types": []}"#), SpecValidationError::Empty);
        assert!(matches!(
            error("[]"),
            SpecValidationError::InvalidValue { .. }
        ));
        let SpecValidationError::Syntax { line, .. } = error("{\n\"types\": [,]}") else {
            panic!("not a syntax error");
        };
        assert_eq!(line, 2);
    }

    #[test]
    fn requests_carry_a_budget_and_prefix_their_paths() {
        let request = parse_compile_request(
            r#"{"spec": {"prose": [{"label": "T", "content": "x"}]}, "budget": 4000}"#,
        )
        .unwrap();
        assert_eq!(request.budget, Some(TokenCount(4000)));
        let bad = parse_compile_request(r#"{"spec": {"prose": [{"label": 1, "content": "x"}]}}"#)
            .unwrap_err();
        assert_eq!(bad.field(), Some("spec.prose[0].label"));
        let bad = parse_compile_request(r#"{"spec": {"prose": []}, "budget": "big"}"#).unwrap_err();
        assert_eq!(bad, SpecValidationError::Empty);
        let bad = parse_compile_request(
            r#"{"spec": {"prose": [{"label": "T", "content": "x"}]}, "budget": 1.5}"#,
        )
        .unwrap_err();
        assert_eq!(bad.field(), Some("budget"));
        assert_eq!(
            parse_compile_request("{}").unwrap_err().field(),
            Some("spec")
        );
        let file =
            parse_specification_file(r#"{"prose": [{"label": "T", "content": "x"}]}"#).unwrap();
        assert_eq!(file.budget, None);
        let file = parse_specification_file(
            r#"{"spec": {"prose": [{"label": "T", "content": "x"}]}, "budget": 7}"#,
        )
        .unwrap();
        assert_eq!(file.budget, Some(TokenCount(7)));
    }
}
