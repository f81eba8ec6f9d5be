//! Resolving one import to repository files, one module per language.

mod go;
mod java;
mod javascript;
mod python;
mod rust;

use super::index::{FileIndex, parent};
use super::layout::ProjectLayout;
use crate::lang::ImportRef;
use crate::language::Language;
use crate::relative_path::RelativePath;

/// Resolves one import of `from` to repository files (indices into the RepoMap).
pub(super) fn resolve(
    index: &FileIndex,
    layout: &ProjectLayout,
    from: &RelativePath,
    language: Language,
    import: &ImportRef,
) -> Vec<usize> {
    let directory = parent(from.as_str());
    match language {
        Language::TypeScript | Language::JavaScript => {
            javascript::resolve(index, layout, directory, &import.source)
        }
        Language::Python => python::resolve(index, directory, import),
        Language::Go => go::resolve(index, layout, &import.source),
        Language::Rust => rust::resolve(index, layout, from, import),
        Language::Java => java::resolve(index, &import.source),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;
    use crate::lang::ImportKind;
    use crate::repo_map::{FileEntry, RepoMap};
    use crate::select::import_graph::layout::{JsPackage, RustCrate, TsConfig};

    fn repo(paths: &[&str]) -> RepoMap {
        FileEntry::repo_for_test(paths)
    }

    fn import(source: &str, symbols: &[&str], kind: ImportKind) -> ImportRef {
        ImportRef {
            source: source.to_owned(),
            symbols: symbols.iter().map(|s| (*s).to_owned()).collect(),
            is_relative: source.starts_with('.'),
            kind,
        }
    }

    fn resolved(
        files: &[&str],
        layout: &ProjectLayout,
        from: &str,
        imp: &ImportRef,
    ) -> Vec<String> {
        let repo = repo(files);
        let index = FileIndex::new(&repo);
        let from = RelativePath::new(from).unwrap();
        let language = Language::detect(&from);
        let mut out: Vec<String> = resolve(&index, layout, &from, language, imp)
            .into_iter()
            .map(|i| repo.files[i].path.to_string())
            .collect();
        out.sort();
        out
    }

    const JS_FILES: &[&str] = &[
        "apps/web/src/user/service.ts",
        "apps/web/src/user/model.ts",
        "apps/web/src/user/index.ts",
        "apps/web/src/lib/http.js",
        "apps/web/src/components/Button.tsx",
        "apps/web/tsconfig.json",
        "packages/ui/package.json",
        "packages/ui/src/index.ts",
        "packages/ui/src/button.tsx",
    ];

    fn js_layout() -> ProjectLayout {
        ProjectLayout {
            ts_configs: vec![TsConfig {
                directory: "apps/web".to_owned(),
                base_url: Some(".".to_owned()),
                paths: vec![("@/*".to_owned(), vec!["src/*".to_owned()])],
            }],
            js_packages: vec![JsPackage {
                name: "@acme/ui".to_owned(),
                directory: "packages/ui".to_owned(),
                entries: vec!["src/index.ts".to_owned()],
            }],
            ..ProjectLayout::default()
        }
    }

    #[test_case("./model", &["apps/web/src/user/model.ts"])]
    #[test_case("../user", &["apps/web/src/user/index.ts"])]
    #[test_case("../lib/http.js", &["apps/web/src/lib/http.js"])]
    #[test_case("@/components/Button", &["apps/web/src/components/Button.tsx"])]
    #[test_case("src/user/model", &["apps/web/src/user/model.ts"])]
    #[test_case("@acme/ui", &["packages/ui/src/index.ts"])]
    #[test_case("@acme/ui/button", &["packages/ui/src/button.tsx"])]
    #[test_case("react", &[])]
    #[test_case("../../../../outside", &[])]
    fn resolves_typescript(source: &str, expected: &[&str]) {
        let imp = import(source, &[], ImportKind::Import);
        assert_eq!(
            resolved(JS_FILES, &js_layout(), "apps/web/src/user/service.ts", &imp),
            expected
        );
    }

    #[test]
    fn js_specifier_written_with_js_extension_finds_the_ts_source() {
        let files = ["src/a.ts", "src/b.ts"];
        let imp = import("./b.js", &[], ImportKind::Import);
        assert_eq!(
            resolved(&files, &ProjectLayout::default(), "src/a.ts", &imp),
            ["src/b.ts"]
        );
    }

    const PY_FILES: &[&str] = &[
        "src/click/__init__.py",
        "src/click/core.py",
        "src/click/parser.py",
        "src/click/utils/__init__.py",
        "src/click/utils/text.py",
        "tests/test_core.py",
    ];

    #[test_case("src/click/core.py", ".parser", &[], &["src/click/parser.py"])]
    #[test_case("src/click/core.py", ".", &["parser", "nothing"], &["src/click/parser.py"])]
    #[test_case("src/click/utils/text.py", "..core", &[], &["src/click/core.py"])]
    #[test_case("tests/test_core.py", "click.core", &[], &["src/click/core.py"])]
    #[test_case("tests/test_core.py", "click", &["utils"], &["src/click/__init__.py", "src/click/utils/__init__.py"])]
    #[test_case("tests/test_core.py", "click.utils.text", &[], &["src/click/utils/text.py"])]
    #[test_case("tests/test_core.py", "os.path", &[], &[])]
    fn resolves_python(from: &str, source: &str, symbols: &[&str], expected: &[&str]) {
        let imp = import(source, symbols, ImportKind::Import);
        assert_eq!(
            resolved(PY_FILES, &ProjectLayout::default(), from, &imp),
            expected
        );
    }

    #[test]
    fn resolves_go_packages_through_the_module_path() {
        let files = [
            "go.mod",
            "cmd/app/main.go",
            "internal/store/db.go",
            "internal/store/cache.go",
            "internal/store/db_test.go",
        ];
        let layout = ProjectLayout {
            go_modules: vec![("example.com/app".to_owned(), String::new())],
            ..ProjectLayout::default()
        };
        let imp = import("example.com/app/internal/store", &[], ImportKind::Import);
        assert_eq!(
            resolved(&files, &layout, "cmd/app/main.go", &imp),
            ["internal/store/cache.go", "internal/store/db.go"]
        );
        let external = import("github.com/other/lib", &[], ImportKind::Import);
        assert!(resolved(&files, &layout, "cmd/app/main.go", &external).is_empty());
    }

    const RUST_FILES: &[&str] = &[
        "Cargo.toml",
        "src/lib.rs",
        "src/scan.rs",
        "src/runner.rs",
        "src/commands/mod.rs",
        "src/commands/compile.rs",
        "stages/Cargo.toml",
        "stages/src/lib.rs",
        "stages/src/guard.rs",
        "stages/src/guard/secret.rs",
    ];

    fn rust_layout() -> ProjectLayout {
        ProjectLayout {
            rust_crates: vec![
                RustCrate {
                    name: "aic".to_owned(),
                    directory: String::new(),
                },
                RustCrate {
                    name: "aic_stages".to_owned(),
                    directory: "stages".to_owned(),
                },
            ],
            ..ProjectLayout::default()
        }
    }

    #[test_case("src/lib.rs", "scan", &[], ImportKind::ModuleDeclaration, &["src/scan.rs"])]
    #[test_case("src/commands/mod.rs", "compile", &[], ImportKind::ModuleDeclaration, &["src/commands/compile.rs"])]
    #[test_case("stages/src/guard.rs", "secret", &[], ImportKind::ModuleDeclaration, &["stages/src/guard/secret.rs"])]
    #[test_case("src/runner.rs", "crate::scan", &["scan", "ScanOptions"], ImportKind::Import, &["src/scan.rs"])]
    #[test_case("src/commands/compile.rs", "super::super::runner", &["compile"], ImportKind::Import, &["src/runner.rs"])]
    #[test_case("src/commands/compile.rs", "crate", &["commands"], ImportKind::Import, &["src/commands/mod.rs"])]
    #[test_case("src/runner.rs", "aic_stages::guard", &["ContextGuard"], ImportKind::Import, &["stages/src/guard.rs"])]
    #[test_case("src/runner.rs", "std::path", &["Path"], ImportKind::Import, &[])]
    fn resolves_rust(
        from: &str,
        source: &str,
        symbols: &[&str],
        kind: ImportKind,
        expected: &[&str],
    ) {
        let imp = import(source, symbols, kind);
        assert_eq!(resolved(RUST_FILES, &rust_layout(), from, &imp), expected);
    }

    #[test]
    fn resolves_java_classes_and_wildcards() {
        let files = [
            "src/main/java/com/acme/App.java",
            "src/main/java/com/acme/model/User.java",
            "src/main/java/com/acme/model/Role.java",
        ];
        let layout = ProjectLayout::default();
        let from = "src/main/java/com/acme/App.java";
        let single = import("com.acme.model.User", &[], ImportKind::Import);
        assert_eq!(
            resolved(&files, &layout, from, &single),
            ["src/main/java/com/acme/model/User.java"]
        );
        let wildcard = import("com.acme.model.*", &[], ImportKind::Import);
        assert_eq!(resolved(&files, &layout, from, &wildcard).len(), 2);
        let external = import("java.util.List", &[], ImportKind::Import);
        assert!(resolved(&files, &layout, from, &external).is_empty());
    }
}
