//! Real task text end to end: a pasted stack trace, a named file larger than
//! the budget, a vague wish, a target that names nothing — what reaches the
//! agent's prompt, not only stderr.

use std::fmt::Write as _;

use aic_stages::fit::tokens::TokenCounter;

use crate::support::{WEBAPP_MTIMES, aic, fixture_repo, prompt_headings};

/// The `## Notes` section of a prompt (empty when it has none).
fn notes(prompt: &str) -> &str {
    prompt
        .split_once("## Notes\n")
        .map_or("", |(_, rest)| rest.split("\n## ").next().unwrap_or(rest))
}

#[test]
fn a_pasted_node_stack_ranks_the_innermost_project_frame_first() {
    let repo = fixture_repo("webapp", WEBAPP_MTIMES);
    let root = repo.path().to_str().unwrap();
    // The innermost frame is in jwt.ts, which no word of the report names;
    // the words "test" and "tests" of the pasted runner output do not make
    // this a test task (whose rule pack would boost the test file).
    let intent = "Login crashes for users without a token\n\n\
        Running the tests (npm test) shows:\n\n\
        ```\n\
        TypeError: Cannot read properties of undefined (reading 'split')\n    \
        at verifyToken (/srv/webapp/src/auth/jwt.ts:9:18)\n    \
        at UserService.findByToken (/srv/webapp/src/user/service.ts:15:20)\n    \
        at Object.<anonymous> (/srv/webapp/tests/service.test.ts:12:5)\n\
        ```\n";
    let run = aic(&["compile", intent, "--root", root, "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    assert_eq!(json["meta"]["taskClass"], "bugfix");
    let prompt = json["compiledPrompt"].as_str().unwrap();
    let mut top: Vec<String> = prompt_headings(prompt).into_iter().take(2).collect();
    top.sort();
    assert_eq!(top, ["src/auth/jwt.ts", "src/user/service.ts"]);
    // Without the frames, jwt.ts is not even among the first two.
    let words = "Login crashes for users without a token";
    let run = aic(&["compile", words, "--root", root, "--json"], &[]);
    let prompt = run.json()["compiledPrompt"].as_str().unwrap().to_owned();
    assert!(
        !prompt_headings(&prompt)
            .iter()
            .take(2)
            .any(|h| h == "src/auth/jwt.ts"),
        "{prompt}"
    );
}

/// A 40,000-token `orders.py` with one `apply_discount` among 1,500
/// functions, and the lines of its body the tests look for.
fn big_orders_module() -> (String, [&'static str; 4]) {
    let mut source = String::from("\"\"\"Orders: pricing, discounts and totals.\"\"\"\n\n");
    for n in 0..1500 {
        let _ = write!(
            source,
            "def price_rule_{n}(order):\n    \"\"\"Price rule {n}.\"\"\"\n    return order.total * {n} / 100 + order.shipping\n\n\n"
        );
        if n == 900 {
            source.push_str(
                "def apply_discount(order, rate):\n    \"\"\"Applies a percentage discount.\"\"\"\n    discounted = order.total * (1 - rate)\n    # Rounds half down: the bug the task is about.\n    cents = int(discounted * 100)\n    return cents / 100\n\n\n",
            );
        }
    }
    let body = [
        "def apply_discount(order, rate):",
        "    discounted = order.total * (1 - rate)",
        "    cents = int(discounted * 100)",
        "    return cents / 100",
    ];
    (source, body)
}

#[test]
fn a_mentioned_function_keeps_its_body_at_every_budget() {
    let dir = tempfile::tempdir().unwrap();
    let (source, body) = big_orders_module();
    fs_err::write(dir.path().join("orders.py"), &source).unwrap();
    fs_err::write(
        dir.path().join("checkout.py"),
        "from orders import apply_discount\n\n\ndef checkout(order):\n    return apply_discount(order, 0.1)\n",
    )
    .unwrap();
    let root = dir.path().to_str().unwrap();
    for budget in ["2500", "8000", "0"] {
        let run = aic(
            &[
                "compile",
                "discounts round the wrong way in `apply_discount`",
                "--root",
                root,
                "--budget",
                budget,
                "--json",
            ],
            &[],
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        let prompt = run.json()["compiledPrompt"].as_str().unwrap().to_owned();
        assert!(
            prompt_headings(&prompt).contains(&"orders.py".to_owned()),
            "budget {budget}: {prompt}"
        );
        for line in body {
            assert!(prompt.contains(line), "budget {budget}: `{line}` missing");
        }
    }
}

#[test]
fn a_named_file_larger_than_the_budget_is_sliced_around_the_named_function() {
    let dir = tempfile::tempdir().unwrap();
    let (source, body) = big_orders_module();
    fs_err::write(dir.path().join("orders.py"), &source).unwrap();
    fs_err::write(
        dir.path().join("README.md"),
        "# Shop\n\nOrders and pricing.\n",
    )
    .unwrap();
    let root = dir.path().to_str().unwrap();
    let run = aic(
        &[
            "compile",
            "fix the rounding in `apply_discount` of @orders.py",
            "--root",
            root,
            "--budget",
            "3000",
            "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    let prompt = json["compiledPrompt"].as_str().unwrap();
    assert!(TokenCounter::cl100k().count(prompt).0 <= 3000);
    // The file is over 40,000 tokens; its slice keeps the whole function.
    assert!(TokenCounter::cl100k().count(&source).0 > 40_000);
    assert!(prompt.contains("### orders.py [sliced]"), "{prompt}");
    for line in body {
        assert!(prompt.contains(line), "{line} missing from the slice");
    }
    assert!(
        notes(prompt).contains("`orders.py` is shown as a slice"),
        "{prompt}"
    );
    // A slice is routine: a note, not a warning.
    let warnings = json["meta"]["warnings"].to_string();
    assert!(!warnings.contains("slice"), "{warnings}");
}

/// Asserts that every line of the body of Python function `name` in
/// `source` (up to its first blank line) is in `prompt`.
fn assert_function_whole(prompt: &str, source: &str, name: &str) {
    let body = source
        .split(&format!("def {name}"))
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap_or_else(|| panic!("no `def {name}` in the fixture"));
    for line in body.lines().skip(1) {
        assert!(
            prompt.contains(line),
            "`{line}` of {name} missing: {prompt}"
        );
    }
}

/// `service.py`, whose long `build_report` the task names and calls
/// `check_range`, and `validate.py`, whose `check_range` raises the error;
/// with the line numbers of the call and of the raise.
fn report_and_validation_modules() -> (String, String, usize, usize) {
    let mut service = String::from(
        "\"\"\"Invoice reports: totals, lines and summaries.\"\"\"\nfrom validate import check_range\n\n",
    );
    let mut call = 0;
    for n in 0..40 {
        let _ = write!(
            service,
            "\ndef invoice_report_section_{n}(invoice, report):\n    \"\"\"Invoice report section {n}: adds the invoice totals to the report.\"\"\"\n    report.lines.append(invoice.total * {n})\n    return report\n\n"
        );
        if n == 20 {
            service.push_str("\ndef build_report(invoices):\n    \"\"\"Build the invoice report of all invoices.\"\"\"\n    report = Report()\n");
            for k in 0..60 {
                let _ = writeln!(
                    service,
                    "    report.add_invoice_total(\"section {k}\", sum(i.total for i in invoices if i.section == {k}))"
                );
            }
            service.push_str("    lo, hi = min(invoices), max(invoices)\n");
            call = service.lines().count() + 1;
            service.push_str("    check_range(lo, hi)\n    return report\n\n");
        }
    }
    let mut validate = String::from("\"\"\"Validation helpers.\"\"\"\n\n");
    let mut raise = 0;
    for n in 0..40 {
        let _ = write!(
            validate,
            "\ndef check_field_{n}(value):\n    \"\"\"Check field {n}.\"\"\"\n    if value is None:\n        raise TypeError(\"field {n} missing\")\n    return value\n\n"
        );
        if n == 20 {
            validate.push_str(
                "\ndef check_range(lo, hi):\n    \"\"\"Check that a range is not empty.\"\"\"\n",
            );
            for k in 0..40 {
                let _ = writeln!(validate, "    assert_bound_{k}(lo, hi)");
            }
            validate.push_str("    span = hi - lo\n    if span <= 0:\n");
            raise = validate.lines().count() + 1;
            validate.push_str("        raise ValueError(\"empty range: lo must be below hi\")\n    return span\n\n");
        }
    }
    (service, validate, call, raise)
}

#[test]
fn the_error_site_keeps_its_definition_at_a_hooks_budget_when_another_file_ranks_first() {
    let dir = tempfile::tempdir().unwrap();
    let (service, validate, call, raise) = report_and_validation_modules();
    fs_err::write(dir.path().join("service.py"), &service).unwrap();
    fs_err::write(dir.path().join("validate.py"), &validate).unwrap();
    let root = dir.path().to_str().unwrap();
    let intent = format!(
        "The invoice report from `build_report` fails when all invoices have the same total\n\n\
        ```\n\
        Traceback (most recent call last):\n  \
        File \"/srv/app/service.py\", line {call}, in build_report\n    \
        check_range(lo, hi)\n  \
        File \"/srv/app/validate.py\", line {raise}, in check_range\n    \
        raise ValueError(\"empty range: lo must be below hi\")\n\
        ValueError: empty range: lo must be below hi\n\
        ```\n"
    );
    let run = aic(
        &[
            "compile", &intent, "--root", root, "--budget", "2500", "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let prompt = run.json()["compiledPrompt"].as_str().unwrap().to_owned();
    // The named function's file ranks first and is sliced to its function.
    assert_eq!(
        prompt_headings(&prompt)[..2],
        ["service.py", "validate.py"],
        "{prompt}"
    );
    assert!(prompt.contains("def build_report(invoices):"), "{prompt}");
    // The function the error is raised in is shown whole, not only the
    // lines around the raise: its room was set aside before the first
    // file took its share of the 2,500 tokens.
    assert_function_whole(&prompt, &validate, "check_range");
}

#[test]
fn a_failing_assertion_in_a_test_takes_no_room_from_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let (service, _, _, _) = report_and_validation_modules();
    fs_err::write(dir.path().join("service.py"), &service).unwrap();
    let mut test =
        String::from("from service import build_report\n\n\ndef test_build_report_totals():\n");
    for k in 0..40 {
        let _ = writeln!(
            test,
            "    assert build_report([Invoice({k})]).section({k}) == {k}"
        );
    }
    fs_err::create_dir_all(dir.path().join("tests")).unwrap();
    fs_err::write(dir.path().join("tests/test_report.py"), &test).unwrap();
    let root = dir.path().to_str().unwrap();
    // pytest's report of a failed assertion: the only frame is the test's.
    let intent = "The totals of `build_report` are wrong for one invoice\n\n\
        ```\n\
        Traceback (most recent call last):\n  \
        File \"/srv/app/tests/test_report.py\", line 20, in test_build_report_totals\n    \
        assert build_report([Invoice(16)]).section(16) == 16\n\
        AssertionError\n\
        ```\n";
    let run = aic(
        &[
            "compile", intent, "--root", root, "--budget", "2500", "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let prompt = run.json()["compiledPrompt"].as_str().unwrap().to_owned();
    assert_eq!(prompt_headings(&prompt)[0], "service.py", "{prompt}");
    // The test is not an error site: the function the task names keeps
    // the first file's whole share and is shown whole.
    assert_function_whole(&prompt, &service, "build_report");
}

#[test]
fn a_vague_intent_gets_the_orienting_context_and_a_warning() {
    let repo = fixture_repo("webapp", WEBAPP_MTIMES);
    let root = repo.path().to_str().unwrap();
    for intent in ["speed it up", "make it better"] {
        let run = aic(&["compile", intent, "--root", root, "--json"], &[]);
        assert_eq!(run.code, 0, "{intent}: {}", run.stderr);
        let json = run.json();
        let prompt = json["compiledPrompt"].as_str().unwrap();
        let headings = prompt_headings(prompt);
        assert_eq!(headings[..2], ["README.md", "package.json"], "{headings:?}");
        assert!(
            prompt.contains("## Project structure\n\nsrc/ ("),
            "{prompt}"
        );
        assert!(notes(prompt).contains("orienting context"), "{prompt}");
        assert!(
            json["meta"]["warnings"]
                .to_string()
                .contains("orienting context"),
            "{}",
            json["meta"]
        );
    }
}

#[test]
fn an_unresolved_target_is_named_in_the_prompt() {
    let repo = fixture_repo("webapp", WEBAPP_MTIMES);
    let root = repo.path().to_str().unwrap();
    let run = aic(
        &[
            "compile",
            "fix the null check of @src/user/missing.ts in the user service",
            "--root",
            root,
            "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let prompt = run.json()["compiledPrompt"].as_str().unwrap().to_owned();
    assert!(
        notes(&prompt).contains("`src/user/missing.ts` was named but matches no file in scope"),
        "{prompt}"
    );
    assert_eq!(prompt_headings(&prompt)[0], "src/user/service.ts");
}

#[test]
fn a_target_left_out_by_a_builtin_rule_says_how_to_bring_it_back() {
    let repo = fixture_repo("webapp", WEBAPP_MTIMES);
    let root = repo.path();
    fs_err::create_dir_all(root.join("dist")).unwrap();
    fs_err::write(
        root.join("dist/app.js"),
        "export function nullCheck() { return 1; }\n",
    )
    .unwrap();
    let intent = "fix the null check of @dist/app.js in the user service";
    let root_arg = root.to_str().unwrap();
    let run = aic(&["compile", intent, "--root", root_arg, "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let prompt = run.json()["compiledPrompt"].as_str().unwrap().to_owned();
    let note = "`dist/app.js` exists but the built-in ignore pattern `dist/` leaves it out; a line `!dist/` in the project's `.gitignore` brings it back";
    assert!(notes(&prompt).contains(note), "{prompt}");
    // Doing what the note says brings the file in.
    fs_err::write(root.join(".gitignore"), "!dist/\n").unwrap();
    let run = aic(&["compile", intent, "--root", root_arg, "--json"], &[]);
    let prompt = run.json()["compiledPrompt"].as_str().unwrap().to_owned();
    assert!(
        prompt_headings(&prompt).contains(&"dist/app.js".to_owned()),
        "{prompt}"
    );
}
