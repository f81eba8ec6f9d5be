//! Import resolution to repository files, the import graph, and the
//! ImportGraphProximityScorer (import proximity, one of the selection signals:
//! `docs/selection.md`).
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
//! name and makes no edge. Manifests are read by the binary and passed in as a
//! [`ProjectLayout`] ([`layout`]); paths are indexed once per RepoMap
//! ([`ImportIndex`]); one module per language under [`resolve`] turns an import
//! into files.

mod index;
pub mod layout;
pub mod resolve;

use std::collections::VecDeque;

use rayon::prelude::*;
use serde::Serialize;

use crate::lang::ImportRef;
use crate::repo_map::RepoMap;
pub use index::ImportIndex;
pub use layout::{JsPackage, ProjectLayout, RustCrate, TsConfig};
use resolve::resolve;

/// One file's resolved imports, kept between rounds of [`ImportGraph::build_indexed`].
#[derive(Clone, Debug, Default)]
pub struct ResolvedImports {
    /// Files it imports (indices into the RepoMap), sorted, without itself.
    pub targets: Vec<u32>,
    /// Imports it has.
    pub imports: usize,
    /// Imports that resolved to at least one file.
    pub resolved: usize,
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

/// The share of its proximity score a file imported by more than
/// [`HUB_DEGREE`] files keeps when it is reached (not a seed).
pub const HUB_CREDIT: f64 = 0.3;

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
    /// Builds the graph from the imports of each file of `repo` (`imports[i]`
    /// for file `i`; empty for files not parsed), with an [`ImportIndex`]
    /// built once. `memo[i]` keeps file `i`'s resolution between calls over
    /// the same files (the memo grows to the number of files), so a caller
    /// that parses imports in rounds resolves each file once; a caller that
    /// changes a file's imports between calls resets `memo[i]` to `None`.
    ///
    /// # Panics
    ///
    /// When `imports` is shorter than `repo.files`.
    pub fn build_indexed(
        repo: &RepoMap,
        layout: &ProjectLayout,
        index: &ImportIndex,
        imports: &[Vec<ImportRef>],
        memo: &mut Vec<Option<ResolvedImports>>,
    ) -> (Self, ImportGraphStats) {
        assert!(
            imports.len() >= repo.files.len(),
            "one import list per file"
        );
        memo.resize(repo.files.len(), None);
        let index = &index.0;
        let n = repo.files.len();
        let mut stats = ImportGraphStats::default();
        // Files are resolved in parallel (each alone), then stored in
        // index order; a file with no imports resolves to nothing.
        let fresh: Vec<(usize, ResolvedImports)> = memo
            .par_iter()
            .enumerate()
            .filter(|&(i, known)| known.is_none() && !imports[i].is_empty())
            .map(|(i, _)| {
                let file = &repo.files[i];
                let mut resolved = ResolvedImports::default();
                for import in &imports[i] {
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
                (i, resolved)
            })
            .collect();
        for (i, resolved) in fresh {
            memo[i] = Some(resolved);
        }
        for known in memo.iter_mut().filter(|known| known.is_none()) {
            *known = Some(ResolvedImports::default());
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
    /// 0.1; deeper or unreachable files score 0. The search does not
    /// continue through hubs (more than [`HUB_DEGREE`] edges) other than seeds,
    /// and a reached file that more than [`HUB_DEGREE`] files import keeps
    /// [`HUB_CREDIT`] of its score.
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
        // A file imported by many (a shared utility, a package root) is near
        // everything: being reached says little, so it keeps a fraction of the
        // score — unless it is a seed.
        depth
            .into_iter()
            .enumerate()
            .map(|(node, d)| {
                d.map_or(0.0, |d| {
                    if d > 0 && self.reverse[node].len() > HUB_DEGREE {
                        SCORES[d] * HUB_CREDIT
                    } else {
                        SCORES[d]
                    }
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::lang::ImportKind;
    use crate::repo_map::FileEntry;

    fn import(source: &str) -> ImportRef {
        ImportRef {
            source: source.to_owned(),
            symbols: Vec::new(),
            is_relative: source.starts_with('.'),
            kind: ImportKind::Import,
        }
    }

    /// The graph of `repo` with each file's imports from `imports_of`.
    fn build(
        repo: &RepoMap,
        imports_of: impl Fn(&str) -> Vec<ImportRef>,
    ) -> (ImportGraph, ImportGraphStats) {
        let imports: Vec<Vec<ImportRef>> = repo
            .files
            .iter()
            .map(|f| imports_of(f.path.as_str()))
            .collect();
        let index = ImportIndex::new(repo);
        ImportGraph::build_indexed(
            repo,
            &ProjectLayout::default(),
            &index,
            &imports,
            &mut Vec::new(),
        )
    }

    fn position(repo: &RepoMap, path: &str) -> usize {
        repo.files
            .iter()
            .position(|f| f.path.as_str() == path)
            .unwrap()
    }

    #[test]
    fn hubs_are_reached_but_do_not_connect_everything() {
        // Thirty files import `hub.ts`; `seed.ts` imports it too.
        let mut paths: Vec<String> = (0..30).map(|i| format!("f{i}.ts")).collect();
        paths.push("hub.ts".to_owned());
        paths.push("seed.ts".to_owned());
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        let repo = FileEntry::repo_for_test(&refs);
        let (graph, _) = build(&repo, |path| {
            if path == "hub.ts" {
                Vec::new()
            } else {
                vec![import("./hub")]
            }
        });
        let scores = graph.proximity(&[position(&repo, "seed.ts")]);
        // Everything imports the hub: reaching it says little.
        assert!((scores[position(&repo, "hub.ts")] - 0.6 * HUB_CREDIT).abs() < 1e-12);
        let other = scores[position(&repo, "f3.ts")];
        assert!(other.abs() < 1e-12, "{other}");
        // As a seed it keeps its full score.
        let scores = graph.proximity(&[position(&repo, "hub.ts")]);
        assert!((scores[position(&repo, "hub.ts")] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn proximity_scores_by_depth_both_directions() {
        // a imports b, b imports c, c imports d, d imports e; x imports a.
        let repo = FileEntry::repo_for_test(&[
            "a.ts",
            "b.ts",
            "c.ts",
            "d.ts",
            "e.ts",
            "x.ts",
            "lonely.ts",
        ]);
        let (graph, stats) = build(&repo, |path| match path {
            "a.ts" => vec![import("./b")],
            "b.ts" => vec![import("./c")],
            "c.ts" => vec![import("./d")],
            "d.ts" => vec![import("./e")],
            "x.ts" => vec![import("./a"), import("lodash")],
            _ => Vec::new(),
        });
        assert_eq!(
            stats,
            ImportGraphStats {
                imports: 6,
                resolved: 5,
                edges: 5
            }
        );
        let scores = graph.proximity(&[position(&repo, "a.ts")]);
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

    #[test]
    fn a_memo_keeps_resolutions_between_rounds() {
        let repo = FileEntry::repo_for_test(&["a.ts", "b.ts", "c.ts"]);
        let index = ImportIndex::new(&repo);
        let mut imports: Vec<Vec<ImportRef>> = vec![vec![import("./b")], Vec::new(), Vec::new()];
        let mut memo = Vec::new();
        let layout = ProjectLayout::default();
        let (first, _) = ImportGraph::build_indexed(&repo, &layout, &index, &imports, &mut memo);
        assert_eq!(first.forward[0], [1]);
        // A second round parses `b.ts`; its memo slot is reset, `a.ts`'s kept.
        imports[1] = vec![import("./c")];
        memo[1] = None;
        let (second, stats) =
            ImportGraph::build_indexed(&repo, &layout, &index, &imports, &mut memo);
        assert_eq!(second.forward[0], [1]);
        assert_eq!(second.forward[1], [2]);
        assert_eq!(second.reverse[2], [1]);
        assert_eq!(stats.edges, 2);
    }
}
