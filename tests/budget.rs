//! The prompt never exceeds its budget: a sweep of budgets, from below the
//! smallest prompt that can hold a file up to more than the repository, on a
//! real source tree. Every compile either fits or says the budget is too small.

use std::fmt::Write as _;

use aic::error::CompileError;
use aic::host::Host;
use aic::pipeline::{Compilation, CompilationRequest, SizeLimit, SizeScope};
use aic_stages::fit::tokens::TokenCount;

use crate::support::dependency_source;

fn compile(request: &CompilationRequest) -> Result<Compilation, CompileError> {
    aic::pipeline::compile(request, &Host::from_env())
}

fn request(root: std::path::PathBuf, intent: &str, budget: u32) -> CompilationRequest {
    CompilationRequest {
        intent: intent.to_owned(),
        project_root: root,
        config_path: None,
        budget: Some(TokenCount(budget)),
        raw: false,
        model_id: None,
        editor_id: "tests".to_owned(),
        related_files: Vec::new(),
        trace_all: false,
        no_cache: true,
        use_prompt_cache: false,
        ..CompilationRequest::default()
    }
}

#[test]
fn every_budget_is_respected_or_refused() {
    let root = dependency_source("globset");
    // Budgets spread over four orders of magnitude, with odd steps so they land
    // between tier costs rather than on them.
    let mut budget = 97u32;
    let mut fitted = 0;
    let mut refused = 0;
    while budget < 60_000 {
        for intent in ["fix glob compilation", "add a case-insensitive option"] {
            match compile(&request(root.clone(), intent, budget)) {
                Ok(compilation) => {
                    fitted += 1;
                    let tokens = compilation.meta.tokens_compiled;
                    assert!(
                        tokens.0 <= budget,
                        "{intent:?} at budget {budget}: {tokens} tokens"
                    );
                    assert_eq!(compilation.meta.budget, TokenCount(budget));
                }
                Err(CompileError::BudgetTooSmall { .. }) => {
                    refused += 1;
                    assert!(budget < 2_000, "budget {budget} refused for {intent:?}");
                }
                Err(error) => panic!("{intent:?} at budget {budget}: {error}"),
            }
        }
        budget = budget * 3 / 2 + 13;
    }
    assert!(
        fitted > 10 && refused > 0,
        "fitted {fitted}, refused {refused}"
    );
}

#[test]
fn a_file_larger_than_the_budget_goes_in_as_a_slice_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let mut text: Vec<String> = (0..6000)
        .map(|i| format!("Line {i}: ordinary words about nothing in particular here."))
        .collect();
    text[3000] = "The parse config file step reads settings from disk.".to_owned();
    fs_err::write(dir.path().join("notes.txt"), text.join("\n")).unwrap();
    let compilation = compile(&request(
        dir.path().to_path_buf(),
        "fix parse config file",
        3000,
    ))
    .unwrap();
    assert!(compilation.meta.tokens_compiled.0 <= 3000);
    assert!(
        compilation
            .prompt
            .contains("The parse config file step reads settings from disk."),
        "{}",
        compilation.prompt
    );
    assert!(compilation.prompt.contains("[sliced: kept lines "));
    // Routine work is a note in the prompt, not a warning.
    assert!(
        !compilation
            .meta
            .warnings
            .iter()
            .any(|w| w.contains("notes.txt") && w.contains("slice")),
        "{:?}",
        compilation.meta.warnings
    );
    // The agent reads it in the prompt too.
    let notes = compilation.prompt.split("## Notes").nth(1).unwrap_or("");
    assert!(
        notes
            .split("## ")
            .next()
            .unwrap()
            .contains("`notes.txt` is shown as a slice"),
        "{}",
        compilation.prompt
    );
}

/// The file blocks of a prompt: what a hook injects.
fn file_blocks(prompt: &str) -> &str {
    let start = prompt
        .find("## Context\n\n")
        .map_or(0, |i| i + "## Context\n\n".len());
    let end = prompt[start..]
        .find("\n## Constraints\n")
        .map_or(prompt.len(), |i| start + i + 1);
    &prompt[start..end]
}

#[test]
fn every_size_limit_is_met_in_one_compile_or_refused() {
    let root = dependency_source("globset");
    let escaped = |text: &str| serde_json::to_string(text).unwrap().chars().count() - 2;
    for (scope, json_escaped) in [(SizeScope::FileBlocks, false), (SizeScope::Prompt, true)] {
        let mut max_chars = 700usize;
        let mut fitted = 0;
        while max_chars < 200_000 {
            let limit = SizeLimit {
                max_chars,
                scope,
                json_escaped,
            };
            let mut with_limit = request(
                root.clone(),
                "fix glob matching of literal prefixes",
                60_000,
            );
            with_limit.size_limit = Some(limit);
            match compile(&with_limit) {
                Ok(compilation) => {
                    fitted += 1;
                    let size = match scope {
                        SizeScope::FileBlocks => file_blocks(&compilation.prompt).chars().count(),
                        SizeScope::Prompt => escaped(&compilation.prompt),
                    };
                    assert!(
                        size <= max_chars,
                        "{scope:?} limit {max_chars}: {size} characters"
                    );
                    assert!(compilation.meta.tokens_compiled.0 <= 60_000);
                }
                Err(CompileError::BudgetTooSmall { .. }) => {
                    assert!(max_chars < 5_000, "{scope:?} limit {max_chars} refused");
                }
                Err(error) => panic!("{scope:?} limit {max_chars}: {error}"),
            }
            max_chars = max_chars * 2 + 37;
        }
        assert!(fitted > 4, "{scope:?}: only {fitted} limits fitted");
    }
}

#[test]
fn a_size_limit_that_binds_says_so_and_keeps_the_best_file() {
    let root = dependency_source("globset");
    let mut unlimited = request(
        root.clone(),
        "fix glob matching of literal prefixes",
        60_000,
    );
    let full = compile(&unlimited).unwrap();
    let best = &full.selection[0].path;
    unlimited.size_limit = Some(SizeLimit {
        max_chars: 12_000,
        scope: SizeScope::FileBlocks,
        json_escaped: false,
    });
    let limited = compile(&unlimited).unwrap();
    assert!(file_blocks(&limited.prompt).chars().count() <= 12_000);
    assert!(
        limited.prompt.contains(&format!("### {best} [")),
        "the best file {best} is in the limited prompt"
    );
    assert!(
        limited
            .meta
            .warnings
            .iter()
            .any(|w| w.contains("size limit of 12000 characters")),
        "{:?}",
        limited.meta.warnings
    );
}

#[test]
fn every_format_fits_its_budget_and_counts_its_own_text() {
    use aic_stages::fit::assembler::PromptFormat;
    use aic_stages::fit::tokens::TokenCounter;

    let root = dependency_source("globset");
    for format in PromptFormat::ALL {
        for budget in [1_500u32, 4_000, 9_000, 30_000] {
            let request = CompilationRequest {
                format: Some(format),
                ..request(root.clone(), "fix glob compilation", budget)
            };
            let compilation =
                compile(&request).unwrap_or_else(|e| panic!("{format} {budget}: {e}"));
            let tokens = compilation.meta.tokens_compiled;
            assert!(tokens.0 <= budget, "{format} at {budget}: {tokens}");
            assert_eq!(
                tokens,
                TokenCounter::cl100k().count(&compilation.prompt),
                "{format} at {budget}: the meta's count is the prompt's"
            );
        }
    }
}

/// A model that counts in `o200k_base` gets prompts fitted to exact
/// `o200k_base` budgets: the meta's count is `tiktoken-rs`'s count of the
/// prompt, which is within the budget; the same compile without a model is
/// counted (and fitted) in `cl100k_base`.
#[test]
fn a_gpt_4o_compile_fits_an_exact_o200k_budget() {
    use aic_stages::fit::assembler::PromptFormat;
    use aic_stages::fit::tokens::Tokenizer;

    let root = dependency_source("globset");
    for (budget, intent) in [
        (8_000u32, "fix glob compilation"),
        (3_000, "add a case-insensitive option"),
        (20_000, "why does a literal glob match slowly"),
    ] {
        let gpt = CompilationRequest {
            model_id: Some("gpt-4o".to_owned()),
            ..request(root.clone(), intent, budget)
        };
        let compilation = compile(&gpt).unwrap_or_else(|e| panic!("{budget}: {e}"));
        let meta = &compilation.meta;
        let reference = tiktoken_rs::o200k_base_singleton().count_ordinary(&compilation.prompt);
        assert_eq!(meta.tokens_compiled.0 as usize, reference, "{budget}");
        assert!(meta.tokens_compiled.0 <= budget, "{budget}: {reference}");
        assert_eq!(meta.tokenizer, Tokenizer::O200k);
        assert_eq!(meta.budget, TokenCount(budget));
        assert!(compilation.prompt.starts_with("## "), "Markdown for GPT");
        let cl100k = tiktoken_rs::cl100k_base_singleton().count_ordinary(&compilation.prompt);
        assert_ne!(
            cl100k, reference,
            "the encodings count the prompt differently"
        );

        let plain = compile(&request(root.clone(), intent, budget)).unwrap();
        assert_eq!(plain.meta.tokenizer, Tokenizer::Cl100k);
        assert_eq!(
            plain.meta.tokens_compiled.0 as usize,
            tiktoken_rs::cl100k_base_singleton().count_ordinary(&plain.prompt)
        );
    }
    // A Claude model: cl100k_base counts with the documented 25% margin, and
    // XML unless a format is asked for.
    let claude = CompilationRequest {
        model_id: Some("claude-sonnet-4-5".to_owned()),
        ..request(root.clone(), "fix glob compilation", 8_000)
    };
    let compilation = compile(&claude).unwrap();
    assert_eq!(compilation.meta.tokenizer, Tokenizer::Cl100k);
    assert_eq!(compilation.meta.budget, TokenCount(6_400));
    assert!(compilation.meta.tokens_compiled.0 <= 6_400);
    assert!(compilation.prompt.starts_with("<prompt>"), "XML for Claude");
    let markdown = compile(&CompilationRequest {
        format: Some(PromptFormat::Markdown),
        ..claude
    })
    .unwrap();
    assert!(markdown.prompt.starts_with("## "));
}

/// The best-ranked source files keep their comments (an agent edits them by
/// their exact lines); a source file past the edit candidates is shown with
/// its comments stripped.
#[test]
fn edit_candidates_keep_their_comments_and_the_rest_are_stripped() {
    // Files about invoice totals, one more than the edit candidates;
    // `billing.py` mentions the words most.
    const OTHERS: [&str; aic::pipeline::facts::EDIT_CANDIDATES] = [
        "ledger",
        "receipts",
        "statements",
        "refunds",
        "payouts",
        "rebates",
    ];
    let dir = tempfile::tempdir().unwrap();
    let module = |name: &str, extra: &str| {
        format!(
            "def {name}_invoice_total(items):\n    # Sum the invoice lines before tax for {name}.\n    total = 0\n    for item in items:\n        total += item.price  # {name} price per line\n    return total{extra}\n"
        )
    };
    fs_err::write(
        dir.path().join("billing.py"),
        module("billing", " + invoice_total_tax(items)\n\ndef invoice_total_tax(items):\n    # invoice total tax\n    return 0\n"),
    )
    .unwrap();
    // Unrelated files, so the automatic file count (the square root of the
    // project's) leaves room for them all.
    for n in 0..60 {
        fs_err::write(dir.path().join(format!("notes_{n}.txt")), "weather log\n").unwrap();
    }
    for name in OTHERS {
        fs_err::write(dir.path().join(format!("{name}.py")), module(name, "")).unwrap();
    }
    // An ample budget (0: automatic) and a tight one.
    for (budget, candidates) in [
        (0, aic::pipeline::facts::EDIT_CANDIDATES),
        (20_000, aic::pipeline::facts::TIGHT_EDIT_CANDIDATES),
    ] {
        let compilation = compile(&request(
            dir.path().to_path_buf(),
            "fix the invoice total computed by billing",
            budget,
        ))
        .unwrap();
        let prompt = &compilation.prompt;
        assert!(
            prompt.contains("# Sum the invoice lines before tax for billing."),
            "the best file keeps its comments:\n{prompt}"
        );
        let kept = OTHERS
            .iter()
            .filter(|name| {
                prompt.contains(&format!("# Sum the invoice lines before tax for {name}."))
            })
            .count();
        let shown = OTHERS
            .iter()
            .filter(|name| prompt.contains(&format!("def {name}_invoice_total(items):")))
            .count();
        assert_eq!(shown, OTHERS.len(), "every file is shown:\n{prompt}");
        assert_eq!(
            kept,
            candidates - 1,
            "at budget {budget}, the other edit candidates keep their comments and the rest lose them:\n{prompt}"
        );
    }
}

/// A project of a small source file, `src/invoice.py`, and a doc about it,
/// `docs/invoice.md`, of `parts` sections.
fn invoice_project(parts: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs_err::create_dir_all(dir.path().join("src")).unwrap();
    fs_err::create_dir_all(dir.path().join("docs")).unwrap();
    fs_err::write(
        dir.path().join("src/invoice.py"),
        "def invoice_total(items):\n    \"\"\"The invoice total before tax.\"\"\"\n    return sum(item.price for item in items)\n",
    )
    .unwrap();
    let mut doc = String::from("# Invoices\n\n");
    for n in 0..parts {
        writeln!(
            doc,
            "## Part {n}\n\nThe invoice total adds the price of every item; taxes come later, part {n}.\n"
        )
        .unwrap();
    }
    fs_err::write(dir.path().join("docs/invoice.md"), doc).unwrap();
    dir
}

/// The task every test of [`invoice_project`] asks, at `budget`.
fn invoice_prompt(dir: &tempfile::TempDir, budget: u32) -> Compilation {
    compile(&request(
        dir.path().to_path_buf(),
        "fix the invoice total",
        budget,
    ))
    .unwrap()
}

/// With an ample budget, a prompt whose best files are small shows the
/// files ranked after them whole (up to the prompt floor), where a tight
/// budget shows the same file as an excerpt.
#[test]
fn a_small_prompt_shows_its_glimpses_whole_at_an_ample_budget() {
    let dir = invoice_project(60);
    let ample = invoice_prompt(&dir, 0);
    let prompt = &ample.prompt;
    assert!(prompt.contains("### docs/invoice.md [full]"), "{prompt}");
    assert!(prompt.contains("taxes come later, part 59."), "{prompt}");
    assert!(!prompt.contains("Shown as excerpts"), "{prompt}");
    let tight = invoice_prompt(&dir, 3_000);
    let prompt = &tight.prompt;
    assert!(
        prompt.contains("- Shown as excerpts around the task's words: `docs/invoice.md`"),
        "{prompt}"
    );
    assert!(prompt.contains("### docs/invoice.md [sliced]"), "{prompt}");
}

/// A doc the file-kind prior demoted is shown as a glimpse (an excerpt
/// within the glimpse allowance), not as a slice with a body slot of its
/// own, beside the source it documents.
#[test]
fn a_demoted_doc_is_a_glimpse_beside_the_source() {
    let dir = invoice_project(200);
    let compilation = invoice_prompt(&dir, 3_000);
    let prompt = &compilation.prompt;
    assert!(
        prompt.contains("    return sum(item.price for item in items)\n"),
        "{prompt}"
    );
    assert!(
        prompt.contains("- Shown as excerpts around the task's words: `docs/invoice.md`"),
        "{prompt}"
    );
    assert!(
        !prompt.contains("`docs/invoice.md` is shown as a slice"),
        "{prompt}"
    );
}

/// A pasted report longer than a quarter of the budget is shown by its head
/// in `## Task`; the code it is about gets the room, and the files are still
/// ranked on the whole report (its last line names the function to change).
#[test]
fn a_long_pasted_task_is_shown_by_its_head_and_the_code_gets_the_room() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = String::new();
    for i in 0..60 {
        writeln!(
            source,
            "def helper_{i}(value):\n    \"\"\"Helper {i}.\"\"\"\n    return value + {i}\n"
        )
        .unwrap();
    }
    source.push_str(
        "def golden_section_search(lower, upper):\n    \"\"\"Find the maximum.\"\"\"\n    if upper == lower:\n        raise ValueError('bounds are equal')\n    return (lower + upper) / 2\n",
    );
    fs_err::write(dir.path().join("tools.py"), &source).unwrap();
    let mut intent = String::from("golden section search fails when bounds are equal\n```\n");
    for i in 0..300 {
        writeln!(
            intent,
            "log line {i} of the failing run, with nothing to see"
        )
        .unwrap();
    }
    intent.push_str("```\nThe failing call is golden_section_search in tools.py.\n");
    let compilation = compile(&request(dir.path().to_path_buf(), &intent, 2_500)).unwrap();
    let prompt = &compilation.prompt;
    assert!(compilation.meta.tokens_compiled.0 <= 2_500);
    let task = prompt
        .split("## Task\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## Task Classification").next())
        .unwrap();
    assert!(task.contains("golden section search fails when bounds are equal"));
    assert!(
        task.contains("left out of this copy to leave room for code; the request has them whole]"),
        "{task}"
    );
    // The fence the cut left open is closed before the marker.
    assert_eq!(task.matches("```").count() % 2, 0, "{task}");
    // A quarter of the budget, and the heading's line break.
    let task_tokens = aic_stages::fit::tokens::TokenCounter::default()
        .count(task)
        .0;
    assert!(task_tokens <= 626, "{task_tokens} tokens: {task}");
    // The function the report's last line names is in the prompt.
    assert!(
        prompt.contains("raise ValueError('bounds are equal')"),
        "{prompt}"
    );
}

/// A file the ladder drops for room is named in the notes with its best
/// definitions, before the files below the relevance cut-off: the agent
/// learns where else to look, best first.
#[test]
fn a_file_dropped_for_room_is_named_in_the_notes() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = String::new();
    for i in 0..80 {
        writeln!(
            first,
            "def parse_token_{i}(stream):\n    \"\"\"Parse token {i} of the stream.\"\"\"\n    token = stream.read_token({i})\n    return token.parse()\n"
        )
        .unwrap();
    }
    fs_err::write(dir.path().join("tokens.py"), &first).unwrap();
    let mut second = String::new();
    for i in 0..40 {
        writeln!(
            second,
            "def stream_helper_{i}(stream):\n    \"\"\"Read part {i} of a token stream.\"\"\"\n    return stream.read_token({i})\n"
        )
        .unwrap();
    }
    fs_err::write(dir.path().join("streams.py"), &second).unwrap();
    let compilation = compile(&request(
        dir.path().to_path_buf(),
        "fix parse token stream",
        380,
    ))
    .unwrap();
    let prompt = &compilation.prompt;
    assert!(compilation.meta.tokens_compiled.0 <= 380);
    assert!(!prompt.contains("### streams.py"), "{prompt}");
    let notes = prompt.split("## Notes").nth(1).unwrap_or("");
    let notes = notes.split("\n## ").next().unwrap();
    assert!(
        notes.contains("Also possibly relevant, not shown: `streams.py` (`stream_helper_"),
        "{prompt}"
    );
}
