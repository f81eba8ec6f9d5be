//! `aic` on real source trees present on every machine: the unpacked sources of
//! this workspace's own dependencies.

use crate::support::{aic, dependency_source, prompt_files};

fn top_files(crate_name: &str, intent: &str) -> Vec<String> {
    let source = dependency_source(crate_name);
    let run = aic(
        &[
            "inspect",
            intent,
            "--root",
            source.to_str().unwrap(),
            "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    prompt_files(&run.json())
}

#[test]
fn gitignore_intent_selects_the_gitignore_matcher() {
    let files = top_files("ignore", "how are gitignore files parsed");
    assert_eq!(
        files.first().map(String::as_str),
        Some("src/gitignore.rs"),
        "{files:?}"
    );
}

#[test]
fn glob_intent_selects_the_glob_module() {
    let files = top_files("globset", "fix glob compilation");
    assert!(
        files.iter().take(3).any(|f| f == "src/glob.rs"),
        "{files:?}"
    );
}

#[test]
fn whole_word_matching_on_a_real_tree() {
    // "fix" must never select a file for containing "prefix" or "fixture".
    let files = top_files("regex-syntax", "fix unicode class parsing");
    assert!(!files.is_empty());
    for file in &files {
        assert!(
            !file.contains("prefix")
                || file.contains("unicode")
                || file.contains("class")
                || file.contains("pars"),
            "{file}"
        );
    }
}

#[test]
fn compile_json_stays_within_budget_on_a_real_tree() {
    let source = dependency_source("serde_json");
    let run = aic(
        &[
            "compile",
            "number parsing precision",
            "--root",
            source.to_str().unwrap(),
            "--json",
            "--budget",
            "3000",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    let tokens = json["meta"]["tokensCompiled"].as_u64().unwrap();
    assert!(tokens <= 3000, "{tokens}");
    assert!(json["meta"]["filesSelected"].as_u64().unwrap() >= 1);
}

/// Runs `check` on every UTF-8 file of `files`, in parallel. `check` gives
/// `None` for a file it leaves out, else the number of items it found and a
/// difference from the reference, if any. Fails unless more than 2,000 files
/// and more than `min_items` items were compared and no file differs.
fn agree_on_files(
    files: &[std::path::PathBuf],
    what: &str,
    min_items: usize,
    check: impl Fn(&str) -> Option<(usize, Option<String>)> + Sync,
) {
    agree_on_paths(files, what, 2_000, min_items, |_, text| check(text));
}

/// [`agree_on_files`] with the file's path passed to `check` and at least
/// `min_files` files compared.
fn agree_on_paths(
    files: &[std::path::PathBuf],
    what: &str,
    min_files: usize,
    min_items: usize,
    check: impl Fn(&std::path::Path, &str) -> Option<(usize, Option<String>)> + Sync,
) {
    use rayon::prelude::*;

    let (compared, items, mut differences) = files
        .par_iter()
        .filter_map(|path| {
            let text = String::from_utf8(fs_err::read(path).ok()?).ok()?;
            let (items, difference) = check(path, &text)?;
            let difference = difference.map(|d| format!("{}: {d}", path.display()));
            Some((1_usize, items, difference.into_iter().collect::<Vec<_>>()))
        })
        .reduce(
            || (0, 0, Vec::new()),
            |a, b| (a.0 + b.0, a.1 + b.1, [a.2, b.2].concat()),
        );
    differences.sort();
    #[expect(
        clippy::print_stderr,
        reason = "with `--nocapture`, says how much a corpus given by a variable added"
    )]
    {
        eprintln!("compared {compared} files, {items} {what}");
    }
    assert!(
        compared > min_files && items > min_items,
        "too small a corpus: {compared} files, {items} {what}"
    );
    assert!(
        differences.is_empty(),
        "{} of {compared} files differ, the first ones:\n{}",
        differences.len(),
        differences
            .iter()
            .take(20)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Every file of the dependency sources, and of `extra` when given, whose
/// extension is `extension` (any file when `None`).
fn source_files(
    extra: Option<std::path::PathBuf>,
    extension: Option<&str>,
) -> Vec<std::path::PathBuf> {
    crate::support::dependency_sources()
        .into_iter()
        .chain(extra)
        .filter(|directory| directory.is_dir())
        .flat_map(|directory| crate::support::files_under(&directory))
        .filter(|path| extension.is_none_or(|wanted| path.extension().is_some_and(|e| e == wanted)))
        .collect()
}

/// The definition scanner reads lines by hand; the regex it replaced is the
/// reference. Both must find the same (keyword, name) pairs in the same order
/// on every text file of the dependency sources, and on lines made to probe
/// the edges (scoped `pub`, generators, keywords glued to what follows).
#[test]
fn definition_scanner_agrees_with_its_reference_regex() {
    let reference = regex::Regex::new(
        r"(?m)^[ \t]*(?:(?:pub(?:\([^)\n]*\))?|export|default|public|private|protected|internal|static|abstract|final|async|unsafe|extern|sealed|open|override|virtual|partial|declare|const)[ \t]+)*(fn|struct|enum|trait|union|mod|macro_rules!|class|interface|type|def|function\*?|func|module|record|object|protocol|extension|impl)[ \t]+([A-Za-z_$][A-Za-z0-9_$]*)",
    )
    .unwrap();
    let check = |text: &str| -> Option<(usize, Option<String>)> {
        let expected: Vec<(&str, &str)> = reference
            .captures_iter(text)
            .map(|captures| {
                (
                    captures.get(1).unwrap().as_str(),
                    captures.get(2).unwrap().as_str(),
                )
            })
            .collect();
        let found: Vec<(&str, &str)> = aic_stages::select::symbols::definitions(text).collect();
        Some((
            found.len(),
            (found != expected).then(|| format!("{found:?} vs {expected:?}")),
        ))
    };
    let probes = [
        "pub(crate) fn a() {}\npub(in crate::x) struct B;\npub(crate)fn c\npub( fn d\n",
        "function* gen() {}\nfunction *gen2() {}\nfunction** g\nfunctional x\nfunc f()\n",
        "export default class extends Base {}\nexport = foo\nexport\n\t  type   T = 1\n",
        "type type X\nfn café()\nfn $x\nfn 1x\nmacro_rules! m {}\nmacro_rules !n\n",
        "  \t\n\nstatic\tasync\tdef  f\r\nfn g\r\nclass\n class C\n\u{a0}class D\n",
        "pub(crate) pub(super) const fn e\npub (crate) fn f\nimpl X for Y\nimpl<T> Z\n",
    ];
    for probe in probes {
        assert_eq!(check(probe).and_then(|(_, d)| d), None, "on {probe:?}");
    }
    agree_on_files(&source_files(None, None), "definitions", 10_000, check);
}

/// Rust imports are read from the tokens, without a parse; the imports query
/// over a tree-sitter parse is the reference. On every Rust file of the
/// dependency sources that parses without a syntax error both must give the
/// same imports in the same order, and on lines made to probe the edges.
#[test]
fn rust_imports_from_tokens_agree_with_the_query() {
    // A file that does not parse cleanly has no reference: left out.
    let check = |text: &str| -> Option<(usize, Option<String>)> {
        let expected = aic_stages::lang::rust_imports_by_query(text)?;
        let found = aic_stages::lang::rust_imports(text);
        let difference =
            (found != expected).then(|| format!("{found:?}\nvs the query's\n{expected:?}"));
        Some((found.len(), difference))
    };
    let probes = [
        "use a::b::{C, d::E, self, f::*};\npub use crate::x as y;\npub(crate) use super::z;\n",
        "#[cfg(test)]\nmod tests {\n    use super::*;\n    mod inner { use skipped; }\n    fn f() { use also_skipped; }\n}\n",
        "extern crate alloc;\nextern crate self as me;\npub extern crate core as c;\nmod a;\npub mod b;\nmod c { mod d; }\n",
        "fn f() { let s = \"use not::this;\"; let c = '\"'; let r = r#\"use \"no\"\"#; }\n// use no::comment;\n/* use /* nested */ no; */\nuse ::std::fmt;\nuse ::{one, two};\n",
        "macro_rules! m { () => { use inside::macro_; }; }\nfn g<'a>(x: &'a str) -> &'a str { 'outer: loop { break 'outer x; } }\nuse after::lifetimes;\n",
        "use a::{\n    // a comment\n    b,\n    c::{d as _, e},\n};\nuse z::{};\nuse q::r::{self as s};\n",
        "fn f<'a>(x: &'a [u8]) -> impl Iterator<Item = &'a u8> + use<'a> { x.iter() }\nuse std::fmt;\nmod later;\n",
        "mod tests {\n    fn f<T>(x: T) -> impl Sized + use<T> { x }\n    use super::*;\n}\n",
        "#!/usr/bin/env run \"it\nuse a::b;\n",
    ];
    for probe in probes {
        // Every probe parses cleanly, so each is compared.
        assert_eq!(check(probe).map(|(_, d)| d), Some(None), "on {probe:?}");
    }
    // `AIC_EXTRA_RUST_CORPUS=DIR` adds the Rust files of another tree (a
    // checkout of a Rust repository) to the comparison.
    let extra = std::env::var_os("AIC_EXTRA_RUST_CORPUS").map(std::path::PathBuf::from);
    agree_on_files(&source_files(extra, Some("rs")), "imports", 20_000, check);
}

/// TypeScript and JavaScript imports are read from the tokens, without a
/// parse; the imports query over a tree-sitter parse is the reference. On
/// every such file of the dependency sources that parses without a syntax
/// error both must give the same imports in the same order, and on lines
/// made to probe the edges. The dependency sources hold few such files:
/// `AIC_EXTRA_SCRIPT_CORPUS=DIR` adds those of a checkout (babel's 20,000
/// and vite's 2,000 agree).
#[test]
fn script_imports_from_tokens_agree_with_the_query() {
    use aic_stages::relative_path::RelativePath;

    let check = |path: &std::path::Path, text: &str| -> Option<(usize, Option<String>)> {
        let name = path.file_name()?.to_str()?;
        let path = RelativePath::new(name)?;
        let expected = aic_stages::lang::script_imports_by_query(&path, text)?;
        let found = aic_stages::lang::script_imports(&path, text)?;
        let difference =
            (found != expected).then(|| format!("{found:?}\nvs the query's\n{expected:?}"));
        Some((found.len(), difference))
    };
    let probes = [
        (
            "a.js",
            "import a from './a';\nimport b, { c, d as e } from \"./b\";\nimport * as f from 'f';\nimport 'side';\nimport g, * as h from 'g';\n",
        ),
        (
            "b.js",
            "export * from './x';\nexport * as n from './y';\nexport { p, q as r } from 'z';\nexport { s };\nexport const t = 1;\nexport default u;\n",
        ),
        (
            "c.js",
            "const { a, b: c, d = 1, ...e } = require('./a');\nconst f = require('f').g;\nlet { h } = require(\"h\")\nvar x = require(`t`), y = require('a' + b);\nrequire('./side', 1);\nnew require('no');\nobj.require('no');\n",
        ),
        (
            "d.js",
            "const s = 'import x from \"no\"';\n// import y from 'no';\n/* require('no') */\nconst r = /import z from 'no'/g;\nconst t = `${require('./in-template')} import q from 'no'`;\nconst m = import.meta.url;\nconst n = await import('./lazy');\nconst o = a / 2 / require('./div');\n",
        ),
        (
            "e.ts",
            "import type { A, B as C } from './types';\nimport type D from 'd';\nimport { type E, F } from './ef';\n",
        ),
        ("e2.ts", "import G = require('g');\nimport H = I.J;\n"),
        ("e3.ts", "export type { K } from './k';\n"),
        ("e5.ts", "import type from './named-type';\n"),
        (
            "f.tsx",
            "import React from 'react';\nexport function App() { return <div title=\"import x from 'no'\">{require('./icon')}</div>; }\n",
        ),
        (
            "cond.js",
            "if (ok) /`/.test(s);\nwhile (f(x)) /a/g.exec(s);\nconst n = (a) / 2;\nconst after = require('./after');\n",
        ),
        (
            "multi.js",
            "const path = require('path'),\n  { promisify } = require('util');\nf(a, { b } = require('./not-declared'));\n",
        ),
        (
            "rn.jsx",
            "export const Logo = () => <View><Text>Logo</Text><Image source={require('./logo.png')} /></View>;\n",
        ),
        (
            "rn2.jsx",
            "export const Icon = ({ ok }) => (ok ? <Spinner size={20} /> : <Image source={require('./ok.png')} />);\n",
        ),
        (
            "prop.js",
            "function rate(bytes) {\n  return `${(bytes.in / 1024).toFixed(1)} kB/s`;\n}\nx = a.new\nrequire('./asi')\nexport const load = () => import('./chart');\n",
        ),
        (
            "nonnull.ts",
            "function half(size?: number) {\n  return `${size! / 2}px` + (i++ / 2);\n}\nconst ok = !/x/.test(s);\nexport const load = () => import('./lazy');\n",
        ),
        (
            "as.ts",
            "const { readFile } = require('fs') as typeof import('fs');\nconst { b } = require('./b') satisfies object;\n",
        ),
        (
            "optcall.js",
            "const m = require?.('./m');\nconst { n } = require?.('./n');\n",
        ),
        (
            "ends.js",
            "// header\rconst a = require('./cr');\r// note\u{2028}const b = require('./ls');\n\u{200B}import c from './zwsp';\n",
        ),
        (
            "g.js",
            "#!/usr/bin/env node\nimport a from './a\\u0062c';\nimport {} from './empty';\nimport { default as z, \"str\" as w } from './named';\nif (x) { import('./nested').then(f); }\nconst k = { import: 1, require: 2 };\n",
        ),
    ];
    for (name, probe) in probes {
        let path = std::path::Path::new(name);
        // Every probe parses cleanly, so each is compared.
        assert_eq!(
            check(path, probe).map(|(_, d)| d),
            Some(None),
            "on {name}: {probe:?}"
        );
    }
    let extra = std::env::var_os("AIC_EXTRA_SCRIPT_CORPUS").map(std::path::PathBuf::from);
    let files: Vec<_> = source_files(extra, None)
        .into_iter()
        .filter(|path| {
            path.extension().is_some_and(|e| {
                ["js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx"]
                    .iter()
                    .any(|x| e == *x)
            })
        })
        .collect();
    agree_on_paths(&files, "imports", 10, 10, check);
}
