use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::transform::ContentTransformer;
use crate::transform::source_spans::{self, CommentSyntax};

/// Words that make an ordinary comment block a license header
/// (matched case-insensitively).
const LICENSE_WORDS: &[&str] = &[
    "license",
    "licence",
    "copyright",
    "spdx-license-identifier",
    "permission is hereby granted",
    "all rights reserved",
];

/// Words that make a doc comment block (`//!`, `///`, `/** */`, `/*! */`) a
/// license header: only the unambiguous ones, so crate docs that mention
/// their license are kept.
const DOC_LICENSE_WORDS: &[&str] = &[
    "copyright",
    "(c) 19",
    "(c) 20",
    "©",
    "spdx-license-identifier",
    "permission is hereby granted",
    "all rights reserved",
    "@license",
];

/// ## What it does
/// Removes the license and copyright comment blocks at the top of a file:
/// among the comment blocks before the first line of code, each one that
/// mentions a license (`Copyright`, `SPDX-License-Identifier`,
/// `Licensed under`, `Permission is hereby granted`, `All rights reserved`,
/// `license`) goes, with the blank lines right after it. A block is a run of
/// consecutive comment lines of one kind (`//`, `///`, `//!`, `#`, `--`) or one
/// block comment (`/* */`, `<!-- -->`); doc comment blocks go only for the
/// unambiguous markers (`Copyright`, `(c) 2024`, `©`, SPDX, `Permission is
/// hereby granted`, `All rights reserved`, `@license`), so crate docs that
/// name their license ("licensed under MIT or Apache-2.0") stay.
///
/// It never touches: a shebang (`#!…`), `<?php` or `<?xml …?>` first line;
/// directive lines inside a removed block (`# -*- coding: … -*-`,
/// `//go:build`, `# syntax=…` for Dockerfiles, see
/// [`CommentStripper`](super::CommentStripper)); comments after the first line
/// of code; Python docstrings (they are strings).
///
/// Languages: those with `//`/`/* */` comments (TypeScript, JavaScript, Go,
/// Rust, Java, C, C++, C#, Swift, Kotlin, PHP, CSS), `#` comments (Python,
/// Ruby, shell, YAML, TOML, Makefile, Dockerfile), SQL (`--`, `/* */`) and
/// HTML/XML (`<!-- -->`).
///
/// ## Why
/// License headers repeat in every file of a project and tell the model
/// nothing about the code; a 15-line Apache header costs ~120 tokens a file.
///
/// ## Example
/// `// Copyright 2024 Acme\n// SPDX-License-Identifier: MIT\n\npackage main\n`
/// becomes `package main\n`.
///
/// ## Known problems
/// Lossy: direct targets and `#raw` bypass it. The whole block goes, so a
/// description that shares the block's lines with a one-line copyright
/// (`// Copyright 2024 Acme. MIT license.\n// This module parses …`) goes with
/// it, and so does a header block that only mentions a license in passing.
#[derive(Clone, Copy, Debug, Default)]
pub struct LicenseHeaderStripper;

/// How a language writes the comments a header is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct HeaderSyntax {
    /// Line comment opener, if any.
    line: Option<&'static str>,
    /// Block comment opener and closer, if any.
    block: Option<(&'static str, &'static str)>,
}

fn header_syntax(language: Language) -> Option<HeaderSyntax> {
    const C_STYLE: HeaderSyntax = HeaderSyntax {
        line: Some("//"),
        block: Some(("/*", "*/")),
    };
    const HASH: HeaderSyntax = HeaderSyntax {
        line: Some("#"),
        block: None,
    };
    Some(match language {
        Language::TypeScript
        | Language::JavaScript
        | Language::Go
        | Language::Rust
        | Language::Java
        | Language::C
        | Language::Cpp
        | Language::CSharp
        | Language::Swift
        | Language::Kotlin
        | Language::Php => C_STYLE,
        Language::Css => HeaderSyntax {
            line: None,
            block: Some(("/*", "*/")),
        },
        Language::Python
        | Language::Ruby
        | Language::Shell
        | Language::Yaml
        | Language::Toml
        | Language::Makefile
        | Language::Dockerfile => HASH,
        Language::Sql => HeaderSyntax {
            line: Some("--"),
            block: Some(("/*", "*/")),
        },
        Language::Html | Language::Xml => HeaderSyntax {
            line: None,
            block: Some(("<!--", "-->")),
        },
        _ => return None,
    })
}

/// One comment block of the header: its lines (start offset of the first,
/// end offset after the last line's newline), its text, and the line ranges
/// of any directive lines inside it.
struct Block {
    start: usize,
    end: usize,
    doc: bool,
    directives: Vec<(usize, usize)>,
}

impl ContentTransformer for LicenseHeaderStripper {
    fn id(&self) -> &'static str {
        "LicenseHeaderStripper"
    }

    fn applies(&self, _path: &RelativePath, language: Language, content: &str) -> bool {
        header_syntax(language).is_some() && mentions_license(&content[..head(content)], false)
    }

    fn lossy(&self) -> bool {
        true
    }

    fn transform(&self, path: &RelativePath, content: &str) -> String {
        let language = Language::detect(path);
        let Some(syntax) = header_syntax(language) else {
            return content.to_owned();
        };
        let stripped = strip_license_header(content, syntax);
        if stripped.len() < content.len() && content.ends_with(stripped.as_str()) {
            // The comment stripper runs next on `stripped`; its comments and
            // strings are those of `content` past the header, found in the
            // parse of `content` that the signature tiers reuse.
            source_spans::remember_suffix(path, language, content, &stripped);
        }
        stripped
    }
}

/// The first 16 KiB of a file, cut at a character boundary: headers are never
/// longer, and `applies` stays cheap on big files.
fn head(content: &str) -> usize {
    let mut end = content.len().min(16 * 1024);
    while !content.is_char_boundary(end) {
        end -= 1;
    }
    end
}

fn mentions_license(text: &str, doc: bool) -> bool {
    let lower = text.to_lowercase();
    let words = if doc {
        DOC_LICENSE_WORDS
    } else {
        LICENSE_WORDS
    };
    words.iter().any(|word| lower.contains(word))
}

/// Whether a comment of the header is a directive that stays
/// ([`source_spans::is_directive`]), except a `@license` annotation: it only
/// marks the block as a licence for minifiers, and the block goes with it.
fn is_kept_directive(text: &str, syntax: CommentSyntax) -> bool {
    let body = text
        .trim_start_matches(['/', '*', '#', '!'])
        .trim_start_matches(|c: char| c.is_whitespace() || c == '*');
    source_spans::is_directive(text, syntax) && !body.starts_with("@license")
}

/// The line starting at `at`: its text without the line break, and the
/// offset after the line break.
fn line_at(content: &str, at: usize) -> (&str, usize) {
    match content[at..].find('\n') {
        Some(offset) => {
            let line = &content[at..at + offset];
            (line.strip_suffix('\r').unwrap_or(line), at + offset + 1)
        }
        None => (&content[at..], content.len()),
    }
}

/// The kind of a line comment, so a run of `//` lines and a run of `///`
/// lines are separate blocks.
fn line_kind(trimmed: &str, opener: &str) -> &'static str {
    if opener == "//" {
        if trimmed.starts_with("///") && !trimmed.starts_with("////") {
            return "///";
        }
        if trimmed.starts_with("//!") {
            return "//!";
        }
    }
    "line"
}

fn strip_license_header(content: &str, syntax: HeaderSyntax) -> String {
    let mut at = 0;
    // A first line that must stay first.
    let (first, after_first) = line_at(content, 0);
    let first = first.trim_start_matches('\u{feff}');
    if (first.starts_with("#!") && !first.starts_with("#!["))
        || first.starts_with("<?php")
        || first.starts_with("<?xml")
    {
        at = after_first;
    }
    let comment_syntax = if syntax.line == Some("#") {
        CommentSyntax::Hash
    } else {
        CommentSyntax::Slashes
    };
    let mut blocks: Vec<Block> = Vec::new();
    let mut current: Option<(Block, &'static str)> = None;
    let mut blank_after: Vec<(usize, usize)> = Vec::new();
    loop {
        if at >= content.len() {
            break;
        }
        let (line, next) = line_at(content, at);
        let trimmed = line.trim_start();
        if trimmed.trim_end().is_empty() {
            if let Some((block, _)) = current.take() {
                blocks.push(block);
            }
            blank_after.push((at, next));
            at = next;
            continue;
        }
        if let Some(opener) = syntax.line
            && trimmed.starts_with(opener)
            && !(opener == "#" && trimmed.starts_with("#!["))
        {
            let kind = line_kind(trimmed, opener);
            let directive = is_kept_directive(trimmed.trim_end(), comment_syntax);
            match &mut current {
                Some((block, current_kind)) if *current_kind == kind => {
                    block.end = next;
                }
                _ => {
                    if let Some((block, _)) = current.take() {
                        blocks.push(block);
                    }
                    current = Some((
                        Block {
                            start: at,
                            end: next,
                            doc: kind != "line",
                            directives: Vec::new(),
                        },
                        kind,
                    ));
                }
            }
            if directive && let Some((block, _)) = &mut current {
                block.directives.push((at, next));
            }
            at = next;
            continue;
        }
        if let Some((open, close)) = syntax.block
            && trimmed.starts_with(open)
        {
            let open_at = at + (line.len() - trimmed.len());
            let Some(close_offset) = content[open_at + open.len()..].find(close) else {
                break;
            };
            let close_end = open_at + open.len() + close_offset + close.len();
            let (rest, next) = line_at(content, close_end);
            if !rest.trim().is_empty() {
                break;
            }
            if let Some((block, _)) = current.take() {
                blocks.push(block);
            }
            let text = &content[open_at..close_end];
            let doc = open == "/*" && source_spans::is_doc_comment(text, CommentSyntax::Slashes);
            let directives = if is_kept_directive(text, CommentSyntax::Slashes) {
                vec![(at, next)]
            } else {
                Vec::new()
            };
            blocks.push(Block {
                start: at,
                end: next,
                doc,
                directives,
            });
            at = next;
            continue;
        }
        break;
    }
    if let Some((block, _)) = current.take() {
        blocks.push(block);
    }

    let mut removed: Vec<(usize, usize)> = Vec::new();
    for block in &blocks {
        if !mentions_license(&content[block.start..block.end], block.doc) {
            continue;
        }
        let mut from = block.start;
        for &(start, end) in &block.directives {
            removed.push((from, start));
            from = end;
        }
        removed.push((from, block.end));
        if block.directives.is_empty() {
            let mut end = block.end;
            while let Some(&(_, next)) = blank_after.iter().find(|(start, _)| *start == end) {
                end = next;
            }
            removed.push((block.end, end));
        }
    }
    if removed.is_empty() {
        return content.to_owned();
    }
    let mut out = String::with_capacity(content.len());
    let mut at = 0;
    for (start, end) in removed {
        if start > at {
            out.push_str(&content[at..start]);
        }
        at = at.max(end);
    }
    out.push_str(&content[at..]);
    out
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    fn strip(path: &str, content: &str) -> String {
        LicenseHeaderStripper.transform(&RelativePath::new(path).unwrap(), content)
    }

    #[test_case("apache.rs", fixture!("license_header_stripper/apache.rs"), fixture!("license_header_stripper/apache.rs.expected"))]
    #[test_case("mit.js", fixture!("license_header_stripper/mit.js"), fixture!("license_header_stripper/mit.js.expected"))]
    #[test_case("gpl.py", fixture!("license_header_stripper/gpl.py"), fixture!("license_header_stripper/gpl.py.expected"))]
    #[test_case("spdx.go", fixture!("license_header_stripper/spdx.go"), fixture!("license_header_stripper/spdx.go.expected"))]
    #[test_case("Header.java", fixture!("license_header_stripper/Header.java"), fixture!("license_header_stripper/Header.java.expected"))]
    #[test_case("install.sh", fixture!("license_header_stripper/install.sh"), fixture!("license_header_stripper/install.sh.expected"))]
    #[test_case("crate_docs.rs", fixture!("license_header_stripper/crate_docs.rs"), fixture!("license_header_stripper/crate_docs.rs.expected"))]
    fn strips_the_leading_license_blocks(file_name: &str, input: &str, expected: &str) {
        let out = strip(file_name, input);
        assert_eq!(out, expected, "{file_name}");
        assert_eq!(strip(file_name, &out), out, "{file_name} is idempotent");
    }

    /// A `@license` block goes like any other licence block, however it
    /// opens; other `@` directives (`@flow`, `@jsx`) stay.
    #[test_case(
        "/**\n * @license\n * Copyright 2019 Google LLC\n * SPDX-License-Identifier: BSD-3-Clause\n */\nexport const a = 1;\n",
        "export const a = 1;\n"
    )]
    #[test_case(
        "/*\n * @license\n * Copyright 2019 Google LLC\n */\n\nexport const a = 1;\n",
        "export const a = 1;\n"
    )]
    #[test_case(
        "/** @license Copyright 2019 Google LLC */\nexport const a = 1;\n",
        "export const a = 1;\n"
    )]
    #[test_case(
        "// @license MIT, Copyright Acme\nexport const a = 1;\n",
        "export const a = 1;\n"
    )]
    #[test_case(
        "/* @flow */\n// Copyright Acme\nexport const a = 1;\n",
        "/* @flow */\nexport const a = 1;\n"
    )]
    fn license_annotations_go_with_their_block(input: &str, expected: &str) {
        assert_eq!(strip("src/a.js", input), expected);
    }

    #[test]
    fn only_the_header_is_touched() {
        let text = "fn main() {}\n// Copyright 2020 Someone\n";
        assert_eq!(strip("a.rs", text), text);
        let text = "// Helpers for parsing.\n\nfn main() {}\n";
        assert_eq!(strip("a.rs", text), text);
    }
}
