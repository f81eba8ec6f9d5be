//! Stack traces and error output pasted into an intent, read as frames.
//!
//! Recognised formats, each line on its own:
//!
//! | format | frame line |
//! | --- | --- |
//! | Python | `File "pkg/mod.py", line 12, in func` (also behind pytest's `INTERNALERROR> `) |
//! | pytest | `pkg/mod.py:12: in func`, `pkg/mod.py:12: AssertionError` |
//! | JavaScript / Node | `at func (src/a.js:12:5)`, `at src/a.js:12:5`, `at file:///app/a.mjs:3:1` |
//! | Java / Kotlin | `at com.acme.Foo.bar(Foo.java:12)` |
//! | Go | `/home/u/src/pkg/file.go:123 +0x1d` (after the `pkg.func(...)` line) |
//! | Rust | `at ./src/main.rs:12:5`, `panicked at src/main.rs:2:5:`, `--> src/lib.rs:3:1` |
//! | compilers and linters | `src/a.ts(12,5): error …`, `src/a.c:12:5: error: …` |
//!
//! A frame keeps the path as written (mapping it to a repository file is the
//! selector's business: prefixes such as `site-packages/` or an absolute
//! checkout directory are stripped there), the line and, where the format
//! gives it, the function. Frames are numbered from the innermost call
//! outwards within each trace: Python and pytest print the innermost frame
//! last, the others first.

use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

/// One frame of a pasted stack trace or error location.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceFrame {
    /// The path as written, `\` turned to `/`, `file://` and `./` removed.
    pub path: String,
    /// The 1-based line, when given.
    pub line: Option<u32>,
    /// The function or method, when the format gives it (`parse_args`,
    /// `Schema.load`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// Which trace of the text the frame belongs to (0 for the first).
    pub trace: u16,
    /// Distance from the innermost frame of its trace: 0 is where the error
    /// was raised.
    pub depth: u16,
}

/// The prefix pytest puts before each line of an internal error's report.
const INTERNAL_ERROR_PREFIX: &str = "INTERNALERROR> ";

/// The most frames read from one intent; a pasted log can be long.
pub const MAX_FRAMES: usize = 200;

/// The extensions of source files a generic `path:line` location may name.
const SOURCE_EXTENSIONS: &str = "py|pyi|pyx|js|mjs|cjs|jsx|ts|mts|cts|tsx|vue|svelte|go|rs|java|kt|kts|scala|rb|php|c|h|cc|cpp|cxx|hpp|hh|cs|swift|m|mm|ex|exs|erl|clj|lua|sh|dart|zig|sql";

struct Patterns {
    python: Regex,
    pytest: Regex,
    javascript: Regex,
    java: Regex,
    go_location: Regex,
    rust_at: Regex,
    generic: Regex,
    prose_after: Regex,
    prose_before: Regex,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let build = |pattern: &str| {
            Regex::new(pattern).expect("the stack trace patterns are valid constant regexes")
        };
        Patterns {
            python: build(r#"^\s*File "([^"]+)", line (\d+)(?:, in ([\w.<>]+))?"#),
            pytest: build(&format!(
                r"^([\w./\\-]+\.(?:{SOURCE_EXTENSIONS})):(\d+):(?:\s+in\s+([\w.<>]+)|\s+\w+|\s*$)"
            )),
            javascript: build(
                r"^\s*at\s+(?:async\s+)?(?:(\S+?)\s+\()?((?:file://)?[^\s()]+?):(\d+)(?::\d+)?\)?\s*$",
            ),
            java: build(r"^\s*at\s+((?:[\w$]+\.)+)([\w$<>]+)\(([\w$-]+\.(?:java|kt|scala|groovy)):(\d+)\)"),
            go_location: build(r"^\s+(\S+\.go):(\d+)(?:\s+\+0x[0-9a-f]+)?\s*$"),
            rust_at: build(
                r"(?:^\s*at\s+|panicked at (?:'.*', )?|^\s*-->\s+)([^\s:]+\.rs):(\d+)(?::\d+)?",
            ),
            generic: build(&format!(
                r"(?:^|[\s('\x22])((?:[\w.-]+/)*[\w.-]+\.(?:{SOURCE_EXTENSIONS}))(?::(\d+)(?::\d+)?|\((\d+),\d+\))"
            )),
            // Prose: "`jsonrep.py` at line 227", "utils.py, line 12".
            prose_after: build(&format!(
                r"(?:^|[\s('\x22`])((?:[\w.-]+/)*[\w.-]+\.(?:{SOURCE_EXTENSIONS}))`?,?\s+(?:at\s+|on\s+|near\s+)?line\s+(\d+)\b"
            )),
            // Prose: "line 227 of `jsonrep.py`", "lines 40-52 in utils.py".
            prose_before: build(&format!(
                r"\blines?\s+(\d+)(?:\s*[-–]\s*\d+)?\s+(?:of|in)\s+`?((?:[\w.-]+/)*[\w.-]+\.(?:{SOURCE_EXTENSIONS}))\b"
            )),
        }
    })
}

/// Whether frames of this format are printed innermost last.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    InnermostLast,
    InnermostFirst,
}

fn clean_path(path: &str) -> String {
    let path = path.replace('\\', "/");
    let path = path.strip_prefix("file://").unwrap_or(&path);
    let mut path = path.trim_start_matches("./").to_owned();
    // `webpack:///./src/a.js`, `/rustc/<hash>/library/…` stay as written:
    // they map to no repository file.
    if let Some(rest) = path.strip_prefix("webpack:///") {
        path = rest.trim_start_matches("./").to_owned();
    }
    path
}

/// A frame found on `line`: its path, line, function and the order of its
/// format; `go_function` is the function a Go trace named on the line before.
fn frame_on_line(
    p: &Patterns,
    line: &str,
    go_function: &mut Option<String>,
) -> Option<(String, Option<u32>, Option<String>, Order)> {
    if let Some(c) = p.python.captures(line) {
        Some((
            c[1].to_owned(),
            c[2].parse().ok(),
            c.get(3).map(|m| m.as_str().to_owned()),
            Order::InnermostLast,
        ))
    } else if let Some(c) = p.java.captures(line) {
        let class = c[1].trim_end_matches('.');
        let package = class.rsplit_once('.').map_or("", |(package, _)| package);
        let file = &c[3];
        let path = if package.is_empty() {
            file.to_owned()
        } else {
            format!("{}/{file}", package.replace('.', "/"))
        };
        let class_name = class.rsplit('.').next().unwrap_or(class);
        Some((
            path,
            c[4].parse().ok(),
            Some(format!("{class_name}.{}", &c[2])),
            Order::InnermostFirst,
        ))
    } else if let Some(c) = p.rust_at.captures(line) {
        Some((
            c[1].to_owned(),
            c[2].parse().ok(),
            None,
            Order::InnermostFirst,
        ))
    } else if let Some(c) = p.javascript.captures(line) {
        let path = &c[2];
        if path.contains('/') || path.contains('.') {
            let function = c
                .get(1)
                .map(|m| m.as_str().to_owned())
                .filter(|f| f != "new" && f != "Object.<anonymous>");
            Some((
                path.to_owned(),
                c[3].parse().ok(),
                function,
                Order::InnermostFirst,
            ))
        } else {
            None
        }
    } else if let Some(c) = p.go_location.captures(line) {
        Some((
            c[1].to_owned(),
            c[2].parse().ok(),
            go_function.take(),
            Order::InnermostFirst,
        ))
    } else if let Some(c) = p.pytest.captures(line) {
        Some((
            c[1].to_owned(),
            c[2].parse().ok(),
            c.get(3).map(|m| m.as_str().to_owned()),
            Order::InnermostLast,
        ))
    } else if let Some(c) = p.prose_after.captures(line) {
        Some((
            c[1].to_owned(),
            c[2].parse().ok(),
            None,
            Order::InnermostFirst,
        ))
    } else if let Some(c) = p.prose_before.captures(line) {
        Some((
            c[2].to_owned(),
            c[1].parse().ok(),
            None,
            Order::InnermostFirst,
        ))
    } else if let Some(c) = p.generic.captures(line) {
        let line_number = c
            .get(2)
            .or_else(|| c.get(3))
            .and_then(|m| m.as_str().parse().ok());
        Some((c[1].to_owned(), line_number, None, Order::InnermostFirst))
    } else {
        None
    }
}

/// The frames of every stack trace and error location in `text`, trace by
/// trace, in the order printed, at most [`MAX_FRAMES`].
///
/// A new trace starts at a `Traceback` line, at a line of another format
/// than the frame before, or after a line that is neither a frame nor
/// indented context of one.
///
/// # Examples
///
/// ```
/// use aic_stages::select::stack_trace::parse_frames;
/// let frames = parse_frames(
///     "Traceback (most recent call last):\n  File \"/venv/lib/site-packages/pkg/api.py\", line 10, in load\n    x = parse()\n  File \"/venv/lib/site-packages/pkg/core.py\", line 3, in parse\n    raise ValueError\nValueError\n",
/// );
/// assert_eq!(frames.len(), 2);
/// assert_eq!(frames[1].path, "/venv/lib/site-packages/pkg/core.py");
/// assert_eq!(frames[1].depth, 0);
/// assert_eq!(frames[0].function.as_deref(), Some("load"));
/// ```
pub fn parse_frames(text: &str) -> Vec<TraceFrame> {
    let p = patterns();
    // (frame, order) per trace; depth is set when the trace closes.
    let mut frames: Vec<TraceFrame> = Vec::new();
    let mut current: Vec<(TraceFrame, Order)> = Vec::new();
    let mut trace: u16 = 0;
    let mut gap = 0usize;
    let mut go_function: Option<String> = None;
    let close = |current: &mut Vec<(TraceFrame, Order)>, frames: &mut Vec<TraceFrame>| {
        let len = current.len();
        for (index, (mut frame, order)) in current.drain(..).enumerate() {
            let depth = match order {
                Order::InnermostLast => len - 1 - index,
                Order::InnermostFirst => index,
            };
            frame.depth = u16::try_from(depth).unwrap_or(u16::MAX);
            frames.push(frame);
        }
    };
    for raw_line in text.lines() {
        if frames.len() + current.len() >= MAX_FRAMES {
            break;
        }
        let line = raw_line.trim_end_matches('\r');
        // pytest prints a crash inside itself or a plugin with every line
        // of the traceback behind `INTERNALERROR> `.
        let line = line.strip_prefix(INTERNAL_ERROR_PREFIX).unwrap_or(line);
        let found = frame_on_line(p, line, &mut go_function);
        let Some((path, line_number, function, order)) = found else {
            let trimmed = line.trim_start();
            if trimmed.is_empty() {
                continue;
            }
            if trimmed.starts_with("Traceback ") || trimmed.starts_with("Caused by:") {
                close(&mut current, &mut frames);
                trace = trace.saturating_add(u16::from(!frames.is_empty()));
                gap = 0;
            } else if let Some(function) = go_function_line(line) {
                go_function = Some(function);
            } else if !current.is_empty() {
                // Source lines under a Python frame and `E   …` lines of pytest
                // are indented; two plain lines in a row end the trace.
                let indented = line.starts_with([' ', '\t']) || line.starts_with("E ");
                gap = if indented { 0 } else { gap + 1 };
                if gap >= 2 {
                    close(&mut current, &mut frames);
                    trace = trace.saturating_add(1);
                    gap = 0;
                }
            }
            continue;
        };
        gap = 0;
        if current.last().is_some_and(|(_, o)| *o != order) {
            close(&mut current, &mut frames);
            trace = trace.saturating_add(1);
        }
        current.push((
            TraceFrame {
                path: clean_path(&path),
                line: line_number,
                function,
                trace,
                depth: 0,
            },
            order,
        ));
    }
    close(&mut current, &mut frames);
    frames
}

/// The function of a Go goroutine frame's first line:
/// `github.com/acme/app/pkg.(*Server).Handle(0xc000…)` → `Server.Handle`.
fn go_function_line(line: &str) -> Option<String> {
    static GO: OnceLock<Regex> = OnceLock::new();
    let go = GO.get_or_init(|| {
        Regex::new(r"^(?:[\w.-]+/)*[\w-]+\.(?:\(\*?(\w+)\)\.)?(\w+)\(.*\)\s*$")
            .expect("the Go frame pattern is a valid constant regex")
    });
    let c = go.captures(line)?;
    Some(match c.get(1) {
        Some(receiver) => format!("{}.{}", receiver.as_str(), &c[2]),
        None => c[2].to_owned(),
    })
}

/// Whether a line is part of a stack trace or error location (a frame, a
/// `Traceback` header, a Go function line): such lines are evidence through
/// their frames, not through their words.
pub fn is_trace_line(line: &str) -> bool {
    let line = line.trim_end_matches('\r');
    let p = patterns();
    line.trim_start().starts_with("Traceback ")
        || p.python.is_match(line)
        || p.java.is_match(line)
        || p.rust_at.is_match(line)
        || p.javascript.is_match(line)
        || p.go_location.is_match(line)
        || p.pytest.is_match(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> &'static str {
        crate::select::intent_fixtures::intent_fixture(name)
    }

    fn innermost(frames: &[TraceFrame]) -> &TraceFrame {
        frames
            .iter()
            .find(|f| f.depth == 0 && f.trace == frames[0].trace)
            .unwrap()
    }

    #[test]
    fn a_line_named_in_prose_is_a_location() {
        let frames = parse_frames("The problem is in `jsonrep.py` at line 227. I plan a fix.");
        assert_eq!(frames.len(), 1, "{frames:?}");
        assert_eq!(
            (frames[0].path.as_str(), frames[0].line),
            ("jsonrep.py", Some(227))
        );
        let frames = parse_frames("See line 40 of src/utils.py, and lines 7-9 in `app.ts`.");
        assert_eq!(frames[0].path, "src/utils.py");
        assert_eq!(frames[0].line, Some(40));
        assert!(parse_frames("Python 3.8 on line 2 of the form").is_empty());
    }

    #[test]
    fn python_traceback_innermost_is_last() {
        let frames = parse_frames(fixture("python-traceback.txt"));
        assert_eq!(frames.len(), 4, "{frames:#?}");
        let inner = innermost(&frames);
        assert!(inner.path.ends_with("marshmallow/fields.py"), "{inner:?}");
        assert_eq!(inner.function.as_deref(), Some("_bind_to_schema"));
        assert_eq!(frames[0].depth, 3);
    }

    #[test]
    fn a_pytest_internal_error_is_read_behind_its_prefix() {
        let frames = parse_frames(concat!(
            "INTERNALERROR> Traceback (most recent call last):\n",
            "INTERNALERROR>   File \"/venv/lib/python3.11/site-packages/_pytest/main.py\", line 285, in wrap_session\n",
            "INTERNALERROR>     session.exitstatus = doit(config, session) or 0\n",
            "INTERNALERROR>   File \"/venv/lib/python3.11/site-packages/_pytest/reports.py\", line 196, in head_line\n",
            "INTERNALERROR>     return domain\n",
            "INTERNALERROR> UnboundLocalError: cannot access local variable 'domain'\n",
        ));
        assert_eq!(frames.len(), 2, "{frames:#?}");
        let inner = innermost(&frames);
        assert!(inner.path.ends_with("_pytest/reports.py"), "{inner:?}");
        assert_eq!(
            (inner.line, inner.function.as_deref()),
            (Some(196), Some("head_line"))
        );
    }

    #[test]
    fn pytest_failure_frames() {
        let frames = parse_frames(fixture("pytest-failure.txt"));
        let paths: Vec<&str> = frames.iter().map(|f| f.path.as_str()).collect();
        assert!(paths.contains(&"tests/test_parser.py"), "{paths:?}");
        assert!(paths.contains(&"src/pkg/parser.py"), "{paths:?}");
        let inner = frames
            .iter()
            .find(|f| f.path == "src/pkg/parser.py")
            .unwrap();
        assert_eq!(inner.depth, 0);
        assert_eq!(inner.function.as_deref(), Some("parse_header"));
        assert_eq!(inner.line, Some(88));
    }

    #[test]
    fn node_stack_innermost_is_first() {
        let frames = parse_frames(fixture("node-stack.txt"));
        assert!(frames.len() >= 4, "{frames:#?}");
        assert_eq!(frames[0].path, "/app/packages/vite/src/node/server/hmr.ts");
        assert_eq!(frames[0].depth, 0);
        assert_eq!(frames[0].function.as_deref(), Some("updateModules"));
        assert_eq!(frames[0].line, Some(211));
        assert!(
            frames
                .iter()
                .any(|f| f.path.starts_with("node:internal") || f.path.contains("node_modules"))
        );
    }

    #[test]
    fn go_panic_frames_carry_functions() {
        let frames = parse_frames(fixture("go-panic.txt"));
        let first = &frames[0];
        assert!(
            first.path.ends_with("internal/store/cache.go"),
            "{frames:#?}"
        );
        assert_eq!(first.function.as_deref(), Some("Cache.Get"));
        assert_eq!(first.line, Some(42));
        assert_eq!(first.depth, 0);
    }

    #[test]
    fn java_exception_frames_map_packages_to_paths() {
        let frames = parse_frames(fixture("java-exception.txt"));
        let first = &frames[0];
        assert_eq!(first.path, "com/acme/orders/OrderService.java");
        assert_eq!(first.function.as_deref(), Some("OrderService.total"));
        assert_eq!(first.line, Some(57));
        // "Caused by" starts a second trace.
        assert!(frames.iter().any(|f| f.trace > 0), "{frames:#?}");
    }

    #[test]
    fn rust_backtrace_frames() {
        let frames = parse_frames(fixture("rust-backtrace.txt"));
        let paths: Vec<&str> = frames.iter().map(|f| f.path.as_str()).collect();
        assert!(paths.contains(&"src/config.rs"), "{paths:?}");
        assert!(paths.contains(&"src/main.rs"), "{paths:?}");
        assert_eq!(frames[0].path, "src/config.rs");
        assert_eq!(frames[0].line, Some(31));
    }

    #[test]
    fn compiler_locations() {
        let frames = parse_frames(
            "src/app.ts(12,5): error TS2322: Type 'string' is not assignable\nlib/util.c:40:3: error: expected ';'",
        );
        let found: Vec<(&str, Option<u32>)> =
            frames.iter().map(|f| (f.path.as_str(), f.line)).collect();
        assert_eq!(found, [("src/app.ts", Some(12)), ("lib/util.c", Some(40))]);
    }

    #[test]
    fn prose_has_no_frames() {
        assert!(
            parse_frames("the parser in src/pkg/parser.py drops comments at line 3").is_empty()
        );
        assert!(parse_frames("at least one test fails").is_empty());
    }

    #[test]
    fn trace_lines_are_recognised() {
        assert!(is_trace_line("  File \"a.py\", line 1, in f"));
        assert!(is_trace_line("    at foo (src/a.js:1:2)"));
        assert!(!is_trace_line("Fix the parser"));
    }
}
