//! Diff-aware compiles on a fixture git repository with a committed change, a
//! staged change and an unstaged one: `--diff` (the working tree against
//! HEAD or a revision), `--staged` and `--range` each select their changed
//! files first, show the diff in its own section, and fail clearly on a bad
//! revision or outside a git work tree.

use std::path::Path;

use crate::support::{CliTest, WEBAPP_MTIMES, git};

const DATE: &str = "2024-01-01T00:00:00Z";

/// The webapp fixture as a repository: a base commit, a second commit that
/// changes `src/auth/jwt.ts`, then a staged change to `src/utils/prefix.ts`
/// and an unstaged one to `src/user/model.ts`.
fn repository() -> CliTest {
    let test = CliTest::with_fixture("webapp", WEBAPP_MTIMES);
    let root = test.root();
    git(root, &["init", "-q", "-b", "main"], DATE);
    git(root, &["add", "-A"], DATE);
    git(root, &["commit", "-qm", "base"], DATE);
    append(
        root,
        "src/auth/jwt.ts",
        "\nexport const ISSUER = \"webapp\";\n",
    );
    git(root, &["commit", "-qam", "issuer"], DATE);
    append(
        root,
        "src/utils/prefix.ts",
        "\nexport const SEPARATOR = \":\";\n",
    );
    git(root, &["add", "src/utils/prefix.ts"], DATE);
    append(
        root,
        "src/user/model.ts",
        "\nexport const GUEST_NAME = \"guest\";\n",
    );
    test
}

fn append(root: &Path, path: &str, text: &str) {
    let mut content = fs_err::read_to_string(root.join(path)).unwrap();
    content.push_str(text);
    fs_err::write(root.join(path), content).unwrap();
}

/// The `### path` headings of a Markdown prompt, in order.
fn headings(prompt: &str) -> Vec<String> {
    prompt
        .lines()
        .filter_map(|line| line.strip_prefix("### "))
        .map(|h| h.rsplit_once(" [").map_or(h, |(path, _)| path).to_owned())
        .collect()
}

/// The diff section of a Markdown prompt.
fn diff_section(prompt: &str) -> &str {
    let start = prompt.find("## Diff\n").expect("a diff section");
    let rest = &prompt[start..];
    &rest[..rest.find("\n## Context").unwrap_or(rest.len())]
}

#[test]
fn the_working_tree_against_head_shows_staged_and_unstaged_changes_first() {
    let test = repository();
    let run = test.run(&["compile", "review", "--root", "[ROOT]", "--diff"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let diff = diff_section(&run.stdout);
    assert!(
        diff.contains("`git diff HEAD`: 2 files changed (2 modified, 0 added, 0 deleted)"),
        "{diff}"
    );
    assert!(diff.contains("+++ b/src/user/model.ts"), "{diff}");
    assert!(diff.contains("+export const SEPARATOR"), "{diff}");
    assert!(
        !diff.contains("ISSUER"),
        "the committed change is not in it: {diff}"
    );
    let files = headings(&run.stdout);
    let mut first_two = files[..2].to_vec();
    first_two.sort();
    assert_eq!(
        first_two,
        ["src/user/model.ts", "src/utils/prefix.ts"],
        "{files:?}"
    );
    // The import neighbours of the changed files come next, not files that
    // merely contain the word "review".
    assert!(
        files.contains(&"src/user/service.ts".to_owned()),
        "{files:?}"
    );
    let inspect = test.run(&["inspect", "review", "--root", "[ROOT]", "--diff", "--json"]);
    let trace = inspect.json();
    let model = trace["selectedFiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "src/user/model.ts")
        .unwrap();
    assert_eq!(model["reason"], "changed in the diff");
}

#[test]
fn staged_range_and_revision_diffs_pick_their_own_changes() {
    let test = repository();
    let run = test.run(&["compile", "review", "--root", "[ROOT]", "--staged"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let diff = diff_section(&run.stdout);
    assert!(
        diff.contains("`git diff --staged`: 1 file changed"),
        "{diff}"
    );
    assert!(diff.contains("+++ b/src/utils/prefix.ts"), "{diff}");
    assert_eq!(headings(&run.stdout)[0], "src/utils/prefix.ts");

    let run = test.run(&[
        "compile",
        "review",
        "--root",
        "[ROOT]",
        "--range",
        "HEAD~1..HEAD",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let diff = diff_section(&run.stdout);
    assert!(
        diff.contains("`git diff HEAD~1..HEAD`: 1 file changed"),
        "{diff}"
    );
    assert!(diff.contains("+export const ISSUER"), "{diff}");
    assert_eq!(headings(&run.stdout)[0], "src/auth/jwt.ts");

    // Against the first commit, the working tree holds all three changes.
    let run = test.run(&["compile", "review", "--root", "[ROOT]", "--diff=HEAD~1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        diff_section(&run.stdout).contains("3 files changed"),
        "{}",
        run.stdout
    );

    // A branch against where it left main: only the branch's own change.
    git(test.root(), &["stash", "-q"], DATE);
    git(
        test.root(),
        &["checkout", "-q", "-b", "feature", "HEAD~1"],
        DATE,
    );
    append(test.root(), "src/user/service.ts", "\n// feature work\n");
    git(test.root(), &["commit", "-qam", "feature"], DATE);
    let run = test.run(&[
        "compile",
        "review",
        "--root",
        "[ROOT]",
        "--range",
        "main...feature",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let diff = diff_section(&run.stdout);
    assert!(
        diff.contains("`git diff main...feature`: 1 file changed"),
        "{diff}"
    );
    assert!(
        diff.contains("+++ b/src/user/service.ts") && !diff.contains("ISSUER"),
        "{diff}"
    );
    // --exclude and --scope hold for the changed files too.
    let run = test.run(&[
        "compile",
        "review",
        "--root",
        "[ROOT]",
        "--range",
        "main..feature",
        "--exclude",
        "src/auth",
    ]);
    let diff = diff_section(&run.stdout);
    assert!(!diff.contains("jwt.ts"), "{diff}");
    assert!(
        !headings(&run.stdout).contains(&"src/auth/jwt.ts".to_owned()),
        "{}",
        run.stdout
    );
    git(test.root(), &["checkout", "-q", "main"], DATE);
    git(test.root(), &["stash", "pop", "-q", "--index"], DATE);

    // Every format carries the diff.
    let run = test.run(&[
        "compile", "review", "--root", "[ROOT]", "--staged", "--format", "xml",
    ]);
    let doc = roxmltree::Document::parse(&run.stdout).unwrap();
    let diff: String = doc
        .descendants()
        .find(|n| n.has_tag_name("diff"))
        .expect("a <diff> element")
        .children()
        .filter_map(|c| c.text())
        .collect();
    assert!(diff.contains("+export const SEPARATOR"), "{diff}");
}

#[test]
fn a_bad_revision_or_no_repository_fails_with_the_fix() {
    let test = repository();
    let run = test.run(&[
        "compile",
        "review",
        "--root",
        "[ROOT]",
        "--diff=no-such-branch",
    ]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("`no-such-branch` does not name a commit"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("git rev-parse no-such-branch"),
        "{}",
        run.stderr
    );
    let run = test.run(&["compile", "review", "--root", "[ROOT]", "--range", "main"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let plain = CliTest::with_fixture("webapp", WEBAPP_MTIMES);
    let run = plain.run(&["compile", "review", "--root", "[ROOT]", "--staged"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("is not in a git work tree"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_exact_rename_is_one_rename_not_a_deletion_and_an_addition() {
    let test = repository();
    git(
        test.root(),
        &["mv", "src/auth/jwt.ts", "src/auth/token.ts"],
        DATE,
    );
    let run = test.run(&["compile", "review", "--root", "[ROOT]", "--staged"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let diff = diff_section(&run.stdout);
    assert!(
        diff.contains("2 files changed (1 modified, 0 added, 0 deleted, 1 renamed)"),
        "{diff}"
    );
    assert!(
        diff.contains("rename from src/auth/jwt.ts\nrename to src/auth/token.ts"),
        "{diff}"
    );
    assert!(
        !diff.contains("-export"),
        "no content lines for a pure rename: {diff}"
    );
}

/// A file rewritten with the same size just after the commit that recorded
/// it — within the second, likely within the millisecond git looked at it —
/// is a change: git's index vouches for an unread file only when its time
/// matches the record exactly and is older than the index itself.
#[test]
fn a_same_size_edit_right_after_a_commit_is_in_the_diff() {
    let test = repository();
    let root = test.root();
    fs_err::write(root.join("src/user/model.ts"), "export const A = 1;\n").unwrap();
    git(root, &["add", "-A"], DATE);
    git(root, &["commit", "-qm", "all"], DATE);
    fs_err::write(root.join("src/user/model.ts"), "export const A = 2;\n").unwrap();
    let run = test.run(&["compile", "review", "--root", "[ROOT]", "--diff"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let diff = diff_section(&run.stdout);
    assert!(diff.contains("+export const A = 2;"), "{diff}");
    assert!(diff.contains("1 file changed"), "{diff}");
}

/// A fake GitHub token, assembled so no token-shaped literal is committed.
fn fake_token() -> String {
    ["ghp_", "FAKEfakeFAKEfake0123456789abcdefABCD"].concat()
}

#[test]
fn the_diff_passes_the_guard_like_the_file_bodies() {
    let test = repository();
    let root = test.root();
    let token = fake_token();
    append(
        root,
        "src/auth/jwt.ts",
        &format!("\nexport const GITHUB_TOKEN = \"{token}\";\n"),
    );
    // A private key file the guard never includes.
    let key = [
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        "-----END OPENSSH PRIVATE KEY-----",
    ]
    .join("\n");
    fs_err::write(root.join("deploy.key"), format!("{key}\n")).unwrap();
    git(root, &["add", "-A"], DATE);
    for args in [
        vec!["compile", "review", "--root", "[ROOT]", "--diff"],
        vec![
            "compile", "review", "--root", "[ROOT]", "--staged", "--json",
        ],
    ] {
        let run = test.run(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        for (name, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
            assert!(
                !text.contains(&token),
                "the token reached {name} of {args:?}"
            );
            assert!(
                !text.contains("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"),
                "the key reached {name} of {args:?}"
            );
        }
        assert!(run.stdout.contains("[REDACTED "), "{}", run.stdout);
        assert!(
            run.stdout
                .contains("the Context Guard blocks it: deploy.key"),
            "{}",
            run.stdout
        );
    }
}
