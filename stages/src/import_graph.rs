//! Import resolution to repository files, the import graph, and the
//! ImportGraphProximityScorer (seed §8 "Import proximity").
//!
//! An [`ImportRef`] as a file wrote it becomes edges to the repository files it
//! names, per language:
//!
//! - **TypeScript/JavaScript**: relative specifiers with extension and `index`
//!   resolution (`./model` → `model.ts`, `model/index.tsx`; `./x.js` → `x.ts`);
//!   `tsconfig.json` `baseUrl` and `paths` of the nearest config; workspace
//!   packages by their `package.json` name (`@acme/ui/button`);
//! - **Python**: relative imports (`.x`, `..pkg.mod`, `from . import y`) from the
//!   file's package; absolute ones (`pkg.mod`) to the shallowest file whose path
//!   ends with `pkg/mod.py` or `pkg/mod/__init__.py`, which covers `src/` layouts
//!   and namespace packages without configuration;
//! - **Go**: import paths under a `go.mod` module path to every non-test `.go`
//!   file of that directory;
//! - **Rust**: `mod foo;` declarations; `crate::`, `self::`, `super::` paths and
//!   workspace crates by name, resolved to the deepest module file that exists;
//! - **Java**: `a.b.C` to a file ending `a/b/C.java`; `a.b.*` to the directory.
//!
//! Anything else — standard libraries, third-party packages — stays an external
//! name and makes no edge. Manifests are read by the runner and passed in as a
//! [`ProjectLayout`].

use std::collections::{HashMap, HashSet, VecDeque};

use serde::Serialize;

use crate::lang::{ImportKind, ImportRef};
use crate::repo_map::{Language, RelativePath, RepoMap};

/// `paths`/`baseUrl` of one `tsconfig.json` or `jsconfig.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TsConfig {
    /// Directory of the config file (`""` at the root).
    pub directory: String,
    /// `compilerOptions.baseUrl`, relative to `directory`.
    pub base_url: Option<String>,
    /// `compilerOptions.paths`: pattern (one `*` at most) → replacement patterns.
    pub paths: Vec<(String, Vec<String>)>,
}

/// A JavaScript workspace package (`package.json` with a `name`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JsPackage {
    /// The package name (`@acme/ui`).
    pub name: String,
    /// Its directory.
    pub directory: String,
    /// Entry points named by `source`, `types`, `module` or `main`, relative to
    /// the directory, in that order of preference.
    pub entries: Vec<String>,
}

/// A Rust crate of the workspace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RustCrate {
    /// The crate name with `-` turned into `_`, as `use` paths write it.
    pub name: String,
    /// The directory of its `Cargo.toml`.
    pub directory: String,
}

/// The manifests that steer resolution, read by the runner.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProjectLayout {
    /// TypeScript/JavaScript configs.
    pub ts_configs: Vec<TsConfig>,
    /// Workspace packages.
    pub js_packages: Vec<JsPackage>,
    /// Go modules: (module path, directory of `go.mod`).
    pub go_modules: Vec<(String, String)>,
    /// Rust crates.
    pub rust_crates: Vec<RustCrate>,
}

/// The files of a RepoMap, indexed for resolution.
/// One file's resolved imports, for [`ImportGraph::build_reusing`].
#[derive(Clone, Debug, Default)]
pub struct ResolvedImports {
    /// Files it imports (indices into the RepoMap), sorted, without itself.
    pub targets: Vec<u32>,
    /// Imports it has.
    pub imports: usize,
    /// Imports that resolved to at least one file.
    pub resolved: usize,
}

/// A RepoMap's paths indexed for resolving imports
/// ([`ImportGraph::build_indexed`]); build it once per RepoMap.
pub struct ImportIndex<'a>(FileIndex<'a>);

impl<'a> ImportIndex<'a> {
    /// Indexes `repo`'s paths (by path, directory and file name).
    pub fn new(repo: &'a RepoMap) -> Self {
        Self(FileIndex::new(repo))
    }
}

impl std::fmt::Debug for ImportIndex<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportIndex")
            .field("files", &self.0.all.len())
            .finish()
    }
}

struct FileIndex<'a> {
    paths: HashMap<&'a str, usize>,
    /// Directory → indices of the files directly in it.
    directories: HashMap<&'a str, Vec<usize>>,
    /// File name → indices, for suffix look-ups.
    names: HashMap<&'a str, Vec<usize>>,
    all: Vec<&'a str>,
}

impl<'a> FileIndex<'a> {
    fn new(repo: &'a RepoMap) -> Self {
        let mut paths = HashMap::new();
        let mut directories: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut names: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut all = Vec::with_capacity(repo.files.len());
        for (index, file) in repo.files.iter().enumerate() {
            let path = file.path.as_str();
            paths.insert(path, index);
            directories.entry(parent(path)).or_default().push(index);
            names.entry(file.path.file_name()).or_default().push(index);
            all.push(path);
        }
        Self {
            paths,
            directories,
            names,
            all,
        }
    }

    fn get(&self, path: &str) -> Option<usize> {
        self.paths.get(path).copied()
    }

    /// The first of `candidates` that is a file.
    fn first(&self, candidates: impl IntoIterator<Item = String>) -> Option<usize> {
        candidates.into_iter().find_map(|c| self.get(&c))
    }

    /// Files whose path is `suffix` or ends with `/suffix`, shallowest first.
    fn by_suffix(&self, suffix: &str) -> Vec<usize> {
        let name = suffix.rsplit('/').next().unwrap_or(suffix);
        let mut found: Vec<usize> = self
            .names
            .get(name)
            .map(|indices| {
                indices
                    .iter()
                    .copied()
                    .filter(|&i| {
                        let path = self.all[i];
                        path == suffix || path.ends_with(&format!("/{suffix}"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        found.sort_by_key(|&i| (self.all[i].matches('/').count(), i));
        found
    }
}

/// Whether a path's extension is `extension` (ASCII case ignored).
fn has_extension(path: &str, extension: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, found)| found.eq_ignore_ascii_case(extension))
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(directory, _)| directory)
}

/// Joins a directory and a relative path, resolving `.` and `..`; `None` when
/// the result leaves the root.
fn join(directory: &str, relative: &str) -> Option<String> {
    let mut parts: Vec<&str> = if directory.is_empty() {
        Vec::new()
    } else {
        directory.split('/').collect()
    };
    for segment in relative.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

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

/// Resolves one import of `from` to repository files (indices into the RepoMap).
fn resolve(
    index: &FileIndex<'_>,
    layout: &ProjectLayout,
    from: &RelativePath,
    language: Language,
    import: &ImportRef,
) -> Vec<usize> {
    let directory = parent(from.as_str());
    match language {
        Language::TypeScript | Language::JavaScript => {
            resolve_js(index, layout, directory, &import.source)
        }
        Language::Python => resolve_python(index, directory, import),
        Language::Go => resolve_go(index, layout, &import.source),
        Language::Rust => resolve_rust(index, layout, from, import),
        Language::Java => resolve_java(index, &import.source),
        _ => Vec::new(),
    }
}

fn resolve_js(
    index: &FileIndex<'_>,
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

fn resolve_python(index: &FileIndex<'_>, directory: &str, import: &ImportRef) -> Vec<usize> {
    let source = import.source.as_str();
    let module_files = |base: &str| {
        [
            format!("{base}.py"),
            format!("{base}/__init__.py"),
            format!("{base}.pyi"),
        ]
    };
    if let Some(rest) = source.strip_prefix('.') {
        // `.x` is the file's own package; each further dot goes one level up.
        let ups = rest.chars().take_while(|&c| c == '.').count();
        let module = &rest[ups..];
        let mut package = directory.to_owned();
        for _ in 0..ups {
            package = parent(&package).to_owned();
        }
        let base = if module.is_empty() {
            package.clone()
        } else {
            join(&package, &module.replace('.', "/")).unwrap_or_default()
        };
        let mut found: Vec<usize> = Vec::new();
        if module.is_empty() {
            // `from . import a, b`: each name may be a submodule.
            for symbol in &import.symbols {
                if let Some(i) = join(&base, symbol).and_then(|p| index.first(module_files(&p))) {
                    found.push(i);
                }
            }
            if found.is_empty() {
                found.extend(index.first(module_files(&base)));
            }
        } else {
            if let Some(i) = index.first(module_files(&base)) {
                found.push(i);
            }
            for symbol in &import.symbols {
                if let Some(i) = index.first(module_files(&format!("{base}/{symbol}"))) {
                    found.push(i);
                }
            }
        }
        return found;
    }
    // Absolute: the shallowest file whose path ends with the module path.
    let path = source.replace('.', "/");
    for suffix in module_files(&path) {
        let found = index.by_suffix(&suffix);
        if let Some(&first) = found.first() {
            let depth = index.all[first].matches('/').count();
            let mut out: Vec<usize> = found
                .into_iter()
                .filter(|&i| index.all[i].matches('/').count() == depth)
                .collect();
            for symbol in &import.symbols {
                let parent_dir = parent(index.all[out[0]]);
                if let Some(i) =
                    index.first(module_files(&join(parent_dir, symbol).unwrap_or_default()))
                {
                    out.push(i);
                }
            }
            return out;
        }
    }
    Vec::new()
}

fn resolve_go(index: &FileIndex<'_>, layout: &ProjectLayout, source: &str) -> Vec<usize> {
    let module = layout
        .go_modules
        .iter()
        .filter(|(path, _)| source == path || source.starts_with(&format!("{path}/")))
        .max_by_key(|(path, _)| path.len());
    let Some((module_path, directory)) = module else {
        return Vec::new();
    };
    let rest = source[module_path.len()..].trim_start_matches('/');
    let Some(package) = join(directory, rest) else {
        return Vec::new();
    };
    index
        .directories
        .get(package.as_str())
        .map(|files| {
            files
                .iter()
                .copied()
                .filter(|&i| {
                    let path = index.all[i];
                    has_extension(path, "go") && !path.ends_with("_test.go")
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The module directory of a Rust file: the directory its child modules live in.
fn rust_module_directory(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let directory = parent(path);
    match name {
        "lib.rs" | "main.rs" | "mod.rs" => directory.to_owned(),
        other => {
            let stem = other.trim_end_matches(".rs");
            if directory.is_empty() {
                stem.to_owned()
            } else {
                format!("{directory}/{stem}")
            }
        }
    }
}

/// The deepest module file for `segments` under `root` (a module directory).
fn rust_module_file(index: &FileIndex<'_>, root: &str, segments: &[&str]) -> Option<usize> {
    for take in (1..=segments.len()).rev() {
        let base = segments[..take].join("/");
        let base = if root.is_empty() {
            base
        } else {
            format!("{root}/{base}")
        };
        if let Some(found) = index.first([format!("{base}.rs"), format!("{base}/mod.rs")]) {
            return Some(found);
        }
    }
    None
}

fn resolve_rust(
    index: &FileIndex<'_>,
    layout: &ProjectLayout,
    from: &RelativePath,
    import: &ImportRef,
) -> Vec<usize> {
    let path = from.as_str();
    if import.kind == ImportKind::ModuleDeclaration {
        return rust_module_file(
            index,
            &rust_module_directory(path),
            &[import.source.as_str()],
        )
        .into_iter()
        .collect();
    }
    let segments: Vec<&str> = import
        .source
        .split("::")
        .filter(|s| !s.is_empty())
        .collect();
    let Some((&head, rest)) = segments.split_first() else {
        return Vec::new();
    };
    // The crate root directory: the `src` directory of the crate holding `from`.
    let crate_root = |crate_directory: &str| {
        if crate_directory.is_empty() {
            "src".to_owned()
        } else {
            format!("{crate_directory}/src")
        }
    };
    let own_crate = layout
        .rust_crates
        .iter()
        .filter(|c| c.directory.is_empty() || path.starts_with(&format!("{}/", c.directory)))
        .max_by_key(|c| c.directory.len());
    let (root, rest): (String, &[&str]) = match head {
        "crate" => {
            if let Some(own) = own_crate {
                (crate_root(&own.directory), rest)
            } else {
                // Without a manifest: the nearest `src` directory above the file.
                let mut directory = parent(path);
                while !directory.is_empty() && !directory.ends_with("src") {
                    directory = parent(directory);
                }
                (directory.to_owned(), rest)
            }
        }
        "self" => (rust_module_directory(path), rest),
        "super" => {
            let mut module = rust_module_directory(path);
            let mut remaining = rest;
            module = parent(&module).to_owned();
            while let Some((&"super", tail)) = remaining.split_first() {
                module = parent(&module).to_owned();
                remaining = tail;
            }
            (module, remaining)
        }
        name => match layout.rust_crates.iter().find(|c| c.name == name) {
            Some(other) => (crate_root(&other.directory), rest),
            None => return Vec::new(),
        },
    };
    let mut found: Vec<usize> = if rest.is_empty() {
        Vec::new()
    } else {
        rust_module_file(index, &root, rest).into_iter().collect()
    };
    // `use crate::a::{b, c}`: each listed name may be a module of its own.
    for symbol in &import.symbols {
        let mut with_symbol: Vec<&str> = rest.to_vec();
        with_symbol.push(symbol);
        if let Some(i) = rust_module_file(index, &root, &with_symbol)
            && !found.contains(&i)
        {
            found.push(i);
        }
    }
    if found.is_empty()
        && let Some(i) = index.first([
            format!("{root}/lib.rs"),
            format!("{root}/main.rs"),
            format!("{root}/mod.rs"),
        ])
    {
        found.push(i);
    }
    found
}

fn resolve_java(index: &FileIndex<'_>, source: &str) -> Vec<usize> {
    let source = source.trim_start_matches("static ");
    if let Some(package) = source.strip_suffix(".*") {
        let suffix = package.replace('.', "/");
        return index
            .directories
            .iter()
            .filter(|(directory, _)| {
                **directory == suffix || directory.ends_with(&format!("/{suffix}"))
            })
            .flat_map(|(_, files)| files.iter().copied())
            .filter(|&i| has_extension(index.all[i], "java"))
            .collect::<HashSet<usize>>()
            .into_iter()
            .collect();
    }
    // `a.b.C` or `a.b.C.member` (static imports): try the longest class path.
    let parts: Vec<&str> = source.split('.').collect();
    for take in (1..=parts.len()).rev() {
        let found = index.by_suffix(&format!("{}.java", parts[..take].join("/")));
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// The import graph of a RepoMap: edges between file indices, both directions.
#[derive(Clone, Debug, Default)]
pub struct ImportGraph {
    /// `forward[i]`: files that file `i` imports, sorted, no duplicates.
    pub forward: Vec<Vec<u32>>,
    /// `reverse[i]`: files that import file `i`, sorted, no duplicates.
    pub reverse: Vec<Vec<u32>>,
}

/// Files with more import edges than this (in and out) are hubs: the search for
/// import proximity reaches them but does not continue through them.
pub const HUB_DEGREE: usize = 24;

/// Edge counts for traces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportGraphStats {
    /// Imports read.
    pub imports: usize,
    /// Imports resolved to at least one repository file.
    pub resolved: usize,
    /// Distinct edges.
    pub edges: usize,
}

impl ImportGraph {
    /// Builds the graph from the imports each file of `repo` carries
    /// ([`crate::repo_map::FileEntry::imports`]; empty for files not parsed).
    pub fn build(repo: &RepoMap, layout: &ProjectLayout) -> (Self, ImportGraphStats) {
        Self::build_reusing(repo, layout, &mut Vec::new())
    }

    /// [`ImportGraph::build`], reusing the resolution of files resolved by an
    /// earlier call over the same files: `memo[i]` holds file `i`'s edges and
    /// import counts once resolved (the memo grows to the number of files). A
    /// caller that changes a file's imports between calls must reset
    /// `memo[i]` to `None`.
    pub fn build_reusing(
        repo: &RepoMap,
        layout: &ProjectLayout,
        memo: &mut Vec<Option<ResolvedImports>>,
    ) -> (Self, ImportGraphStats) {
        memo.resize(repo.files.len(), None);
        let index = memo
            .iter()
            .any(Option::is_none)
            .then(|| FileIndex::new(repo));
        Self::assemble(
            repo,
            layout,
            index.as_ref(),
            |i| &repo.files[i].imports,
            memo,
        )
    }

    /// [`ImportGraph::build_reusing`] over imports kept beside the RepoMap
    /// (`imports[i]` for file `i`) with an [`ImportIndex`] built once: a
    /// caller that parses imports in rounds pays for the index once.
    ///
    /// # Panics
    ///
    /// When `imports` is shorter than `repo.files`.
    pub fn build_indexed(
        repo: &RepoMap,
        layout: &ProjectLayout,
        index: &ImportIndex<'_>,
        imports: &[Vec<ImportRef>],
        memo: &mut Vec<Option<ResolvedImports>>,
    ) -> (Self, ImportGraphStats) {
        assert!(
            imports.len() >= repo.files.len(),
            "one import list per file"
        );
        memo.resize(repo.files.len(), None);
        Self::assemble(repo, layout, Some(&index.0), |i| &imports[i], memo)
    }

    fn assemble<'r>(
        repo: &RepoMap,
        layout: &ProjectLayout,
        index: Option<&FileIndex<'_>>,
        imports_of: impl Fn(usize) -> &'r [ImportRef],
        memo: &mut [Option<ResolvedImports>],
    ) -> (Self, ImportGraphStats) {
        let n = repo.files.len();
        let mut stats = ImportGraphStats::default();
        for (i, file) in repo.files.iter().enumerate() {
            if memo[i].is_none()
                && let Some(index) = index
            {
                let mut resolved = ResolvedImports::default();
                for import in imports_of(i) {
                    resolved.imports += 1;
                    let targets = resolve(index, layout, &file.path, file.language, import);
                    if !targets.is_empty() {
                        resolved.resolved += 1;
                    }
                    resolved
                        .targets
                        .extend(targets.into_iter().filter(|&t| t != i).map(|t| t as u32));
                }
                resolved.targets.sort_unstable();
                resolved.targets.dedup();
                memo[i] = Some(resolved);
            }
        }
        let mut forward: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, resolved) in memo.iter().enumerate() {
            if let Some(resolved) = resolved {
                stats.imports += resolved.imports;
                stats.resolved += resolved.resolved;
                forward[i].clone_from(&resolved.targets);
            }
        }
        let mut reverse: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, targets) in forward.iter().enumerate() {
            stats.edges += targets.len();
            for &t in targets {
                reverse[t as usize].push(i as u32);
            }
        }
        (Self { forward, reverse }, stats)
    }

    /// ImportGraphProximityScorer: breadth-first search from `seeds` over forward
    /// and reverse edges; depth 0 scores 1.0, 1 scores 0.6, 2 scores 0.3, 3 scores
    /// 0.1 (seed §8); deeper or unreachable files score 0. The search does not
    /// continue through hubs (more than [`HUB_DEGREE`] edges) other than seeds.
    pub fn proximity(&self, seeds: &[usize]) -> Vec<f64> {
        const SCORES: [f64; 4] = [1.0, 0.6, 0.3, 0.1];
        let n = self.forward.len();
        let mut depth: Vec<Option<usize>> = vec![None; n];
        let mut queue = VecDeque::new();
        for &seed in seeds {
            if seed < n && depth[seed].is_none() {
                depth[seed] = Some(0);
                queue.push_back(seed);
            }
        }
        while let Some(node) = queue.pop_front() {
            let Some(d) = depth[node] else { continue };
            if d + 1 >= SCORES.len() {
                continue;
            }
            // A hub (a crate root, a barrel `index.ts`, a package `__init__.py`)
            // is reached like any file but does not pass proximity on: through it
            // every file would be two steps from every other.
            let degree = self.forward[node].len() + self.reverse[node].len();
            if d > 0 && degree > HUB_DEGREE {
                continue;
            }
            for &next in self.forward[node].iter().chain(&self.reverse[node]) {
                let next = next as usize;
                if depth[next].is_none() {
                    depth[next] = Some(d + 1);
                    queue.push_back(next);
                }
            }
        }
        depth
            .into_iter()
            .map(|d| d.map_or(0.0, |d| SCORES[d]))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;
    use crate::repo_map::FileEntry;

    fn repo(paths: &[&str]) -> RepoMap {
        FileEntry::repo_for_test(paths)
    }

    fn import(source: &str, symbols: &[&str], kind: ImportKind) -> ImportRef {
        ImportRef {
            source: source.to_owned(),
            symbols: symbols.iter().map(|s| (*s).to_owned()).collect(),
            is_relative: source.starts_with('.'),
            kind,
        }
    }

    fn resolved(
        files: &[&str],
        layout: &ProjectLayout,
        from: &str,
        imp: &ImportRef,
    ) -> Vec<String> {
        let repo = repo(files);
        let index = FileIndex::new(&repo);
        let from = RelativePath::new(from).unwrap();
        let language = Language::detect(&from);
        let mut out: Vec<String> = resolve(&index, layout, &from, language, imp)
            .into_iter()
            .map(|i| repo.files[i].path.to_string())
            .collect();
        out.sort();
        out
    }

    const JS_FILES: &[&str] = &[
        "apps/web/src/user/service.ts",
        "apps/web/src/user/model.ts",
        "apps/web/src/user/index.ts",
        "apps/web/src/lib/http.js",
        "apps/web/src/components/Button.tsx",
        "apps/web/tsconfig.json",
        "packages/ui/package.json",
        "packages/ui/src/index.ts",
        "packages/ui/src/button.tsx",
    ];

    fn js_layout() -> ProjectLayout {
        ProjectLayout {
            ts_configs: vec![TsConfig {
                directory: "apps/web".to_owned(),
                base_url: Some(".".to_owned()),
                paths: vec![("@/*".to_owned(), vec!["src/*".to_owned()])],
            }],
            js_packages: vec![JsPackage {
                name: "@acme/ui".to_owned(),
                directory: "packages/ui".to_owned(),
                entries: vec!["src/index.ts".to_owned()],
            }],
            ..ProjectLayout::default()
        }
    }

    #[test_case("./model", &["apps/web/src/user/model.ts"])]
    #[test_case("../user", &["apps/web/src/user/index.ts"])]
    #[test_case("../lib/http.js", &["apps/web/src/lib/http.js"])]
    #[test_case("@/components/Button", &["apps/web/src/components/Button.tsx"])]
    #[test_case("src/user/model", &["apps/web/src/user/model.ts"])]
    #[test_case("@acme/ui", &["packages/ui/src/index.ts"])]
    #[test_case("@acme/ui/button", &["packages/ui/src/button.tsx"])]
    #[test_case("react", &[])]
    #[test_case("../../../../outside", &[])]
    fn resolves_typescript(source: &str, expected: &[&str]) {
        let imp = import(source, &[], ImportKind::Import);
        assert_eq!(
            resolved(JS_FILES, &js_layout(), "apps/web/src/user/service.ts", &imp),
            expected
        );
    }

    #[test]
    fn js_specifier_written_with_js_extension_finds_the_ts_source() {
        let files = ["src/a.ts", "src/b.ts"];
        let imp = import("./b.js", &[], ImportKind::Import);
        assert_eq!(
            resolved(&files, &ProjectLayout::default(), "src/a.ts", &imp),
            ["src/b.ts"]
        );
    }

    const PY_FILES: &[&str] = &[
        "src/click/__init__.py",
        "src/click/core.py",
        "src/click/parser.py",
        "src/click/utils/__init__.py",
        "src/click/utils/text.py",
        "tests/test_core.py",
    ];

    #[test_case("src/click/core.py", ".parser", &[], &["src/click/parser.py"])]
    #[test_case("src/click/core.py", ".", &["parser", "nothing"], &["src/click/parser.py"])]
    #[test_case("src/click/utils/text.py", "..core", &[], &["src/click/core.py"])]
    #[test_case("tests/test_core.py", "click.core", &[], &["src/click/core.py"])]
    #[test_case("tests/test_core.py", "click", &["utils"], &["src/click/__init__.py", "src/click/utils/__init__.py"])]
    #[test_case("tests/test_core.py", "click.utils.text", &[], &["src/click/utils/text.py"])]
    #[test_case("tests/test_core.py", "os.path", &[], &[])]
    fn resolves_python(from: &str, source: &str, symbols: &[&str], expected: &[&str]) {
        let imp = import(source, symbols, ImportKind::Import);
        assert_eq!(
            resolved(PY_FILES, &ProjectLayout::default(), from, &imp),
            expected
        );
    }

    #[test]
    fn resolves_go_packages_through_the_module_path() {
        let files = [
            "go.mod",
            "cmd/app/main.go",
            "internal/store/db.go",
            "internal/store/cache.go",
            "internal/store/db_test.go",
        ];
        let layout = ProjectLayout {
            go_modules: vec![("example.com/app".to_owned(), String::new())],
            ..ProjectLayout::default()
        };
        let imp = import("example.com/app/internal/store", &[], ImportKind::Import);
        assert_eq!(
            resolved(&files, &layout, "cmd/app/main.go", &imp),
            ["internal/store/cache.go", "internal/store/db.go"]
        );
        let external = import("github.com/other/lib", &[], ImportKind::Import);
        assert!(resolved(&files, &layout, "cmd/app/main.go", &external).is_empty());
    }

    const RUST_FILES: &[&str] = &[
        "Cargo.toml",
        "src/lib.rs",
        "src/scan.rs",
        "src/runner.rs",
        "src/commands/mod.rs",
        "src/commands/compile.rs",
        "stages/Cargo.toml",
        "stages/src/lib.rs",
        "stages/src/guard.rs",
        "stages/src/guard/secret.rs",
    ];

    fn rust_layout() -> ProjectLayout {
        ProjectLayout {
            rust_crates: vec![
                RustCrate {
                    name: "aic".to_owned(),
                    directory: String::new(),
                },
                RustCrate {
                    name: "aic_stages".to_owned(),
                    directory: "stages".to_owned(),
                },
            ],
            ..ProjectLayout::default()
        }
    }

    #[test_case("src/lib.rs", "scan", &[], ImportKind::ModuleDeclaration, &["src/scan.rs"])]
    #[test_case("src/commands/mod.rs", "compile", &[], ImportKind::ModuleDeclaration, &["src/commands/compile.rs"])]
    #[test_case("stages/src/guard.rs", "secret", &[], ImportKind::ModuleDeclaration, &["stages/src/guard/secret.rs"])]
    #[test_case("src/runner.rs", "crate::scan", &["scan", "ScanOptions"], ImportKind::Import, &["src/scan.rs"])]
    #[test_case("src/commands/compile.rs", "super::super::runner", &["compile"], ImportKind::Import, &["src/runner.rs"])]
    #[test_case("src/commands/compile.rs", "crate", &["commands"], ImportKind::Import, &["src/commands/mod.rs"])]
    #[test_case("src/runner.rs", "aic_stages::guard", &["ContextGuard"], ImportKind::Import, &["stages/src/guard.rs"])]
    #[test_case("src/runner.rs", "std::path", &["Path"], ImportKind::Import, &[])]
    fn resolves_rust(
        from: &str,
        source: &str,
        symbols: &[&str],
        kind: ImportKind,
        expected: &[&str],
    ) {
        let imp = import(source, symbols, kind);
        assert_eq!(resolved(RUST_FILES, &rust_layout(), from, &imp), expected);
    }

    #[test]
    fn resolves_java_classes_and_wildcards() {
        let files = [
            "src/main/java/com/acme/App.java",
            "src/main/java/com/acme/model/User.java",
            "src/main/java/com/acme/model/Role.java",
        ];
        let layout = ProjectLayout::default();
        let from = "src/main/java/com/acme/App.java";
        let single = import("com.acme.model.User", &[], ImportKind::Import);
        assert_eq!(
            resolved(&files, &layout, from, &single),
            ["src/main/java/com/acme/model/User.java"]
        );
        let wildcard = import("com.acme.model.*", &[], ImportKind::Import);
        assert_eq!(resolved(&files, &layout, from, &wildcard).len(), 2);
        let external = import("java.util.List", &[], ImportKind::Import);
        assert!(resolved(&files, &layout, from, &external).is_empty());
    }

    #[test]
    fn hubs_are_reached_but_do_not_connect_everything() {
        // Thirty files import `hub.ts`; `seed.ts` imports it too.
        let mut paths: Vec<String> = (0..30).map(|i| format!("f{i}.ts")).collect();
        paths.push("hub.ts".to_owned());
        paths.push("seed.ts".to_owned());
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        let mut repo = repo(&refs);
        let imports: Vec<Vec<ImportRef>> = repo
            .files
            .iter()
            .map(|f| {
                if f.path.as_str() == "hub.ts" {
                    Vec::new()
                } else {
                    vec![import("./hub", &[], ImportKind::Import)]
                }
            })
            .collect();
        for (file, file_imports) in repo.files.iter_mut().zip(imports) {
            file.imports = file_imports;
        }
        let (graph, _) = ImportGraph::build(&repo, &ProjectLayout::default());
        let seed = repo
            .files
            .iter()
            .position(|f| f.path.as_str() == "seed.ts")
            .unwrap();
        let hub = repo
            .files
            .iter()
            .position(|f| f.path.as_str() == "hub.ts")
            .unwrap();
        let scores = graph.proximity(&[seed]);
        assert!((scores[hub] - 0.6).abs() < 1e-12);
        let others = repo
            .files
            .iter()
            .position(|f| f.path.as_str() == "f3.ts")
            .unwrap();
        assert!(scores[others].abs() < 1e-12, "{}", scores[others]);
    }

    #[test]
    fn proximity_scores_by_depth_both_directions() {
        // a imports b, b imports c, c imports d, d imports e; x imports a.
        let mut repo = repo(&["a.ts", "b.ts", "c.ts", "d.ts", "e.ts", "x.ts", "lonely.ts"]);
        let imports: Vec<Vec<ImportRef>> = repo
            .files
            .iter()
            .map(|f| match f.path.as_str() {
                "a.ts" => vec![import("./b", &[], ImportKind::Import)],
                "b.ts" => vec![import("./c", &[], ImportKind::Import)],
                "c.ts" => vec![import("./d", &[], ImportKind::Import)],
                "d.ts" => vec![import("./e", &[], ImportKind::Import)],
                "x.ts" => vec![
                    import("./a", &[], ImportKind::Import),
                    import("lodash", &[], ImportKind::Import),
                ],
                _ => Vec::new(),
            })
            .collect();
        for (file, file_imports) in repo.files.iter_mut().zip(imports) {
            file.imports = file_imports;
        }
        let (graph, stats) = ImportGraph::build(&repo, &ProjectLayout::default());
        assert_eq!(
            stats,
            ImportGraphStats {
                imports: 6,
                resolved: 5,
                edges: 5
            }
        );
        let a = repo
            .files
            .iter()
            .position(|f| f.path.as_str() == "a.ts")
            .unwrap();
        let scores = graph.proximity(&[a]);
        let by_name: HashMap<&str, f64> = repo
            .files
            .iter()
            .map(|f| f.path.as_str())
            .zip(scores)
            .collect();
        let expected = [
            ("a.ts", 1.0),
            ("b.ts", 0.6),
            ("x.ts", 0.6),
            ("c.ts", 0.3),
            ("d.ts", 0.1),
            ("e.ts", 0.0),
            ("lonely.ts", 0.0),
        ];
        for (name, score) in expected {
            assert!(
                (by_name[name] - score).abs() < 1e-12,
                "{name}: {}",
                by_name[name]
            );
        }
    }
}
