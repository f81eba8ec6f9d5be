//! The stable, versioned byte encoding of what the per-file stages learn, for the
//! content-addressed per-file cache.
//!
//! Three kinds of row, each a [`postcard`] encoding of a private wire struct after
//! one version byte ([`WIRE_VERSION`]):
//!
//! - [`ScanTerms`]: what the RepoMap scan needs of a file (symbol terms, BM25 term
//!   statistics), so a warm scan reads no file;
//! - imports: the file's [`ImportRef`]s, parsed lazily for the import graph;
//! - [`FileFacts`]: the guard verdict, transforms and the four tier renders.
//!
//! The wire structs hold plain values only, so adding a field to a public type
//! never silently changes the encoding: the wire struct and [`WIRE_VERSION`]
//! change together. What a row depends on besides the file's bytes (the stage
//! sources, [`STAGES_SOURCE_HASH`], the tokenizer, the settings, the path) goes
//! into its key, which the binary builds.

use serde::{Deserialize, Serialize};

use crate::content_hash::ContentHash;
use crate::facts::{FileFacts, TierRender};
use crate::fit::line_map::LineMap;
use crate::fit::tokens::TokenCount;
use crate::guard::{FileGuardOutcome, GuardFinding, GuardFindingType, GuardSeverity};
use crate::lang::ImportRef;
use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::select::definitions::{Definition, DefinitionKind};
use crate::select::terms::TermStats;

/// Version of the wire encoding; a row with another first byte is undecodable
/// (a cache miss that deletes the row).
pub const WIRE_VERSION: u8 = 3;

/// Fingerprint of the stage sources and `queries/` of this build (FNV-1a, from
/// `build.rs`).
pub const STAGES_SOURCE_HASH: &str = env!("AIC_STAGES_SOURCE_HASH");

/// Name of the tokenizer whose counts the rows hold.
pub const TOKENIZER: &str = "cl100k_base";

/// A row that does not decode: wrong version, truncated or damaged.
#[derive(Debug, thiserror::Error)]
#[error("undecodable cached facts row")]
pub struct DecodeError;

/// What the RepoMap scan computes from a file's text.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ScanTerms {
    /// Identifier terms of defined names (see [`crate::select::symbols::symbol_terms`]).
    /// Shared: a memoised copy is handed out without copying the strings.
    pub symbol_terms: std::sync::Arc<[String]>,
    /// [`crate::select::symbols::name_id`]s of the defined names, sorted.
    pub name_ids: std::sync::Arc<[u32]>,
    /// BM25 term statistics of path and content.
    pub term_stats: TermStats,
}

/// What a file's entry in the RepoMap keeps of its [`ScanTerms`]: the
/// defined names as sorted term ids ([`crate::repo_map::symbol_ids`]), not
/// strings. A long-lived process memoises decoded rows in this form, so its
/// memo and its resident snapshot share one copy of each file's terms.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct EntryTerms {
    /// Sorted, distinct term ids of the defined names' words.
    pub symbol_ids: std::sync::Arc<[u32]>,
    /// [`crate::select::symbols::name_id`]s of the defined names, sorted.
    pub name_ids: std::sync::Arc<[u32]>,
    /// BM25 term statistics of path and content.
    pub term_stats: TermStats,
}

impl From<&ScanTerms> for EntryTerms {
    fn from(facts: &ScanTerms) -> Self {
        Self {
            symbol_ids: crate::repo_map::symbol_ids(&facts.symbol_terms),
            name_ids: facts.name_ids.clone(),
            term_stats: facts.term_stats.clone(),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct ScanWire {
    symbol_terms: Vec<String>,
    name_ids: Vec<u32>,
    terms: Vec<crate::select::terms::TermCount>,
    length: u32,
}

#[derive(Serialize, Deserialize)]
struct FindingWire {
    block: bool,
    kind: u8,
    line: Option<u32>,
    message: String,
    pattern: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct FactsWire {
    lossy_utf8: bool,
    original_tokens: u32,
    transformed_tokens: u32,
    transforms_applied: Vec<String>,
    findings: Vec<FindingWire>,
    blocked: bool,
    secrets_redacted: bool,
    renders: [Option<(String, u32)>; 4],
    line_map: Vec<(u32, u32)>,
    definitions: Vec<DefinitionWire>,
}

/// A [`Definition`] on the wire: kind 0 function, 1 type, 2 section.
#[derive(Serialize, Deserialize)]
struct DefinitionWire {
    name: String,
    kind: u8,
    lines: [u32; 5],
    parent: Option<u32>,
}

fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    let mut out = vec![WIRE_VERSION];
    // Encoding plain structs into a Vec cannot fail.
    if let Ok(bytes) = postcard::to_stdvec(value) {
        out.extend_from_slice(&bytes);
    }
    out
}

fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, DecodeError> {
    match bytes.split_first() {
        Some((&WIRE_VERSION, rest)) => {
            let (value, left) = postcard::take_from_bytes(rest).map_err(|_| DecodeError)?;
            if left.is_empty() {
                Ok(value)
            } else {
                Err(DecodeError)
            }
        }
        _ => Err(DecodeError),
    }
}

/// Encodes [`ScanTerms`].
pub fn encode_scan(facts: &ScanTerms) -> Vec<u8> {
    encode(&ScanWire {
        symbol_terms: facts.symbol_terms.to_vec(),
        name_ids: facts.name_ids.to_vec(),
        terms: facts.term_stats.terms.to_term_counts(),
        length: facts.term_stats.length,
    })
}

/// Decodes [`ScanTerms`].
///
/// # Errors
///
/// [`DecodeError`] for a row of another version or a damaged row.
pub fn decode_scan(bytes: &[u8]) -> Result<ScanTerms, DecodeError> {
    let wire: ScanWire = decode(bytes)?;
    Ok(ScanTerms {
        symbol_terms: wire.symbol_terms.into(),
        name_ids: wire.name_ids.into(),
        term_stats: TermStats {
            terms: crate::select::term_list::TermList::new(&wire.terms),
            length: wire.length,
        },
    })
}

/// Encodes a file's imports.
pub fn encode_imports(imports: &[ImportRef]) -> Vec<u8> {
    encode(&imports)
}

/// Decodes a file's imports.
///
/// # Errors
///
/// [`DecodeError`] for a row of another version or a damaged row.
pub fn decode_imports(bytes: &[u8]) -> Result<Vec<ImportRef>, DecodeError> {
    decode(bytes)
}

fn finding_kind(kind: GuardFindingType) -> u8 {
    match kind {
        GuardFindingType::Secret => 0,
        GuardFindingType::ExcludedFile => 1,
        GuardFindingType::PromptInjection => 2,
        GuardFindingType::CommandInjection => 3,
    }
}

fn finding_type(kind: u8) -> Result<GuardFindingType, DecodeError> {
    Ok(match kind {
        0 => GuardFindingType::Secret,
        1 => GuardFindingType::ExcludedFile,
        2 => GuardFindingType::PromptInjection,
        3 => GuardFindingType::CommandInjection,
        _ => return Err(DecodeError),
    })
}

/// Encodes [`FileFacts`] (without the path, language and content hash, which
/// the key holds). The redacted text itself is not stored: the renders already
/// hold it.
pub fn encode_facts(facts: &FileFacts) -> Vec<u8> {
    encode(&FactsWire {
        lossy_utf8: facts.lossy_utf8,
        original_tokens: facts.original_tokens.0,
        transformed_tokens: facts.transformed_tokens.0,
        transforms_applied: facts.transforms_applied.clone(),
        findings: facts
            .guard
            .findings
            .iter()
            .map(|finding| FindingWire {
                block: finding.severity == GuardSeverity::Block,
                kind: finding_kind(finding.finding_type),
                line: finding.line,
                message: finding.message.clone(),
                pattern: finding.pattern.clone(),
            })
            .collect(),
        blocked: facts.guard.blocked,
        secrets_redacted: facts.guard.secrets_redacted,
        renders: facts
            .renders
            .clone()
            .map(|render| render.map(|TierRender { body, block_tokens }| (body, block_tokens.0))),
        line_map: facts.line_map.runs().to_vec(),
        definitions: facts
            .definitions
            .iter()
            .map(|d| DefinitionWire {
                name: d.name.clone(),
                kind: match d.kind {
                    DefinitionKind::Function => 0,
                    DefinitionKind::Type => 1,
                    DefinitionKind::Section => 2,
                },
                lines: [d.start, d.header_start, d.header_end, d.doc_end, d.end],
                parent: d.parent,
            })
            .collect(),
    })
}

/// Decodes [`FileFacts`] for the file at `path`.
///
/// # Errors
///
/// [`DecodeError`] for a row of another version or a damaged row.
pub fn decode_facts(
    bytes: &[u8],
    path: &RelativePath,
    language: Language,
    content_hash: ContentHash,
) -> Result<FileFacts, DecodeError> {
    let wire: FactsWire = decode(bytes)?;
    let findings = wire
        .findings
        .into_iter()
        .map(|finding| {
            Ok(GuardFinding {
                severity: if finding.block {
                    GuardSeverity::Block
                } else {
                    GuardSeverity::Warn
                },
                finding_type: finding_type(finding.kind)?,
                file: path.clone(),
                line: finding.line,
                message: finding.message,
                pattern: finding.pattern,
            })
        })
        .collect::<Result<Vec<_>, DecodeError>>()?;
    Ok(FileFacts {
        path: path.clone(),
        language,
        content_hash,
        lossy_utf8: wire.lossy_utf8,
        original_tokens: TokenCount(wire.original_tokens),
        transformed_tokens: TokenCount(wire.transformed_tokens),
        transforms_applied: wire.transforms_applied,
        guard: FileGuardOutcome {
            findings,
            blocked: wire.blocked,
            redacted: None,
            secrets_redacted: wire.secrets_redacted,
        },
        line_map: LineMap::from_runs(wire.line_map),
        definitions: wire
            .definitions
            .into_iter()
            .map(|d| {
                let [start, header_start, header_end, doc_end, end] = d.lines;
                Ok(Definition {
                    name: d.name,
                    kind: match d.kind {
                        0 => DefinitionKind::Function,
                        1 => DefinitionKind::Type,
                        2 => DefinitionKind::Section,
                        _ => return Err(DecodeError),
                    },
                    start,
                    header_start,
                    header_end,
                    doc_end,
                    end,
                    parent: d.parent,
                })
            })
            .collect::<Result<Vec<_>, DecodeError>>()?,
        renders: wire.renders.map(|render| {
            render.map(|(body, tokens)| TierRender {
                body,
                block_tokens: TokenCount(tokens),
            })
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::default_facts as computed;

    #[test]
    fn facts_round_trip_through_the_wire() {
        let key = concat!("AKIA", "IOSFODNN7", "EXAMPLE");
        let source = format!(
            "/// Loads the config.\npub fn load() -> u32 {{ 1 }}\nconst KEY: &str = \"{key}\";\n"
        );
        let facts = computed("src/config.rs", source.as_bytes());
        assert!(facts.guard.secrets_redacted);
        assert_eq!(
            facts.definitions[0].name, "load",
            "the definition index travels too"
        );
        let bytes = encode_facts(&facts);
        let decoded =
            decode_facts(&bytes, &facts.path, facts.language, facts.content_hash).unwrap();
        assert_eq!(decoded, facts);
        assert!(
            !String::from_utf8_lossy(&bytes).contains(key),
            "no secret in the row"
        );
    }

    #[test]
    fn blocked_facts_round_trip() {
        let facts = computed("keys/id_rsa", b"TOKEN=abc\n");
        assert!(facts.guard.blocked);
        let bytes = encode_facts(&facts);
        let decoded =
            decode_facts(&bytes, &facts.path, facts.language, facts.content_hash).unwrap();
        assert_eq!(decoded, facts);
    }

    #[test]
    fn scan_and_imports_round_trip() {
        let scan = ScanTerms {
            symbol_terms: vec!["load".to_owned(), "config".to_owned()].into(),
            name_ids: vec![7, 42].into(),
            term_stats: TermStats::of("src/a.rs", "fn load_config() {}"),
        };
        assert_eq!(decode_scan(&encode_scan(&scan)).unwrap(), scan);
        let imports = vec![ImportRef {
            source: "./model".to_owned(),
            symbols: vec!["User".to_owned()],
            is_relative: true,
            kind: crate::lang::ImportKind::Import,
        }];
        assert_eq!(decode_imports(&encode_imports(&imports)).unwrap(), imports);
    }

    #[test]
    fn damaged_or_foreign_rows_do_not_decode() {
        let facts = computed("src/a.rs", b"fn a() {}\n");
        let bytes = encode_facts(&facts);
        let path = &facts.path;
        for bad in [
            &bytes[..bytes.len() / 2],
            &[][..],
            &[WIRE_VERSION + 1, 0, 0][..],
        ] {
            assert!(decode_facts(bad, path, facts.language, facts.content_hash).is_err());
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_facts(&longer, path, facts.language, facts.content_hash).is_err());
        assert!(decode_scan(&bytes).is_err() || decode_imports(&bytes).is_err());
    }
}
