//! LineMap: which line of the file on disk each line of a file's transformed
//! text (its L0 render) came from.
//!
//! Transforms drop lines (comments, licence headers, runs of blank lines) and
//! shorten others (a trailing comment, a long string), but never reorder
//! them. So every kept line is an original line, possibly cut short, and the
//! lines of the L0 text map to strictly increasing lines on disk. A slice, a
//! marker or a `path:line` reference shows the disk line, never the index in
//! the transformed text: an agent that opens the file must land on the line
//! the prompt names.
//!
//! The map is stored as runs: each run says "L0 line `l0` is disk line
//! `disk`, and the lines after it follow one for one until the next run".
//! A file no transform changed has no run at all (the identity).
//!
//! # Example
//!
//! ```
//! use aic_stages::fit::line_map::LineMap;
//!
//! let disk = "# licence\n# more\nimport os\n\n\n\ndef f():  # why\n    return 1\n";
//! let l0 = "import os\n\ndef f():\n    return 1\n";
//! let map = LineMap::align(disk, l0);
//! // One-based disk lines of the zero-based L0 lines.
//! assert_eq!(map.disk_line(0), 3);
//! assert_eq!(map.disk_line(2), 7);
//! assert_eq!(map.disk_line(3), 8);
//! assert_eq!(map.l0_index(7), Some(2));
//! assert_eq!(map.l0_index(1), None);
//! ```

use serde::Serialize;

/// How many disk lines past the last match the aligner looks for a line that
/// was shortened (a trailing comment or a long string cut) before it gives
/// the L0 line the next disk line.
const SHORTENED_LOOKAHEAD: usize = 400;

/// How many disk lines past the last match the aligner looks for an equal
/// line: more than any comment block a transform drops, and a bound on the
/// work for a file whose every line changed.
const EQUAL_LOOKAHEAD: usize = 2_000;

/// The disk line of every line of a transformed text; see the module docs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LineMap {
    /// `(l0 index, disk line)` pairs, zero-based L0 index and one-based disk
    /// line, sorted by both; empty for the identity.
    runs: Vec<(u32, u32)>,
}

impl LineMap {
    /// The identity: L0 line `i` is disk line `i + 1`.
    pub fn identity() -> Self {
        Self::default()
    }

    /// A map from its stored runs (see [`LineMap::runs`]); runs that are not
    /// strictly increasing in both lines are dropped from the first such run
    /// on, so a damaged row still maps monotonically.
    pub fn from_runs(runs: Vec<(u32, u32)>) -> Self {
        let mut kept: Vec<(u32, u32)> = Vec::with_capacity(runs.len());
        for run in runs {
            if let Some(last) = kept.last()
                && (run.0 <= last.0 || run.1 <= last.1)
            {
                break;
            }
            kept.push(run);
        }
        Self { runs: kept }
    }

    /// The stored runs: `(zero-based L0 index, one-based disk line)`.
    pub fn runs(&self) -> &[(u32, u32)] {
        &self.runs
    }

    /// Whether every L0 line is the disk line of the same number.
    pub fn is_identity(&self) -> bool {
        self.runs.iter().all(|&(l0, disk)| disk == l0 + 1)
    }

    /// Aligns `transformed` (the L0 text) with `original` (the text on disk,
    /// after redaction): each transformed line is matched to the first later
    /// disk line equal to it (trailing whitespace ignored), else to the first
    /// later disk line it is a shortened form of (the same start, at least
    /// half of the line), else to the next disk line.
    pub fn align(original: &str, transformed: &str) -> Self {
        if original == transformed {
            return Self::identity();
        }
        let disk: Vec<&str> = original.lines().map(str::trim_end).collect();
        let shown: Vec<&str> = transformed.lines().map(str::trim_end).collect();
        let mut runs: Vec<(u32, u32)> = Vec::new();
        // The next disk index a transformed line may take.
        let mut next = 0usize;
        let mut expected: Option<u32> = None;
        for (index, line) in shown.iter().enumerate() {
            let at = if line.is_empty() {
                disk[next.min(disk.len())..]
                    .iter()
                    .take(3)
                    .position(|d| d.is_empty())
                    .map_or(next, |offset| next + offset)
            } else {
                nearest_match(&disk, &shown, index, next).unwrap_or(next)
            };
            let disk_line = u32::try_from(at + 1).unwrap_or(u32::MAX);
            let l0 = u32::try_from(index).unwrap_or(u32::MAX);
            if expected != Some(disk_line) {
                runs.push((l0, disk_line));
            }
            expected = Some(disk_line.saturating_add(1));
            next = at + 1;
        }
        let map = Self { runs };
        if map.is_identity() {
            Self::identity()
        } else {
            map
        }
    }

    /// The one-based disk line of the zero-based L0 line `index`.
    pub fn disk_line(&self, index: usize) -> usize {
        let index32 = u32::try_from(index).unwrap_or(u32::MAX);
        match self.runs.partition_point(|&(l0, _)| l0 <= index32) {
            0 => index + 1,
            at => {
                let (l0, disk) = self.runs[at - 1];
                disk as usize + (index - l0 as usize)
            }
        }
    }

    /// The zero-based L0 index that shows the one-based disk line `line`, or
    /// `None` when that line is not in the L0 text (a stripped comment).
    pub fn l0_index(&self, line: usize) -> Option<usize> {
        if line == 0 {
            return None;
        }
        let line32 = u32::try_from(line).unwrap_or(u32::MAX);
        match self.runs.partition_point(|&(_, disk)| disk <= line32) {
            0 if self.runs.is_empty() => Some(line - 1),
            0 => {
                let (l0, disk) = self.runs[0];
                (l0 > 0 && (line as u64) < u64::from(disk))
                    .then_some(line - 1)
                    .filter(|&index| index < l0 as usize)
            }
            at => {
                let (l0, disk) = self.runs[at - 1];
                let index = l0 as usize + (line - disk as usize);
                // The run ends where the next one starts.
                let end = self
                    .runs
                    .get(at)
                    .map_or(usize::MAX, |&(next, _)| next as usize);
                (index < end).then_some(index)
            }
        }
    }

    /// The nearest L0 index at or after the disk line `line` (the first L0
    /// line after a stripped comment), or the last index when none follows.
    pub fn l0_index_at_or_after(&self, line: usize, l0_lines: usize) -> Option<usize> {
        if l0_lines == 0 {
            return None;
        }
        // Disk lines grow with the index: the first index at or after
        // `line` by bisection.
        let (mut low, mut high) = (0, l0_lines);
        while low < high {
            let middle = low + (high - low) / 2;
            if self.disk_line(middle) >= line {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        Some(low.min(l0_lines - 1))
    }
}

/// Whether the shown line is the disk line, or the disk line cut short.
fn same_line(disk: &str, shown: &str) -> bool {
    disk == shown || shortened(disk, shown)
}

/// The disk index, at or after `from`, of the shown line `index`: the
/// nearest disk line it is (or is a shortened form of). A match more than a
/// few lines ahead must be confirmed by the next two shown lines following
/// it closely, so a common line (`return rv`) does not jump to a copy of
/// itself far below.
fn nearest_match(disk: &[&str], shown: &[&str], index: usize, from: usize) -> Option<usize> {
    let line = shown[index];
    let window = disk
        .get(from..)?
        .iter()
        .take(EQUAL_LOOKAHEAD.max(SHORTENED_LOOKAHEAD));
    for (offset, candidate) in window.enumerate() {
        let equal = *candidate == line;
        if !equal && (offset >= SHORTENED_LOOKAHEAD || !shortened(candidate, line)) {
            continue;
        }
        let at = from + offset;
        if offset <= 8 || confirmed(disk, shown, index, at) {
            return Some(at);
        }
    }
    None
}

/// Whether the two non-blank shown lines after `index` match disk lines
/// closely after `at`, in order.
fn confirmed(disk: &[&str], shown: &[&str], index: usize, at: usize) -> bool {
    let mut cursor = at + 1;
    let following = shown[index + 1..]
        .iter()
        .filter(|line| !line.trim().is_empty())
        .take(2);
    let mut checked = 0;
    for line in following {
        let Some(found) = disk
            .get(cursor..)
            .and_then(|rest| rest.iter().take(12).position(|d| same_line(d, line)))
        else {
            return false;
        };
        cursor += found + 1;
        checked += 1;
    }
    checked > 0 || at + 1 >= disk.len()
}

/// Whether `short` is `long` cut short: a comment or string cut off its end
/// (the start kept, at least half of the line or 12 characters).
fn shortened(long: &str, short: &str) -> bool {
    let short = short.trim_end();
    let long = long.trim_end();
    if short.len() >= long.len() || short.trim().is_empty() {
        return false;
    }
    let shared = long
        .bytes()
        .zip(short.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    // The indentation is not evidence: `    if (` is not a shortened
    // `    // a comment` because both start with four spaces.
    let indent = short.len() - short.trim_start().len();
    let (shared, content) = (shared.saturating_sub(indent), short.len() - indent);
    shared >= content.min(12).max(content / 2) && shared * 2 >= content
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stripped_comment_is_not_the_short_line_after_it() {
        // vite's importAnalysis.ts: the comment goes, `if (` stays; the
        // shared indentation must not make `if (` a shortened comment.
        let disk = "      if (x) {\n        // further analyze accepted modules\n        if (\n          y\n        ) {\n          // transform it\n          // e.g. this\n          const {\n            imports,\n          } = z\n        }\n      }\n";
        let shown = "      if (x) {\n        if (\n          y\n        ) {\n          const {\n            imports,\n          } = z\n        }\n      }\n";
        let map = LineMap::align(disk, shown);
        let disk_lines: Vec<&str> = disk.lines().collect();
        for (index, line) in shown.lines().enumerate() {
            assert_eq!(
                disk_lines[map.disk_line(index) - 1],
                line,
                "shown line {index}"
            );
        }
    }

    #[test]
    fn an_unchanged_text_is_the_identity() {
        let text = "a\nb\n";
        let map = LineMap::align(text, text);
        assert!(map.runs().is_empty());
        assert_eq!(map.disk_line(1), 2);
        assert_eq!(map.l0_index(2), Some(1));
    }

    #[test]
    fn dropped_and_shortened_lines_keep_the_disk_numbers() {
        let disk = "\"\"\"Module doc.\"\"\"\n# a comment\nimport os  # the os\n\n\n\n\nx = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'\n# more\ndef f():\n    return x\n";
        let l0 = "\"\"\"Module doc.\"\"\"\nimport os\n\nx = 'aaaaaaaaaaaaaaaaaaaa…'\ndef f():\n    return x\n";
        let map = LineMap::align(disk, l0);
        let lines: Vec<usize> = (0..6).map(|i| map.disk_line(i)).collect();
        assert_eq!(lines, [1, 3, 4, 8, 10, 11]);
        assert_eq!(map.l0_index(10), Some(4));
        assert_eq!(map.l0_index(2), None);
        assert_eq!(map.l0_index(9), None);
        assert_eq!(map.l0_index_at_or_after(9, 6), Some(4));
        let stored = LineMap::from_runs(map.runs().to_vec());
        assert_eq!(stored, map);
    }

    #[test]
    fn damaged_runs_stay_monotonic() {
        let map = LineMap::from_runs(vec![(0, 3), (2, 9), (1, 20)]);
        assert_eq!(map.runs(), [(0, 3), (2, 9)]);
    }
}
