//! `aic tree`: raw and compiled tokens per file and directory, summed up the
//! tree, and the tracked files the scan leaves out with the reason.

use crate::support::{CliTest, WEBAPP_MTIMES, git};

#[test]
fn the_tree_sums_files_into_directories_and_explains_what_is_left_out() {
    let test = CliTest::with_fixture("webapp", WEBAPP_MTIMES);
    let root = test.root();
    fs_err::create_dir_all(root.join("src/build")).unwrap();
    fs_err::write(root.join("src/build/gen.py"), "def gen():\n    return 1\n").unwrap();
    fs_err::write(root.join("big.min.js"), "var a=1;".repeat(200_000)).unwrap();
    git(root, &["init", "-q"], "2024-01-01T00:00:00Z");
    git(root, &["add", "-A"], "2024-01-01T00:00:00Z");
    git(root, &["commit", "-qm", "base"], "2024-01-01T00:00:00Z");

    let run = test.run(&["tree", "--root", "[ROOT]", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let tree = run.json();
    let entries = tree["entries"].as_array().unwrap();
    let entry = |path: &str| {
        entries
            .iter()
            .find(|e| e["path"] == path)
            .unwrap_or_else(|| panic!("no {path:?} in {entries:#?}"))
    };
    let files: Vec<&serde_json::Value> =
        entries.iter().filter(|e| e["directory"] == false).collect();
    let sum = |key: &str, of: &[&serde_json::Value]| -> u64 {
        of.iter().map(|e| e[key].as_u64().unwrap()).sum()
    };
    assert_eq!(entry("")["files"].as_u64().unwrap(), files.len() as u64);
    assert_eq!(
        entry("")["rawTokens"].as_u64().unwrap(),
        sum("rawTokens", &files)
    );
    let under_src: Vec<&serde_json::Value> = files
        .iter()
        .copied()
        .filter(|e| e["path"].as_str().unwrap().starts_with("src/"))
        .collect();
    assert_eq!(
        entry("src/")["compiledTokens"].as_u64().unwrap(),
        sum("compiledTokens", &under_src)
    );
    // A directory comes right before what it holds.
    let paths: Vec<&str> = entries
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    let at = |path: &str| paths.iter().position(|p| *p == path).unwrap();
    assert_eq!(at("src/user/") + 1, at("src/user/legacy-user-keys.ts"));
    let service = entry("src/user/service.ts");
    assert!(service["compiledTokens"].as_u64().unwrap() <= service["rawTokens"].as_u64().unwrap());
    let left_out: Vec<(&str, &str)> = tree["leftOut"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(left_out.len(), 2, "{left_out:?}");
    assert_eq!(left_out[0].0, "big.min.js");
    assert!(
        left_out[0].1.contains("repoMap.maxFileBytes"),
        "{left_out:?}"
    );
    assert_eq!(left_out[1].0, "src/build/gen.py");
    assert!(left_out[1].1.contains("`!build/`"), "{left_out:?}");

    // `aic inspect` names them too, with the rule.
    let run = test.run(&["inspect", "fix the user service", "--root", "[ROOT]"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("Tracked by git but not in scope: 2 files"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("`!build/`"), "{}", run.stdout);
    let trace = test
        .run(&[
            "inspect",
            "fix the user service",
            "--root",
            "[ROOT]",
            "--json",
        ])
        .json();
    assert_eq!(trace["leftOutTracked"][1]["kind"], "builtin", "{trace}");

    let run = test.run(&["tree", "--root", "[ROOT]", "--threshold", "100000"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("service.ts"), "{}", run.stdout);
    assert!(
        run.stdout.contains("Tracked by git but not in scope (2):"),
        "{}",
        run.stdout
    );
}
