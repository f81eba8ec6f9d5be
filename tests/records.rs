//! What aic remembers per project: the compilation log and its diagnostics,
//! the whole-prompt cache and its key rules, two processes on one database.

use std::path::Path;

use crate::support::{Run, aic, fixture_repo};

const INTENT: &str = "fix the null check in the user service";

fn run_in(home: &Path, args: &[&str]) -> Run {
    aic(args, &[("AIC_HOME", home.to_str().unwrap())])
}

fn compile_json(home: &Path, root: &Path, intent: &str) -> serde_json::Value {
    let run = run_in(
        home,
        &[
            "compile",
            intent,
            "--root",
            root.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

#[test]
fn a_repeated_compile_is_a_cache_hit_and_every_compile_is_logged() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let first = compile_json(home.path(), repo.path(), INTENT);
    assert_eq!(first["meta"]["cacheHit"], false);
    let second = compile_json(home.path(), repo.path(), INTENT);
    assert_eq!(second["meta"]["cacheHit"], true);
    assert_eq!(first["compiledPrompt"], second["compiledPrompt"]);
    // Whitespace in the intent is normalised for the key.
    let spaced = compile_json(
        home.path(),
        repo.path(),
        "fix the  null check in the user service ",
    );
    assert_eq!(spaced["meta"]["cacheHit"], true);

    let root = repo.path().to_str().unwrap();
    let status = run_in(home.path(), &["status", "--root", root, "--json"]).json();
    assert_eq!(status["compilationsTotal"], 3);
    assert_eq!(status["cacheHitRatePct"], 66.7);
}

#[test]
fn two_intents_of_one_task_class_never_share_an_entry() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let one = compile_json(
        home.path(),
        repo.path(),
        "fix the null check in the user service",
    );
    let two = compile_json(
        home.path(),
        repo.path(),
        "fix the token expiry check in jwt",
    );
    assert_eq!(one["meta"]["taskClass"], two["meta"]["taskClass"]);
    assert_eq!(two["meta"]["cacheHit"], false);
    assert_ne!(one["compiledPrompt"], two["compiledPrompt"]);
    assert!(
        two["compiledPrompt"]
            .as_str()
            .unwrap()
            .contains("fix the token expiry check in jwt")
    );
}

#[test]
fn touching_a_file_or_the_config_is_a_miss() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    compile_json(home.path(), repo.path(), INTENT);
    let file = repo.path().join("src/utils/prefix.ts");
    let handle = std::fs::File::options().write(true).open(&file).unwrap();
    handle.set_modified(std::time::SystemTime::now()).unwrap();
    drop(handle);
    assert_eq!(
        compile_json(home.path(), repo.path(), INTENT)["meta"]["cacheHit"],
        false
    );
    assert_eq!(
        compile_json(home.path(), repo.path(), INTENT)["meta"]["cacheHit"],
        true
    );
    fs_err::write(
        repo.path().join("aic.config.json"),
        r#"{"contextSelector": {"maxFiles": 3}}"#,
    )
    .unwrap();
    assert_eq!(
        compile_json(home.path(), repo.path(), INTENT)["meta"]["cacheHit"],
        false
    );
}

#[test]
fn a_zero_ttl_or_no_cache_never_answers_from_the_cache() {
    let repo = fixture_repo("webapp", &[]);
    fs_err::write(
        repo.path().join("aic.config.json"),
        r#"{"cache": {"ttlMinutes": 0}}"#,
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    compile_json(home.path(), repo.path(), INTENT);
    assert_eq!(
        compile_json(home.path(), repo.path(), INTENT)["meta"]["cacheHit"],
        false
    );
    let root = repo.path().to_str().unwrap();
    let run = run_in(
        home.path(),
        &["compile", INTENT, "--root", root, "--json", "--no-cache"],
    );
    assert_eq!(run.json()["meta"]["cacheHit"], false);
}

#[test]
fn last_names_the_selection_without_content_or_secrets() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let compiled = compile_json(home.path(), repo.path(), INTENT);
    let root = repo.path().to_str().unwrap();
    let run = run_in(home.path(), &["last", "--root", root, "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let last = run.json();
    assert_eq!(last["compilationCount"], 1);
    let files = last["selection"]["files"].as_array().unwrap();
    assert!(
        files
            .iter()
            .any(|f| f["path"] == "src/user/service.ts" && f["score"].as_f64().unwrap() > 0.0),
        "{last}"
    );
    assert_eq!(
        last["lastCompilation"]["tokensCompiled"],
        compiled["meta"]["tokensCompiled"]
    );
    let key = concat!("AKIA", "IOSFODNN7", "EXAMPLE");
    assert!(!run.stdout.contains(key), "a secret in aic last");
    let service = fs_err::read_to_string(repo.path().join("src/user/service.ts")).unwrap();
    let body_line = service
        .lines()
        .find(|l| l.trim().len() > 30)
        .unwrap()
        .trim();
    assert!(!run.stdout.contains(body_line), "file content in aic last");
    // The table form too.
    let table = run_in(home.path(), &["last", "--root", root]);
    assert!(
        table.stdout.contains("src/user/service.ts"),
        "{}",
        table.stdout
    );
}

#[test]
fn two_processes_log_two_projects_into_one_database_in_isolation() {
    let repos = [fixture_repo("webapp", &[]), fixture_repo("webapp", &[])];
    let home = tempfile::tempdir().unwrap();
    let intents = [INTENT, "fix the token expiry check in jwt"];
    std::thread::scope(|scope| {
        for (repo, intent) in repos.iter().zip(intents) {
            let home = home.path();
            scope.spawn(move || compile_json(home, repo.path(), intent));
        }
    });
    let projects = run_in(home.path(), &["projects", "--json"]).json();
    assert_eq!(projects.as_array().unwrap().len(), 2, "{projects}");
    for (repo, intent) in repos.iter().zip(intents) {
        let root = repo.path().to_str().unwrap();
        let last = run_in(home.path(), &["last", "--root", root, "--json"]).json();
        assert_eq!(last["compilationCount"], 1);
        assert_eq!(last["lastCompilation"]["intent"], intent);
    }
}

#[test]
fn diagnostics_of_an_unknown_project_say_so() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let root = repo.path().to_str().unwrap();
    let status = run_in(home.path(), &["status", "--root", root, "--json"]);
    assert_eq!(status.code, 0, "{}", status.stderr);
    assert_eq!(status.json()["compilationsTotal"], 0);
    let quality = run_in(
        home.path(),
        &["quality", "--root", root, "--json", "--days", "400"],
    );
    assert_ne!(quality.code, 0);
    assert!(quality.stderr.contains("1..=365"), "{}", quality.stderr);
}

#[test]
fn a_secret_pasted_into_an_intent_is_not_logged() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let key = concat!("AKIA", "IOSFODNN7", "EXAMPLE");
    let intent = format!("fix the user service, the key {key} is rejected");
    compile_json(home.path(), repo.path(), &intent);
    let root = repo.path().to_str().unwrap();
    let last = run_in(home.path(), &["last", "--root", root, "--json"]);
    assert!(!last.stdout.contains(key), "{}", last.stdout);
    assert!(
        last.stdout.contains("[REDACTED aws-access-key"),
        "{}",
        last.stdout
    );
}
