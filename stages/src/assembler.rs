//! PromptAssembler: one string in a fixed
//! section order.
//!
//! `## Task` (the intent, verbatim), `## Task Classification`, optional
//! `## Notes` (what the compiler could not do or left out), optional
//! `## Specification`, optional `## Session context`, optional
//! `## Project structure`, optional `## Constraints (key)` (the first three
//! constraints), `## Context` (the files), then optional `## Constraints` (every
//! constraint, after the context). No compiler-owned instructions about the
//! reply's format are added. The prompt holds no timestamps, absolute paths or
//! machine details, so equal inputs give equal bytes.

use std::fmt::Write;

use crate::intent::TaskClassification;
use crate::ladder::InclusionTier;
use crate::language::Language;
use crate::relative_path::RelativePath;

/// One file block of the `## Context` section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextFile {
    /// The file.
    pub path: RelativePath,
    /// Its language (gives the fence's info string).
    pub language: Language,
    /// The tier of `body`.
    pub tier: InclusionTier,
    /// The text to show.
    pub body: String,
    /// Whether `body` is a slice of the file's lines (the heading then says
    /// `sliced`, not the tier).
    pub sliced: bool,
}

/// Everything the assembler puts into a prompt.
#[derive(Clone, Debug, Default)]
pub struct PromptParts<'a> {
    /// The user's intent, verbatim.
    pub intent: &'a str,
    /// The classification.
    pub classification: Option<&'a TaskClassification>,
    /// `## Specification` body, when a spec was compiled.
    pub specification: Option<&'a str>,
    /// `## Session context` body.
    pub session_context: Option<&'a str>,
    /// `## Project structure` body.
    pub project_structure: Option<&'a str>,
    /// Merged constraints.
    pub constraints: &'a [String],
    /// `## Notes` lines: what the agent should know about the context —
    /// files named but not found, files shown as slices, relevant files left
    /// out — one bullet each.
    pub notes: &'a [String],
}

/// Builds compiled prompts.
#[derive(Clone, Copy, Debug, Default)]
pub struct PromptAssembler;

impl PromptAssembler {
    /// Assembles the prompt from its parts and the file blocks, in the order given.
    ///
    /// # Examples
    ///
    /// ```
    /// use aic_stages::assembler::{PromptAssembler, PromptParts};
    /// let prompt = PromptAssembler.assemble(&PromptParts { intent: "Explain `x`", ..Default::default() }, &[]);
    /// assert!(prompt.starts_with("## Task\n\nExplain `x`\n"));
    /// ```
    pub fn assemble(&self, parts: &PromptParts<'_>, files: &[ContextFile]) -> String {
        let mut out = self.head(parts);
        out.push_str(&self.context_heading());
        for file in files {
            out.push_str(&self.file_block(file));
        }
        out.push_str(&self.tail(parts));
        out
    }

    /// Everything before the `## Context` heading.
    pub fn head(&self, parts: &PromptParts<'_>) -> String {
        let mut out = String::new();
        section(&mut out, "Task", parts.intent.trim());
        if let Some(task) = parts.classification {
            let mut line = format!(
                "{} (confidence {:.2})",
                task.task_class.as_str(),
                task.confidence
            );
            if !task.matched_keywords.is_empty() {
                let _ = write!(
                    line,
                    "; matched keywords: {}",
                    task.matched_keywords.join(", ")
                );
            }
            section(&mut out, "Task Classification", &line);
        }
        if !parts.notes.is_empty() {
            section(&mut out, "Notes", &bullets(parts.notes));
        }
        if let Some(spec) = parts.specification.filter(|s| !s.trim().is_empty()) {
            section(&mut out, "Specification", spec.trim_end());
        }
        if let Some(session) = parts.session_context.filter(|s| !s.trim().is_empty()) {
            section(&mut out, "Session context", session.trim_end());
        }
        if let Some(structure) = parts.project_structure.filter(|s| !s.trim().is_empty()) {
            section(&mut out, "Project structure", structure.trim_end());
        }
        if !parts.constraints.is_empty() {
            let key = bullets(&parts.constraints[..parts.constraints.len().min(3)]);
            section(&mut out, "Constraints (key)", &key);
        }
        out
    }

    /// The `## Context` heading line and the blank line after it.
    pub fn context_heading(&self) -> String {
        "## Context\n\n".to_owned()
    }

    /// Everything after the last file block.
    pub fn tail(&self, parts: &PromptParts<'_>) -> String {
        let mut out = String::new();
        if !parts.constraints.is_empty() {
            section(&mut out, "Constraints", &bullets(parts.constraints));
        }
        out
    }

    /// One file's block: `### <path> [<tier name>]` (`[sliced]` for a
    /// slice of its lines), then the body in a fence longer than any backtick
    /// run inside it, then a blank line.
    pub fn file_block(&self, file: &ContextFile) -> String {
        let fence = "`".repeat(longest_backtick_run(&file.body).max(2) + 1);
        let body = file.body.trim_end_matches('\n');
        format!(
            "### {} [{}]\n{fence}{}\n{body}\n{fence}\n\n",
            file.path,
            if file.sliced {
                "sliced"
            } else {
                file.tier.name()
            },
            file.language.fence_tag()
        )
    }
}

fn section(out: &mut String, title: &str, body: &str) {
    let _ = write!(out, "## {title}\n\n{body}\n\n");
}

fn bullets(items: &[String]) -> String {
    items
        .iter()
        .map(|c| format!("- {}", c.trim()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn longest_backtick_run(text: &str) -> usize {
    let mut longest = 0;
    let mut current = 0;
    for byte in text.bytes() {
        if byte == b'`' {
            current += 1;
            longest = longest.max(current);
        } else {
            current = 0;
        }
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intent::IntentClassifier;

    fn file(path: &str, body: &str) -> ContextFile {
        let path = RelativePath::new(path).unwrap();
        ContextFile {
            language: Language::detect(&path),
            path,
            tier: InclusionTier::L0,
            body: body.to_owned(),
            sliced: false,
        }
    }

    #[test]
    fn sections_come_in_fixed_order() {
        let task = IntentClassifier.classify("fix the parser");
        let constraints = vec![
            "one".to_owned(),
            "two".to_owned(),
            "three".to_owned(),
            "four".to_owned(),
        ];
        let parts = PromptParts {
            intent: "fix the parser",
            classification: Some(&task),
            session_context: Some("Steps completed: 1"),
            constraints: &constraints,
            ..PromptParts::default()
        };
        let prompt = PromptAssembler.assemble(&parts, &[file("src/parser.rs", "fn parse() {}\n")]);
        let order = [
            "## Task\n",
            "## Task Classification\n",
            "## Session context\n",
            "## Constraints (key)\n",
            "## Context\n",
            "### src/parser.rs [full]\n```rust\nfn parse() {}\n```\n",
            "## Constraints\n",
        ];
        let mut at = 0;
        for part in order {
            let found = prompt[at..]
                .find(part)
                .unwrap_or_else(|| panic!("{part:?} missing or out of order in\n{prompt}"));
            at += found + part.len();
        }
        assert!(
            prompt.contains("- three\n\n## Context"),
            "key constraints are the first three"
        );
        assert!(prompt.ends_with("- four\n\n"));
    }

    #[test]
    fn intent_is_verbatim() {
        let intent = "Why does `compile()` return <None> & \"fail\"?";
        let prompt = PromptAssembler.assemble(
            &PromptParts {
                intent,
                ..PromptParts::default()
            },
            &[],
        );
        assert!(prompt.contains(intent));
    }

    #[test]
    fn fence_outgrows_backticks_in_body() {
        let block = PromptAssembler.file_block(&file("README.md", "```sh\nls\n```\n"));
        assert!(block.starts_with("### README.md [full]\n````markdown\n```sh"));
        assert!(block.ends_with("```\n````\n\n"));
    }
}
