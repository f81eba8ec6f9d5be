//! Defined names from a parsed file: the `names.scm` matches.

use std::collections::HashSet;

use streaming_iterator::StreamingIterator;
use tree_sitter::Tree;

use super::ExportedSymbol;
use super::grammar::{Grammar, Purpose, Role};

/// The names a parsed file defines, in source order, each `(name, kind)` once.
///
/// When several patterns capture the same name node (`const f = () => …` is
/// both a function and a constant), the pattern written first in `names.scm`
/// decides the kind.
pub(crate) fn extract(grammar: Grammar, tree: &Tree, content: &str) -> Vec<ExportedSymbol> {
    let compiled = grammar.query(Purpose::Names);
    // (name start byte, pattern index, name, kind)
    let mut found = Vec::new();
    let mut cursor = compiled.cursor();
    let mut matches = cursor.matches(&compiled.query, tree.root_node(), content.as_bytes());
    while let Some(matched) = matches.next() {
        let mut kind = None;
        let mut name = None;
        for capture in matched.captures() {
            match compiled.role(capture.index) {
                Role::Definition(definition) => kind = Some(definition),
                Role::Name if name.is_none() => name = Some(capture.node),
                _ => {}
            }
        }
        if let (Some(kind), Some(name)) = (kind, name)
            && let Some(text) = content.get(name.byte_range())
        {
            found.push((name.start_byte(), matched.pattern_index, text, kind));
        }
    }
    found.sort_unstable_by_key(|&(start, pattern, _, _)| (start, pattern));
    found.dedup_by_key(|&mut (start, _, _, _)| start);

    // Lookups only; the output order is `found`'s.
    let mut seen = HashSet::with_capacity(found.len());
    found
        .into_iter()
        .filter(|&(_, _, text, kind)| seen.insert((text, kind)))
        .map(|(_, _, text, kind)| ExportedSymbol {
            name: text.to_owned(),
            kind,
        })
        .collect()
}
