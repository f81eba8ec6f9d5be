//! `aic rules` on fixture projects (`tests/fixtures/rules/`), and the rules
//! summary of `aic status` and the MCP tool `aic_status`. Every run has its
//! own or the shared empty `HOME`, so no user-level rule file of the machine
//! reaches the results.

use serde_json::{Value, json};

use crate::support::{CliTest, aic, fixture_repo, private_tempdir};

/// `aic rules --json` of a copy of `tests/fixtures/rules/<name>`.
fn rules_of(name: &str) -> Value {
    let repo = fixture_repo(&format!("rules/{name}"), &[]);
    let root = repo.path().to_str().unwrap();
    let run = aic(&["rules", "--root", root, "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

#[test]
fn a_script_calling_aic_beside_an_aic_handler_is_a_doubled_hook() {
    let analysis = rules_of("doubled-hook");
    let findings = analysis["findings"].as_array().unwrap();
    // One finding: the script's `aic compile` beside the exec-form handler of
    // the same event. The two PreToolUse handlers run different checks.
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let finding = &findings[0];
    assert_eq!(finding["severity"], "warn");
    assert_eq!(finding["code"], "doubled-hook");
    assert_eq!(
        finding["places"],
        json!([
            {"path": ".claude/settings.json", "line": 8},
            {"path": ".claude/settings.json", "line": 17},
            {"path": ".claude/hooks/add-context.sh", "line": 5},
        ]),
        "{finding:#?}"
    );
    assert_eq!(
        finding["message"],
        "`\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/add-context.sh` runs `.claude/hooks/add-context.sh`, which calls aic (line 5) for UserPromptSubmit beside the aic handler `/usr/local/bin/aic hook claude UserPromptSubmit`: both inject aic's context, twice on every event; keep one"
    );
}

#[test]
fn an_unrelated_script_hook_and_distinct_aic_checks_give_no_finding() {
    let analysis = rules_of("clean-hooks");
    assert_eq!(analysis["findings"], json!([]), "{analysis:#}");
    assert_eq!(analysis["files"][0]["path"], ".claude/settings.json");
    assert_eq!(analysis["files"][0]["kind"], "hooks");
}

#[test]
fn status_summarises_the_rules_analysis_with_the_user_files() {
    let test = CliTest::with_fixture("rules/doubled-hook", &[]);
    let root = test.root().to_str().unwrap();
    let aic_home = test.home().to_str().unwrap();
    // The user's own CLAUDE.md, paid on every prompt, contradicts itself.
    let home = private_tempdir();
    let user_rules = "- Always commit the lock file with the change.\n- Never commit the lock file with the change.\n";
    fs_err::create_dir_all(home.path().join(".claude")).unwrap();
    fs_err::write(home.path().join(".claude/CLAUDE.md"), user_rules).unwrap();
    let home = home.path().to_str().unwrap();
    let env = [("AIC_HOME", aic_home), ("HOME", home)];
    let status = aic(&["status", "--root", root, "--json"], &env);
    assert_eq!(status.code, 0, "{}", status.stderr);
    let rules = &status.json()["rules"];
    let tokens = aic_stages::fit::tokens::TokenCounter::cl100k()
        .count(user_rules)
        .get();
    assert_eq!(
        rules,
        &json!({
            "files": 2,
            "alwaysAppliedTokens": tokens,
            "findings": {"error": 1, "warn": 1, "info": 0},
            "details": "`aic rules` (MCP resource `aic://rules-analysis`)",
        })
    );
    // The same as `aic rules` counts.
    let analysis = aic(&["rules", "--root", root, "--json"], &env).json();
    assert_eq!(analysis["files"].as_array().unwrap().len(), 2);
    assert_eq!(analysis["alwaysAppliedTokens"], tokens);
    // In words, one row.
    let words = aic(&["status", "--root", root], &env);
    assert_eq!(words.code, 0, "{}", words.stderr);
    let row = words
        .stdout
        .lines()
        .find(|line| line.contains("rule files"))
        .unwrap_or_else(|| panic!("no rule files row in\n{}", words.stdout));
    let row = row.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(row.contains("rule files"), "{row}");
    assert!(
        row.contains(&format!(
            "2 files, {tokens} tokens on every prompt; 1 error, 1 warn, 0 info (details: `aic rules`)"
        )),
        "{row}"
    );
}

/// `aic rules --check` exits 1 on a contradiction (for CI) and 0 on a clean
/// project; without `--check` a contradiction still exits 0.
#[test]
fn check_fails_on_a_contradiction_only() {
    let dir = private_tempdir();
    let root = dir.path().to_str().unwrap();
    fs_err::write(
        dir.path().join("CLAUDE.md"),
        "- Use pnpm to install packages.\n- Use npm to install packages.\n",
    )
    .unwrap();
    let checked = aic(&["rules", "--root", root, "--check"], &[]);
    assert_eq!(checked.code, 1, "{}", checked.stderr);
    assert!(
        checked.stdout.contains("error contradiction"),
        "{}",
        checked.stdout
    );
    let plain = aic(&["rules", "--root", root], &[]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    fs_err::write(
        dir.path().join("CLAUDE.md"),
        "- Use pnpm to install packages.\n",
    )
    .unwrap();
    let clean = aic(&["rules", "--root", root, "--check"], &[]);
    assert_eq!(clean.code, 0, "{}", clean.stderr);
}
