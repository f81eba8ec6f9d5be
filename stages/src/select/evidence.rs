//! Direct evidence: the names an intent writes in code form
//! ([`crate::select::intent_text::Mention`]) and the frames of a pasted stack trace
//! ([`crate::select::stack_trace::TraceFrame`]), mapped to repository files.
//!
//! Both are stronger signs than any word overlap: a report that writes
//! `fields.DateTime` or pastes `File ".../marshmallow/fields.py", line 1117`
//! has said which file it is about. Each gives a signal in `[0, 1]` per
//! candidate:
//!
//! - **mention**: a name matches a file when the file defines it (exact name,
//!   letter case aside), when it is the file's stem (`L031` → `L031.py`), or,
//!   for a dotted name, when a prefix of it is the file's module path
//!   (`pvlib.irradiance.reindl` → `pvlib/irradiance.py`). A name that matches
//!   *k* files gives each `section weight ÷ k` (names defined in more than
//!   [`MAX_NAME_FILES`] files are too common to say anything); a file sums
//!   its names and the signal is that sum ÷ 1.5, capped at 1, so one unique
//!   name in the title or in backticks is full evidence and one in a pasted
//!   code block about half of it.
//! - **trace**: a frame's path is matched to the file whose path ends with
//!   the longest run of the frame's trailing components, after dropping what
//!   precedes `site-packages/`, `dist-packages/` or `node_modules/<name>/`
//!   (an installed copy of the project is the project); a frame in an
//!   installed package or in Python's own library (`lib/python3.11/`) maps
//!   only with more than its file name in common (`site-packages/rich/utils.py`
//!   is not the project's `click/utils.py`). Within each trace the
//!   frames that map to files are counted from the innermost outwards: the
//!   innermost scores 1.0 and each step out 0.2 less, down to 0.4. A frame
//!   that names only a file name shared by several files is ambiguous and
//!   ignored.
//!
//! Each also names the *anchors* in a file — the functions and lines the
//! evidence points at — which the fit phase keeps when it slices the file.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::repo_map::FileEntry;
use crate::select::intent_text::Mention;
use crate::select::stack_trace::TraceFrame;
use crate::select::symbols::name_id;

/// A name defined in more files than this matches too much to be evidence.
pub const MAX_NAME_FILES: usize = 25;

/// What the evidence points at inside a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Anchors {
    /// Names to keep: functions of trace frames, defined names the intent
    /// mentions.
    pub names: Vec<String>,
    /// 1-based lines of trace frames.
    pub lines: Vec<u32>,
}

impl Anchors {
    /// Whether nothing is anchored.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.lines.is_empty()
    }
}

/// Candidates by lower-cased file stem and by file name, for name and frame
/// lookups: only the stems and names the evidence asks for, so building it
/// costs one pass over the candidates without an allocation per file.
struct FileIndex {
    by_stem: HashMap<String, Vec<usize>>,
    by_name: HashMap<String, Vec<usize>>,
}

impl FileIndex {
    /// The index of `files` for the lower-cased `stems` and the file
    /// `names` a lookup may ask for; any other key finds nothing.
    fn new(files: &[&FileEntry], stems: &[String], names: &[&str]) -> Self {
        let wanted = |text: &str| stems.iter().find(|stem| lower_eq(text, stem));
        // The keys of each file, found in parallel (most files have none);
        // filed in index order, so each key's list is ascending.
        let found: Vec<(usize, FileKeys<'_>)> = files
            .par_iter()
            .enumerate()
            .filter_map(|(index, file)| {
                let name = file.path.file_name();
                let stem = name.split('.').next().unwrap_or(name);
                // A package's `__init__.py`, `index.ts` or `mod.rs` stands
                // for its directory.
                let package = if ["__init__", "index", "mod"]
                    .iter()
                    .any(|package| lower_eq(stem, package))
                    && let Some((directory, _)) = file.path.as_str().rsplit_once('/')
                {
                    wanted(directory.rsplit('/').next().unwrap_or(directory))
                } else {
                    None
                };
                let keys = FileKeys {
                    name: names.contains(&name).then_some(name),
                    package,
                    stem: wanted(stem),
                };
                (keys.name.is_some() || keys.package.is_some() || keys.stem.is_some())
                    .then_some((index, keys))
            })
            .collect();
        let mut by_stem: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        for (index, keys) in found {
            if let Some(name) = keys.name {
                by_name.entry(name.to_owned()).or_default().push(index);
            }
            for key in [keys.package, keys.stem].into_iter().flatten() {
                by_stem.entry(key.clone()).or_default().push(index);
            }
        }
        Self { by_stem, by_name }
    }
}

/// The keys one file is filed under in a [`FileIndex`].
struct FileKeys<'a> {
    /// Its file name, when a lookup asks for it.
    name: Option<&'a str>,
    /// Its directory's stem, for a package's `__init__`/`index`/`mod` file.
    package: Option<&'a String>,
    /// Its own stem.
    stem: Option<&'a String>,
}

/// Whether `text` lower-cased is `lower`, without allocating for ASCII text.
fn lower_eq(text: &str, lower: &str) -> bool {
    if text.is_ascii() {
        text.len() == lower.len()
            && text
                .bytes()
                .zip(lower.bytes())
                .all(|(a, b)| a.to_ascii_lowercase() == b)
    } else {
        text.to_lowercase() == lower
    }
}

/// The path of a file without its extension, lower-cased, with a package's
/// `__init__`/`index`/`mod` file standing for its directory.
fn module_path(file: &FileEntry) -> String {
    let path = file.path.as_str();
    let without = path.rsplit_once('.').map_or(path, |(stem, _)| stem);
    let without = ["/__init__", "/index", "/mod"]
        .iter()
        .find_map(|suffix| without.strip_suffix(suffix))
        .unwrap_or(without);
    without.to_lowercase()
}

/// Files matched by one mention, with the share each gets, and the name to
/// anchor in each.
fn mention_matches(
    mention: &Mention,
    files: &[&FileEntry],
    index: &FileIndex,
) -> Vec<(usize, f64, Option<String>)> {
    let parts: Vec<&str> = mention.name.split('.').filter(|p| !p.is_empty()).collect();
    let Some(last) = parts.last() else {
        return Vec::new();
    };
    let mut matched: Vec<(usize, f64, Option<String>)> = Vec::new();
    // A dotted name's longest prefix that is a module path.
    if parts.len() >= 2 {
        for length in (1..=parts.len()).rev() {
            let module = parts[..length].join("/").to_lowercase();
            let stem = parts[length - 1].to_lowercase();
            let Some(candidates) = index.by_stem.get(&stem) else {
                continue;
            };
            let found: Vec<usize> = candidates
                .iter()
                .copied()
                .filter(|&i| {
                    let path = module_path(files[i]);
                    path == module || path.ends_with(&format!("/{module}"))
                })
                .collect();
            // A one-part "module" is only a stem; it counts when it is unique
            // enough.
            if found.is_empty() || (length == 1 && found.len() > 3) {
                continue;
            }
            let share = 1.0 / found.len() as f64;
            let anchor = parts.get(length).map(|p| (*p).to_owned());
            matched.extend(found.into_iter().map(|i| (i, share, anchor.clone())));
            break;
        }
    }
    // The last part as a defined name or a file stem.
    let id = name_id(last);
    let lower = last.to_lowercase();
    let mut definers: Vec<usize> = files
        .iter()
        .enumerate()
        .filter(|(_, f)| f.name_ids.binary_search(&id).is_ok())
        .map(|(i, _)| i)
        .collect();
    if let Some(stems) = index.by_stem.get(&lower) {
        for &i in stems {
            if !definers.contains(&i) {
                definers.push(i);
            }
        }
    }
    if !definers.is_empty() && definers.len() <= MAX_NAME_FILES {
        let share = 1.0 / definers.len() as f64;
        for i in definers {
            matched.push((i, share, Some((*last).to_owned())));
        }
    }
    matched
}

/// The mention signal of each candidate (same order as `files`) and the
/// names each should keep when sliced.
pub fn mention_relevance(mentions: &[Mention], files: &[&FileEntry]) -> (Vec<f64>, Vec<Anchors>) {
    let mut anchors = vec![Anchors::default(); files.len()];
    let scores = mentions_scored(mentions, files, Some(&mut anchors));
    (scores, anchors)
}

/// [`mention_relevance`]'s scores alone: what a selection over every
/// candidate needs (no [`Anchors`] per file made and freed).
pub fn mention_scores(mentions: &[Mention], files: &[&FileEntry]) -> Vec<f64> {
    mentions_scored(mentions, files, None)
}

/// The mention signal of each file, and its anchors into `anchors` (one per
/// file) when given.
fn mentions_scored(
    mentions: &[Mention],
    files: &[&FileEntry],
    mut anchors: Option<&mut [Anchors]>,
) -> Vec<f64> {
    let mut scores = vec![0.0; files.len()];
    if mentions.is_empty() || files.is_empty() {
        return scores;
    }
    // Every part of a mention, lower-cased, is a stem a lookup may ask for.
    let mut stems: Vec<String> = mentions
        .iter()
        .flat_map(|mention| mention.name.split('.'))
        .filter(|part| !part.is_empty())
        .map(str::to_lowercase)
        .collect();
    stems.sort_unstable();
    stems.dedup();
    let index = FileIndex::new(files, &stems, &[]);
    for mention in mentions {
        let weight = mention.section.weight();
        for (file, share, anchor) in mention_matches(mention, files, &index) {
            scores[file] += weight * share;
            if let (Some(anchor), Some(anchors)) = (anchor, anchors.as_deref_mut())
                && !anchors[file].names.contains(&anchor)
            {
                anchors[file].names.push(anchor);
            }
        }
    }
    scores.into_iter().map(|s| (s / 1.5).min(1.0)).collect()
}

/// The repository-relative tail of a frame's path: what follows an installed
/// package directory, else the path itself; its components.
fn frame_components(path: &str) -> FrameComponents<'_> {
    let mut tail = path;
    let mut library = false;
    for marker in ["site-packages/", "dist-packages/"] {
        if let Some(at) = tail.rfind(marker) {
            tail = &tail[at + marker.len()..];
            library = true;
        }
    }
    if let Some(at) = tail.rfind("node_modules/") {
        let rest = &tail[at + "node_modules/".len()..];
        // `node_modules/@scope/name/…` or `node_modules/name/…`.
        let skip = if rest.starts_with('@') { 2 } else { 1 };
        tail = rest.splitn(skip + 1, '/').nth(skip).unwrap_or(rest);
        library = true;
    }
    let components: Vec<&str> = tail
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    // Python's standard library (`/usr/lib/python3.11/pathlib.py`,
    // `…/lib/python3.12/json/decoder.py`) outside any package directory.
    library |= !library
        && components
            .windows(2)
            .any(|pair| pair[0].starts_with("lib") && is_python_directory(pair[1]));
    FrameComponents {
        components,
        library,
    }
}

/// `python3.11`, `python3`, `python2.7`: a Python installation's library
/// directory under `lib`.
fn is_python_directory(component: &str) -> bool {
    component
        .strip_prefix("python")
        .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()))
}

/// A frame's path as the components that may match a repository path.
struct FrameComponents<'a> {
    /// The path's components after any installed-package prefix.
    components: Vec<&'a str>,
    /// The frame is in an installed package (after `site-packages/`,
    /// `dist-packages/` or `node_modules/<name>/`) or in Python's own
    /// library: a repository file matches it only with more than its file
    /// name in common, or its whole remaining path.
    library: bool,
}

/// The candidates a frame maps to: those whose path ends with the longest
/// run of the frame's trailing components.
fn frame_files(frame: &TraceFrame, files: &[&FileEntry], index: &FileIndex) -> Vec<usize> {
    let FrameComponents {
        components,
        library,
    } = frame_components(&frame.path);
    let Some(name) = components.last() else {
        return Vec::new();
    };
    let Some(candidates) = index.by_name.get(*name) else {
        return Vec::new();
    };
    let mut best = 0usize;
    let mut found: Vec<usize> = Vec::new();
    for &i in candidates {
        let path: Vec<&str> = files[i].path.as_str().split('/').collect();
        let common = path
            .iter()
            .rev()
            .zip(components.iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        match common.cmp(&best) {
            std::cmp::Ordering::Greater => {
                best = common;
                found = vec![i];
            }
            std::cmp::Ordering::Equal => found.push(i),
            std::cmp::Ordering::Less => {}
        }
    }
    // Only the file name in common, and several files have it: ambiguous.
    if best <= 1 && found.len() > 1 {
        return Vec::new();
    }
    // Another package's or the standard library's file of the same name
    // (`/usr/lib/python3.11/pathlib.py`, `site-packages/rich/utils.py`) is
    // not the project's.
    if library && best < 2 && best < components.len() {
        return Vec::new();
    }
    found
}

/// The trace signal of each candidate (same order as `files`) and the
/// functions and lines of its frames.
pub fn trace_relevance(frames: &[TraceFrame], files: &[&FileEntry]) -> (Vec<f64>, Vec<Anchors>) {
    let mut anchors = vec![Anchors::default(); files.len()];
    let scores = traces_scored(frames, files, Some(&mut anchors));
    (scores, anchors)
}

/// [`trace_relevance`]'s scores alone: what a selection over every
/// candidate needs (no [`Anchors`] per file made and freed).
pub fn trace_scores(frames: &[TraceFrame], files: &[&FileEntry]) -> Vec<f64> {
    traces_scored(frames, files, None)
}

/// The trace signal of each file, and its anchors into `anchors` (one per
/// file) when given.
fn traces_scored(
    frames: &[TraceFrame],
    files: &[&FileEntry],
    mut anchors: Option<&mut [Anchors]>,
) -> Vec<f64> {
    let mut scores = vec![0.0f64; files.len()];
    if frames.is_empty() || files.is_empty() {
        return scores;
    }
    let names: Vec<&str> = frames
        .iter()
        .filter_map(|frame| frame_components(&frame.path).components.last().copied())
        .collect();
    let index = FileIndex::new(files, &[], &names);
    // Mapped frames, by trace, innermost first.
    let mut mapped: Vec<(&TraceFrame, Vec<usize>)> = frames
        .iter()
        .map(|frame| (frame, frame_files(frame, files, &index)))
        .filter(|(_, found)| !found.is_empty())
        .collect();
    mapped.sort_by_key(|(frame, _)| (frame.trace, frame.depth));
    let mut step = 0usize;
    let mut trace = None;
    for (frame, found) in mapped {
        if trace != Some(frame.trace) {
            trace = Some(frame.trace);
            step = 0;
        }
        let weight = (1.0 - 0.2 * step as f64).max(0.4);
        step += 1;
        for i in found {
            scores[i] = scores[i].max(weight);
            let Some(anchors) = anchors.as_deref_mut() else {
                continue;
            };
            let anchor = &mut anchors[i];
            if let Some(function) = &frame.function
                && !function.starts_with('<')
            {
                let name = function.rsplit('.').next().unwrap_or(function).to_owned();
                if !anchor.names.contains(&name) {
                    anchor.names.push(name);
                }
            }
            if let Some(line) = frame.line
                && !anchor.lines.contains(&line)
            {
                anchor.lines.push(line);
            }
        }
    }
    scores
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo_map::RepoMap;
    use crate::select::intent_text::{IntentText, Section};
    use crate::select::stack_trace::parse_frames;
    use crate::select::symbols::defined_name_ids;

    fn repo(files: &[(&str, &str)]) -> RepoMap {
        RepoMap::new(
            files
                .iter()
                .map(|(path, content)| {
                    let mut entry = FileEntry::for_test(path, content.len() as u64, 0);
                    entry.name_ids = defined_name_ids(content).into();
                    entry
                })
                .collect(),
        )
    }

    fn mention(name: &str, section: Section) -> Mention {
        Mention {
            name: name.to_owned(),
            section,
        }
    }

    #[test]
    fn names_map_to_definers_stems_and_modules() {
        let repo = repo(&[
            (
                "src/marshmallow/fields.py",
                "class DateTime:\n    pass\nclass List:\n    pass\n",
            ),
            (
                "src/marshmallow/schema.py",
                "class Schema:\n    def dump(self):\n        pass\n",
            ),
            ("src/sqlfluff/rules/L031.py", "class Rule_L031:\n    pass\n"),
            ("tests/test_fields.py", "def test_list():\n    pass\n"),
        ]);
        let files: Vec<&FileEntry> = repo.files.iter().collect();
        let (signals, anchors) = mention_relevance(
            &[
                mention("fields.DateTime", Section::Code),
                mention("Schema.dump", Section::Prose),
                mention("L031", Section::Title),
            ],
            &files,
        );
        assert!(signals[0] > 0.5, "fields.py: {signals:?}");
        assert_eq!(anchors[0].names, ["DateTime"]);
        // The selection's scores alone are the same numbers.
        assert_eq!(
            mention_scores(
                &[
                    mention("fields.DateTime", Section::Code),
                    mention("Schema.dump", Section::Prose),
                    mention("L031", Section::Title),
                ],
                &files,
            ),
            signals
        );
        assert!(signals[1] > 0.5, "schema.py: {signals:?}");
        assert!(anchors[1].names.contains(&"dump".to_owned()));
        assert!((signals[2] - 1.0).abs() < 1e-9, "L031.py: {signals:?}");
        assert!(signals[3].abs() < 1e-12);
    }

    #[test]
    fn common_names_are_not_evidence() {
        let many: Vec<(String, &str)> = (0..30)
            .map(|i| (format!("m{i}.py"), "def get():\n    pass\n"))
            .collect();
        let files: Vec<(&str, &str)> = many.iter().map(|(p, c)| (p.as_str(), *c)).collect();
        let repo = repo(&files);
        let entries: Vec<&FileEntry> = repo.files.iter().collect();
        let (signals, _) = mention_relevance(&[mention("get", Section::Title)], &entries);
        assert!(signals.iter().all(|s| *s == 0.0));
    }

    #[test]
    fn installed_package_frames_map_to_the_checkout() {
        let repo = repo(&[
            ("src/marshmallow/fields.py", ""),
            ("src/marshmallow/schema.py", ""),
            ("src/marshmallow/__init__.py", ""),
            ("tests/__init__.py", ""),
        ]);
        let files: Vec<&FileEntry> = repo.files.iter().collect();
        let text = IntentText::parse(crate::select::intent_fixtures::intent_fixture(
            "python-traceback.txt",
        ));
        let (signals, anchors) = trace_relevance(&text.frames, &files);
        let by_path = |p: &str| {
            repo.files
                .iter()
                .position(|f| f.path.as_str() == p)
                .unwrap()
        };
        assert!((signals[by_path("src/marshmallow/fields.py")] - 1.0).abs() < 1e-12);
        assert!(signals[by_path("src/marshmallow/schema.py")] >= 0.6);
        assert_eq!(
            anchors[by_path("src/marshmallow/fields.py")].names,
            ["_bind_to_schema"]
        );
        assert_eq!(anchors[by_path("src/marshmallow/fields.py")].lines, [1117]);
        assert!(signals[by_path("tests/__init__.py")].abs() < 1e-12);
        // The selection's scores alone are the same numbers.
        assert_eq!(trace_scores(&text.frames, &files), signals);
    }

    #[test]
    fn library_files_sharing_a_project_file_name_are_not_the_project() {
        let repo = repo(&[
            ("src/_pytest/pathlib.py", ""),
            ("src/_pytest/tmpdir.py", ""),
            ("click/utils.py", ""),
            ("six.py", ""),
        ]);
        let files: Vec<&FileEntry> = repo.files.iter().collect();
        let frames = parse_frames(concat!(
            "Traceback (most recent call last):\n",
            "  File \"/venv/lib/python3.11/site-packages/_pytest/tmpdir.py\", line 202, in getbasetemp\n",
            "    basetemp = make_numbered_dir_with_cleanup(\n",
            "  File \"/venv/lib/python3.11/site-packages/six.py\", line 3, in reraise\n",
            "    raise value\n",
            "  File \"/venv/lib/python3.11/site-packages/rich/utils.py\", line 9, in wrap\n",
            "    return f()\n",
            "  File \"/usr/lib/python3.11/pathlib.py\", line 1146, in mkdir\n",
            "    os.mkdir(self, mode)\n",
            "FileExistsError: [Errno 17] File exists\n",
        ));
        let (signals, _) = trace_relevance(&frames, &files);
        // The standard library's pathlib.py and rich's utils.py are not the
        // project's files of those names; a one-file package installed whole
        // (the innermost frame that maps) and pytest's tmpdir.py are. In
        // path order: click/utils.py, six.py, pathlib.py, tmpdir.py.
        assert_eq!(signals, [0.0, 1.0, 0.0, 0.8]);
    }

    #[test]
    fn ambiguous_file_names_are_ignored() {
        let repo = repo(&[
            ("a/util.js", ""),
            ("b/util.js", ""),
            ("src/node/hmr.ts", ""),
        ]);
        let files: Vec<&FileEntry> = repo.files.iter().collect();
        let frames = parse_frames(
            "    at f (util.js:1:1)\n    at g (/app/packages/vite/src/node/hmr.ts:2:3)\n",
        );
        let (signals, _) = trace_relevance(&frames, &files);
        assert_eq!(signals, [0.0, 0.0, 1.0]);
    }
}
