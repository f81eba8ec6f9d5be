//! `aic init [--root DIR] [--force]`: writes a starter `aic.config.json` into the
//! project, and only when asked: a compile never writes into the repository.

use std::path::PathBuf;

use anyhow::Context;

use crate::args::InitArgs;
use crate::printer::print_stdout;

/// The starter config: the defaults that users most often change, spelled out.
pub const STARTER_CONFIG: &str = r#"{
  "version": 1,
  "contextBudget": {
    "maxTokens": 0
  },
  "guard": {
    "secretAction": "redact",
    "additionalExclusions": [],
    "allowPatterns": []
  },
  "cache": {
    "enabled": true,
    "ttlMinutes": 60
  },
  "retention": {
    "days": 90
  }
}
"#;

/// Writes the starter config; refuses to overwrite an existing file unless
/// `--force`.
pub fn run(args: &InitArgs) -> anyhow::Result<()> {
    let given = crate::root::given_or_discovered(args.root.as_deref());
    let root: PathBuf = crate::root::resolve_root(&given)?;
    let path = root.join("aic.config.json");
    if path.exists() && !args.force {
        return Err(crate::error::UserError::new(
            format!("`{}` already exists", path.display()),
            "edit it, or pass --force to replace it with the starter config",
        )
        .into());
    }
    fs_err::write(&path, STARTER_CONFIG)?;
    print_stdout(&format!(
        "Wrote {} (every field is described in the aic documentation, docs/configuration.md)\n",
        path.display()
    ))
    .context("Failed to write to stdout")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_starter_config_loads_without_warnings() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("aic.config.json"), STARTER_CONFIG).unwrap();
        let loaded = crate::config::load_config(dir.path(), None).unwrap();
        assert!(loaded.unknown_keys.is_empty(), "{:?}", loaded.unknown_keys);
        assert_eq!(loaded.config.retention.days, 90);
    }
}
