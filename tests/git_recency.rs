//! Recency comes from version control: a fresh clone, whose files all have the
//! checkout time as mtime, still ranks by history, and uncommitted changes rank
//! above everything.

use crate::support::{aic, git};

fn recency_of(trace: &serde_json::Value) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = trace["selectedFiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["signals"]["recency"].as_f64().unwrap(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn fresh_clone_ranks_by_history_and_edits_rank_first() {
    let origin = tempfile::tempdir().unwrap();
    let origin_path = origin.path();
    git(
        origin_path,
        &["init", "-q", "-b", "main"],
        "2023-01-01T00:00:00Z",
    );
    for (file, date) in [
        ("old_parser.py", "2023-01-01T00:00:00Z"),
        ("mid_parser.py", "2023-06-01T00:00:00Z"),
        ("new_parser.py", "2024-01-01T00:00:00Z"),
    ] {
        fs_err::write(
            origin_path.join(file),
            format!("def parse_{}():\n    return 'parser'\n", file.len()),
        )
        .unwrap();
        git(origin_path, &["add", file], date);
        git(origin_path, &["commit", "-q", "-m", file], date);
    }
    let clone = tempfile::tempdir().unwrap();
    let clone_path = clone.path().join("repo");
    git(
        clone.path(),
        &["clone", "-q", origin_path.to_str().unwrap(), "repo"],
        "2024-02-01T00:00:00Z",
    );

    let root = clone_path.to_str().unwrap();
    let run = aic(&["inspect", "parser", "--root", root, "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let recency = recency_of(&run.json());
    assert_eq!(
        recency,
        [
            ("mid_parser.py".to_owned(), 0.5),
            ("new_parser.py".to_owned(), 1.0),
            ("old_parser.py".to_owned(), 0.0)
        ]
    );

    fs_err::write(
        clone_path.join("old_parser.py"),
        "def parse_old():\n    return 'parser, edited'\n",
    )
    .unwrap();
    let run = aic(&["inspect", "parser", "--root", root, "--json"], &[]);
    let recency = recency_of(&run.json());
    assert_eq!(recency[2], ("old_parser.py".to_owned(), 1.0), "{recency:?}");
    assert!(recency[1].1 < 1.0, "{recency:?}");
}
