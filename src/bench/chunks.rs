//! The `chunk-bm25` baseline: the prompt a plain retriever would build at
//! the same budget, to measure aic's [edit sites](crate::bench::edit_sites)
//! against.
//!
//! Every text file of the checkout (binary files, those with a NUL byte in
//! their first 8 KiB, and files over 1 MiB are left out, as `bm25` does) is
//! cut into *definition-sized chunks* ([`chunk_lines`]): a chunk starts at
//! a line that opens a definition ([`is_definition_start`]; decorator lines
//! `@…` right above it join it) and runs to the next one; the lines before
//! the first definition are a chunk of their own; a chunk over
//! [`MAX_CHUNK_LINES`] lines is split into pieces of that many; chunks of
//! blank lines only are dropped.
//!
//! Each chunk is shown under a one-line header `path:first-last` (1-based
//! lines), and scored with BM25 (as the `bm25` baseline: k1 = 1.2,
//! b = 0.75, the intent's distinct terms) as a document of its header's path
//! terms and its text's terms, the chunks of the whole checkout being the
//! collection. Chunks with a positive score are taken best first (ties: path,
//! then first line) and packed whole: a chunk whose header and text (exact
//! cl100k tokens) do not fit in what is left of the budget is skipped and
//! the next one tried. The packed chunks of a file, in line order, are that
//! file's block when edit sites are measured.

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use aic_stages::fit::tokens::TokenCounter;

use crate::bench::baselines::{self, Query};

/// The most lines a chunk has; a longer run between two definitions is cut
/// into pieces of this many lines.
pub const MAX_CHUNK_LINES: usize = 200;

/// Words that may stand before what a line defines (`export default async
/// function`, `pub(crate) fn`, `static async method() {`).
const MODIFIERS: [&str; 20] = [
    "export",
    "default",
    "declare",
    "abstract",
    "async",
    "pub",
    "pub(crate)",
    "pub(super)",
    "unsafe",
    "extern",
    "public",
    "private",
    "protected",
    "static",
    "override",
    "readonly",
    "final",
    "get",
    "set",
    "*",
];

/// Keywords that open a definition, after the modifiers.
const DEFINITION_KEYWORDS: [&str; 14] = [
    "def ",
    "class ",
    "function ",
    "function*",
    "fn ",
    "func ",
    "impl ",
    "impl<",
    "struct ",
    "interface ",
    "trait ",
    "enum ",
    "type ",
    "mod ",
];

/// Words followed by `(` that are not a method's name.
const NOT_METHOD_NAMES: [&str; 14] = [
    "if", "for", "while", "switch", "catch", "with", "return", "function", "else", "do", "try",
    "await", "typeof", "super",
];

/// Whether `line` opens a definition: after its indentation and any
/// modifiers (`export`, `default`, `async`, `pub`, `static`, `get`, …), it starts with `def `, `class `, `function `, `fn `,
/// `func `, `impl `, `struct `, `interface `, `trait `, `enum `, `type ` or
/// `mod `; or it assigns a function (`const name = (…) =>`, `let name =
/// function`); or it is a method (`name(…) {`, `name<T>(…): T {`: a name
/// that is not a control keyword, then `(`, and the line ends with `{`
/// without an `=>` on it). Calls followed by a block (`foo(() => {`) and
/// C-style functions (`int main(void) {`) are not recognised.
pub fn is_definition_start(line: &str) -> bool {
    let mut rest = line.trim_start();
    'modifiers: loop {
        for modifier in MODIFIERS {
            if let Some(after) = rest.strip_prefix(modifier)
                && after.starts_with(' ')
            {
                rest = after.trim_start();
                continue 'modifiers;
            }
        }
        break;
    }
    // `type = 1` is an assignment, not a definition.
    let names = |after: &str| !after.starts_with(['=', ':', ',', ')', '.']);
    if DEFINITION_KEYWORDS
        .iter()
        .any(|k| rest.strip_prefix(k).is_some_and(names))
    {
        return true;
    }
    for declaration in ["const ", "let ", "var "] {
        if let Some(after) = rest.strip_prefix(declaration) {
            return after.split_once('=').is_some_and(|(name, value)| {
                let value = value.trim_start();
                !name.contains('(')
                    && !value.starts_with('=')
                    && (value.contains("=>")
                        || value.starts_with("function")
                        || value.starts_with("async"))
            });
        }
    }
    is_method_start(rest)
}

/// `name(…) {` / `name<T>(…): T {` / `#name(…) {`: the parameters close
/// on the line, and only a `{` or a return type and `{` follow them (see
/// [`is_definition_start`]).
fn is_method_start(rest: &str) -> bool {
    let trimmed = rest.trim_end();
    if !trimmed.ends_with('{') || trimmed.contains("=>") {
        return false;
    }
    let name_length = rest
        .char_indices()
        .find(|(i, c)| !(c.is_alphanumeric() || *c == '_' || *c == '$' || (*i == 0 && *c == '#')))
        .map_or(rest.len(), |(i, _)| i);
    let name = &rest[..name_length];
    if name.is_empty()
        || name.starts_with(|c: char| c.is_ascii_digit())
        || NOT_METHOD_NAMES.contains(&name)
    {
        return false;
    }
    let mut after = rest[name_length..].trim_start_matches('?');
    if after.starts_with('<') {
        let Some(close) = after.find('>') else {
            return false;
        };
        after = &after[close + 1..];
    }
    if !after.starts_with('(') {
        return false;
    }
    let after = after.trim_end();
    after.rfind(')').is_some_and(|close| {
        let tail = after[close + 1..].trim_start();
        tail == "{" || tail.starts_with(':')
    })
}

/// The chunks of a file's `lines`, as 0-based line ranges in order (see the
/// module docs); every line is in exactly one range, blank-only chunks
/// included (the caller drops them).
pub fn chunk_lines(lines: &[&str]) -> Vec<Range<usize>> {
    let mut starts = vec![0];
    for (index, line) in lines.iter().enumerate().skip(1) {
        if !is_definition_start(line) {
            continue;
        }
        let current = starts.last().copied().unwrap_or(0);
        let mut start = index;
        while start > current && lines[start - 1].trim_start().starts_with('@') {
            start -= 1;
        }
        if start > current {
            starts.push(start);
        }
    }
    let mut chunks = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(lines.len());
        let mut piece = start;
        while piece < end {
            let piece_end = (piece + MAX_CHUNK_LINES).min(end);
            chunks.push(piece..piece_end);
            piece = piece_end;
        }
    }
    chunks
}

/// One chunk of a file, by line range.
#[derive(Clone, Debug)]
struct Chunk {
    /// Index into [`ChunkIndex::files`].
    file: usize,
    /// 0-based line range.
    lines: Range<usize>,
}

/// A file's text and where its lines start.
#[derive(Clone, Debug)]
struct FileText {
    path: String,
    text: String,
    /// Byte offset of each line's start, then the text's length.
    line_starts: Vec<usize>,
}

impl FileText {
    fn new(path: String, text: String) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.match_indices('\n')
                .map(|(i, _)| i + 1)
                .filter(|&i| i < text.len()),
        );
        line_starts.push(text.len());
        Self {
            path,
            text,
            line_starts,
        }
    }

    fn line_count(&self) -> usize {
        self.line_starts.len() - 1
    }

    fn slice(&self, lines: &Range<usize>) -> &str {
        &self.text[self.line_starts[lines.start]..self.line_starts[lines.end]]
    }
}

/// A checkout's chunks ranked for one intent, ready to pack at any budget
/// (each chunk's token count is computed once, when packing first reaches it).
#[derive(Debug)]
pub struct ChunkIndex {
    files: Vec<FileText>,
    /// Chunks with a positive score, best first.
    ranked: Vec<Chunk>,
    /// Tokens of each ranked chunk with its header.
    costs: Vec<OnceCell<u64>>,
}

/// Packed chunks: the baseline's prompt at one budget.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Packed {
    /// Tokens of the headers and chunks packed (cl100k), at most the budget.
    pub tokens: u64,
    /// Chunks packed.
    pub chunks: usize,
    /// Per file, the lines of its packed chunks in line order.
    pub blocks: BTreeMap<String, Vec<String>>,
}

impl ChunkIndex {
    /// Reads and chunks `files` (paths relative to `root`) and ranks the
    /// chunks for `intent`.
    pub fn build(root: &Path, files: &[String], intent: &str) -> Self {
        let query = Query::new(intent);
        let files: Vec<FileText> = files
            .iter()
            .filter_map(|path| {
                baselines::readable_text(&root.join(path))
                    .map(|text| FileText::new(path.clone(), text))
            })
            .collect();
        let mut chunks = Vec::new();
        let mut docs = Vec::new();
        for (index, file) in files.iter().enumerate() {
            let lines: Vec<&str> = (0..file.line_count())
                .map(|i| file.slice(&(i..i + 1)))
                .collect();
            let path_terms = baselines::terms(&file.path);
            for range in chunk_lines(&lines) {
                let text = file.slice(&range);
                if text.trim().is_empty() {
                    continue;
                }
                let mut terms = path_terms.clone();
                terms.extend(baselines::terms(text));
                docs.push(query.document(&terms));
                chunks.push(Chunk {
                    file: index,
                    lines: range,
                });
            }
        }
        let mut scored: Vec<(f64, Chunk)> = baselines::bm25_scores(&query, &docs)
            .into_iter()
            .zip(chunks)
            .filter(|(score, _)| *score > 0.0)
            .collect();
        scored.sort_by(|(a, x), (b, y)| {
            b.total_cmp(a)
                .then_with(|| files[x.file].path.cmp(&files[y.file].path))
                .then_with(|| x.lines.start.cmp(&y.lines.start))
        });
        let ranked: Vec<Chunk> = scored.into_iter().map(|(_, chunk)| chunk).collect();
        Self {
            costs: (0..ranked.len()).map(|_| OnceCell::new()).collect(),
            files,
            ranked,
        }
    }

    /// Chunks with a positive score.
    pub fn len(&self) -> usize {
        self.ranked.len()
    }

    /// Whether no chunk scored.
    pub fn is_empty(&self) -> bool {
        self.ranked.is_empty()
    }

    /// A ranked chunk as packed: `path:first-last` and its text, ending
    /// with a newline.
    fn render(&self, chunk: &Chunk) -> String {
        let file = &self.files[chunk.file];
        let mut text = format!(
            "{}:{}-{}\n{}",
            file.path,
            chunk.lines.start + 1,
            chunk.lines.end,
            file.slice(&chunk.lines)
        );
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text
    }

    /// Packs the best chunks whole into `budget` tokens (see the module docs).
    pub fn pack(&self, budget: u64) -> Packed {
        let mut used = 0;
        let mut taken: Vec<&Chunk> = Vec::new();
        for (chunk, cost) in self.ranked.iter().zip(&self.costs) {
            // A header alone is more than two tokens.
            if budget - used <= 2 {
                break;
            }
            let cost = *cost.get_or_init(|| {
                TokenCounter::cl100k()
                    .count_lines(&self.render(chunk))
                    .get()
            });
            if used + cost <= budget {
                used += cost;
                taken.push(chunk);
            }
        }
        taken.sort_by_key(|chunk| (chunk.file, chunk.lines.start));
        let mut blocks: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for chunk in &taken {
            let file = &self.files[chunk.file];
            blocks
                .entry(file.path.clone())
                .or_default()
                .extend(file.slice(&chunk.lines).lines().map(str::to_owned));
        }
        Packed {
            tokens: used,
            chunks: taken.len(),
            blocks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_definition_starts() {
        for line in [
            "def f(x):",
            "    async def g():",
            "class Rule(BaseRule):",
            "export default async function build(config) {",
            "export const resolve = async (id: string) => {",
            "const handler = function (req) {",
            "  async transform(code, id) {",
            "  private static parse<T>(text: string): T {",
            "  #secret() {",
            "pub(crate) fn run() -> Result<()> {",
            "impl<T> Display for Wrapper<T> {",
            "func (s *Server) Serve() error {",
            "export interface Options {",
        ] {
            assert!(is_definition_start(line), "{line}");
        }
        for line in [
            "    if (x) {",
            "  } else if (y) {",
            "  foo(() => {",
            "  describe('x', () => {",
            "  return build({",
            "const total = a + b",
            "x = compute(y)",
            "  app.use(function (req) {",
            "    for (const x of xs) {",
            "    result = compute({",
            "    print(render({",
            "type = 'text'",
        ] {
            assert!(!is_definition_start(line), "{line}");
        }
    }

    #[test]
    fn chunks_at_definitions_with_their_decorators() {
        let text = "import os\n\n@cache\n@wraps(f)\ndef f():\n    return 1\n\nclass A:\n    def m(self):\n        pass\n";
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(chunk_lines(&lines), vec![0..2, 2..7, 7..8, 8..10]);
        let long: Vec<String> = (0..450).map(|i| format!("x{i} = {i}")).collect();
        let long: Vec<&str> = long.iter().map(String::as_str).collect();
        assert_eq!(chunk_lines(&long), vec![0..200, 200..400, 400..450]);
    }

    #[test]
    fn packs_the_best_chunks_whole_into_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(
            dir.path().join("parser.py"),
            "import re\n\ndef parse_tokens(text):\n    return re.split(' ', text)\n\ndef other():\n    return 2\n",
        )
        .unwrap();
        fs_err::write(dir.path().join("blob.bin"), b"tokens\0parse").unwrap();
        let files = vec!["blob.bin".to_owned(), "parser.py".to_owned()];
        let index = ChunkIndex::build(dir.path(), &files, "parse tokens");
        assert_eq!(index.len(), 1, "only `parse_tokens` has the terms");
        // With `parser`, every chunk of parser.py scores by its path.
        let index = ChunkIndex::build(dir.path(), &files, "parse tokens in the parser");
        assert_eq!(index.len(), 3);
        let best = index.render(&index.ranked[0]);
        assert!(
            best.starts_with("parser.py:3-5\ndef parse_tokens"),
            "{best}"
        );
        let cost = TokenCounter::cl100k().count(&best).get();
        let packed = index.pack(cost);
        assert_eq!(packed.tokens, cost);
        assert_eq!(packed.chunks, 1);
        assert_eq!(
            packed.blocks["parser.py"],
            [
                "def parse_tokens(text):",
                "    return re.split(' ', text)",
                ""
            ]
        );
        let everything = index.pack(10_000);
        assert_eq!(everything.chunks, 3);
        assert_eq!(everything.blocks["parser.py"].len(), 7);
        let smaller = index.pack(cost - 1);
        assert!(smaller.chunks >= 1, "the best is skipped, not the rest");
        assert!(
            !smaller.blocks["parser.py"].contains(&"def parse_tokens(text):".to_owned()),
            "{smaller:?}"
        );
    }
}
