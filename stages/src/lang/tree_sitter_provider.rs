//! The LanguageProvider of every language with a tree-sitter grammar: the same
//! code for all of them, driven by the grammar's queries.

use tree_sitter::Tree;

use super::generic::GenericProvider;
use super::grammar::{self, Grammar};
use super::{
    CodeChunk, ExportedSymbol, FileAnalysis, ImportRef, LanguageProvider, imports, names,
    render_chunks, signatures,
};
use crate::language::Language;
use crate::relative_path::RelativePath;

/// A provider backed by one tree-sitter grammar and its queries.
pub(crate) struct TreeSitterProvider {
    grammar: Grammar,
}

impl TreeSitterProvider {
    pub(crate) const fn new(grammar: Grammar) -> Self {
        Self { grammar }
    }

    fn parse(&self, content: &str) -> Option<Tree> {
        grammar::parse(self.grammar, content)
    }

    fn signatures(&self, content: &str, with_docs: bool) -> Vec<CodeChunk> {
        match self.parse(content) {
            Some(tree) => {
                let signatures = signatures::collect(self.grammar, &tree, content);
                signatures::chunks(&signatures, content, with_docs)
            }
            None if with_docs => Vec::new(),
            None => GenericProvider.extract_signatures_only(content),
        }
    }
}

impl LanguageProvider for TreeSitterProvider {
    fn id(&self) -> &'static str {
        self.grammar.name()
    }

    fn handles(&self, language: Language) -> bool {
        self.grammar.language() == language
    }

    fn parse_imports(&self, content: &str, _path: &RelativePath) -> Vec<ImportRef> {
        // Rust's, TypeScript's and JavaScript's imports come from their
        // tokens: no parse.
        if let Some(imports) = imports::from_tokens(self.grammar, content) {
            return imports;
        }
        if !imports::may_import(self.grammar, content) {
            return Vec::new();
        }
        self.parse(content)
            .map(|tree| imports::extract(self.grammar, &tree, content))
            .unwrap_or_default()
    }

    fn extract_signatures_with_docs(&self, content: &str) -> Vec<CodeChunk> {
        self.signatures(content, true)
    }

    fn extract_signatures_only(&self, content: &str) -> Vec<CodeChunk> {
        self.signatures(content, false)
    }

    fn extract_names(&self, content: &str) -> Vec<ExportedSymbol> {
        match self.parse(content) {
            Some(tree) => names::extract(self.grammar, &tree, content),
            None => GenericProvider.extract_names(content),
        }
    }

    fn analyze(&self, path: &RelativePath, content: &str) -> FileAnalysis {
        let Some(tree) = self.parse(content) else {
            let mut analysis = GenericProvider.analyze(path, content);
            if let Some(imports) = imports::from_tokens(self.grammar, content) {
                analysis.imports = imports;
            }
            return analysis;
        };
        let mut analysis = self.summarise(&tree, content);
        analysis.imports = imports::extract(self.grammar, &tree, content);
        analysis
    }

    fn analyze_without_imports(&self, path: &RelativePath, content: &str) -> FileAnalysis {
        match self.parse(content) {
            Some(tree) => self.summarise(&tree, content),
            None => GenericProvider.analyze(path, content),
        }
    }
}

impl TreeSitterProvider {
    /// Names and both signature renders of a parsed file; no imports.
    fn summarise(&self, tree: &Tree, content: &str) -> FileAnalysis {
        let signatures = signatures::collect(self.grammar, tree, content);
        FileAnalysis {
            imports: Vec::new(),
            names: names::extract(self.grammar, tree, content),
            signatures_with_docs: Some(render_chunks(&signatures::chunks(
                &signatures,
                content,
                true,
            ))),
            signatures_only: Some(render_chunks(&signatures::chunks(
                &signatures,
                content,
                false,
            ))),
        }
    }
}
