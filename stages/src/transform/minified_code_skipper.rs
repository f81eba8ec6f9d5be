use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::transform::ContentTransformer;

/// Average line length in bytes above which a JavaScript or CSS file counts as
/// minified even without a `.min.` name.
const MINIFIED_AVERAGE_LINE_BYTES: usize = 300;

/// ## What it does
/// Replaces minified code with `[Minified: {name}, {bytes} bytes — skipped]`:
/// files named `*.min.js`/`*.min.css`/`*.min.mjs`, files under `dist/` or `build/`,
/// and JavaScript or CSS files of at least 1 KiB whose average line is longer than
/// 300 bytes.
///
/// ## Why
/// Minified code is unreadable and token-dense; its source is what a model needs
/// (typically ~99% savings).
///
/// ## Example
/// `vendor/jquery.min.js` becomes `[Minified: jquery.min.js, 89476 bytes — skipped]`.
///
/// ## Known problems
/// A hand-written file with very long lines (embedded data) is treated as
/// minified; name it in the intent to make it a direct target.
#[derive(Clone, Copy, Debug, Default)]
pub struct MinifiedCodeSkipper;

impl ContentTransformer for MinifiedCodeSkipper {
    fn id(&self) -> &'static str {
        "MinifiedCodeSkipper"
    }

    fn applies(&self, path: &RelativePath, language: Language, content: &str) -> bool {
        if content.starts_with("[Minified: ") {
            return false;
        }
        let name = path.file_name().to_ascii_lowercase();
        if name.contains(".min.") {
            return true;
        }
        let p = path.as_str();
        if p.starts_with("dist/")
            || p.starts_with("build/")
            || p.contains("/dist/")
            || p.contains("/build/")
        {
            return true;
        }
        if matches!(language, Language::JavaScript | Language::Css) && content.len() >= 1024 {
            let lines = content.lines().count().max(1);
            return content.len() / lines > MINIFIED_AVERAGE_LINE_BYTES;
        }
        false
    }

    fn transform(&self, path: &RelativePath, content: &str) -> String {
        format!(
            "[Minified: {}, {} bytes — skipped]\n",
            path.file_name(),
            content.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applies(path: &str, language: Language, content: &str) -> bool {
        MinifiedCodeSkipper.applies(&RelativePath::new(path).unwrap(), language, content)
    }

    #[test]
    fn recognises_names_directories_and_long_lines() {
        assert!(applies("vendor/jquery.min.js", Language::JavaScript, "x"));
        assert!(applies("web/dist/app.js", Language::JavaScript, "x"));
        assert!(!applies(
            "src/app.js",
            Language::JavaScript,
            "const a = 1;\n"
        ));
        let long = "a".repeat(2000);
        assert!(applies("src/bundle.js", Language::JavaScript, &long));
        assert!(!applies("src/data.rs", Language::Rust, &long));
    }

    #[test]
    fn placeholder_is_not_transformed_again() {
        let path = RelativePath::new("a.min.js").unwrap();
        let once = MinifiedCodeSkipper.transform(&path, "x");
        assert!(!MinifiedCodeSkipper.applies(&path, Language::JavaScript, &once));
    }
}
