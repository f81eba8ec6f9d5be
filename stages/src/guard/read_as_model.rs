//! Text read as a model reads it: invisible characters dropped, Unicode tag
//! characters decoded, and letters that look like ASCII letters read as those
//! letters, so that an override phrase hidden in any of these ways is matched
//! like a plain one.
//!
//! The model: [`ReadAsModel::new`] builds a second copy of a file's text for
//! matching only — the file itself is never rewritten — and remembers, per
//! line, what reading it this way changed. Line breaks are never added or
//! removed, so a line of the copy is the same line of the file.
//!
//! Look-alike letters are read in two ways:
//!
//! - by their Unicode compatibility form (NFKC), when that is ASCII:
//!   full-width letters (`ｉｇｎｏｒｅ`), mathematical alphanumerics (bold,
//!   italic, script, double-struck, …), circled and parenthesised letters,
//!   ligatures (`ﬁ`), the no-break and other wide spaces;
//! - by the table `stages/rules/injection/confusables.txt`: Cyrillic, Greek,
//!   Armenian and Latin-extension letters that pass for ASCII ones (`о`, `е`,
//!   `а`, `і`, `ј`, `ѕ`, `ԁ`, `ո`, …), which NFKC leaves alone.
//!
//! Left out: accents (`ì` stays `ì`: a phrase with diacritics is not matched),
//! letters that only resemble an ASCII one in some fonts, and whole words in
//! another script (a Russian text read this way is no English phrase).

use std::sync::LazyLock;

/// The look-alike table as written: `U+0430 a CYRILLIC SMALL LETTER A`.
const CONFUSABLES: &str = include_str!("../../rules/injection/confusables.txt");

/// The look-alike table, sorted by character for binary search.
static TABLE: LazyLock<Vec<(char, char)>> = LazyLock::new(|| parse(CONFUSABLES));

/// The first code point of [`DIRECT`].
const DIRECT_START: u32 = 0x0100;

/// The table's letters for `U+0100`–`U+05FF` (Latin extensions, Greek,
/// Cyrillic, Armenian: where a text may hold one per character), indexed by
/// code point: `0` where there is none.
static DIRECT: LazyLock<[u8; 0x500]> = LazyLock::new(|| {
    let mut direct = [0; 0x500];
    for &(from, to) in TABLE.iter() {
        if let Some(slot) = u32::from(from)
            .checked_sub(DIRECT_START)
            .and_then(|index| direct.get_mut(index as usize))
        {
            *slot = to as u8;
        }
    }
    direct
});

/// Parses the table: per line that is not blank or a comment, a code point
/// (`U+0430`) and the ASCII letter it is read as. A line that does not parse
/// is skipped (the unit tests check that every line parses).
fn parse(text: &str) -> Vec<(char, char)> {
    let mut table: Vec<(char, char)> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(parse_line)
        .collect();
    table.sort_unstable();
    table
}

/// One line of the table: the character and its ASCII letter.
fn parse_line(line: &str) -> Option<(char, char)> {
    let mut fields = line.split_whitespace();
    let code = fields.next()?.strip_prefix("U+")?;
    let from = char::from_u32(u32::from_str_radix(code, 16).ok()?)?;
    let mut to = fields.next()?.chars();
    let letter = to.next().filter(char::is_ascii_alphabetic)?;
    (to.next().is_none() && !from.is_ascii()).then_some((from, letter))
}

/// What reading a line as a model does changed on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LineChanges {
    /// Invisible characters were dropped or tag characters decoded.
    pub(crate) invisible: bool,
    /// Look-alike letters were read as ASCII letters.
    pub(crate) lookalike: bool,
    /// How many Unicode tag characters were decoded to ASCII (text hidden
    /// as "ASCII smuggling"), up to `u16::MAX`.
    pub(crate) tags: u16,
}

/// A text as a model reads it (see the [module docs](self)).
#[derive(Debug)]
pub(crate) struct ReadAsModel {
    /// The text read that way.
    pub(crate) text: String,
    /// Per one-based line (index `line - 1`), what changed on it.
    changes: Vec<LineChanges>,
}

impl ReadAsModel {
    /// `content` read as a model reads it, or `None` when that can reveal
    /// nothing (see [`worth_reading`]): most files cost one pass over their
    /// characters.
    pub(crate) fn new(content: &str) -> Option<Self> {
        if content.is_ascii() || !worth_reading(content) {
            return None;
        }
        let mut text = String::with_capacity(content.len());
        let mut changes = vec![LineChanges::default()];
        let mut line = LineChanges::default();
        for c in content.chars() {
            match c {
                '\n' => {
                    if let Some(last) = changes.last_mut() {
                        *last = line;
                    }
                    changes.push(LineChanges::default());
                    line = LineChanges::default();
                    text.push(c);
                }
                c if c.is_ascii() => text.push(c),
                '\u{E0020}'..='\u{E007E}' => {
                    text.extend(char::from_u32(u32::from(c) - 0xE0000));
                    line.invisible = true;
                    line.tags = line.tags.saturating_add(1);
                }
                c if is_invisible(c) => line.invisible = true,
                c => {
                    if fold_into(c, &mut text) {
                        line.lookalike = true;
                    } else {
                        text.push(c);
                    }
                }
            }
        }
        if let Some(last) = changes.last_mut() {
            *last = line;
        }
        Some(Self { text, changes })
    }

    /// What changed on one-based line `number`.
    pub(crate) fn changes(&self, number: u32) -> LineChanges {
        let index = (number as usize).saturating_sub(1);
        self.changes.get(index).copied().unwrap_or_default()
    }
}

/// Whether a character is invisible and has no business inside words:
/// Unicode's default-ignorable code points — zero-width characters, soft
/// hyphen, direction marks and embeddings, the combining grapheme joiner,
/// variation selectors, Hangul fillers — and the tag characters. (None of
/// them is a line break, so dropping them keeps the line numbers.)
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// Whether reading `content` as a model can reveal a phrase: it holds an
/// invisible character, a character whose compatibility form holds an ASCII
/// letter or digit (full-width and mathematical letters: wide spaces and
/// punctuation alone spell no phrase), a word in which a table look-alike
/// sits with ASCII letters (`ign`+Cyrillic `o`+`re`) or with look-alikes of
/// another script, or a word made of look-alikes only next to a word of ASCII
/// letters (`all` spelled in Cyrillic after `ignore`). A text in Russian,
/// Greek or Armenian, whose words keep to their script, is not read again:
/// read as ASCII, its words spell no phrase anyway.
fn worth_reading(content: &str) -> bool {
    let mut word = Word::default();
    let mut previous = WordKind::None;
    for c in content.chars() {
        if c.is_ascii() {
            if c.is_ascii_alphabetic() {
                word.ascii = true;
            } else if !c.is_ascii_digit() && word.end(&mut previous) {
                return true;
            }
            continue;
        }
        let script = script(c);
        if script == Script::Other {
            if is_invisible(c) {
                return true;
            }
            if c.is_whitespace() {
                if word.end(&mut previous) {
                    return true;
                }
                continue;
            }
        }
        if matches!(script, Script::Other | Script::Latin) {
            let mut alphanumeric = false;
            if compatibility_ascii(c, |d| alphanumeric |= d.is_ascii_alphanumeric()) && alphanumeric
            {
                return true;
            }
        }
        if table_letter(c).is_some() {
            word.lookalikes |= script as u8;
        } else {
            word.other = true;
        }
    }
    word.end(&mut previous)
}

/// What the word being read holds, for [`worth_reading`].
#[derive(Clone, Copy, Debug, Default)]
struct Word {
    /// ASCII letters.
    ascii: bool,
    /// The scripts of its table look-alikes.
    lookalikes: u8,
    /// Other characters: letters that are no look-alike, symbols.
    other: bool,
}

/// What a finished word was, for [`worth_reading`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WordKind {
    /// No word yet, or no letter in it.
    None,
    /// ASCII letters only.
    Ascii,
    /// Table look-alikes only.
    Lookalikes,
    /// Anything else.
    Other,
}

impl Word {
    /// Ends the word: whether it, or it with the word before (`previous`,
    /// updated), can hide a phrase.
    fn end(&mut self, previous: &mut WordKind) -> bool {
        let word = std::mem::take(self);
        if word.lookalikes != 0 && (word.ascii || word.lookalikes.count_ones() > 1) {
            return true;
        }
        let kind = match (word.ascii, word.lookalikes != 0, word.other) {
            (false, false, false) => return false,
            (true, false, false) => WordKind::Ascii,
            (false, true, false) => WordKind::Lookalikes,
            _ => WordKind::Other,
        };
        let hides = matches!(
            (*previous, kind),
            (WordKind::Ascii, WordKind::Lookalikes) | (WordKind::Lookalikes, WordKind::Ascii)
        );
        *previous = kind;
        hides
    }
}

/// The script of a character, as far as mixing look-alikes goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Script {
    Latin = 1,
    Greek = 2,
    Cyrillic = 4,
    Armenian = 8,
    Other = 16,
}

/// The script of `c` by Unicode block ([`Script::Other`] outside the four).
fn script(c: char) -> Script {
    match c {
        'A'..='Z' | 'a'..='z' | '\u{00C0}'..='\u{02AF}' | '\u{1D00}'..='\u{1DBF}' => Script::Latin,
        '\u{0370}'..='\u{03FF}' | '\u{1F00}'..='\u{1FFF}' => Script::Greek,
        '\u{0400}'..='\u{052F}' | '\u{1C80}'..='\u{1C8F}' => Script::Cyrillic,
        '\u{0530}'..='\u{058F}' => Script::Armenian,
        _ => Script::Other,
    }
}

/// Appends the ASCII that a look-alike `c` is read as to `out`: its table
/// letter, else its compatibility form when that is printable ASCII without a
/// line break. Returns whether `c` was a look-alike (nothing is appended
/// otherwise).
fn fold_into(c: char, out: &mut String) -> bool {
    if let Some(letter) = table_letter(c) {
        out.push(letter);
        return true;
    }
    let mut folded = String::new();
    if compatibility_ascii(c, |d| folded.push(d)) {
        out.push_str(&folded);
        return true;
    }
    false
}

/// The table's ASCII letter for `c`.
fn table_letter(c: char) -> Option<char> {
    if let Some(&letter) = u32::from(c)
        .checked_sub(DIRECT_START)
        .and_then(|index| DIRECT.get(index as usize))
    {
        return (letter != 0).then_some(char::from(letter));
    }
    let table = &*TABLE;
    if table.last().is_none_or(|&(last, _)| c > last) {
        return None;
    }
    table
        .binary_search_by_key(&c, |&(from, _)| from)
        .ok()
        .and_then(|index| table.get(index))
        .map(|&(_, to)| to)
}

/// Whether the compatibility decomposition of a non-ASCII `c` is printable
/// ASCII (spaces included, line breaks and other controls not); `emit`
/// receives its characters when it is. Only the blocks that hold such
/// characters are looked up (Latin-1 and the Latin extensions, phonetic
/// letters, punctuation, super- and subscripts, letterlike symbols, number
/// forms, enclosed alphanumerics, CJK compatibility, ligatures, half- and
/// full-width forms, mathematical alphanumerics): a CJK ideograph or a
/// Cyrillic letter costs one comparison.
fn compatibility_ascii(c: char, mut emit: impl FnMut(char)) -> bool {
    let candidate = matches!(
        c,
        '\u{00A0}'..='\u{02FF}'
            | '\u{1D00}'..='\u{1DBF}'
            | '\u{2000}'..='\u{24FF}'
            | '\u{3000}'
            | '\u{3200}'..='\u{33FF}'
            | '\u{FB00}'..='\u{FB06}'
            | '\u{FE10}'..='\u{FE6F}'
            | '\u{FF00}'..='\u{FFEF}'
            | '\u{1D400}'..='\u{1D7FF}'
            | '\u{1F100}'..='\u{1F1FF}'
            | '\u{1FBF0}'..='\u{1FBF9}'
    );
    if !candidate {
        return false;
    }
    let mut ascii = true;
    let mut decomposed = ['\0'; 18];
    let mut length = 0;
    unicode_normalization::char::decompose_compatible(c, |d| {
        ascii &= d.is_ascii() && (d == ' ' || d.is_ascii_graphic());
        if let Some(slot) = decomposed.get_mut(length) {
            *slot = d;
        }
        length += 1;
    });
    let ascii = ascii && length > 0 && length <= decomposed.len() && !c.is_ascii();
    if ascii {
        decomposed.iter().take(length).for_each(|&d| emit(d));
    }
    ascii
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    #[test]
    fn every_table_line_parses_to_a_distinct_letter() {
        let lines = CONFUSABLES
            .lines()
            .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
            .count();
        let table = parse(CONFUSABLES);
        assert_eq!(table.len(), lines);
        assert!(table.windows(2).all(|pair| pair[0].0 < pair[1].0));
        assert!(lines >= 70, "{lines}");
    }

    /// Each case is built from an ASCII word by swapping letters, so this
    /// file holds no look-alike text.
    #[test_case('\u{043E}', "o")]
    #[test_case('\u{0435}', "e")]
    #[test_case('\u{0456}', "i")]
    #[test_case('\u{0578}', "n")]
    #[test_case('\u{FF49}', "i")]
    #[test_case('\u{1D422}', "i")]
    #[test_case('\u{1D4F8}', "o")]
    #[test_case('\u{24D8}', "i")]
    #[test_case('\u{FB01}', "fi")]
    #[test_case('\u{00A0}', " ")]
    fn lookalikes_are_read_as_ascii(c: char, ascii: &str) {
        let mut out = String::new();
        assert!(fold_into(c, &mut out), "{:04X}", u32::from(c));
        assert_eq!(out, ascii);
    }

    #[test_case('\u{00E9}')]
    #[test_case('\u{4E2D}')]
    #[test_case('\u{AC00}')]
    #[test_case('\u{0431}')]
    #[test_case('\u{2028}')]
    #[test_case('\u{00BD}')]
    fn other_letters_are_kept(c: char) {
        let mut out = String::new();
        assert!(!fold_into(c, &mut out), "{:04X}", u32::from(c));
        assert!(out.is_empty());
    }

    /// Words that keep to their script are not read again; a look-alike
    /// among letters of another script, an invisible character or a
    /// full-width letter is.
    #[test_case("\u{0432}\u{043E}\u{0434}\u{0430} \u{0438} \u{0441}\u{043E}\u{043A}\n", false ; "russian words")]
    #[test_case("\u{03BF} \u{03C7}\u{03C1}\u{03CC}\u{03BD}\u{03BF}\u{03C2}\n", false ; "greek words")]
    #[test_case("\u{8BF4}\u{660E}\u{FF1A}\u{FF08}\u{5168}\u{FF09}\u{3002}\n", false ; "chinese with full-width punctuation")]
    #[test_case("wait\u{2026} caf\u{00E9}\u{00A0}ok\n", false ; "ellipsis accent and no-break space")]
    #[test_case("w\u{043E}rd\n", true ; "cyrillic o in a latin word")]
    #[test_case("\u{0131}t\n", true ; "dotless i in a latin word")]
    #[test_case("word \u{0430}\u{04CF}\u{04CF} word\n", true ; "a word of cyrillic look-alikes among latin words")]
    #[test_case("word \u{0441} \u{0441}\u{043E}\u{043A}\n", true ; "a cyrillic look-alike word after a latin word")]
    #[test_case("\u{0441}\u{043E}\u{043A} \u{0441} \u{0441}\u{043E}\u{043A}\n", false ; "a look-alike word among russian words")]
    #[test_case("\u{0456}\u{0261}\u{0578}\u{043E}\u{0280}\u{0435}\n", true ; "a word of look-alikes from several scripts")]
    #[test_case("\u{FF57}\u{FF4F}\u{FF52}\u{FF44}\n", true ; "full-width letters")]
    #[test_case("zero\u{200B}width\n", true ; "zero-width space")]
    fn only_texts_that_can_hide_a_phrase_are_read_again(text: &str, read: bool) {
        assert_eq!(ReadAsModel::new(text).is_some(), read);
    }

    #[test]
    fn reading_keeps_the_lines_and_says_what_changed() {
        let text = "plain\nw\u{043E}rd\nzero\u{200B}width\n\u{FF41}nd\n";
        let read = ReadAsModel::new(text).unwrap();
        assert_eq!(read.text, "plain\nword\nzerowidth\nand\n");
        assert_eq!(read.changes(1), LineChanges::default());
        assert!(read.changes(2).lookalike && !read.changes(2).invisible);
        assert!(read.changes(3).invisible && !read.changes(3).lookalike);
        assert!(read.changes(4).lookalike);
        assert_eq!(read.changes(9), LineChanges::default());
        assert!(ReadAsModel::new("plain ascii\n").is_none());
        assert!(ReadAsModel::new("caf\u{00E9} \u{4E2D}\u{6587}\n").is_none());
    }
}
