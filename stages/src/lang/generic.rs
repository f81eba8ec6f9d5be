//! The GenericProvider: for files without a grammar,
//! and for files a grammar's parser gave up on.

use std::sync::OnceLock;

use regex::Regex;

use super::{
    CodeChunk, ExportedSymbol, FileAnalysis, ImportRef, LanguageProvider, SymbolKind, render_chunks,
};
use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::select::symbols::defined_names;

/// The fallback provider: no imports (import proximity is 0 for such files),
/// names from the regex definition finder ([`defined_names`]), no L1, and an
/// L2 made of the lines that start (after indentation) with `function`,
/// `class`, `def`, `func` or `pub fn` followed by a name.
#[derive(Clone, Copy, Debug, Default)]
pub struct GenericProvider;

fn definition_line() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    crate::work::once(&PATTERN, || {
        // A Go method's receiver sits between `func` and the name.
        Regex::new(
            r"(?m)^[ \t]*(function|class|def|func|pub fn)\b[ \t]*(?:\([^)\n]*\)[ \t]*)?\*?[ \t]*([A-Za-z_$][A-Za-z0-9_$]*)",
        )
        .expect("the definition-line pattern is a valid constant regex")
    })
}

/// The [`SymbolKind`] of a definition keyword found by [`defined_names`].
fn keyword_kind(keyword: &str) -> SymbolKind {
    match keyword {
        "fn" | "def" | "function" | "func" => SymbolKind::Function,
        "struct" | "union" => SymbolKind::Struct,
        "enum" => SymbolKind::Enum,
        "trait" => SymbolKind::Trait,
        "mod" | "module" => SymbolKind::Module,
        "macro_rules" => SymbolKind::Macro,
        "class" | "object" | "record" => SymbolKind::Class,
        "interface" | "protocol" => SymbolKind::Interface,
        _ => SymbolKind::Type,
    }
}

impl LanguageProvider for GenericProvider {
    fn id(&self) -> &'static str {
        "generic"
    }

    fn handles(&self, _language: Language) -> bool {
        true
    }

    fn parse_imports(&self, _content: &str, _path: &RelativePath) -> Vec<ImportRef> {
        Vec::new()
    }

    fn extract_signatures_with_docs(&self, _content: &str) -> Vec<CodeChunk> {
        Vec::new()
    }

    fn extract_signatures_only(&self, content: &str) -> Vec<CodeChunk> {
        let mut line_number: u32 = 1;
        let mut counted_to = 0;
        definition_line()
            .captures_iter(content)
            .filter_map(|captures| {
                let whole = captures.get(0)?;
                let line_start = whole.start();
                let line_end = content[line_start..]
                    .find('\n')
                    .map_or(content.len(), |offset| line_start + offset);
                let newlines = content[counted_to..line_start].matches('\n').count();
                line_number = line_number.saturating_add(u32::try_from(newlines).ok()?);
                counted_to = line_start;
                let kind = if &captures[1] == "class" {
                    SymbolKind::Class
                } else {
                    SymbolKind::Function
                };
                Some(CodeChunk {
                    symbol_name: captures[2].to_owned(),
                    symbol_kind: kind,
                    start_line: line_number,
                    end_line: line_number,
                    content: content[line_start..line_end].trim_end().to_owned(),
                })
            })
            .collect()
    }

    fn extract_names(&self, content: &str) -> Vec<ExportedSymbol> {
        defined_names(content)
            .into_iter()
            .map(|defined| ExportedSymbol {
                kind: keyword_kind(&defined.kind),
                name: defined.name,
            })
            .collect()
    }

    fn analyze(&self, _path: &RelativePath, content: &str) -> FileAnalysis {
        FileAnalysis {
            imports: Vec::new(),
            names: self.extract_names(content),
            signatures_with_docs: None,
            signatures_only: Some(render_chunks(&self.extract_signatures_only(content))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_the_definition_lines() {
        let content = "x = 1\ndef parse(text):\n    return text\n\n  class Node:\n    pass\nfunc (s *Server) Serve() error {\npub fn load() {}\nfunctional = 2\n";
        let chunks = GenericProvider.extract_signatures_only(content);
        let found: Vec<_> = chunks
            .iter()
            .map(|c| (c.symbol_name.as_str(), c.start_line, c.content.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("parse", 2, "def parse(text):"),
                ("Node", 5, "  class Node:"),
                ("Serve", 7, "func (s *Server) Serve() error {"),
                ("load", 8, "pub fn load() {}"),
            ]
        );
        let analysis = GenericProvider.analyze(&RelativePath::new("a.lua").unwrap(), content);
        assert_eq!(analysis.signatures_with_docs, None);
        assert!(analysis.imports.is_empty());
    }

    #[test]
    fn names_come_from_the_regex_finder() {
        let names = GenericProvider.extract_names("module Billing\n  class Invoice\n  end\nend\n");
        assert_eq!(
            names,
            [
                ExportedSymbol {
                    name: "Billing".to_owned(),
                    kind: SymbolKind::Module
                },
                ExportedSymbol {
                    name: "Invoice".to_owned(),
                    kind: SymbolKind::Class
                },
            ]
        );
    }
}
