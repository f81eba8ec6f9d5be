//! The `aic` command line's arguments (clap derive): global flags and one
//! argument type per subcommand. Dispatch lives in [`crate::commands`].

use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};

use aic_stages::fit::assembler::PromptFormat;

use crate::pipeline::CompilationRequest;
use crate::pipeline::diff::DiffSpec;

/// aic — the Agent Input Compiler: compiles an intent and a repository into one
/// deterministic prompt that fits a token budget.
#[derive(Debug, Parser)]
#[command(name = "aic", version, about, long_about = None)]
pub struct Cli {
    /// With no subcommand and stdin not a terminal (an MCP client started the
    /// binary), `aic` runs the MCP server.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Flags every subcommand takes.
    #[command(flatten)]
    pub global: GlobalArgs,
}

/// Flags every subcommand takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Print the decision trail to stderr (-v), or pipeline internals (-vv).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Print nothing but errors to stderr.
    #[arg(short, long, action = clap::ArgAction::Count, global = true, conflicts_with = "verbose")]
    pub quiet: u8,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the MCP server on stdin/stdout (what an editor starts; the default
    /// when an MCP client runs `aic` with no subcommand).
    Mcp,
    /// Handle an editor hook: reads the event's JSON on stdin, prints the
    /// context to inject (always exits 0).
    Hook(HookArgs),
    /// Register aic with an editor: MCP server, and where the editor has them
    /// hooks and a trigger rule. A second run changes nothing.
    Install(InstallArgs),
    /// Take aic's entries out of an editor's files again (restoring a file's
    /// original bytes when nothing else changed).
    Uninstall(UninstallArgs),
    /// Check each editor's setup: MCP server registered, hooks installed and
    /// current, trigger rule present, `aic` on PATH (exit code 1 when a
    /// problem is found).
    Doctor(DoctorArgs),
    /// Compile a prompt for an intent: prints the prompt, or `{compiledPrompt, meta}`
    /// with --json.
    Compile(CompileArgs),
    /// Show how a prompt would be compiled: classification, rule packs, budget,
    /// every selected file with its signals, guard findings, tiers and tokens.
    Inspect(InspectArgs),
    /// Fill the per-file cache for every file of a repository (for CI, or before
    /// a first compile on a large tree).
    Precompute(PrecomputeArgs),
    /// Inspect or move the per-file cache: stats, clear, export, import, and
    /// push or pull a remote store's entries.
    Cache(CacheArgs),
    /// Write a starter aic.config.json into the project (never done otherwise).
    Init(InitArgs),
    /// Project summary: compilations, token savings, cache hit rate, guard
    /// findings, budget use, server sessions.
    Status(StatusArgs),
    /// The most recent compilation of the project and its selection.
    Last(ProjectArgs),
    /// Every project aic has seen (compiled, inspected or precomputed).
    Projects(JsonArgs),
    /// Compilations of one agent conversation (the latest by default).
    ChatSummary(ChatSummaryArgs),
    /// Rolling-window quality metrics (default 7 days; --days 1..365).
    Quality(QualityArgs),
    /// Compile a task specification (types, code blocks, prose) into one briefing that fits a
    /// token budget: prints the briefing, or `{compiledSpec, meta}` with --json.
    Spec(SpecArgs),
    /// Run the benchmark harness: selection quality on task files against
    /// baselines, and speed against peer tools, over the repositories of a
    /// manifest (docs/bench.md); or compare two runs' results.json.
    Bench(BenchArgs),
    /// The repository's files with their raw and compiled tokens, summed per
    /// directory, and the tracked files the scan leaves out with the reason.
    Tree(TreeArgs),
    /// Audit the agents' rule and hook files (CLAUDE.md, AGENTS.md, .cursor
    /// rules, editor hooks, …): their token cost, and duplicates,
    /// contradictions, dead globs and doubled hooks (docs/rules-analysis.md).
    Rules(RulesArgs),
    /// A resident index for fast compiles: `start` (in the background, or
    /// `--foreground`), `stop`, `status`. Compiles, inspects and hooks use a
    /// running daemon, with the same output as without it; hooks start one.
    /// `AIC_DAEMON=off|running|start` overrides that; the socket and log are
    /// in `$AIC_HOME/daemon/` (docs/daemon.md).
    Daemon(DaemonArgs),
    /// Serves `compile --copy`'s text on the clipboard until another program
    /// takes the clipboard over (internal).
    #[command(hide = true)]
    ClipboardServe,
}

/// `aic hook <editor> <Event> [check]`. Every word is optional and none is
/// an error: a hook entry with a typo, or one written for a newer aic with
/// more arguments, must not make the editor see a usage error (exit code 2
/// would erase the user's prompt); it is logged and ignored instead.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// `<editor> <Event> [check]`: the editor (`claude`, `codex`, `cursor`);
    /// the event as the editor names it (Claude Code and Codex:
    /// SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop,
    /// SubagentStart, SubagentStop, SessionEnd; Cursor: sessionStart,
    /// beforeSubmitPrompt, preToolUse, beforeShellExecution, afterFileEdit,
    /// stop, subagentStart, subagentStop, sessionEnd); for tool events with
    /// several aic handlers, the check this one runs (`conversation-id`, the
    /// default, `no-verify` or `compile-gate`). Further words are ignored.
    #[arg(
        value_name = "EDITOR EVENT [CHECK]",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        num_args = 0..
    )]
    pub words: Vec<String>,
}

impl HookArgs {
    /// The editor.
    pub fn editor(&self) -> Option<&str> {
        self.words.first().map(String::as_str)
    }

    /// The event.
    pub fn event(&self) -> Option<&str> {
        self.words.get(1).map(String::as_str)
    }

    /// The check, when one is named.
    pub fn check(&self) -> Option<&str> {
        self.words.get(2).map(String::as_str)
    }

    /// Words after the check.
    pub fn rest(&self) -> &[String] {
        self.words.get(3..).unwrap_or_default()
    }
}

/// The editors `aic install` knows.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum InstallClient {
    /// Claude Code: hooks (settings.json), MCP server (~/.claude.json or
    /// .mcp.json), trigger rule (CLAUDE.md).
    Claude,
    /// Cursor: hooks (hooks.json), MCP server (mcp.json) and trigger rule
    /// (.cursor/rules/AIC.mdc), under ~/.cursor or the project's .cursor.
    Cursor,
    /// Codex CLI: MCP server (config.toml) and hooks (hooks.json) under
    /// ~/.codex or the project's .codex, trigger rule in ~/.codex/AGENTS.md or
    /// the project's AGENTS.md.
    Codex,
    /// Gemini CLI: MCP server (~/.gemini/settings.json or .gemini/settings.json).
    Gemini,
    /// VS Code (Copilot agent mode): MCP server (.vscode/mcp.json; needs --project).
    Vscode,
    /// Zed: context server in settings.json (~/.config/zed or the project's
    /// .zed), comments kept.
    Zed,
}

/// `aic doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The project whose files (.mcp.json, .cursor/, .codex/, …) are checked
    /// beside your user files (default: the git work tree or the directory
    /// with aic.config.json around the current directory, else the current
    /// directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The editor and the files `aic install` and `aic uninstall` work on.
#[derive(Debug, Args)]
pub struct EditorTarget {
    /// The editor.
    #[arg(value_enum)]
    pub client: InstallClient,
    /// The project's files (under --root) instead of your user files.
    #[arg(long)]
    pub project: bool,
    /// The project, for --project (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Print what would change; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `aic install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub target: EditorTarget,
    /// Also install the guard rails (Claude Code, Codex, Cursor): an edit
    /// tracker, a Stop quality gate running `qualityGate.commands` from
    /// aic.config.json on the edited files, and a blocker of `git …
    /// --no-verify`.
    #[arg(long)]
    pub with_gates: bool,
    /// Also install the compile gate (Claude Code, Cursor): other tools are
    /// refused until the turn has called `aic_compile` (fails open).
    #[arg(long)]
    pub with_compile_gate: bool,
}

/// `aic uninstall`: everything aic installed for the editor goes, gates
/// included.
#[derive(Debug, Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub target: EditorTarget,
}

/// `aic init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project (default: the git work tree around the current directory,
    /// else the current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Replace an existing aic.config.json.
    #[arg(long)]
    pub force: bool,
}

/// The diagnostics subcommands.
#[derive(Clone, Copy, Debug)]
pub enum DiagnosticsCommand {
    /// `aic status`.
    Status,
    /// `aic last`.
    Last,
    /// `aic projects`.
    Projects,
    /// `aic chat-summary`.
    ChatSummary,
    /// `aic quality`.
    Quality,
}

/// What the diagnostics subcommands read: each subcommand's own flags
/// (below) fill the ones it has.
#[derive(Debug, Default)]
pub struct DiagnosticsArgs {
    /// The project.
    pub root: PathBuf,
    /// Only the last N days.
    pub days: Option<u32>,
    /// The conversation.
    pub conversation: Option<String>,
    /// Print JSON instead of a table.
    pub json: bool,
}

/// `--json`.
#[derive(Debug, Args)]
pub struct JsonArgs {
    /// Print JSON (the MCP tool payload) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `--root` and `--json`.
#[derive(Debug, Args)]
pub struct ProjectArgs {
    /// The project (default: the git work tree or the directory with
    /// aic.config.json around the current directory, else the current
    /// directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    #[command(flatten)]
    pub output: JsonArgs,
}

/// `aic rules`.
#[derive(Debug, Args)]
pub struct RulesArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Take out the copies of instructions one agent reads twice (the
    /// widest-scoped copy is kept; a line that says anything else stays)
    /// and print the diff; the originals are kept under
    /// `$AIC_HOME/rules-backups/`.
    #[arg(long, conflicts_with = "json")]
    pub fix: bool,
    /// With --fix: print the diff, write nothing.
    #[arg(long, requires = "fix")]
    pub dry_run: bool,
    /// Exit with code 1 when a finding is an `error` (a contradiction), for
    /// CI; the report is printed as without it.
    #[arg(long)]
    pub check: bool,
}

/// `aic status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Only the last N days (1..3660; default: all time).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=3660))]
    pub days: Option<u32>,
}

/// `aic quality`.
#[derive(Debug, Args)]
pub struct QualityArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// The window in days (1..365).
    #[arg(long, value_name = "N", default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..=365))]
    pub days: u32,
}

/// `aic chat-summary`.
#[derive(Debug, Args)]
pub struct ChatSummaryArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// The conversation (default: the project's latest).
    #[arg(long, value_name = "ID")]
    pub conversation: Option<String>,
}

impl ProjectArgs {
    /// The diagnostics arguments of these flags.
    pub fn diagnostics(&self) -> DiagnosticsArgs {
        DiagnosticsArgs {
            root: crate::root::given_or_discovered(self.root.as_deref()),
            json: self.output.json,
            ..DiagnosticsArgs::default()
        }
    }
}

/// `aic spec`.
#[derive(Debug, Args)]
pub struct SpecArgs {
    /// The specification: a JSON file holding `{types, codeBlocks, prose}`, or an
    /// `aic_compile_spec` request `{spec, budget}`; `-` reads stdin. See docs/spec-compiler.md.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Token budget of the compiled spec (default: the request's `budget`, else 4000;
    /// 0 means the default).
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<u32>,
    /// Print `{compiledSpec, meta}` as JSON instead of the briefing.
    #[arg(long)]
    pub json: bool,
    /// Neither read nor write the spec compile cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Use this config file instead of searching for aic.config.json from the current
    /// directory up.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The model the briefing is for (overrides `model.id`): picks the encoding the
    /// budget is counted in (`o200k_base` for GPT-4o, GPT-4.1, GPT-5 and the o-series)
    /// and, for Claude, the counting margin. See docs/budget.md.
    #[arg(long, value_name = "ID", value_parser = model_id)]
    pub model: Option<String>,
}

/// `aic precompute`.
#[derive(Debug, Args)]
pub struct PrecomputeArgs {
    /// The repository to precompute (default: the git work tree or the
    /// directory with aic.config.json around the current directory, else the
    /// current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Use this config file instead of searching for aic.config.json.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the report as JSON instead of the summary lines.
    #[arg(long)]
    pub json: bool,
    /// Precompute only shard I of N (one-based, e.g. `2/4`): the files whose
    /// git blob id (a hash of the content) falls in it, so N CI jobs split a
    /// repository between them.
    #[arg(long, value_name = "I/N", value_parser = shard_parser)]
    pub shard: Option<crate::pipeline::scan::Shard>,
    /// Afterwards, write the rows the remote cache lacks to it (needs
    /// `cache.remote.url` or AIC_CACHE_REMOTE_URL, not read-only).
    #[arg(long)]
    pub push: bool,
}

/// Parses `--shard I/N`: 1 ≤ I ≤ N.
fn shard_parser(text: &str) -> Result<crate::pipeline::scan::Shard, String> {
    let fail = || {
        format!(
            "`{text}` is not a shard: expected I/N with 1 ≤ I ≤ N, e.g. `1/4` … `4/4` (in GitHub Actions: `${{{{ matrix.shard }}}}/4`)"
        )
    };
    let (index, count) = text.split_once('/').ok_or_else(fail)?;
    let number = |part: &str| -> Result<u32, String> {
        part.trim()
            .parse()
            .map_err(|error: std::num::ParseIntError| {
                if *error.kind() == std::num::IntErrorKind::PosOverflow {
                    format!(
                        "`{text}` is not a shard: {part} is over the most shards, {}",
                        u32::MAX
                    )
                } else {
                    fail()
                }
            })
    };
    let index = number(index)?;
    let count = number(count)?;
    if index == 0 || count == 0 || index > count {
        return Err(fail());
    }
    Ok(crate::pipeline::scan::Shard {
        index: index - 1,
        count,
    })
}

/// `aic tree`.
#[derive(Debug, Args)]
pub struct TreeArgs {
    /// The repository (default: the git work tree or the directory with
    /// aic.config.json around the current directory, else the current
    /// directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Use this config file instead of searching for aic.config.json.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Show only directories and files of at least N raw tokens (totals still
    /// count every file).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threshold: u64,
    /// Show directories only, no files.
    #[arg(long)]
    pub directories: bool,
    /// Print the tree as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `aic cache`.
#[derive(Debug, Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    pub command: CacheCommand,
}

/// The cache subcommands.
#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// Rows, stored and on-disk bytes, projects.
    Stats {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete every cached row, the path index and the spec cache (logs and sessions stay).
    Clear,
    /// Write every cached row to FILE (e.g. a CI artifact).
    Export {
        /// The export file to write.
        file: PathBuf,
    },
    /// Add the rows of an export FILE; rows that do not decode are skipped.
    Import {
        /// The export file to read.
        file: PathBuf,
    },
    /// Write a project's cached rows that the remote cache lacks to it.
    Push(RemoteSyncArgs),
    /// Fetch a project's rows from the remote cache into the local one.
    Pull(RemoteSyncArgs),
}

/// `aic cache push|pull`.
#[derive(Debug, Args)]
pub struct RemoteSyncArgs {
    /// The project (default: the git work tree or the directory with
    /// aic.config.json around the current directory, else the current
    /// directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Use this config file instead of searching for aic.config.json.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Inputs shared by `compile` and `inspect`.
#[derive(Debug, Args)]
pub struct RequestArgs {
    /// What the agent is asked to do, e.g. "fix the null check in the user service".
    pub intent: String,
    /// The repository to compile from (default: the git work tree or the
    /// directory with aic.config.json around the current directory, else the
    /// current directory; a note says which when it is not the current one).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Select only from this directory of the project (a path from the
    /// current directory, e.g. `--scope .` inside a package); the project
    /// stays the root for imports, config and paths.
    #[arg(long, value_name = "DIR")]
    pub scope: Option<PathBuf>,
    /// Total token budget of the prompt, overriding config and rule packs.
    /// 0 means automatic, as when it is left out: the config's or a rule
    /// pack's budget, else the model's headroom (123,500 tokens by default).
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<u32>,
    /// Use this config file instead of searching for aic.config.json.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Bypass every content transformer (same as `#raw` in the intent).
    #[arg(long)]
    pub raw: bool,
    /// A file known to be related to the task (e.g. from a failing test's output);
    /// boosts its score. Repeatable.
    #[arg(long = "related", value_name = "PATH")]
    pub related: Vec<String>,
    /// Neither read nor write the caches (per-file and whole-prompt); the
    /// compile is still logged for `aic status`.
    #[arg(long)]
    pub no_cache: bool,
    /// The prompt's layout (overrides `output.format` in aic.config.json;
    /// without either, XML for a Claude model and Markdown otherwise).
    /// Every format has the same sections in the same order and gives each
    /// file its path, tier and language.
    #[arg(long, value_name = "FORMAT", value_parser = format_parser())]
    pub format: Option<PromptFormat>,
    /// The model the prompt is for (e.g. `gpt-4o`, `claude-sonnet-4-5`;
    /// overrides `model.id`): picks the tokenizer budgets are counted in
    /// (`o200k_base` for GPT-4o/4.1/5 and the o-series, else `cl100k_base`),
    /// the context window and the default layout. An unknown id gets the
    /// defaults.
    #[arg(long, value_name = "ID", value_parser = model_id)]
    pub model: Option<String>,
    /// Only files matching GLOB are candidates (repeatable; files the intent
    /// names still pass). Read like .gitignore: `*.py` and `tests` match at
    /// any depth, `/docs` only at the root, a directory matches every file
    /// below it. Added to `contextSelector.heuristic.includePatterns` and the
    /// rule packs' `includePatterns`.
    #[arg(long, value_name = "GLOB", value_parser = glob_parser)]
    pub include: Vec<String>,
    /// Files matching GLOB are never candidates (repeatable; files the intent
    /// names still pass). Read like --include; added to the config's and rule
    /// packs' `excludePatterns`.
    #[arg(long, value_name = "GLOB", value_parser = glob_parser)]
    pub exclude: Vec<String>,
    /// Compile for the working tree's changes against REV (default HEAD, as
    /// `git diff REV` shows them; untracked files are not included): the
    /// changed files come first (sliced around their hunks when large), then
    /// their import neighbours, and the diff gets its own section. Write
    /// `--diff=main` for a revision.
    #[arg(long, value_name = "REV", num_args = 0..=1, require_equals = true, default_missing_value = "HEAD", group = "changes")]
    pub diff: Option<String>,
    /// Compile for the staged changes (`git diff --staged`).
    #[arg(long, group = "changes")]
    pub staged: bool,
    /// Compile for the changes between two revisions (`A..B`, e.g.
    /// `main..feature`; `A..` means `A..HEAD`), or of a branch since it left
    /// another (`A...B`, what a pull request of B into A changes).
    #[arg(long, value_name = "A..B", group = "changes", value_parser = range_parser)]
    pub range: Option<String>,
}

/// `--jobs`: a whole number of at least 1.
fn jobs_parser(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(jobs) if jobs >= 1 => Ok(jobs),
        _ => Err("pass a whole number of at least 1".to_owned()),
    }
}

/// A `--range`: two revisions around `..`.
fn range_parser(range: &str) -> Result<String, String> {
    if range.contains("..") {
        Ok(range.to_owned())
    } else {
        Err("write two revisions around `..`, e.g. `main..feature`".to_owned())
    }
}

/// `--format`'s parser: the names of [`PromptFormat::ALL`], shown in `--help`.
fn format_parser() -> impl clap::builder::TypedValueParser<Value = PromptFormat> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(PromptFormat::ALL.map(PromptFormat::as_str))
        .map(|name| name.parse::<PromptFormat>().unwrap_or_default())
}

/// A glob for `--include`/`--exclude`, checked as the selector compiles it.
fn glob_parser(glob: &str) -> Result<String, String> {
    aic_stages::pattern::PatternSet::new(&[glob.to_owned()])
        .map(|_| glob.to_owned())
        .map_err(|(_, error)| format!("not a valid glob: {}", error.kind()))
}

impl RequestArgs {
    /// The compile request these arguments describe.
    ///
    /// # Errors
    ///
    /// A [`UserError`](crate::error::UserError) when `--scope` is not a
    /// directory inside the project.
    pub fn request(&self) -> anyhow::Result<CompilationRequest> {
        let root = crate::root::given_or_discovered(self.root.as_deref());
        let scope = match &self.scope {
            Some(scope) => scope_prefix(&root, scope)?,
            None => None,
        };
        Ok(CompilationRequest {
            intent: self.intent.clone(),
            project_root: root,
            config_path: self.config.clone(),
            budget: self.budget.map(aic_stages::fit::tokens::TokenCount),
            raw: self.raw,
            model_id: self.model.clone(),
            editor_id: "cli".to_owned(),
            related_files: self.related.clone(),
            trace_all: false,
            no_cache: self.no_cache,
            use_prompt_cache: !self.no_cache,
            session_key: String::new(),
            format: self.format,
            include: self.include.clone(),
            exclude: self.exclude.clone(),
            scope,
            diff: if self.staged {
                Some(DiffSpec::Staged)
            } else {
                self.diff
                    .as_deref()
                    .or(self.range.as_deref())
                    .map(DiffSpec::parse)
            },
            ..CompilationRequest::default()
        })
    }
}

/// The directory of `--scope DIR` relative to the project root, with a
/// trailing `/`, or none when DIR is the root itself.
fn scope_prefix(root: &Path, scope: &Path) -> anyhow::Result<Option<String>> {
    let not_inside = |why: &str| {
        crate::error::UserError::new(
            format!("`--scope {}` {why}", scope.display()),
            "pass a directory inside the project, or choose the project with --root DIR",
        )
    };
    let canonical = fs_err::canonicalize(scope)
        .ok()
        .filter(|path| path.is_dir())
        .ok_or_else(|| not_inside("is not an existing directory"))?;
    let root = fs_err::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let relative = canonical
        .strip_prefix(&root)
        .map_err(|_| not_inside(&format!("is outside the project `{}`", root.display())))?;
    let relative = relative.to_string_lossy().replace('\\', "/");
    Ok((!relative.is_empty()).then(|| format!("{relative}/")))
}

/// `aic compile`.
#[derive(Debug, Args)]
pub struct CompileArgs {
    #[command(flatten)]
    pub request: RequestArgs,
    /// Print `{compiledPrompt, meta}` as JSON instead of the prompt.
    #[arg(long)]
    pub json: bool,
    /// Write the prompt (or the --json output) to FILE instead of stdout (`-`
    /// is stdout); the file is replaced atomically, never left half-written.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also put the prompt on the clipboard (fails with a clear error where
    /// there is none, e.g. over SSH without a display).
    #[arg(long)]
    pub copy: bool,
}

/// `aic inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    #[command(flatten)]
    pub request: RequestArgs,
    /// Print the trace as JSON (no file contents) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// List every file left out of the selection with its reason and score (in
    /// the JSON trace), not only the counts and the near misses.
    #[arg(long)]
    pub all: bool,
}

/// `aic daemon`.
#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: DaemonCommand,
}

/// `aic daemon <command>`.
#[derive(Debug, Subcommand)]
pub enum DaemonCommand {
    /// Start the daemon (nothing to do when one is running).
    Start(DaemonStartArgs),
    /// Stop the running daemon.
    Stop,
    /// The running daemon's projects, files indexed, memory, last event,
    /// requests and latency.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `aic daemon start`.
#[derive(Clone, Copy, Debug, Args)]
pub struct DaemonStartArgs {
    /// Run in this process, logging to stderr, instead of in the background.
    #[arg(long)]
    pub foreground: bool,
    /// Minutes without a compile or hook request after which the daemon
    /// exits (fractions allowed; 0: never).
    #[arg(long, value_name = "MINUTES", default_value_t = crate::daemon::DEFAULT_IDLE_MINUTES)]
    pub idle_minutes: f64,
    /// Minutes without a compile after which a project is dropped (0:
    /// never).
    #[arg(long, value_name = "MINUTES", default_value_t = crate::daemon::DEFAULT_PROJECT_IDLE_MINUTES)]
    pub project_idle_minutes: f64,
}

/// `aic bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The manifest (TOML): repositories, task files, budgets, baselines,
    /// speed measurements, peers.
    #[arg(value_name = "MANIFEST", required_unless_present_any = ["compare", "exec_measured"])]
    pub manifest: Option<PathBuf>,
    /// Where results.json, report.md, the charts, the scratch worktrees, the
    /// harness's AIC_HOME and (by default) clones go.
    #[arg(long, default_value = "bench-out", value_name = "DIR")]
    pub out: PathBuf,
    /// Tasks run at once, at least 1 (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = jobs_parser)]
    pub jobs: Option<usize>,
    /// Only this repository (`owner/name`); repeatable.
    #[arg(long, value_name = "REPO")]
    pub only: Vec<String>,
    /// Print results.json to stdout instead of the tables.
    #[arg(long)]
    pub json: bool,
    /// Where task files are: the manifest's `{data}` (default: AIC_BENCH_DATA,
    /// else the manifest's `data`).
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Where clones are found or made: the manifest's `{clones}` (default:
    /// AIC_BENCH_CLONES, else the manifest's `clones`, else OUT/clones).
    #[arg(long, value_name = "DIR")]
    pub clones: Option<PathBuf>,
    /// Skip the speed measurements and peers.
    #[arg(long)]
    pub no_speed: bool,
    /// Compare two results.json files: one line per metric with the signed
    /// difference.
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"], conflicts_with = "manifest")]
    pub compare: Vec<PathBuf>,
    /// With --compare: fail (exit 3) when any of aic's quality metrics
    /// (acc@k, recall@k, all@10, MRR, gold body, gold any, hunk coverage, all
    /// hunks covered; fractions) is lower in NEW by more than DROP, e.g. 0.01.
    /// Speed is not judged.
    #[arg(long, value_name = "DROP", requires = "compare")]
    pub max_drop: Option<f64>,
    /// Internal: run the program after `--` and report its wall time, CPU
    /// time and peak RSS on stderr (what the speed measurements use).
    #[arg(long, hide = true)]
    pub exec_measured: bool,
    /// Internal: the program and arguments of --exec-measured.
    #[arg(last = true, hide = true)]
    pub exec_argv: Vec<String>,
}

/// A `--model` id: any text but an empty one.
fn model_id(text: &str) -> Result<String, String> {
    let id = text.trim();
    if id.is_empty() {
        return Err(
            "an empty model id: give one (e.g. `gpt-4o`, `claude-sonnet-4-5`) or leave out --model"
                .to_owned(),
        );
    }
    Ok(id.to_owned())
}
