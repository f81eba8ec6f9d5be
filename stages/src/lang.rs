//! LanguageProviders: what a source file imports, which names it
//! defines and its signature renders, the L1 (signatures with docs) and L2
//! (signatures only) tiers of the summarisation ladder.
//!
//! Each supported language has a tree-sitter provider driven by three queries,
//! `stages/queries/<language>/{imports,names,signatures}.scm`, embedded in the
//! binary and compiled once per language on first use. TypeScript and TSX share
//! the TypeScript queries; every other language has its own. Files in any other
//! language get the [`GenericProvider`]: no imports, regex-found names and a
//! best-effort L2 of definition lines, and no L1.
//!
//! [`provider_for`] picks the provider of a file and [`analyze_file`] runs it;
//! [`LanguageProvider::analyze`] parses a file once and derives everything from
//! that one tree, which is what the per-file stage calls. The four other trait
//! methods each parse on every call.
//!
//! A provider never fails: a file with syntax errors still yields what the
//! parsed parts contain, and a file the parser gives up on (over
//! [`MAX_PARSE_BYTES`] or over its work budget) falls back to the
//! [`GenericProvider`]'s names and L2. Output depends only on the input text,
//! never on the thread, the machine or the time it took.
//!
//! # What each field means per language
//!
//! | language | [`ImportRef::source`] | [`ImportRef::symbols`] | relative when |
//! | --- | --- | --- | --- |
//! | TypeScript, JavaScript | the specifier (`./model`, `react`) | default and named imports, re-exported names, destructured `require` names | it starts with `.` or `/` |
//! | Python | the module as written (`os.path`, `.x`, `..pkg.mod`) | the names after `import` (`*` for a wildcard) | it starts with `.` |
//! | Go | the import path (`github.com/x/y/pkg`) | none | it starts with `./` or `../` |
//! | Rust | the module path of a `use` (`crate::a::b` for `use crate::a::b::{C, D}`, `crate::scan` for `use crate::scan::scan`); the crate of an `extern crate`; the module of `mod foo;` | the names imported from it (`*` for a glob) | it starts with `crate`, `self` or `super`, and for `mod foo;` |
//! | Java | the imported name (`java.util.List`), the package of a wildcard (`a.b` for `a.b.*`) | its last segment, `*` for a wildcard | never |
//!
//! Where imports are read: anywhere in TypeScript and JavaScript (`require`
//! and `import()` included); in Python at module level and in the bodies of
//! top-level statements, functions, classes and methods; in Rust at the top
//! level and in top-level inline modules, not in function bodies.
//!
//! Names are the definitions at a file's top level, exported or not, plus the
//! methods of its top-level classes (Python, TypeScript, JavaScript) or of its
//! top-level `impl` and `trait` blocks (Rust); Go names its functions,
//! methods, types, constants and variables; Java its top-level types, the
//! types declared in them, their methods and `static final` constants.

mod generic;
mod grammar;
mod imports;
mod names;
mod python_comments;
mod signatures;
mod tree_sitter_provider;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::language::Language;
use crate::relative_path::RelativePath;

pub use generic::GenericProvider;
pub use grammar::{
    KeptTrees, KeptTreesReport, MAX_PARSE_BYTES, QueryError, compile_queries, keep_trees, keeping,
};
/// The allocator tree-sitter's C library uses, and how to replace it (once,
/// before any parse): see [`tree_sitter::set_allocator`].
pub use tree_sitter::{Allocator as ParserAllocator, set_allocator as set_parser_allocator};

pub(crate) use grammar::{Grammar, parse as parse_tree, parse_fresh};
pub(crate) use python_comments::long_comment_runs as python_long_comment_runs;
use tree_sitter_provider::TreeSitterProvider;

/// How an import entered the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportKind {
    /// An import proper: `import`, `from … import`, `use`, `require(…)`,
    /// dynamic `import(…)`, a Go import spec, `extern crate`.
    Import,
    /// A Rust `mod foo;` declaration without a body, which makes `foo.rs` or
    /// `foo/mod.rs` part of the crate.
    ModuleDeclaration,
    /// A re-export: TypeScript/JavaScript `export … from "x"`, Rust `pub use`.
    Reexport,
}

/// One import of a file: where from, and which names when they are listed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportRef {
    /// The specifier as written, without quotes: `./model`, `os.path`,
    /// `..utils`, `crate::scan`, `github.com/x/y/pkg`, `java.util.List`.
    pub source: String,
    /// The imported names when the import lists them, in source order without
    /// duplicates; the imported name, not its alias. Empty when the whole
    /// module is imported.
    pub symbols: Vec<String>,
    /// Whether `source` is relative to the importing file or its crate rather
    /// than a package name; see the module documentation per language.
    pub is_relative: bool,
    /// How the import entered the file.
    pub kind: ImportKind,
}

/// The kind of a defined name, after the tree-sitter tags vocabulary
/// (`@definition.function`, `@definition.class`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    /// A free function, or a constant bound to a function expression.
    Function,
    /// A function defined in a class, `impl`, `trait`, interface or enum, or a
    /// Go method.
    Method,
    /// A class (a Java record is a class).
    Class,
    /// A struct or union.
    Struct,
    /// An enum.
    Enum,
    /// An interface (Java annotation types included).
    Interface,
    /// A Rust trait.
    Trait,
    /// A type alias or other named type; also a Rust `impl` block in signature
    /// chunks, named after its self type.
    Type,
    /// A constant (Python by the UPPER_CASE convention).
    Constant,
    /// A variable or a Rust `static`.
    Variable,
    /// A module (Rust `mod`).
    Module,
    /// A macro (`macro_rules!`).
    Macro,
}

/// A name a file defines, for symbol relevance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportedSymbol {
    /// The name as written.
    pub name: String,
    /// What it names.
    pub kind: SymbolKind,
}

/// One rendered signature: a definition's header without its body, with its
/// doc comment in the with-docs tier.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeChunk {
    /// The defined name; for a Rust `impl` block, its self type.
    pub symbol_name: String,
    /// What it defines.
    pub symbol_kind: SymbolKind,
    /// First line of the definition in the file, one-based, doc comment not
    /// included.
    pub start_line: u32,
    /// Last line of the definition in the file (body included), one-based and
    /// inclusive.
    pub end_line: u32,
    /// The rendered text, one or more lines without a trailing newline,
    /// indented four spaces per level of nesting (a method under its class).
    pub content: String,
}

/// Everything the per-file stage needs from a provider, from one parse.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileAnalysis {
    /// The file's imports in source order.
    pub imports: Vec<ImportRef>,
    /// The names the file defines in source order, each `(name, kind)` once.
    pub names: Vec<ExportedSymbol>,
    /// The L1 render: every signature with its doc comment, one per line in
    /// file order, each line ending in `\n`; empty when the file defines
    /// nothing. `None` when the provider has no L1 (the [`GenericProvider`],
    /// and a tree-sitter provider that could not parse the file).
    pub signatures_with_docs: Option<String>,
    /// The L2 render: the same signatures without docs. `None` when the
    /// provider cannot produce it.
    pub signatures_only: Option<String>,
}

/// A language's import parser, signature extractor and name enumerator.
/// Implementations are stateless and shared by all threads.
pub trait LanguageProvider: Send + Sync {
    /// A stable identifier: `typescript`, `tsx`, `javascript`, `python`, `go`,
    /// `rust`, `java` or `generic`.
    fn id(&self) -> &'static str;

    /// Whether this provider is meant for files of `language`. The
    /// [`GenericProvider`] handles every language.
    fn handles(&self, language: Language) -> bool;

    /// The imports of a file, in source order.
    fn parse_imports(&self, content: &str, path: &RelativePath) -> Vec<ImportRef>;

    /// Signatures with their doc comments (L1), in file order.
    fn extract_signatures_with_docs(&self, content: &str) -> Vec<CodeChunk>;

    /// Signatures without docs (L2), in file order.
    fn extract_signatures_only(&self, content: &str) -> Vec<CodeChunk>;

    /// The names a file defines, in source order, each `(name, kind)` once.
    fn extract_names(&self, content: &str) -> Vec<ExportedSymbol>;

    /// Imports, names and both signature renders from a single parse.
    fn analyze(&self, path: &RelativePath, content: &str) -> FileAnalysis;

    /// [`LanguageProvider::analyze`] without the imports (left empty): what
    /// the per-file stage's tiers need, for the per-file stage, which reads
    /// imports on its own and would otherwise run the imports query twice.
    fn analyze_without_imports(&self, path: &RelativePath, content: &str) -> FileAnalysis {
        let mut analysis = self.analyze(path, content);
        analysis.imports.clear();
        analysis
    }
}

static TYPESCRIPT: TreeSitterProvider = TreeSitterProvider::new(Grammar::TypeScript);
static TSX: TreeSitterProvider = TreeSitterProvider::new(Grammar::Tsx);
static JAVASCRIPT: TreeSitterProvider = TreeSitterProvider::new(Grammar::JavaScript);
static PYTHON: TreeSitterProvider = TreeSitterProvider::new(Grammar::Python);
static GO: TreeSitterProvider = TreeSitterProvider::new(Grammar::Go);
static RUST: TreeSitterProvider = TreeSitterProvider::new(Grammar::Rust);
static JAVA: TreeSitterProvider = TreeSitterProvider::new(Grammar::Java);
static GENERIC: GenericProvider = GenericProvider;

/// The provider for a file: by language, with `.tsx` files getting the TSX
/// grammar, and the [`GenericProvider`] for languages without a grammar.
///
/// # Examples
///
/// ```
/// use aic_stages::lang::provider_for;
/// use aic_stages::language::Language;
/// use aic_stages::relative_path::RelativePath;
///
/// let path = RelativePath::new("web/App.tsx").unwrap();
/// assert_eq!(provider_for(&path, Language::detect(&path)).id(), "tsx");
/// let path = RelativePath::new("build.gradle").unwrap();
/// assert_eq!(provider_for(&path, Language::detect(&path)).id(), "generic");
/// ```
pub fn provider_for(path: &RelativePath, language: Language) -> &'static dyn LanguageProvider {
    match Grammar::for_file(path, language) {
        Some(Grammar::TypeScript) => &TYPESCRIPT,
        Some(Grammar::Tsx) => &TSX,
        Some(Grammar::JavaScript) => &JAVASCRIPT,
        Some(Grammar::Python) => &PYTHON,
        Some(Grammar::Go) => &GO,
        Some(Grammar::Rust) => &RUST,
        Some(Grammar::Java) => &JAVA,
        None => &GENERIC,
    }
}

/// The imports of a Rust file as `aic` reads them: from its tokens, without
/// a parse (`use` declarations, `extern crate` and `mod foo;` at the top
/// level, `use` in top-level inline modules).
pub fn rust_imports(content: &str) -> Vec<ImportRef> {
    imports::rust_imports(content)
}

/// The imports the Rust imports query finds in a tree-sitter parse of
/// `content`, the reference [`rust_imports`] is tested against; `None` when
/// the parse fails or holds a syntax error (where the parse's error recovery,
/// not the language, decides what the query sees).
pub fn rust_imports_by_query(content: &str) -> Option<Vec<ImportRef>> {
    imports::imports_by_query(grammar::Grammar::Rust, content)
}

/// The imports of a TypeScript, TSX or JavaScript file as `aic` reads them:
/// from its tokens, without a parse (`import` and `export … from`
/// statements, `require("x")` and `import("x")` calls anywhere). `None` when
/// `path` is not such a file (by its extension, as [`Language::detect`]
/// reads it).
pub fn script_imports(path: &RelativePath, content: &str) -> Option<Vec<ImportRef>> {
    let grammar = script_grammar(path)?;
    Some(imports::script_imports(grammar, content))
}

/// The imports the TypeScript, TSX or JavaScript imports query finds in a
/// tree-sitter parse of `content`, the reference [`script_imports`] is
/// tested against; `None` when `path` is not such a file, or when the parse
/// fails or holds a syntax error.
pub fn script_imports_by_query(path: &RelativePath, content: &str) -> Option<Vec<ImportRef>> {
    let grammar = script_grammar(path)?;
    if !imports::may_import(grammar, content) {
        return Some(Vec::new());
    }
    imports::imports_by_query(grammar, content)
}

fn script_grammar(path: &RelativePath) -> Option<grammar::Grammar> {
    grammar::Grammar::for_file(path, Language::detect(path)).filter(|&g| imports::is_script(g))
}

/// Analyses one file with its provider ([`provider_for`] then
/// [`LanguageProvider::analyze`]).
///
/// # Examples
///
/// ```
/// use aic_stages::lang::{ImportKind, analyze_file};
/// use aic_stages::language::Language;
/// use aic_stages::relative_path::RelativePath;
///
/// let path = RelativePath::new("src/config.rs").unwrap();
/// let content = "use crate::scan::{Entry, Walker};\n\n/// Loads it.\npub fn load() -> u32 {\n    1\n}\n";
/// let analysis = analyze_file(&path, Language::Rust, content);
/// assert_eq!(analysis.imports[0].source, "crate::scan");
/// assert_eq!(analysis.imports[0].symbols, ["Entry", "Walker"]);
/// assert_eq!(analysis.imports[0].kind, ImportKind::Import);
/// assert_eq!(analysis.names[0].name, "load");
/// assert_eq!(analysis.signatures_only.as_deref(), Some("pub fn load() -> u32\n"));
/// assert_eq!(
///     analysis.signatures_with_docs.as_deref(),
///     Some("/// Loads it.\npub fn load() -> u32\n")
/// );
/// ```
pub fn analyze_file(path: &RelativePath, language: Language, content: &str) -> FileAnalysis {
    provider_for(path, language).analyze(path, content)
}

/// [`analyze_file`] without the imports
/// ([`LanguageProvider::analyze_without_imports`]).
pub fn analyze_file_without_imports(
    path: &RelativePath,
    language: Language,
    content: &str,
) -> FileAnalysis {
    provider_for(path, language).analyze_without_imports(path, content)
}

/// Joins rendered chunks into a tier text: one chunk after another, each line
/// ending in `\n`.
fn render_chunks(chunks: &[CodeChunk]) -> String {
    let mut text = String::with_capacity(chunks.iter().map(|c| c.content.len() + 1).sum());
    for chunk in chunks {
        text.push_str(&chunk.content);
        text.push('\n');
    }
    text
}
