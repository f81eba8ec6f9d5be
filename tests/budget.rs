//! The prompt never exceeds its budget: a sweep of budgets, from below the
//! smallest prompt that can hold a file up to more than the repository, on a
//! real source tree. Every compile either fits or says the budget is too small.

use aic::error::CompileError;
use aic::runner::{CompilationRequest, compile};
use aic_stages::repo_map::TokenCount;

use crate::support::dependency_source;

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
    assert!(
        compilation
            .meta
            .warnings
            .iter()
            .any(|w| w.contains("notes.txt") && w.contains("larger than the budget")),
        "{:?}",
        compilation.meta.warnings
    );
}
