use std::sync::OnceLock;

use regex::Regex;

use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::transform::ContentTransformer;

/// ## What it does
/// Simplifies Markdown: a line made only of badges (`[![build](…)](…)`) is
/// removed; an image `![alt](url)` becomes `[image: alt]`; HTML comments
/// (`<!-- … -->`) are removed. Text, headings, code blocks and links stay as they
/// are.
///
/// ## Why
/// READMEs open with rows of badge images whose URLs cost hundreds of tokens and
/// carry nothing a model can use; image URLs and comments are the same (typically
/// ~30–40% savings).
///
/// ## Example
/// `[![CI](https://github.com/o/r/actions/workflows/ci.yml/badge.svg)](https://github.com/o/r/actions)`
/// on its own line disappears; `![Architecture](docs/arch.png)` becomes
/// `[image: Architecture]`.
///
/// ## Known problems
/// Inside fenced code blocks the same rewriting applies; Markdown that documents
/// Markdown syntax is best read raw (`#raw`, or name the file in the intent).
#[derive(Clone, Copy, Debug, Default)]
pub struct MarkdownSimplifier;

fn badge_line() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    crate::work::once(&PATTERN, || {
        Regex::new(r"(?m)^[ \t]*(?:\[!\[[^\]\n]*\]\([^)\n]*\)\]\([^)\n]*\)[ \t]*)+\r?\n?")
            .expect("the badge pattern is a valid constant regex")
    })
}

fn image() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    crate::work::once(&PATTERN, || {
        Regex::new(r"!\[([^\]\n]*)\]\([^)\n]*\)")
            .expect("the image pattern is a valid constant regex")
    })
}

fn comment() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    crate::work::once(&PATTERN, || {
        Regex::new(r"(?s)<!--.*?-->").expect("the comment pattern is a valid constant regex")
    })
}

impl ContentTransformer for MarkdownSimplifier {
    fn id(&self) -> &'static str {
        "MarkdownSimplifier"
    }

    fn applies(&self, _path: &RelativePath, language: Language, content: &str) -> bool {
        language == Language::Markdown && (content.contains("![") || content.contains("<!--"))
    }

    fn transform(&self, _path: &RelativePath, content: &str) -> String {
        let text = badge_line().replace_all(content, "");
        let text = comment().replace_all(&text, "");
        image()
            .replace_all(&text, |c: &regex::Captures<'_>| {
                let alt = c[1].trim();
                if alt.is_empty() {
                    "[image]".to_owned()
                } else {
                    format!("[image: {alt}]")
                }
            })
            .into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn simplify(text: &str) -> String {
        MarkdownSimplifier.transform(&RelativePath::new("README.md").unwrap(), text)
    }

    #[test]
    fn removes_badge_lines_and_comments_and_names_images() {
        let text = "# Tool\n\n[![CI](https://x/badge.svg)](https://x/actions) [![npm](https://y/v.svg)](https://y)\n\nIntro <!-- todo: rewrite -->text.\n\n![Architecture](docs/arch.png \"big\")\n![](x.gif)\n\nSee [docs](https://docs).\n";
        assert_eq!(
            simplify(text),
            "# Tool\n\n\nIntro text.\n\n[image: Architecture]\n[image]\n\nSee [docs](https://docs).\n"
        );
    }

    #[test]
    fn is_idempotent_and_leaves_plain_markdown_alone() {
        let text = "# A\n\n![logo](l.png)\n";
        let once = simplify(text);
        assert_eq!(simplify(&once), once);
        let path = RelativePath::new("a.md").unwrap();
        assert!(!MarkdownSimplifier.applies(
            &path,
            Language::Markdown,
            "# Plain\n\ntext [link](u)\n"
        ));
    }
}
