//! `aic` on real source trees present on every machine: the unpacked sources of
//! this workspace's own dependencies.

use crate::support::{aic, dependency_source, prompt_files};

fn top_files(crate_name: &str, intent: &str) -> Vec<String> {
    let source = dependency_source(crate_name);
    let run = aic(
        &[
            "inspect",
            intent,
            "--root",
            source.to_str().unwrap(),
            "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    prompt_files(&run.json())
}

#[test]
fn gitignore_intent_selects_the_gitignore_matcher() {
    let files = top_files("ignore", "how are gitignore files parsed");
    assert_eq!(
        files.first().map(String::as_str),
        Some("src/gitignore.rs"),
        "{files:?}"
    );
}

#[test]
fn glob_intent_selects_the_glob_module() {
    let files = top_files("globset", "fix glob compilation");
    assert!(
        files.iter().take(3).any(|f| f == "src/glob.rs"),
        "{files:?}"
    );
}

#[test]
fn whole_word_matching_on_a_real_tree() {
    // "fix" must never select a file for containing "prefix" or "fixture".
    let files = top_files("regex-syntax", "fix unicode class parsing");
    assert!(!files.is_empty());
    for file in &files {
        assert!(
            !file.contains("prefix")
                || file.contains("unicode")
                || file.contains("class")
                || file.contains("pars"),
            "{file}"
        );
    }
}

#[test]
fn compile_json_stays_within_budget_on_a_real_tree() {
    let source = dependency_source("serde_json");
    let run = aic(
        &[
            "compile",
            "number parsing precision",
            "--root",
            source.to_str().unwrap(),
            "--json",
            "--budget",
            "3000",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    let tokens = json["meta"]["tokensCompiled"].as_u64().unwrap();
    assert!(tokens <= 3000, "{tokens}");
    assert!(json["meta"]["filesSelected"].as_u64().unwrap() >= 1);
}
