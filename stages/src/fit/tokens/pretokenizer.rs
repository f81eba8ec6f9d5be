//! `cl100k_base`'s pre-tokenizer for ASCII text, without a regular
//! expression.
//!
//! The encoding first cuts text into pieces with one pattern (contractions;
//! an optional mark and a run of letters; up to three digits; an optional
//! space and a run of punctuation with the line breaks after it; runs of
//! whitespace), then encodes each piece on its own. `bpe-openai` finds each
//! piece with a lazy DFA behind a shared cache pool; on 2 cores that search
//! and the pool's hand-offs were about a tenth of `aic precompute`'s CPU
//! samples, and cutting by hand saved 7 % of its CPU on babel.
//! Code is almost all ASCII, where every class of the pattern is a test on
//! one byte, so ASCII text is cut here by hand, with the pattern's
//! leftmost-first choice spelt out in [`piece_end`]. Text with any other
//! byte goes to the regular expression (a letter outside ASCII can join a
//! run of ASCII letters, so the choice is made per text, not per byte).
//!
//! The unit tests compare every piece with `bpe-openai`'s on generated text
//! built from the bytes where the pattern's branches meet, and
//! `tests/tokens.rs` compares whole counts with `tiktoken-rs` on every file
//! of the dependency sources.

/// The pieces of `text`, in order; concatenated they are `text`.
///
/// `text` must be ASCII (checked by the caller, [`super::count_pieces`]);
/// the pieces are then exactly those of `cl100k_base`'s pre-tokenizer.
pub(super) fn ascii_pieces(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    debug_assert!(text.is_ascii());
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let end = piece_end(text, start);
        let piece = &text[start..end];
        start = end;
        Some(piece)
    })
}

/// Where the piece starting at `start` ends (exclusive); `start <
/// text.len()`, and the piece is never empty.
///
/// The branches are tried in the pattern's order, each as greedy as the
/// pattern's quantifiers, so the first that matches is the piece:
/// 1. `'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d` in either case;
/// 2. an optional byte that is not a letter, digit, `\r` or `\n`, then a
///    run of letters (a letter here starts the run);
/// 3. one to three digits;
/// 4. an optional space, a run of bytes that are neither whitespace, letters
///    nor digits, then any `\r` and `\n`;
/// 5. whitespace up to and including its last `\r` or `\n`;
/// 6. whitespace up to the end of the text;
/// 7. a run of two or more whitespace bytes but its last (which then starts
///    the next piece, joined to what follows it);
/// 8. a single whitespace byte.
fn piece_end(text: &[u8], start: usize) -> usize {
    let byte = text[start];
    let at = |index: usize| text.get(index).copied();
    let lower_at = |index: usize| at(index).map(|byte| byte.to_ascii_lowercase());
    if byte == b'\'' {
        match lower_at(start + 1) {
            Some(b's' | b't' | b'm' | b'd') => return start + 2,
            Some(b'r' | b'v') if lower_at(start + 2) == Some(b'e') => return start + 3,
            Some(b'l') if lower_at(start + 2) == Some(b'l') => return start + 3,
            _ => {}
        }
    }
    if byte.is_ascii_alphabetic() {
        return run_end(text, start, |byte| byte.is_ascii_alphabetic());
    }
    if !byte.is_ascii_digit()
        && !matches!(byte, b'\r' | b'\n')
        && at(start + 1).is_some_and(|next| next.is_ascii_alphabetic())
    {
        return run_end(text, start + 1, |byte| byte.is_ascii_alphabetic());
    }
    if byte.is_ascii_digit() {
        return run_end(text, start, |byte| byte.is_ascii_digit()).min(start + 3);
    }
    let marks = if byte == b' ' { start + 1 } else { start };
    if at(marks).is_some_and(is_mark) {
        let end = run_end(text, marks, is_mark);
        return run_end(text, end, |byte| matches!(byte, b'\r' | b'\n'));
    }
    // Only whitespace is left: letters, digits and marks have returned.
    let end = run_end(text, start, is_whitespace);
    if let Some(last_break) = text[start..end]
        .iter()
        .rposition(|&byte| matches!(byte, b'\r' | b'\n'))
    {
        return start + last_break + 1;
    }
    if end == text.len() || end - start < 2 {
        return end;
    }
    end - 1
}

/// The end of the run of bytes from `start` that `class` accepts.
fn run_end(text: &[u8], start: usize, class: impl Fn(u8) -> bool) -> usize {
    text[start..]
        .iter()
        .position(|&byte| !class(byte))
        .map_or(text.len(), |offset| start + offset)
}

/// Whitespace as the pattern's `\s` has it in ASCII: tab, line feed,
/// vertical tab, form feed, carriage return and space (Unicode's
/// `White_Space`, which unlike [`u8::is_ascii_whitespace`] includes the
/// vertical tab).
fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ')
}

/// A byte of the pattern's `[^\s\p{L}\p{N}]` in ASCII: punctuation and
/// control bytes.
fn is_mark(byte: u8) -> bool {
    !is_whitespace(byte) && !byte.is_ascii_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    /// The pieces `bpe-openai`'s regular expression cuts `text` into.
    fn reference(text: &str) -> Vec<&str> {
        bpe_openai::cl100k_base().split(text).collect()
    }

    fn ours(text: &str) -> Vec<&str> {
        ascii_pieces(text.as_bytes())
            .map(|piece| std::str::from_utf8(piece).expect("ASCII"))
            .collect()
    }

    /// Generated text where the branches meet: apostrophes before the
    /// contraction letters, every kind of whitespace, digits, marks,
    /// control bytes, all in short runs.
    #[test]
    fn generated_ascii_text_is_cut_like_the_regular_expression() {
        const ALPHABET: &[u8] = b"'''sStTrReEvVlLmMdDaZ0123456789    \t\t\n\n\r\x0B\x0C.,;(){}-_/\\\"#@!\x00\x01\x1F\x7F";
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut texts = 0;
        for length in (1..=40).cycle().take(60_000) {
            let text: String = (0..length)
                .map(|_| char::from(ALPHABET[rng.below(ALPHABET.len())]))
                .collect();
            assert_eq!(ours(&text), reference(&text), "{text:?}");
            texts += 1;
        }
        assert_eq!(texts, 60_000);
    }

    /// Real code, prose and whitespace shapes, cut alike.
    #[test]
    fn source_text_is_cut_like_the_regular_expression() {
        for text in [
            include_str!("../tokens.rs"),
            include_str!("pretokenizer.rs"),
            include_str!("../../facts.rs"),
            "I'll say it's 'REALLY' done; we've 12345 items.\r\n\r\n  \n",
            "  leading spaces then   trailing   ",
            "\t\tfn main() {\n\t\treturn;\n\t}\n\n\n",
            "a\x0B\x0Cb \x0Bc",
            "''s'''t'LL'Re'vE x'y",
        ] {
            // The sources' few dashes and arrows made ASCII.
            let text: String = text
                .chars()
                .map(|c| if c.is_ascii() { c } else { '~' })
                .collect();
            assert_eq!(ours(&text), reference(&text));
        }
    }
}
