//! The per-file cache end to end: warm compiles give the same bytes as cold
//! ones, an edit recomputes only the edited files, a damaged database costs a
//! warning and not the compile, two processes share one database, and export
//! and import move the cache between homes.

use std::path::Path;

use crate::support::{aic, fixture_repo};

const INTENT: &str = "fix the null check in the user service";

fn inspect(root: &Path, home: &Path) -> serde_json::Value {
    let run = aic(
        &[
            "inspect",
            INTENT,
            "--root",
            root.to_str().unwrap(),
            "--json",
        ],
        &[("AIC_HOME", home.to_str().unwrap())],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

fn compile(root: &Path, home: &Path, extra: &[&str]) -> crate::support::Run {
    let mut args = vec!["compile", INTENT, "--root", root.to_str().unwrap()];
    args.extend_from_slice(extra);
    aic(&args, &[("AIC_HOME", home.to_str().unwrap())])
}

/// Overwrites `bytes` with xorshift noise from `state`, as a disk fault would.
fn scramble(bytes: &mut [u8], state: &mut u32) {
    for byte in bytes {
        *state ^= *state << 13;
        *state ^= *state >> 17;
        *state ^= *state << 5;
        *byte = *state as u8;
    }
}

/// The best-ranked source files, the edit candidates: shown with their exact
/// text, from a row of their own (a precompute writes it for every source
/// code file; a compile that ranks them first computes it when missing).
fn edit_candidates(trace: &serde_json::Value) -> Vec<String> {
    trace["selectedFiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["path"].as_str().unwrap().to_owned())
        .filter(|path| path.starts_with("src/"))
        .take(aic::pipeline::facts::EDIT_CANDIDATES)
        .collect()
}

fn counts(trace: &serde_json::Value, stage: &str) -> (u64, u64) {
    let stage = &trace["cache"][stage];
    (
        stage["hits"].as_u64().unwrap(),
        stage["computed"].as_u64().unwrap(),
    )
}

#[test]
fn a_warm_compile_recomputes_nothing_and_gives_the_same_bytes() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let cold = compile(repo.path(), home.path(), &[]);
    assert_eq!(cold.code, 0, "{}", cold.stderr);
    let warm = compile(repo.path(), home.path(), &[]);
    assert_eq!(warm.code, 0, "{}", warm.stderr);
    assert_eq!(cold.stdout, warm.stdout);
    let uncached = compile(repo.path(), home.path(), &["--no-cache"]);
    assert_eq!(uncached.stdout, cold.stdout);

    let trace = inspect(repo.path(), home.path());
    assert_eq!(trace["cache"]["enabled"], true);
    let files = trace["filesTotal"].as_u64().unwrap();
    assert_eq!(counts(&trace, "scan"), (files, 0), "{}", trace["cache"]);
    assert_eq!(counts(&trace, "facts").1, 0, "{}", trace["cache"]);
    assert_eq!(counts(&trace, "imports").1, 0, "{}", trace["cache"]);
    assert_eq!(trace["cache"]["pathIndexHits"].as_u64().unwrap(), files);
    assert_eq!(trace["cache"]["recomputed"], serde_json::json!([]));
}

/// A one-shot compile after `aic precompute` takes each unchanged file from
/// the project's saved snapshot instead of looking it up in the database; an
/// edited file is read and recomputed as before, a damaged snapshot is not
/// used, and the prompt is the same bytes in every case.
#[test]
fn a_one_shot_compile_starts_from_the_snapshot_precompute_saved() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let env = [("AIC_HOME", home.path().to_str().unwrap())];
    let run = aic(
        &["precompute", "--root", repo.path().to_str().unwrap()],
        &env,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let expected = compile(repo.path(), home.path(), &["--no-cache"]);
    assert_eq!(expected.code, 0, "{}", expected.stderr);

    let trace = inspect(repo.path(), home.path());
    let files = trace["filesTotal"].as_u64().unwrap();
    assert!(files > 5, "{trace}");
    assert_eq!(
        trace["cache"]["snapshotSeeded"], files,
        "{}",
        trace["cache"]
    );
    assert_eq!(counts(&trace, "scan"), (files, 0), "{}", trace["cache"]);
    assert_eq!(
        compile(repo.path(), home.path(), &[]).stdout,
        expected.stdout
    );

    // An edited file does not match its saved size and mtime: it alone is
    // read and scanned again.
    let edited = repo.path().join("src/utils/prefix.ts");
    let mut text = fs_err::read_to_string(&edited).unwrap();
    text.push_str("\nexport const EDITED_MARKER = 1;\n");
    fs_err::write(&edited, text).unwrap();
    let expected = compile(repo.path(), home.path(), &["--no-cache"]);
    let trace = inspect(repo.path(), home.path());
    assert_eq!(
        trace["cache"]["snapshotSeeded"], files,
        "{}",
        trace["cache"]
    );
    assert_eq!(counts(&trace, "scan"), (files - 1, 1), "{}", trace["cache"]);
    assert_eq!(
        compile(repo.path(), home.path(), &[]).stdout,
        expected.stdout
    );

    // A damaged snapshot is not used; the database answers instead.
    let snapshots: Vec<_> = fs_err::read_dir(home.path().join("snapshots"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(snapshots.len(), 1, "{snapshots:?}");
    let mut bytes = fs_err::read(&snapshots[0]).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    fs_err::write(&snapshots[0], &bytes).unwrap();
    let trace = inspect(repo.path(), home.path());
    assert!(
        trace["cache"].get("snapshotSeeded").is_none(),
        "{}",
        trace["cache"]
    );
    assert_eq!(counts(&trace, "scan"), (files, 0), "{}", trace["cache"]);
    assert_eq!(
        compile(repo.path(), home.path(), &[]).stdout,
        expected.stdout
    );

    // A clear removes the snapshots with the rows: nothing is taken from a
    // copy of what was cleared.
    let clear = aic(&["cache", "clear"], &env);
    assert_eq!(clear.code, 0, "{}", clear.stderr);
    assert!(
        clear.stdout.contains("Removed 1 saved project snapshot"),
        "{}",
        clear.stdout
    );
    assert!(!snapshots[0].exists());
    let trace = inspect(repo.path(), home.path());
    assert!(
        trace["cache"].get("snapshotSeeded").is_none(),
        "{}",
        trace["cache"]
    );
    assert_eq!(trace["cache"]["pathIndexHits"], 0, "{}", trace["cache"]);
    assert_eq!(counts(&trace, "scan"), (0, files), "{}", trace["cache"]);
}

/// Facts rows hold token counts: a row counted in `cl100k_base` is never
/// read for a model that counts in `o200k_base`, and the other way round; a
/// compile for each model, cold or warm, counts its prompt exactly in its
/// own encoding.
#[test]
fn rows_counted_in_one_encoding_are_not_read_for_another() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let trace = |extra: &[&str]| {
        let mut args = vec![
            "inspect",
            INTENT,
            "--root",
            repo.path().to_str().unwrap(),
            "--json",
        ];
        args.extend_from_slice(extra);
        let run = aic(&args, &[("AIC_HOME", home.path().to_str().unwrap())]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.json()
    };
    let cold = trace(&[]);
    let (_, cl100k_computed) = counts(&cold, "facts");
    assert!(cl100k_computed > 0, "{}", cold["cache"]);
    // The first gpt-4o compile computes its own rows; the scan rows (no
    // counts in them) are shared.
    let gpt = trace(&["--model", "gpt-4o"]);
    assert_eq!(
        counts(&gpt, "facts"),
        (0, cl100k_computed),
        "{}",
        gpt["cache"]
    );
    assert_eq!(counts(&gpt, "scan").1, 0, "{}", gpt["cache"]);
    assert_eq!(
        counts(&trace(&["--model", "gpt-4o"]), "facts"),
        (cl100k_computed, 0)
    );
    assert_eq!(counts(&trace(&[]), "facts"), (cl100k_computed, 0));

    for (model, reference) in [
        ("gpt-4o", tiktoken_rs::o200k_base_singleton()),
        ("gpt-4", tiktoken_rs::cl100k_base_singleton()),
    ] {
        for _ in 0..2 {
            let run = compile(repo.path(), home.path(), &["--model", model, "--json"]);
            assert_eq!(run.code, 0, "{}", run.stderr);
            let json = run.json();
            let prompt = json["compiledPrompt"].as_str().unwrap();
            assert_eq!(
                json["meta"]["tokensCompiled"].as_u64(),
                Some(reference.count_ordinary(prompt) as u64),
                "{model}: {}",
                json["meta"]
            );
        }
    }
}

#[test]
fn editing_three_files_recomputes_those_three_only() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let first = inspect(repo.path(), home.path());
    let files = first["filesTotal"].as_u64().unwrap();
    assert_eq!(counts(&first, "scan"), (0, files));

    let edited = ["src/user/service.ts", "src/auth/jwt.ts", "README.md"];
    for path in edited {
        let full = repo.path().join(path);
        let mut text = fs_err::read_to_string(&full).unwrap();
        text.push_str("\n// edited for the incremental test\n");
        fs_err::write(&full, text).unwrap();
    }
    let second = inspect(repo.path(), home.path());
    assert_eq!(
        counts(&second, "scan"),
        (files - 3, 3),
        "{}",
        second["cache"]
    );
    let recomputed: Vec<&str> = second["cache"]["recomputed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    // The edited files, and a file that is an edit candidate in one run only
    // (the edit moved it across the third rank): its other row was not needed
    // before.
    let mut candidates = edit_candidates(&first);
    candidates.extend(edit_candidates(&second));
    let mut expected: Vec<&str> = edited.to_vec();
    expected.extend(
        recomputed
            .iter()
            .filter(|path| !edited.contains(path) && candidates.iter().any(|c| c == *path)),
    );
    expected.sort_unstable();
    assert_eq!(recomputed, expected, "{}", second["cache"]);
    // Facts are computed only for edited files that are selected, and for
    // edit candidates.
    let (_, facts_computed) = counts(&second, "facts");
    assert!(
        facts_computed as usize <= 3 + aic::pipeline::facts::EDIT_CANDIDATES,
        "{}",
        second["cache"]
    );
    assert!(
        counts(&second, "facts").0 > 0,
        "unedited selected files hit: {}",
        second["cache"]
    );
}

#[test]
fn a_damaged_database_costs_a_warning_not_the_compile() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    fs_err::write(home.path().join("aic.redb"), b"this is not a redb database").unwrap();
    let run = compile(repo.path(), home.path(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("warning: Compiling without the per-file cache"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("aic.redb"), "{}", run.stderr);
    let clean = compile(repo.path(), tempfile::tempdir().unwrap().path(), &[]);
    assert_eq!(run.stdout, clean.stdout);
}

#[test]
fn two_processes_share_one_database() {
    let repos = [fixture_repo("webapp", &[]), fixture_repo("webapp", &[])];
    let home = tempfile::tempdir().unwrap();
    let home_path = home.path().to_str().unwrap().to_owned();
    let runs: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = repos
            .iter()
            .map(|repo| {
                let home = home_path.clone();
                scope.spawn(move || {
                    aic(
                        &[
                            "precompute",
                            "--root",
                            repo.path().to_str().unwrap(),
                            "--json",
                        ],
                        &[("AIC_HOME", home.as_str())],
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in &runs {
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    // Same relative paths and bytes: the second process's rows were either
    // written by it or found present; together they hold one copy.
    for repo in &repos {
        let trace = inspect(repo.path(), home.path());
        assert_eq!(counts(&trace, "scan").1, 0, "{}", trace["cache"]);
        // The edit candidates' exact-text rows were precomputed too.
        assert_eq!(counts(&trace, "facts").1, 0, "{}", trace["cache"]);
    }
    let stats = aic(
        &["cache", "stats", "--json"],
        &[("AIC_HOME", home_path.as_str())],
    );
    assert_eq!(stats.code, 0, "{}", stats.stderr);
    assert_eq!(stats.json()["projects"], 2);
}

#[test]
fn export_and_import_move_the_cache_to_another_home() {
    let repo = fixture_repo("webapp", &[]);
    let ci_home = tempfile::tempdir().unwrap();
    let ci = ci_home.path().to_str().unwrap();
    let run = aic(
        &["precompute", "--root", repo.path().to_str().unwrap()],
        &[("AIC_HOME", ci)],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("Precomputed "), "{}", run.stdout);
    let artifact = ci_home.path().join("cache.bin");
    let run = aic(
        &["cache", "export", artifact.to_str().unwrap()],
        &[("AIC_HOME", ci)],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);

    let dev_home = tempfile::tempdir().unwrap();
    let dev = dev_home.path().to_str().unwrap();
    let run = aic(
        &["cache", "import", artifact.to_str().unwrap()],
        &[("AIC_HOME", dev)],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("0 skipped"), "{}", run.stdout);
    // The developer's first compile computes nothing, not even its edit
    // candidates' exact text: the rest is reads and hashes.
    let trace = inspect(repo.path(), dev_home.path());
    assert_eq!(counts(&trace, "scan").1, 0, "{}", trace["cache"]);
    assert_eq!(counts(&trace, "facts").1, 0, "{}", trace["cache"]);
    let again = inspect(repo.path(), dev_home.path());
    assert_eq!(counts(&again, "facts").1, 0, "{}", again["cache"]);
    assert_eq!(trace["cache"]["pathIndexHits"], 0);

    let bogus = dev_home.path().join("bogus.bin");
    fs_err::write(&bogus, b"not an export").unwrap();
    let run = aic(
        &["cache", "import", bogus.to_str().unwrap()],
        &[("AIC_HOME", dev)],
    );
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("not an aic cache export"),
        "{}",
        run.stderr
    );

    let run = aic(&["cache", "clear"], &[("AIC_HOME", dev)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let stats = aic(&["cache", "stats", "--json"], &[("AIC_HOME", dev)]);
    assert_eq!(stats.json()["entries"], 0);
}

#[test]
fn damaged_pages_cost_a_warning_and_exports_never_overwrite_the_database() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let first = compile(repo.path(), home.path(), &[]);
    assert_eq!(first.code, 0, "{}", first.stderr);

    let database = home.path().join("aic.redb");
    let run = aic(
        &["cache", "export", database.to_str().unwrap()],
        &[("AIC_HOME", home.path().to_str().unwrap())],
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("is the aic database itself"),
        "{}",
        run.stderr
    );
    assert!(fs_err::metadata(&database).unwrap().len() > 1000);

    // Damage pages in the middle of the file, as a disk fault would.
    let mut bytes = fs_err::read(&database).unwrap();
    let mut state = 0x9e37_79b9_u32;
    let mut offset = 8192;
    while offset + 512 < bytes.len() {
        scramble(&mut bytes[offset..offset + 512], &mut state);
        offset += 16384;
    }
    fs_err::write(&database, bytes).unwrap();
    let run = compile(repo.path(), home.path(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, first.stdout);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);

    // Commands that need the database name it and point to the fix; `aic
    // cache clear` moves the damaged file aside and starts an empty one.
    let home_env = [("AIC_HOME", home.path().to_str().unwrap())];
    let root = repo.path().to_str().unwrap();
    for args in [
        &["cache", "stats"][..],
        &["precompute", "--root", root],
        &["status", "--root", root],
    ] {
        let run = aic(args, &home_env);
        assert_eq!(run.code, 3, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("is damaged"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("aic cache clear"),
            "{args:?}: {}",
            run.stderr
        );
    }
    let run = aic(&["cache", "clear"], &home_env);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("moved it aside"), "{}", run.stdout);
    let aside: Vec<_> = fs_err::read_dir(home.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with("aic.redb.damaged-")
        })
        .collect();
    assert_eq!(aside.len(), 1);
    let run = aic(&["cache", "stats"], &home_env);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = compile(repo.path(), home.path(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, first.stdout);
    assert!(!run.stderr.contains("damaged"), "{}", run.stderr);
}

#[test]
fn precompute_parses_each_code_file_once_and_reports_its_slowest_files() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let run = aic(
        &[
            "precompute",
            "--root",
            repo.path().to_str().unwrap(),
            "--json",
        ],
        &[("AIC_HOME", home.path().to_str().unwrap())],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let code_files = crate::support::files_under(repo.path())
        .iter()
        .filter(|path| path.extension().is_some_and(|e| e == "ts"))
        .count() as u64;
    // Comments, strings, signatures and names of a file: one parse, also for
    // a file the guard redacted (one here); TypeScript's imports come from
    // the tokens, without a parse.
    assert_eq!(report["parses"], code_files, "{report}");
    let slowest = report["slowest"].as_array().unwrap();
    assert_eq!(slowest.len(), 5, "{report}");
    let times: Vec<f64> = slowest.iter().map(|f| f["ms"].as_f64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    for file in slowest {
        let path = file["path"].as_str().unwrap();
        assert!(repo.path().join(path).is_file(), "{path}");
    }
    assert!(report["mbPerSecond"].as_f64().unwrap() >= 0.0);
    assert!(report["filesPerSecond"].as_f64().unwrap() > 0.0);
    // A second run finds everything cached and parses nothing.
    let again = aic(
        &[
            "precompute",
            "--root",
            repo.path().to_str().unwrap(),
            "--json",
        ],
        &[("AIC_HOME", home.path().to_str().unwrap())],
    );
    let again = again.json();
    assert_eq!(again["parses"], 0, "{again}");
    // Nothing computed, so no file is among the slowest.
    assert_eq!(
        again["slowest"].as_array().map(Vec::len),
        Some(0),
        "{again}"
    );
}

#[test]
fn precompute_of_one_file_says_file() {
    let repo = tempfile::tempdir().unwrap();
    fs_err::write(repo.path().join("main.rs"), "fn main() {}\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    let run = aic(
        &["precompute", "--root", repo.path().to_str().unwrap()],
        &[("AIC_HOME", home.path().to_str().unwrap())],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with("Precomputed 1 file ("),
        "{}",
        run.stdout
    );
}

#[test]
fn cache_clear_recovers_a_database_damaged_in_the_middle() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let home_env = [("AIC_HOME", home.path().to_str().unwrap())];
    let run = aic(
        &["precompute", "--root", repo.path().to_str().unwrap()],
        &home_env,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // 64 KiB of noise from the middle of the file on: the damage shows only
    // when a table's pages are read.
    let database = home.path().join("aic.redb");
    let mut bytes = fs_err::read(&database).unwrap();
    let middle = bytes.len() / 2;
    let end = (middle + 64 * 1024).min(bytes.len());
    scramble(&mut bytes[middle..end], &mut 0x2545_f491_u32);
    fs_err::write(&database, bytes).unwrap();
    // Every command that reports on the database or fills it visits every
    // page first: damage is named, with the fix, even by the commands that
    // read none of the damaged tables (damage only in free pages leaves
    // nothing to find, so all agree).
    let root = repo.path().to_str().unwrap();
    let commands: [&[&str]; 5] = [
        &["cache", "stats"],
        &["status", "--root", root],
        &["last", "--root", root],
        &["projects"],
        &["precompute", "--root", root],
    ];
    let runs: Vec<_> = commands
        .iter()
        .map(|command| (command, aic(command, &home_env)))
        .collect();
    let damage_found = runs[0].1.code != 0;
    for (command, run) in &runs {
        if damage_found {
            assert_eq!(run.code, 3, "{command:?}: {}", run.stderr);
            assert!(run.stderr.contains("is damaged"), "{}", run.stderr);
            assert!(run.stderr.contains("aic cache clear"), "{}", run.stderr);
        } else {
            assert_eq!(run.code, 0, "{command:?}: {}", run.stderr);
        }
    }
    let run = aic(&["cache", "clear"], &home_env);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("moved it aside") || run.stdout.contains("Cleared"),
        "{}",
        run.stdout
    );
    let run = aic(&["cache", "stats", "--json"], &home_env);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["entries"], 0, "{}", run.stdout);
}
