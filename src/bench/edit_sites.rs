//! Edit sites: the places a task's fix changes, and whether a prompt shows
//! them. "Is the right file ranked high" says little when the file is long
//! and the prompt carries only part of it; this asks whether the lines the
//! fix changes are in the prompt.
//!
//! The fix is a unified diff ([`parse_patch`]): a task's `gold_patch`, the
//! task set's `patches` file, or `git diff COMMIT^ COMMIT -- GOLD_FILES` of
//! the task's `commit` ([`task_patch`]). Only hunks of gold files count, read
//! on the old side (the file as the task's `base_commit` has it).
//!
//! A line is *trivial* ([`is_trivial`]) when, stripped of surrounding
//! whitespace, it is under 6 characters, has no two letters or digits in a
//! row, or is a bare `return`, `else:`, `pass`, `continue`, `break`, `try:`
//! or `finally:` (also with a `;`). A hunk's *removed lines* are its
//! non-trivial `-` lines; its *key lines* ([`Hunk::key_lines`]) are the
//! removed lines plus, when fewer than 3 lines are removed, up to 2
//! non-trivial context lines on each side of the change (the nearest ones
//! before its first and after its last `+`/`-` line), so an insertion-only
//! hunk is placed by its context.
//!
//! A hunk is *covered* by a prompt ([`Hunk::is_covered`]) when its file has
//! a block in the prompt (any tier, [`metrics::file_block_lines`]) and, lines
//! compared stripped: every removed line is among the block's lines, and at
//! least half of the key lines are. A hunk with no key line at all (all its
//! lines trivial) is covered when its file has a block. Lines are compared
//! as sets: where in the block a line stands is not checked.
//!
//! Per prompt ([`EditSites`]): hunks, hunks covered, hunk coverage (covered
//! ÷ hunks), all hunks covered, tokens per covered hunk (prompt tokens ÷
//! covered hunks, `None` when none is covered).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::bench::checkout;
use crate::bench::metrics;
use crate::bench::quality::Task;

/// Lines (stripped) that carry no place in the code on their own, whatever
/// their length.
const BARE_LINES: [&str; 10] = [
    "return",
    "return;",
    "else:",
    "pass",
    "continue",
    "continue;",
    "break",
    "break;",
    "try:",
    "finally:",
];

/// The most context lines on each side of a change that become key lines.
const CONTEXT_KEY_LINES: usize = 2;

/// Fewer removed lines than this, and context lines join the key lines.
const FEW_REMOVED: usize = 3;

/// What a line of a hunk is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// ` `: in both the old and the new file.
    Context,
    /// `-`: only in the old file.
    Removed,
    /// `+`: only in the new file.
    Added,
}

/// One hunk of a unified diff, on the old side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    /// The old file's path (repository-relative, `a/` dropped).
    pub path: String,
    /// The hunk's first old line, 1-based (for an insertion into an empty
    /// range, the line after which it goes, as the header says).
    pub old_start: usize,
    /// Old lines the hunk spans (context and removed).
    pub old_count: usize,
    /// The hunk's lines in order, without their `+`/`-`/` ` mark.
    pub lines: Vec<(LineKind, String)>,
}

impl Hunk {
    /// `path:first-last` in old lines (`path:line` for one line, `path:+N`
    /// for an insertion into an empty range after line N).
    pub fn location(&self) -> String {
        match self.old_count {
            0 => format!("{}:+{}", self.path, self.old_start),
            1 => format!("{}:{}", self.path, self.old_start),
            count => format!(
                "{}:{}-{}",
                self.path,
                self.old_start,
                self.old_start + count - 1
            ),
        }
    }

    /// The non-trivial removed lines, stripped, in order.
    pub fn removed(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|(kind, _)| *kind == LineKind::Removed)
            .map(|(_, text)| text.trim())
            .filter(|text| !is_trivial(text))
            .collect()
    }

    /// The removed lines, then — when fewer than 3 — up to 2 non-trivial
    /// context lines before the change (nearest first) and up to 2 after it;
    /// stripped.
    pub fn key_lines(&self) -> Vec<&str> {
        let mut key = self.removed();
        if key.len() >= FEW_REMOVED {
            return key;
        }
        let changed = |(kind, _): &&(LineKind, String)| *kind != LineKind::Context;
        let (Some(first), Some(last)) = (
            self.lines.iter().position(|line| changed(&line)),
            self.lines.iter().rposition(|line| changed(&line)),
        ) else {
            return key;
        };
        let context = |line: &&(LineKind, String)| line.0 == LineKind::Context;
        let useful = |text: &&str| !is_trivial(text);
        key.extend(
            self.lines[..first]
                .iter()
                .rev()
                .filter(context)
                .map(|(_, text)| text.trim())
                .filter(useful)
                .take(CONTEXT_KEY_LINES),
        );
        key.extend(
            self.lines[last + 1..]
                .iter()
                .filter(context)
                .map(|(_, text)| text.trim())
                .filter(useful)
                .take(CONTEXT_KEY_LINES),
        );
        key
    }

    /// Whether a file block whose stripped lines are `block` shows this hunk
    /// (`None`: the file has no block); see the module docs.
    pub fn is_covered(&self, block: Option<&HashSet<&str>>) -> bool {
        let Some(block) = block else {
            return false;
        };
        if !self.removed().iter().all(|line| block.contains(line)) {
            return false;
        }
        let key = self.key_lines();
        let present = key.iter().filter(|line| block.contains(*line)).count();
        2 * present >= key.len()
    }
}

/// Whether a stripped line is too common to place an edit (see the module
/// docs).
pub fn is_trivial(stripped: &str) -> bool {
    let mut previous = false;
    let mut two_in_a_row = false;
    for c in stripped.chars() {
        let alphanumeric = c.is_alphanumeric();
        if alphanumeric && previous {
            two_in_a_row = true;
            break;
        }
        previous = alphanumeric;
    }
    stripped.chars().count() < 6 || !two_in_a_row || BARE_LINES.contains(&stripped)
}

/// The hunks of a unified diff, in order. A file's path is read from its
/// `--- a/PATH` line (`/dev/null`, a new file, has no old side: its hunks are
/// dropped); a hunk runs for the line counts its `@@ -A,B +C,D @@` header
/// gives, so removed lines that look like headers are read as lines. `\ No
/// newline at end of file` lines are skipped; an empty line inside a hunk is
/// an empty context line. Anything else (binary notes, mode lines) is
/// ignored.
pub fn parse_patch(patch: &str) -> Vec<Hunk> {
    let mut hunks = Vec::new();
    let mut old_path: Option<String> = None;
    let mut lines = patch.lines().map(|l| l.strip_suffix('\r').unwrap_or(l));
    while let Some(line) = lines.next() {
        if line.starts_with("diff ") {
            old_path = None;
        } else if let Some(old) = line.strip_prefix("--- ") {
            old_path = diff_path(old);
        } else if let Some(header) = line.strip_prefix("@@ -") {
            let Some((old_start, old_count, new_count)) = hunk_header(header) else {
                continue;
            };
            let (mut old_left, mut new_left) = (old_count, new_count);
            let mut body = Vec::new();
            while old_left > 0 || new_left > 0 {
                let Some(line) = lines.next() else {
                    break;
                };
                let (kind, text) = match line.chars().next() {
                    Some('\\') => continue,
                    Some('-') => (LineKind::Removed, &line[1..]),
                    Some('+') => (LineKind::Added, &line[1..]),
                    Some(' ') => (LineKind::Context, &line[1..]),
                    None => (LineKind::Context, ""),
                    Some(_) => break,
                };
                if kind != LineKind::Added {
                    old_left = old_left.saturating_sub(1);
                }
                if kind != LineKind::Removed {
                    new_left = new_left.saturating_sub(1);
                }
                body.push((kind, text.to_owned()));
            }
            if let Some(path) = &old_path {
                hunks.push(Hunk {
                    path: path.clone(),
                    old_start,
                    old_count,
                    lines: body,
                });
            }
        }
    }
    hunks
}

/// The path of a `---` line: a trailing tab and timestamp dropped, quotes
/// dropped, then the `a/` prefix; `None` for `/dev/null`.
fn diff_path(text: &str) -> Option<String> {
    let text = text.split('\t').next().unwrap_or(text).trim_end();
    let text = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    if text == "/dev/null" {
        return None;
    }
    Some(text.strip_prefix("a/").unwrap_or(text).to_owned())
}

/// `A,B +C,D @@…` → `(A, B, D)`; a missing count is 1.
fn hunk_header(header: &str) -> Option<(usize, usize, usize)> {
    let (ranges, _) = header.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |text: &str| -> Option<(usize, usize)> {
        match text.split_once(',') {
            Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
            None => Some((text.parse().ok()?, 1)),
        }
    };
    let (old_start, old_count) = range(old)?;
    let (_, new_count) = range(new)?;
    Some((old_start, old_count, new_count))
}

/// Where a task's fix came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchSource {
    /// The task line's `gold_patch` (or the set's `patches` file, joined by id).
    GoldPatch,
    /// `git diff COMMIT^ COMMIT` of the task's `commit`.
    Commit,
}

impl PatchSource {
    /// Its name in `results.json`.
    pub fn name(self) -> &'static str {
        match self {
            Self::GoldPatch => "gold_patch",
            Self::Commit => "commit",
        }
    }
}

/// The task's fix as a unified diff: its `gold_patch`, else `git diff
/// COMMIT^ COMMIT -- GOLD_FILES` of its `commit`, run in `git_dir` (the
/// clone, or a worktree of it); `None` when the task has neither.
///
/// # Errors
///
/// The `git diff` failure, as text (a commit the clone lacks, a missing blob).
pub fn task_patch(task: &Task, git_dir: &Path) -> Option<Result<(PatchSource, String), String>> {
    if let Some(patch) = &task.gold_patch {
        return Some(Ok((PatchSource::GoldPatch, patch.clone())));
    }
    let commit = task.commit.as_deref()?;
    let parent = format!("{commit}^");
    let mut args = vec![
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-renames",
        "--diff-algorithm=myers",
        "-U3",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        parent.as_str(),
        commit,
        "--",
    ];
    let gold = metrics::unique(&task.gold_files);
    args.extend(gold.iter().map(String::as_str));
    Some(
        checkout::git(git_dir, &args, None)
            .map(|out| {
                (
                    PatchSource::Commit,
                    String::from_utf8_lossy(&out).into_owned(),
                )
            })
            .map_err(|error| format!("{error:#}")),
    )
}

/// The hunks of `patch` in `gold` files, in patch order.
pub fn gold_hunks(patch: &str, gold: &[String]) -> Vec<Hunk> {
    parse_patch(patch)
        .into_iter()
        .filter(|hunk| gold.contains(&hunk.path))
        .collect()
}

/// How one prompt shows a task's edit sites.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditSites {
    /// The fix's hunks in gold files (at least 1).
    pub hunks: usize,
    /// Hunks covered.
    pub hunks_covered: usize,
    /// `hunksCovered ÷ hunks`, in `[0, 1]`.
    pub hunk_coverage: f64,
    /// Every hunk covered.
    pub all_hunks_covered: bool,
    /// `promptTokens ÷ hunksCovered`; `null` when no hunk is covered.
    pub tokens_per_covered_hunk: Option<f64>,
    /// Tokens of the prompt (cl100k).
    pub prompt_tokens: u64,
    /// The budget the prompt was packed to, when it is not the manifest's
    /// (the `chunk-bm25` baseline at `default`: aic's prompt tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u64>,
    /// Per hunk, in the order of the task's `hunks`, whether it is covered.
    pub covered: Vec<bool>,
}

/// Measures how a prompt whose file blocks have the code lines `blocks`
/// (`path → lines`) and `prompt_tokens` tokens shows `hunks`; `None` when
/// there are no hunks.
pub fn measure(
    hunks: &[Hunk],
    blocks: &BTreeMap<String, Vec<String>>,
    prompt_tokens: u64,
) -> Option<EditSites> {
    if hunks.is_empty() {
        return None;
    }
    let mut sets: BTreeMap<&str, HashSet<&str>> = BTreeMap::new();
    for hunk in hunks {
        if let Some(lines) = blocks.get(&hunk.path) {
            sets.entry(hunk.path.as_str())
                .or_insert_with(|| lines.iter().map(|line| line.trim()).collect());
        }
    }
    let covered: Vec<bool> = hunks
        .iter()
        .map(|hunk| hunk.is_covered(sets.get(hunk.path.as_str())))
        .collect();
    let hunks_covered = covered.iter().filter(|c| **c).count();
    Some(EditSites {
        hunks: hunks.len(),
        hunks_covered,
        hunk_coverage: hunks_covered as f64 / hunks.len() as f64,
        all_hunks_covered: hunks_covered == hunks.len(),
        tokens_per_covered_hunk: (hunks_covered > 0)
            .then(|| prompt_tokens as f64 / hunks_covered as f64),
        prompt_tokens,
        budget_tokens: None,
        covered,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "diff --git a/src/rules.py b/src/rules.py
index 1111111..2222222 100644
--- a/src/rules.py
+++ b/src/rules.py
@@ -10,7 +10,7 @@ def lint(segment):
     if segment.is_whitespace:
         return None
     anchor = segment.anchor
-    description = \"Avoid aliases\"
+    description = \"Avoid aliases in joins\"
     fixes = make_fixes(anchor)
     return LintResult(anchor, fixes)
 
@@ -40,4 +40,5 @@ class Rule:
     def first(self):
         return self.items[0]
+
+    -- a line that looks like a header
-- a/ removed header-like line
 
diff --git a/new.py b/new.py
new file mode 100644
--- /dev/null
+++ b/new.py
@@ -0,0 +1 @@
+x = 1
";

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|&s| s.to_owned()).collect()
    }

    #[test]
    fn parses_hunks_by_their_counts() {
        let hunks = parse_patch(PATCH);
        assert_eq!(hunks.len(), 2, "{hunks:#?}");
        assert_eq!(hunks[0].path, "src/rules.py");
        assert_eq!(hunks[0].location(), "src/rules.py:10-16");
        assert_eq!(hunks[0].lines.len(), 8);
        assert_eq!(
            hunks[1].lines.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            [
                LineKind::Context,
                LineKind::Context,
                LineKind::Added,
                LineKind::Added,
                LineKind::Removed,
                LineKind::Context
            ]
        );
        assert_eq!(hunks[1].removed(), ["- a/ removed header-like line"]);
        assert_eq!(hunk_header("5 +5,2 @@"), Some((5, 1, 2)));
        assert_eq!(
            gold_hunks(PATCH, &strings(&["other.py"])),
            Vec::<Hunk>::new()
        );
    }

    #[test]
    fn trivial_lines() {
        for line in [
            "return", "else:", "pass", "})", "x = 1", "finally:", "break;", "} } }",
        ] {
            assert!(is_trivial(line), "{line}");
        }
        for line in ["return x", "if not text:", "fixes = []", "} else {"] {
            assert!(!is_trivial(line), "{line}");
        }
    }

    #[test]
    fn key_lines_add_context_when_few_are_removed() {
        let hunks = parse_patch(PATCH);
        // One removed line: 2 context lines before it, nearest first
        // (`return None` is not trivial), 2 after.
        assert_eq!(
            hunks[0].key_lines(),
            [
                "description = \"Avoid aliases\"",
                "anchor = segment.anchor",
                "return None",
                "fixes = make_fixes(anchor)",
                "return LintResult(anchor, fixes)",
            ]
        );
        let insertion = parse_patch(
            "--- a/f.py\n+++ b/f.py\n@@ -1,4 +1,5 @@\n def f():\n     pass\n+    log()\n     return\n x = 10\n",
        );
        // Trivial context (`pass`, `return`) is skipped.
        assert_eq!(insertion[0].key_lines(), ["def f():", "x = 10"]);
    }

    #[test]
    fn coverage_on_a_hand_made_prompt() {
        let hunks = parse_patch(PATCH);
        let prompt = "### src/rules.py [full]\n```python\n[sliced: kept lines 10-16 of 60; the other 53 lines are left out]\n\
                      … lines 1–9 cut (9 lines) …\n    anchor = segment.anchor\n    description = \"Avoid aliases\"\n\
                      … lines 14–60 cut (47 lines) …\n```\n";
        let blocks = metrics::file_block_lines(prompt);
        let sites = measure(&hunks, &blocks, 300).unwrap();
        // Hunk 1: its removed line and 2 of its 5 key lines — under half.
        // Hunk 2: its removed line is absent.
        assert_eq!(sites.covered, [false, false]);
        assert_eq!(sites.tokens_per_covered_hunk, None);

        let prompt = prompt.replace(
            "    description",
            "    fixes = make_fixes(anchor)\n    description",
        );
        let sites = measure(&hunks, &metrics::file_block_lines(&prompt), 300).unwrap();
        assert_eq!(sites.covered, [true, false]);
        assert!((sites.hunk_coverage - 0.5).abs() < 1e-9);
        assert!(!sites.all_hunks_covered);
        assert_eq!(sites.tokens_per_covered_hunk, Some(300.0));

        // A file without a block covers nothing; no hunks, no measure.
        let none = measure(&hunks, &BTreeMap::new(), 10).unwrap();
        assert_eq!(none.hunks_covered, 0);
        assert!(measure(&[], &blocks, 10).is_none());
    }

    #[test]
    fn an_all_trivial_hunk_needs_only_its_file() {
        let hunks = parse_patch("--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n-pass\n+x = 2\n }\n");
        assert!(hunks[0].key_lines().is_empty());
        assert!(!hunks[0].is_covered(None));
        assert!(hunks[0].is_covered(Some(&HashSet::new())));
    }
}
