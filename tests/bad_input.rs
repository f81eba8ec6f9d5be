//! Bad files never stop a compile: each is skipped and counted, or read
//! lossily, and a compile writes nothing into the repository. (Bad arguments
//! and configuration, with their messages and exit codes, are snapshots in
//! `tests/cli.rs`.)

use std::io::Write;

use crate::support::{aic, fixture_repo};

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

#[test]
fn a_named_file_out_of_scope_is_explained_never_swapped() {
    let repo = fixture_repo("webapp", &[]);
    let root = repo.path();
    fs_err::write(root.join("big.min.js"), "var a=1;".repeat(200_000)).unwrap();
    fs_err::write(root.join("mid.min.js"), "var b=2;\n").unwrap();
    fs_err::create_dir_all(root.join("src/build")).unwrap();
    fs_err::write(root.join("src/build/gen.py"), "def gen():\n    return 1\n").unwrap();
    let compile = |intent: &str| {
        aic(
            &[
                "compile",
                intent,
                "--root",
                root.to_str().unwrap(),
                "--no-cache",
            ],
            &[],
        )
    };
    let run = compile("explain @big.min.js");
    assert!(!run.stdout.contains("mid.min.js"), "{}", run.stdout);
    assert!(
        run.stderr.contains("`big.min.js` exists but is larger"),
        "{}",
        run.stderr
    );
    // Named by its bare name, under a directory, tracked by git: still not
    // swapped for the file one letter away.
    fs_err::create_dir_all(root.join("lib")).unwrap();
    fs_err::write(root.join("lib/bigdata.py"), "x = 1\n".repeat(400_000)).unwrap();
    fs_err::write(root.join("lib/bigdate.py"), "y = 2\n").unwrap();
    crate::support::git(root, &["init", "-q"], "2024-01-01T00:00:00Z");
    crate::support::git(root, &["add", "-A"], "2024-01-01T00:00:00Z");
    let run = compile("why does @bigdata.py fail");
    assert!(!run.stdout.contains("lib/bigdate.py"), "{}", run.stdout);
    assert!(
        run.stderr.contains("`lib/bigdata.py` exists but is larger"),
        "{}",
        run.stderr
    );
    // A guess by spelling is said.
    let run = compile("why does @lib/bigdat.py fail");
    assert!(
        run.stderr
            .contains("`lib/bigdat.py` matches no file; it was taken to mean"),
        "{}",
        run.stderr
    );
    let run = compile("explain @src/build/gen.py");
    assert!(
        run.stderr
            .contains("the built-in ignore pattern `build/` leaves it out; a line `!build/`"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_intent_that_starts_with_a_dash_is_told_to_go_after_double_dash() {
    let dir = tempfile::tempdir().unwrap();
    fs_err::write(dir.path().join("help.py"), "def show_help():\n    pass\n").unwrap();
    let root = dir.path().to_str().unwrap();
    let intent = "--help crashes when the name has = in it";
    let run = aic(&["compile", intent, "--root", root], &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("an intent that starts with `-` goes after `--`"),
        "{}",
        run.stderr
    );
    // As the hint says: after `--` it is the intent.
    let run = aic(&["compile", "--root", root, "--", intent], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("help.py"), "{}", run.stdout);
}
