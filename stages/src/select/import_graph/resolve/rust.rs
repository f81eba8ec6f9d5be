//! Rust: `mod` declarations, `crate::`/`self::`/`super::` paths and workspace
//! crates by name, to the deepest module file that exists.

use crate::lang::{ImportKind, ImportRef};
use crate::relative_path::RelativePath;
use crate::select::import_graph::index::{FileIndex, parent};
use crate::select::import_graph::layout::ProjectLayout;

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
fn rust_module_file(index: &FileIndex, root: &str, segments: &[&str]) -> Option<usize> {
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

pub(super) fn resolve(
    index: &FileIndex,
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
