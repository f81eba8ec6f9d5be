use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::transform::ContentTransformer;

/// ## What it does
/// Replaces an SVG image with `[SVG: viewBox {viewBox}, {elements} elements,
/// {bytes} bytes]`, the `viewBox` attribute of the root element (or `none`) and the
/// number of element tags.
///
/// ## Why
/// Path data is long, dense and meaningless to read; the size and shape of the
/// image is what a model can use (typically ~95% savings).
///
/// ## Example
/// An icon of 1,204 bytes becomes `[SVG: viewBox 0 0 24 24, 3 elements, 1204 bytes]`.
///
/// ## Known problems
/// Text inside the image is dropped with the rest; name the file in the intent to
/// see its source.
#[derive(Clone, Copy, Debug, Default)]
pub struct SvgDescriber;

impl ContentTransformer for SvgDescriber {
    fn id(&self) -> &'static str {
        "SvgDescriber"
    }

    fn applies(&self, _path: &RelativePath, language: Language, content: &str) -> bool {
        language == Language::Svg && !content.starts_with("[SVG: ")
    }

    fn transform(&self, _path: &RelativePath, content: &str) -> String {
        let view_box = content
            .find("viewBox=")
            .and_then(|start| {
                let rest = &content[start + "viewBox=".len()..];
                let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
                let value = &rest[1..];
                value.find(quote).map(|end| value[..end].trim().to_owned())
            })
            .unwrap_or_else(|| "none".to_owned());
        let elements = content
            .match_indices('<')
            .filter(|(index, _)| {
                content[index + 1..]
                    .chars()
                    .next()
                    .is_some_and(char::is_alphabetic)
            })
            .count();
        format!(
            "[SVG: viewBox {view_box}, {elements} elements, {} bytes]\n",
            content.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_view_box_and_elements() {
        let svg = r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M1 1L2 2"/><circle r="3"/></svg>"#;
        let path = RelativePath::new("icons/x.svg").unwrap();
        assert!(SvgDescriber.applies(&path, Language::Svg, svg));
        let out = SvgDescriber.transform(&path, svg);
        assert_eq!(
            out,
            format!(
                "[SVG: viewBox 0 0 24 24, 3 elements, {} bytes]\n",
                svg.len()
            )
        );
        assert!(!SvgDescriber.applies(&path, Language::Svg, &out));
    }

    #[test]
    fn missing_view_box_is_none() {
        let path = RelativePath::new("a.svg").unwrap();
        assert_eq!(
            SvgDescriber.transform(&path, "<svg/>"),
            "[SVG: viewBox none, 1 elements, 6 bytes]\n"
        );
    }
}
