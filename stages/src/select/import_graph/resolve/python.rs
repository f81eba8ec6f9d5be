//! Python: relative imports from the file's package, absolute ones to the
//! shallowest file whose path ends with the module's path.

use crate::lang::ImportRef;
use crate::select::import_graph::index::{FileIndex, join, parent};

pub(super) fn resolve(index: &FileIndex, directory: &str, import: &ImportRef) -> Vec<usize> {
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
            let depth = index.path(first).matches('/').count();
            let mut out: Vec<usize> = found
                .into_iter()
                .filter(|&i| index.path(i).matches('/').count() == depth)
                .collect();
            for symbol in &import.symbols {
                let parent_dir = parent(index.path(out[0]));
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
