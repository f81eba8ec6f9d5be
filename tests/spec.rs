//! `aic spec` end to end: the worked example of docs/spec-compiler.md (its outputs are checked
//! against the binary's), budgets, determinism across shuffled types, the spec cache, and the
//! errors for bad input.

use std::path::{Path, PathBuf};

use aic_stages::fit::tokens::TokenCounter;

use crate::support::aic;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spec/stage-traits.json")
}

fn spec(args: &[&str], home: &Path) -> crate::support::Run {
    let mut all = vec!["spec"];
    all.extend_from_slice(args);
    aic(&all, &[("AIC_HOME", home.to_str().unwrap())])
}

/// The blocks of docs/spec-compiler.md that follow an `<!-- aic spec … -->` marker: the
/// arguments after `aic spec` and the text of the fenced block after the marker.
fn documented_outputs() -> Vec<(Vec<String>, String)> {
    let doc =
        fs_err::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/spec-compiler.md"))
            .unwrap();
    let mut out = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(args) = line
            .strip_prefix("<!-- output of: aic spec ")
            .and_then(|rest| rest.strip_suffix(" -->"))
        else {
            continue;
        };
        let fence = lines.next().unwrap();
        assert!(
            fence.starts_with("````"),
            "a fence follows the marker: {fence}"
        );
        let mut body = String::new();
        for line in lines.by_ref() {
            if line == "````" {
                break;
            }
            body.push_str(line);
            body.push('\n');
        }
        out.push((args.split(' ').map(str::to_owned).collect(), body));
    }
    out
}

#[test]
fn the_documented_outputs_are_what_the_binary_prints() {
    let home = tempfile::tempdir().unwrap();
    let outputs = documented_outputs();
    assert!(outputs.len() >= 2, "the worked example shows two budgets");
    for (args, expected) in outputs {
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        let fixture = fixture();
        for arg in &mut args {
            if *arg == "tests/fixtures/spec/stage-traits.json" {
                *arg = fixture.to_str().unwrap();
            }
        }
        let run = spec(&args, home.path());
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(
            run.stdout, expected,
            "docs/spec-compiler.md is out of date for {args:?}"
        );
    }
}

#[test]
fn every_budget_is_met_from_the_minimum_up_and_meta_agrees() {
    let home = tempfile::tempdir().unwrap();
    let fixture = fixture();
    let file = fixture.to_str().unwrap();
    let full = spec(
        &[file, "--budget", "100000", "--json", "--no-cache"],
        home.path(),
    )
    .json();
    let minimum = full["meta"]["minimumTokens"].as_u64().unwrap();
    let raw = full["meta"]["totalTokensRaw"].as_u64().unwrap();
    assert!(minimum < raw);
    let step = ((raw - minimum) / 9).max(1);
    let mut budget = minimum;
    while budget <= raw {
        let run = spec(
            &[
                file,
                "--budget",
                &budget.to_string(),
                "--json",
                "--no-cache",
            ],
            home.path(),
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        let json = run.json();
        let compiled = json["compiledSpec"].as_str().unwrap();
        let tokens = TokenCounter::cl100k().count(compiled).get();
        assert!(tokens <= budget, "{tokens} > {budget}");
        assert_eq!(
            json["meta"]["totalTokensCompiled"].as_u64().unwrap(),
            tokens
        );
        assert_eq!(json["meta"]["truncated"], false);
        assert_eq!(json["meta"]["typeTiers"].as_object().unwrap().len(), 9);
        budget += step;
    }
    let below = spec(
        &[file, "--budget", "20", "--json", "--no-cache"],
        home.path(),
    );
    assert_eq!(below.code, 0, "{}", below.stderr);
    assert!(
        below
            .stderr
            .contains("warning: A budget of 20 tokens is below"),
        "{}",
        below.stderr
    );
    let json = below.json();
    assert_eq!(json["meta"]["truncated"], true);
    assert!(
        json["compiledSpec"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{}\n", aic_stages::spec::TRUNCATION_BANNER))
    );
}

#[test]
fn a_budget_of_zero_is_the_default_as_in_the_mcp_tool() {
    let home = tempfile::tempdir().unwrap();
    let fixture = fixture();
    let file = fixture.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![file, "--json", "--no-cache"];
        args.extend_from_slice(extra);
        let run = spec(&args, home.path());
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.stdout
    };
    assert_eq!(run(&["--budget", "0"]), run(&[]));
    assert_eq!(run(&[]), run(&["--budget", "4000"]));
}

#[test]
fn shuffled_types_give_the_same_bytes() {
    let home = tempfile::tempdir().unwrap();
    let text = fs_err::read_to_string(fixture()).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let types = value["types"].as_array_mut().unwrap();
    types.reverse();
    types.swap(0, 3);
    let shuffled = home.path().join("shuffled.json");
    fs_err::write(&shuffled, serde_json::to_string(&value).unwrap()).unwrap();
    for budget in ["4000", "1500", "900"] {
        let original = spec(
            &[
                fixture().to_str().unwrap(),
                "--budget",
                budget,
                "--json",
                "--no-cache",
            ],
            home.path(),
        );
        let reordered = spec(
            &[
                shuffled.to_str().unwrap(),
                "--budget",
                budget,
                "--json",
                "--no-cache",
            ],
            home.path(),
        );
        assert_eq!(original.code, 0, "{}", original.stderr);
        assert_eq!(original.stdout, reordered.stdout, "budget {budget}");
    }
}

#[test]
fn a_second_compile_comes_from_the_cache_and_a_bad_database_only_warns() {
    let home = tempfile::tempdir().unwrap();
    let fixture = fixture();
    let file = fixture.to_str().unwrap();
    let cold = spec(&[file, "-v"], home.path());
    assert_eq!(cold.code, 0, "{}", cold.stderr);
    assert!(!cold.stderr.contains("from the cache"), "{}", cold.stderr);
    let warm = spec(&[file, "-v"], home.path());
    assert!(warm.stderr.contains("from the cache"), "{}", warm.stderr);
    assert_eq!(cold.stdout, warm.stdout);
    // Another budget is another key.
    let other = spec(&[file, "-v", "--budget", "1500"], home.path());
    assert!(!other.stderr.contains("from the cache"), "{}", other.stderr);
    let uncached = spec(&[file, "-v", "--no-cache"], home.path());
    assert!(!uncached.stderr.contains("from the cache"));
    assert_eq!(uncached.stdout, cold.stdout);

    let broken = tempfile::tempdir().unwrap();
    fs_err::write(broken.path().join("aic.redb"), b"not a database at all").unwrap();
    let run = spec(&[file], broken.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("Compiling without the spec cache"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, cold.stdout);
}

#[test]
fn a_request_file_and_stdin_work_too() {
    let home = tempfile::tempdir().unwrap();
    let request = home.path().join("request.json");
    fs_err::write(
        &request,
        r#"{"spec": {"prose": [{"label": "Task", "content": "Rename `Store` to `Cache`."}]}, "budget": 50}"#,
    )
    .unwrap();
    let run = spec(&[request.to_str().unwrap(), "--json"], home.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    assert_eq!(json["meta"]["budget"], 50);
    assert_eq!(
        json["compiledSpec"],
        "## Task\nRename `Store` to `Cache`.\n"
    );

    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_aic"));
    command
        .args(["spec", "-", "--no-cache"])
        .env("AIC_HOME", home.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    std::io::Write::write_all(
        child.stdin.as_mut().unwrap(),
        br#"{"prose": [{"label": "Task", "content": "Hi."}]}"#,
    )
    .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stdout), "## Task\nHi.\n");
}

#[test]
fn bad_input_names_the_file_and_the_field_with_exit_code_3() {
    let home = tempfile::tempdir().unwrap();
    let bad = home.path().join("bad.json");
    fs_err::write(
        &bad,
        r#"{"types": [{"name": "A", "path": "src/a.rs", "content": "", "usage": "extends"}]}"#,
    )
    .unwrap();
    let run = spec(&[bad.to_str().unwrap()], home.path());
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stdout.is_empty());
    let shown = bad.display().to_string();
    assert!(
        run.stderr.starts_with(&format!(
            "error: Invalid specification in `{shown}`: types[0].usage: expected one of `implements`"
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("hint: fix `types[0].usage` in `{shown}`")),
        "{}",
        run.stderr
    );

    fs_err::write(&bad, "{\"types\": [").unwrap();
    let run = spec(&[bad.to_str().unwrap()], home.path());
    assert_eq!(run.code, 3);
    assert!(
        run.stderr.contains("not valid JSON at line 1"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("hint: fix the JSON syntax"),
        "{}",
        run.stderr
    );

    let missing = home.path().join("missing.json");
    let run = spec(&[missing.to_str().unwrap()], home.path());
    assert_eq!(run.code, 3);
    assert!(
        run.stderr
            .contains("error: Failed to read the specification"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("Caused by:"), "{}", run.stderr);
}

#[test]
fn the_model_picks_the_encoding_and_the_claude_margin() {
    let home = tempfile::tempdir().unwrap();
    let fixture = fixture();
    let fixture = fixture.to_str().unwrap();
    let compile = |model: Option<&str>| {
        let mut args = vec![fixture, "--budget", "1500", "--json", "--no-cache"];
        if let Some(model) = model {
            args.extend(["--model", model]);
        }
        let run = spec(&args, home.path());
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.json()
    };
    let default = compile(None);
    assert_eq!(default["meta"]["tokenizer"], "cl100k_base");
    assert_eq!(default["meta"]["budget"], 1500);
    // GPT-4o: fitted and counted in o200k_base, exactly.
    let gpt = compile(Some("gpt-4o"));
    assert_eq!(gpt["meta"]["tokenizer"], "o200k_base");
    assert_eq!(gpt["meta"]["budget"], 1500);
    let text = gpt["compiledSpec"].as_str().unwrap();
    let counted = u64::from(TokenCounter::o200k().count(text).0);
    assert_eq!(gpt["meta"]["totalTokensCompiled"], counted);
    assert!(counted <= 1500, "{counted}");
    assert_ne!(
        u64::from(TokenCounter::cl100k().count(text).0),
        counted,
        "the two encodings count this text alike: the test shows nothing"
    );
    // Claude: cl100k_base less the 25 % margin.
    let claude = compile(Some("claude-sonnet-4-5"));
    assert_eq!(claude["meta"]["tokenizer"], "cl100k_base");
    assert_eq!(claude["meta"]["budget"], 1200);
    assert!(claude["meta"]["totalTokensCompiled"].as_u64().unwrap() <= 1200);
}
