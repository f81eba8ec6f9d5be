//! The `prepare` phase: everything a compile decides before it looks at a
//! file. [`Project`] holds what depends on the project alone (root,
//! configuration, the guard and transformer settings of the per-file stage)
//! and is shared by compile, inspect and precompute; [`Plan`] adds what the
//! intent decides (task class, rule packs, budget, the selector).

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use aic_stages::config::AicConfig;
use aic_stages::content_hash::ContentHash;
use aic_stages::facts::FactsSettings;
use aic_stages::fit::assembler::{PromptAssembler, PromptFormat};
use aic_stages::fit::budget::{BudgetAllocator, BudgetInputs, TokenBudget};
use aic_stages::fit::model::ModelProfile;
use aic_stages::fit::tokens::TokenCount;
use aic_stages::fit::tokens::TokenCounter;
use aic_stages::guard::ContextGuard;
use aic_stages::language::Language;
use aic_stages::relative_path::RelativePath;
use aic_stages::rule_pack::{PackSource, RulePack, RulePackResolver};
use aic_stages::select::intent::{IntentClassifier, TaskClassification};
use aic_stages::select::selector::HeuristicSelector;
use aic_stages::select::stack_trace::TraceFrame;
use aic_stages::select::targets::{TargetRef, TargetSyntax, extract_targets};
use aic_stages::transform::ContentTransformerPipeline;
use tracing::info;

use crate::config::load_config;
use crate::error::CompileError;
use crate::pipeline::CompilationRequest;
use crate::pipeline::diff::{ChangeKind, ChangeSet, ChangedFile, read_changes};
use crate::root::resolve_root;

/// A project's settings, independent of any intent.
#[derive(Debug)]
pub struct Project {
    /// The canonical project root.
    pub root: PathBuf,
    /// The effective configuration.
    pub config: AicConfig,
    /// Config files read, nearest first.
    pub config_files: Vec<PathBuf>,
    /// The configuration's canonical JSON (for `config_history`).
    pub config_json: String,
    /// xxh3-128 of [`Project::config_json`], hex.
    pub config_hash: String,
    /// The guard chain, built from `guard`.
    pub guard: Arc<ContextGuard>,
    /// The content transformers, built from `contentTransformers`.
    pub transformers: Arc<ContentTransformerPipeline>,
    /// What the user should know about the configuration (unknown keys,
    /// settings not available yet), in the order found.
    pub warnings: Vec<String>,
}

/// The guard and transformers of a configuration: built once per distinct
/// setting in a process (their globs and regular expressions take tens of
/// milliseconds to compile), so a long-lived process compiles a new intent
/// without building them again.
fn built_stages(
    config: &AicConfig,
) -> Result<(Arc<ContextGuard>, Arc<ContentTransformerPipeline>), CompileError> {
    type Built = (Arc<ContextGuard>, Arc<ContentTransformerPipeline>);
    /// Settings kept; a process rarely sees more than one or two.
    const KEPT: usize = 8;
    static BUILT: Mutex<Vec<(String, Built)>> = Mutex::new(Vec::new());
    let key =
        serde_json::to_string(&(&config.guard, &config.content_transformers)).unwrap_or_default();
    let mut built = BUILT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, stages)) = built.iter().find(|(known, _)| *known == key) {
        return Ok(stages.clone());
    }
    // Config globs are validated when loaded, so this cannot fail on user
    // input.
    let guard = ContextGuard::new(&config.guard).map_err(|e| CompileError::Internal {
        message: e.to_string(),
    })?;
    let transformers = ContentTransformerPipeline::new(&config.content_transformers);
    let stages = (Arc::new(guard), Arc::new(transformers));
    if built.len() == KEPT {
        built.remove(0);
    }
    built.push((key, stages.clone()));
    Ok(stages)
}

impl Project {
    /// Resolves the root and loads its configuration (`config_path`, else the
    /// nearest `aic.config.json` at or above the root).
    ///
    /// # Errors
    ///
    /// [`CompileError`] for a bad root or an invalid configuration.
    pub fn load(root: &Path, config_path: Option<&Path>) -> Result<Self, CompileError> {
        Self::with_root(resolve_root(root)?, config_path)
    }

    /// As [`Project::load`], for a root [`resolve_root`] already accepted.
    fn with_root(root: PathBuf, config_path: Option<&Path>) -> Result<Self, CompileError> {
        let loaded = load_config(&root, config_path)?;
        let config = loaded.config;
        let mut warnings = Vec::new();
        if !loaded.unknown_keys.is_empty() {
            warnings.push(format!(
                "Ignoring unknown configuration keys: {}",
                loaded.unknown_keys.join(", ")
            ));
        }
        if config.context_selector.selector_type != "heuristic" {
            warnings.push(format!(
                "contextSelector.type `{}` is not available yet; using `heuristic`",
                config.context_selector.selector_type
            ));
        }
        let (guard, transformers) = built_stages(&config)?;
        let config_json = serde_json::to_string(&config).unwrap_or_default();
        let config_hash = ContentHash::of(config_json.as_bytes()).to_hex();
        Ok(Self {
            root,
            config,
            config_files: loaded.files,
            config_json,
            config_hash,
            guard,
            transformers,
            warnings,
        })
    }

    /// The settings the per-file stage computes [`FileFacts`] with.
    ///
    /// [`FileFacts`]: aic_stages::facts::FileFacts
    /// Token counts are made with `tokens`, the compile's counter.
    pub fn facts_context(&self, raw: bool, tokens: TokenCounter) -> FactsSettings<'_> {
        FactsSettings {
            guard: &self.guard,
            transformers: &self.transformers,
            tokens,
            raw,
        }
    }
}

/// Everything decided before the scan: the project, the intent and what it
/// implies.
#[derive(Debug)]
pub struct Plan {
    /// The project's settings.
    pub project: Project,
    /// The intent, trimmed.
    pub intent: String,
    /// The intent as the prompt's `## Task` shows it: the intent, with any
    /// injected instruction the guard found in it quoted and marked as
    /// untrusted ([`aic_stages::guard::scan_intent`]).
    pub task_text: String,
    /// The guard's findings in the intent (file `<intent>`), sorted; they
    /// join the files' findings in `meta.guard`.
    pub intent_findings: Vec<aic_stages::guard::GuardFinding>,
    /// Whether the content transformers are bypassed (`--raw` or `#raw`).
    pub raw: bool,
    /// The files the intent names (`@path`, backticks).
    pub targets: Vec<TargetRef>,
    /// The intent's classification (computed without the targets).
    pub task: TaskClassification,
    /// Labels of the rule packs merged, in order.
    pub rule_packs: Vec<String>,
    /// The merged rule pack.
    pub pack: RulePack,
    /// The allocated budget.
    pub budget: TokenBudget,
    /// The prompt's layout: the request's, else `output.format`, else the
    /// model's.
    pub format: PromptFormat,
    /// The model's profile: the request's `model_id`, else `model.id`.
    pub model: ModelProfile,
    /// The diff section, for a compile about changes that found some.
    pub diff_section: Option<String>,
    /// Whether the caller asked for the orienting context (a session start).
    pub orient: bool,
    /// The selector for the merged pack.
    pub selector: HeuristicSelector,
    /// What the user should know: the project's warnings, then skipped packs.
    pub warnings: Vec<String>,
}

impl Plan {
    /// The assembler of the plan's format.
    pub fn assembler(&self) -> PromptAssembler {
        PromptAssembler::new(self.format)
    }

    /// The token counter every count of this compile uses: the model's
    /// encoding.
    pub fn tokens(&self) -> TokenCounter {
        self.model.counter()
    }
}

/// Runs the `prepare` phase.
///
/// # Errors
///
/// [`CompileError::EmptyIntent`] for an intent with no words but `#raw`, and
/// the errors of [`Project::load`].
pub fn prepare(request: &CompilationRequest) -> Result<Plan, CompileError> {
    let intent = request.intent.trim();
    if intent.is_empty() {
        return Err(CompileError::EmptyIntent);
    }
    let raw = request.raw || intent.split_whitespace().any(|word| word == "#raw");
    let task_text = without_raw_switch(intent);
    if task_text.is_empty() {
        return Err(CompileError::EmptyIntent);
    }
    let root = resolve_root(&request.project_root)?;
    let project = Project::with_root(root, request.config_path.as_deref())?;
    let model = ModelProfile::for_model(
        request
            .model_id
            .as_deref()
            .or(project.config.model.id.as_deref()),
    );
    // Every compile counts its prompt: build the encoder (about 0.15 s of CPU)
    // while the scan waits on the file system.
    let counter = model.counter();
    if !counter.encoder_loaded() {
        std::thread::spawn(move || counter.preload_encoder());
    }
    let mut warnings = project.warnings.clone();

    let (classified_text, mut targets) = extract_targets(&task_text);
    // A secret redacted out of the intent leaves a placeholder whose words
    // (`redacted`, `secret`) are not the task's.
    let classified_text = aic_stages::guard::without_redaction_placeholders(&classified_text);
    let mut task = IntentClassifier.classify(&classified_text);
    add_named_locations(&mut task, &task_text);
    let mut changes = request
        .diff
        .as_ref()
        .map(|spec| {
            read_changes(&project.root, spec).map_err(|problem| CompileError::InvalidDiff {
                label: spec.label(),
                problem,
            })
        })
        .transpose()?;
    log_task(intent, &targets, &task);
    let injection = aic_stages::guard::scan_intent(intent);
    if let Some(found) = &injection {
        warnings.push(intent_warning(&found.findings));
    }

    let config = &project.config;
    let packs = RulePackResolver.plan(task.task_class, &config.rule_packs);
    let resolved = RulePackResolver.resolve(task.task_class, &packs, |path| {
        load_pack(&project.root, path)
    });
    warnings.extend(resolved.warnings.iter().cloned());
    info!("Rule packs: {}", resolved.applied.join(", "));
    let mut pack = resolved.pack;
    add_request_globs(&mut pack, config, request);
    let format = request
        .format
        .or(config.output.format)
        .unwrap_or(model.layout);

    let budget = allocate_budget(request, config, &task, &pack, &model);
    // Packs are validated when loaded, so this cannot fail on user input.
    let selector = HeuristicSelector::new(&pack)
        .map_err(|e| CompileError::Internal {
            message: e.to_string(),
        })?
        .with_scope(request.scope.clone());
    if let Some(changes) = &mut changes {
        keep_changes_in_scope(changes, &selector, &mut targets, &mut task, &mut warnings);
    }
    let diff_section = changes
        .as_ref()
        .filter(|changes| !changes.files.is_empty())
        .map(|changes| diff_section(changes, &project.guard, budget.total, model.counter()));
    let (task_text, intent_findings) = match injection {
        Some(found) => (found.marked, found.findings),
        None => (intent.to_owned(), Vec::new()),
    };
    // A long pasted report is shown by its head: the request is already in
    // the agent's conversation, and the budget is for the code.
    let task_text =
        aic_stages::fit::budget::bounded_task_text(&task_text, budget.total, model.counter());
    Ok(Plan {
        project,
        intent: intent.to_owned(),
        task_text,
        intent_findings,
        raw,
        targets,
        task,
        rule_packs: resolved.applied,
        pack,
        budget,
        selector,
        format,
        model,
        diff_section,
        orient: request.orient,
        warnings,
    })
}

/// The warning for injected instructions found in the intent, naming their
/// patterns and lines (never the text).
fn intent_warning(findings: &[aic_stages::guard::GuardFinding]) -> String {
    let mut found: Vec<String> = findings
        .iter()
        .map(|finding| {
            let pattern = finding.pattern.as_deref().unwrap_or("prompt-injection");
            match finding.line {
                Some(line) => format!("{pattern} on line {line}"),
                None => pattern.to_owned(),
            }
        })
        .collect();
    found.dedup();
    format!(
        "Context Guard found instructions to the model in the task text ({}): they are quoted in `## Task` and marked as untrusted (details: meta.guard, or `aic inspect`)",
        found.join(", ")
    )
}

/// `intent` without the `#raw` switch, which is not part of the task. Lines
/// and indentation stay: a pasted report's code blocks and traces are read
/// by their layout.
fn without_raw_switch(intent: &str) -> String {
    intent
        .split_inclusive(char::is_whitespace)
        .filter(|piece| piece.trim_end() != "#raw")
        .collect::<String>()
        .trim()
        .to_owned()
}

/// Logs the intent, the files it names and its classification.
fn log_task(intent: &str, targets: &[TargetRef], task: &TaskClassification) {
    info!("Intent: {intent:?}");
    if !targets.is_empty() {
        info!(
            "Named: {}",
            targets
                .iter()
                .map(|t| t.raw.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    info!(
        "TaskClass: {} (confidence: {:.2}, keywords: [{}]; subject: [{}])",
        task.task_class,
        task.confidence,
        task.matched_keywords.join(", "),
        task.subject_tokens.join(", ")
    );
}

/// The config's and the command line's globs narrow the candidates like a
/// rule pack's: the pack's own patterns stay, these are added.
fn add_request_globs(pack: &mut RulePack, config: &AicConfig, request: &CompilationRequest) {
    let selector_config = &config.context_selector;
    for (patterns, extra) in [
        (
            &mut pack.include_patterns,
            [&selector_config.include_patterns, &request.include],
        ),
        (
            &mut pack.exclude_patterns,
            [&selector_config.exclude_patterns, &request.exclude],
        ),
    ] {
        for pattern in extra.into_iter().flatten() {
            if !patterns.contains(pattern) {
                patterns.push(pattern.clone());
            }
        }
    }
}

/// The compile's token budget ([`BudgetAllocator`]), logged with where it
/// came from and the model's counting margin.
fn allocate_budget(
    request: &CompilationRequest,
    config: &AicConfig,
    task: &TaskClassification,
    pack: &RulePack,
    model: &ModelProfile,
) -> TokenBudget {
    // A hook's budget is derived from characters: no margin on top.
    let margin_percent = if request.budget_counted {
        0
    } else {
        model.margin_percent
    };
    let budget = BudgetAllocator.allocate(&BudgetInputs {
        // `--budget 0` means auto, like `contextBudget.maxTokens: 0`.
        request_override: request.budget.filter(|b| b.0 > 0),
        rule_pack_override: pack.budget_override_tokens(),
        per_task_class: config
            .context_budget
            .per_task_class
            .get(&task.task_class)
            .copied(),
        max_tokens: config.context_budget.max_tokens,
        // The conversation clamp needs the model's real window: a configured
        // one, else the known model's, else the default.
        context_window: config.context_budget.context_window.or_else(|| {
            request
                .session
                .conversation_tokens
                .and(model.context_window)
        }),
        conversation_tokens: request.session.conversation_tokens,
        margin_percent,
    });
    info!(
        "Budget: {} {} tokens ({}{})",
        budget.total,
        model.counter().tokenizer().name(),
        budget.source.describe(),
        if margin_percent > 0 {
            format!(", less the model's {margin_percent} % counting margin")
        } else {
            String::new()
        }
    );
    budget
}

/// Keeps the changes to the same patterns and scope as every other file,
/// pins them as targets, and warns when none is left.
fn keep_changes_in_scope(
    changes: &mut ChangeSet,
    selector: &HeuristicSelector,
    targets: &mut Vec<TargetRef>,
    task: &mut TaskClassification,
    warnings: &mut Vec<String>,
) {
    changes
        .files
        .retain(|file| RelativePath::new(&file.path).is_some_and(|path| selector.admits(&path)));
    pin_changes(changes, targets, task);
    if changes.files.is_empty() {
        warnings.push(format!(
            "`{}` shows no change under the project (within --scope, --include and --exclude): the compile uses the intent alone",
            changes.spec.label()
        ));
    }
}

/// The most changed files pinned as if the intent named them (the most
/// changed first); the rest still count as evidence through their hunks.
pub const MAX_DIFF_TARGETS: usize = 24;

/// Words (as the classifier stems them) that, in a compile about changes,
/// name the changes themselves.
const DIFF_WORDS: &[&str] = &[
    "review", "chang", "diff", "pr", "pull", "request", "patch", "commit", "stage", "branch",
    "modif", "edit", "work", "tree", "merg", "summaris", "summariz",
];

/// Share of the budget the diff section may take, and its cap in tokens.
pub const DIFF_SHARE: (f64, u32) = (0.25, 16_000);

/// Pins the changed files that still exist as targets (the most changed
/// first, up to [`MAX_DIFF_TARGETS`]) and adds each hunk's first line as a
/// trace frame, so selection scores them as direct evidence and the fit
/// slices a large one around its hunks.
fn pin_changes(changes: &ChangeSet, targets: &mut Vec<TargetRef>, task: &mut TaskClassification) {
    // "review my change", "summarise this PR": with a diff these words name
    // the changes, not files to look for (`CHANGES.md`, a `review/` folder).
    // Weights, when the intent has them, go with their tokens.
    let keep: Vec<bool> = task
        .subject_tokens
        .iter()
        .map(|token| !DIFF_WORDS.contains(&token.as_str()))
        .collect();
    let mut kept = keep.iter();
    task.subject_tokens
        .retain(|_| *kept.next().unwrap_or(&true));
    let mut kept = keep.iter();
    task.subject_weights
        .retain(|_| *kept.next().unwrap_or(&true));
    let mut present: Vec<&ChangedFile> = changes
        .files
        .iter()
        .filter(|file| file.kind != ChangeKind::Deleted)
        .collect();
    present.sort_by(|a, b| {
        b.patch
            .len()
            .cmp(&a.patch.len())
            .then_with(|| a.path.cmp(&b.path))
    });
    for file in present.iter().take(MAX_DIFF_TARGETS) {
        if !targets.iter().any(|t| t.raw == file.path) {
            targets.push(TargetRef {
                raw: file.path.clone(),
                syntax: TargetSyntax::Diff,
            });
        }
    }
    for file in &present {
        for (depth, line) in file.changed_lines.iter().enumerate() {
            task.frames.push(TraceFrame {
                path: file.path.clone(),
                line: Some(*line),
                function: None,
                trace: u16::MAX,
                depth: u16::try_from(depth).unwrap_or(u16::MAX),
            });
        }
    }
}

/// The diff section: which command it is, then each file's patch in path
/// order while they fit [`DIFF_SHARE`] of the budget, then the files left
/// out by path; counted with `tokens`, the compile's counter.
///
/// Each patch passes the guard as the file's body does: the patch of a file
/// the guard blocks (a key, a never-include path, a file with an injection)
/// is left out and named, and secrets in the others are redacted with the
/// same placeholders.
fn diff_section(
    changes: &ChangeSet,
    guard: &ContextGuard,
    budget: TokenCount,
    tokens: TokenCounter,
) -> String {
    let cap = ((f64::from(budget.0) * DIFF_SHARE.0) as u32).min(DIFF_SHARE.1);
    let count = |kind: ChangeKind| changes.files.iter().filter(|f| f.kind == kind).count();
    let renamed = changes
        .files
        .iter()
        .filter(|f| matches!(f.kind, ChangeKind::Renamed(_)))
        .count();
    let mut out = format!(
        "`{}`: {} {} changed ({} modified, {} added, {} deleted{})\n",
        changes.spec.label(),
        changes.files.len(),
        if changes.files.len() == 1 {
            "file"
        } else {
            "files"
        },
        count(ChangeKind::Modified),
        count(ChangeKind::Added),
        count(ChangeKind::Deleted),
        if renamed > 0 {
            format!(", {renamed} renamed")
        } else {
            String::new()
        }
    );
    let mut used = tokens.count(&out).0;
    let mut left_out = Vec::new();
    let mut blocked = Vec::new();
    for file in &changes.files {
        let Some(relative) = RelativePath::new(&file.path) else {
            blocked.push(file.path.as_str());
            continue;
        };
        let outcome = guard.scan_file(&relative, Language::detect(&relative), &file.patch);
        if outcome.blocked {
            blocked.push(file.path.as_str());
            continue;
        }
        let shown = outcome.redacted.as_deref().unwrap_or(&file.patch);
        let cost = tokens.count(shown).0;
        if used + cost > cap {
            left_out.push(file.path.as_str());
            continue;
        }
        used += cost;
        out.push('\n');
        out.push_str(shown.trim_end());
        out.push('\n');
    }
    if !blocked.is_empty() {
        let _ = writeln!(
            out,
            "\n({} changed {} not shown here: the Context Guard blocks {}: {})",
            blocked.len(),
            if blocked.len() == 1 { "file" } else { "files" },
            if blocked.len() == 1 { "it" } else { "them" },
            blocked.join(", ")
        );
    }
    if !left_out.is_empty() {
        let _ = writeln!(
            out,
            "\n({} more changed files not shown here, over the diff's share of the budget: {})",
            left_out.len(),
            left_out.join(", ")
        );
    }
    out
}

/// Reads a project rule pack for the resolver.
fn load_pack(root: &Path, relative: &str) -> PackSource {
    let path = root.join(relative);
    match fs_err::read_to_string(&path) {
        Ok(text) => PackSource::Text(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => PackSource::Missing,
        Err(error) => PackSource::Unreadable(error.to_string()),
    }
}

/// Adds the frames of `task_text` (the intent before its targets were taken
/// out) that `task` lacks: a location written with a named file (`jsonrep.py`
/// at line 227) is evidence even though the name itself is read as a target.
fn add_named_locations(task: &mut aic_stages::select::intent::TaskClassification, task_text: &str) {
    for frame in aic_stages::select::stack_trace::parse_frames(task_text) {
        if !task
            .frames
            .iter()
            .any(|f| f.path == frame.path && f.line == frame.line)
        {
            task.frames.push(frame);
        }
    }
}
