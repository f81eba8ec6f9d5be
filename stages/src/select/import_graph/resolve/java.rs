//! Java: `a.b.C` to a file ending `a/b/C.java`, `a.b.*` to the directory.

use crate::select::import_graph::index::{FileIndex, has_extension};

pub(super) fn resolve(index: &FileIndex, source: &str) -> Vec<usize> {
    let source = source.trim_start_matches("static ");
    if let Some(package) = source.strip_suffix(".*") {
        let suffix = package.replace('.', "/");
        return index
            .directories()
            .filter(|(directory, _)| {
                *directory == suffix.as_str() || directory.ends_with(&format!("/{suffix}"))
            })
            .flat_map(|(_, files)| files.iter().map(|&i| i as usize))
            // Each file is in one directory: no repeats, in directory order.
            .filter(|&i| has_extension(index.path(i), "java"))
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
