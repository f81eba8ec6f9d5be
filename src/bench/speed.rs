//! Speed measurements per repository, and peer tools, as child processes.
//!
//! Every measured run is a fresh process of the current `aic` executable (or
//! a peer's command), started through `aic bench --exec-measured -- PROG ARGS`:
//! that small wrapper spawns the program, waits for it and reads
//! `getrusage(RUSAGE_CHILDREN)`, which then holds exactly that one child's
//! user + system CPU time and peak resident set size, and reports them with
//! the wall time it measured around the child. A process per run is what
//! makes a cold compile honest (nothing of an earlier compile survives in
//! memory), and each cold run gets its own empty `AIC_HOME`.
//!
//! | measurement | what runs, per run |
//! | --- | --- |
//! | `cold` | `aic compile INTENT --root W --json` with a new, empty `AIC_HOME` |
//! | `warm` | the same with the cache filled and a new intent each run |
//! | `prompt-cache` | the same intent twice; the second, measured, must be a prompt-cache hit (a miss counts as a failed run) |
//! | `edit3` | 3 files appended to (a new line each run), a compile, the files restored |
//! | `precompute` | `aic precompute --root W --json` with a new, empty `AIC_HOME` (MB/s from its report) |
//! | `mcp` | `aic mcp`: initialize and `tools/list` written at once; time to the `tools/list` answer |
//! | `mcp-warm` | `aic_compile` with a new intent through one long-lived `aic mcp` (its in-process memo on): the round trip; CPU and peak RSS of the server from `/proc` |
//!
//! Runs are interleaved — run 1 of every measurement and peer, then run 2,
//! and so on (A B A B) — so machine noise falls on all of them alike. Before
//! each run the harness runs `sync`, so no run pays for the write-back of
//! the previous one's database.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use crate::bench::metrics::{median, p95};

/// The prefix of the wrapper's report line on its stderr.
const MEASURE_PREFIX: &str = "aic-bench-measure: ";

/// One measured run of a child process.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sample {
    /// Wall time around the child, in milliseconds.
    pub wall_ms: f64,
    /// User + system CPU time of the child, in milliseconds.
    pub cpu_ms: f64,
    /// Peak resident set size of the child, in kibibytes.
    pub max_rss_kib: u64,
    /// Whether the child exited with status 0.
    pub ok: bool,
}

/// Runs `command` as the only child of this process and prints its [`Sample`] on
/// stderr (the wrapper side of `aic bench --exec-measured`). The child
/// inherits stdin and stdout; its stderr is discarded. A program that cannot
/// start is reported as a failed run.
///
/// # Errors
///
/// When `command` is empty or `getrusage` fails.
pub fn exec_measured(command: &[String]) -> anyhow::Result<()> {
    let Some((program, args)) = command.split_first() else {
        bail!("--exec-measured needs a program to run");
    };
    let started = Instant::now();
    // A program that cannot start (a peer not installed) is a failed run.
    let status = Command::new(program)
        .args(args)
        .stderr(Stdio::null())
        .status();
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .context("getrusage failed")?;
    let millis =
        |t: nix::sys::time::TimeVal| t.tv_sec() as f64 * 1000.0 + t.tv_usec() as f64 / 1000.0;
    let sample = Sample {
        wall_ms,
        cpu_ms: millis(usage.user_time()) + millis(usage.system_time()),
        // Linux reports ru_maxrss in kibibytes.
        max_rss_kib: usage.max_rss().max(0) as u64,
        ok: status.is_ok_and(|status| status.success()),
    };
    let line = format!("{MEASURE_PREFIX}{}\n", serde_json::to_string(&sample)?);
    std::io::stderr().write_all(line.as_bytes())?;
    Ok(())
}

/// Statistics of a measurement's runs.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Runs that exited with status 0.
    pub runs: usize,
    /// Runs that failed.
    pub failed: usize,
    /// Median wall time, in milliseconds.
    pub median_ms: Option<f64>,
    /// 95th-percentile wall time (nearest rank), in milliseconds.
    pub p95_ms: Option<f64>,
    /// Median CPU time (user + system), in seconds.
    pub cpu_seconds: Option<f64>,
    /// Largest peak resident set size over the runs, in MiB.
    pub peak_rss_mib: Option<f64>,
    /// For `precompute`: the median of its reported MB/s (10^6 bytes of files
    /// per second of its own wall time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mb_per_second: Option<f64>,
}

impl Stats {
    /// The statistics of `samples` (failed runs are counted, not timed).
    pub fn of(samples: &[Sample]) -> Self {
        let ok: Vec<&Sample> = samples.iter().filter(|s| s.ok).collect();
        let wall: Vec<f64> = ok.iter().map(|s| s.wall_ms).collect();
        let cpu: Vec<f64> = ok.iter().map(|s| s.cpu_ms / 1000.0).collect();
        Self {
            runs: ok.len(),
            failed: samples.len() - ok.len(),
            median_ms: median(&wall),
            p95_ms: p95(&wall),
            cpu_seconds: median(&cpu),
            peak_rss_mib: ok
                .iter()
                .map(|s| s.max_rss_kib)
                .max()
                .map(|kib| kib as f64 / 1024.0),
            mb_per_second: None,
        }
    }
}

/// Runs one program through the wrapper; returns its sample and stdout.
fn measured(
    exe: &Path,
    home: &Path,
    program: &OsString,
    args: &[OsString],
) -> anyhow::Result<(Sample, Vec<u8>)> {
    settle();
    let output = Command::new(exe)
        .args(["bench", "--exec-measured", "--"])
        .arg(program)
        .args(args)
        .env("AIC_HOME", home)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("Failed to run `{}`", exe.display()))?;
    Ok((parse_sample(&output.stderr)?, output.stdout))
}

/// Flushes what earlier runs wrote (a cold compile writes its whole cache)
/// to disk before the next run starts, so that run does not pay for the
/// previous one's write-back. Best effort: where `sync` is missing, nothing.
fn settle() {
    let _ = Command::new("sync")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn parse_sample(stderr: &[u8]) -> anyhow::Result<Sample> {
    let text = String::from_utf8_lossy(stderr);
    let line = text
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix(MEASURE_PREFIX))
        .with_context(|| format!("The measuring wrapper reported nothing: {}", text.trim()))?;
    Ok(serde_json::from_str(line)?)
}

/// What one repository's speed run needs.
#[derive(Debug)]
pub struct SpeedTarget<'a> {
    /// The aic executable.
    pub exe: &'a Path,
    /// The worktree to compile.
    pub root: &'a Path,
    /// The intent (warm runs append ` (variant N)`).
    pub intent: &'a str,
    /// Where scratch `AIC_HOME` directories go.
    pub scratch: &'a Path,
    /// Runs per measurement.
    pub runs: usize,
    /// The measurements to take.
    pub metrics: &'a [String],
    /// Peer commands by name, already split into words, `{root}` replaced.
    pub peers: &'a [(String, Vec<String>)],
}

/// The measurements of one repository, by name (`cold`, …, `peer:NAME`), in
/// the order they were taken.
pub fn measure(target: &SpeedTarget<'_>, tick: &dyn Fn()) -> anyhow::Result<Vec<(String, Stats)>> {
    let exe = target.exe.as_os_str().to_owned();
    let compile_args = |intent: &str| -> Vec<OsString> {
        vec![
            "compile".into(),
            intent.into(),
            "--root".into(),
            target.root.into(),
            "--json".into(),
        ]
    };
    let wants = |name: &str| target.metrics.iter().any(|m| m == name);
    // The warm home: filled once by a compile before the first warm run.
    let warm_home = target.scratch.join("warm-home");
    let _ = fs_err::remove_dir_all(&warm_home);
    fs_err::create_dir_all(&warm_home)?;
    if wants("warm") || wants("prompt-cache") || wants("edit3") {
        measured(target.exe, &warm_home, &exe, &compile_args(target.intent))?;
    }
    let edited = if wants("edit3") {
        edit_candidates(target.root)?
    } else {
        Vec::new()
    };
    let originals: Vec<Vec<u8>> = edited
        .iter()
        .map(|(path, _)| fs_err::read(target.root.join(path)).unwrap_or_default())
        .collect();

    let mut samples: Vec<(String, Vec<Sample>, Vec<f64>)> = Vec::new();
    let mut record = |name: &str, sample: Sample, extra: Option<f64>| {
        if let Some(entry) = samples.iter_mut().find(|(n, _, _)| n == name) {
            entry.1.push(sample);
            entry.2.extend(extra);
        } else {
            samples.push((name.to_owned(), vec![sample], extra.into_iter().collect()));
        }
    };
    let mut server = None;
    let result = (|| -> anyhow::Result<()> {
        if wants("mcp-warm") {
            // The server's first compile fills its cache and memo; not measured.
            let home = fresh_home(target.scratch, "mcp-warm")?;
            let mut started = McpServer::start(target.exe, &home)?;
            started.compile(target.root, target.intent)?;
            server = Some(started);
        }
        for run in 0..target.runs {
            if wants("cold") {
                let home = fresh_home(target.scratch, "cold")?;
                let (sample, _) = measured(target.exe, &home, &exe, &compile_args(target.intent))?;
                record("cold", sample, None);
                tick();
            }
            for (name, words) in target.peers {
                let Some((program, args)) = words.split_first() else {
                    continue;
                };
                let args: Vec<OsString> = args.iter().map(OsString::from).collect();
                let home = fresh_home(target.scratch, "peer")?;
                let (sample, _) = measured(target.exe, &home, &program.into(), &args)?;
                record(&format!("peer:{name}"), sample, None);
                tick();
            }
            if wants("warm") {
                let intent = format!("{} (variant {})", target.intent, run + 1);
                let (sample, _) = measured(target.exe, &warm_home, &exe, &compile_args(&intent))?;
                record("warm", sample, None);
                tick();
            }
            if wants("prompt-cache") {
                // The first compile stores the prompt for the files as they are
                // now; the second, measured, must be answered from it.
                measured(target.exe, &warm_home, &exe, &compile_args(target.intent))?;
                let (mut sample, stdout) =
                    measured(target.exe, &warm_home, &exe, &compile_args(target.intent))?;
                sample.ok &= serde_json::from_slice::<serde_json::Value>(&stdout)
                    .ok()
                    .and_then(|v| {
                        v.pointer("/meta/cacheHit")
                            .and_then(serde_json::Value::as_bool)
                    })
                    .unwrap_or(false);
                record("prompt-cache", sample, None);
                tick();
            }
            if wants("edit3") && !edited.is_empty() {
                for (path, comment) in &edited {
                    let mut file = fs_err::OpenOptions::new()
                        .append(true)
                        .open(target.root.join(path))?;
                    writeln!(file, "\n{comment} aic bench edit {}", run + 1)?;
                }
                let intent = format!("{} (after edits {})", target.intent, run + 1);
                let (sample, _) = measured(target.exe, &warm_home, &exe, &compile_args(&intent))?;
                restore(target.root, &edited, &originals)?;
                record("edit3", sample, None);
                tick();
            }
            if wants("precompute") {
                let home = fresh_home(target.scratch, "precompute")?;
                let args: Vec<OsString> = vec![
                    "precompute".into(),
                    "--root".into(),
                    target.root.into(),
                    "--json".into(),
                ];
                let (sample, stdout) = measured(target.exe, &home, &exe, &args)?;
                let rate = serde_json::from_slice::<serde_json::Value>(&stdout)
                    .ok()
                    .and_then(|v| v.get("mbPerSecond").and_then(serde_json::Value::as_f64));
                record("precompute", sample, rate);
                tick();
            }
            if wants("mcp") {
                let home = fresh_home(target.scratch, "mcp")?;
                record("mcp", mcp_first_answer(target.exe, &home)?, None);
                tick();
            }
            if let Some(server) = server.as_mut() {
                let intent = format!("{} (server variant {})", target.intent, run + 1);
                record("mcp-warm", server.compile(target.root, &intent)?, None);
                tick();
            }
        }
        Ok(())
    })();
    if let Some(server) = server {
        server.close();
    }
    restore(target.root, &edited, &originals)?;
    result?;
    Ok(samples
        .into_iter()
        .map(|(name, runs, extra)| {
            let mut stats = Stats::of(&runs);
            stats.mb_per_second = median(&extra);
            (name, stats)
        })
        .collect())
}

/// Writes the edited files' original bytes back.
fn restore(root: &Path, edited: &[(PathBuf, &str)], originals: &[Vec<u8>]) -> anyhow::Result<()> {
    for ((path, _), bytes) in edited.iter().zip(originals) {
        fs_err::write(root.join(path), bytes)?;
    }
    Ok(())
}

/// Measurements a run of `metrics` takes per repository and run, with
/// `peers` peers (for the progress bar).
pub fn steps_per_run(metrics: &[String], peers: usize) -> usize {
    metrics.len() + peers
}

/// A new, empty directory under `scratch` for one run's `AIC_HOME`.
fn fresh_home(scratch: &Path, kind: &str) -> anyhow::Result<PathBuf> {
    let home = scratch.join(format!("{kind}-home"));
    if home.exists() {
        fs_err::remove_dir_all(&home)?;
    }
    fs_err::create_dir_all(&home)?;
    Ok(home)
}

/// Three tracked source files to edit, the first three by path whose
/// extension has a line-comment syntax, each with that comment prefix (so the
/// appended line stays a comment).
fn edit_candidates(root: &Path) -> anyhow::Result<Vec<(PathBuf, &'static str)>> {
    let out = crate::bench::checkout::git(root, &["ls-files", "-z"], None)?;
    let mut files: Vec<(PathBuf, &'static str)> = out
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
        .filter_map(|p| {
            let prefix = match p.extension().and_then(|e| e.to_str())? {
                "rs" | "ts" | "js" | "go" | "java" | "c" | "cpp" | "tsx" | "jsx" => "//",
                "py" | "rb" | "sh" => "#",
                _ => return None,
            };
            root.join(&p).is_file().then_some((p, prefix))
        })
        .collect();
    files.sort();
    files.truncate(3);
    Ok(files)
}

/// The MCP handshake: `initialize` (id 1), then `notifications/initialized`.
const INITIALIZE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"aic-bench","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n"
);

/// Reads JSON-RPC lines from `lines` until the answer to `id`.
fn answer_to(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    id: i64,
) -> anyhow::Result<serde_json::Value> {
    for line in lines {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(&line?) else {
            continue;
        };
        if message.get("id").and_then(serde_json::Value::as_i64) == Some(id) {
            return Ok(message);
        }
    }
    bail!("`aic mcp` closed its output before answering request {id}")
}

/// A long-lived `aic mcp` (the `mcp-warm` measurement), a direct child so its
/// CPU time and peak RSS can be read from `/proc/PID`.
struct McpServer {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    next_id: i64,
    /// Clock ticks per second of `/proc/PID/stat`'s times.
    ticks: f64,
}

impl McpServer {
    /// Starts `aic mcp` with `home` as `AIC_HOME` and completes the handshake.
    fn start(exe: &Path, home: &Path) -> anyhow::Result<Self> {
        let mut child = Command::new(exe)
            .arg("mcp")
            .env("AIC_HOME", home)
            .current_dir(home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("Failed to start `aic mcp`")?;
        let mut stdin = child.stdin.take().context("no stdin")?;
        let stdout = child.stdout.take().context("no stdout")?;
        stdin.write_all(INITIALIZE.as_bytes())?;
        stdin.flush()?;
        let mut lines = BufReader::new(stdout).lines();
        answer_to(&mut lines, 1)?;
        let ticks = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
            .ok()
            .flatten()
            .map_or(100.0, |t| t as f64);
        Ok(Self {
            child,
            stdin,
            lines,
            next_id: 2,
            ticks,
        })
    }

    /// One `aic_compile` round trip: its wall time, the server's CPU time
    /// over it, and the server's peak RSS so far.
    fn compile(&mut self, root: &Path, intent: &str) -> anyhow::Result<Sample> {
        let id = self.next_id;
        self.next_id += 1;
        let request = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "aic_compile", "arguments": {"intent": intent, "projectRoot": root}}});
        let pid = self.child.id();
        let cpu_before = process_cpu_ms(pid, self.ticks);
        let started = Instant::now();
        self.stdin.write_all(format!("{request}\n").as_bytes())?;
        self.stdin.flush()?;
        let answer = answer_to(&mut self.lines, id)?;
        let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
        let failed = answer.get("error").is_some()
            || answer
                .pointer("/result/isError")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false);
        Ok(Sample {
            wall_ms,
            cpu_ms: process_cpu_ms(pid, self.ticks)
                .zip(cpu_before)
                .map_or(0.0, |(after, before)| after - before),
            max_rss_kib: process_peak_rss_kib(pid).unwrap_or(0),
            ok: !failed,
        })
    }

    /// Closes its input (the server exits) and waits for it.
    fn close(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

/// User + system CPU time of a running process, in milliseconds, from
/// `/proc/PID/stat`.
fn process_cpu_ms(pid: u32, ticks: f64) -> Option<f64> {
    let stat = fs_err::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace().skip(11);
    let user: f64 = fields.next()?.parse().ok()?;
    let system: f64 = fields.next()?.parse().ok()?;
    Some((user + system) * 1000.0 / ticks)
}

/// The peak resident set size of a running process (`VmHWM`), in kibibytes.
fn process_peak_rss_kib(pid: u32) -> Option<u64> {
    let status = fs_err::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
}

/// Starts `aic mcp` through the wrapper with an empty home and times the
/// answer to `tools/list` written right after `initialize`.
fn mcp_first_answer(exe: &Path, home: &Path) -> anyhow::Result<Sample> {
    settle();
    let started = Instant::now();
    let mut child = Command::new(exe)
        .args(["bench", "--exec-measured", "--"])
        .arg(exe)
        .arg("mcp")
        .env("AIC_HOME", home)
        .current_dir(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("Failed to start `aic mcp`")?;
    let requests = format!(
        "{INITIALIZE}{}\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#
    );
    let mut stdin = child.stdin.take().context("no stdin")?;
    stdin.write_all(requests.as_bytes())?;
    stdin.flush()?;
    let stdout = child.stdout.take().context("no stdout")?;
    let answered = answer_to(&mut BufReader::new(stdout).lines(), 2)
        .ok()
        .map(|_| started.elapsed().as_secs_f64() * 1000.0);
    drop(stdin);
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut stderr)?;
    }
    child.wait()?;
    let mut sample = parse_sample(stderr.as_bytes())?;
    match answered {
        Some(ms) => sample.wall_ms = ms,
        None => sample.ok = false,
    }
    Ok(sample)
}

/// The machine the measurements ran on.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Machine {
    /// Logical cores available to this process.
    pub cores: usize,
    /// `/proc/loadavg`'s 1-, 5- and 15-minute load averages when the run started.
    pub load_before: Option<[f64; 3]>,
    /// The same when it ended.
    pub load_after: Option<[f64; 3]>,
}

/// The 1-, 5- and 15-minute load averages, where `/proc/loadavg` exists.
pub fn load_average() -> Option<[f64; 3]> {
    let text = fs_err::read_to_string("/proc/loadavg").ok()?;
    let mut fields = text.split_whitespace().map(str::parse::<f64>);
    Some([
        fields.next()?.ok()?,
        fields.next()?.ok()?,
        fields.next()?.ok()?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_count_failures_and_take_medians() {
        let sample = |wall_ms, ok| Sample {
            wall_ms,
            cpu_ms: wall_ms * 2.0,
            max_rss_kib: 2048,
            ok,
        };
        let stats = Stats::of(&[sample(10.0, true), sample(30.0, true), sample(99.0, false)]);
        assert_eq!((stats.runs, stats.failed), (2, 1));
        assert!((stats.median_ms.unwrap() - 20.0).abs() < 1e-9);
        assert!((stats.p95_ms.unwrap() - 30.0).abs() < 1e-9);
        assert!((stats.cpu_seconds.unwrap() - 0.04).abs() < 1e-9);
        assert!((stats.peak_rss_mib.unwrap() - 2.0).abs() < 1e-9);
    }

    #[test]
    fn reads_cpu_and_peak_rss_from_proc() {
        if !Path::new("/proc/self/stat").exists() {
            return;
        }
        let pid = std::process::id();
        assert!(process_cpu_ms(pid, 100.0).is_some_and(|ms| ms >= 0.0));
        assert!(process_peak_rss_kib(pid).is_some_and(|kib| kib > 0));
    }

    #[test]
    fn parses_the_wrapper_line() {
        let sample = parse_sample(
            b"noise\naic-bench-measure: {\"wallMs\":1.5,\"cpuMs\":2.0,\"maxRssKib\":10,\"ok\":true}\n",
        )
        .unwrap();
        assert!(sample.ok);
        assert_eq!(sample.max_rss_kib, 10);
    }
}
