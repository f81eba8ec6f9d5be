use std::sync::OnceLock;

use regex::Regex;

use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::transform::ContentTransformer;

/// The shortest run of base64 characters that is replaced, in characters.
const MIN_RUN: usize = 200;

/// ## What it does
/// Replaces inline binary data — a `data:…;base64,` URI, or any unbroken run of at
/// least 200 base64 characters — with `[inline data: N bytes]`, keeping the
/// `data:…;base64,` prefix so the kind of data stays visible.
///
/// ## Why
/// Embedded fonts, images and fixtures cost tens of thousands of tokens and say
/// nothing a model can read.
///
/// ## Example
/// `url("data:image/png;base64,iVBORw0KGgo…")` becomes
/// `url("data:image/png;base64,[inline data: 5120 bytes]")`.
///
/// ## Known problems
/// A long identifier-free token that is not data (a minified one-liner) is
/// replaced too; minified files are skipped earlier anyway. Hex strings are left
/// alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct InlineDataStripper;

fn pattern() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    crate::work::once(&PATTERN, || {
        Regex::new(
            r"(data:[a-zA-Z0-9.+/-]+(?:;[a-zA-Z0-9=.-]+)*;base64,)?([A-Za-z0-9+/_-]{200,}={0,2})",
        )
        .expect("the inline data pattern is a valid constant regex")
    })
}

/// Whether a run looks like data rather than a word: base64 of binary data mixes
/// cases and digits throughout.
fn looks_like_data(run: &str) -> bool {
    let digits = run.bytes().filter(u8::is_ascii_digit).count();
    let upper = run.bytes().filter(u8::is_ascii_uppercase).count();
    let lower = run.bytes().filter(u8::is_ascii_lowercase).count();
    run.len() >= MIN_RUN
        && digits * 50 >= run.len()
        && upper * 10 >= run.len()
        && lower * 10 >= run.len()
}

impl ContentTransformer for InlineDataStripper {
    fn id(&self) -> &'static str {
        "InlineDataStripper"
    }

    fn applies(&self, _path: &RelativePath, _language: Language, content: &str) -> bool {
        content.len() >= MIN_RUN
            && pattern()
                .captures_iter(content)
                .any(|c| c.get(1).is_some() || looks_like_data(&c[2]))
    }

    fn lossy(&self) -> bool {
        true
    }

    fn transform(&self, _path: &RelativePath, content: &str) -> String {
        pattern()
            .replace_all(content, |c: &regex::Captures<'_>| {
                let prefix = c.get(1).map_or("", |m| m.as_str());
                if prefix.is_empty() && !looks_like_data(&c[2]) {
                    return c[0].to_owned();
                }
                // base64 carries 3 bytes per 4 characters.
                let bytes = c[2].trim_end_matches('=').len() * 3 / 4;
                format!("{prefix}[inline data: {bytes} bytes]")
            })
            .into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base64_run(length: usize) -> String {
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        (0..length)
            .map(|i| alphabet[(i * 7 + i / 3) % 64] as char)
            .collect()
    }

    fn path() -> RelativePath {
        RelativePath::new("src/style.css").unwrap()
    }

    #[test]
    fn replaces_data_uris_and_keeps_their_kind() {
        let data = base64_run(400);
        let css = format!(".logo {{ background: url(\"data:image/png;base64,{data}\"); }}\n");
        assert!(InlineDataStripper.applies(&path(), Language::Css, &css));
        assert_eq!(
            InlineDataStripper.transform(&path(), &css),
            ".logo { background: url(\"data:image/png;base64,[inline data: 300 bytes]\"); }\n"
        );
    }

    #[test]
    fn replaces_bare_base64_blobs_but_not_long_words() {
        let blob = format!("const FONT = \"{}\";\n", base64_run(300));
        assert_eq!(
            InlineDataStripper.transform(&path(), &blob),
            "const FONT = \"[inline data: 225 bytes]\";\n"
        );
        let word = format!("const NAME = \"{}\";\n", "a".repeat(300));
        assert!(!InlineDataStripper.applies(&path(), Language::JavaScript, &word));
        assert_eq!(InlineDataStripper.transform(&path(), &word), word);
    }

    #[test]
    fn is_idempotent() {
        let css = format!(
            "a {{ b: url(data:font/woff2;base64,{}) }}\n",
            base64_run(500)
        );
        let once = InlineDataStripper.transform(&path(), &css);
        assert!(!InlineDataStripper.applies(&path(), Language::Css, &once));
        assert_eq!(InlineDataStripper.transform(&path(), &once), once);
    }
}
