//! SpecificationCompiler (`docs/spec-compiler.md`): compiles the
//! types, code blocks and prose a planning agent hands over into one task briefing for an
//! executor agent that fits a token budget.
//!
//! # The model
//!
//! A [`SpecificationInput`] lists types, each with a [`SpecTypeUsage`] — how the executor
//! relates to it — plus code blocks and prose. The usage sets the type's initial
//! [`SpecInclusionTier`]:
//!
//! | usage | tier | what the briefing shows |
//! | --- | --- | --- |
//! | `implements`, `calls-methods`, `constructs` | `verbatim` | the whole definition, its leading imports merged with the other verbatim types' into one section |
//! | `passes-through` | `signature-path` | name, path, one-line purpose, method count and the signatures (tree-sitter, [`crate::lang`]) |
//! | `names-only` | `path-only` | one line: name, path, usage and the factory function when one is found |
//!
//! [`SpecificationCompiler::compile`] then runs, in this order:
//!
//! 1. **Pre-passes.** Every piece goes through the [`ContentTransformerPipeline`]: type bodies
//!    (their leading imports split off first) like direct targets of a compile — lossy
//!    transformers bypassed — and code blocks and prose through the whole pipeline.
//!    Then, per batch, the [`SummarisationLadder`] fits the batch into a capped batch budget:
//!    the verbatim-usage types (rows at L0 full, L1 signatures with docs, L2 signatures, L3
//!    names; `constructs` least relevant, `implements` most), the passes-through types (their
//!    signature-path section, or names), and the code and prose blocks (code at L0–L2, prose
//!    whole; code less relevant than prose). The ladder's choice becomes the piece's body; the
//!    type's tier does not change. The cap is the smaller of the budget and the batch's own
//!    size, so the ladder only shrinks a batch that could not fit the budget even alone, and
//!    everything else is left to the demotion loop. (A fixed share of the budget as the cap
//!    would shrink the verbatim bodies of a briefing that fits untouched.)
//! 2. **Tiers** from usage; **imports** of the verbatim types merged without duplicates.
//! 3. **Assembly** in a fixed section order: merged imports, verbatim types, signature-path
//!    types, the path-only list (types each in path-then-name order), code blocks, prose.
//! 4. **Demotion** while over budget, in a fixed order of steps: verbatim types to
//!    signature-path (`constructs` before `calls-methods` before `implements`; then the larger
//!    section, the path, the name), then signature-path types to path-only (`passes-through`
//!    first, same keys), then the largest code block, then the largest prose block, and when
//!    nothing is left the fixed [`TRUNCATION_BANNER`].
//!
//! Every count is [`TokenCounter`] tokens (`cl100k_base`, or the model's encoding:
//! [`SpecificationCompiler::with_tokenizer`]); the budget bounds the exact count of
//! [`SpecCompilationResult::compiled_spec`]. For any budget of at least
//! [`SpecCompilationMeta::minimum_tokens`] (every type path-only, no block) the compiled spec
//! fits; below it, the output is that smallest state plus the banner.
//!
//! # Which input orders matter
//!
//! - `types`: **none.** Types are processed and shown in (path, name) order, so any
//!   permutation gives the same output. Names are unique ([`parse_specification`] rejects a
//!   repeat); they key [`SpecCompilationMeta::type_tiers`].
//! - `codeBlocks` and `prose`: **the given order**, which the briefing keeps: a briefing is read
//!   top to bottom and the planner chose the sequence. Among blocks of equal size the later one
//!   is dropped first.
//!
//! Same input and budget give a byte-identical result; nothing depends on the machine, the
//! time or hash order.
//!
//! # What it leaves out
//!
//! The guard (secret and injection scanning) does not run on specification text: a planning
//! agent wrote it, not a repository. `estimatedTokens` on the wire is accepted and ignored; the
//! compiler counts. A type never comes back up once demoted, even if a later step frees more
//! than needed, so a higher-priority type is never shown at a smaller tier than a
//! lower-priority one because of the loop.

mod demotion;
mod imports;
mod render;
mod validate;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::ContentTransformersConfig;
use crate::fit::ladder::{InclusionTier, LadderFile, SummarisationLadder};
use crate::fit::tokens::TokenCount;
use crate::fit::tokens::{TokenCounter, Tokenizer};
use crate::lang::{FileAnalysis, analyze_file};
use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::transform::ContentTransformerPipeline;

pub use validate::{
    SpecValidationError, compile_request_from_value, parse_compile_request, parse_specification,
    parse_specification_file, specification_from_value,
};

use render::Outline;

/// The budget when a request gives none: 4,000 tokens, the size of a typical task
/// briefing.
pub const DEFAULT_SPEC_BUDGET: TokenCount = TokenCount(4_000);

/// The fixed last line of a compiled spec that is over budget even with every type path-only
/// and every code and prose block removed.
pub const TRUNCATION_BANNER: &str = "[aic: the budget is smaller than this specification at its smallest (every type path-only, no code or prose); raise the budget to see more]";

/// How the executor relates to a type; it sets the type's initial tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpecTypeUsage {
    /// `implements`: the executor implements it → `verbatim`.
    Implements,
    /// `calls-methods`: the executor calls its methods → `verbatim`.
    CallsMethods,
    /// `constructs`: the executor builds values of it → `verbatim`.
    Constructs,
    /// `passes-through`: the executor hands it on without looking inside → `signature-path`.
    PassesThrough,
    /// `names-only`: the executor only names it → `path-only`.
    NamesOnly,
}

impl SpecTypeUsage {
    /// Every usage, closest relation (fullest tier) first.
    pub const ALL: [Self; 5] = [
        Self::Implements,
        Self::CallsMethods,
        Self::Constructs,
        Self::PassesThrough,
        Self::NamesOnly,
    ];

    /// The wire name: `implements`, `calls-methods`, `constructs`, `passes-through`,
    /// `names-only`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Implements => "implements",
            Self::CallsMethods => "calls-methods",
            Self::Constructs => "constructs",
            Self::PassesThrough => "passes-through",
            Self::NamesOnly => "names-only",
        }
    }

    /// The usage of a wire name, if it is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|usage| usage.as_str() == name)
    }

    /// The tier a type with this usage starts at.
    pub fn initial_tier(self) -> SpecInclusionTier {
        match self {
            Self::Implements | Self::CallsMethods | Self::Constructs => SpecInclusionTier::Verbatim,
            Self::PassesThrough => SpecInclusionTier::SignaturePath,
            Self::NamesOnly => SpecInclusionTier::PathOnly,
        }
    }
}

/// How much of a type the compiled spec shows, fullest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpecInclusionTier {
    /// `verbatim`: the whole definition.
    Verbatim,
    /// `signature-path`: name, path, purpose, method count and signatures.
    SignaturePath,
    /// `path-only`: one line with name, path, usage and factory.
    PathOnly,
}

impl SpecInclusionTier {
    /// The wire name: `verbatim`, `signature-path`, `path-only`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Verbatim => "verbatim",
            Self::SignaturePath => "signature-path",
            Self::PathOnly => "path-only",
        }
    }
}

/// One type of a specification.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SpecTypeRef {
    /// The type's name, unique within the specification; shown in headings and used as its key
    /// in [`SpecCompilationMeta::type_tiers`].
    pub name: String,
    /// The file that defines it, relative to the project root; its extension gives the language
    /// (fences, signatures).
    pub path: RelativePath,
    /// Its source: the definition, optionally preceded by import lines.
    pub content: String,
    /// How the executor relates to it.
    pub usage: SpecTypeUsage,
    /// The sender's token estimate; accepted for wire compatibility and never read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_tokens: Option<TokenCount>,
}

/// A code block of a specification.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SpecCodeBlock {
    /// Its heading. A label that is a file name with a known extension (`config.json`) gives
    /// the block's language; so does the info string of a content that is one fenced block.
    pub label: String,
    /// The code.
    pub content: String,
    /// The sender's token estimate; never read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_tokens: Option<TokenCount>,
}

/// A prose block of a specification.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SpecProseBlock {
    /// Its heading.
    pub label: String,
    /// The text (Markdown).
    pub content: String,
    /// The sender's token estimate; never read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_tokens: Option<TokenCount>,
}

/// What a planning agent hands over. Build one with
/// [`parse_specification`], which validates it; a value deserialised directly is not checked
/// for unique names or non-emptiness.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SpecificationInput {
    /// The types; their order carries no meaning.
    #[serde(default)]
    pub types: Vec<SpecTypeRef>,
    /// The code blocks, in the order they are shown.
    #[serde(default)]
    pub code_blocks: Vec<SpecCodeBlock>,
    /// The prose blocks, in the order they are shown.
    #[serde(default)]
    pub prose: Vec<SpecProseBlock>,
}

/// An `aic_compile_spec` request: a specification and an optional budget
/// ([`DEFAULT_SPEC_BUDGET`] when absent).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SpecCompileRequest {
    /// The specification.
    pub spec: SpecificationInput,
    /// The token budget of the compiled spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<TokenCount>,
}

/// Metadata of one specification compile; the fields marked `aic:` say how the budget was
/// met.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpecCompilationMeta {
    /// Tokens of the input as given: every type's content, code block and prose block.
    pub total_tokens_raw: TokenCount,
    /// Exact tokens of the compiled spec (the banner included when there is one).
    pub total_tokens_compiled: TokenCount,
    /// `1 − compiled / raw`, a fraction in `[0, 1]` rounded to three decimals; 0 when the
    /// compiled spec is not smaller (headings can make a tiny spec grow) or raw is 0.
    pub reduction_pct: f64,
    /// The final tier of every type, by name.
    pub type_tiers: BTreeMap<String, SpecInclusionTier>,
    /// Tokens the content transformers removed from the pieces, before any tiering.
    pub transform_tokens_saved: TokenCount,
    /// aic: the budget the spec was fitted to.
    pub budget: TokenCount,
    /// aic: tokens of the smallest compiled spec (every type path-only, no code or prose): the
    /// smallest budget met without the banner.
    pub minimum_tokens: TokenCount,
    /// aic: whether even the smallest spec was over budget and the banner was appended.
    pub truncated: bool,
    /// aic: labels of the code blocks dropped to fit, in input order.
    pub dropped_code_blocks: Vec<String>,
    /// aic: labels of the prose blocks dropped to fit, in input order.
    pub dropped_prose: Vec<String>,
    /// aic: the encoding every count is made in (`cl100k_base` unless the model uses
    /// `o200k_base`; see [`SpecificationCompiler::with_tokenizer`]).
    #[serde(default)]
    pub tokenizer: Tokenizer,
}

/// The result of a specification compile; its JSON is
/// `{compiledSpec, meta}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpecCompilationResult {
    /// The briefing: Markdown sections, ending in a newline.
    pub compiled_spec: String,
    /// What the compile did.
    pub meta: SpecCompilationMeta,
}

/// A section of the output with its token count.
#[derive(Clone, Debug)]
struct Section {
    text: String,
    tokens: u64,
}

/// A type with its renders, ready for the demotion loop.
#[derive(Debug)]
struct PreparedType<'a> {
    source: &'a SpecTypeRef,
    language: Language,
    /// Leading import statements, shown merged while the type is verbatim.
    imports: Vec<String>,
    initial: SpecInclusionTier,
    /// The verbatim section (verbatim-usage types only).
    verbatim: Option<Section>,
    /// The signature-path section (every type but names-only ones).
    signature: Option<Section>,
    /// The line in the path-only list.
    path_only: Section,
}

impl PreparedType<'_> {
    /// The section shown at `tier`; `None` for path-only (a line of the shared list).
    fn section(&self, tier: SpecInclusionTier) -> Option<&Section> {
        match tier {
            SpecInclusionTier::Verbatim => self.verbatim.as_ref(),
            SpecInclusionTier::SignaturePath => self.signature.as_ref(),
            SpecInclusionTier::PathOnly => None,
        }
    }
}

/// A code or prose block with its chosen render.
#[derive(Debug)]
struct PreparedBlock<'a> {
    label: &'a str,
    section: Section,
}

/// Everything the demotion loop needs.
#[derive(Debug)]
struct Prepared<'a> {
    /// Types in (path, name) order.
    types: Vec<PreparedType<'a>>,
    code: Vec<PreparedBlock<'a>>,
    prose: Vec<PreparedBlock<'a>>,
    path_only_heading_tokens: u64,
    raw_tokens: u64,
    transform_saved: u64,
}

/// One row for a pre-pass ladder: its renders per tier (index = tier), with tokens.
type LadderRow = [Option<Section>; 4];

/// Compiles specifications. Holds the transformer
/// pipeline; cheap to build, and shareable across threads.
///
/// # Examples
///
/// ```
/// use aic_stages::config::AicConfig;
/// use aic_stages::fit::tokens::TokenCount;
/// use aic_stages::spec::{SpecInclusionTier, SpecificationCompiler, parse_specification};
///
/// let input = parse_specification(r#"{
///   "types": [
///     {"name": "Store", "path": "src/store.rs", "usage": "implements",
///      "content": "use std::path::Path;\n\n/// A key-value store.\npub trait Store {\n    fn get(&self, key: &str) -> Option<String>;\n}\n"},
///     {"name": "Key", "path": "src/key.rs", "usage": "names-only",
///      "content": "pub struct Key(String);\nimpl Key {\n    pub fn new(s: &str) -> Self { Self(s.into()) }\n}\n"}
///   ],
///   "prose": [{"label": "Task", "content": "Implement `Store` over a `BTreeMap`."}]
/// }"#)?;
/// let compiler = SpecificationCompiler::new(&AicConfig::default().content_transformers);
/// let result = compiler.compile(&input, TokenCount(4_000));
/// assert_eq!(result.meta.type_tiers["Store"], SpecInclusionTier::Verbatim);
/// assert!(result.compiled_spec.contains("- Key — src/key.rs — names-only; factory `new`"));
/// assert!(result.meta.total_tokens_compiled <= TokenCount(4_000));
///
/// let tight = compiler.compile(&input, result.meta.minimum_tokens);
/// assert_eq!(tight.meta.type_tiers["Store"], SpecInclusionTier::PathOnly);
/// assert_eq!(tight.meta.dropped_prose, ["Task"]);
/// # Ok::<(), aic_stages::spec::SpecValidationError>(())
/// ```
#[derive(Debug)]
pub struct SpecificationCompiler {
    transformers: ContentTransformerPipeline,
    tokens: TokenCounter,
}

impl SpecificationCompiler {
    /// A compiler with the transformers `contentTransformers.*` enables.
    pub fn new(config: &ContentTransformersConfig) -> Self {
        Self {
            transformers: ContentTransformerPipeline::new(config),
            tokens: TokenCounter::cl100k(),
        }
    }

    /// The same compiler counting in `tokenizer` (the model's encoding, from
    /// [`crate::fit::model::ModelProfile`]): every count and the budget are in its tokens.
    #[must_use]
    pub fn with_tokenizer(self, tokenizer: Tokenizer) -> Self {
        Self {
            tokens: TokenCounter::new(tokenizer),
            ..self
        }
    }

    /// Compiles `input` to fit `budget` tokens (see the module documentation for the rule).
    ///
    /// Never fails: the input is expected to be validated ([`parse_specification`]); an
    /// unvalidated one with repeated type names compiles too, and the later name in
    /// (path, name) order wins its key in `typeTiers`. A budget below
    /// [`SpecCompilationMeta::minimum_tokens`] gives the smallest spec plus
    /// [`TRUNCATION_BANNER`], with `truncated` set.
    pub fn compile(&self, input: &SpecificationInput, budget: TokenCount) -> SpecCompilationResult {
        self.compile_with(input, budget, false)
    }

    fn compile_with(
        &self,
        input: &SpecificationInput,
        budget: TokenCount,
        exact_every_step: bool,
    ) -> SpecCompilationResult {
        let prepared = self.prepare(input, budget.get());
        let fitted = demotion::fit(
            &prepared,
            demotion::Plan::initial(&prepared),
            budget.get(),
            self.tokens,
            exact_every_step,
        );
        let smallest = demotion::assemble(&prepared, &demotion::Plan::smallest(&prepared));
        let minimum_tokens = self.tokens.count(&smallest);
        let mut type_tiers = BTreeMap::new();
        for (t, tier) in prepared.types.iter().zip(&fitted.plan.tiers) {
            type_tiers.insert(t.source.name.clone(), *tier);
        }
        let dropped = |blocks: &[PreparedBlock<'_>], kept: &[bool]| -> Vec<String> {
            blocks
                .iter()
                .zip(kept)
                .filter(|(_, kept)| !**kept)
                .map(|(block, _)| block.label.to_owned())
                .collect()
        };
        let reduction = if prepared.raw_tokens == 0 {
            0.0
        } else {
            (1.0 - fitted.tokens as f64 / prepared.raw_tokens as f64).max(0.0)
        };
        SpecCompilationResult {
            meta: SpecCompilationMeta {
                total_tokens_raw: TokenCount::from_u64(prepared.raw_tokens),
                total_tokens_compiled: TokenCount::from_u64(fitted.tokens),
                reduction_pct: (reduction * 1000.0).round() / 1000.0,
                type_tiers,
                transform_tokens_saved: TokenCount::from_u64(prepared.transform_saved),
                budget,
                minimum_tokens,
                truncated: fitted.truncated,
                dropped_code_blocks: dropped(&prepared.code, &fitted.plan.code),
                dropped_prose: dropped(&prepared.prose, &fitted.plan.prose),
                tokenizer: self.tokens.tokenizer(),
            },
            compiled_spec: fitted.text,
        }
    }

    fn section(&self, text: String) -> Section {
        let tokens = self.tokens.count(&text).get();
        Section { text, tokens }
    }

    /// Transforms `content` and returns the text with the tokens it saved.
    fn transform(
        &self,
        path: &RelativePath,
        language: Language,
        content: &str,
        bypass_lossy: bool,
    ) -> (String, u64) {
        let transformed = self
            .transformers
            .transform(path, language, content, false, bypass_lossy);
        let saved = if transformed.applied.is_empty() {
            0
        } else {
            self.tokens
                .count(content)
                .get()
                .saturating_sub(self.tokens.count(&transformed.text).get())
        };
        (transformed.text, saved)
    }

    /// Runs the pre-passes: transforms, renders per tier, and the three capped ladder batches.
    fn prepare<'a>(&self, input: &'a SpecificationInput, budget: u64) -> Prepared<'a> {
        let mut order: Vec<&SpecTypeRef> = input.types.iter().collect();
        order.sort_by(|a, b| a.path.cmp(&b.path).then_with(|| a.name.cmp(&b.name)));

        let mut raw_tokens = 0;
        let mut transform_saved = 0;
        let mut types = Vec::with_capacity(order.len());
        let mut verbatim_rows = Vec::new();
        let mut signature_rows = Vec::new();
        for source in order {
            raw_tokens += self.tokens.count(&source.content).get();
            let language = Language::detect(&source.path);
            let initial = source.usage.initial_tier();
            let (imports, body) = imports::split_leading_imports(&source.content);
            let (body, saved) = self.transform(&source.path, language, body, true);
            transform_saved += saved;
            let analysis = analyze_file(&source.path, language, &body);
            let outline = Outline::of(&analysis);
            let path_only =
                self.section(render::path_only_line(source, outline.factory.as_deref()));
            let signatures = analysis
                .signatures_only
                .clone()
                .filter(|s| !s.trim().is_empty())
                .unwrap_or_else(|| render::names_body(&analysis, &body));
            let signature_text = |body: &str, level| {
                render::signature_section(source, language, &outline, body, level)
            };
            let signature = (initial != SpecInclusionTier::PathOnly)
                .then(|| self.section(signature_text(&signatures, InclusionTier::L0)));
            match initial {
                SpecInclusionTier::Verbatim => {
                    let rows = self.verbatim_levels(source, language, &analysis, &body);
                    verbatim_rows.push((types.len(), rows));
                }
                SpecInclusionTier::SignaturePath => {
                    let names = self.section(signature_text(
                        &render::names_body(&analysis, &body),
                        InclusionTier::L3,
                    ));
                    signature_rows
                        .push((types.len(), [signature.clone(), None, None, Some(names)]));
                }
                SpecInclusionTier::PathOnly => {}
            }
            types.push(PreparedType {
                source,
                language,
                imports,
                initial,
                // Set from the verbatim ladder batch below.
                verbatim: None,
                signature,
                path_only,
            });
        }

        let rank = |t: &PreparedType<'_>| f64::from(demotion::demotion_rank(t.source.usage));
        for (index, section) in type_batch(&types, verbatim_rows, rank, budget) {
            types[index].verbatim = Some(section);
        }
        for (index, section) in type_batch(&types, signature_rows, |_| 1.0, budget) {
            types[index].signature = Some(section);
        }

        let (code, prose) =
            self.prepare_blocks(input, budget, &mut raw_tokens, &mut transform_saved);
        Prepared {
            types,
            code,
            prose,
            path_only_heading_tokens: self.tokens.count(render::PATH_ONLY_HEADING).get(),
            raw_tokens,
            transform_saved,
        }
    }

    /// The verbatim section of a type at each ladder tier: L0 its transformed body, L1 and L2
    /// its signatures with and without docs (when the provider has them), L3 its names.
    fn verbatim_levels(
        &self,
        source: &SpecTypeRef,
        language: Language,
        analysis: &FileAnalysis,
        body: &str,
    ) -> LadderRow {
        let level = |text: Option<&str>, tier: InclusionTier| {
            text.filter(|t| !t.trim().is_empty())
                .map(|t| self.section(render::verbatim_section(source, language, t, tier)))
        };
        [
            Some(self.section(render::verbatim_section(
                source,
                language,
                body,
                InclusionTier::L0,
            ))),
            level(analysis.signatures_with_docs.as_deref(), InclusionTier::L1),
            level(analysis.signatures_only.as_deref(), InclusionTier::L2),
            level(Some(&render::names_body(analysis, body)), InclusionTier::L3),
        ]
    }

    /// Transforms and renders the code and prose blocks, then fits them with one ladder pass
    /// (code at L0, L1, L2; prose whole).
    fn prepare_blocks<'a>(
        &self,
        input: &'a SpecificationInput,
        budget: u64,
        raw_tokens: &mut u64,
        transform_saved: &mut u64,
    ) -> (Vec<PreparedBlock<'a>>, Vec<PreparedBlock<'a>>) {
        let mut rows: Vec<LadderRow> = Vec::new();
        let mut paths = Vec::new();
        let mut scores = Vec::new();
        for (index, block) in input.code_blocks.iter().enumerate() {
            *raw_tokens += self.tokens.count(&block.content).get();
            let (info, inside) = render::unfence(&block.content);
            let label_path = RelativePath::new(&block.label)
                .filter(|path| Language::detect(path) != Language::Unknown);
            let language = match (info.map(render::language_of_tag), &label_path) {
                (Some(language), _) if language != Language::Unknown => language,
                (_, Some(path)) => Language::detect(path),
                _ => Language::Unknown,
            };
            let synthetic = RelativePath::new(&format!("spec/code/{index:04}"))
                .unwrap_or_else(|| unreachable!("a constant relative path"));
            let path = label_path.unwrap_or(synthetic.clone());
            let (body, saved) = self.transform(&path, language, inside, false);
            *transform_saved += saved;
            let analysis = analyze_file(&path, language, &body);
            let level = |text: Option<&str>, tier: InclusionTier| {
                text.filter(|t| !t.trim().is_empty())
                    .map(|t| self.section(render::code_section(&block.label, language, t, tier)))
            };
            rows.push([
                Some(self.section(render::code_section(
                    &block.label,
                    language,
                    &body,
                    InclusionTier::L0,
                ))),
                level(analysis.signatures_with_docs.as_deref(), InclusionTier::L1),
                level(analysis.signatures_only.as_deref(), InclusionTier::L2),
                None,
            ]);
            paths.push(synthetic);
            scores.push(0.0);
        }
        for (index, block) in input.prose.iter().enumerate() {
            *raw_tokens += self.tokens.count(&block.content).get();
            let path = RelativePath::new(&format!("spec/prose/{index:04}.md"))
                .unwrap_or_else(|| unreachable!("a constant relative path"));
            let (body, saved) = self.transform(&path, Language::Markdown, &block.content, false);
            *transform_saved += saved;
            rows.push([
                Some(self.section(render::prose_section(&block.label, &body))),
                None,
                None,
                None,
            ]);
            paths.push(path);
            scores.push(1.0);
        }
        let mut sections = ladder_pass(&rows, &scores, &paths, budget).into_iter();
        let code = input
            .code_blocks
            .iter()
            .zip(sections.by_ref())
            .map(|(block, section)| PreparedBlock {
                label: &block.label,
                section,
            })
            .collect();
        let prose = input
            .prose
            .iter()
            .zip(sections)
            .map(|(block, section)| PreparedBlock {
                label: &block.label,
                section,
            })
            .collect();
        (code, prose)
    }
}

/// Fits a batch of types (`(index into types, renders)`) with [`ladder_pass`], each scored by
/// `score`, and returns each type's chosen render.
fn type_batch(
    types: &[PreparedType<'_>],
    batch: Vec<(usize, LadderRow)>,
    score: impl Fn(&PreparedType<'_>) -> f64,
    budget: u64,
) -> Vec<(usize, Section)> {
    let scores: Vec<f64> = batch
        .iter()
        .map(|(index, _)| score(&types[*index]))
        .collect();
    let paths: Vec<RelativePath> = batch
        .iter()
        .map(|(index, _)| types[*index].source.path.clone())
        .collect();
    let (indices, rows): (Vec<usize>, Vec<LadderRow>) = batch.into_iter().unzip();
    indices
        .into_iter()
        .zip(ladder_pass(&rows, &scores, &paths, budget))
        .collect()
}

/// Fits one batch with the [`SummarisationLadder`] under the capped batch budget
/// `min(budget, Σ L0)` and returns each row's chosen render; a row the ladder drops keeps its
/// smallest render (only the demotion loop removes pieces).
fn ladder_pass(
    rows: &[LadderRow],
    scores: &[f64],
    paths: &[RelativePath],
    budget: u64,
) -> Vec<Section> {
    let files: Vec<LadderFile> = rows
        .iter()
        .zip(scores)
        .zip(paths)
        .map(|((row, score), path)| LadderFile {
            path: path.clone(),
            score: *score,
            costs: row
                .each_ref()
                .map(|section| section.as_ref().map(|s| TokenCount::from_u64(s.tokens))),
            floor: None,
        })
        .collect();
    let full: u64 = rows
        .iter()
        .filter_map(|row| row[0].as_ref())
        .map(|s| s.tokens)
        .sum();
    let (choices, _) = SummarisationLadder.fit(&files, TokenCount::from_u64(full.min(budget)));
    rows.iter()
        .zip(choices)
        .map(|(row, choice)| {
            let chosen = choice.and_then(|tier| row[tier as usize].clone());
            chosen
                .or_else(|| row.iter().rev().flatten().next().cloned())
                .unwrap_or(Section {
                    text: String::new(),
                    tokens: 0,
                })
        })
        .collect()
}
