//! The tree-sitter grammars, their embedded queries (compiled once per
//! language, on first use) and the per-thread parsers.
//!
//! Query files are data (`stages/queries/<language>/<purpose>.scm`, see the
//! README there). Compiling one checks more than tree-sitter does: every
//! capture name must belong to the file's vocabulary and only tree-sitter's
//! built-in text predicates (`#eq?`, `#match?`, `#any-of?` and their negations)
//! may be used, so a typo fails the `every_query_compiles_against_its_grammar`
//! test instead of silently matching nothing.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::{LazyLock, Mutex, OnceLock, PoisonError};

use tree_sitter::{CaptureQuantifier, ParseOptions, ParseState, Parser, Query, QueryCursor, Tree};

use super::{ImportKind, SymbolKind, python_comments};
use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::work;

/// The largest file, in bytes, that is parsed; larger files get the
/// [`GenericProvider`](super::GenericProvider)'s analysis (names by regex,
/// signatures from definition lines) and no comment stripping. The scan reads
/// at most `repoMap.maxFileBytes` (1 MiB by default); a project that raises
/// it past this gets such files unparsed.
pub const MAX_PARSE_BYTES: usize = 2 * 1024 * 1024;

/// Parser work allowed per input byte: one tree-sitter progress check (made
/// every 100 parse operations) per this many bytes. Ordinary code needs one
/// check per 120 bytes on average and one per 30 at worst (measured over 98 MB
/// of `.rs`, `.py`, `.js`, `.ts`, `.go` and `.java` files, and about one per
/// 60 for files parsed with the wrong grammar), so the limit only stops
/// pathological inputs from stalling a worker. Counting work instead of time
/// keeps the outcome identical on every machine.
const BYTES_PER_PROGRESS_CHECK: usize = 4;

/// Progress checks allowed on top of the per-byte share, for small files.
const BASE_PROGRESS_CHECKS: usize = 10_000;

/// A grammar with its own queries and parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Grammar {
    TypeScript,
    Tsx,
    JavaScript,
    Python,
    Go,
    Rust,
    Java,
}

/// The purpose of a query file, which names it and fixes its capture
/// vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    Imports,
    Names,
    Signatures,
}

impl Purpose {
    pub(crate) const ALL: [Self; 3] = [Self::Imports, Self::Names, Self::Signatures];

    /// The query's file name under `stages/queries/<language>/`.
    pub(crate) fn file_name(self) -> &'static str {
        match self {
            Self::Imports => "imports.scm",
            Self::Names => "names.scm",
            Self::Signatures => "signatures.scm",
        }
    }
}

impl Grammar {
    pub(crate) const ALL: [Self; 7] = [
        Self::TypeScript,
        Self::Tsx,
        Self::JavaScript,
        Self::Python,
        Self::Go,
        Self::Rust,
        Self::Java,
    ];

    /// The grammar's name, which is also its provider's id.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::TypeScript => "typescript",
            Self::Tsx => "tsx",
            Self::JavaScript => "javascript",
            Self::Python => "python",
            Self::Go => "go",
            Self::Rust => "rust",
            Self::Java => "java",
        }
    }

    /// The grammar that parses a file: by language, `.tsx` files getting the
    /// TSX grammar; `None` for languages without one.
    pub(crate) fn for_file(path: &RelativePath, language: Language) -> Option<Self> {
        Some(match language {
            Language::TypeScript if path.extension().as_deref() == Some("tsx") => Self::Tsx,
            Language::TypeScript => Self::TypeScript,
            Language::JavaScript => Self::JavaScript,
            Language::Python => Self::Python,
            Language::Go => Self::Go,
            Language::Rust => Self::Rust,
            Language::Java => Self::Java,
            _ => return None,
        })
    }

    /// The [`Language`] whose files this grammar parses.
    pub(crate) fn language(self) -> Language {
        match self {
            Self::TypeScript | Self::Tsx => Language::TypeScript,
            Self::JavaScript => Language::JavaScript,
            Self::Python => Language::Python,
            Self::Go => Language::Go,
            Self::Rust => Language::Rust,
            Self::Java => Language::Java,
        }
    }

    fn tree_sitter_language(self) -> tree_sitter::Language {
        match self {
            Self::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Self::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Self::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Self::Python => tree_sitter_python::LANGUAGE.into(),
            Self::Go => tree_sitter_go::LANGUAGE.into(),
            Self::Rust => tree_sitter_rust::LANGUAGE.into(),
            Self::Java => tree_sitter_java::LANGUAGE.into(),
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// The node type of the grammar's root node.
    pub(crate) fn root_kind(self) -> &'static str {
        match self {
            Self::TypeScript | Self::Tsx | Self::JavaScript | Self::Java => "program",
            Self::Python => "module",
            Self::Go | Self::Rust => "source_file",
        }
    }

    /// The text of one of the grammar's queries. TSX uses the TypeScript
    /// queries, compiled against the TSX grammar.
    pub(crate) fn query_source(self, purpose: Purpose) -> &'static str {
        macro_rules! queries {
            ($dir:literal) => {
                match purpose {
                    Purpose::Imports => {
                        include_str!(concat!("../../queries/", $dir, "/imports.scm"))
                    }
                    Purpose::Names => include_str!(concat!("../../queries/", $dir, "/names.scm")),
                    Purpose::Signatures => {
                        include_str!(concat!("../../queries/", $dir, "/signatures.scm"))
                    }
                }
            };
        }
        match self {
            Self::TypeScript | Self::Tsx => queries!("typescript"),
            Self::JavaScript => queries!("javascript"),
            Self::Python => queries!("python"),
            Self::Go => queries!("go"),
            Self::Rust => queries!("rust"),
            Self::Java => queries!("java"),
        }
    }

    /// The grammar's compiled query for one purpose, compiled on first use:
    /// a process that only reads imports never compiles the (much larger)
    /// signature queries, and a language the repository does not hold costs
    /// nothing.
    ///
    /// # Panics
    ///
    /// If a built-in query does not compile, which the
    /// `every_query_compiles_against_its_grammar` test rules out.
    pub(crate) fn query(self, purpose: Purpose) -> &'static CompiledQuery {
        static QUERIES: [[OnceLock<CompiledQuery>; Purpose::ALL.len()]; Grammar::ALL.len()] =
            [const { [const { OnceLock::new() }; Purpose::ALL.len()] }; Grammar::ALL.len()];
        crate::work::once(&QUERIES[self.index()][purpose as usize], || {
            CompiledQuery::compile(self, purpose).expect(
                "built-in queries compile (checked by `every_query_compiles_against_its_grammar`)",
            )
        })
    }
}

/// What a capture means to the providers, decided by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// `@definition.<kind>`: the whole definition.
    Definition(SymbolKind),
    /// `@name`: the defined name.
    Name,
    /// `@doc`: a doc comment or docstring.
    Doc,
    /// `@body`: the part of a definition left out of its signature.
    Body,
    /// `@body.inline`: a declaration body kept in the signature when short.
    InlineBody,
    /// `@attribute`: a node that may sit between a doc comment and its item.
    Attribute,
    /// `@import`, `@import.reexport`, `@import.module`: the import statement.
    Import(ImportKind),
    /// `@import.source`: the specifier.
    ImportSource,
    /// `@import.symbol`: an imported name.
    ImportSymbol,
    /// `@import.symbols`: a list of import or export specifiers (`{ a, b as
    /// c }`), whose `name` identifiers are the imported names.
    ImportSymbolList,
    /// `@import.tree`: a Rust `use` tree, flattened by the provider.
    ImportTree,
    /// `@_…`: a helper for predicates, ignored.
    Ignored,
}

impl Role {
    /// The role of a capture name in a query of `purpose`, `None` when the
    /// name is not part of that query's vocabulary.
    fn of(name: &str, purpose: Purpose) -> Option<Self> {
        if name.starts_with('_') {
            return Some(Self::Ignored);
        }
        let role = match (purpose, name) {
            (Purpose::Imports, "import") => Self::Import(ImportKind::Import),
            (Purpose::Imports, "import.reexport") => Self::Import(ImportKind::Reexport),
            (Purpose::Imports, "import.module") => Self::Import(ImportKind::ModuleDeclaration),
            (Purpose::Imports, "import.source") => Self::ImportSource,
            (Purpose::Imports, "import.symbol") => Self::ImportSymbol,
            (Purpose::Imports, "import.symbols") => Self::ImportSymbolList,
            (Purpose::Imports, "import.tree") => Self::ImportTree,
            (Purpose::Names | Purpose::Signatures, "name") => Self::Name,
            (Purpose::Signatures, "doc") => Self::Doc,
            (Purpose::Signatures, "body") => Self::Body,
            (Purpose::Signatures, "body.inline") => Self::InlineBody,
            (Purpose::Signatures, "attribute") => Self::Attribute,
            (Purpose::Signatures, "definition.implementation") => {
                Self::Definition(SymbolKind::Type)
            }
            (Purpose::Names | Purpose::Signatures, _) => {
                Self::Definition(definition_kind(name.strip_prefix("definition.")?)?)
            }
            (Purpose::Imports, _) => return None,
        };
        Some(role)
    }
}

fn definition_kind(suffix: &str) -> Option<SymbolKind> {
    Some(match suffix {
        "function" => SymbolKind::Function,
        "method" => SymbolKind::Method,
        "class" => SymbolKind::Class,
        "struct" => SymbolKind::Struct,
        "enum" => SymbolKind::Enum,
        "interface" => SymbolKind::Interface,
        "trait" => SymbolKind::Trait,
        "type" => SymbolKind::Type,
        "constant" => SymbolKind::Constant,
        "variable" => SymbolKind::Variable,
        "module" => SymbolKind::Module,
        "macro" => SymbolKind::Macro,
        _ => return None,
    })
}

/// A compiled query with the role of each of its captures.
pub(crate) struct CompiledQuery {
    pub(crate) query: Query,
    /// Indexed by capture index.
    roles: Vec<Role>,
    /// Whether every pattern that captures a definition or an import
    /// statement starts at the root node, so matching never has to look for
    /// a pattern start below it.
    pub(crate) rooted: bool,
}

impl CompiledQuery {
    fn compile(grammar: Grammar, purpose: Purpose) -> Result<Self, QueryError> {
        let file = purpose.file_name();
        let language = grammar.name();
        let source = grammar.query_source(purpose);
        let query = Query::new(&grammar.tree_sitter_language(), source).map_err(|source| {
            QueryError::Compile {
                file,
                language,
                source,
            }
        })?;
        let roles = query
            .capture_names()
            .iter()
            .map(|name| {
                Role::of(name, purpose).ok_or_else(|| QueryError::UnknownCapture {
                    file,
                    language,
                    capture: (*name).to_owned(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        for pattern in 0..query.pattern_count() {
            let unsupported = query
                .general_predicates(pattern)
                .iter()
                .map(|predicate| predicate.operator.to_string())
                .chain(
                    query
                        .property_settings(pattern)
                        .iter()
                        .map(|property| format!("set! {}", property.key)),
                )
                .chain(
                    query
                        .property_predicates(pattern)
                        .iter()
                        .map(|(property, _)| format!("is? {}", property.key)),
                )
                .next();
            if let Some(predicate) = unsupported {
                return Err(QueryError::UnsupportedPredicate {
                    file,
                    language,
                    predicate,
                });
            }
        }
        let rooted =
            (0..query.pattern_count())
                .filter(|&pattern| {
                    query.capture_quantifiers(pattern).iter().zip(&roles).any(
                        |(quantifier, role)| {
                            *quantifier != CaptureQuantifier::Zero
                                && matches!(role, Role::Definition(_) | Role::Import(_))
                        },
                    )
                })
                .all(|pattern| {
                    let text = source.get(query.start_byte_for_pattern(pattern)..);
                    text.is_some_and(|text| starts_with_node(text, grammar.root_kind()))
                });
        Ok(Self {
            query,
            roles,
            rooted,
        })
    }

    /// The role of a capture index reported by a match.
    pub(crate) fn role(&self, capture_index: u32) -> Role {
        self.roles
            .get(capture_index as usize)
            .copied()
            .unwrap_or(Role::Ignored)
    }

    /// A cursor for matching the whole tree: when the query is rooted,
    /// pattern starts are only looked for at the root node, which spares a
    /// walk of every node (function bodies make up most of them).
    pub(crate) fn cursor(&self) -> QueryCursor {
        let mut cursor = QueryCursor::new();
        if self.rooted {
            cursor.set_max_start_depth(Some(0));
        }
        cursor
    }
}

/// Whether a pattern's text starts with the node `kind`: `(source_file …`.
fn starts_with_node(pattern: &str, kind: &str) -> bool {
    pattern
        .strip_prefix('(')
        .map(str::trim_start)
        .and_then(|rest| rest.strip_prefix(kind))
        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
}

/// A built-in query that does not compile or uses something the providers do
/// not understand. Always a bug in `stages/queries/`.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// tree-sitter rejected the query (syntax, unknown node type or field).
    #[error("Failed to compile `{file}` for `{language}`")]
    Compile {
        /// The query file name, such as `signatures.scm`.
        file: &'static str,
        /// The grammar name, such as `rust`.
        language: &'static str,
        /// tree-sitter's error, with the row and column in the query.
        #[source]
        source: tree_sitter::QueryError,
    },
    /// A capture name outside the file's vocabulary (see
    /// `stages/queries/README.md`).
    #[error("Unknown capture `@{capture}` in `{file}` for `{language}`")]
    UnknownCapture {
        /// The query file name.
        file: &'static str,
        /// The grammar name.
        language: &'static str,
        /// The capture name, without `@`.
        capture: String,
    },
    /// A predicate or property that tree-sitter does not evaluate itself
    /// (anything but `#eq?`, `#match?`, `#any-of?` and their negations).
    #[error("Unsupported predicate `#{predicate}` in `{file}` for `{language}`")]
    UnsupportedPredicate {
        /// The query file name.
        file: &'static str,
        /// The grammar name.
        language: &'static str,
        /// The predicate's operator.
        predicate: String,
    },
}

/// Compiles every built-in query against its grammar, the check helix runs as
/// `cargo xtask query-check`. Providers compile their queries lazily and rely
/// on this passing.
///
/// # Errors
///
/// The first query, in grammar then purpose order, that fails to compile or
/// uses an unknown capture name or predicate.
///
/// # Examples
///
/// ```
/// aic_stages::lang::compile_queries().unwrap();
/// ```
pub fn compile_queries() -> Result<(), QueryError> {
    for grammar in Grammar::ALL {
        for purpose in Purpose::ALL {
            CompiledQuery::compile(grammar, purpose)?;
        }
    }
    Ok(())
}

thread_local! {
    /// One parser per grammar and thread: `Parser::parse` takes `&mut self`,
    /// so rayon workers never share one.
    static PARSERS: RefCell<[Option<Parser>; Grammar::ALL.len()]> =
        const { RefCell::new([const { None }; Grammar::ALL.len()]) };
}

/// A tree parsed on this thread, keyed by grammar and the text's xxh3-128
/// hash and length: the per-file stage asks for the same file's tree for its
/// imports, its comments and strings, and its signatures and names, and
/// parses it once. The last [`REMEMBERED_TREES`] are kept, so a file whose
/// licence header was stripped before its comments (two texts) is still
/// parsed once per text.
struct LastTree {
    grammar: Grammar,
    hash: u128,
    length: usize,
    tree: Option<Tree>,
}

/// Trees kept per thread.
const REMEMBERED_TREES: usize = 2;

thread_local! {
    static LAST_TREES: RefCell<Vec<LastTree>> = const { RefCell::new(Vec::new()) };
}

/// Parses `content` with this thread's parser for `grammar`. `None` when the
/// file is over [`MAX_PARSE_BYTES`] or its work budget; a file with syntax
/// errors still parses, with error nodes where it could not make sense of it.
///
/// The same text asked for again on the same thread gets the same tree back
/// without a parse ([`work::parses`] counts real parses). Python's long
/// comment runs are not shown to the parser (see [`python_comments`]): its
/// tree has no nodes for them.
pub(crate) fn parse(grammar: Grammar, content: &str) -> Option<Tree> {
    if content.len() > MAX_PARSE_BYTES {
        return None;
    }
    let hash = xxhash_rust::xxh3::xxh3_128(content.as_bytes());
    let remembered = LAST_TREES.with(|trees| {
        let trees = trees.try_borrow().ok()?;
        trees
            .iter()
            .find(|last| {
                last.grammar == grammar && last.hash == hash && last.length == content.len()
            })
            .map(|last| last.tree.clone())
    });
    if let Some(tree) = remembered {
        return tree;
    }
    let key = (grammar, hash, content.len());
    let tree = kept_tree(key).or_else(|| {
        let tree = parse_uncached(grammar, content);
        if let Some(tree) = &tree {
            keep_tree(key, tree);
        }
        tree
    });
    LAST_TREES.with(|trees| {
        if let Ok(mut trees) = trees.try_borrow_mut() {
            trees.truncate(REMEMBERED_TREES - 1);
            trees.insert(
                0,
                LastTree {
                    grammar,
                    hash,
                    length: content.len(),
                    tree: tree.clone(),
                },
            );
        }
    });
    tree
}

/// A parsed text's key among the kept trees: its grammar, xxh3-128 hash and
/// length in bytes.
type TreeKey = (Grammar, u128, usize);

/// Trees kept across threads while a [`KeptTrees`] scope is open.
struct TreeStore {
    /// Open scopes; the store empties when the last one closes.
    scopes: usize,
    /// The most source bytes whose trees are kept (the largest cap of the
    /// open scopes).
    cap_bytes: usize,
    /// Source bytes of the trees kept.
    kept_bytes: usize,
    /// Parses answered from a kept tree.
    reused: usize,
    trees: HashMap<TreeKey, Tree>,
}

static KEPT_TREES: LazyLock<Mutex<TreeStore>> = LazyLock::new(|| {
    Mutex::new(TreeStore {
        scopes: 0,
        cap_bytes: 0,
        kept_bytes: 0,
        reused: 0,
        trees: HashMap::new(),
    })
});

/// While open, the trees parsed inside [`keeping`] on any thread are kept
/// (until the trees of `cap_bytes` of source are kept) and handed to any
/// thread that parses the same text, so a compile parses a file once even
/// when one phase reads its imports on one rayon worker and a later phase its
/// comments and signatures on another. A tree takes about 23 times its
/// source's size in memory (measured on deno's Rust and TypeScript), so only
/// the files likely to be parsed again are kept; everything kept is dropped
/// when the last open scope closes. Scopes of concurrent compiles share the
/// store: a tree depends only on its text.
#[must_use = "trees are kept only while the scope lives"]
pub struct KeptTrees(());

thread_local! {
    /// Whether this thread's parses are to be kept (see [`keeping`]).
    static KEEPING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `work` with the trees it parses on this thread kept, when `keep` is
/// set and a [`KeptTrees`] scope is open: for the files a later phase is
/// likely to parse again.
pub fn keeping<T>(keep: bool, work: impl FnOnce() -> T) -> T {
    /// Restores the thread's flag, also when `work` panics.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            KEEPING.with(|flag| flag.set(self.0));
        }
    }
    let _restore = Restore(KEEPING.with(|flag| flag.replace(keep)));
    work()
}

/// Opens a [`KeptTrees`] scope keeping the trees of up to `cap_bytes` bytes
/// of source.
pub fn keep_trees(cap_bytes: usize) -> KeptTrees {
    let mut store = KEPT_TREES.lock().unwrap_or_else(PoisonError::into_inner);
    store.scopes += 1;
    store.cap_bytes = store.cap_bytes.max(cap_bytes);
    KeptTrees(())
}

/// What the open [`KeptTrees`] scopes kept and reused so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeptTreesReport {
    /// Trees kept.
    pub trees: usize,
    /// Their source, in bytes.
    pub source_bytes: usize,
    /// Parses a kept tree answered.
    pub reused: usize,
}

impl KeptTrees {
    /// What the open scopes (this one and any concurrent ones) kept and
    /// reused so far.
    pub fn report(&self) -> KeptTreesReport {
        let store = KEPT_TREES.lock().unwrap_or_else(PoisonError::into_inner);
        KeptTreesReport {
            trees: store.trees.len(),
            source_bytes: store.kept_bytes,
            reused: store.reused,
        }
    }
}

impl Drop for KeptTrees {
    fn drop(&mut self) {
        let mut store = KEPT_TREES.lock().unwrap_or_else(PoisonError::into_inner);
        store.scopes = store.scopes.saturating_sub(1);
        if store.scopes == 0 {
            store.cap_bytes = 0;
            store.kept_bytes = 0;
            store.reused = 0;
            let trees = std::mem::take(&mut store.trees);
            // The trees are freed after the lock is released.
            drop(store);
            drop(trees);
        }
    }
}

/// The kept tree of `key`, when a scope is open and one was kept.
fn kept_tree(key: TreeKey) -> Option<Tree> {
    let mut store = KEPT_TREES.lock().unwrap_or_else(PoisonError::into_inner);
    if store.scopes == 0 {
        return None;
    }
    let tree = store.trees.get(&key).cloned();
    store.reused += usize::from(tree.is_some());
    tree
}

/// Keeps `tree` under `key` inside [`keeping`], when a scope is open and
/// its cap allows.
fn keep_tree(key: TreeKey, tree: &Tree) {
    if !KEEPING.with(std::cell::Cell::get) {
        return;
    }
    let mut store = KEPT_TREES.lock().unwrap_or_else(PoisonError::into_inner);
    if store.scopes == 0 || store.kept_bytes + key.2 > store.cap_bytes {
        return;
    }
    if store.trees.insert(key, tree.clone()).is_none() {
        store.kept_bytes += key.2;
    }
}

/// A parse of `content`, never answered from a remembered or kept tree (see
/// [`crate::work::parse_uncached`]).
pub(crate) fn parse_fresh(grammar: Grammar, content: &str) -> Option<Tree> {
    if content.len() > MAX_PARSE_BYTES {
        return None;
    }
    parse_uncached(grammar, content)
}

fn parse_uncached(grammar: Grammar, content: &str) -> Option<Tree> {
    if grammar == Grammar::Python {
        let runs = python_comments::long_comment_runs(content);
        if !runs.is_empty() {
            let masked = python_comments::mask(content, &runs);
            let tree = parse_text(grammar, &masked)?;
            if !tree.root_node().has_error() {
                return Some(tree);
            }
            // The lexer misread something; the text as written decides.
        }
    }
    parse_text(grammar, content)
}

fn parse_text(grammar: Grammar, content: &str) -> Option<Tree> {
    work::parsed();
    let budget = BASE_PROGRESS_CHECKS + content.len() / BYTES_PER_PROGRESS_CHECK;
    PARSERS.with(|parsers| {
        let mut parsers = parsers.try_borrow_mut().ok()?;
        let slot = &mut parsers[grammar.index()];
        if slot.is_none() {
            let mut parser = Parser::new();
            parser.set_language(&grammar.tree_sitter_language()).ok()?;
            *slot = Some(parser);
        }
        let parser = slot.as_mut()?;
        let bytes = content.as_bytes();
        let mut checks = 0_usize;
        let mut progress = |_: &ParseState| {
            checks += 1;
            if checks > budget {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let tree = parser.parse_with_options(
            &mut |offset, _| bytes.get(offset..).unwrap_or_default(),
            None,
            Some(ParseOptions::new().progress_callback(&mut progress)),
        );
        if tree.is_none() {
            // A cancelled parse would otherwise resume on the next call.
            parser.reset();
        }
        tree
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_names_outside_a_files_vocabulary_are_rejected() {
        assert_eq!(
            Role::of("definition.struct", Purpose::Names),
            Some(Role::Definition(SymbolKind::Struct))
        );
        assert_eq!(Role::of("definition.widget", Purpose::Names), None);
        assert_eq!(Role::of("definition.implementation", Purpose::Names), None);
        assert_eq!(Role::of("doc", Purpose::Names), None);
        assert_eq!(Role::of("name", Purpose::Imports), None);
        assert_eq!(Role::of("_require", Purpose::Imports), Some(Role::Ignored));
        assert_eq!(
            Role::of("import.reexport", Purpose::Imports),
            Some(Role::Import(ImportKind::Reexport))
        );
    }

    /// Real parses done on a fresh thread while it parses `text`.
    fn parses_on_another_thread(text: &'static str) -> u64 {
        std::thread::spawn(move || {
            let before = work::parses();
            assert!(parse(Grammar::Rust, text).is_some());
            work::parses() - before
        })
        .join()
        .unwrap()
    }

    #[test]
    fn a_kept_tree_is_parsed_once_across_threads_while_its_scope_lives() {
        const KEPT: &str = "use kept_trees_test::a;\nfn kept_once() {}\n";
        const NOT_KEPT: &str = "use kept_trees_test::b;\nfn parsed_twice() {}\n";
        const OVER_CAP: &str = "fn over_the_cap_of_kept_trees() {}\n";
        let scope = keep_trees(1 << 20);
        std::thread::spawn(|| {
            keeping(true, || parse(Grammar::Rust, KEPT));
            keeping(false, || parse(Grammar::Rust, NOT_KEPT));
        })
        .join()
        .unwrap();
        assert_eq!(parses_on_another_thread(KEPT), 0);
        assert_eq!(parses_on_another_thread(NOT_KEPT), 1);
        let report = scope.report();
        assert!(report.trees >= 1 && report.reused >= 1, "{report:?}");
        drop(scope);
        // Without a scope nothing is kept or handed out.
        assert_eq!(parses_on_another_thread(KEPT), 1);
        // A scope keeps no more source than its cap.
        let scope = keep_trees(OVER_CAP.len() - 1);
        std::thread::spawn(|| keeping(true, || parse(Grammar::Rust, OVER_CAP)))
            .join()
            .unwrap();
        assert_eq!(parses_on_another_thread(OVER_CAP), 1);
        assert_eq!(scope.report().trees, 0);
    }

    #[test]
    fn a_pattern_is_rooted_when_it_opens_with_the_root_node() {
        assert!(starts_with_node(
            "(source_file (use_declaration))",
            "source_file"
        ));
        assert!(starts_with_node("( program\n  (x))", "program"));
        assert!(!starts_with_node("(source_file_x)", "source_file"));
        assert!(!starts_with_node("((comment) @doc)", "program"));
        assert!(!starts_with_node("[(program) (x)]", "program"));
    }
}
