//! Behaviour of the specification compiler: tiers, the demotion order, imports, the pre-passes,
//! and property tests over random specifications for the budget and determinism rules.

use std::fmt::Write as _;

use super::*;
use crate::config::AicConfig;
use crate::test_rng::Rng;

fn compiler() -> SpecificationCompiler {
    SpecificationCompiler::new(&AicConfig::default().content_transformers)
}

fn count(text: &str) -> TokenCount {
    TokenCounter::cl100k().count(text)
}

fn ty(name: &str, path: &str, usage: SpecTypeUsage, content: &str) -> SpecTypeRef {
    SpecTypeRef {
        name: name.to_owned(),
        path: RelativePath::new(path).unwrap(),
        content: content.to_owned(),
        usage,
        estimated_tokens: None,
    }
}

fn code(label: &str, content: &str) -> SpecCodeBlock {
    SpecCodeBlock {
        label: label.to_owned(),
        content: content.to_owned(),
        estimated_tokens: None,
    }
}

fn prose(label: &str, content: &str) -> SpecProseBlock {
    SpecProseBlock {
        label: label.to_owned(),
        content: content.to_owned(),
        estimated_tokens: None,
    }
}

/// A Rust struct with `fields` documented fields and `methods` methods, so its size is
/// controlled.
fn rust_struct(name: &str, fields: usize, methods: usize) -> String {
    let mut out = format!(
        "use std::collections::BTreeMap;\nuse crate::fit::tokens::TokenCount;\n\n/// The {name} of the test.\npub struct {name} {{\n"
    );
    for f in 0..fields {
        let _ = write!(
            out,
            "    /// Field number {f} of {name}.\n    pub field_{f}: BTreeMap<String, TokenCount>,\n"
        );
    }
    let _ = write!(out, "}}\n\nimpl {name} {{\n");
    for m in 0..methods {
        let _ = write!(
            out,
            "    /// Method {m}.\n    pub fn method_{m}(&self, input: &str) -> usize {{\n        input.len() + {m}\n    }}\n"
        );
    }
    out.push_str("}\n");
    out
}

fn tiers(result: &SpecCompilationResult) -> Vec<(&str, SpecInclusionTier)> {
    result
        .meta
        .type_tiers
        .iter()
        .map(|(name, tier)| (name.as_str(), *tier))
        .collect()
}

#[test]
fn everything_at_its_usage_tier_when_it_fits() {
    let input = SpecificationInput {
        types: vec![
            ty(
                "Alpha",
                "src/alpha.rs",
                SpecTypeUsage::Implements,
                &rust_struct("Alpha", 2, 2),
            ),
            ty(
                "Beta",
                "src/beta.rs",
                SpecTypeUsage::PassesThrough,
                &rust_struct("Beta", 2, 2),
            ),
            ty(
                "Gamma",
                "src/gamma.rs",
                SpecTypeUsage::NamesOnly,
                &rust_struct("Gamma", 1, 0),
            ),
        ],
        code_blocks: vec![code("Example", "```rust\nlet a = Alpha::default();\n```")],
        prose: vec![prose("Task", "Implement   the thing.\n\n\n\nCarefully.")],
    };
    let result = compiler().compile(&input, TokenCount(100_000));
    assert_eq!(
        tiers(&result),
        [
            ("Alpha", SpecInclusionTier::Verbatim),
            ("Beta", SpecInclusionTier::SignaturePath),
            ("Gamma", SpecInclusionTier::PathOnly),
        ]
    );
    let spec = &result.compiled_spec;
    let order = [
        "## Imports of the verbatim types\n```rust\nuse std::collections::BTreeMap;\nuse crate::fit::tokens::TokenCount;\n```",
        "## Alpha — src/alpha.rs — implements, verbatim\n```rust\n/// The Alpha of the test.\npub struct Alpha {",
        "## Beta — src/beta.rs — passes-through, signature-path\nThe Beta of the test. 2 methods.\n```rust\npub struct Beta {",
        "## Path-only types\n- Gamma — src/gamma.rs — names-only",
        "## Example\n```rust\nlet a = Alpha::default();\n```",
        "## Task\nImplement   the thing.\n\nCarefully.",
    ];
    let mut at = 0;
    for part in order {
        let found = spec[at..]
            .find(part)
            .unwrap_or_else(|| panic!("missing or out of order: {part:?}\n{spec}"));
        at += found + part.len();
    }
    assert!(spec.ends_with("Carefully.\n"), "{spec}");
    assert!(
        !spec.contains("fn method_0(&self, input: &str) -> usize;"),
        "{spec}"
    );
    assert!(
        spec.contains("    pub fn method_0(&self, input: &str) -> usize\n"),
        "{spec}"
    );
    assert_eq!(result.meta.total_tokens_compiled, count(spec));
    assert!(!result.meta.truncated);
    assert!(result.meta.dropped_code_blocks.is_empty());
}

#[test]
fn verbatim_types_are_demoted_constructs_first_then_larger_then_path() {
    let input = SpecificationInput {
        types: vec![
            ty(
                "Impl",
                "a/impl.rs",
                SpecTypeUsage::Implements,
                &rust_struct("Impl", 3, 3),
            ),
            ty(
                "Calls",
                "a/calls.rs",
                SpecTypeUsage::CallsMethods,
                &rust_struct("Calls", 3, 3),
            ),
            ty(
                "SmallNew",
                "a/small.rs",
                SpecTypeUsage::Constructs,
                &rust_struct("SmallNew", 1, 1),
            ),
            ty(
                "BigNew",
                "z/big.rs",
                SpecTypeUsage::Constructs,
                &rust_struct("BigNew", 6, 6),
            ),
            ty(
                "TwinB",
                "b/twin.rs",
                SpecTypeUsage::Constructs,
                &rust_struct("TwinA", 2, 2),
            ),
            ty(
                "TwinA",
                "a/twin.rs",
                SpecTypeUsage::Constructs,
                &rust_struct("TwinA", 2, 2),
            ),
        ],
        ..SpecificationInput::default()
    };
    let compiler = compiler();
    let full = compiler.compile(&input, TokenCount(100_000));
    // Budgets just under the previous state force one more demotion each time.
    let mut demoted = Vec::new();
    let mut budget = full.meta.total_tokens_compiled.0;
    loop {
        let result = compiler.compile(&input, TokenCount(budget - 1));
        let now: Vec<&str> = result
            .meta
            .type_tiers
            .iter()
            .filter(|(_, tier)| **tier != SpecInclusionTier::Verbatim)
            .map(|(name, _)| name.as_str())
            .collect();
        for name in now {
            if !demoted.contains(&name.to_owned()) {
                demoted.push(name.to_owned());
            }
        }
        if demoted.len() == 6 || result.meta.total_tokens_compiled.0 >= budget {
            break;
        }
        budget = result.meta.total_tokens_compiled.0;
    }
    assert_eq!(
        demoted,
        ["BigNew", "TwinA", "TwinB", "SmallNew", "Calls", "Impl"]
    );
}

#[test]
fn signature_path_rows_go_after_every_verbatim_one_then_code_then_prose() {
    use SpecInclusionTier::{PathOnly, SignaturePath};

    let input = SpecificationInput {
        types: vec![
            ty(
                "Impl",
                "src/impl.rs",
                SpecTypeUsage::Implements,
                &rust_struct("Impl", 2, 2),
            ),
            ty(
                "Pass",
                "src/pass.rs",
                SpecTypeUsage::PassesThrough,
                &rust_struct("Pass", 4, 4),
            ),
        ],
        code_blocks: vec![
            code("Small", "let x = 1;"),
            code("Large", &"let y = vec![1, 2, 3];\n".repeat(20)),
        ],
        prose: vec![
            prose("Long", &"Some words of prose here. ".repeat(30)),
            prose("Short", "Do it."),
        ],
    };
    let compiler = compiler();
    let mut budget = compiler
        .compile(&input, TokenCount(100_000))
        .meta
        .total_tokens_compiled
        .0;
    let mut states = Vec::new();
    while budget > 0 {
        let result = compiler.compile(&input, TokenCount(budget - 1));
        states.push((
            result.meta.type_tiers["Impl"],
            result.meta.type_tiers["Pass"],
            result.meta.dropped_code_blocks.clone(),
            result.meta.dropped_prose.clone(),
        ));
        if result.meta.truncated {
            break;
        }
        budget = result.meta.total_tokens_compiled.0;
    }
    let mut seen = Vec::new();
    for (a, b, code, prose) in &states {
        let key = (*a, *b, code.len(), prose.len());
        if seen.last() != Some(&key) {
            seen.push(key);
        }
    }
    assert_eq!(
        seen,
        [
            (SignaturePath, SignaturePath, 0, 0),
            (SignaturePath, PathOnly, 0, 0),
            (PathOnly, PathOnly, 0, 0),
            (PathOnly, PathOnly, 1, 0),
            (PathOnly, PathOnly, 2, 0),
            (PathOnly, PathOnly, 2, 1),
            (PathOnly, PathOnly, 2, 2),
        ],
        "{states:?}"
    );
    let last = &states[states.len() - 2];
    assert_eq!(last.2, ["Small", "Large"], "dropped in input order");
    let dropped_first = &states.iter().find(|s| s.2.len() == 1).unwrap().2;
    assert_eq!(dropped_first, &["Large"]);
    let prose_first = &states.iter().find(|s| s.3.len() == 1).unwrap().3;
    assert_eq!(prose_first, &["Long"]);
}

#[test]
fn below_the_minimum_the_banner_is_appended() {
    let input = SpecificationInput {
        types: vec![ty(
            "A",
            "src/a.rs",
            SpecTypeUsage::Implements,
            &rust_struct("A", 2, 2),
        )],
        prose: vec![prose("Task", "Do it.")],
        ..SpecificationInput::default()
    };
    let compiler = compiler();
    let minimum = compiler.compile(&input, TokenCount(0)).meta.minimum_tokens;
    let at_minimum = compiler.compile(&input, minimum);
    assert!(!at_minimum.meta.truncated);
    assert_eq!(at_minimum.meta.total_tokens_compiled, minimum);
    assert_eq!(
        at_minimum.compiled_spec,
        "## Path-only types\n- A — src/a.rs — implements\n"
    );
    for budget in [0, minimum.0 - 1] {
        let result = compiler.compile(&input, TokenCount(budget));
        assert!(result.meta.truncated);
        assert_eq!(
            result.compiled_spec,
            format!("{}\n{TRUNCATION_BANNER}\n", at_minimum.compiled_spec)
        );
        assert_eq!(result.meta.dropped_prose, ["Task"]);
        assert_eq!(
            result.meta.total_tokens_compiled,
            count(&result.compiled_spec)
        );
    }
}

#[test]
fn imports_are_merged_once_and_leave_with_their_type() {
    let shared = "use std::fmt;\nuse serde::Serialize;\n";
    let input = SpecificationInput {
        types: vec![
            ty(
                "A",
                "src/a.rs",
                SpecTypeUsage::Implements,
                &format!("{shared}pub struct A;\n"),
            ),
            ty(
                "B",
                "src/b.rs",
                SpecTypeUsage::Constructs,
                &format!("{shared}use crate::b::Only;\npub struct B(Only);\n"),
            ),
            ty(
                "C",
                "web/c.ts",
                SpecTypeUsage::CallsMethods,
                "import { x } from \"./x\";\nexport interface C { run(): void; }\n",
            ),
        ],
        ..SpecificationInput::default()
    };
    let compiler = compiler();
    let full = compiler.compile(&input, TokenCount(10_000));
    assert!(
        full.compiled_spec.starts_with("## Imports of the verbatim types\n```rust\nuse std::fmt;\nuse serde::Serialize;\nuse crate::b::Only;\n```\n```typescript\nimport { x } from \"./x\";\n```\n\n"),
        "{}",
        full.compiled_spec
    );
    assert_eq!(full.compiled_spec.matches("use std::fmt;").count(), 1);
    // Demoting B (constructs) takes its own import out of the merged section.
    let budget = TokenCount(full.meta.total_tokens_compiled.0 - 1);
    let smaller = compiler.compile(&input, budget);
    assert_eq!(
        smaller.meta.type_tiers["B"],
        SpecInclusionTier::SignaturePath
    );
    assert!(
        !smaller.compiled_spec.contains("use crate::b::Only;"),
        "{}",
        smaller.compiled_spec
    );
    assert!(smaller.compiled_spec.contains("use std::fmt;"));
}

#[test]
fn one_verbatim_type_larger_than_the_budget_is_shrunk_by_the_ladder() {
    let big = rust_struct("Huge", 40, 40);
    let input = SpecificationInput {
        types: vec![ty("Huge", "src/huge.rs", SpecTypeUsage::Implements, &big)],
        ..SpecificationInput::default()
    };
    let compiler = compiler();
    let full = compiler.compile(&input, TokenCount(100_000));
    let budget = TokenCount(full.meta.total_tokens_compiled.0 * 3 / 4);
    let result = compiler.compile(&input, budget);
    assert_eq!(result.meta.type_tiers["Huge"], SpecInclusionTier::Verbatim);
    assert!(
        result
            .compiled_spec
            .contains("implements, verbatim (signatures with docs, to fit the budget)"),
        "{}",
        result.compiled_spec
    );
    assert!(result.meta.total_tokens_compiled <= budget);
}

#[test]
fn code_blocks_take_their_language_from_the_fence_or_the_label() {
    let input = SpecificationInput {
        code_blocks: vec![
            code("Fenced", "```python\ndef f():\n    pass\n```"),
            code("settings.json", "{\n  \"a\":   1\n}"),
            code("Plain", "whatever"),
        ],
        ..SpecificationInput::default()
    };
    let result = compiler().compile(&input, TokenCount(10_000));
    let spec = &result.compiled_spec;
    assert!(
        spec.contains("## Fenced\n```python\ndef f():\n    pass\n```"),
        "{spec}"
    );
    assert!(
        spec.contains("## settings.json\n```json\n{\"a\": 1}\n```"),
        "{spec}"
    );
    assert!(spec.contains("## Plain\n```\nwhatever\n```"), "{spec}");
    assert!(result.meta.transform_tokens_saved > TokenCount::ZERO);
}

#[test]
fn meta_counts_raw_tokens_and_reduction() {
    let content = rust_struct("A", 5, 5);
    let input = SpecificationInput {
        types: vec![ty("A", "src/a.rs", SpecTypeUsage::NamesOnly, &content)],
        ..SpecificationInput::default()
    };
    let result = compiler().compile(&input, DEFAULT_SPEC_BUDGET);
    assert_eq!(result.meta.total_tokens_raw, count(&content));
    assert!(
        result.meta.reduction_pct > 0.8,
        "{}",
        result.meta.reduction_pct
    );
    assert_eq!(result.meta.budget, DEFAULT_SPEC_BUDGET);
    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(json["meta"]["typeTiers"]["A"], "path-only");
    assert!(json["compiledSpec"].is_string());
    let back: SpecCompilationResult = serde_json::from_value(json).unwrap();
    assert_eq!(back, result);
}

const WORDS: [&str; 16] = [
    "budget", "token", "ladder", "file", "path", "store", "cache", "tier", "prompt", "guard",
    "signal", "score", "query", "chunk", "render", "import",
];

fn words(rng: &mut Rng, n: usize) -> String {
    (0..n)
        .map(|_| rng.pick(&WORDS))
        .collect::<Vec<_>>()
        .join(" ")
}

fn camel(rng: &mut Rng) -> String {
    (0..2)
        .map(|_| {
            let w = rng.pick(&WORDS);
            w[..1].to_ascii_uppercase() + &w[1..]
        })
        .collect()
}

/// A random type source in one of four shapes and languages, with random leading imports from
/// a small shared pool.
fn random_type(rng: &mut Rng, name: &str) -> (String, String) {
    let members = rng.below(8);
    match rng.below(4) {
        0 => {
            let mut out = String::new();
            for _ in 0..rng.below(3) {
                out.push_str(rng.pick(&[
                    "use std::fmt;\n",
                    "use crate::a::{\n    B,\n    C,\n};\n",
                    "use serde::Serialize;\n",
                ]));
            }
            let _ = write!(out, "/// {}.\npub trait {name} {{\n", words(rng, 6));
            for m in 0..members {
                let _ = write!(
                    out,
                    "    /// {}.\n    fn {}_{m}(&self) -> u32;\n",
                    words(rng, 4),
                    rng.pick(&WORDS)
                );
            }
            out.push_str("}\n");
            (format!("src/{}.rs", name.to_ascii_lowercase()), out)
        }
        1 => {
            let mut out = String::new();
            for _ in 0..rng.below(3) {
                out.push_str(rng.pick(&[
                    "import { A } from \"./a\";\n",
                    "import type {\n  B,\n} from \"./b\";\n",
                ]));
            }
            let _ = write!(out, "/** {} */\nexport class {name} {{\n", words(rng, 5));
            for m in 0..members {
                let _ = write!(
                    out,
                    "  {}{m}(x: number): number {{\n    return x + {m};\n  }}\n",
                    rng.pick(&WORDS)
                );
            }
            if rng.below(2) == 0 {
                let _ = writeln!(
                    out,
                    "  static create{name}(): {name} {{ return new {name}(); }}"
                );
            }
            out.push_str("}\n");
            (format!("web/{}.ts", name.to_ascii_lowercase()), out)
        }
        2 => {
            let mut out = String::from("import os\n");
            let _ = write!(out, "class {name}:\n    \"\"\"{}.\"\"\"\n", words(rng, 5));
            for m in 0..members.max(1) {
                let _ = write!(
                    out,
                    "    def {}_{m}(self):\n        return {m}\n",
                    rng.pick(&WORDS)
                );
            }
            (format!("py/{}.py", name.to_ascii_lowercase()), out)
        }
        _ => {
            let content = if rng.below(5) == 0 {
                String::new()
            } else {
                words(rng, 3 + members * 4)
            };
            (format!("docs/{}.txt", name.to_ascii_lowercase()), content)
        }
    }
}

fn random_spec(rng: &mut Rng) -> SpecificationInput {
    let mut types = Vec::new();
    let mut names = Vec::new();
    for _ in 0..rng.below(7) {
        let name = camel(rng);
        if names.contains(&name) {
            continue;
        }
        names.push(name.clone());
        let (path, content) = random_type(rng, &name);
        let usage = SpecTypeUsage::ALL[rng.below(5)];
        types.push(ty(&name, &path, usage, &content));
    }
    let code_blocks = (0..rng.below(3))
        .map(|i| {
            let mut body = String::new();
            for j in 0..=rng.below(6) {
                let _ = writeln!(body, "fn {}_{j}() -> u32 {{ {j} }}", rng.pick(&WORDS));
            }
            let body = if rng.below(2) == 0 {
                format!("```rust\n{body}```")
            } else {
                body
            };
            code(&format!("Code {i}"), &body)
        })
        .collect();
    let notes = (0..rng.below(3))
        .map(|i| {
            let n = 3 + rng.below(40);
            prose(&format!("Note {i}"), &words(rng, n))
        })
        .collect();
    let mut spec = SpecificationInput {
        types,
        code_blocks,
        prose: notes,
    };
    if spec.types.is_empty() && spec.code_blocks.is_empty() && spec.prose.is_empty() {
        spec.prose.push(prose("Task", "Do the thing."));
    }
    spec
}

/// Cases per property test; `AIC_SPEC_PROPERTY_CASES` overrides.
fn cases() -> u64 {
    std::env::var("AIC_SPEC_PROPERTY_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(250)
}

#[test]
fn every_budget_from_the_minimum_up_is_met_and_below_it_the_banner_shows() {
    let compiler = compiler();
    for seed in 1..=cases() {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let input = random_spec(&mut rng);
        let raw = compiler.compile(&input, TokenCount(u32::MAX));
        let minimum = raw.meta.minimum_tokens.0;
        let ceiling = raw
            .meta
            .total_tokens_raw
            .0
            .max(raw.meta.total_tokens_compiled.0);
        let mut budgets = vec![minimum, ceiling, minimum.saturating_sub(1), 0];
        for _ in 0..3 {
            let span = u64::from(ceiling.saturating_sub(minimum)) + 1;
            budgets.push(minimum + (rng.next() % span) as u32);
        }
        for budget in budgets {
            let result = compiler.compile(&input, TokenCount(budget));
            let tokens = count(&result.compiled_spec);
            assert_eq!(tokens, result.meta.total_tokens_compiled, "seed {seed}");
            assert_eq!(result.meta.minimum_tokens.0, minimum, "seed {seed}");
            if budget >= minimum {
                assert!(
                    tokens.0 <= budget,
                    "seed {seed}: {tokens:?} > {budget}\n{}",
                    result.compiled_spec
                );
                assert!(!result.meta.truncated, "seed {seed}");
                assert!(
                    !result.compiled_spec.contains(TRUNCATION_BANNER),
                    "seed {seed}"
                );
            } else {
                assert!(result.meta.truncated, "seed {seed} budget {budget}");
                assert!(
                    result
                        .compiled_spec
                        .ends_with(&format!("{TRUNCATION_BANNER}\n")),
                    "seed {seed}"
                );
            }
            let exact = compiler.compile_with(&input, TokenCount(budget), true);
            assert_eq!(
                result, exact,
                "seed {seed} budget {budget}: the estimate changed the outcome"
            );
        }
    }
}

#[test]
fn shuffled_types_give_the_same_spec_and_tiers() {
    let compiler = compiler();
    for seed in 1..=cases() {
        let mut rng = Rng(seed.wrapping_mul(0xbf58_476d_1ce4_e5b9) | 1);
        let input = random_spec(&mut rng);
        let full = compiler.compile(&input, TokenCount(u32::MAX));
        let span = u64::from(full.meta.total_tokens_compiled.0) + 1;
        let budget = TokenCount((rng.next() % span) as u32);
        let first = compiler.compile(&input, budget);
        let mut shuffled = input.clone();
        rng.shuffle(&mut shuffled.types);
        let second = compiler.compile(&shuffled, budget);
        assert_eq!(first.compiled_spec, second.compiled_spec, "seed {seed}");
        assert_eq!(first.meta.type_tiers, second.meta.type_tiers, "seed {seed}");
        assert_eq!(first, second, "seed {seed}");
        assert_eq!(
            first,
            compiler.compile(&input, budget),
            "seed {seed}: not repeatable"
        );
    }
}
