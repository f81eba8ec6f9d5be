//! Deterministic target resolution: files the intent names — `@path`,
//! `@file.ext` or a backticked path — are found in the RepoMap before anything
//! else, never guessed.
//!
//! Each reference goes through: canonicalise → exact match → bounded fuzzy match,
//! and ends in one of five classes ([`TargetResolution`]). Resolved targets are
//! always included at full tier and bypass lossy transforms; unresolved and
//! ambiguous ones are reported to the caller with their candidates.

use serde::Serialize;

use crate::relative_path::RelativePath;
use crate::repo_map::RepoMap;

/// How a reference was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TargetSyntax {
    /// `@src/user/service.ts`, `@service.ts`.
    At,
    /// `` `src/user/service.ts` ``.
    Backtick,
    /// A file the compile's diff changed (`--diff`, `--staged`, `--range`).
    Diff,
}

/// A file reference found in an intent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetRef {
    /// The reference as written, without `@` or backticks.
    pub raw: String,
    /// How it was written.
    pub syntax: TargetSyntax,
}

/// The outcome of resolving one reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TargetResolution {
    /// The reference is a path of the RepoMap, as written.
    Explicit,
    /// After canonicalisation (`./`, `\`, an absolute path under the root, letter
    /// case) it names exactly one file, or it names a directory.
    Resolved,
    /// One file's path ends with the reference, or one file name is within the
    /// fuzzy bound of it.
    Inferred,
    /// No file matches.
    Unresolved,
    /// Several files match equally well; none is picked.
    Ambiguous,
}

/// A resolved reference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedTarget {
    /// The reference.
    pub reference: TargetRef,
    /// Its class.
    pub resolution: TargetResolution,
    /// The files it stands for: one file, or every file of a directory target;
    /// empty when unresolved or ambiguous.
    pub files: Vec<RelativePath>,
    /// For ambiguous references, the competing files (at most
    /// [`MAX_CANDIDATES`]); for unresolved ones, the nearest file names if any.
    pub candidates: Vec<RelativePath>,
}

/// The most candidates listed for an ambiguous or unresolved reference.
pub const MAX_CANDIDATES: usize = 5;
/// The most files a directory target brings in.
pub const MAX_DIRECTORY_FILES: usize = 20;

/// Finds the file references of an intent and returns the intent without them
/// (the text to classify) plus the references in order, each once.
///
/// `@ref` counts when `@` starts a word and `ref` has a `.` or `/` in it
/// (`@service.ts`, `@src/auth/`) or is a file name that needs no extension
/// (`@Dockerfile`, `@Makefile`); e-mail addresses and `@decorators` do not. A
/// backticked span counts when it looks like a path: no spaces, and a `/`, a
/// file extension or such a file name (`` `src/lib.rs` ``, `` `Cargo.toml` ``,
/// `` `Dockerfile` ``); backticked code such as
/// `` `foo()` `` stays in the intent.
///
/// # Examples
///
/// ```
/// use aic_stages::select::targets::extract_targets;
/// let (text, targets) = extract_targets("fix @src/user/service.ts and `model.ts`, mail a@b.io");
/// assert_eq!(text, "fix and, mail a@b.io");
/// let raw: Vec<_> = targets.iter().map(|t| t.raw.as_str()).collect();
/// assert_eq!(raw, ["src/user/service.ts", "model.ts"]);
/// ```
pub fn extract_targets(intent: &str) -> (String, Vec<TargetRef>) {
    let mut targets: Vec<TargetRef> = Vec::new();
    let mut kept = String::with_capacity(intent.len());
    let mut rest = intent;
    while let Some(index) = rest.find(['@', '`']) {
        let (before, from) = rest.split_at(index);
        kept.push_str(before);
        let starts_word = kept.is_empty()
            || kept.ends_with(|c: char| c.is_whitespace() || "([{,;:\"'".contains(c));
        if let Some(after_at) = from.strip_prefix('@') {
            let end = after_at
                .find(|c: char| c.is_whitespace() || ",;:)]}\"'".contains(c))
                .unwrap_or(after_at.len());
            let candidate = after_at[..end].trim_end_matches(['.', '?', '!']);
            // `@click.group(…)` is a decorator, not a file.
            let decorator = candidate.contains('(');
            if starts_word
                && !candidate.is_empty()
                && !decorator
                && (candidate.contains('.')
                    || candidate.contains('/')
                    || is_known_file_name(candidate))
            {
                push_target(&mut targets, candidate, TargetSyntax::At);
                rest = &after_at[candidate.len()..];
                trim_double_space(&mut kept, &mut rest);
                continue;
            }
            kept.push('@');
            rest = after_at;
        } else {
            let after_tick = &from[1..];
            match after_tick.find('`') {
                Some(close) if looks_like_path(&after_tick[..close]) => {
                    push_target(&mut targets, &after_tick[..close], TargetSyntax::Backtick);
                    rest = &after_tick[close + 1..];
                    trim_double_space(&mut kept, &mut rest);
                }
                _ => {
                    kept.push('`');
                    rest = after_tick;
                }
            }
        }
    }
    kept.push_str(rest);
    (kept.trim().to_owned(), targets)
}

fn trim_double_space(kept: &mut String, rest: &mut &str) {
    if kept.ends_with(char::is_whitespace) {
        *rest = rest.trim_start_matches(' ');
        if rest.starts_with(|c: char| ",.;:!?".contains(c)) {
            kept.pop();
        }
    }
}

fn push_target(targets: &mut Vec<TargetRef>, raw: &str, syntax: TargetSyntax) {
    if !targets.iter().any(|t| t.raw == raw) {
        targets.push(TargetRef {
            raw: raw.to_owned(),
            syntax,
        });
    }
}

/// A file name without an extension that names a file all the same
/// (`Dockerfile`, `Makefile`, `Jenkinsfile`): `@Dockerfile` is a file
/// reference, where `@Override` is an annotation.
fn is_known_file_name(text: &str) -> bool {
    crate::language::Language::from_file_name(text) != crate::language::Language::Unknown
        || matches!(
            text,
            "Jenkinsfile"
                | "Justfile"
                | "justfile"
                | "Containerfile"
                | "CODEOWNERS"
                | "Pipfile"
                | "Brewfile"
                | "Caddyfile"
                | "Tiltfile"
                | "Earthfile"
                | "Snakefile"
        )
}

fn looks_like_path(text: &str) -> bool {
    if text.is_empty()
        || text.len() > 260
        || text.contains(char::is_whitespace)
        || text.contains(['(', ')', '=', '<', '>'])
    {
        return false;
    }
    if text.contains('/') || is_known_file_name(text) {
        return true;
    }
    match text.rsplit_once('.') {
        Some((stem, extension)) => {
            !stem.is_empty()
                && (1..=5).contains(&extension.len())
                && extension.chars().all(|c| c.is_ascii_alphanumeric())
                && extension.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

/// Resolves references against the RepoMap. `root` is the project root as text,
/// used to recognise absolute paths under it (`/home/me/app/src/x.ts`).
pub fn resolve_targets(targets: &[TargetRef], repo: &RepoMap, root: &str) -> Vec<ResolvedTarget> {
    targets
        .iter()
        .map(|target| resolve_one(target, repo, root))
        .collect()
}

fn resolve_one(target: &TargetRef, repo: &RepoMap, root: &str) -> ResolvedTarget {
    let result =
        |resolution, files: Vec<RelativePath>, candidates: Vec<RelativePath>| ResolvedTarget {
            reference: target.clone(),
            resolution,
            files,
            candidates,
        };
    let files = &repo.files;
    let find = |path: &str| {
        files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .map(|index| files[index].path.clone())
    };
    if let Some(path) = find(&target.raw) {
        return result(TargetResolution::Explicit, vec![path], Vec::new());
    }

    // Canonicalise: separators, a leading `./`, an absolute path under the root.
    let mut canonical = target.raw.replace('\\', "/");
    let root = root.replace('\\', "/");
    let root = root.trim_end_matches('/');
    if !root.is_empty()
        && let Some(inside) = canonical.strip_prefix(root)
        && inside.starts_with('/')
    {
        canonical = inside.to_owned();
    }
    let canonical = RelativePath::new(&canonical)
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    if canonical.is_empty() {
        return result(TargetResolution::Unresolved, Vec::new(), Vec::new());
    }
    if let Some(path) = find(&canonical) {
        return result(TargetResolution::Resolved, vec![path], Vec::new());
    }
    let lower = canonical.to_lowercase();
    let same_case_insensitive: Vec<RelativePath> = files
        .iter()
        .filter(|f| f.path.as_str().to_lowercase() == lower)
        .map(|f| f.path.clone())
        .collect();
    match same_case_insensitive.len() {
        1 => {
            return result(
                TargetResolution::Resolved,
                same_case_insensitive,
                Vec::new(),
            );
        }
        n if n > 1 => {
            return result(
                TargetResolution::Ambiguous,
                Vec::new(),
                truncate(same_case_insensitive),
            );
        }
        _ => {}
    }
    // A directory: every file under it, up to the cap, in path order.
    let directory = format!("{}/", canonical.trim_end_matches('/'));
    let under: Vec<RelativePath> = files
        .iter()
        .filter(|f| f.path.as_str().starts_with(&directory))
        .take(MAX_DIRECTORY_FILES)
        .map(|f| f.path.clone())
        .collect();
    if !under.is_empty() {
        return result(TargetResolution::Resolved, under, Vec::new());
    }

    // Suffix: `service.ts` or `user/service.ts` at any depth.
    let suffix = format!("/{lower}");
    let by_suffix: Vec<RelativePath> = files
        .iter()
        .filter(|f| f.path.as_str().to_lowercase().ends_with(&suffix))
        .map(|f| f.path.clone())
        .collect();
    match by_suffix.len() {
        1 => return result(TargetResolution::Inferred, by_suffix, Vec::new()),
        n if n > 1 => return result(TargetResolution::Ambiguous, Vec::new(), truncate(by_suffix)),
        _ => {}
    }

    // Bounded fuzzy match on the file name: edit distance at most 1 for names up
    // to 8 characters, 2 beyond; ties at the smallest distance are ambiguous.
    let wanted = lower.rsplit('/').next().unwrap_or(&lower).to_owned();
    if wanted.chars().count() < 4 {
        return result(TargetResolution::Unresolved, Vec::new(), Vec::new());
    }
    let bound = if wanted.chars().count() <= 8 { 1 } else { 2 };
    let mut best: Option<usize> = None;
    let mut nearest: Vec<RelativePath> = Vec::new();
    for file in files {
        let name = file.path.file_name().to_lowercase();
        let Some(distance) = bounded_edit_distance(&wanted, &name, bound) else {
            continue;
        };
        match best {
            Some(b) if distance > b => {}
            Some(b) if distance == b => nearest.push(file.path.clone()),
            _ => {
                best = Some(distance);
                nearest = vec![file.path.clone()];
            }
        }
    }
    match nearest.len() {
        0 => result(TargetResolution::Unresolved, Vec::new(), Vec::new()),
        1 => result(TargetResolution::Inferred, nearest, Vec::new()),
        _ => result(TargetResolution::Ambiguous, Vec::new(), truncate(nearest)),
    }
}

fn truncate(mut paths: Vec<RelativePath>) -> Vec<RelativePath> {
    paths.truncate(MAX_CANDIDATES);
    paths
}

/// Levenshtein distance between `a` and `b` if it is at most `bound`.
fn bounded_edit_distance(a: &str, b: &str, bound: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > bound {
        return None;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        if current.iter().min().copied().unwrap_or(0) > bound {
            return None;
        }
        previous = current;
    }
    let distance = previous[b.len()];
    (distance <= bound).then_some(distance)
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    #[test]
    fn decorators_are_not_targets() {
        let (_, targets) =
            extract_targets("@click.group(context_settings={}) fails, see @app.route(\"/x\")");
        assert!(targets.is_empty(), "{targets:?}");
    }
    use crate::repo_map::FileEntry;

    fn repo(paths: &[&str]) -> RepoMap {
        FileEntry::repo_for_test(paths)
    }

    fn files() -> RepoMap {
        repo(&[
            "src/user/service.ts",
            "src/user/model.ts",
            "src/admin/model.ts",
            "src/auth/jwt.ts",
            "src/Config.ts",
            "README.md",
        ])
    }

    fn resolve(reference: &str) -> ResolvedTarget {
        let target = TargetRef {
            raw: reference.to_owned(),
            syntax: TargetSyntax::At,
        };
        resolve_one(&target, &files(), "/home/me/app")
    }

    #[test_case("src/user/service.ts", TargetResolution::Explicit, &["src/user/service.ts"])]
    #[test_case("./src/auth/jwt.ts", TargetResolution::Resolved, &["src/auth/jwt.ts"])]
    #[test_case("/home/me/app/src/auth/jwt.ts", TargetResolution::Resolved, &["src/auth/jwt.ts"])]
    #[test_case("src/config.ts", TargetResolution::Resolved, &["src/Config.ts"])]
    #[test_case("src/user", TargetResolution::Resolved, &["src/user/model.ts", "src/user/service.ts"])]
    #[test_case("service.ts", TargetResolution::Inferred, &["src/user/service.ts"])]
    #[test_case("auth/jwt.ts", TargetResolution::Inferred, &["src/auth/jwt.ts"])]
    #[test_case("servise.ts", TargetResolution::Inferred, &["src/user/service.ts"])]
    #[test_case("model.ts", TargetResolution::Ambiguous, &[])]
    #[test_case("payments.ts", TargetResolution::Unresolved, &[])]
    #[test_case("../etc/passwd", TargetResolution::Unresolved, &[])]
    fn resolves_each_class(reference: &str, expected: TargetResolution, files: &[&str]) {
        let resolved = resolve(reference);
        assert_eq!(resolved.resolution, expected, "{resolved:?}");
        let got: Vec<&str> = resolved.files.iter().map(RelativePath::as_str).collect();
        assert_eq!(got, files);
    }

    #[test]
    fn ambiguous_lists_candidates_and_picks_none() {
        let resolved = resolve("model.ts");
        let candidates: Vec<&str> = resolved
            .candidates
            .iter()
            .map(RelativePath::as_str)
            .collect();
        assert_eq!(candidates, ["src/admin/model.ts", "src/user/model.ts"]);
        assert!(resolved.files.is_empty());
    }

    #[test_case("fix @src/a.ts now", "fix now", &["src/a.ts"])]
    #[test_case("see `lib/x.rs` and `foo()`", "see and `foo()`", &["lib/x.rs"])]
    #[test_case("email me at dev@example.com", "email me at dev@example.com", &[])]
    #[test_case("use @decorator here", "use @decorator here", &[])]
    #[test_case("update @README.md.", "update.", &["README.md"])]
    #[test_case("@a.ts @a.ts twice", "twice", &["a.ts"])]
    #[test_case("fix @Dockerfile and `Makefile`", "fix and", &["Dockerfile", "Makefile"])]
    #[test_case("keep @Override and `Status`", "keep @Override and `Status`", &[])]
    #[test_case("a lone ` tick", "a lone ` tick", &[])]
    fn extracts_references(intent: &str, text: &str, raw: &[&str]) {
        let (kept, targets) = extract_targets(intent);
        assert_eq!(kept, text);
        let got: Vec<&str> = targets.iter().map(|t| t.raw.as_str()).collect();
        assert_eq!(got, raw);
    }

    #[test]
    fn edit_distance_is_bounded() {
        assert_eq!(bounded_edit_distance("service", "servise", 1), Some(1));
        assert_eq!(bounded_edit_distance("service", "sevrice", 1), None);
        assert_eq!(bounded_edit_distance("service", "sevrice", 2), Some(2));
        assert_eq!(bounded_edit_distance("abc", "abcdef", 2), None);
    }
}
