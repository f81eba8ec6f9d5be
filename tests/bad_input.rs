//! Bad input never panics: each case gets a clear message and its own exit code,
//! or a counted skip.

use std::io::Write;

use crate::support::{aic, fixture_repo};

fn assert_clean_failure(run: &crate::support::Run, code: i32, message: &str) {
    assert_eq!(run.code, code, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains(message),
        "expected {message:?} in stderr:\n{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(
        run.stdout.is_empty(),
        "stdout carries data only: {}",
        run.stdout
    );
}

#[test]
fn empty_intent() {
    let run = aic(&["compile", "   ", "--root", "."], &[]);
    assert_clean_failure(&run, 3, "error: The intent is empty");
    assert!(run.stderr.contains("hint:"));
}

#[test]
fn missing_root() {
    let run = aic(&["compile", "x", "--root", "/definitely/not/here"], &[]);
    assert_clean_failure(&run, 3, "does not exist");
}

#[test]
fn root_that_is_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file.txt");
    fs_err::write(&file, "x").unwrap();
    let run = aic(&["compile", "x", "--root", file.to_str().unwrap()], &[]);
    assert_clean_failure(&run, 3, "is not a directory");
}

#[test]
fn invalid_config_names_the_field() {
    let repo = fixture_repo("webapp", &[]);
    fs_err::write(
        repo.path().join("aic.config.json"),
        r#"{"contextBudget": {"maxTokens": "lots"}}"#,
    )
    .unwrap();
    let run = aic(
        &[
            "compile",
            "user service",
            "--root",
            repo.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_clean_failure(
        &run,
        4,
        r#"contextBudget.maxTokens: expected a non-negative integer, found "lots""#,
    );
    assert!(run.stderr.contains("aic.config.json"));
}

#[test]
fn malformed_config_json_gives_its_position() {
    let repo = fixture_repo("webapp", &[]);
    fs_err::write(
        repo.path().join("aic.config.json"),
        "{\n  \"version\": 1,\n}",
    )
    .unwrap();
    let run = aic(
        &[
            "compile",
            "user service",
            "--root",
            repo.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_clean_failure(&run, 4, "line 3");
}

#[test]
fn unknown_config_keys_warn_once_and_compile() {
    let repo = fixture_repo("webapp", &[]);
    fs_err::write(
        repo.path().join("aic.config.json"),
        r#"{"colour": "blue", "guard": {"mood": 1}}"#,
    )
    .unwrap();
    let run = aic(
        &[
            "compile",
            "user service",
            "--root",
            repo.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("unknown configuration keys").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("colour, guard.mood"), "{}", run.stderr);
}

#[test]
fn empty_repository() {
    let dir = tempfile::tempdir().unwrap();
    let run = aic(
        &[
            "compile",
            "anything at all",
            "--root",
            dir.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_clean_failure(&run, 1, "No relevant files found");
    assert!(run.stderr.contains("no text files in scope"));
}

#[test]
fn intent_matching_nothing() {
    let repo = fixture_repo("webapp", &[]);
    let run = aic(
        &[
            "compile",
            "quantum chromodynamics",
            "--root",
            repo.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_clean_failure(&run, 1, "No relevant files found");
}

#[test]
fn budget_too_small_for_any_file() {
    let repo = fixture_repo("webapp", &[]);
    let run = aic(
        &[
            "compile",
            "user service",
            "--root",
            repo.path().to_str().unwrap(),
            "--budget",
            "50",
        ],
        &[],
    );
    assert_clean_failure(&run, 6, "cannot hold the prompt");
}

#[test]
fn binary_huge_non_utf8_and_looping_files_are_skipped_or_read_lossily() {
    let repo = fixture_repo("webapp", &[]);
    let root = repo.path();
    fs_err::write(
        root.join("src/user/avatar.png"),
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    )
    .unwrap();
    let huge = fs_err::File::create(root.join("src/user/dump.sql")).unwrap();
    huge.set_len(50 * 1024 * 1024).unwrap();
    let mut latin1 = fs_err::File::create(root.join("src/user/names-latin1.txt")).unwrap();
    latin1.write_all(b"Jos\xe9 user names\n").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(root.join("src/user/loop-b"), root.join("src/user/loop-a"))
            .unwrap();
        std::os::unix::fs::symlink(root.join("src/user/loop-a"), root.join("src/user/loop-b"))
            .unwrap();
        std::os::unix::fs::symlink(root.join("src"), root.join("src/user/up")).unwrap();
    }
    let run = aic(
        &[
            "inspect",
            "user names",
            "--root",
            root.to_str().unwrap(),
            "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let trace = run.json();
    let skipped = &trace["filesSkipped"];
    assert_eq!(skipped["binary"], 1, "{skipped}");
    assert_eq!(skipped["tooLarge"], 1, "{skipped}");
    let selected: Vec<&str> = trace["selectedFiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(
        selected.contains(&"src/user/names-latin1.txt"),
        "{selected:?}"
    );
}

#[cfg(unix)]
#[test]
fn unreadable_file_is_counted_not_fatal() {
    use std::os::unix::fs::PermissionsExt;
    let repo = fixture_repo("webapp", &[]);
    let locked = repo.path().join("src/user/locked-user.ts");
    fs_err::write(&locked, "export const locked = 1;\n").unwrap();
    fs_err::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let run = aic(
        &[
            "inspect",
            "user service",
            "--root",
            repo.path().to_str().unwrap(),
            "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Root reads the file anyway; anyone else gets it counted as unreadable.
    let readable = fs_err::read(&locked).is_ok();
    let unreadable = run.json()["filesSkipped"]["unreadable"].as_u64().unwrap();
    assert_eq!(unreadable, u64::from(!readable));
}

#[test]
fn compile_writes_nothing_into_the_repository() {
    let repo = fixture_repo("webapp", &[]);
    let before = crate::support::files_under(repo.path());
    let run = aic(
        &[
            "compile",
            "user service",
            "--root",
            repo.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(crate::support::files_under(repo.path()), before);
}
