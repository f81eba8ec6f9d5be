//! ContentTransformer (seed §8.5), first cut: format-specific skippers that replace
//! whole files with a one-line placeholder, then the non-format-specific
//! [`WhitespaceNormalizer`].
//!
//! Order (seed §8.5 "Execution order"): at most one format-specific transformer
//! runs per file (the first whose [`ContentTransformer::applies`] says yes), then
//! the non-format-specific ones. Every transformer is idempotent:
//! transforming its own output changes nothing.

mod lock_file_skipper;
mod minified_code_skipper;
mod whitespace_normalizer;

pub use lock_file_skipper::LockFileSkipper;
pub use minified_code_skipper::MinifiedCodeSkipper;
pub use whitespace_normalizer::WhitespaceNormalizer;

use serde::Serialize;

use crate::config::ContentTransformersConfig;
use crate::repo_map::{Language, RelativePath};

/// One transformer of the pipeline.
pub trait ContentTransformer: Send + Sync {
    /// Identifier shown in traces (`WhitespaceNormalizer`, …).
    fn id(&self) -> &'static str;
    /// Whether this transformer handles the file.
    fn applies(&self, path: &RelativePath, language: Language, content: &str) -> bool;
    /// The transformed content.
    fn transform(&self, path: &RelativePath, content: &str) -> String;
}

/// The outcome of transforming one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Transformed {
    /// The content after all transformers.
    pub text: String,
    /// Ids of the transformers that changed the content, in order.
    pub applied: Vec<&'static str>,
}

/// The ordered set of transformers enabled by `contentTransformers.*`.
pub struct ContentTransformerPipeline {
    format_specific: Vec<Box<dyn ContentTransformer>>,
    general: Vec<Box<dyn ContentTransformer>>,
}

impl std::fmt::Debug for ContentTransformerPipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids =
            |list: &[Box<dyn ContentTransformer>]| list.iter().map(|t| t.id()).collect::<Vec<_>>();
        f.debug_struct("ContentTransformerPipeline")
            .field("format_specific", &ids(&self.format_specific))
            .field("general", &ids(&self.general))
            .finish()
    }
}

impl ContentTransformerPipeline {
    /// Builds the pipeline from config: `enabled: false` gives an empty pipeline;
    /// each flag adds or leaves out its transformer.
    pub fn new(config: &ContentTransformersConfig) -> Self {
        let mut format_specific: Vec<Box<dyn ContentTransformer>> = Vec::new();
        let mut general: Vec<Box<dyn ContentTransformer>> = Vec::new();
        if config.enabled {
            if config.skip_lock_files {
                format_specific.push(Box::new(LockFileSkipper));
            }
            if config.skip_minified {
                format_specific.push(Box::new(MinifiedCodeSkipper));
            }
            if config.normalize_whitespace {
                general.push(Box::new(WhitespaceNormalizer));
            }
        }
        Self {
            format_specific,
            general,
        }
    }

    /// A fingerprint of the enabled transformers, for cache keys: their ids in
    /// order, joined by `,`.
    pub fn fingerprint(&self) -> String {
        self.format_specific
            .iter()
            .chain(&self.general)
            .map(|t| t.id())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Transforms one file. `raw` bypasses every transformer (`#raw`, seed §8.5);
    /// `bypass_format_specific` skips the lossy format-specific ones (direct targets).
    pub fn transform(
        &self,
        path: &RelativePath,
        language: Language,
        content: &str,
        raw: bool,
        bypass_format_specific: bool,
    ) -> Transformed {
        let mut text = content.to_owned();
        let mut applied = Vec::new();
        if raw {
            return Transformed { text, applied };
        }
        if !bypass_format_specific
            && let Some(transformer) = self
                .format_specific
                .iter()
                .find(|t| t.applies(path, language, &text))
        {
            let next = transformer.transform(path, &text);
            if next != text {
                applied.push(transformer.id());
                text = next;
            }
        }
        for transformer in &self.general {
            if transformer.applies(path, language, &text) {
                let next = transformer.transform(path, &text);
                if next != text {
                    applied.push(transformer.id());
                    text = next;
                }
            }
        }
        Transformed { text, applied }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipeline() -> ContentTransformerPipeline {
        ContentTransformerPipeline::new(&crate::config::AicConfig::default().content_transformers)
    }

    fn path(p: &str) -> RelativePath {
        RelativePath::new(p).unwrap()
    }

    #[test]
    fn lock_file_becomes_placeholder_and_stays_stable() {
        let p = path("Cargo.lock");
        let once = pipeline().transform(
            &p,
            Language::Unknown,
            "[[package]]\nname = \"x\"\n",
            false,
            false,
        );
        assert_eq!(once.text, "[Lock file: Cargo.lock, 23 bytes — skipped]\n");
        assert_eq!(once.applied, ["LockFileSkipper"]);
    }

    #[test]
    fn raw_bypasses_everything() {
        let p = path("a.rs");
        let content = "fn a() {}   \n\n\n\n\nfn b() {}\n";
        let out = pipeline().transform(&p, Language::Rust, content, true, false);
        assert_eq!(out.text, content);
        assert!(out.applied.is_empty());
    }

    #[test]
    fn direct_targets_keep_format_but_get_whitespace_cleanup() {
        let p = path("package-lock.json");
        let out = pipeline().transform(&p, Language::Json, "{}  \n", false, true);
        assert_eq!(out.text, "{}\n");
        assert_eq!(out.applied, ["WhitespaceNormalizer"]);
    }

    #[test]
    fn disabled_pipeline_is_identity() {
        let mut config = crate::config::AicConfig::default().content_transformers;
        config.enabled = false;
        let p = ContentTransformerPipeline::new(&config);
        assert_eq!(p.fingerprint(), "");
        assert_eq!(
            p.transform(&path("Cargo.lock"), Language::Unknown, "x  ", false, false)
                .text,
            "x  "
        );
    }
}
