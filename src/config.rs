//! Finding and loading `aic.config.json` (`docs/configuration.md`): walk up from
//! the project root to the first directory that has one, follow its `extends` chain
//! of local files, and parse the merged result with [`aic_stages::config`].

use std::path::{Path, PathBuf};

use aic_stages::config::{
    AicConfig, ConfigError, merge_config_values, parse_config_value, parse_json,
};
use serde_json::Value;

/// The config file's name.
pub const CONFIG_FILE_NAME: &str = "aic.config.json";

/// The most `extends` links followed before giving up (a cycle guard).
const MAX_EXTENDS_DEPTH: usize = 8;

/// A loaded configuration.
#[derive(Debug)]
pub struct LoadedConfig {
    /// The effective configuration.
    pub config: AicConfig,
    /// The files read, child first; empty when no config was found.
    pub files: Vec<PathBuf>,
    /// Unknown keys, as dotted paths, across all files read.
    pub unknown_keys: Vec<String>,
}

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigLoadError {
    /// The file could not be read.
    #[error("Failed to read `{}`", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid configuration.
    #[error("Invalid configuration in `{}`: {problem}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: ConfigError,
    },
    /// `extends` names something that cannot be followed.
    #[error("Cannot follow `extends` in `{}`: {reason}", path.display())]
    Extends {
        /// The file whose `extends` failed.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

impl ConfigLoadError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            Self::Read { path, .. } | Self::Invalid { path, .. } | Self::Extends { path, .. } => {
                path
            }
        }
    }
}

/// Finds the config for `root`: `explicit` when given, else the first
/// `aic.config.json` in `root` or its ancestors. Returns defaults when none exists.
///
/// # Errors
///
/// [`ConfigLoadError`] naming the file that could not be read or parsed.
pub fn load_config(root: &Path, explicit: Option<&Path>) -> Result<LoadedConfig, ConfigLoadError> {
    let start = match explicit {
        Some(path) => Some(path.to_path_buf()),
        None => root
            .ancestors()
            .map(|dir| dir.join(CONFIG_FILE_NAME))
            .find(|candidate| candidate.is_file()),
    };
    let Some(start) = start else {
        return Ok(LoadedConfig {
            config: AicConfig::default(),
            files: Vec::new(),
            unknown_keys: Vec::new(),
        });
    };

    let mut chain: Vec<(PathBuf, Value)> = Vec::new();
    let mut next = Some(start);
    while let Some(path) = next.take() {
        if chain.iter().any(|(seen, _)| *seen == path) || chain.len() == MAX_EXTENDS_DEPTH {
            let reason = format!("the chain loops or is longer than {MAX_EXTENDS_DEPTH} files");
            return Err(ConfigLoadError::Extends { path, reason });
        }
        let value = match (read_json(&path), chain.last()) {
            (Err(ConfigLoadError::Read { source, .. }), Some((child, _))) => {
                return Err(ConfigLoadError::Extends {
                    path: child.clone(),
                    reason: format!("`{}` cannot be read: {source}", path.display()),
                });
            }
            (result, _) => result?,
        };
        if let Some(parent) = value.get("extends").and_then(Value::as_str) {
            if parent.contains("://") {
                return Err(ConfigLoadError::Extends {
                    path,
                    reason: format!(
                        "`{parent}` is a URL; aic is local-first and only follows local paths"
                    ),
                });
            }
            let base = path.parent().unwrap_or(Path::new("."));
            next = Some(base.join(parent));
        }
        chain.push((path, value));
    }

    let mut merged = Value::Object(serde_json::Map::new());
    for (_, value) in chain.iter().rev() {
        merged = merge_config_values(&merged, value);
    }
    let mut unknown_keys = Vec::new();
    for (path, value) in &chain {
        let parsed = parse_config_value(value).map_err(|problem| ConfigLoadError::Invalid {
            path: path.clone(),
            problem,
        })?;
        for key in parsed.unknown_keys {
            if !unknown_keys.contains(&key) {
                unknown_keys.push(key);
            }
        }
    }
    let parsed = parse_config_value(&merged).map_err(|problem| ConfigLoadError::Invalid {
        path: chain[0].0.clone(),
        problem,
    })?;
    Ok(LoadedConfig {
        config: parsed.config,
        files: chain.into_iter().map(|(path, _)| path).collect(),
        unknown_keys,
    })
}

fn read_json(path: &Path) -> Result<Value, ConfigLoadError> {
    let text = fs_err::read_to_string(path).map_err(|source| ConfigLoadError::Read {
        path: path.to_path_buf(),
        source: std::io::Error::new(source.kind(), source.to_string()),
    })?;
    if text.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    parse_json(&text).map_err(|problem| ConfigLoadError::Invalid {
        path: path.to_path_buf(),
        problem,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_up_to_the_nearest_config() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(
            dir.path().join(CONFIG_FILE_NAME),
            r#"{"contextSelector": {"heuristic": {"maxFiles": 7}}}"#,
        )
        .unwrap();
        let nested = dir.path().join("a/b");
        fs_err::create_dir_all(&nested).unwrap();
        let loaded = load_config(&nested, None).unwrap();
        assert_eq!(loaded.config.context_selector.max_files, 7);
        assert_eq!(loaded.files, [dir.path().join(CONFIG_FILE_NAME)]);
    }

    #[test]
    fn missing_config_gives_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let loaded = load_config(dir.path(), None).unwrap();
        assert_eq!(loaded.config, AicConfig::default());
    }

    #[test]
    fn extends_merges_child_over_parent_and_rejects_cycles_and_urls() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs_err::write(
            root.join("base.json"),
            r#"{"guard": {"enabled": false}, "cache": {"ttlMinutes": 5}}"#,
        )
        .unwrap();
        fs_err::write(
            root.join(CONFIG_FILE_NAME),
            r#"{"extends": "base.json", "cache": {"ttlMinutes": 9}, "flavour": 1}"#,
        )
        .unwrap();
        let loaded = load_config(root, None).unwrap();
        assert!(!loaded.config.guard.enabled);
        assert_eq!(loaded.config.cache.ttl_minutes, 9);
        assert_eq!(loaded.unknown_keys, ["flavour"]);

        fs_err::write(root.join("base.json"), r#"{"extends": "aic.config.json"}"#).unwrap();
        let err = load_config(root, None).unwrap_err();
        assert!(err.to_string().contains("loops"), "{err}");

        fs_err::write(
            root.join(CONFIG_FILE_NAME),
            r#"{"extends": "https://example.invalid/c.json"}"#,
        )
        .unwrap();
        let err = load_config(root, None).unwrap_err();
        assert!(err.to_string().contains("local-first"), "{err}");
    }

    #[test]
    fn invalid_value_names_file_and_field() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(
            dir.path().join(CONFIG_FILE_NAME),
            r#"{"contextBudget": {"maxTokens": "lots"}}"#,
        )
        .unwrap();
        let err = load_config(dir.path(), None).unwrap_err();
        let message = err.to_string();
        assert!(message.contains(CONFIG_FILE_NAME), "{message}");
        assert!(
            message.ends_with(
                r#"contextBudget.maxTokens: expected a non-negative integer, found "lots""#
            ),
            "{message}"
        );
    }
}
