//! Provider tests over the fixtures in `stages/tests/fixtures/lang/`.

use test_case::test_case;

use super::grammar::{Grammar, Purpose};
use super::*;

const TYPESCRIPT_SERVICE: &str =
    include_str!("../../tests/fixtures/lang/typescript/user_service.ts");
const TSX_BUTTON: &str = include_str!("../../tests/fixtures/lang/typescript/button.tsx");
const TYPESCRIPT_BROKEN: &str = include_str!("../../tests/fixtures/lang/typescript/broken.ts");
const JAVASCRIPT_SERVER: &str = include_str!("../../tests/fixtures/lang/javascript/server.js");
const PYTHON_PARSER: &str = include_str!("../../tests/fixtures/lang/python/parser.py");
const PYTHON_BROKEN: &str = include_str!("../../tests/fixtures/lang/python/broken.py");
const GO_SERVER: &str = include_str!("../../tests/fixtures/lang/go/server.go");
const RUST_CONFIG: &str = include_str!("../../tests/fixtures/lang/rust/config.rs");
const RUST_LONG_ITEMS: &str = include_str!("../../tests/fixtures/lang/rust/long_items.rs");
const JAVA_REPOSITORY: &str = include_str!("../../tests/fixtures/lang/java/UserRepository.java");

/// Every fixture: (snapshot name, path, content).
const FIXTURES: [(&str, &str, &str); 10] = [
    (
        "typescript_user_service",
        "src/user_service.ts",
        TYPESCRIPT_SERVICE,
    ),
    ("tsx_button", "web/button.tsx", TSX_BUTTON),
    ("typescript_broken", "src/broken.ts", TYPESCRIPT_BROKEN),
    ("javascript_server", "server.js", JAVASCRIPT_SERVER),
    ("python_parser", "calc/parser.py", PYTHON_PARSER),
    ("python_broken", "app/broken.py", PYTHON_BROKEN),
    ("go_server", "internal/server/server.go", GO_SERVER),
    ("rust_config", "src/config.rs", RUST_CONFIG),
    ("rust_long_items", "src/scan/stats.rs", RUST_LONG_ITEMS),
    (
        "java_repository",
        "src/main/java/com/example/users/UserRepository.java",
        JAVA_REPOSITORY,
    ),
];

fn path(path: &str) -> RelativePath {
    RelativePath::new(path).expect("fixture paths are valid relative paths")
}

fn analyze(file: &str, content: &str) -> FileAnalysis {
    let path = path(file);
    analyze_file(&path, Language::detect(&path), content)
}

fn import(source: &str, symbols: &[&str], is_relative: bool, kind: ImportKind) -> ImportRef {
    ImportRef {
        source: source.to_owned(),
        symbols: symbols.iter().map(|s| (*s).to_owned()).collect(),
        is_relative,
        kind,
    }
}

fn names(analysis: &FileAnalysis) -> Vec<(&str, SymbolKind)> {
    analysis
        .names
        .iter()
        .map(|n| (n.name.as_str(), n.kind))
        .collect()
}

#[test]
fn every_query_compiles_against_its_grammar() {
    if let Err(error) = compile_queries() {
        panic!("{error}: {:?}", std::error::Error::source(&error));
    }
    for grammar in Grammar::ALL {
        for purpose in Purpose::ALL {
            let compiled = grammar.query(purpose);
            assert!(
                compiled.query.pattern_count() > 0,
                "`{}` for `{}` has no patterns",
                purpose.file_name(),
                grammar.name()
            );
        }
    }
}

#[test]
fn definition_patterns_start_at_the_root_node() {
    // Rooted queries are matched from the root only, which is what keeps them
    // cheap; `require` and `import()` may be anywhere in TypeScript and
    // JavaScript.
    for grammar in Grammar::ALL {
        assert!(
            grammar.query(Purpose::Names).rooted,
            "`names.scm` for `{}`",
            grammar.name()
        );
        assert!(
            grammar.query(Purpose::Signatures).rooted,
            "`signatures.scm` for `{}`",
            grammar.name()
        );
        let anywhere = matches!(
            grammar,
            Grammar::TypeScript | Grammar::Tsx | Grammar::JavaScript
        );
        assert_eq!(
            grammar.query(Purpose::Imports).rooted,
            !anywhere,
            "`imports.scm` for `{}`",
            grammar.name()
        );
    }
}

#[test]
fn query_errors_name_the_file_and_the_language() {
    let source = tree_sitter::Query::new(&tree_sitter_rust::LANGUAGE.into(), "(no_such_node)")
        .expect_err("an unknown node type does not compile");
    let error = QueryError::Compile {
        file: "signatures.scm",
        language: "rust",
        source,
    };
    assert_eq!(
        error.to_string(),
        "Failed to compile `signatures.scm` for `rust`"
    );
}

#[test_case("src/app.ts", "typescript")]
#[test_case("src/App.tsx", "tsx")]
#[test_case("src/app.js", "javascript")]
#[test_case("src/app.jsx", "javascript")]
#[test_case("src/app.mjs", "javascript")]
#[test_case("src/app.cjs", "javascript")]
#[test_case("app/main.py", "python")]
#[test_case("cmd/main.go", "go")]
#[test_case("src/main.rs", "rust")]
#[test_case("src/Main.java", "java")]
#[test_case("lib/app.rb", "generic")]
#[test_case("README.md", "generic")]
fn files_get_the_provider_of_their_language(file: &str, id: &str) {
    let path = path(file);
    let language = Language::detect(&path);
    let provider = provider_for(&path, language);
    assert_eq!(provider.id(), id);
    assert!(provider.handles(language));
}

#[test_case(0)]
#[test_case(1)]
#[test_case(2)]
#[test_case(3)]
#[test_case(4)]
#[test_case(5)]
#[test_case(6)]
#[test_case(7)]
#[test_case(8)]
#[test_case(9)]
fn signature_renders_match_their_snapshots(fixture: usize) {
    let (name, file, content) = FIXTURES[fixture];
    let analysis = analyze(file, content);
    let with_docs = analysis
        .signatures_with_docs
        .expect("tree-sitter providers render L1");
    let only = analysis
        .signatures_only
        .expect("tree-sitter providers render L2");
    insta::assert_snapshot!(format!("{name}_signatures_with_docs"), with_docs);
    insta::assert_snapshot!(format!("{name}_signatures_only"), only);
}

#[test]
fn analyze_agrees_with_the_single_purpose_methods() {
    for (_, file, content) in FIXTURES {
        let path = path(file);
        let provider = provider_for(&path, Language::detect(&path));
        let analysis = provider.analyze(&path, content);
        assert_eq!(
            analysis.imports,
            provider.parse_imports(content, &path),
            "{file}"
        );
        assert_eq!(analysis.names, provider.extract_names(content), "{file}");
        assert_eq!(
            analysis.signatures_with_docs.as_deref(),
            Some(render_chunks(&provider.extract_signatures_with_docs(content)).as_str()),
            "{file}"
        );
        assert_eq!(
            analysis.signatures_only.as_deref(),
            Some(render_chunks(&provider.extract_signatures_only(content)).as_str()),
            "{file}"
        );
    }
}

#[test]
fn analysis_is_identical_from_two_threads_at_once() {
    let expected: Vec<FileAnalysis> = FIXTURES
        .iter()
        .map(|(_, file, content)| analyze(file, content))
        .collect();
    let run = || {
        (0..20)
            .map(|_| {
                FIXTURES
                    .iter()
                    .map(|(_, file, content)| analyze(file, content))
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    };
    let (first, second) = std::thread::scope(|scope| {
        let first = scope.spawn(run);
        let second = scope.spawn(run);
        (
            first.join().expect("first thread"),
            second.join().expect("second thread"),
        )
    });
    for round in first.iter().chain(&second) {
        assert_eq!(round, &expected);
    }
}

#[test]
fn files_with_syntax_errors_still_yield_imports_and_later_definitions() {
    let typescript = analyze("src/broken.ts", TYPESCRIPT_BROKEN);
    assert_eq!(
        typescript.imports,
        [
            import("./parser", &["parse"], true, ImportKind::Import),
            import("./render", &["render"], true, ImportKind::Import),
        ]
    );
    assert!(
        names(&typescript).contains(&("afterTheError", SymbolKind::Function)),
        "{:?}",
        typescript.names
    );

    let python = analyze("app/broken.py", PYTHON_BROKEN);
    assert_eq!(
        python.imports,
        [
            import("json", &[], false, ImportKind::Import),
            import(".models", &["User", "Group"], true, ImportKind::Import),
        ]
    );
    assert!(
        names(&python).contains(&("save", SymbolKind::Function)),
        "{:?}",
        python.names
    );
    assert!(
        python
            .signatures_only
            .as_deref()
            .is_some_and(|text| text.starts_with("def load(path: …\n")),
        "{:?}",
        python.signatures_only
    );
}

#[test]
fn files_over_the_parse_limit_fall_back_to_the_generic_analysis() {
    let mut content = String::from("import os\n\ndef handler(event):\n    pass\n");
    while content.len() <= MAX_PARSE_BYTES {
        content.push_str("# padding padding padding padding padding padding padding\n");
    }
    let analysis = analyze("big.py", &content);
    assert!(analysis.imports.is_empty());
    assert_eq!(analysis.signatures_with_docs, None);
    assert_eq!(
        analysis.signatures_only.as_deref(),
        Some("def handler(event):\n")
    );
    assert_eq!(names(&analysis), [("handler", SymbolKind::Function)]);
}

#[test]
fn empty_and_definition_free_files_render_empty_tiers() {
    let analysis = analyze("src/empty.rs", "");
    assert_eq!(analysis.signatures_only.as_deref(), Some(""));
    assert_eq!(analysis.signatures_with_docs.as_deref(), Some(""));
    let analysis = analyze("src/lib.ts", "import \"./setup\";\nconsole.log(1);\n");
    assert_eq!(analysis.signatures_only.as_deref(), Some(""));
    assert_eq!(analysis.imports.len(), 1);
}

#[test]
fn typescript_imports_cover_every_form() {
    assert_eq!(
        analyze("src/user_service.ts", TYPESCRIPT_SERVICE).imports,
        [
            import("@angular/core", &["Injectable"], false, ImportKind::Import),
            import(
                "./models/user",
                &["User", "UserId"],
                true,
                ImportKind::Import
            ),
            import("node:path", &[], false, ImportKind::Import),
            import(
                "../db",
                &["Database", "Transaction"],
                true,
                ImportKind::Import
            ),
            import("./polyfills", &[], true, ImportKind::Import),
            import("./format", &["formatName"], true, ImportKind::Reexport),
            import("./errors", &[], true, ImportKind::Reexport),
            import("./lazy", &[], true, ImportKind::Import),
        ]
    );
    assert_eq!(
        analyze("web/button.tsx", TSX_BUTTON).imports,
        [
            import("react", &["React", "useState"], false, ImportKind::Import),
            import("./button.module.css", &["styles"], true, ImportKind::Import),
        ]
    );
}

#[test]
fn typescript_names_are_top_level_declarations_and_class_methods() {
    assert_eq!(
        names(&analyze("src/user_service.ts", TYPESCRIPT_SERVICE)),
        [
            ("PAGE_SIZE", SymbolKind::Constant),
            ("cache", SymbolKind::Constant),
            ("ListOptions", SymbolKind::Interface),
            ("UserFilter", SymbolKind::Type),
            ("Role", SymbolKind::Enum),
            ("UserService", SymbolKind::Class),
            ("findById", SymbolKind::Method),
            ("list", SymbolKind::Method),
            ("create", SymbolKind::Method),
            ("normaliseEmail", SymbolKind::Function),
            ("isAdmin", SymbolKind::Function),
            ("internalHelper", SymbolKind::Function),
        ]
    );
}

/// Methods are found in every kind of top-level class: plain, abstract,
/// exported, exported abstract, default-exported; in `.ts` and `.tsx`.
#[test]
fn typescript_methods_of_every_class_kind() {
    let source = "class Plain { run() {} }\n\
                  abstract class Base { abstract shape(): void; area(): number { return 1; } }\n\
                  export class Shown { show(): void {} }\n\
                  export abstract class Hidden { abstract hide(): void; }\n\
                  export default class Main { start() {} }\n\
                  declare class Ambient { ambient(): void; }\n\
                  function outer() { class Inner { inner() {} } }\n";
    for file in ["src/classes.ts", "src/classes.tsx"] {
        let analysis = analyze(file, source);
        let methods: Vec<&str> = names(&analysis)
            .into_iter()
            .filter(|(_, kind)| *kind == SymbolKind::Method)
            .map(|(name, _)| name)
            .collect();
        assert_eq!(
            methods,
            ["run", "shape", "area", "show", "hide", "start"],
            "{file}"
        );
        let signatures = analysis.signatures_only.unwrap_or_default();
        for method in ["run()", "shape()", "area()", "show()", "hide()", "start()"] {
            assert!(
                signatures.contains(method),
                "{file}: {method} in {signatures}"
            );
        }
    }
}

#[test]
fn javascript_imports_include_require_and_esm() {
    assert_eq!(
        analyze("server.js", JAVASCRIPT_SERVER).imports,
        [
            import("http", &[], false, ImportKind::Import),
            import(
                "fs/promises",
                &["readFile", "writeFile"],
                false,
                ImportKind::Import
            ),
            import("./config.json", &[], true, ImportKind::Import),
            import("./logger.mjs", &["logger"], true, ImportKind::Import),
        ]
    );
}

#[test]
fn javascript_names_skip_require_bindings() {
    assert_eq!(
        names(&analyze("server.js", JAVASCRIPT_SERVER)),
        [
            ("DEFAULT_PORT", SymbolKind::Constant),
            ("requestCount", SymbolKind::Variable),
            ("handle", SymbolKind::Function),
            ("Server", SymbolKind::Class),
            ("start", SymbolKind::Method),
            ("routes", SymbolKind::Method),
            ("stop", SymbolKind::Function),
        ]
    );
}

#[test]
fn python_imports_keep_relative_dots() {
    assert_eq!(
        analyze("calc/parser.py", PYTHON_PARSER).imports,
        [
            import("os.path", &[], false, ImportKind::Import),
            import("re", &[], false, ImportKind::Import),
            import("sys", &[], false, ImportKind::Import),
            import(
                "dataclasses",
                &["dataclass", "field"],
                false,
                ImportKind::Import
            ),
            import(
                "typing",
                &["Iterator", "Optional"],
                false,
                ImportKind::Import
            ),
            import(".", &["tokens"], true, ImportKind::Import),
            import(".lexer", &["Lexer", "Token"], true, ImportKind::Import),
            import("..util.errors", &["ParseError"], true, ImportKind::Import),
            import(".ast", &["*"], true, ImportKind::Import),
            import("json", &[], false, ImportKind::Import),
        ]
    );
}

#[test]
fn python_names_are_top_level_definitions_and_methods() {
    assert_eq!(
        names(&analyze("calc/parser.py", PYTHON_PARSER)),
        [
            ("MAX_DEPTH", SymbolKind::Constant),
            ("Node", SymbolKind::Class),
            ("is_leaf", SymbolKind::Method),
            ("Parser", SymbolKind::Class),
            ("__init__", SymbolKind::Method),
            ("parse", SymbolKind::Method),
            ("tokenize", SymbolKind::Method),
            ("_expression", SymbolKind::Method),
            ("parse_file", SymbolKind::Function),
            ("main", SymbolKind::Function),
        ]
    );
}

#[test]
fn go_imports_are_the_spec_paths() {
    assert_eq!(
        analyze("internal/server/server.go", GO_SERVER).imports,
        [
            import("context", &[], false, ImportKind::Import),
            import("fmt", &[], false, ImportKind::Import),
            import("net/http", &[], false, ImportKind::Import),
            import("github.com/sirupsen/logrus", &[], false, ImportKind::Import),
            import("github.com/lib/pq", &[], false, ImportKind::Import),
            import(
                "example.com/app/internal/store",
                &[],
                false,
                ImportKind::Import
            ),
        ]
    );
}

#[test]
fn go_names_are_top_level_declarations() {
    assert_eq!(
        names(&analyze("internal/server/server.go", GO_SERVER)),
        [
            ("DefaultAddr", SymbolKind::Constant),
            ("readTimeout", SymbolKind::Constant),
            ("writeTimeout", SymbolKind::Constant),
            ("ErrClosed", SymbolKind::Variable),
            ("Handler", SymbolKind::Type),
            ("Server", SymbolKind::Struct),
            ("Store", SymbolKind::Interface),
            ("New", SymbolKind::Function),
            ("Serve", SymbolKind::Method),
            ("route", SymbolKind::Method),
        ]
    );
}

#[test]
fn rust_imports_flatten_use_trees_and_list_module_declarations() {
    assert_eq!(
        analyze("src/config.rs", RUST_CONFIG).imports,
        [
            import("defaults", &[], true, ImportKind::ModuleDeclaration),
            import("schema", &[], true, ImportKind::ModuleDeclaration),
            import("std::collections", &["BTreeMap"], false, ImportKind::Import),
            import("std::path", &["Path", "PathBuf"], false, ImportKind::Import),
            import("crate::scan", &["Entry"], true, ImportKind::Import),
            import(
                "crate::scan::walk",
                &["Walker", "WalkOptions"],
                true,
                ImportKind::Import
            ),
            import("super::error", &["Error"], true, ImportKind::Import),
            import("self::schema", &["*"], true, ImportKind::Import),
            import("schema", &["Schema"], false, ImportKind::Reexport),
            import("serde", &[], false, ImportKind::Import),
            import("super", &["*"], true, ImportKind::Import),
        ]
    );
}

#[test]
fn rust_names_are_items_and_impl_methods() {
    assert_eq!(
        names(&analyze("src/config.rs", RUST_CONFIG)),
        [
            ("defaults", SymbolKind::Module),
            ("schema", SymbolKind::Module),
            ("tests_support", SymbolKind::Module),
            ("CONFIG_FILE", SymbolKind::Constant),
            ("DEFAULT_BUDGET", SymbolKind::Variable),
            ("Config", SymbolKind::Struct),
            ("Source", SymbolKind::Enum),
            ("Settings", SymbolKind::Type),
            ("Loader", SymbolKind::Trait),
            ("load", SymbolKind::Method),
            ("name", SymbolKind::Method),
            ("merge", SymbolKind::Method),
            ("find_config", SymbolKind::Function),
            ("raw_load", SymbolKind::Function),
            ("bail", SymbolKind::Macro),
        ]
    );
}

#[test]
fn java_imports_cover_static_and_wildcard_imports() {
    assert_eq!(
        analyze("src/UserRepository.java", JAVA_REPOSITORY).imports,
        [
            import("java.util.List", &["List"], false, ImportKind::Import),
            import(
                "java.util.Optional",
                &["Optional"],
                false,
                ImportKind::Import
            ),
            import("java.util.concurrent", &["*"], false, ImportKind::Import),
            import(
                "java.util.Objects.requireNonNull",
                &["requireNonNull"],
                false,
                ImportKind::Import
            ),
            import(
                "com.example.db.Database",
                &["Database"],
                false,
                ImportKind::Import
            ),
        ]
    );
}

#[test]
fn java_names_are_types_methods_and_constants() {
    assert_eq!(
        names(&analyze("src/UserRepository.java", JAVA_REPOSITORY)),
        [
            ("UserRepository", SymbolKind::Class),
            ("PAGE_SIZE", SymbolKind::Constant),
            ("findById", SymbolKind::Method),
            ("list", SymbolKind::Method),
            ("Role", SymbolKind::Enum),
            ("canWrite", SymbolKind::Method),
            ("Page", SymbolKind::Class),
            ("Repository", SymbolKind::Interface),
            ("pageSize", SymbolKind::Method),
        ]
    );
}

#[test]
fn long_declarations_are_elided() {
    let analysis = analyze("src/scan/stats.rs", RUST_LONG_ITEMS);
    assert_eq!(
        analysis.signatures_only.as_deref(),
        Some(
            "pub struct ScanStats { … }\n\
             pub const SKIPPED_NAMES: &[&str] = &[ …\n\
             pub fn longest_header<T, U>(\n    first: T,\n    second: U,\n) -> (T, U)\n\
             where\n    T: Clone + Send + Sync + 'static,\n    U: Clone + Send + Sync + 'static,\n"
        )
    );
}

#[test]
fn chunks_carry_one_based_line_spans() {
    let path = path("src/config.rs");
    let provider = provider_for(&path, Language::Rust);
    let chunks = provider.extract_signatures_only(RUST_CONFIG);
    let find_config = chunks
        .iter()
        .find(|c| c.symbol_name == "find_config")
        .expect("find_config is a signature");
    assert_eq!(find_config.symbol_kind, SymbolKind::Function);
    assert_eq!(
        RUST_CONFIG.lines().nth(find_config.start_line as usize - 1),
        Some("pub fn find_config(start: &Path) -> Option<PathBuf> {")
    );
    assert_eq!(
        RUST_CONFIG.lines().nth(find_config.end_line as usize - 1),
        Some("}")
    );
    assert_eq!(
        find_config.content,
        "pub fn find_config(start: &Path) -> Option<PathBuf>"
    );
}
