//! Go: import paths under a `go.mod` module path to the non-test files of that
//! directory.

use crate::select::import_graph::index::{FileIndex, has_extension, join};
use crate::select::import_graph::layout::ProjectLayout;

pub(super) fn resolve(index: &FileIndex, layout: &ProjectLayout, source: &str) -> Vec<usize> {
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
        .in_directory(package.as_str())
        .filter(|&i| {
            let path = index.path(i);
            has_extension(path, "go") && !path.ends_with("_test.go")
        })
        .collect()
}
