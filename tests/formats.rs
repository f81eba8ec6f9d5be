//! Prompt formats and outputs on the command line: `--format` (Markdown, XML,
//! JSON, plain text) gives the same files at the same tiers in the same order,
//! each format parses, and XML survives a file holding `]]>` and `</file>`;
//! `-o FILE` replaces the file whole and leaves stdout empty; `--copy` without
//! a display fails with a clear error after the prompt is written;
//! `--include`/`--exclude` narrow the candidates.

use std::process::Command;

use crate::support::{CliTest, WEBAPP_MTIMES};

/// A file whose body breaks naive XML: a CDATA end and a closing tag.
const TRICKY: &str = "// Closes ]]> and </file> and </context> on purpose.\nexport const userServiceMarkup = \"]]></file>\";\n";

fn fixture() -> CliTest {
    let test = CliTest::with_fixture("webapp", WEBAPP_MTIMES);
    fs_err::write(test.root().join("src/user/markup.ts"), TRICKY).unwrap();
    test
}

const INTENT: &str = "fix the null check in the user service markup";

/// `(path, tier, language)` of each file, in prompt order, read from a prompt
/// in `format`.
fn files_of(format: &str, prompt: &str) -> Vec<(String, String, String)> {
    match format {
        "markdown" => {
            let mut files = Vec::new();
            let mut lines = prompt.lines();
            while let Some(line) = lines.next() {
                if let Some(heading) = line.strip_prefix("### ") {
                    let (path, tier) = heading.rsplit_once(" [").unwrap();
                    let fence = lines.next().unwrap();
                    files.push((
                        path.to_owned(),
                        tier.trim_end_matches(']').to_owned(),
                        fence.trim_start_matches('`').to_owned(),
                    ));
                }
            }
            files
        }
        "xml" => {
            let doc = roxmltree::Document::parse(prompt)
                .unwrap_or_else(|e| panic!("not well-formed XML ({e}):\n{prompt}"));
            doc.descendants()
                .filter(|n| n.has_tag_name("file"))
                .map(|n| {
                    let attribute = |name| n.attribute(name).unwrap().to_owned();
                    (attribute("path"), attribute("tier"), attribute("language"))
                })
                .collect()
        }
        "json" => {
            let value: serde_json::Value = serde_json::from_str(prompt)
                .unwrap_or_else(|e| panic!("not JSON ({e}):\n{prompt}"));
            value["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    let field = |name: &str| f[name].as_str().unwrap().to_owned();
                    (field("path"), field("tier"), field("language"))
                })
                .collect()
        }
        "plain" => prompt
            .lines()
            .filter_map(|line| line.strip_prefix("File: "))
            .map(|line| {
                let (path, rest) = line.rsplit_once(" [").unwrap();
                let (tier, language) = rest.trim_end_matches(']').split_once(", ").unwrap();
                (path.to_owned(), tier.to_owned(), language.to_owned())
            })
            .collect(),
        other => panic!("unknown format {other}"),
    }
}

#[test]
fn every_format_shows_the_same_files_and_parses() {
    let test = fixture();
    let mut seen = Vec::new();
    for format in ["markdown", "xml", "json", "plain"] {
        let run = test.run(&[
            "compile", INTENT, "--root", "[ROOT]", "--format", format, "--json",
        ]);
        assert_eq!(run.code, 0, "{format}: {}", run.stderr);
        let out = run.json();
        let prompt = out["compiledPrompt"].as_str().unwrap();
        let files = files_of(format, prompt);
        assert!(
            files
                .iter()
                .any(|(path, _, _)| path == "src/user/markup.ts"),
            "{format}: {files:?}"
        );
        // The tricky body comes back whole where it is parsed.
        if format == "xml" {
            let doc = roxmltree::Document::parse(prompt).unwrap();
            let markup = doc
                .descendants()
                .find(|n| n.attribute("path") == Some("src/user/markup.ts"))
                .unwrap();
            let body: String = markup.children().filter_map(|c| c.text()).collect();
            assert!(body.contains("]]></file>"), "{body}");
        }
        let tokens = out["meta"]["tokensCompiled"].as_u64().unwrap();
        assert!(tokens > 0 && tokens <= out["meta"]["budget"].as_u64().unwrap());
        seen.push((format, files));
    }
    let markdown = &seen[0].1;
    for (format, files) in &seen[1..] {
        let names = |files: &[(String, String, String)]| -> Vec<(String, String)> {
            files
                .iter()
                .map(|(p, t, _)| (p.clone(), t.clone()))
                .collect()
        };
        assert_eq!(names(files), names(markdown), "{format} vs markdown");
    }
    // The languages agree where Markdown names one (its fence tag).
    let xml = &seen[1].1;
    let service = xml
        .iter()
        .find(|(path, _, _)| path == "src/user/service.ts")
        .unwrap();
    assert_eq!(service.2, "typescript");
}

#[test]
fn the_config_chooses_the_format_and_the_flag_overrides_it() {
    let test = fixture();
    fs_err::write(
        test.root().join("aic.config.json"),
        r#"{"output": {"format": "xml"}}"#,
    )
    .unwrap();
    let run = test.run(&["compile", INTENT, "--root", "[ROOT]"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("<prompt>\n<task>"), "{}", run.stdout);
    let run = test.run(&["compile", INTENT, "--root", "[ROOT]", "--format", "plain"]);
    assert!(run.stdout.starts_with("TASK\n====\n"), "{}", run.stdout);
    let run = test.run(&["compile", INTENT, "--root", "[ROOT]", "--format", "yaml"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("[possible values: markdown, xml, json, plain]"),
        "{}",
        run.stderr
    );
}

#[test]
fn output_file_is_replaced_whole_and_stdout_stays_empty() {
    let test = fixture();
    let out = test.root().join("out/prompt.md");
    fs_err::create_dir_all(out.parent().unwrap()).unwrap();
    fs_err::write(&out, "an older prompt\n").unwrap();
    let path = out.to_str().unwrap();
    let run = test.run(&["compile", INTENT, "--root", "[ROOT]", "-o", path]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let written = fs_err::read_to_string(&out).unwrap();
    assert!(written.starts_with("## Task\n\n"), "{written}");
    // Byte for byte what stdout would have been.
    let stdout = test.run(&["compile", INTENT, "--root", "[ROOT]"]).stdout;
    assert_eq!(written, stdout);
    // A failed compile leaves the file as it was, and no temporary file.
    let run = test.run(&["compile", "   ", "--root", "[ROOT]", "-o", path]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert_eq!(fs_err::read_to_string(&out).unwrap(), written);
    let names: Vec<String> = fs_err::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["prompt.md"]);
    // A directory is a user error; `-` is stdout.
    let dir = out.parent().unwrap().to_str().unwrap();
    let run = test.run(&["compile", INTENT, "--root", "[ROOT]", "-o", dir]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("Cannot write the prompt to"),
        "{}",
        run.stderr
    );
    let run = test.run(&["compile", INTENT, "--root", "[ROOT]", "-o", "-"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, stdout);
}

#[test]
#[cfg_attr(
    any(target_os = "macos", target_os = "windows"),
    ignore = "a clipboard needs no display there"
)]
fn copy_without_a_display_says_so_after_writing_the_prompt() {
    let test = fixture();
    let output = Command::new(env!("CARGO_BIN_EXE_aic"))
        .args([
            "compile",
            INTENT,
            "--root",
            test.root().to_str().unwrap(),
            "--copy",
        ])
        .env("AIC_HOME", test.home())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stdout.starts_with("## Task\n"), "{stdout}");
    assert!(stderr.contains("No clipboard"), "{stderr}");
    assert!(stderr.contains("-o FILE"), "{stderr}");
}

#[test]
fn include_and_exclude_globs_narrow_the_candidates() {
    let test = fixture();
    let selected = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["inspect", INTENT, "--root", "[ROOT]", "--json"];
        args.extend_from_slice(extra);
        let run = test.run(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.json()["selectedFiles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = selected(&[]);
    assert!(all.iter().any(|p| p == "src/user/model.ts"), "{all:?}");
    let without = selected(&["--exclude", "src/user/model.ts", "--exclude", "*.md"]);
    assert!(
        !without
            .iter()
            .any(|p| p == "src/user/model.ts" || p == "README.md")
    );
    let only = selected(&["--include", "src/user"]);
    assert!(!only.is_empty());
    assert!(only.iter().all(|p| p.starts_with("src/user/")), "{only:?}");
    let run = test.run(&["compile", INTENT, "--root", "[ROOT]", "--include", "src/[x"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("not a valid glob"), "{}", run.stderr);
}

#[test]
fn from_a_subdirectory_the_work_tree_is_the_project_and_scope_narrows() {
    let test = fixture();
    fs_err::create_dir_all(test.root().join(".git")).unwrap();
    let inside = test.root().join("src/user");
    let run_in = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_aic"))
            .args(args)
            .current_dir(&inside)
            .env("AIC_HOME", test.home())
            .env_remove("RUST_LOG")
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, stdout, stderr) = run_in(&["compile", INTENT]);
    assert_eq!(code, Some(0), "{stderr}");
    let root = fs_err::canonicalize(test.root()).unwrap();
    assert_eq!(
        stderr.matches("note: using").count(),
        1,
        "one note naming the project: {stderr}"
    );
    assert!(
        stderr.contains(&format!("note: using {} (git root)", root.display())),
        "{stderr}"
    );
    assert!(stdout.contains("### src/user/service.ts"), "{stdout}");
    assert!(stdout.contains("### src/auth/jwt.ts") || stdout.contains("`src/auth/jwt.ts`"));
    // --scope . keeps the project but selects only below the directory.
    let (code, stdout, stderr) = run_in(&["compile", INTENT, "--scope", "."]);
    assert_eq!(code, Some(0), "{stderr}");
    let headings: Vec<&str> = stdout
        .lines()
        .filter_map(|line| line.strip_prefix("### "))
        .collect();
    assert!(!headings.is_empty());
    assert!(
        headings.iter().all(|h| h.starts_with("src/user/")),
        "{headings:?}"
    );
    // --scope narrows what --include lets through, it does not add to it.
    let (code, stdout, stderr) = run_in(&["compile", INTENT, "--scope", ".", "--include", "*.ts"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout
            .lines()
            .filter_map(|line| line.strip_prefix("### "))
            .all(|h| h.starts_with("src/user/")),
        "{stdout}"
    );
    let (code, _, stderr) = run_in(&["compile", INTENT, "--scope", "/"]);
    assert_eq!(code, Some(3));
    assert!(stderr.contains("is outside the project"), "{stderr}");
    // An explicit --root is taken as it is, without a note.
    let (code, _, stderr) = run_in(&["compile", INTENT, "--root", "."]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("note:"), "{stderr}");
}

#[test]
fn the_json_output_has_the_documented_fields_and_units() {
    let schema: serde_json::Value = serde_json::from_str(
        &fs_err::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("docs/schema/compile.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let documented = schema["$defs"]["meta"]["properties"].as_object().unwrap();
    let required: Vec<&str> = schema["$defs"]["meta"]["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let test = fixture();
    let run = test.run(&["compile", INTENT, "--root", "[ROOT]", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = run.json();
    let meta = out["meta"].as_object().unwrap();
    for key in meta.keys() {
        assert!(
            documented.contains_key(key),
            "meta.{key} is not in the schema"
        );
    }
    for key in required {
        assert!(meta.contains_key(key), "meta.{key} is missing");
    }
    // A percentage, not a fraction; tiers by name.
    let reduction = meta["tokenReductionPct"].as_f64().unwrap();
    assert!(reduction > 1.0 && reduction <= 100.0, "{reduction}");
    for tier in meta["summarisationTiers"].as_object().unwrap().keys() {
        assert!(
            ["full", "signatures+docs", "signatures-only", "names-only"].contains(&tier.as_str()),
            "{tier}"
        );
    }
    // Floats a user reads have at most 3 decimals.
    let inspect = test
        .run(&["inspect", INTENT, "--root", "[ROOT]", "--json"])
        .json();
    for file in inspect["selectedFiles"].as_array().unwrap() {
        let score = file["score"].as_f64().unwrap();
        assert!(
            ((score * 1000.0).round() - score * 1000.0).abs() < 1e-6,
            "{score}"
        );
    }
    for miss in inspect["nearMisses"].as_array().unwrap() {
        assert!(miss.get("max_files").is_none(), "{miss}");
    }
}
