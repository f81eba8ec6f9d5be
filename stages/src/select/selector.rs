//! HeuristicSelector (signals and weights: `docs/selection.md`).
//!
//! Candidates are the RepoMap files that pass the merged rule pack's
//! `includePatterns`/`excludePatterns` (files the intent names always pass). Each
//! gets six signals in `[0, 1]`:
//!
//! - **path relevance**: the share of the intent's subject tokens that are whole
//!   words of the path (file-name words 1.0, directory words 0.6, the extension
//!   0.5). Words are compared stemmed ([`crate::select::terms`]), never as substrings, so
//!   "fix" does not match `prefix.ts` or `fixtures/` and "bug" does not match
//!   `debug.py`;
//! - **import proximity**: distance in the [`ImportGraph`] from the starting
//!   files (targets and the [`IMPORT_SEEDS`] best candidates by the other signals);
//! - **symbol relevance**: the share of subject tokens that are words of names the
//!   file defines ([`crate::select::symbols`]);
//! - **content relevance**: BM25 of the subject tokens over the file's terms,
//!   normalised by the best candidate;
//! - **recency**: the rank of [`FileEntry::recency_ms`] among candidates, newest
//!   1.0, oldest 0.0;
//! - **size penalty**: inverted min-max of estimated tokens, smallest 1.0.
//!
//! `score = clamp01(Σ signal × weight + 0.2 × boosts − 0.2 × penalties)`, with
//! the recency term halved when the classifier's confidence is below 0.5.
//! Candidates whose path, import, symbol and content signals are all zero are
//! excluded (`zero_semantic_signal`). The rest are ordered by score descending,
//! then path ascending, and cut at `maxFiles`; named targets come first.

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::fit::tokens::TokenCount;
use crate::language::Language;
use crate::pattern::PatternSet;
use crate::relative_path::RelativePath;
use crate::repo_map::{FileEntry, PathTerms, PatternHits, RepoMap};
use crate::rule_pack::RulePack;
use crate::select::evidence::{mention_scores, trace_scores};
use crate::select::file_kind::FileKind;
use crate::select::import_graph::ImportGraph;
use crate::select::intent::{TaskClass, TaskClassification};
use crate::select::term_list::TermQuery;
use crate::select::terms::term_id;

/// The boost entry recorded for a related file in [`ScoredFile::boosted_by`].
pub const RELATED_FILE: &str = "related file";

/// How many of the best candidates seed the import-proximity search, besides the
/// files the intent names.
pub const IMPORT_SEEDS: usize = 5;

/// Signal weights for one task class.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[expect(missing_docs, reason = "each weight is the signal of the same name")]
pub struct SignalWeights {
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub path_relevance: f64,
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub import_proximity: f64,
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub symbol_relevance: f64,
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub content_relevance: f64,
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub recency: f64,
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub size_penalty: f64,
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub mention: f64,
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub trace: f64,
}

impl SignalWeights {
    /// The default weights for a task class, chosen by measurement on the dev
    /// tasks (`perf/tune_weights.py`; numbers and reasons in `docs/selection.md`).
    ///
    /// There is a content signal, and size (often a small tie-breaker) carries no
    /// weight: on real tasks the files to change are the large core modules. Git
    /// recency (what changed lately) keeps about a fifth of the score. Refactors
    /// lean on the import graph (callers of what changes), docs on paths
    /// (documents are named by topic).
    pub fn for_task_class(task_class: TaskClass) -> Self {
        let (path, import, symbol, content, recency, size) = match task_class {
            TaskClass::Refactor => (0.28, 0.18, 0.22, 0.16, 0.16, 0.0),
            TaskClass::Docs => (0.36, 0.08, 0.18, 0.20, 0.18, 0.0),
            TaskClass::Bugfix | TaskClass::Feature | TaskClass::Test | TaskClass::General => {
                (0.30, 0.12, 0.22, 0.16, 0.20, 0.0)
            }
        };
        Self {
            path_relevance: path,
            import_proximity: import,
            symbol_relevance: symbol,
            content_relevance: content,
            recency,
            size_penalty: size,
            mention: MENTION_WEIGHT,
            trace: TRACE_WEIGHT,
        }
    }

    /// The sum of the weights: a score is the weighted sum divided by it,
    /// so scores stay in `[0, 1]`.
    fn total(&self) -> f64 {
        self.path_relevance
            + self.import_proximity
            + self.symbol_relevance
            + self.content_relevance
            + self.recency
            + self.size_penalty
            + self.mention
            + self.trace
    }
}

/// Weight of the mention signal ([`crate::select::evidence`]).
pub const MENTION_WEIGHT: f64 = 0.3;
/// Weight of the trace signal ([`crate::select::evidence`]).
pub const TRACE_WEIGHT: f64 = 0.3;

/// The raw signal values of one candidate, each in `[0, 1]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[expect(missing_docs, reason = "each field is the signal of the same name")]
pub struct SelectionSignals {
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub path_relevance: f64,
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub import_proximity: f64,
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub symbol_relevance: f64,
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub content_relevance: f64,
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub recency: f64,
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub size_penalty: f64,
    #[serde(skip_serializing_if = "is_zero")]
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub mention: f64,
    #[serde(skip_serializing_if = "is_zero")]
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub trace: f64,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

impl SelectionSignals {
    fn has_semantic_signal(&self) -> bool {
        self.path_relevance > 0.0
            || self.import_proximity > 0.0
            || self.symbol_relevance > 0.0
            || self.content_relevance > 0.0
            || self.mention > 0.0
            || self.trace > 0.0
    }

    /// Whether the intent points at the file directly: a name it defines, a
    /// frame of a pasted trace.
    pub fn has_direct_evidence(&self) -> bool {
        self.mention > 0.0 || self.trace > 0.0
    }
}

/// One scored candidate.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScoredFile {
    /// The file.
    pub path: RelativePath,
    /// Its language.
    pub language: Language,
    /// Estimated tokens (from size).
    pub estimated_tokens: TokenCount,
    /// Final score in `[0, 1]`.
    #[serde(serialize_with = "crate::rounded::serialize")]
    pub score: f64,
    /// Raw signals.
    pub signals: SelectionSignals,
    /// Rule-pack boost patterns that matched.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub boosted_by: Vec<String>,
    /// Rule-pack penalize patterns that matched.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub penalized_by: Vec<String>,
    /// Whether the intent named this file (a resolved target): it is selected
    /// whatever its score and rule-pack patterns, ahead of every other file.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub target: bool,
}

/// Why a file is not in the selection.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "reason"
)]
pub enum ExclusionReason {
    /// It matched an `excludePatterns` glob.
    ExcludePattern {
        /// The glob.
        pattern: String,
    },
    /// `includePatterns` is non-empty and none matched.
    NotIncluded,
    /// Path relevance, import proximity and symbol relevance are all zero.
    ZeroSemanticSignal,
    /// Ranked below the `maxFiles` cut.
    MaxFiles {
        /// The cap in force.
        max_files: usize,
    },
    /// The intent was too vague to select on; the orienting context was
    /// shown instead ([`crate::select::orientation`]).
    VagueIntent,
}

/// A file left out, with its score when it was scored.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExcludedFile {
    /// The file.
    pub path: RelativePath,
    /// Score, for files excluded after scoring.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::rounded::option"
    )]
    pub score: Option<f64>,
    /// Why.
    #[serde(flatten)]
    pub reason: ExclusionReason,
}

/// The selector's result with the trace of every decision.
///
/// Every file of the RepoMap is accounted for once: selected (`files`),
/// excluded by a rule or by orientation (`excluded`, listed with its path),
/// or scored and left out (`zero_signal`, `past_cap`, held as RepoMap
/// indices with their scores). The last two are most files of a large
/// repository, so they are listed only on demand ([`Selection::excluded_files`]):
/// a compile over 300,000 files does not copy 300,000 paths to say that it
/// left them out.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Selection {
    /// Selected files, best first (score desc, path asc); at most `maxFiles`.
    pub files: Vec<ScoredFile>,
    /// Files left out by a rule (path order) and, after orientation, the
    /// ranked files it replaced ([`ExclusionReason::VagueIntent`], last).
    pub excluded: Vec<ExcludedFile>,
    /// Candidates with no semantic signal: (RepoMap index, score), path order.
    #[serde(skip)]
    pub zero_signal: Vec<(u32, f64)>,
    /// Candidates ranked below the `maxFiles` cut: (RepoMap index, score),
    /// rank order.
    #[serde(skip)]
    pub past_cap: Vec<(u32, f64)>,
    /// The cap `past_cap` was cut at.
    #[serde(skip)]
    pub max_files: usize,
    /// Number of candidates after include/exclude patterns.
    pub candidates: usize,
    /// Whether `maxFiles` cut any scored file.
    pub truncated: bool,
    /// The weights used.
    pub weights: Option<SignalWeights>,
}

impl Selection {
    /// Every file left out, with its reason, in trace order: rule exclusions
    /// (path order), zero-signal files (path order), those cut by `maxFiles`
    /// (rank order), then those orientation replaced. `repo` is the RepoMap
    /// the selection was made over.
    pub fn excluded_files(&self, repo: &RepoMap) -> Vec<ExcludedFile> {
        let vague = |e: &&ExcludedFile| e.reason == ExclusionReason::VagueIntent;
        let mut all =
            Vec::with_capacity(self.excluded.len() + self.zero_signal.len() + self.past_cap.len());
        all.extend(self.excluded.iter().filter(|e| !vague(e)).cloned());
        all.extend(self.zero_signal_files(repo));
        all.extend(self.past_cap_files(repo));
        all.extend(self.excluded.iter().filter(vague).cloned());
        all
    }

    /// The files without a semantic signal, as [`ExcludedFile`]s.
    pub fn zero_signal_files<'a>(
        &'a self,
        repo: &'a RepoMap,
    ) -> impl Iterator<Item = ExcludedFile> + 'a {
        self.zero_signal.iter().map(|&(index, score)| ExcludedFile {
            path: repo.files[index as usize].path.clone(),
            score: Some(score),
            reason: ExclusionReason::ZeroSemanticSignal,
        })
    }

    /// The files cut by `maxFiles`, best first, as [`ExcludedFile`]s.
    pub fn past_cap_files<'a>(
        &'a self,
        repo: &'a RepoMap,
    ) -> impl Iterator<Item = ExcludedFile> + 'a {
        self.past_cap.iter().map(|&(index, score)| ExcludedFile {
            path: repo.files[index as usize].path.clone(),
            score: Some(score),
            reason: ExclusionReason::MaxFiles {
                max_files: self.max_files,
            },
        })
    }

    /// How many files were left out for each reason.
    pub fn exclusion_summary(&self) -> ExclusionSummary {
        let mut counts = ExclusionSummary {
            zero_semantic_signal: self.zero_signal.len(),
            max_files: self.past_cap.len(),
            ..ExclusionSummary::default()
        };
        for file in &self.excluded {
            match file.reason {
                ExclusionReason::ExcludePattern { .. } => counts.exclude_pattern += 1,
                ExclusionReason::NotIncluded => counts.not_included += 1,
                ExclusionReason::ZeroSemanticSignal => counts.zero_semantic_signal += 1,
                ExclusionReason::MaxFiles { .. } => counts.max_files += 1,
                ExclusionReason::VagueIntent => counts.vague_intent += 1,
            }
        }
        counts
    }

    /// Takes the files of `chosen` (RepoMap indices) out of every
    /// exclusion list: orientation selects them.
    pub fn unexclude(&mut self, repo: &RepoMap, chosen: &std::collections::HashSet<usize>) {
        self.excluded.retain(|e| {
            repo.files
                .binary_search_by(|f| f.path.cmp(&e.path))
                .map_or(true, |index| !chosen.contains(&index))
        });
        self.zero_signal
            .retain(|(index, _)| !chosen.contains(&(*index as usize)));
        self.past_cap
            .retain(|(index, _)| !chosen.contains(&(*index as usize)));
    }
}

/// How many files a [`Selection`] left out, by reason (the trace's
/// `excluded`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExclusionSummary {
    /// Matched an `excludePatterns` glob.
    pub exclude_pattern: usize,
    /// Did not match `includePatterns`.
    pub not_included: usize,
    /// No path, import or symbol signal.
    pub zero_semantic_signal: usize,
    /// Ranked below the `maxFiles` cut.
    pub max_files: usize,
    /// Set aside for the orienting context of a vague intent.
    #[serde(skip_serializing_if = "is_zero_count")]
    pub vague_intent: usize,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero_count(count: &usize) -> bool {
    *count == 0
}

/// An invalid rule-pack pattern.
#[derive(Debug, thiserror::Error)]
#[error("invalid glob `{pattern}` in rule pack field `{field}`")]
pub struct SelectorError {
    /// Rule pack field.
    pub field: &'static str,
    /// The pattern.
    pub pattern: String,
    /// The glob error.
    #[source]
    pub source: globset::Error,
}

/// The prefix of the [`ScoredFile::penalized_by`] entry of the file-kind
/// prior: `file kind: docs`.
pub const KIND_PRIOR: &str = "file kind: ";

/// How many penalties the file-kind prior's demotion of `kind` counts as:
/// one, but half for an example — code that shows the project's use, which
/// may have to change with it, and which a task names in plain words ("the
/// naval example") more often than by its path.
fn demotion(kind: FileKind) -> f64 {
    if kind == FileKind::Example { 0.5 } else { 1.0 }
}

/// The file-kind prior of one task: which kinds it demotes. A task about
/// behaviour (a bug, a feature, a refactor, a pasted report, a short
/// statement of a change) is answered by source, so tests, fixtures, docs,
/// changelogs, translations, generated files and examples rank behind it,
/// unless the task's words ask for that kind. Decided once per task, so
/// a file costs a look-up, not a pass over the task's words.
struct KindPrior {
    /// Per kind (indexed as [`FileKind::ALL`]): demoted by this task.
    demotes: [bool; FileKind::ALL.len()],
}

impl KindPrior {
    fn of(task: &TaskClassification) -> Self {
        // A long intent (an issue report) that no verb classifies is still
        // about behaviour: it reports what the code does. So is a short one
        // that opens with a verb of change no class keyword knows ("prevent
        // automatic environment variables from containing dashes"), unlike
        // a topic ("shell completion zsh script") or a question.
        let reports_behaviour = task.task_class == TaskClass::General
            && (!task.subject_weights.is_empty() || task.states_a_change);
        let about_behaviour = reports_behaviour
            || matches!(
                task.task_class,
                TaskClass::Bugfix | TaskClass::Feature | TaskClass::Refactor
            );
        let demotes = FileKind::ALL.map(|kind| {
            about_behaviour && kind != FileKind::Source && !kind.asked_for(&task.subject_tokens)
        });
        Self { demotes }
    }

    /// The kind `file` is demoted for, if any. A test a rule pack already
    /// penalised (`unpenalised` false) is not penalised twice.
    fn demoted(&self, file: &FileEntry, unpenalised: bool) -> Option<FileKind> {
        let kind = file.kind();
        (self.demotes[kind as usize] && (kind != FileKind::Test || unpenalised)).then_some(kind)
    }
}

/// Scores and ranks files.
#[derive(Clone, Debug)]
pub struct HeuristicSelector {
    include: PatternSet,
    exclude: PatternSet,
    boost: PatternSet,
    penalize: PatternSet,
    related: Vec<RelativePath>,
    scope: Option<String>,
}

impl HeuristicSelector {
    /// Compiles the rule pack's patterns.
    ///
    /// # Errors
    ///
    /// [`SelectorError`] naming the first invalid pattern (packs are validated when
    /// loaded, so this only fires for packs built in code).
    pub fn new(rule_pack: &RulePack) -> Result<Self, SelectorError> {
        let compile = |field: &'static str, patterns: &[String]| {
            PatternSet::new(patterns).map_err(|(index, source)| SelectorError {
                field,
                pattern: patterns[index].clone(),
                source,
            })
        };
        Ok(Self {
            include: compile("includePatterns", &rule_pack.include_patterns)?,
            exclude: compile("excludePatterns", &rule_pack.exclude_patterns)?,
            boost: compile(
                "heuristic.boostPatterns",
                &rule_pack.heuristic.boost_patterns,
            )?,
            penalize: compile(
                "heuristic.penalizePatterns",
                &rule_pack.heuristic.penalize_patterns,
            )?,
            related: Vec::new(),
            scope: None,
        })
    }

    /// Candidates only below `scope` (a directory relative to the root, with
    /// a trailing `/`; `--scope`), besides the include and exclude patterns;
    /// files the intent names still pass.
    #[must_use]
    pub fn with_scope(mut self, scope: Option<String>) -> Self {
        self.scope = scope.filter(|s| !s.is_empty());
        self
    }

    fn in_scope(&self, path: &RelativePath) -> bool {
        self.scope
            .as_deref()
            .is_none_or(|scope| path.as_str().starts_with(scope))
    }

    /// Files a caller knows are related to the task (`--related`,
    /// `toolOutputs[].relatedFiles`): each gets one +0.2 boost, is exempt from
    /// penalize patterns (a failing test named by the caller is relevant even
    /// though test files are penalised for a bugfix), and is kept even without
    /// other signals and past the `maxFiles` cap.
    #[must_use]
    pub fn with_related(mut self, related: Vec<RelativePath>) -> Self {
        self.related = related;
        self
    }

    /// Whether `path` passes the include and exclude patterns (a file the
    /// intent names passes whatever they say; this does not know the names).
    pub fn admits(&self, path: &RelativePath) -> bool {
        self.in_scope(path)
            && !self.exclude.is_match(path)
            && (self.include.is_empty() || self.include.is_match(path))
    }

    /// Selects up to `max_files` files of `repo` for `task`.
    ///
    /// `targets` are files the intent named (resolved targets, in the order
    /// named): they come first, whatever their score, rule-pack patterns or
    /// signals, and the other files fill the rest of the cap.
    ///
    /// `graph` is the import graph of `repo` (indices are `repo.files` indices).
    /// Import proximity is measured from starting files: the targets and the
    /// [`IMPORT_SEEDS`] best candidates by the other signals among those whose path
    /// or defined names match the intent (names are as direct a sign as the path).
    /// Without a graph, proximity is 0.
    pub fn select(
        &self,
        repo: &RepoMap,
        task: &TaskClassification,
        max_files: usize,
        targets: &[RelativePath],
        graph: Option<&ImportGraph>,
    ) -> Selection {
        self.finish(
            repo,
            &self.first_pass(repo, task, targets),
            max_files,
            graph,
        )
    }

    /// The signals of every candidate but import proximity, and the rule-pack
    /// exclusions: the part of [`HeuristicSelector::select`] that does not
    /// depend on the import graph, the related files or the cap, so one pass
    /// serves several selections over the same files (a file's imports may be
    /// filled in between).
    pub fn first_pass(
        &self,
        repo: &RepoMap,
        task: &TaskClassification,
        targets: &[RelativePath],
    ) -> FirstPass {
        let mut weights = SignalWeights::for_task_class(task.task_class);
        if !task.subject_weights.is_empty() {
            // A long intent: its words are many and its paths few; the
            // content says more, the path less.
            std::mem::swap(&mut weights.path_relevance, &mut weights.content_relevance);
        }
        let mut excluded = Vec::new();
        let mut candidates: Vec<usize> = Vec::with_capacity(repo.files.len());
        let exclude = repo.pattern_matches(&self.exclude);
        let include = repo.pattern_matches(&self.include);
        let boost = repo.pattern_matches(&self.boost);
        let penalize = repo.pattern_matches(&self.penalize);
        for (index, file) in repo.files.iter().enumerate() {
            if targets.contains(&file.path) {
                candidates.push(index);
            } else if let Some(pattern) = exclude.of(index).first() {
                excluded.push(ExcludedFile {
                    path: file.path.clone(),
                    score: None,
                    reason: ExclusionReason::ExcludePattern {
                        pattern: (*pattern).to_owned(),
                    },
                });
            } else if (!self.include.is_empty() && include.of(index).is_empty())
                || !self.in_scope(&file.path)
            {
                excluded.push(ExcludedFile {
                    path: file.path.clone(),
                    score: None,
                    reason: ExclusionReason::NotIncluded,
                });
            } else {
                candidates.push(index);
            }
        }
        let files: Vec<&FileEntry> = candidates.iter().map(|&i| &repo.files[i]).collect();

        let recency = recency_ranks(&files);
        let query = if task.subject_weights.len() == task.subject_tokens.len()
            && !task.subject_weights.is_empty()
        {
            Query::weighted(&task.subject_tokens, &task.subject_weights, &files)
        } else {
            Query::uniform(&task.subject_tokens)
        };
        let content = content_relevance(&query, &files);
        let mentions = mention_scores(&task.mentions, &files);
        let traces = trace_scores(&task.frames, &files);
        let (min_tokens, max_tokens) = files
            .iter()
            .map(|f| f.estimated_tokens.0)
            .fold((u32::MAX, 0), |(lo, hi), t| (lo.min(t), hi.max(t)));
        let recency_scale = if task.confidence < 0.5 { 0.5 } else { 1.0 };
        let prior = KindPrior::of(task);

        // Each file's signals depend on that file alone: computed in
        // parallel, collected in candidate order.
        let (boosted, penalized) = (boost.hits(), penalize.hits());
        let (base, demoted): (Vec<BaseSignals>, Vec<Option<FileKind>>) = files
            .par_iter()
            .zip(recency)
            .zip(content)
            .enumerate()
            .map(|(index, ((file, recency), content_relevance))| {
                let size_penalty = if max_tokens > min_tokens {
                    f64::from(max_tokens - file.estimated_tokens.0)
                        / f64::from(max_tokens - min_tokens)
                } else {
                    1.0
                };
                let signals = BaseSignals {
                    path_relevance: query.path_relevance(file.path_terms()),
                    symbol_relevance: query.symbol_relevance(&file.symbol_ids),
                    content_relevance,
                    recency,
                    size_penalty,
                };
                let unpenalized = penalized.count(candidates[index]) == 0;
                let demoted = prior.demoted(file, unpenalized).filter(|_| {
                    mentions[index] == 0.0 && traces[index] == 0.0 && !targets.contains(&file.path)
                });
                (signals, demoted)
            })
            .unzip();
        // Few candidates are named or traced by an intent: kept by position.
        let evidence = mentions
            .iter()
            .zip(&traces)
            .enumerate()
            .map(|(position, (&mention, &trace))| {
                (position as u32, round_score(mention), round_score(trace))
            })
            .filter(|&(_, mention, trace)| mention != 0.0 || trace != 0.0)
            .collect();
        FirstPass {
            weights,
            recency_scale,
            targets: targets.to_vec(),
            candidates,
            base,
            evidence,
            boosted,
            penalized,
            demoted,
            excluded,
        }
    }

    /// Finishes a selection from a [`FirstPass`] over the same `repo`: related
    /// files, import proximity from `graph`, scores, the cap. The first pass
    /// must come from a selector with the same boost and penalize patterns
    /// (this one, or a clone given related files): it holds their matches as
    /// pattern numbers, which this selector's sets name.
    pub fn finish(
        &self,
        repo: &RepoMap,
        first: &FirstPass,
        max_files: usize,
        graph: Option<&ImportGraph>,
    ) -> Selection {
        let files: Vec<&FileEntry> = first.candidates.iter().map(|&i| &repo.files[i]).collect();
        let mut scoring = Scoring::new(self, first, &files);
        if let Some(graph) = graph {
            scoring.proximity = scoring.import_proximity(repo, graph);
        }
        // Scores first, files later: only the selected files become
        // [`ScoredFile`]s, and the ranking sorts positions, not files.
        let scores: Vec<f64> = (0..files.len())
            .into_par_iter()
            .map(|position| scoring.score(&scoring.signals(position), position))
            .collect();
        let (order, zero_signal) = scoring.ranked(&files, &scores);
        let pinned = order.iter().filter(|(rank, _)| *rank != u32::MAX).count();
        let keep = max_files.max(pinned);
        let (files_kept, past_cap) = scoring.cut(&files, &order, &scores, keep);
        Selection {
            files: files_kept,
            excluded: first.excluded.clone(),
            zero_signal,
            past_cap,
            max_files,
            candidates: first.candidates.len(),
            truncated: order.len() > keep,
            weights: Some(first.weights),
        }
    }
}

/// A [`FirstPass`] with what [`HeuristicSelector::finish`] adds to it, by
/// candidate position: whether the caller named the file as related, and its
/// import proximity.
struct Scoring<'a> {
    first: &'a FirstPass,
    /// The pattern sets the first pass matched, to name its hits.
    boost: &'a PatternSet,
    penalize: &'a PatternSet,
    /// A related file gets one more boost and loses its penalties.
    related: Vec<bool>,
    /// Import proximity of the candidates the import graph reaches, as
    /// (position, score) ascending by position; empty without a graph.
    proximity: Vec<(usize, f64)>,
}

impl<'a> Scoring<'a> {
    fn new(selector: &'a HeuristicSelector, first: &'a FirstPass, files: &[&FileEntry]) -> Self {
        let related = &selector.related;
        let related = if related.is_empty() {
            vec![false; files.len()]
        } else {
            files
                .iter()
                .map(|file| related.contains(&file.path))
                .collect()
        };
        Self {
            first,
            boost: &selector.boost,
            penalize: &selector.penalize,
            related,
            proximity: Vec::new(),
        }
    }

    /// The signals of the candidate at `position`, import proximity included.
    fn signals(&self, position: usize) -> SelectionSignals {
        SelectionSignals {
            import_proximity: self
                .proximity
                .binary_search_by_key(&position, |&(reached, _)| reached)
                .map_or(0.0, |k| self.proximity[k].1),
            ..self.first.signals(position)
        }
    }

    /// The score of the candidate at `position` with `signals`.
    fn score(&self, signals: &SelectionSignals, position: usize) -> f64 {
        let weights = &self.first.weights;
        let base = signals.path_relevance * weights.path_relevance
            + signals.import_proximity * weights.import_proximity
            + signals.symbol_relevance * weights.symbol_relevance
            + signals.content_relevance * weights.content_relevance
            + signals.recency * weights.recency * self.first.recency_scale
            + signals.size_penalty * weights.size_penalty
            + signals.mention * weights.mention
            + signals.trace * weights.trace;
        // A rule pack's boost counts once however many of its patterns
        // match, so it never outweighs a named file or a traced frame.
        let first = self.first;
        let candidate = first.candidates[position];
        let related = self.related[position];
        let boosts = usize::from(first.boosted.count(candidate) > 0) + usize::from(related);
        let penalties = if related {
            0.0
        } else {
            first.penalized.count(candidate) as f64 + first.demoted[position].map_or(0.0, demotion)
        };
        let modifier = 0.2 * (boosts as f64 - penalties);
        round_score(((base + modifier) / weights.total()).clamp(0.0, 1.0))
    }

    /// Import proximity of the candidates the graph reaches from the targets
    /// and the [`IMPORT_SEEDS`] best candidates whose path or names match, as
    /// (candidate position, score) ascending by position.
    fn import_proximity(&self, repo: &RepoMap, graph: &ImportGraph) -> Vec<(usize, f64)> {
        let candidates = &self.first.candidates;
        let mut ranked: Vec<(f64, usize)> = (0..candidates.len())
            .map(|i| (i, self.first.signals(i)))
            .filter(|(_, s)| {
                s.path_relevance > 0.0 || s.symbol_relevance > 0.0 || s.has_direct_evidence()
            })
            .map(|(i, s)| (self.score(&s, i), i))
            .collect();
        // The best few by score, then path: candidates are in path order, so
        // their positions order them as their paths would, and only the
        // seeds are sorted, not every candidate.
        let best_first =
            |a: &(f64, usize), b: &(f64, usize)| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1));
        if ranked.len() > IMPORT_SEEDS {
            ranked.select_nth_unstable_by(IMPORT_SEEDS, best_first);
            ranked.truncate(IMPORT_SEEDS);
        }
        ranked.sort_unstable_by(best_first);
        let mut seeds: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|&index| self.first.targets.contains(&repo.files[index].path))
            .collect();
        seeds.extend(ranked.iter().map(|(_, i)| candidates[*i]));
        // Both lists ascend by RepoMap index: candidates are in path order.
        graph
            .proximity(&seeds)
            .into_iter()
            .filter_map(|(index, score)| {
                let position = candidates.binary_search(&index).ok()?;
                Some((position, score))
            })
            .collect()
    }

    /// The candidates with a signal in selection order, as (the position of
    /// the target among the named ones or MAX, the candidate's position):
    /// targets first in the order named, then by score descending, then by
    /// path (a position stands for its path, so the sort compares numbers
    /// only), both as `u32` (8 bytes a candidate), the first `u32::MAX` for
    /// a file not named. The others, as (RepoMap index, score) in path order.
    fn ranked(&self, files: &[&FileEntry], scores: &[f64]) -> (Vec<(u32, u32)>, LeftOut) {
        let targets = &self.first.targets;
        let mut order: Vec<(u32, u32)> = Vec::with_capacity(files.len());
        let mut zero_signal: LeftOut = Vec::new();
        for (position, file) in files.iter().enumerate() {
            let target = if targets.is_empty() {
                None
            } else {
                targets.iter().position(|t| *t == file.path)
            };
            if target.is_some()
                || self.related[position]
                || self.signals(position).has_semantic_signal()
            {
                order.push((target.map_or(u32::MAX, |t| t as u32), position as u32));
            } else {
                zero_signal.push((self.first.candidates[position] as u32, scores[position]));
            }
        }
        order.par_sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| scores[b.1 as usize].total_cmp(&scores[a.1 as usize]))
                .then_with(|| a.1.cmp(&b.1))
        });
        (order, zero_signal)
    }

    /// The first `keep` of `order` as [`ScoredFile`]s, followed by the
    /// related files past the cap (the boost alone cannot lift a file the
    /// caller's tool output named over a rule pack that boosts a whole class
    /// of files, tests say); the others past the cap as (RepoMap index,
    /// score), in rank order.
    fn cut(
        &self,
        files: &[&FileEntry],
        order: &[(u32, u32)],
        scores: &[f64],
        keep: usize,
    ) -> (Vec<ScoredFile>, LeftOut) {
        let mut kept: Vec<ScoredFile> = Vec::with_capacity(keep.min(order.len()));
        let mut related_past_cap = Vec::new();
        let mut past_cap: LeftOut = Vec::with_capacity(order.len().saturating_sub(keep));
        for (place, &(rank, position)) in order.iter().enumerate() {
            let position = position as usize;
            let related = self.related[position];
            if place >= keep && !related {
                past_cap.push((self.first.candidates[position] as u32, scores[position]));
                continue;
            }
            let file = files[position];
            let candidate = self.first.candidates[position];
            let named = |hits: &PatternHits, set: &PatternSet| -> Vec<String> {
                hits.names(set, candidate)
                    .into_iter()
                    .map(str::to_owned)
                    .collect()
            };
            let mut boosted_by = named(&self.first.boosted, self.boost);
            let mut penalized_by = named(&self.first.penalized, self.penalize);
            if let Some(kind) = self.first.demoted[position] {
                penalized_by.push(format!("{KIND_PRIOR}{}", kind.word()));
            }
            if related {
                boosted_by.push(RELATED_FILE.to_owned());
                penalized_by.clear();
            }
            let scored_file = ScoredFile {
                path: file.path.clone(),
                language: file.language,
                estimated_tokens: file.estimated_tokens,
                score: scores[position],
                signals: self.signals(position),
                boosted_by,
                penalized_by,
                target: rank != u32::MAX,
            };
            if place < keep {
                kept.push(scored_file);
            } else {
                related_past_cap.push(scored_file);
            }
        }
        kept.extend(related_past_cap);
        (kept, past_cap)
    }
}

/// Candidates left out after scoring: (RepoMap index, score).
type LeftOut = Vec<(u32, f64)>;

/// The graph-independent part of a selection ([`HeuristicSelector::first_pass`]).
#[derive(Clone, Debug)]
pub struct FirstPass {
    weights: SignalWeights,
    recency_scale: f64,
    targets: Vec<RelativePath>,
    /// Indices into `repo.files` of the candidates, in path order.
    candidates: Vec<usize>,
    /// Each candidate's signals but import proximity, mention and trace, by
    /// position ([`FirstPass::signals`] puts them together).
    base: Vec<BaseSignals>,
    /// The candidates an intent names or traces, as (position, mention,
    /// trace), ascending by position.
    evidence: Vec<(u32, f64, f64)>,
    /// Boost and penalize patterns matched, by RepoMap index (related files
    /// not yet applied): numbers, named only for the files kept, since most
    /// candidates never become a [`ScoredFile`].
    boosted: PatternHits,
    penalized: PatternHits,
    /// The kind the file-kind prior demotes each candidate for, by position
    /// (named in `penalized_by` only when the file is kept).
    demoted: Vec<Option<FileKind>>,
    excluded: Vec<ExcludedFile>,
}

/// The signals a [`FirstPass`] keeps for every candidate (40 bytes where a
/// [`SelectionSignals`] takes 64): import proximity is not known yet, and
/// mentions and traces are kept only for the few candidates that have one.
#[derive(Clone, Copy, Debug)]
struct BaseSignals {
    path_relevance: f64,
    symbol_relevance: f64,
    content_relevance: f64,
    recency: f64,
    size_penalty: f64,
}

impl FirstPass {
    /// The signals of the candidate at `position`, import proximity 0.
    fn signals(&self, position: usize) -> SelectionSignals {
        let base = self.base[position];
        let (mention, trace) = self
            .evidence
            .binary_search_by_key(&position, |&(at, _, _)| at as usize)
            .map_or((0.0, 0.0), |k| (self.evidence[k].1, self.evidence[k].2));
        SelectionSignals {
            path_relevance: base.path_relevance,
            import_proximity: 0.0,
            symbol_relevance: base.symbol_relevance,
            content_relevance: base.content_relevance,
            recency: base.recency,
            size_penalty: base.size_penalty,
            mention,
            trace,
        }
    }
}

/// Scores are rounded to 6 decimals so that float noise never reorders files and
/// traces stay readable.
fn round_score(score: f64) -> f64 {
    (score * 1e6).round() / 1e6
}

/// Path relevance of one path for stemmed subject tokens: each token scores 1.0
/// when it is a word of the file name (extension aside), 0.6 when it is a word of
/// a directory, 0.5 when it is the extension, and the result is the mean over
/// tokens (0 when there are none).
///
/// # Examples
///
/// ```
/// use aic_stages::relative_path::RelativePath;
/// use aic_stages::select::selector::path_relevance;
/// let tokens = vec!["fix".to_owned()];
/// assert_eq!(path_relevance(&tokens, &RelativePath::new("src/prefix.ts").unwrap()), 0.0);
/// let tokens = vec!["auth".to_owned(), "servic".to_owned()];
/// let score = path_relevance(&tokens, &RelativePath::new("src/auth/service.ts").unwrap());
/// assert!((score - 0.8).abs() < 1e-9);
/// ```
pub fn path_relevance(subject_tokens: &[String], path: &RelativePath) -> f64 {
    Query::uniform(subject_tokens).path_relevance(&PathTerms::of(path))
}

/// Each distinct token of `tokens` with its indices.
fn positions(tokens: &[String]) -> FxHashMap<String, Vec<usize>> {
    let mut positions: FxHashMap<String, Vec<usize>> = FxHashMap::default();
    for (index, token) in tokens.iter().enumerate() {
        positions.entry(token.clone()).or_default().push(index);
    }
    positions
}

/// The subject as the signals weigh it: tokens, a weight per token, and the
/// total weight a file must match to score 1.
///
/// A short intent's tokens weigh 1 each and the denominator is their count,
/// so a signal is the share of tokens matched. A long intent (an issue
/// report) has hundreds of words of which a few decide: each token weighs
/// its section weight × its IDF over the candidates, only the
/// [`MAX_QUERY_TERMS`] heaviest that occur in some candidate are kept, and
/// the denominator is the weight of the [`FULL_MATCH_TERMS`] heaviest, so a
/// file matching the report's few decisive words scores high instead of a
/// small share of everything.
struct Query {
    tokens: Vec<String>,
    /// [`term_id`] of each token.
    ids: Vec<u32>,
    weights: Vec<f64>,
    /// Per-token multiplier of the BM25 content score (the section weight
    /// for a long intent, 1 otherwise).
    content_weights: Vec<f64>,
    denominator: f64,
    /// Each distinct token and where it stands in `tokens`, so a path's few
    /// words are looked up instead of every token compared with every word.
    positions: FxHashMap<String, Vec<usize>>,
}

/// The most tokens of a long intent the signals use.
pub const MAX_QUERY_TERMS: usize = 40;
/// How many of a long intent's heaviest tokens a file must match to score 1
/// on path or symbol relevance.
pub const FULL_MATCH_TERMS: usize = 6;

impl Query {
    fn uniform(tokens: &[String]) -> Self {
        Self {
            tokens: tokens.to_vec(),
            ids: tokens.iter().map(|token| term_id(token)).collect(),
            weights: vec![1.0; tokens.len()],
            content_weights: vec![1.0; tokens.len()],
            denominator: tokens.len() as f64,
            positions: positions(tokens),
        }
    }

    fn weighted(tokens: &[String], section_weights: &[f64], files: &[&FileEntry]) -> Self {
        let ids: Vec<u32> = tokens.iter().map(|t| term_id(t)).collect();
        // Each id at its first token's place.
        let query = TermQuery::new(&ids);
        // Document frequencies: integer counts, so the parallel sum is the
        // sequential one.
        let df = files
            .par_iter()
            .fold(
                || vec![0u32; ids.len()],
                |mut df, file| {
                    file.term_stats
                        .terms
                        .for_each_hit(&query, |index, _| df[index] += 1);
                    df
                },
            )
            .reduce(
                || vec![0u32; ids.len()],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
                    a
                },
            );
        let n = files.len() as f64;
        let mut kept: Vec<(usize, f64)> = df
            .iter()
            .enumerate()
            .filter(|(_, df)| **df > 0)
            .map(|(index, &df)| {
                let idf = ((n - f64::from(df) + 0.5) / (f64::from(df) + 0.5) + 1.0).ln();
                (index, section_weights[index] * idf)
            })
            .collect();
        kept.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        kept.truncate(MAX_QUERY_TERMS);
        let denominator: f64 = kept.iter().take(FULL_MATCH_TERMS).map(|(_, w)| w).sum();
        kept.sort_by_key(|(index, _)| *index);
        let tokens: Vec<String> = kept.iter().map(|(i, _)| tokens[*i].clone()).collect();
        Self {
            positions: positions(&tokens),
            tokens,
            ids: kept.iter().map(|(i, _)| ids[*i]).collect(),
            weights: kept.iter().map(|(_, w)| *w).collect(),
            content_weights: kept.iter().map(|(i, _)| section_weights[*i]).collect(),
            denominator,
        }
    }

    /// Path relevance with the stemmed words of the path's directory
    /// already computed (files of one directory share them, so a selection
    /// over a large repository splits and stems each directory once): each
    /// token scores 1.0 when it is a word of the file name (extension
    /// aside), 0.6 of a directory, 0.5 the extension, weighted and divided by
    /// the denominator, capped at 1.
    fn path_relevance(&self, terms: &PathTerms) -> f64 {
        if self.tokens.is_empty() || self.denominator <= 0.0 {
            return 0.0;
        }
        // Each token's level: the first of name, directory and extension
        // that holds it. Most paths hold none of the tokens: no allocation.
        let mut levels: Option<Vec<f64>> = None;
        let mut mark = |word: &str, level: f64| {
            if let Some(indices) = self.positions.get(word) {
                let levels = levels.get_or_insert_with(|| vec![0.0; self.tokens.len()]);
                for &index in indices {
                    if levels[index] == 0.0 {
                        levels[index] = level;
                    }
                }
            }
        };
        for word in &terms.name {
            mark(word, 1.0);
        }
        for word in terms.directory.iter() {
            mark(word, 0.6);
        }
        if let Some(extension) = &terms.extension {
            mark(extension, 0.5);
        }
        let Some(levels) = levels else {
            return 0.0;
        };
        // Summed in token order, as every token's share always was.
        let total: f64 = self
            .weights
            .iter()
            .zip(&levels)
            .map(|(weight, level)| weight * level)
            .fold(0.0, |sum, value| sum + value);
        (total / self.denominator).min(1.0)
    }

    /// Symbol relevance: the weighted share of tokens that are words of a
    /// name the file defines; `symbol_ids` are the file's sorted symbol term
    /// ids ([`FileEntry::symbol_ids`]).
    ///
    /// Words are compared whole and stemmed, not as substrings, for the same
    /// reason as [`path_relevance`].
    fn symbol_relevance(&self, symbol_ids: &[u32]) -> f64 {
        if self.tokens.is_empty() || self.denominator <= 0.0 || symbol_ids.is_empty() {
            return 0.0;
        }
        let hits: f64 = self
            .ids
            .iter()
            .zip(&self.weights)
            .filter(|(id, _)| symbol_ids.binary_search(id).is_ok())
            .fold(0.0, |sum, (_, weight)| sum + weight);
        (hits / self.denominator).min(1.0)
    }
}

/// Symbol relevance: the share of subject tokens
/// that are words of a name the file defines. `symbol_terms` must be sorted.
pub fn symbol_relevance(subject_tokens: &[String], symbol_terms: &[String]) -> f64 {
    Query::uniform(subject_tokens).symbol_relevance(&crate::repo_map::symbol_ids(symbol_terms))
}

/// BM25 parameters: term-frequency saturation and length normalisation, the
/// usual values.
const BM25_K1: f64 = 1.2;
const BM25_B: f64 = 0.75;

/// Content relevance: the BM25 score of each candidate for the subject tokens,
/// over the candidates as the corpus, divided by the best candidate's score so
/// the best is 1.0 (all 0 when no candidate contains any token).
fn content_relevance(query: &Query, candidates: &[&FileEntry]) -> Vec<f64> {
    if query.tokens.is_empty() || candidates.is_empty() {
        return vec![0.0; candidates.len()];
    }
    let mut ids: Vec<(u32, f64)> = query
        .tokens
        .iter()
        .zip(&query.content_weights)
        .map(|(t, w)| (term_id(t), *w))
        .collect();
    ids.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
    ids.dedup_by_key(|(id, _)| *id);
    let n = candidates.len() as f64;
    // Lengths are integers: their sum is exact in any order.
    let average_length = candidates
        .par_iter()
        .map(|f| u64::from(f.term_stats.length))
        .sum::<u64>() as f64
        / n;
    let average_length = average_length.max(1.0);
    // Each file's frequency of each term is looked up once: the document
    // frequencies and the scores are both read from this table (candidates ×
    // terms, row by row).
    let width = ids.len();
    let query = TermQuery::new(&ids.iter().map(|&(id, _)| id).collect::<Vec<_>>());
    let mut frequencies = vec![0_u16; candidates.len() * width];
    frequencies
        .par_chunks_exact_mut(width)
        .zip(candidates)
        .for_each(|(row, file)| {
            file.term_stats
                .terms
                .for_each_hit(&query, |column, count| row[column] = count);
        });
    let mut df = vec![0_u32; width];
    for row in frequencies.chunks_exact(width) {
        for (df, &cell) in df.iter_mut().zip(row) {
            *df += u32::from(cell > 0);
        }
    }
    let idf: Vec<f64> = ids
        .iter()
        .zip(&df)
        .map(|(&(_, weight), &df)| {
            let df = f64::from(df);
            weight * ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
        })
        .collect();
    let scores: Vec<f64> = candidates
        .par_iter()
        .zip(frequencies.par_chunks_exact(width))
        .map(|(file, row)| {
            let length = f64::from(file.term_stats.length);
            row.iter()
                .zip(&idf)
                .map(|(&tf, idf)| {
                    let tf = f64::from(tf);
                    if tf == 0.0 {
                        return 0.0;
                    }
                    idf * tf * (BM25_K1 + 1.0)
                        / (tf + BM25_K1 * (1.0 - BM25_B + BM25_B * length / average_length))
                })
                .sum()
        })
        .collect();
    let best = scores.iter().copied().fold(0.0, f64::max);
    if best <= 0.0 {
        return vec![0.0; candidates.len()];
    }
    scores.into_iter().map(|score| score / best).collect()
}

/// Normalised rank of each candidate's recency time ([`FileEntry::recency_ms`]): distinct times are
/// ranked oldest 0.0 to newest 1.0; equal times share a rank; a single distinct
/// time gives 0.0 for all (no information).
fn recency_ranks(candidates: &[&FileEntry]) -> Vec<f64> {
    let mut times: Vec<i64> = candidates.iter().map(|f| f.recency_ms).collect();
    times.par_sort_unstable();
    times.dedup();
    if times.len() < 2 {
        return vec![0.0; candidates.len()];
    }
    let denominator = (times.len() - 1) as f64;
    candidates
        .par_iter()
        .map(|f| {
            let rank = times.binary_search(&f.recency_ms).unwrap_or(0);
            rank as f64 / denominator
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::intent::IntentClassifier;

    fn entry(path: &str, size: u64, mtime: i64) -> FileEntry {
        FileEntry::for_test(path, size, mtime)
    }

    fn repo() -> RepoMap {
        RepoMap::new(vec![
            entry("src/prefix.ts", 900, 5),
            entry("tests/fixtures/user.json", 200, 6),
            entry("src/debug.py", 300, 7),
            entry("src/user/service.ts", 1200, 3),
            entry("src/user/service.test.ts", 800, 9),
            entry("src/user/model.ts", 400, 2),
            entry("README.md", 3000, 1),
        ])
    }

    fn select(intent: &str, pack: &RulePack, max_files: usize) -> Selection {
        let task = IntentClassifier.classify(intent);
        HeuristicSelector::new(pack)
            .unwrap()
            .select(&repo(), &task, max_files, &[], None)
    }

    fn paths(selection: &Selection) -> Vec<&str> {
        selection.files.iter().map(|f| f.path.as_str()).collect()
    }

    #[test]
    fn fix_never_matches_prefix_or_fixtures_and_bug_never_matches_debug() {
        let selection = select("fix bug in prefix handling", &RulePack::default(), 10);
        assert_eq!(paths(&selection), ["src/prefix.ts"]);
        let selection = select("fix the bug", &RulePack::default(), 10);
        assert!(selection.files.is_empty(), "{:?}", paths(&selection));
    }

    #[test]
    fn file_name_words_outrank_directory_words() {
        let selection = select("user service", &RulePack::default(), 10);
        let ranked = paths(&selection);
        let service = ranked
            .iter()
            .position(|p| *p == "src/user/service.ts")
            .unwrap();
        let model = ranked
            .iter()
            .position(|p| *p == "src/user/model.ts")
            .unwrap();
        assert!(service < model, "{ranked:?}");
        assert!(!ranked.contains(&"README.md"));
    }

    #[test]
    fn penalties_and_boosts_move_scores_by_a_fifth() {
        let pack = RulePack {
            heuristic: crate::rule_pack::HeuristicPatterns {
                boost_patterns: vec!["**/model.ts".to_owned()],
                penalize_patterns: vec!["**/*.test.*".to_owned()],
            },
            ..RulePack::default()
        };
        let plain = select("user service", &RulePack::default(), 10);
        let shaped = select("user service", &pack, 10);
        let score = |s: &Selection, p: &str| {
            s.files
                .iter()
                .find(|f| f.path.as_str() == p)
                .map(|f| f.score)
        };
        let delta = score(&shaped, "src/user/model.ts").unwrap()
            - score(&plain, "src/user/model.ts").unwrap();
        // 0.2 on the scale of the weighted sum, which is divided by the sum
        // of the weights.
        let expected = 0.2 / SignalWeights::for_task_class(TaskClass::General).total();
        assert!((delta - expected).abs() < 1e-6, "{delta} vs {expected}");
        assert!(
            score(&shaped, "src/user/service.test.ts") < score(&plain, "src/user/service.test.ts")
        );
        let rank = |s: &Selection| {
            s.files
                .iter()
                .position(|f| f.path.as_str() == "src/user/model.ts")
        };
        assert!(rank(&shaped) < rank(&plain), "{:?}", paths(&shaped));
    }

    #[test]
    fn the_kind_prior_holds_for_behaviour_and_pasted_reports_not_for_topics_or_questions() {
        let demoted = |intent: &str| {
            let selection = select(intent, &RulePack::default(), 10);
            selection
                .files
                .iter()
                .find(|f| f.path.as_str() == "src/user/service.test.ts")
                .map(|f| f.penalized_by.iter().any(|p| p.starts_with(KIND_PRIOR)))
        };
        assert_eq!(demoted("fix the user service lookup"), Some(true));
        let short = IntentClassifier.classify("user service");
        assert_eq!(short.task_class, TaskClass::General);
        assert_eq!(demoted("user service"), Some(false));
        // A short statement of a change that no class keyword classifies is
        // about behaviour; a longer topic, or a question, is not.
        let statement = "prevent user service lookups from containing dashes";
        let task = IntentClassifier.classify(statement);
        assert_eq!(task.task_class, TaskClass::General, "{task:?}");
        assert_eq!(demoted(statement), Some(true));
        assert_eq!(demoted("user service lookup dashes"), Some(false));
        assert_eq!(
            demoted("how do user service lookups handle dashes"),
            Some(false)
        );
        assert_eq!(
            demoted("handle dashes in user service lookups? thanks"),
            Some(false)
        );
        // A pasted report that no verb classifies is about behaviour too.
        let report = "User service and model disagree on names\n\nWhen the user service loads a user \
            whose model has a display name, the service shows the login name instead. The model \
            keeps both names and the service picks the first one it sees. Seen with version 2.1 \
            on a fresh install, with the default settings and a user made on the command line.";
        let task = IntentClassifier.classify(report);
        assert_eq!(task.task_class, TaskClass::General, "{task:?}");
        assert!(!task.subject_weights.is_empty(), "a long intent: {task:?}");
        assert_eq!(demoted(report), Some(true));
    }

    #[test]
    fn an_example_is_demoted_by_half_a_penalty() {
        // Three files alike in all but their kind: source, an example, a
        // test (same size, same age, same words in their paths).
        let repo = RepoMap::new(vec![
            entry("src/user/service.ts", 1000, 5),
            entry("examples/user/service.ts", 1000, 5),
            entry("tests/user/service.ts", 1000, 5),
        ]);
        let task = IntentClassifier.classify("fix the user service lookup");
        let selection = HeuristicSelector::new(&RulePack::default())
            .unwrap()
            .select(&repo, &task, 10, &[], None);
        let file = |path: &str| {
            selection
                .files
                .iter()
                .find(|f| f.path.as_str() == path)
                .unwrap_or_else(|| panic!("{path} selected: {:?}", paths(&selection)))
        };
        let (source, example, test) = (
            file("src/user/service.ts"),
            file("examples/user/service.ts"),
            file("tests/user/service.ts"),
        );
        assert!(
            example
                .penalized_by
                .iter()
                .any(|p| p == "file kind: example"),
            "{example:?}"
        );
        assert!(source.score > example.score && example.score > test.score);
        let (half, whole) = (source.score - example.score, source.score - test.score);
        assert!((whole - 2.0 * half).abs() < 1e-5, "{half} {whole}");
    }

    #[test]
    fn exclude_and_include_patterns_remove_candidates_with_reasons() {
        let pack = RulePack {
            include_patterns: vec!["src/**".to_owned()],
            exclude_patterns: vec!["**/*.test.*".to_owned()],
            ..RulePack::default()
        };
        let selection = select("user service", &pack, 10);
        assert!(!paths(&selection).contains(&"src/user/service.test.ts"));
        assert!(selection.excluded.iter().any(|e| e.path.as_str() == "src/user/service.test.ts"
            && matches!(&e.reason, ExclusionReason::ExcludePattern { pattern } if pattern == "**/*.test.*")));
        assert!(selection.excluded.iter().any(|e| e.path.as_str() == "README.md"
            && e.reason == ExclusionReason::NotIncluded));
        assert_eq!(selection.candidates, 4);
    }

    #[test]
    fn max_files_truncates_in_rank_order() {
        let selection = select("user service", &RulePack::default(), 1);
        assert_eq!(selection.files.len(), 1);
        assert!(selection.truncated);
        assert!(
            selection
                .excluded_files(&repo())
                .iter()
                .any(|e| matches!(e.reason, ExclusionReason::MaxFiles { max_files: 1 }))
        );
    }

    #[test]
    fn every_file_is_accounted_for_once() {
        let selection = select("user service", &RulePack::default(), 2);
        let repo = repo();
        let excluded = selection.excluded_files(&repo);
        let mut all: Vec<&str> = paths(&selection);
        all.extend(excluded.iter().map(|e| e.path.as_str()));
        all.sort_unstable();
        let expected: Vec<&str> = repo.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(all, expected);
    }

    #[test]
    fn targets_come_first_whatever_their_signals_and_patterns() {
        let pack = RulePack {
            exclude_patterns: vec!["README.md".to_owned()],
            ..RulePack::default()
        };
        let task = IntentClassifier.classify("user service");
        let targets = [RelativePath::new("README.md").unwrap()];
        let selection =
            HeuristicSelector::new(&pack)
                .unwrap()
                .select(&repo(), &task, 2, &targets, None);
        assert_eq!(paths(&selection)[0], "README.md");
        assert!(selection.files[0].target);
        assert_eq!(selection.files.len(), 2);
    }

    #[test]
    fn ties_break_on_path() {
        let repo = RepoMap::new(vec![entry("b/user.rs", 100, 1), entry("a/user.rs", 100, 1)]);
        let task = IntentClassifier.classify("user");
        let selection = HeuristicSelector::new(&RulePack::default())
            .unwrap()
            .select(&repo, &task, 5, &[], None);
        assert_eq!(paths(&selection), ["a/user.rs", "b/user.rs"]);
    }

    #[test]
    fn recency_ranks_newest_highest_and_equal_times_give_no_signal() {
        let files = [
            entry("a", 1, 10),
            entry("b", 1, 30),
            entry("c", 1, 20),
            entry("d", 1, 30),
        ];
        let refs: Vec<&FileEntry> = files.iter().collect();
        assert_eq!(recency_ranks(&refs), vec![0.0, 1.0, 0.5, 1.0]);
        let same = [entry("a", 1, 5), entry("b", 1, 5)];
        let refs: Vec<&FileEntry> = same.iter().collect();
        assert_eq!(recency_ranks(&refs), vec![0.0, 0.0]);
    }
}
