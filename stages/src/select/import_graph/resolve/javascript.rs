//! TypeScript and JavaScript: relative specifiers with extension and `index`
//! resolution, `tsconfig.json` `baseUrl` and `paths`, workspace packages by name.

use crate::select::import_graph::index::{FileIndex, join};
use crate::select::import_graph::layout::{JsPackage, ProjectLayout};

const JS_EXTENSIONS: &[&str] = &[
    "ts", "tsx", "d.ts", "js", "jsx", "mjs", "cjs", "mts", "cts", "vue", "svelte",
];

/// Candidates for a JS/TS module path without extension: the path itself, with
/// each extension, and as a directory with `index.*`; `x.js` also tries `x.ts`.
fn js_candidates(base: &str) -> Vec<String> {
    let mut out = vec![base.to_owned()];
    let stem = [".js", ".jsx", ".mjs", ".cjs"]
        .iter()
        .find_map(|e| base.strip_suffix(e));
    if let Some(stem) = stem {
        for extension in ["ts", "tsx", "mts", "cts"] {
            out.push(format!("{stem}.{extension}"));
        }
    }
    for extension in JS_EXTENSIONS {
        out.push(format!("{base}.{extension}"));
    }
    for extension in JS_EXTENSIONS {
        out.push(format!("{base}/index.{extension}"));
    }
    out
}

pub(super) fn resolve(
    index: &FileIndex,
    layout: &ProjectLayout,
    directory: &str,
    source: &str,
) -> Vec<usize> {
    if source.starts_with("./") || source.starts_with("../") || source == "." || source == ".." {
        return join(directory, source)
            .and_then(|base| index.first(js_candidates(&base)))
            .into_iter()
            .collect();
    }
    // The nearest tsconfig/jsconfig above the importing file.
    let config = layout
        .ts_configs
        .iter()
        .filter(|c| {
            c.directory.is_empty()
                || directory == c.directory
                || directory.starts_with(&format!("{}/", c.directory))
        })
        .max_by_key(|c| c.directory.len());
    if let Some(config) = config {
        let base = config
            .base_url
            .as_deref()
            .and_then(|b| join(&config.directory, b))
            .unwrap_or_else(|| config.directory.clone());
        for (pattern, replacements) in &config.paths {
            let captured = match pattern.split_once('*') {
                Some((prefix, suffix)) => source
                    .strip_prefix(prefix)
                    .and_then(|rest| rest.strip_suffix(suffix)),
                None => (source == pattern).then_some(""),
            };
            let Some(captured) = captured else { continue };
            for replacement in replacements {
                let target = replacement.replacen('*', captured, 1);
                if let Some(found) =
                    join(&base, &target).and_then(|p| index.first(js_candidates(&p)))
                {
                    return vec![found];
                }
            }
        }
        if config.base_url.is_some()
            && let Some(found) = join(&base, source).and_then(|p| index.first(js_candidates(&p)))
        {
            return vec![found];
        }
    }
    // A workspace package, longest name first (`@acme/ui` before `@acme`).
    let mut packages: Vec<&JsPackage> = layout
        .js_packages
        .iter()
        .filter(|p| source == p.name || source.starts_with(&format!("{}/", p.name)))
        .collect();
    packages.sort_by_key(|p| std::cmp::Reverse(p.name.len()));
    if let Some(package) = packages.first() {
        let rest = source[package.name.len()..].trim_start_matches('/');
        if !rest.is_empty() {
            for base in [rest.to_owned(), format!("src/{rest}")] {
                if let Some(found) =
                    join(&package.directory, &base).and_then(|p| index.first(js_candidates(&p)))
                {
                    return vec![found];
                }
            }
            return Vec::new();
        }
        let mut candidates: Vec<String> = Vec::new();
        for entry in &package.entries {
            if let Some(path) = join(&package.directory, entry) {
                candidates.extend(js_candidates(path.trim_end_matches('/')));
            }
        }
        for fallback in ["src/index", "index", "lib/index"] {
            if let Some(path) = join(&package.directory, fallback) {
                candidates.extend(js_candidates(&path));
            }
        }
        return index.first(candidates).into_iter().collect();
    }
    Vec::new()
}
