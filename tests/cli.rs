//! What the command line prints, as snapshots: the inspect report, the meta of
//! a compile, diagnostics, and every failure with its exit code, message and
//! hint. Temp paths, times and ids are redacted ([`CliTest::filters`]).

use std::fmt::Write;

use crate::support::{CliTest, WEBAPP_MTIMES as MTIMES, cli_snapshot};

#[test]
fn the_inspect_report_of_a_bugfix_intent() {
    let test = CliTest::with_fixture("webapp", MTIMES);
    let run = test.run(&[
        "inspect",
        "fix the null check in the user service",
        "--root",
        "[ROOT]",
    ]);
    cli_snapshot!(test, CliTest::render(&run), @"
    exit code: 0
    ----- stdout -----
    Task Classification
      Class: bugfix (confidence: 0.75)
      Keywords: [fix]
      Subject tokens: [null, check, user, servic]

    Rule Packs Applied
      1. built-in:default
      2. built-in:bugfix

    Total budget: 123,500 cl100k_base tokens (automatic) | Overhead: 188 | Code budget: 123,312 tokens
    Scan: 12 files in scope; skipped 0 binary, 0 too large, 0 unreadable, 0 symlinks

    Selected Files (5 of 12 candidates; maxFiles 5 auto)
        # | File                         | Score |  Tokens | Tier            | path  imp   sym   text  rec   size | note
        1 | src/user/service.ts          |  0.44 |     181 | full            | 0.40  1.00  0.50  1.00  1.00  0.00 | selected
        2 | src/user/model.ts            |  0.26 |      64 | full            | 0.15  1.00  0.25  0.27  0.80  0.72 | selected
        3 | src/user/legacy-user-keys.ts |  0.17 |      67 | full            | 0.25  1.00  0.00  0.24  0.20  0.78 | selected
        4 | src/auth/jwt.ts              |  0.12 |       0 | -               | 0.00  0.60  0.00  0.00  0.60  0.55 | below the relevance cut-off: listed by path in the notes
        5 | README.md                    |  0.00 |       0 | -               | 0.00  0.00  0.00  0.47  0.00  0.83 | below the relevance cut-off: listed by path in the notes; penalized by file kind: docs
      Excluded: 0 by excludePatterns, 0 not in includePatterns, 5 with no path, import, symbol or content signal, 2 below the maxFiles cut

    Guard
      Status: 0 files blocked, 1 findings
      - Warn src/user/legacy-user-keys.ts:3: Possible AWS access key, replaced by `[REDACTED aws-access-key #1]` [aws-access-key]

    Token Summary
      Raw (all 12 files, estimated): 715
      Selected:          270
      After guard:       270
      After transforms:  270
      After ladder:      312
      Prompt total:      500
      Reduction:         30.1%

    Constraints (6)
      - Keep changes focused on the task; do not modify unrelated code
      - Follow the conventions of the surrounding code
      - Use only APIs visible in the context or in the language's standard library; say so when something needed is missing
      - Fix the root cause rather than masking the symptom
      - Preserve existing behaviour outside the fix
      - Add or update a test that fails without the fix

    Warnings
      - Context Guard redacted secrets in: src/user/legacy-user-keys.ts (details: meta.guard, or `aic inspect`)

    Phases: prepare [TIME] ms | scan [TIME] ms | select [TIME] ms | facts [TIME] ms | fit [TIME] ms | assemble [TIME] ms | account [TIME] ms

    ----- stderr -----
    warning: Context Guard redacted secrets in: src/user/legacy-user-keys.ts (details: meta.guard, or `aic inspect`)
    ");
}

#[test]
fn the_meta_of_a_compile() {
    let test = CliTest::with_fixture("webapp", MTIMES);
    let run = test.run(&[
        "compile",
        "fix the null check in the user service",
        "--root",
        "[ROOT]",
        "--budget",
        "900",
        "--json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let meta = serde_json::to_string_pretty(&run.json()["meta"]).unwrap();
    cli_snapshot!(test, meta, @r#"
    {
      "intent": "fix the null check in the user service",
      "taskClass": "bugfix",
      "filesSelected": 3,
      "filesTotal": 12,
      "tokensRaw": 715,
      "tokensCompiled": 485,
      "tokenReductionPct": 32.2,
      "cacheHit": false,
      "durationMs": "[TIME]",
      "modelId": "unknown",
      "editorId": "cli",
      "transformTokensSaved": 0,
      "summarisationTiers": {
        "full": 2,
        "signatures+docs": 1
      },
      "filesSliced": 0,
      "guard": {
        "passed": true,
        "findings": [
          {
            "severity": "warn",
            "type": "secret",
            "file": "src/user/legacy-user-keys.ts",
            "line": 3,
            "message": "Possible AWS access key, replaced by `[REDACTED aws-access-key #1]`",
            "pattern": "aws-access-key"
          }
        ],
        "filesBlocked": [],
        "filesRedacted": [
          "src/user/legacy-user-keys.ts"
        ]
      },
      "contextCompleteness": 0.555,
      "budget": 900,
      "tokenizer": "cl100k_base",
      "contextWindow": 128000,
      "warnings": [
        "Context Guard redacted secrets in: src/user/legacy-user-keys.ts (details: meta.guard, or `aic inspect`)"
      ]
    }
    "#);
}

/// The rows of a facts table, borders gone, runs of spaces collapsed and
/// times redacted.
fn fact_rows(table: &str) -> Vec<String> {
    let time = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z").unwrap();
    table
        .lines()
        .map(|line| {
            let words = line
                .trim_matches(|c: char| c == '│' || c.is_whitespace())
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            time.replace_all(&words, "[TIME]").into_owned()
        })
        .collect()
}

/// The webapp fixture after one compile, for the diagnostics that read its log.
fn after_a_compile() -> CliTest {
    let test = CliTest::with_fixture("webapp", MTIMES);
    let compiled = test.run(&["compile", "user service", "--root", "[ROOT]"]);
    assert_eq!(compiled.code, 0, "{}", compiled.stderr);
    test
}

#[test]
fn status_after_a_compile_as_json() {
    let test = after_a_compile();
    let status = test.run(&["status", "--root", "[ROOT]", "--json"]);
    cli_snapshot!(test, CliTest::render(&status), @r#"
    exit code: 0
    ----- stdout -----
    {
      "projectRoot": "[ROOT]",
      "projectId": "[ID]",
      "timeRangeDays": null,
      "compilationsTotal": 1,
      "compilationsInRange": 1,
      "cacheHitRatePct": 0.0,
      "avgReductionPct": 35.8,
      "totalTokensRaw": 715,
      "totalTokensCompiled": 459,
      "totalTokensSaved": 256,
      "budgetMaxTokens": 123500,
      "budgetUtilisationPct": 0.4,
      "guard": {
        "findings": 1,
        "blockedFiles": 0,
        "byType": {
          "secret": 1
        }
      },
      "topTaskClasses": [
        {
          "taskClass": "general",
          "count": 1
        }
      ],
      "lastCompilation": {
        "intent": "user service",
        "taskClass": "general",
        "filesSelected": 3,
        "filesTotal": 12,
        "tokensCompiled": 459,
        "tokenReductionPct": 35.8,
        "allocatedTotalBudget": 123500,
        "cacheHit": false,
        "durationMs": "[TIME]",
        "editorId": "cli",
        "modelId": "unknown",
        "triggerSource": "cli",
        "conversationId": null,
        "guardFindingCount": 1,
        "guardBlockCount": 0,
        "createdAt": "[TIME]"
      },
      "rules": {
        "files": 0,
        "alwaysAppliedTokens": 0,
        "findings": {
          "error": 0,
          "warn": 0,
          "info": 0
        },
        "details": "`aic rules` (MCP resource `aic://rules-analysis`)"
      },
      "serverSessions": {
        "total": 0,
        "crashes": 0,
        "running": 0,
        "last": null
      }
    }

    ----- stderr -----
    "#);
}

#[test]
fn status_after_a_compile_in_words() {
    let test = after_a_compile();
    // The same facts in words and units, one per row.
    let status = test.run(&["status", "--root", "[ROOT]"]);
    assert_eq!(status.code, 0, "{}", status.stderr);
    let rows = fact_rows(&status.stdout);
    for row in [
        "compilations 1",
        "cache hit rate 0 %",
        "average token reduction 35.8 %",
        "tokens 715 raw, 459 compiled, 256 saved",
        "budget 123,500 tokens; the last compile used 0.4 %",
        "guard 1 finding (secret 1); 0 files blocked",
        "top task classes general 1",
        "last compilation \"user service\" at [TIME]",
        "files 3 selected of 12",
        "tokens 459 of a 123,500 budget (35.8 % fewer than the files)",
        "caller cli, model unknown, trigger cli",
        "rule files 0 files, 0 tokens on every prompt; 0 error, 0 warn, 0 info (details: `aic rules`)",
    ] {
        assert!(rows.iter().any(|r| r == row), "no row `{row}` in {rows:#?}");
    }
    assert!(
        !status.stdout.contains("cacheHitRatePct"),
        "{}",
        status.stdout
    );
}

#[test]
fn last_after_a_compile() {
    let test = after_a_compile();
    let last = test.run(&["last", "--root", "[ROOT]", "--json"]);
    cli_snapshot!(test, CliTest::render(&last), @r#"
    exit code: 0
    ----- stdout -----
    {
      "projectRoot": "[ROOT]",
      "compilationCount": 1,
      "lastCompilation": {
        "intent": "user service",
        "taskClass": "general",
        "filesSelected": 3,
        "filesTotal": 12,
        "tokensCompiled": 459,
        "tokenReductionPct": 35.8,
        "allocatedTotalBudget": 123500,
        "cacheHit": false,
        "durationMs": "[TIME]",
        "editorId": "cli",
        "modelId": "unknown",
        "triggerSource": "cli",
        "conversationId": null,
        "guardFindingCount": 1,
        "guardBlockCount": 0,
        "createdAt": "[TIME]"
      },
      "promptSummary": {
        "tokenCount": 459
      },
      "selection": {
        "files": [
          {
            "path": "src/user/service.ts",
            "score": 0.495,
            "tier": "full",
            "tokens": 181,
            "reason": "selected"
          },
          {
            "path": "src/user/model.ts",
            "score": 0.286,
            "tier": "full",
            "tokens": 64,
            "reason": "selected"
          },
          {
            "path": "src/user/legacy-user-keys.ts",
            "score": 0.214,
            "tier": "full",
            "tokens": 67,
            "reason": "selected"
          },
          {
            "path": "src/auth/jwt.ts",
            "score": 0.083,
            "tier": null,
            "tokens": 0,
            "reason": "below the relevance cut-off: listed by path in the notes"
          },
          {
            "path": "tests/fixtures/user.json",
            "score": 0.069,
            "tier": null,
            "tokens": 0,
            "reason": "below the relevance cut-off: listed by path in the notes"
          }
        ],
        "truncated": 0
      }
    }

    ----- stderr -----
    "#);
}

#[test]
fn failures_name_the_input_and_the_fix() {
    let test = CliTest::with_fixture("webapp", MTIMES);
    let empty = tempfile::tempdir().unwrap();
    let empty_root = empty.path().to_str().unwrap();
    let file = test.root().join("README.md");
    let file = file.to_str().unwrap();
    let mut out = String::new();
    for args in [
        &["compile", "   ", "--root", "[ROOT]"][..],
        &["compile", "x", "--root", "/definitely/not/here"],
        &["compile", "x", "--root", file],
        &["compile", "x", "--root", "/"],
        &["compile", "anything at all", "--root", empty_root],
        &["compile", "quantum chromodynamics", "--root", "[ROOT]"],
        &[
            "compile",
            "user service",
            "--root",
            "[ROOT]",
            "--budget",
            "50",
        ],
        &[
            "compile",
            "x",
            "--config",
            "/definitely/not/here.json",
            "--root",
            "[ROOT]",
        ],
    ] {
        let run = test.run(args);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        let _ = writeln!(
            out,
            "$ aic {}\n{}",
            args.join(" ").replace(empty_root, "[EMPTY]"),
            CliTest::render(&run).replace(empty_root, "[EMPTY]")
        );
    }
    cli_snapshot!(test, out, @r#"
    $ aic compile     --root [ROOT]
    exit code: 3
    ----- stdout -----

    ----- stderr -----
    error: The intent is empty

    hint: describe the task, e.g. `aic compile "fix the null check in the user service"`

    $ aic compile x --root /definitely/not/here
    exit code: 3
    ----- stdout -----

    ----- stderr -----
    error: Project root `/definitely/not/here` does not exist

    hint: pass the repository's directory with `--root DIR`

    $ aic compile x --root [ROOT]/README.md
    exit code: 3
    ----- stdout -----

    ----- stderr -----
    error: Project root `[ROOT]/README.md` is not a directory

    hint: pass the repository's directory with `--root DIR`

    $ aic compile x --root /
    exit code: 3
    ----- stdout -----

    ----- stderr -----
    error: Project root `/` is the filesystem root, not a project

    hint: pass the repository's directory with `--root DIR`

    $ aic compile anything at all --root [EMPTY]
    exit code: 1
    ----- stdout -----

    ----- stderr -----
    error: No relevant files found for the intent among 0 files in scope

    hint: the root holds no text files in scope; check `--root` and your `.gitignore`

    $ aic compile quantum chromodynamics --root [ROOT]
    exit code: 1
    ----- stdout -----

    ----- stderr -----
    error: No relevant files found for the intent among 12 files in scope

    hint: no path matched the intent's words (quantum, chromodynam); broaden the intent, name a file or directory, or check what narrows the candidates (--include, --exclude, --scope, includePatterns in aic.config.json and aic-rules/)

    $ aic compile user service --root [ROOT] --budget 50
    exit code: 6
    ----- stdout -----

    ----- stderr -----
    error: A budget of 50 tokens cannot hold the prompt: its fixed sections take 147 tokens and the smallest selected file needs 23 more

    hint: raise the budget to at least 170 tokens (`--budget`, contextBudget.maxTokens)

    $ aic compile x --config /definitely/not/here.json --root [ROOT]
    exit code: 4
    ----- stdout -----

    ----- stderr -----
    error: Failed to read `/definitely/not/here.json`
      Caused by: failed to open file `/definitely/not/here.json`: No such file or directory (os error 2)

    hint: check that `/definitely/not/here.json` exists and is readable (`--config FILE`), or leave `--config` out to search for aic.config.json
    "#);
}

#[test]
fn configuration_errors_name_the_file_and_the_field() {
    let test = CliTest::with_fixture("webapp", MTIMES);
    let config = test.root().join("aic.config.json");
    let mut out = String::new();
    for content in [
        r#"{"contextBudget": {"maxTokens": "lots"}}"#,
        "{\n  \"version\": 1,\n}",
        r#"{"extends": "https://example.invalid/base.json"}"#,
        r#"{"colour": "blue", "guard": {"mood": 1}}"#,
    ] {
        fs_err::write(&config, content).unwrap();
        let run = test.run(&["compile", "user service", "--root", "[ROOT]"]);
        let stdout_lines = run.stdout.lines().count();
        let _ = writeln!(
            out,
            "$ aic compile (aic.config.json: {content})\nexit code: {}, stdout lines: {stdout_lines}\n{}",
            run.code, run.stderr
        );
    }
    cli_snapshot!(test, out, @r#"
    $ aic compile (aic.config.json: {"contextBudget": {"maxTokens": "lots"}})
    exit code: 4, stdout lines: 0
    error: Invalid configuration in `[ROOT]/aic.config.json`: contextBudget.maxTokens: expected a non-negative integer, found "lots"

    hint: fix the field in `[ROOT]/aic.config.json`, or move the file aside to use the defaults

    $ aic compile (aic.config.json: {
      "version": 1,
    })
    exit code: 4, stdout lines: 0
    error: Invalid configuration in `[ROOT]/aic.config.json`: not valid JSON at line 3, column 1: trailing comma

    hint: fix the field in `[ROOT]/aic.config.json`, or move the file aside to use the defaults

    $ aic compile (aic.config.json: {"extends": "https://example.invalid/base.json"})
    exit code: 4, stdout lines: 0
    error: Cannot follow `extends` in `[ROOT]/aic.config.json`: `https://example.invalid/base.json` is a URL; aic is local-first and only follows local paths

    hint: fix `extends` in `[ROOT]/aic.config.json` to name a readable local file

    $ aic compile (aic.config.json: {"colour": "blue", "guard": {"mood": 1}})
    exit code: 0, stdout lines: 79
    warning: Ignoring unknown configuration keys: colour, guard.mood
    warning: Context Guard redacted secrets in: src/user/legacy-user-keys.ts (details: meta.guard, or `aic inspect`)
    "#);
}

#[test]
fn a_budget_of_zero_is_automatic_as_help_says() {
    let test = CliTest::with_fixture("webapp", MTIMES);
    let compile = |extra: &[&str]| {
        let mut args = vec![
            "compile",
            "fix the null check in the user service",
            "--root",
            "[ROOT]",
            "--json",
            "--no-cache",
        ];
        args.extend_from_slice(extra);
        let run = test.run(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.json()
    };
    let automatic = compile(&[]);
    let zero = compile(&["--budget", "0"]);
    assert_eq!(zero["meta"]["budget"], 123_500, "{zero}");
    assert_eq!(zero["compiledPrompt"], automatic["compiledPrompt"]);
    let help = test.run(&["compile", "--help"]);
    let words = help.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("0 means automatic"), "{}", help.stdout);
}

/// A verbose compile whose stderr reader went away (`aic compile -v 2>&1 |
/// head -1`) still compiles, exits 0 and is logged: the trail lines it could
/// not write are not reported on the same closed stderr, where reporting
/// them panicked (exit 101) before the compile was logged.
#[test]
fn a_closed_stderr_loses_the_trail_not_the_compile() {
    use std::process::{Command, Stdio};

    let repo = crate::support::fixture_repo("webapp", MTIMES);
    let root = repo.path().to_str().unwrap();
    let home = crate::support::private_tempdir();
    let home_path = home.path().to_str().unwrap();
    let intent = "fix the null check in the user service";
    let mut child = Command::new(env!("CARGO_BIN_EXE_aic"))
        .args(["compile", intent, "--root", root, "-v"])
        .env_remove("RUST_LOG")
        .env("AIC_DAEMON", "off")
        .env("AIC_HOME", home_path)
        .env("HOME", crate::support::shared_user_home())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the aic binary runs");
    // The reader goes away before the trail's first line.
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status}");
    let last = crate::support::aic(&["last", "--root", root], &[("AIC_HOME", home_path)]);
    assert_eq!(last.code, 0, "{}", last.stderr);
    assert!(last.stdout.contains(intent), "{}", last.stdout);
}
