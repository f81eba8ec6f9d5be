//! The golden prompt of a small fixture repository, and the agreement of `meta`
//! with the prompt it describes.

use aic_stages::fit::tokens::TokenCounter;

use crate::support::{WEBAPP_MTIMES as MTIMES, aic, fixture_repo, prompt_headings};

#[test]
fn golden_prompt_for_a_bugfix_intent() {
    let repo = fixture_repo("webapp", MTIMES);
    let root = repo.path().to_str().unwrap();
    let run = aic(
        &[
            "compile",
            "fix the null check in the user service",
            "--root",
            root,
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!("webapp_bugfix_prompt", run.stdout);
}

#[test]
fn meta_agrees_with_the_prompt() {
    let repo = fixture_repo("webapp", MTIMES);
    let root = repo.path().to_str().unwrap();
    let run = aic(
        &[
            "compile",
            "fix the null check in the user service",
            "--root",
            root,
            "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    let prompt = json["compiledPrompt"].as_str().unwrap();
    let meta = &json["meta"];

    assert!(
        prompt.contains("## Task\n\nfix the null check in the user service\n"),
        "intent verbatim"
    );
    let headings = prompt_headings(prompt);
    assert_eq!(
        meta["filesSelected"].as_u64().unwrap() as usize,
        headings.len()
    );
    let counted = TokenCounter::cl100k().count(prompt).0;
    assert_eq!(meta["tokensCompiled"].as_u64().unwrap(), u64::from(counted));
    assert!(u64::from(counted) <= meta["budget"].as_u64().unwrap());
    assert_eq!(
        meta["filesTotal"].as_u64().unwrap(),
        12,
        "every file of the fixture"
    );
    assert_eq!(meta["taskClass"], "bugfix");

    // The service is the top file; the file holding a (fake) AWS key stays with
    // the key redacted (the default `secretAction`), reported, never printed.
    assert_eq!(headings[0], "src/user/service.ts");
    assert_eq!(
        meta["guard"]["filesRedacted"][0],
        "src/user/legacy-user-keys.ts"
    );
    assert!(prompt.contains("accessKeyId: \"[REDACTED aws-access-key #1]\""));
    assert!(!run.stdout.contains("AKIAIOSFODNN7EXAMPLE"));
    assert!(!run.stderr.contains("AKIAIOSFODNN7EXAMPLE"));
}

#[test]
fn small_budget_compresses_least_relevant_first_and_stays_within_budget() {
    let repo = fixture_repo("webapp", MTIMES);
    let root = repo.path().to_str().unwrap();
    let full = aic(
        &["compile", "user service model", "--root", root, "--json"],
        &[],
    )
    .json();
    let full_tokens = full["meta"]["tokensCompiled"].as_u64().unwrap();
    let budget = (full_tokens - 60).to_string();
    let run = aic(
        &[
            "compile",
            "user service model",
            "--root",
            root,
            "--json",
            "--budget",
            &budget,
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    let prompt = json["compiledPrompt"].as_str().unwrap();
    let tokens = TokenCounter::cl100k().count(prompt).0;
    assert!(u64::from(tokens) <= full_tokens - 60);
    let tiers = json["meta"]["summarisationTiers"].as_object().unwrap();
    let compressed: u64 = tiers
        .iter()
        .filter(|(tier, _)| *tier != "full")
        .map(|(_, n)| n.as_u64().unwrap())
        .sum();
    assert!(compressed >= 1, "{tiers:?}");
    assert!(
        prompt.contains("[signatures+docs]")
            || prompt.contains("[signatures-only]")
            || prompt.contains("[names-only]")
    );
    // The best file keeps its full text.
    assert!(
        prompt.contains("### src/user/service.ts [full]"),
        "{prompt}"
    );
}

#[test]
fn files_fit_at_full_tier_when_budget_allows() {
    let repo = fixture_repo("webapp", MTIMES);
    let root = repo.path().to_str().unwrap();
    let json = aic(
        &["compile", "user service model", "--root", root, "--json"],
        &[],
    )
    .json();
    let tiers = json["meta"]["summarisationTiers"].as_object().unwrap();
    assert_eq!(tiers.keys().collect::<Vec<_>>(), ["full"], "{tiers:?}");
    let prompt = json["compiledPrompt"].as_str().unwrap();
    assert!(
        prompt.contains("findByToken(token: string): User | null {"),
        "bodies are complete"
    );
}

#[test]
fn different_intents_of_one_class_give_different_prompts() {
    let repo = fixture_repo("webapp", MTIMES);
    let root = repo.path().to_str().unwrap();
    let user = aic(&["compile", "fix the user model", "--root", root], &[]);
    let jwt = aic(
        &["compile", "fix the jwt verification", "--root", root],
        &[],
    );
    assert_eq!(user.code, 0, "{}", user.stderr);
    assert_eq!(jwt.code, 0, "{}", jwt.stderr);
    assert_ne!(user.stdout, jwt.stdout);
    assert!(jwt.stdout.contains("## Task\n\nfix the jwt verification\n"));
    assert_eq!(prompt_headings(&jwt.stdout)[0], "src/auth/jwt.ts");
}

#[test]
fn named_targets_are_included_in_full_and_unresolved_ones_are_reported() {
    let repo = fixture_repo("webapp", MTIMES);
    let root = repo.path().to_str().unwrap();
    let run = aic(
        &[
            "compile",
            "why does @src/utils/prefix.ts skip values, see `jwt.ts` and @src/payments.ts",
            "--root",
            root,
            "--json",
            "--budget",
            "900",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    let prompt = json["compiledPrompt"].as_str().unwrap();
    let headings = prompt_headings(prompt);
    assert_eq!(
        headings[..2],
        ["src/utils/prefix.ts", "src/auth/jwt.ts"],
        "{prompt}"
    );
    assert!(prompt.contains("### src/utils/prefix.ts [full]"));
    assert!(prompt.contains("### src/auth/jwt.ts [full]"));
    let warnings = json["meta"]["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("`src/payments.ts` matches no file")),
        "{warnings:?}"
    );
    assert!(run.stderr.contains("src/payments.ts"));
    assert!(
        prompt.contains("## Task\n\nwhy does @src/utils/prefix.ts skip values"),
        "intent verbatim"
    );
}

#[test]
fn ambiguous_targets_are_never_guessed() {
    let repo = fixture_repo("webapp", MTIMES);
    fs_err::write(
        repo.path().join("src/auth/model.ts"),
        "export type Role = string;\n",
    )
    .unwrap();
    let root = repo.path().to_str().unwrap();
    let run = aic(
        &[
            "inspect",
            "rename the type in @model.ts",
            "--root",
            root,
            "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let trace = run.json();
    assert_eq!(trace["targets"][0]["resolution"], "ambiguous");
    assert_eq!(
        trace["targets"][0]["candidates"].as_array().unwrap().len(),
        2
    );
    assert!(
        trace["selectedFiles"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["target"].is_null())
    );
}

#[test]
fn related_files_are_boosted_and_exempt_from_penalties() {
    let repo = fixture_repo("webapp", MTIMES);
    let root = repo.path().to_str().unwrap();
    let find = |trace: &serde_json::Value, path: &str| {
        trace["selectedFiles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .cloned()
    };
    let plain = aic(
        &["inspect", "fix the user service", "--root", root, "--json"],
        &[],
    )
    .json();
    let hinted = aic(
        &[
            "inspect",
            "fix the user service",
            "--root",
            root,
            "--json",
            "--related",
            "tests/service.test.ts",
            "--related",
            "nope.ts",
        ],
        &[],
    );
    let hinted_trace = hinted.json();
    let test_file =
        find(&hinted_trace, "tests/service.test.ts").expect("the related test is selected");
    assert_eq!(test_file["boostedBy"][0], "related file");
    assert!(test_file["penalizedBy"].is_null(), "{test_file}");
    if let Some(before) = find(&plain, "tests/service.test.ts") {
        assert!(test_file["score"].as_f64().unwrap() > before["score"].as_f64().unwrap());
    }
    assert!(
        hinted
            .stderr
            .contains("Related file `nope.ts` is not in scope"),
        "{}",
        hinted.stderr
    );
}

#[test]
fn files_imported_by_the_subject_are_selected_through_the_import_graph() {
    let repo = fixture_repo("webapp", MTIMES);
    let root = repo.path().to_str().unwrap();
    let trace = aic(
        &[
            "inspect",
            "fix the null check in the user service",
            "--root",
            root,
            "--json",
        ],
        &[],
    )
    .json();
    let jwt = trace["selectedFiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "src/auth/jwt.ts")
        .expect("jwt.ts is imported by the user service");
    assert!(
        (jwt["signals"]["importProximity"].as_f64().unwrap() - 0.6).abs() < 1e-9,
        "{jwt}"
    );
    assert!(trace["importGraph"]["edges"].as_u64().unwrap() >= 3);
}

#[test]
fn inspect_all_accounts_for_every_file_once() {
    let repo = fixture_repo("webapp", MTIMES);
    let root = repo.path().to_str().unwrap();
    let trace = aic(
        &["inspect", "user service", "--root", root, "--json", "--all"],
        &[],
    )
    .json();
    let mut paths: Vec<String> = trace["selectedFiles"]
        .as_array()
        .unwrap()
        .iter()
        .chain(trace["excludedFiles"].as_array().unwrap())
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect();
    paths.sort();
    let before = paths.len();
    paths.dedup();
    assert_eq!(before, paths.len(), "a file is listed twice");
    assert_eq!(paths.len() as u64, trace["filesTotal"].as_u64().unwrap());
    assert!(
        trace["excludedFiles"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["reason"].is_string())
    );
    let table = aic(&["inspect", "user service", "--root", root, "--all"], &[]);
    assert!(
        table.stdout.contains("| package.json |"),
        "{}",
        table.stdout
    );
}

#[test]
fn secret_action_block_drops_the_file_and_env_files_never_enter() {
    let repo = fixture_repo("webapp", MTIMES);
    fs_err::write(
        repo.path().join("aic.config.json"),
        r#"{"guard": {"secretAction": "block"}}"#,
    )
    .unwrap();
    let root = repo.path().to_str().unwrap();
    let run = aic(
        &[
            "compile",
            "user keys and env settings @.env",
            "--root",
            root,
            "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    let blocked = json["meta"]["guard"]["filesBlocked"].as_array().unwrap();
    assert!(
        blocked.iter().any(|f| f == "src/user/legacy-user-keys.ts"),
        "{blocked:?}"
    );
    assert!(blocked.iter().any(|f| f == ".env"), "{blocked:?}");
    let headings = prompt_headings(json["compiledPrompt"].as_str().unwrap());
    assert!(
        !headings
            .iter()
            .any(|h| h.ends_with("legacy-user-keys.ts") || h == ".env")
    );
    assert!(!run.stdout.contains("AKIAIOSFODNN7EXAMPLE"));
    assert!(!run.stdout.contains("not-a-real-secret"));
    assert!(
        run.stderr.contains("warning: Context Guard blocked"),
        "{}",
        run.stderr
    );
}
