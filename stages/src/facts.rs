//! FileFacts: everything the per-file stage learns about one file's content —
//! guard findings, transformed text, tier renders and their token costs.
//!
//! [`compute_facts`] is pure and independent of every other file, so the binary
//! calls it from a rayon `par_iter` and sorts the results by path. The facts of a
//! file depend on its bytes, its path (language, lock-file and never-include
//! rules) and the settings in [`FactsSettings`], never on the intent.

use std::fmt::Write as _;

use serde::Serialize;

use crate::content_hash::ContentHash;
use crate::fit::assembler::{ContextFile, PromptAssembler};
use crate::fit::ladder::{InclusionTier, defined_names_only, size_line};
use crate::fit::line_map::LineMap;
use crate::fit::tokens::TokenCount;
use crate::fit::tokens::TokenCounter;
use crate::guard::{ContextGuard, FileGuardOutcome};
use crate::lang::{SymbolKind, analyze_file_without_imports};
use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::select::definitions::{Definition, definition_index};
use crate::transform::ContentTransformerPipeline;

/// One tier's render of a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TierRender {
    /// The text shown inside the file's fence.
    pub body: String,
    /// Tokens of the whole block in the prompt: heading, fences and body.
    pub block_tokens: TokenCount,
}

/// What the per-file stage knows about one file.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileFacts {
    /// The file.
    pub path: RelativePath,
    /// Its language.
    pub language: Language,
    /// xxh3-128 of the bytes read.
    pub content_hash: ContentHash,
    /// Whether the bytes were not valid UTF-8 (they were decoded lossily).
    pub lossy_utf8: bool,
    /// Tokens of the content as read.
    pub original_tokens: TokenCount,
    /// Tokens of the content after transforms.
    pub transformed_tokens: TokenCount,
    /// Transformers that changed the content.
    pub transforms_applied: Vec<String>,
    /// The guard's verdict.
    pub guard: FileGuardOutcome,
    /// The definitions of the L0 render (functions, methods, types, Markdown
    /// sections), in file order, lines counted in the L0 text; empty for
    /// blocked files and files that define nothing.
    #[serde(skip)]
    pub definitions: Vec<Definition>,
    /// The disk line of each line of the L0 render (identity when no
    /// transform changed the text): slices and markers name disk lines.
    #[serde(skip)]
    pub line_map: LineMap,
    /// Renders per tier (index = tier); `None` where the tier has no render.
    /// Empty for blocked files.
    #[serde(skip)]
    pub renders: [Option<TierRender>; 4],
}

impl FileFacts {
    /// Block token cost per tier, for the ladder.
    pub fn costs(&self) -> [Option<TokenCount>; 4] {
        let mut costs = [None; 4];
        for (cost, render) in costs.iter_mut().zip(&self.renders) {
            *cost = render.as_ref().map(|r| r.block_tokens);
        }
        costs
    }

    /// The render of a tier.
    pub fn render(&self, tier: InclusionTier) -> Option<&TierRender> {
        self.renders[tier as usize].as_ref()
    }
}

/// Shared, read-only settings of the per-file stage.
#[derive(Debug)]
pub struct FactsSettings<'a> {
    /// The guard chain.
    pub guard: &'a ContextGuard,
    /// The transformers.
    pub transformers: &'a ContentTransformerPipeline,
    /// The token counter.
    pub tokens: TokenCounter,
    /// `#raw`/`--raw`: no transforms at all.
    pub raw: bool,
}

/// Computes the facts of one file from its bytes. `bypass_format_specific` keeps
/// lossy format transforms off (direct targets and files scoring above 0.9).
pub fn compute_facts(
    context: &FactsSettings<'_>,
    path: &RelativePath,
    language: Language,
    bytes: &[u8],
    bypass_format_specific: bool,
) -> FileFacts {
    let content_hash = ContentHash::of(bytes);
    // A UTF-8 byte-order mark is an encoding artefact, not content: without
    // it the licence header and comment rules see the file's first line.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let (text, lossy_utf8) = match std::str::from_utf8(bytes) {
        Ok(valid) => (valid.to_owned(), false),
        Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
    };
    let mut guard = context.guard.scan_file(path, language, &text);
    // In redact mode the file stays with each secret replaced by a placeholder;
    // everything after the guard sees only the redacted text, which the renders
    // then hold (`guard.secrets_redacted` keeps the fact).
    let text = guard.redacted.take().unwrap_or(text);
    if guard.blocked {
        return FileFacts {
            path: path.clone(),
            language,
            content_hash,
            lossy_utf8,
            original_tokens: context.tokens.count_lines(&text),
            transformed_tokens: TokenCount::ZERO,
            transforms_applied: Vec::new(),
            guard,
            definitions: Vec::new(),
            line_map: LineMap::identity(),
            renders: [None, None, None, None],
        };
    }
    let transformed =
        context
            .transformers
            .transform(path, language, &text, context.raw, bypass_format_specific);
    let unchanged = transformed.text == text;
    let mut l0_body = transformed.text;
    if l0_body.trim().is_empty() {
        "(empty file)\n".clone_into(&mut l0_body);
    }
    // A block's cost is its Markdown wrapper (heading and fences, counted on an empty body)
    // plus its body, so each body is tokenised once. Joining can shift a count by
    // a token at the seams; the fit phase counts the assembled prompt and refits, so
    // the budget still holds exactly.
    let render = |tier: InclusionTier, body: String| {
        let mut body = body.trim_end_matches('\n').to_owned();
        body.push('\n');
        let wrapper = PromptAssembler::default().file_block(&ContextFile {
            path: path.clone(),
            language,
            tier,
            body: String::new(),
            sliced: false,
        });
        let body_tokens = context.tokens.count_lines(&body);
        let block_tokens = TokenCount(
            context
                .tokens
                .count(&wrapper)
                .0
                .saturating_add(body_tokens.0),
        );
        (TierRender { body, block_tokens }, body_tokens)
    };
    let analysis = analyze_file_without_imports(path, language, &text);
    let l1 = analysis
        .signatures_with_docs
        .filter(|body| !body.trim().is_empty())
        .map(|body| render(InclusionTier::L1, body).0);
    let l2 = analysis
        .signatures_only
        .filter(|body| !body.trim().is_empty())
        .map(|body| render(InclusionTier::L2, body).0);
    let definitions = definition_index(&l0_body, language);
    let l3_body = if analysis.names.is_empty() {
        defined_names_only(&l0_body).unwrap_or_else(|| blocks_only(&definitions, &text))
    } else {
        analysis.names.iter().fold(String::new(), |mut out, name| {
            out.push_str(kind_word(name.kind));
            out.push(' ');
            out.push_str(&name.name);
            out.push('\n');
            out
        })
    };
    let (l3, _) = render(InclusionTier::L3, l3_body);
    let line_map = if unchanged {
        LineMap::identity()
    } else {
        LineMap::align(&text, &l0_body)
    };
    let (l0, transformed_tokens) = render(InclusionTier::L0, l0_body);
    let original_tokens = if unchanged {
        transformed_tokens
    } else {
        context.tokens.count_lines(&text)
    };
    FileFacts {
        path: path.clone(),
        language,
        content_hash,
        lossy_utf8,
        original_tokens,
        transformed_tokens,
        transforms_applied: transformed
            .applied
            .iter()
            .map(|&id| id.to_owned())
            .collect(),
        guard,
        definitions,
        line_map,
        renders: [Some(l0), l1, l2, Some(l3)],
    }
}

/// The most block names a names-only render of a file without definitions
/// lists.
const MAX_BLOCK_NAMES: usize = 40;

/// The names-only render of a file whose only definitions are sections or
/// blocks by layout (a YAML workflow, `package.json`, an INI file): its
/// top-level blocks and the blocks directly in them, as `section <name>`
/// lines (nested ones indented), at most [`MAX_BLOCK_NAMES`], then its size
/// on disk. With none, its size alone: `(no definitions found; N lines, B
/// bytes)`, counted on `text` (the file on disk, not the transformed text).
fn blocks_only(definitions: &[Definition], text: &str) -> String {
    let is_named = |d: &Definition| d.name.chars().any(char::is_alphanumeric);
    // Named ancestors only: a bare bracket is no level.
    let depth = |d: &Definition| {
        let mut depth = 0;
        let mut parent = d.parent;
        while let Some(p) = parent {
            depth += usize::from(is_named(&definitions[p as usize]));
            parent = definitions[p as usize].parent;
        }
        depth
    };
    let named: Vec<(usize, &str)> = definitions
        .iter()
        .filter(|d| is_named(d))
        .map(|d| (depth(d), d.name.as_str()))
        .filter(|&(depth, _)| depth <= 1)
        .collect();
    if named.is_empty() {
        return size_line(text);
    }
    let mut out = String::new();
    for (depth, name) in named.iter().take(MAX_BLOCK_NAMES) {
        let _ = writeln!(out, "{}section {name}", "  ".repeat(*depth));
    }
    if named.len() > MAX_BLOCK_NAMES {
        let _ = writeln!(out, "… {} more sections", named.len() - MAX_BLOCK_NAMES);
    }
    let _ = writeln!(
        out,
        "({} lines, {} bytes)",
        text.lines().count(),
        text.len()
    );
    out
}

/// The word an L3 line starts with for a kind of name.
pub(crate) fn kind_word(kind: SymbolKind) -> &'static str {
    match kind {
        SymbolKind::Function => "function",
        SymbolKind::Method => "method",
        SymbolKind::Class => "class",
        SymbolKind::Struct => "struct",
        SymbolKind::Enum => "enum",
        SymbolKind::Interface => "interface",
        SymbolKind::Trait => "trait",
        SymbolKind::Type => "type",
        SymbolKind::Constant => "const",
        SymbolKind::Variable => "variable",
        SymbolKind::Module => "module",
        SymbolKind::Macro => "macro",
    }
}

#[cfg(test)]
mod block_names_tests {
    use super::*;

    #[test]
    fn a_file_without_names_lists_its_blocks_and_its_size_on_disk() {
        let json = "{\n  \"name\": \"vite\",\n  \"scripts\": {\n    \"build\": \"tsc\"\n  },\n  \"engines\": {\n    \"node\": \"^20\"\n  }\n}\n";
        let definitions = definition_index(json, Language::Json);
        assert_eq!(
            blocks_only(&definitions, json),
            format!(
                "section scripts\nsection engines\n(9 lines, {} bytes)\n",
                json.len()
            )
        );
        assert_eq!(
            blocks_only(&[], "a\nb\n"),
            "(no definitions found; 2 lines, 4 bytes)\n"
        );
    }
}

/// The facts of `bytes` at `path` with the default settings, for tests.
#[cfg(test)]
pub(crate) fn default_facts(path: &str, bytes: &[u8]) -> FileFacts {
    let config = crate::config::AicConfig::default();
    let guard = ContextGuard::new(&config.guard).expect("the default guard compiles");
    let transformers = ContentTransformerPipeline::new(&config.content_transformers);
    let settings = FactsSettings {
        guard: &guard,
        transformers: &transformers,
        tokens: TokenCounter::cl100k(),
        raw: false,
    };
    let path = RelativePath::new(path).expect("a relative path");
    compute_facts(&settings, &path, Language::detect(&path), bytes, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(path: &str, bytes: &[u8]) -> FileFacts {
        default_facts(path, bytes)
    }

    #[test]
    fn renders_full_and_names_with_block_costs() {
        let f = facts(
            "src/config.rs",
            b"pub struct Config {}\n\n\n\n\npub fn load() -> Config { Config {} }\n",
        );
        let l0 = f.render(InclusionTier::L0).unwrap();
        assert_eq!(
            l0.body,
            "pub struct Config {}\n\npub fn load() -> Config { Config {} }\n"
        );
        let l3 = f.render(InclusionTier::L3).unwrap();
        assert_eq!(l3.body, "struct Config\nfunction load\n");
        let l2 = f.render(InclusionTier::L2).unwrap();
        assert!(l2.body.contains("pub fn load() -> Config"), "{}", l2.body);
        assert!(l2.block_tokens < l0.block_tokens);
        assert!(l3.block_tokens < l0.block_tokens);
        assert_eq!(f.transforms_applied, ["WhitespaceNormalizer"]);
        assert!(f.transformed_tokens < f.original_tokens);
    }

    /// A byte-order mark goes, so the licence header behind it does too.
    #[test]
    fn a_byte_order_mark_is_not_content() {
        let f = facts(
            "src/frob.ts",
            "\u{feff}// Copyright 2022 Acme. MIT license.\n\nexport const frob = 'a';\n".as_bytes(),
        );
        assert_eq!(
            f.render(InclusionTier::L0).unwrap().body,
            "export const frob = 'a';\n"
        );
    }

    #[test]
    fn block_cost_is_within_a_seam_of_the_assembled_block() {
        let f = facts("a.py", b"def a():\n    return 1\n");
        let l0 = f.render(InclusionTier::L0).unwrap();
        let block = PromptAssembler::default().file_block(&ContextFile {
            path: f.path.clone(),
            language: f.language,
            tier: InclusionTier::L0,
            body: l0.body.clone(),
            sliced: false,
        });
        let exact = TokenCounter::cl100k().count(&block).0;
        assert!(
            exact.abs_diff(l0.block_tokens.0) <= 2,
            "{exact} vs {:?}",
            l0.block_tokens
        );
    }

    /// Every line of a transformed L0 text maps to the disk line it came
    /// from: the same text, or that text with a comment cut off its end.
    #[test]
    fn the_line_map_finds_every_shown_line_on_disk() {
        for (path, source) in [
            ("src/slice.rs", include_str!("fit/slice.rs")),
            ("src/selector.rs", include_str!("select/selector.rs")),
            ("src/definitions.rs", include_str!("select/definitions.rs")),
        ] {
            let f = facts(path, source.as_bytes());
            assert!(!f.line_map.is_identity(), "{path}: comments were stripped");
            let disk: Vec<&str> = source.lines().collect();
            let body = &f.render(InclusionTier::L0).unwrap().body;
            let mut misplaced = 0;
            for (index, line) in body.lines().enumerate() {
                let on_disk = disk[f.line_map.disk_line(index) - 1].trim_end();
                // A long string is cut at `…[truncated N chars]`.
                let shown = line.split('…').next().unwrap_or(line).trim_end();
                if !on_disk.starts_with(shown) {
                    misplaced += 1;
                }
            }
            assert_eq!(
                misplaced, 0,
                "{path}: {misplaced} lines map to another line"
            );
        }
    }

    #[test]
    fn empty_and_non_utf8_files_never_have_empty_bodies() {
        let f = facts("empty.txt", b"");
        assert_eq!(f.render(InclusionTier::L0).unwrap().body, "(empty file)\n");
        let f = facts("latin1.txt", b"caf\xe9\n");
        assert!(f.lossy_utf8);
        assert_eq!(f.render(InclusionTier::L0).unwrap().body, "caf\u{fffd}\n");
    }
}
