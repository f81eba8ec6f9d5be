//! The import graph, built lazily: imports are parsed only for the files that
//! can matter to this intent, in two rounds, through the per-file cache.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use aic_stages::content_hash::ContentHash;
use aic_stages::select::import_graph::{ImportGraph, ImportGraphStats, ResolvedImports};

use crate::pipeline::scan::Snapshot;
use aic_stages::lang::{ImportRef, provider_for};
use aic_stages::language::Language;
use aic_stages::relative_path::RelativePath;
use aic_stages::repo_map::RepoMap;
use aic_stages::select::selector::{FirstPass, HeuristicSelector};
use rayon::prelude::*;
use tracing::debug;

use crate::cache::FileCache;
use crate::cache::key::RowKind;
use crate::pipeline::isolate;
use crate::pipeline::scan::{Bounded, read_bounded};

/// Candidates whose imports are parsed for the import graph: the best of them by
/// every other signal. Files outside this set can only be reached as targets of
/// their imports; they rarely rank in the selection anyway, and parsing every
/// file of a large repository costs more than the rest of a compile.
pub const IMPORT_PARSE_CANDIDATES: usize = 200;

/// The most bytes of files read for their imports that are kept for the facts
/// phase, so that a selected file is not read from disk again (32 MiB).
pub const MAX_HELD_BYTES: usize = 32 << 20;

/// The import graph of one compile and what building it read.
#[derive(Debug)]
pub struct BuiltGraph {
    /// The graph.
    pub graph: ImportGraph,
    /// Its size.
    pub stats: ImportGraphStats,
    /// Files whose imports were parsed (from the cache or from disk).
    pub parsed: usize,
    /// The bytes of files that had to be read from disk, by their index in
    /// the RepoMap (bounded by [`MAX_HELD_BYTES`]).
    pub read: HashMap<usize, Arc<[u8]>>,
}

/// Up to [`IMPORT_PARSE_CANDIDATES`] code files outside test, example and
/// vendored directories, shallowest first (then by path): enough of the
/// import graph to tell which modules the rest of the code imports most.
pub fn shallow_code_files(repo: &RepoMap) -> Vec<usize> {
    let mut files: Vec<usize> = repo
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.language.is_code() && !aic_stages::select::orientation::is_test_path(f.path.as_str())
        })
        .map(|(i, _)| i)
        .collect();
    files.sort_by_key(|&i| (repo.files[i].path.as_str().matches('/').count(), i));
    files.truncate(IMPORT_PARSE_CANDIDATES);
    files
}

/// Files that may import one of `files`: those whose text holds the file's
/// stem as a word (`./model`, `from .formatting import`), at most
/// [`IMPORT_PARSE_CANDIDATES`], in path order. Their imports are parsed too,
/// so the graph has the edges into `files` even when nothing else ranks the
/// importers.
pub fn possible_importers(repo: &RepoMap, files: &[RelativePath]) -> Vec<usize> {
    let ids: Vec<u32> = files
        .iter()
        .filter_map(|path| {
            let name = path.as_str().rsplit('/').next()?;
            let stem = name.split('.').next().filter(|s| !s.is_empty())?;
            Some(aic_stages::select::terms::split_words(stem))
        })
        .flatten()
        .filter(|word| !aic_stages::select::terms::is_stopword(word))
        .map(|word| aic_stages::select::terms::term_id(&aic_stages::select::terms::stem(&word)))
        .collect();
    if ids.is_empty() {
        return Vec::new();
    }
    let query = aic_stages::select::term_list::TermQuery::new(&ids);
    repo.files
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            let mut found = false;
            if f.language.is_code() {
                f.term_stats.terms.for_each_hit(&query, |_, _| found = true);
            }
            found
        })
        .map(|(i, _)| i)
        .take(IMPORT_PARSE_CANDIDATES)
        .collect()
}

/// Parses the imports of the targets, the [`IMPORT_PARSE_CANDIDATES`] best
/// candidates (by every signal but import proximity) and `also_parse` (by
/// index: a diff's [`possible_importers`], an orienting context's
/// [`shallow_code_files`]), then once more for the files those reach within
/// two steps, so the search from the seeds can go on
/// through them. Deterministic: which files are parsed depends only on scores
/// and paths.
pub fn build(
    root: &Path,
    max_file_bytes: u64,
    snapshot: &Snapshot,
    selector: &HeuristicSelector,
    (first_pass, also_parse): (&FirstPass, Vec<usize>),
    keep_trees_of: usize,
    cache: Option<&FileCache>,
) -> BuiltGraph {
    let started = Instant::now();
    let repo = &snapshot.repo;
    let layout = snapshot.layout(root);
    let preliminary = selector.finish(repo, first_pass, IMPORT_PARSE_CANDIDATES, None);
    debug!("imports: preliminary selection in {:?}", started.elapsed());
    let index_of = |path: &RelativePath| repo.files.binary_search_by(|f| f.path.cmp(path)).ok();
    let mut wanted: Vec<usize> = preliminary
        .files
        .iter()
        .filter_map(|f| index_of(&f.path))
        .collect();
    // The best `keep_trees_of` are likely to be selected and parsed again
    // for their facts: their trees are kept when the compile keeps trees.
    let likely: HashSet<usize> = wanted.iter().copied().take(keep_trees_of).collect();
    wanted.extend(also_parse);
    // By RepoMap index, for the parsed files only: a compile parses a few
    // hundred of a repository's files.
    let mut memo: BTreeMap<usize, ResolvedImports> = BTreeMap::new();
    let mut read = HashMap::new();
    let mut held_bytes = 0usize;
    let mut imports_of: BTreeMap<usize, Vec<ImportRef>> = BTreeMap::new();
    let index = snapshot.import_index();
    let mut round = 0;
    loop {
        wanted.sort_unstable();
        wanted.dedup();
        wanted.retain(|i| !imports_of.contains_key(i));
        if let Some(cache) = cache {
            prefetch_imports(cache, repo, &wanted);
        }
        let imports: Vec<(usize, ParsedImports)> = wanted
            .par_iter()
            .map(|&i| {
                let file = &repo.files[i];
                let parsed = aic_stages::lang::keeping(likely.contains(&i), || {
                    parse_imports(
                        root,
                        max_file_bytes,
                        &file.path,
                        file.language,
                        file.content_hash,
                        cache,
                    )
                });
                (i, parsed)
            })
            .collect();
        let known = snapshot
            .resolved
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut fresh = Vec::new();
        for (i, file_imports) in imports {
            imports_of.insert(i, file_imports.imports);
            if let Some(bytes) = file_imports.bytes
                && held_bytes + bytes.len() <= MAX_HELD_BYTES
            {
                held_bytes += bytes.len();
                read.insert(i, Arc::from(bytes));
            }
            // A file parsed by an earlier compile on this snapshot is not
            // resolved again; the others are resolved below.
            match known.get(&i) {
                Some(resolved) => {
                    memo.insert(i, resolved.clone());
                }
                None => fresh.push(i),
            }
        }
        drop(known);
        debug!(
            "imports: round {round} read at {:?}: {} files, {} bytes",
            started.elapsed(),
            wanted.len(),
            wanted
                .iter()
                .map(|&i| repo.files[i].size_bytes)
                .sum::<u64>()
        );
        let (graph, stats) =
            ImportGraph::build_indexed(repo, layout, index, &imports_of, &mut memo);
        let mut known = snapshot
            .resolved
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for i in fresh {
            if let Some(resolved) = memo.get(&i) {
                known.insert(i, resolved.clone());
            }
        }
        drop(known);
        debug!(
            "imports: round {round} graph built at {:?}",
            started.elapsed()
        );
        round += 1;
        if round == 2 {
            return BuiltGraph {
                graph,
                stats,
                parsed: imports_of.len(),
                read,
            };
        }
        // Files two steps from a parsed file are parsed in the second round.
        let mut next = Vec::new();
        for &i in imports_of.keys() {
            for &first in graph.imports_of(i) {
                next.push(first as usize);
                next.extend(graph.imports_of(first as usize).iter().map(|&j| j as usize));
            }
        }
        wanted = next;
    }
}

/// Fetches the import rows of the code files among `files` (indices into
/// `repo`) from the remote tier in one batch, when there is one.
pub fn prefetch_imports(cache: &FileCache, repo: &RepoMap, files: &[usize]) {
    if cache.remote().is_none() {
        return;
    }
    cache.prefetch(
        files
            .iter()
            .map(|&i| &repo.files[i])
            .filter(|f| f.language.is_code())
            .map(|f| cache.row_key(f.content_hash, RowKind::Imports, &f.path, f.language)),
    );
}

/// A file's imports, and its bytes when they had to be read.
#[derive(Debug, Default)]
pub struct ParsedImports {
    /// The imports; empty for a file that is not code or cannot be read.
    pub imports: Vec<ImportRef>,
    /// The bytes read from disk (`None` on a cache hit or for a file that is
    /// not code).
    pub bytes: Option<Vec<u8>>,
}

/// A file's imports, from the cache by its scanned content hash, else read
/// (at most `max_file_bytes`, a regular file only) and parsed with its
/// language provider; no imports when it cannot be read or is not code.
pub fn parse_imports(
    root: &Path,
    max_file_bytes: u64,
    path: &RelativePath,
    language: Language,
    hash: ContentHash,
    cache: Option<&FileCache>,
) -> ParsedImports {
    if !language.is_code() {
        return ParsedImports::default();
    }
    if let Some(imports) = cache.and_then(|cache| cache.imports(hash, path, language)) {
        return ParsedImports {
            imports,
            bytes: None,
        };
    }
    let Ok(Bounded::Bytes(bytes)) = read_bounded(&root.join(path.as_str()), max_file_bytes) else {
        return ParsedImports::default();
    };
    let imports = parse_bytes(path, language, &bytes, cache);
    ParsedImports {
        imports,
        bytes: Some(bytes),
    }
}

/// The imports of a file whose bytes are at hand: from the cache by `hash`,
/// else parsed (and cached). Nothing for a file that is not code.
pub fn imports_from_bytes(
    path: &RelativePath,
    language: Language,
    hash: ContentHash,
    bytes: &[u8],
    cache: Option<&FileCache>,
) -> Vec<ImportRef> {
    if !language.is_code() {
        return Vec::new();
    }
    if let Some(imports) = cache.and_then(|cache| cache.imports(hash, path, language)) {
        return imports;
    }
    parse_bytes(path, language, bytes, cache)
}

/// Parses the imports of `bytes` and caches them under the bytes' hash.
fn parse_bytes(
    path: &RelativePath,
    language: Language,
    bytes: &[u8],
    cache: Option<&FileCache>,
) -> Vec<ImportRef> {
    let text = String::from_utf8_lossy(bytes);
    let imports = isolate(path, || {
        provider_for(path, language).parse_imports(&text, path)
    });
    if let (Some(cache), Some(imports)) = (cache, &imports) {
        cache.put_imports(ContentHash::of(bytes), path, language, imports);
    }
    imports.unwrap_or_default()
}
