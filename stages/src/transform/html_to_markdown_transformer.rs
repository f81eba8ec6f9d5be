use htmd::HtmlToMarkdown;

use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::transform::ContentTransformer;

/// Text that marks an HTML file as a template whose markup is code
/// (Jinja/Django/Liquid/Handlebars/Angular/Vue, ERB/EJS/JSP/PHP).
const TEMPLATE_MARKERS: &[&str] = &["{{", "{%", "<%", "<?"];

/// ## What it does
/// Converts an HTML document to Markdown with the `htmd` crate
/// (turndown-style): headings, paragraphs, lists, links, emphasis, code
/// blocks and tables become their Markdown equivalents; `<script>`,
/// `<style>`, `<noscript>`, `<template>`, `<iframe>`, `<svg>`, `<canvas>` and
/// comments are dropped, as is every tag that has no Markdown form (its text
/// stays).
///
/// It applies to `.html`/`.htm` files that start with markup (`<`, after
/// whitespace) and never to templates: a file containing `{{`, `{%`, `<%` or
/// `<?` is left as it is, because there the markup is code.
///
/// ## Why
/// Tags and attributes are most of an HTML file's tokens; the model needs its
/// text and structure (typically ~70–80% savings).
///
/// ## Example
/// `<h1>Title</h1><p>Some <b>bold</b> text.</p><script>track()</script>`
/// becomes `# Title\n\nSome **bold** text.\n`.
///
/// ## Known problems
/// Lossy: direct targets and `#raw` bypass it. Attributes (classes, ids,
/// `data-*`) are gone, so markup that a script or stylesheet targets cannot be
/// followed from the result. The output never starts with `<` (a leading `<`
/// is escaped as `\<`), which is what keeps the conversion idempotent:
/// Markdown is never converted again.
#[derive(Clone, Copy, Debug, Default)]
pub struct HtmlToMarkdownTransformer;

fn looks_like_html(content: &str) -> bool {
    content
        .trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('<')
        && !TEMPLATE_MARKERS
            .iter()
            .any(|marker| content.contains(marker))
}

impl ContentTransformer for HtmlToMarkdownTransformer {
    fn id(&self) -> &'static str {
        "HtmlToMarkdownTransformer"
    }

    fn applies(&self, _path: &RelativePath, language: Language, content: &str) -> bool {
        language == Language::Html && looks_like_html(content)
    }

    fn transform(&self, _path: &RelativePath, content: &str) -> String {
        if !looks_like_html(content) {
            return content.to_owned();
        }
        let converter = HtmlToMarkdown::builder()
            .skip_tags(vec![
                "script", "style", "noscript", "template", "iframe", "svg", "canvas",
            ])
            .build();
        let Ok(markdown) = converter.convert(content) else {
            return content.to_owned();
        };
        let markdown = markdown.trim();
        let mut out = String::with_capacity(markdown.len() + 2);
        if markdown.starts_with('<') {
            out.push('\\');
        }
        out.push_str(markdown);
        out.push('\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    fn convert(content: &str) -> String {
        HtmlToMarkdownTransformer.transform(&RelativePath::new("docs/index.html").unwrap(), content)
    }

    #[test_case(fixture!("html_to_markdown_transformer/page.html"), fixture!("html_to_markdown_transformer/page.html.expected"))]
    #[test_case(fixture!("html_to_markdown_transformer/fragment.htm"), fixture!("html_to_markdown_transformer/fragment.htm.expected"))]
    fn converts_documents_and_drops_scripts_and_styles(input: &str, expected: &str) {
        let out = convert(input);
        assert_eq!(out, expected);
        assert_eq!(convert(&out), out, "idempotent");
        assert!(!out.contains("track("), "scripts are dropped");
        assert!(!out.contains("color:"), "styles are dropped");
    }

    #[test]
    fn templates_are_left_alone() {
        let path = RelativePath::new("templates/base.html").unwrap();
        let template = "<ul>{% for item in items %}<li>{{ item }}</li>{% endfor %}</ul>\n";
        assert!(!HtmlToMarkdownTransformer.applies(&path, Language::Html, template));
        assert_eq!(convert(template), template);
    }
}
