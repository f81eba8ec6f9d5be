//! Reading the manifests that steer import resolution into a
//! [`ProjectLayout`]: `tsconfig.json`/`jsconfig.json` (`baseUrl`, `paths`),
//! `package.json` (workspace package names and entry points), `go.mod` (module
//! path) and `Cargo.toml` (crate names). Only manifests in the RepoMap are read;
//! one that cannot be read or parsed is skipped (resolution degrades, the
//! compile goes on).

use std::path::Path;

use aic_stages::repo_map::RepoMap;
use aic_stages::select::import_graph::{JsPackage, ProjectLayout, RustCrate, TsConfig};
use serde_json::Value;
use tracing::debug;

/// Reads the layout of the project at `root` from the manifests in `repo`.
pub fn read_layout(root: &Path, repo: &RepoMap) -> ProjectLayout {
    let mut layout = ProjectLayout::default();
    for file in &repo.files {
        let name = file.path.file_name();
        let directory = file
            .path
            .as_str()
            .rsplit_once('/')
            .map_or(String::new(), |(d, _)| d.to_owned());
        let read = || fs_err::read_to_string(root.join(file.path.as_str())).ok();
        match name {
            "tsconfig.json" | "jsconfig.json" => {
                if let Some(config) = read().and_then(|text| parse_tsconfig(&text, &directory)) {
                    layout.ts_configs.push(config);
                }
            }
            "package.json" => {
                if let Some(package) = read().and_then(|text| parse_package_json(&text, &directory))
                {
                    layout.js_packages.push(package);
                }
            }
            "go.mod" => {
                if let Some(module) = read().and_then(|text| parse_go_mod(&text)) {
                    layout.go_modules.push((module, directory));
                }
            }
            "Cargo.toml" => {
                if let Some(name) = read().and_then(|text| parse_cargo_name(&text)) {
                    layout.rust_crates.push(RustCrate { name, directory });
                }
            }
            _ => {}
        }
    }
    debug!(
        "layout: {} tsconfigs, {} packages, {} go modules, {} crates",
        layout.ts_configs.len(),
        layout.js_packages.len(),
        layout.go_modules.len(),
        layout.rust_crates.len()
    );
    layout
}

/// Removes `//` and `/* */` comments outside strings and trailing commas, which
/// `tsconfig.json` allows and JSON does not.
fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut previous = ' ';
                for next in chars.by_ref() {
                    if previous == '*' && next == '/' {
                        break;
                    }
                    previous = next;
                }
            }
            _ => out.push(c),
        }
    }
    // Trailing commas: `,` followed by whitespace and `}` or `]`.
    let mut cleaned = String::with_capacity(out.len());
    let bytes: Vec<char> = out.chars().collect();
    let mut in_string = false;
    for (i, &c) in bytes.iter().enumerate() {
        if c == '"' && (i == 0 || bytes[i - 1] != '\\') {
            in_string = !in_string;
        }
        if c == ',' && !in_string {
            let next = bytes[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}' | ']')) {
                continue;
            }
        }
        cleaned.push(c);
    }
    cleaned
}

fn parse_tsconfig(text: &str, directory: &str) -> Option<TsConfig> {
    let value: Value = serde_json::from_str(&strip_jsonc(text)).ok()?;
    let options = value.get("compilerOptions");
    let base_url = options
        .and_then(|o| o.get("baseUrl"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let paths = options
        .and_then(|o| o.get("paths"))
        .and_then(Value::as_object)
        .map(|paths| {
            paths
                .iter()
                .map(|(pattern, targets)| {
                    let targets = targets
                        .as_array()
                        .map(|t| {
                            t.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default();
                    (pattern.clone(), targets)
                })
                .collect()
        })
        .unwrap_or_default();
    Some(TsConfig {
        directory: directory.to_owned(),
        base_url,
        paths,
    })
}

fn parse_package_json(text: &str, directory: &str) -> Option<JsPackage> {
    let value: Value = serde_json::from_str(text).ok()?;
    let name = value.get("name")?.as_str()?.to_owned();
    let entries = ["source", "types", "typings", "module", "main"]
        .iter()
        .filter_map(|key| value.get(*key).and_then(Value::as_str))
        .map(|entry| entry.trim_start_matches("./").to_owned())
        .collect();
    Some(JsPackage {
        name,
        directory: directory.to_owned(),
        entries,
    })
}

fn parse_go_mod(text: &str) -> Option<String> {
    text.lines()
        .find_map(|line| line.trim().strip_prefix("module "))
        .map(|module| module.trim().trim_matches('"').to_owned())
}

fn parse_cargo_name(text: &str) -> Option<String> {
    let value: toml::Table = toml::from_str(text).ok()?;
    let package = value.get("package")?.as_table()?;
    let name = package.get("name")?.as_str()?;
    Some(name.replace('-', "_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsconfig_with_comments_and_trailing_commas() {
        let text = r#"{
          // editor settings
          "compilerOptions": {
            "baseUrl": ".", /* root */
            "paths": { "@/*": ["src/*"], "~lib": ["lib/index.ts"], },
          },
        }"#;
        let config = parse_tsconfig(text, "apps/web").unwrap();
        assert_eq!(config.base_url.as_deref(), Some("."));
        assert_eq!(
            config.paths[0],
            ("@/*".to_owned(), vec!["src/*".to_owned()])
        );
        assert_eq!(config.paths.len(), 2);
    }

    #[test]
    fn strings_keep_their_slashes() {
        assert_eq!(
            strip_jsonc(r#"{"a": "http://x/*y*/", "b": [1,]}"#),
            r#"{"a": "http://x/*y*/", "b": [1]}"#
        );
    }

    #[test]
    fn manifests() {
        let package = parse_package_json(
            r#"{"name": "@acme/ui", "main": "./dist/index.js", "types": "src/index.ts"}"#,
            "packages/ui",
        )
        .unwrap();
        assert_eq!(package.entries, ["src/index.ts", "dist/index.js"]);
        assert_eq!(
            parse_go_mod("// x\nmodule example.com/app\n\ngo 1.22\n").as_deref(),
            Some("example.com/app")
        );
        assert_eq!(
            parse_cargo_name("[package]\nname = \"aic-stages\"\n").as_deref(),
            Some("aic_stages")
        );
        assert_eq!(parse_cargo_name("[workspace]\nmembers = []\n"), None);
    }
}
