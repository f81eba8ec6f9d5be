//! Real-shaped intents the stage tests read: a pasted Python traceback, a
//! pytest failure, a Node stack, a Go panic, a Java exception, a Rust
//! backtrace and an issue report with code blocks and a log
//! (`tests/fixtures/intents/`).

/// The text of the fixture `name` (a file name under
/// `tests/fixtures/intents/`).
pub(crate) fn intent_fixture(name: &str) -> &'static str {
    match name {
        "python-traceback.txt" => include_str!("../../tests/fixtures/intents/python-traceback.txt"),
        "pytest-failure.txt" => include_str!("../../tests/fixtures/intents/pytest-failure.txt"),
        "node-stack.txt" => include_str!("../../tests/fixtures/intents/node-stack.txt"),
        "go-panic.txt" => include_str!("../../tests/fixtures/intents/go-panic.txt"),
        "java-exception.txt" => include_str!("../../tests/fixtures/intents/java-exception.txt"),
        "rust-backtrace.txt" => include_str!("../../tests/fixtures/intents/rust-backtrace.txt"),
        "issue-report.md" => include_str!("../../tests/fixtures/intents/issue-report.md"),
        other => panic!("no intent fixture `{other}`"),
    }
}
