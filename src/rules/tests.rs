use std::path::Path;

use super::*;

fn write(root: &Path, path: &str, text: &str) {
    let full = root.join(path);
    fs_err::create_dir_all(full.parent().unwrap()).unwrap();
    fs_err::write(full, text).unwrap();
}

fn codes(analysis: &RulesAnalysis) -> Vec<(Severity, &'static str)> {
    analysis
        .findings
        .iter()
        .map(|f| (f.severity, f.code))
        .collect()
}

/// Asserts that the one finding of `analysis` is a contradiction.
fn assert_only_a_contradiction(analysis: &RulesAnalysis) {
    assert_eq!(
        codes(analysis),
        vec![(Severity::Error, "contradiction")],
        "{:#?}",
        analysis.findings
    );
}

/// A project whose rule files agree and say each thing once.
fn clean(root: &Path) {
    write(
        root,
        "CLAUDE.md",
        "# Project\n\n- Use pnpm to install packages.\n- Indent with 2 spaces.\n- Run the unit tests with vitest before committing.\n",
    );
    write(
        root,
        ".cursor/rules/api.mdc",
        "---\ndescription: API rules\nglobs: src/api/**/*.ts\nalwaysApply: false\n---\n- Validate every request body with the shared schema helpers.\n",
    );
    write(root, "src/api/users.ts", "export const users = [];\n");
    write(
        root,
        "packages/web/CLAUDE.md",
        "- Components live in one file each, named after the component.\n",
    );
}

#[test]
fn a_clean_project_has_no_finding_and_its_costs() {
    let dir = tempfile::tempdir().unwrap();
    clean(dir.path());
    let analysis = analyze(dir.path(), None);
    assert_eq!(codes(&analysis), vec![], "{:#?}", analysis.findings);
    let paths: Vec<&str> = analysis.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            ".cursor/rules/api.mdc",
            "CLAUDE.md",
            "packages/web/CLAUDE.md"
        ]
    );
    let root_file = &analysis.files[1];
    assert_eq!(root_file.applies, Applies::Always);
    assert!(root_file.tokens > 10, "{root_file:?}");
    assert_eq!(analysis.always_applied_tokens, root_file.tokens);
    assert_eq!(
        analysis.files[0].applies,
        Applies::Globs(vec!["src/api/**/*.ts".to_owned()])
    );
    assert_eq!(
        analysis.files[2].applies,
        Applies::Directory("packages/web".to_owned())
    );
}

#[test]
fn planted_duplicates_contradictions_dead_globs_and_doubled_hooks_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    clean(root);
    // A reworded duplicate and two contradictions in another file Claude
    // Code reads on every prompt.
    write(
        root,
        ".claude/CLAUDE.md",
        "## Conventions\n\n1. Always use pnpm for installing packages.\n2. Indent with tabs.\n3. Run the unit tests with jest.\n4. Keep changes focused on the task and do not modify unrelated code.\n",
    );
    // Another client's file repeating one: each agent reads it once.
    write(
        root,
        "AGENTS.md",
        "- Run the unit tests with vitest before committing.\n",
    );
    write(
        root,
        ".cursor/rules/legacy.mdc",
        "---\nglobs:\n  - legacy/**/*.php\n---\n- Keep the legacy controllers procedural.\n",
    );
    write(
        root,
        ".cursor/rules/api-style.mdc",
        "---\nalwaysApply: true\n---\n- Handlers in `src/api/handlers/` return typed errors.\n- Keep `src/api/routes.ts` sorted by path.\n",
    );
    write(
        root,
        ".claude/settings.json",
        r#"{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "aic hook --editor claude-code"}]}, {"hooks": [{"type": "command", "command": "aic hook --editor claude-code"}]}]}}"#,
    );
    let analysis = analyze(root, None);
    let found = codes(&analysis);
    for expected in [
        (Severity::Error, "contradiction"),
        (Severity::Warn, "duplicate"),
        (Severity::Warn, "dead-glob"),
        (Severity::Warn, "narrow-always-apply"),
        (Severity::Warn, "doubled-hook"),
        (Severity::Info, "repeats-aic"),
        (Severity::Info, "repeated-across-clients"),
    ] {
        assert!(
            found.contains(&expected),
            "{expected:?} in {:#?}",
            analysis.findings
        );
    }
    let contradictions: Vec<&Finding> = analysis
        .findings
        .iter()
        .filter(|f| f.code == "contradiction")
        .collect();
    // Indentation (2 spaces against tabs) and the test runner (vitest
    // against jest); pnpm agrees.
    assert_eq!(contradictions.len(), 2, "{contradictions:#?}");
    assert!(
        contradictions
            .iter()
            .any(|f| f.message.starts_with("indentation:")),
        "{contradictions:#?}"
    );
    assert!(
        contradictions
            .iter()
            .any(|f| f.message.starts_with("test runner:")),
        "{contradictions:#?}"
    );
    let duplicate = analysis
        .findings
        .iter()
        .find(|f| f.code == "duplicate")
        .unwrap();
    assert_eq!(
        duplicate.places,
        vec![
            Place {
                path: ".claude/CLAUDE.md".to_owned(),
                line: 3
            },
            Place {
                path: "CLAUDE.md".to_owned(),
                line: 3
            }
        ]
    );
    let dead = analysis
        .findings
        .iter()
        .find(|f| f.code == "dead-glob")
        .unwrap();
    assert_eq!(dead.places[0].path, ".cursor/rules/legacy.mdc");
    // Errors first.
    assert_eq!(analysis.findings[0].severity, Severity::Error);
}

#[test]
fn always_and_never_of_one_action_contradict() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "CLAUDE.md",
        "- Always commit the lock file with the change.\n",
    );
    write(
        dir.path(),
        "app/CLAUDE.md",
        "Never commit the lock file with the change.\n",
    );
    let analysis = analyze(dir.path(), None);
    assert_only_a_contradiction(&analysis);
    // Files of another client, or of a sibling directory, are never read
    // with these by one agent: no contradiction.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "app/CLAUDE.md",
        "- Always commit the lock file with the change.\n",
    );
    write(
        dir.path(),
        "lib/CLAUDE.md",
        "- Never commit the lock file with the change.\n",
    );
    write(
        dir.path(),
        ".github/copilot-instructions.md",
        "Never commit the lock file with the change.\n",
    );
    let analysis = analyze(dir.path(), None);
    assert!(
        analysis
            .findings
            .iter()
            .all(|f| f.severity != Severity::Error),
        "{:#?}",
        analysis.findings
    );
}

#[test]
fn a_value_forbidden_after_it_is_not_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "CLAUDE.md",
        "- Use pnpm instead of npm.\n- npm is not supported here.\n- We no longer use yarn; use pnpm workspaces.\n",
    );
    let analysis = analyze(dir.path(), None);
    assert_eq!(codes(&analysis), vec![], "{:#?}", analysis.findings);
}

#[test]
fn user_files_are_read_under_home() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    write(
        project.path(),
        "CLAUDE.md",
        "- Use pnpm to install packages.\n",
    );
    write(
        home.path(),
        ".claude/CLAUDE.md",
        "- Use npm to install packages.\n",
    );
    let analysis = analyze(project.path(), Some(home.path()));
    assert_eq!(analysis.files[1].path, "~/.claude/CLAUDE.md");
    assert_eq!(analysis.files[1].scope, "user");
    assert_only_a_contradiction(&analysis);
}

#[test]
fn fix_takes_out_later_copies_and_keeps_lines_that_say_more() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // `.claude/CLAUDE.md` comes first (files in path order, both read on
    // every prompt), so its copies are kept.
    write(
        root,
        ".claude/CLAUDE.md",
        "- Use pnpm to install packages.\n- Commit the lock file with every change.\n",
    );
    write(
        root,
        "CLAUDE.md",
        "# Rules\n\n- Always use pnpm for installing packages.\n- Commit the lock file with every change. Sign every commit with your key.\n- Write the changelog entry in the past tense.\n",
    );
    let analysis = analyze(root, None);
    let edits = fix::plan(&analysis, root);
    assert_eq!(edits.len(), 1, "{edits:#?} {:#?}", analysis.findings);
    let edit = &edits[0];
    assert_eq!(edit.path, "CLAUDE.md");
    // The reworded pnpm line goes; the line that also asks for signed
    // commits stays.
    assert_eq!(edit.removed, vec![3]);
    assert_eq!(
        edit.after,
        "# Rules\n\n- Commit the lock file with every change. Sign every commit with your key.\n- Write the changelog entry in the past tense.\n"
    );
    let diff = edit.unified_diff();
    assert!(
        diff.starts_with("--- a/CLAUDE.md\n+++ b/CLAUDE.md\n"),
        "{diff}"
    );
    assert!(
        diff.contains("\n-- Always use pnpm for installing packages.\n"),
        "{diff}"
    );
    let backups = tempfile::tempdir().unwrap();
    let backup_dir = backups.path().join("home/rules-backups");
    let written = fix::apply(&edits, Some(&backup_dir)).unwrap();
    // The backups are private, as the rest of AIC_HOME: the directories
    // the fix creates too.
    #[cfg(unix)]
    for dir in [backup_dir.clone(), backups.path().join("home")] {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs_err::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.display());
    }
    assert_eq!(
        fs_err::read_to_string(root.join("CLAUDE.md")).unwrap(),
        edit.after
    );
    assert_eq!(fs_err::read_to_string(&written[0]).unwrap(), edit.before);
    // Nothing left to take out: the other copy is on a line that says more.
    let again = analyze(root, None);
    assert!(fix::plan(&again, root).is_empty());
}

#[test]
fn a_user_script_calling_aic_beside_a_project_aic_handler_is_doubled() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    write(
        project.path(),
        ".claude/settings.json",
        r#"{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "aic", "args": ["hook", "claude", "UserPromptSubmit"]}]}]}}"#,
    );
    write(
        home.path(),
        ".claude/settings.json",
        r#"{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "python3 ~/.claude/hooks/context.py"}, {"type": "command", "command": "sh /etc/profile.d/x.sh"}]}]}}"#,
    );
    write(
        home.path(),
        ".claude/hooks/context.py",
        "import subprocess, sys\n# aic compile is called below\nprompt = sys.stdin.read()\nprint(subprocess.run([\"aic\", \"compile\", prompt], capture_output=True, text=True).stdout)\n",
    );
    let analysis = analyze(project.path(), Some(home.path()));
    assert_eq!(
        codes(&analysis),
        vec![(Severity::Warn, "doubled-hook")],
        "{:#?}",
        analysis.findings
    );
    let places: Vec<(&str, usize)> = analysis.findings[0]
        .places
        .iter()
        .map(|p| (p.path.as_str(), p.line))
        .collect();
    assert_eq!(
        places,
        [
            (".claude/settings.json", 1),
            ("~/.claude/settings.json", 1),
            ("~/.claude/hooks/context.py", 4)
        ]
    );
}

#[test]
fn aic_handlers_with_different_checks_for_one_event_are_not_doubled() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".claude/settings.json",
        r#"{"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "/opt/bin/aic", "args": ["hook", "claude", "PreToolUse", "no-verify"]}]},
            {"hooks": [{"type": "command", "command": "/opt/bin/aic", "args": ["hook", "claude", "PreToolUse", "compile-gate"]}]},
            {"hooks": [{"type": "command", "command": "aic hook claude PreToolUse compile-gate"}]}
        ]}}"#,
    );
    let analysis = analyze(dir.path(), None);
    // Only the compile gate, registered in exec and in shell form.
    assert_eq!(
        codes(&analysis),
        vec![(Severity::Warn, "doubled-hook")],
        "{:#?}",
        analysis.findings
    );
    assert!(
        analysis.findings[0]
            .message
            .contains("run aic's `compile-gate` check twice"),
        "{}",
        analysis.findings[0].message
    );
    let lines: Vec<usize> = analysis.findings[0].places.iter().map(|p| p.line).collect();
    assert_eq!(lines, [3, 4]);
}

#[test]
fn one_script_for_two_matchers_of_an_event_is_not_doubled() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".claude/settings.json",
        r#"{"hooks": {"PostToolUse": [
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "npx prettier --write ."}]},
            {"matcher": "Write", "hooks": [{"type": "command", "command": "npx prettier --write ."}]}
        ], "Stop": [
            {"hooks": [{"type": "command", "command": "npx prettier --write ."}]},
            {"matcher": "*", "hooks": [{"type": "command", "command": "npx prettier --write ."}]}
        ]}}"#,
    );
    let analysis = analyze(dir.path(), None);
    // Stop twice (no matcher and `*` both select everything); PostToolUse
    // once per tool.
    assert_eq!(
        codes(&analysis),
        vec![(Severity::Warn, "doubled-hook")],
        "{:#?}",
        analysis.findings
    );
    assert!(
        analysis.findings[0].message.contains("for Stop"),
        "{}",
        analysis.findings[0].message
    );
}

#[test]
fn two_always_instructions_about_different_actions_do_not_contradict() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "CLAUDE.md",
        "- Always use named exports in the UI package.\n- Always run the tests before committing.\n",
    );
    write(
        dir.path(),
        "AGENTS.md",
        "- Always write the changelog entry first.\n",
    );
    let analysis = analyze(dir.path(), None);
    assert_eq!(codes(&analysis), vec![], "{:#?}", analysis.findings);
}

#[test]
fn a_line_repeated_by_nested_files_is_one_finding_and_siblings_are_not_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let line = "- Use the shared logger, never print to stdout.\n";
    // Sibling directories: no agent reads both, so neither copy is extra.
    write(root, "web/CLAUDE.md", line);
    write(root, "api/CLAUDE.md", line);
    let analysis = analyze(root, None);
    assert_eq!(codes(&analysis), vec![], "{:#?}", analysis.findings);
    assert!(fix::plan(&analysis, root).is_empty());

    // The root's copy is read wherever theirs are: one finding, the root's
    // copy kept and both nested ones taken out by the fix, a deeper one too.
    write(root, "web/app/CLAUDE.md", line);
    write(root, "CLAUDE.md", &format!("# Project\n\n{line}"));
    let analysis = analyze(root, None);
    let duplicates: Vec<&Finding> = analysis
        .findings
        .iter()
        .filter(|f| f.code == "duplicate")
        .collect();
    assert_eq!(duplicates.len(), 1, "{duplicates:#?}");
    let places: Vec<(&str, usize)> = duplicates[0]
        .places
        .iter()
        .map(|p| (p.path.as_str(), p.line))
        .collect();
    assert_eq!(
        places,
        [
            ("CLAUDE.md", 3),
            ("api/CLAUDE.md", 1),
            ("web/CLAUDE.md", 1),
            ("web/app/CLAUDE.md", 1)
        ]
    );
    assert!(
        duplicates[0].message.contains("in 3 more places")
            // An agent under web/app reads the root's, web's and its own.
            && duplicates[0].message.contains("reads it up to 3 times"),
        "{}",
        duplicates[0].message
    );
    let edits = fix::plan(&analysis, root);
    let edited: Vec<&str> = edits.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        edited,
        ["api/CLAUDE.md", "web/CLAUDE.md", "web/app/CLAUDE.md"]
    );
    assert!(edits.iter().all(|e| e.after.is_empty()), "{edits:#?}");
}

#[test]
fn fix_never_takes_an_instruction_from_an_agent_that_reads_it_once() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = project.path();
    let line = "- Always run the full test suite before opening a pull request.\n";
    // Three clients' files: each agent reads the line once.
    write(root, "AGENTS.md", line);
    write(root, ".cursorrules", line);
    write(root, "CLAUDE.md", &format!("# Team\n\n{line}"));
    // The user's own file, read in every project: never edited.
    write(home.path(), ".claude/CLAUDE.md", line);
    // A personal local file repeating the team's: the team's copy stays.
    write(root, "CLAUDE.local.md", line);
    let analysis = analyze(root, Some(home.path()));
    let duplicate = analysis
        .findings
        .iter()
        .find(|f| f.code == "duplicate")
        .unwrap();
    assert_eq!(duplicate.places[0].path, "CLAUDE.md", "{duplicate:#?}");
    assert!(
        analysis
            .findings
            .iter()
            .any(|f| f.code == "repeated-across-clients" && f.severity == Severity::Info),
        "{:#?}",
        analysis.findings
    );
    let edits = fix::plan(&analysis, root);
    let edited: Vec<&str> = edits.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(edited, ["CLAUDE.local.md"], "{edits:#?}");
}

#[cfg(unix)]
#[test]
fn a_linked_claude_md_is_read_and_its_target_never_edited_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "AGENTS.md",
        "- Keep public API changes listed in the changelog.\n",
    );
    std::os::unix::fs::symlink("AGENTS.md", root.join("CLAUDE.md")).unwrap();
    fs_err::create_dir_all(root.join("docs")).unwrap();
    std::os::unix::fs::symlink("../AGENTS.md", root.join("docs/CLAUDE.md")).unwrap();
    let analysis = analyze(root, None);
    let paths: Vec<&str> = analysis.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["AGENTS.md", "CLAUDE.md", "docs/CLAUDE.md"]);
    // One file under three names: no duplicate, nothing to take out.
    assert!(
        analysis.findings.iter().all(|f| f.code != "duplicate"),
        "{:#?}",
        analysis.findings
    );
    assert!(fix::plan(&analysis, root).is_empty());
}

#[test]
fn the_tokens_on_every_prompt_are_the_heaviest_clients_not_the_sum() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "CLAUDE.md",
        "- Use pnpm to install packages.\n- Indent with 2 spaces.\n- Keep each component in its own file.\n",
    );
    write(dir.path(), "AGENTS.md", "- Use pnpm.\n");
    let analysis = analyze(dir.path(), None);
    let tokens = |path: &str| {
        analysis
            .files
            .iter()
            .find(|f| f.path == path)
            .unwrap()
            .tokens
    };
    assert!(tokens("CLAUDE.md") > tokens("AGENTS.md"));
    assert_eq!(analysis.always_applied_tokens, tokens("CLAUDE.md"));
    assert_eq!(
        super::heaviest_always_applied(&analysis.files),
        Some(("claude", tokens("CLAUDE.md")))
    );
}

#[test]
fn one_conflict_over_many_files_is_one_finding() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "CLAUDE.md",
        "- Use npm to install dependencies.\n",
    );
    write(
        dir.path(),
        ".claude/CLAUDE.md",
        "- Use yarn to install dependencies.\n",
    );
    write(
        dir.path(),
        "web/CLAUDE.md",
        "- Use pnpm to install dependencies.\n",
    );
    let analysis = analyze(dir.path(), None);
    let conflicts: Vec<&Finding> = analysis
        .findings
        .iter()
        .filter(|f| f.code == "contradiction")
        .collect();
    assert_eq!(conflicts.len(), 1, "{conflicts:#?}");
    assert_eq!(conflicts[0].places.len(), 3, "{conflicts:#?}");
    assert!(
        conflicts[0].message.starts_with("package manager: ")
            && conflicts[0]
                .message
                .ends_with("the agent cannot follow all: keep one"),
        "{}",
        conflicts[0].message
    );
}

#[test]
fn a_file_repeating_its_own_line_has_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".github/copilot-instructions.md",
        "Flag parsing is in `cli/args/flags.rs`.\n\nSome more text about the runtime crate.\n\nFlag parsing is in `cli/args/flags.rs`.\n",
    );
    let analysis = analyze(dir.path(), None);
    let duplicate = analysis
        .findings
        .iter()
        .find(|f| f.code == "duplicate")
        .unwrap();
    let lines: Vec<usize> = duplicate.places.iter().map(|p| p.line).collect();
    assert_eq!(lines, [1, 5]);
}

#[test]
fn a_reworded_line_that_says_more_is_kept_and_the_shorter_goes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "CLAUDE.md",
        "# Commits\n\n- Keep commits small.\n\n## Again\n\n- Keep commits small and focused.\n",
    );
    let analysis = analyze(root, None);
    let edits = fix::plan(&analysis, root);
    assert_eq!(edits.len(), 1, "{edits:#?}");
    assert_eq!(edits[0].removed, vec![3], "{edits:#?}");
    assert!(edits[0].after.contains("Keep commits small and focused."));
}

#[test]
fn use_x_not_y_asks_for_x() {
    for (never, asks) in [
        ("Never use npm.", "Use npm, not yarn."),
        ("Never use npm.", "Always use npm (not yarn or pnpm)."),
        ("Indent with 4 spaces.", "Indent with 2 spaces, not 4."),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "CLAUDE.md", &format!("- {never}\n- {asks}\n"));
        let analysis = analyze(dir.path(), None);
        assert!(
            analysis.findings.iter().any(|f| f.code == "contradiction"),
            "{never} / {asks}: {:#?}",
            analysis.findings
        );
    }
}

#[test]
fn siblings_contradicting_the_root_are_two_conflicts_not_one() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "CLAUDE.md",
        "- Use pnpm to install dependencies.\n",
    );
    write(
        dir.path(),
        "pkg/a/CLAUDE.md",
        "- Use npm to install dependencies.\n",
    );
    write(
        dir.path(),
        "pkg/b/CLAUDE.md",
        "- Use yarn to install dependencies.\n",
    );
    let analysis = analyze(dir.path(), None);
    let conflicts: Vec<Vec<&str>> = analysis
        .findings
        .iter()
        .filter(|f| f.code == "contradiction")
        .map(|f| f.places.iter().map(|p| p.path.as_str()).collect())
        .collect();
    assert_eq!(
        conflicts,
        [
            vec!["CLAUDE.md", "pkg/a/CLAUDE.md"],
            vec!["CLAUDE.md", "pkg/b/CLAUDE.md"]
        ]
    );
}
