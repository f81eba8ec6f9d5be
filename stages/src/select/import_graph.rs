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

use std::collections::{BTreeMap, HashMap, VecDeque};

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

/// The import graph of a RepoMap: edges between file indices, both directions,
/// kept only for the files that have an edge.
///
/// A compile parses the imports of a few hundred files, so the graph is
/// sparse: its files with an edge, sorted, and for each of them its targets
/// and its importers as ranges of two edge lists (compressed rows). Its size
/// follows the edges, not the RepoMap: a file without an edge costs nothing.
#[derive(Clone, Debug, Default)]
pub struct ImportGraph {
    /// The number of files of the RepoMap.
    files: usize,
    /// Files with at least one edge (indices into the RepoMap), ascending.
    nodes: Vec<u32>,
    /// What each node imports, sorted, no duplicates.
    forward: Adjacency,
    /// What imports each node, sorted, no duplicates.
    reverse: Adjacency,
}

/// Edge lists of the nodes, one after the other: node `k`'s list is
/// `edges[ends[k - 1]..ends[k]]` (`0..ends[0]` for the first).
#[derive(Clone, Debug, Default)]
struct Adjacency {
    ends: Vec<u32>,
    edges: Vec<u32>,
}

impl Adjacency {
    fn of(&self, node: usize) -> &[u32] {
        let start = if node == 0 { 0 } else { self.ends[node - 1] };
        &self.edges[start as usize..self.ends[node] as usize]
    }
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
    /// Builds the graph from the imports of the files parsed so far
    /// (`imports`: RepoMap index → the file's imports; a file not in it has
    /// no outgoing edge), with an [`ImportIndex`] built once. `memo` keeps
    /// each parsed file's resolution between calls over the same files, so a
    /// caller that parses imports in rounds resolves each file once: a file
    /// of `imports` without an entry is resolved and gets one; a caller that
    /// changes a file's imports between calls removes its entry. The graph's
    /// edges are those of every file in `memo`.
    ///
    /// # Panics
    ///
    /// When an index of `imports` without an entry in `memo` is not below
    /// `repo.files.len()` (it is resolved as a file of `repo`).
    pub fn build_indexed(
        repo: &RepoMap,
        layout: &ProjectLayout,
        index: &ImportIndex,
        imports: &BTreeMap<usize, Vec<ImportRef>>,
        memo: &mut BTreeMap<usize, ResolvedImports>,
    ) -> (Self, ImportGraphStats) {
        let index = &index.0;
        let mut stats = ImportGraphStats::default();
        // Files are resolved in parallel (each alone), then stored in
        // index order; a file with no imports resolves to nothing.
        let unresolved: Vec<(usize, &Vec<ImportRef>)> = imports
            .iter()
            .filter(|(i, _)| !memo.contains_key(i))
            .map(|(&i, imports)| (i, imports))
            .collect();
        let fresh: Vec<(usize, ResolvedImports)> = unresolved
            .into_par_iter()
            .map(|(i, imports)| {
                let file = &repo.files[i];
                let mut resolved = ResolvedImports::default();
                for import in imports {
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
        memo.extend(fresh);
        for resolved in memo.values() {
            stats.imports += resolved.imports;
            stats.resolved += resolved.resolved;
            stats.edges += resolved.targets.len();
        }
        (Self::from_edges(repo.files.len(), memo), stats)
    }

    /// The graph of `files` files whose outgoing edges are `sources`' targets
    /// (sources ascending, each one's targets sorted and distinct).
    fn from_edges(files: usize, sources: &BTreeMap<usize, ResolvedImports>) -> Self {
        let mut nodes: Vec<u32> = sources
            .iter()
            .filter(|(_, resolved)| !resolved.targets.is_empty())
            .flat_map(|(&i, resolved)| {
                std::iter::once(i as u32).chain(resolved.targets.iter().copied())
            })
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        let node_of = |file: u32| {
            nodes
                .binary_search(&file)
                .expect("every end of an edge is a node")
        };
        let mut forward = Adjacency::default();
        let mut in_degree = vec![0_u32; nodes.len()];
        let mut targets = sources
            .iter()
            .filter(|(_, resolved)| !resolved.targets.is_empty())
            .peekable();
        for &node in &nodes {
            if let Some((_, resolved)) = targets.next_if(|&(&i, _)| i == node as usize) {
                forward.edges.extend_from_slice(&resolved.targets);
                for &target in &resolved.targets {
                    in_degree[node_of(target)] += 1;
                }
            }
            forward.ends.push(forward.edges.len() as u32);
        }
        // Importers are filled in ascending order of the importing file, so
        // each node's list comes out sorted.
        let mut reverse = Adjacency {
            ends: Vec::with_capacity(nodes.len()),
            edges: vec![0; forward.edges.len()],
        };
        let mut end = 0;
        for degree in &in_degree {
            end += degree;
            reverse.ends.push(end);
        }
        let mut filled = vec![0_u32; nodes.len()];
        for (position, &node) in nodes.iter().enumerate() {
            for &target in forward.of(position) {
                let k = node_of(target);
                let start = if k == 0 { 0 } else { reverse.ends[k - 1] };
                reverse.edges[(start + filled[k]) as usize] = node;
                filled[k] += 1;
            }
        }
        Self {
            files,
            nodes,
            forward,
            reverse,
        }
    }

    /// The files file `file` imports (RepoMap indices), sorted; empty for a
    /// file with none or outside the graph.
    pub fn imports_of(&self, file: usize) -> &[u32] {
        self.node(file).map_or(&[], |k| self.forward.of(k))
    }

    /// The files that import file `file` (RepoMap indices), sorted; empty
    /// for a file nothing imports or outside the graph.
    pub fn importers_of(&self, file: usize) -> &[u32] {
        self.node(file).map_or(&[], |k| self.reverse.of(k))
    }

    /// Every file with at least one importer, as (RepoMap index, number of
    /// importers), ascending by index.
    pub fn importer_counts(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .map(|(k, &file)| (file as usize, self.reverse.of(k).len()))
            .filter(|&(_, count)| count > 0)
    }

    /// The position of `file` among the nodes, when it has an edge.
    fn node(&self, file: usize) -> Option<usize> {
        u32::try_from(file)
            .ok()
            .and_then(|file| self.nodes.binary_search(&file).ok())
    }

    /// ImportGraphProximityScorer: breadth-first search from `seeds` over forward
    /// and reverse edges; depth 0 scores 1.0, 1 scores 0.6, 2 scores 0.3, 3 scores
    /// 0.1; deeper or unreachable files score 0. The search does not
    /// continue through hubs (more than [`HUB_DEGREE`] edges) other than seeds,
    /// and a reached file that more than [`HUB_DEGREE`] files import keeps
    /// [`HUB_CREDIT`] of its score.
    ///
    /// Returns the reached files (every score above 0) as (RepoMap index,
    /// score), ascending by index; seeds not below the RepoMap's file count
    /// are ignored.
    pub fn proximity(&self, seeds: &[usize]) -> Vec<(usize, f64)> {
        const SCORES: [f64; 4] = [1.0, 0.6, 0.3, 0.1];
        let mut depth: HashMap<usize, usize> = HashMap::new();
        let mut queue = VecDeque::new();
        for &seed in seeds {
            if seed < self.files && !depth.contains_key(&seed) {
                depth.insert(seed, 0);
                queue.push_back((seed, 0));
            }
        }
        while let Some((node, d)) = queue.pop_front() {
            if d + 1 >= SCORES.len() {
                continue;
            }
            // A hub (a crate root, a barrel `index.ts`, a package `__init__.py`)
            // is reached like any file but does not pass proximity on: through it
            // every file would be two steps from every other.
            let (out, into) = (self.imports_of(node), self.importers_of(node));
            if d > 0 && out.len() + into.len() > HUB_DEGREE {
                continue;
            }
            for &next in out.iter().chain(into) {
                let next = next as usize;
                if let std::collections::hash_map::Entry::Vacant(slot) = depth.entry(next) {
                    slot.insert(d + 1);
                    queue.push_back((next, d + 1));
                }
            }
        }
        // A file imported by many (a shared utility, a package root) is near
        // everything: being reached says little, so it keeps a fraction of the
        // score — unless it is a seed.
        let mut reached: Vec<(usize, f64)> = depth
            .into_iter()
            .map(|(node, d)| {
                let score = if d > 0 && self.importers_of(node).len() > HUB_DEGREE {
                    SCORES[d] * HUB_CREDIT
                } else {
                    SCORES[d]
                };
                (node, score)
            })
            .collect();
        reached.sort_unstable_by_key(|&(node, _)| node);
        reached
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
        let imports: BTreeMap<usize, Vec<ImportRef>> = repo
            .files
            .iter()
            .map(|f| imports_of(f.path.as_str()))
            .enumerate()
            .collect();
        let index = ImportIndex::new(repo);
        ImportGraph::build_indexed(
            repo,
            &ProjectLayout::default(),
            &index,
            &imports,
            &mut BTreeMap::new(),
        )
    }

    fn position(repo: &RepoMap, path: &str) -> usize {
        repo.files
            .iter()
            .position(|f| f.path.as_str() == path)
            .unwrap()
    }

    /// Proximity as a score per file of `repo`, 0 for the files not reached.
    fn dense(repo: &RepoMap, reached: &[(usize, f64)]) -> Vec<f64> {
        let mut scores = vec![0.0; repo.files.len()];
        for &(file, score) in reached {
            scores[file] = score;
        }
        scores
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
        let scores = dense(&repo, &graph.proximity(&[position(&repo, "seed.ts")]));
        // Everything imports the hub: reaching it says little.
        assert!((scores[position(&repo, "hub.ts")] - 0.6 * HUB_CREDIT).abs() < 1e-12);
        let other = scores[position(&repo, "f3.ts")];
        assert!(other.abs() < 1e-12, "{other}");
        // As a seed it keeps its full score.
        let scores = dense(&repo, &graph.proximity(&[position(&repo, "hub.ts")]));
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
        let scores = dense(&repo, &graph.proximity(&[position(&repo, "a.ts")]));
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
        let mut imports = BTreeMap::from([(0, vec![import("./b")])]);
        let mut memo = BTreeMap::new();
        let layout = ProjectLayout::default();
        let (first, _) = ImportGraph::build_indexed(&repo, &layout, &index, &imports, &mut memo);
        assert_eq!(first.imports_of(0), [1]);
        assert_eq!(first.importers_of(1), [0]);
        assert!(first.imports_of(1).is_empty());
        // A second round parses `b.ts`; `a.ts`'s resolution is kept.
        imports.insert(1, vec![import("./c")]);
        let (second, stats) =
            ImportGraph::build_indexed(&repo, &layout, &index, &imports, &mut memo);
        assert_eq!(second.imports_of(0), [1]);
        assert_eq!(second.imports_of(1), [2]);
        assert_eq!(second.importers_of(2), [1]);
        assert_eq!(
            second.importer_counts().collect::<Vec<_>>(),
            [(1, 1), (2, 1)]
        );
        assert_eq!(stats.edges, 2);
        // A file outside the graph has no edge either way.
        assert!(second.imports_of(7).is_empty() && second.importers_of(7).is_empty());
    }

    #[test]
    fn importers_come_out_sorted_and_whole() {
        // Four files import `d.ts` and `e.ts` in an order unlike their own.
        let repo = FileEntry::repo_for_test(&["a.ts", "b.ts", "c.ts", "d.ts", "e.ts", "f.ts"]);
        let (graph, stats) = build(&repo, |path| match path {
            "a.ts" | "c.ts" => vec![import("./e"), import("./d")],
            "f.ts" | "b.ts" => vec![import("./d")],
            "d.ts" => vec![import("./a")],
            _ => Vec::new(),
        });
        assert_eq!(graph.importers_of(3), [0, 1, 2, 5]);
        assert_eq!(graph.importers_of(4), [0, 2]);
        assert_eq!(graph.importers_of(0), [3]);
        assert_eq!(graph.imports_of(0), [3, 4]);
        assert_eq!(stats.edges, 7);
        assert_eq!(
            graph.importer_counts().collect::<Vec<_>>(),
            [(0, 1), (3, 4), (4, 2)]
        );
    }
}
