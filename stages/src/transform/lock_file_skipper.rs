use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::transform::ContentTransformer;

/// ## What it does
/// Replaces a lock file with `[Lock file: {name}, {bytes} bytes — skipped]`.
/// Lock files are `*-lock.*` (`package-lock.json`, `pnpm-lock.yaml`), `*.lock`
/// (`Cargo.lock`, `yarn.lock`, `poetry.lock`, `Gemfile.lock`) and `shrinkwrap.*`
/// (`npm-shrinkwrap.json`).
///
/// ## Why
/// Lock files are machine-written, large and say nothing a model needs beyond
/// their existence (typically ~99% savings).
///
/// ## Example
/// `Cargo.lock` of 52,113 bytes becomes `[Lock file: Cargo.lock, 52113 bytes — skipped]`.
///
/// ## Known problems
/// A task about the lock file itself should name it, which makes it a direct
/// target and bypasses this transformer.
#[derive(Clone, Copy, Debug, Default)]
pub struct LockFileSkipper;

impl ContentTransformer for LockFileSkipper {
    fn id(&self) -> &'static str {
        "LockFileSkipper"
    }

    fn applies(&self, path: &RelativePath, _language: Language, content: &str) -> bool {
        let name = path.file_name().to_ascii_lowercase();
        let is_lock = path.extension().as_deref() == Some("lock")
            || name.contains("-lock.")
            || name.starts_with("shrinkwrap.")
            || name.ends_with("-shrinkwrap.json");
        is_lock && !content.starts_with("[Lock file: ")
    }

    fn transform(&self, path: &RelativePath, content: &str) -> String {
        format!(
            "[Lock file: {}, {} bytes — skipped]\n",
            path.file_name(),
            content.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    #[test_case("Cargo.lock", true)]
    #[test_case("web/package-lock.json", true)]
    #[test_case("pnpm-lock.yaml", true)]
    #[test_case("npm-shrinkwrap.json", true)]
    #[test_case("src/lock.rs", false)]
    #[test_case("src/blocker.ts", false)]
    fn recognises_lock_files(path: &str, expected: bool) {
        let path = RelativePath::new(path).unwrap();
        assert_eq!(
            LockFileSkipper.applies(&path, Language::Unknown, "{}"),
            expected
        );
    }

    #[test]
    fn placeholder_is_not_transformed_again() {
        let path = RelativePath::new("yarn.lock").unwrap();
        let once = LockFileSkipper.transform(&path, "a: 1\n");
        assert!(!LockFileSkipper.applies(&path, Language::Unknown, &once));
    }
}
