//! A file's term counts in a few bytes per term: what a resident snapshot
//! keeps for every file of a monorepo.
//!
//! A [`term_id`](super::terms::term_id) is a 32-bit hash, so a file's sorted
//! ids are spread over the whole range and their gaps need four bytes each.
//! The process therefore numbers each id it meets, in order of first sight
//! (its vocabulary): a repository's few hundred thousand words get small
//! numbers, and a file's numbers, sorted, have small gaps. A [`TermList`] is
//! those gaps and the counts as LEB128 variable-length integers: a gap under
//! 128 and a count under 128 take a byte each, so a term takes 2–4 bytes
//! instead of the 6 of a [`TermCount`].
//!
//! The numbers are the process's own: which word gets which number depends on
//! the order the files were read in, which parallel walks do not fix. Nothing
//! outside this module sees them: a list is built from and read back as
//! [`TermCount`]s (the cache rows and the saved snapshot hold those, sorted by
//! id), and look-ups are by term id, so every score is the same from run to run.

use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use rustc_hash::FxHashMap;

use super::terms::TermCount;

/// Every term id the process has met, numbered from 0 in order of first
/// sight. It only grows: a number, once given, names the same id for the
/// life of the process (about 12 bytes per distinct word).
#[derive(Default)]
struct Vocabulary {
    /// Term id → number.
    numbers: FxHashMap<u32, u32>,
    /// Number → term id.
    ids: Vec<u32>,
}

fn vocabulary() -> &'static RwLock<Vocabulary> {
    static VOCABULARY: OnceLock<RwLock<Vocabulary>> = OnceLock::new();
    VOCABULARY.get_or_init(RwLock::default)
}

/// The numbers of `terms`' ids, numbering the ids not yet met, paired with
/// their counts, in `terms`' order.
fn numbered(terms: &[TermCount]) -> Vec<(u32, u16)> {
    let mut out = Vec::with_capacity(terms.len());
    {
        // Most ids of a file are known after the first files of a walk: one
        // shared lock per file.
        let known = vocabulary().read().unwrap_or_else(PoisonError::into_inner);
        for term in terms {
            match known.numbers.get(&{ term.id }) {
                Some(&number) => out.push((number, term.count)),
                None => break,
            }
        }
    }
    if out.len() < terms.len() {
        let mut vocabulary = vocabulary().write().unwrap_or_else(PoisonError::into_inner);
        for term in &terms[out.len()..] {
            let next = u32::try_from(vocabulary.ids.len()).unwrap_or(u32::MAX);
            let number = *vocabulary.numbers.entry(term.id).or_insert(next);
            if number == next {
                vocabulary.ids.push(term.id);
            }
            out.push((number, term.count));
        }
    }
    out
}

/// The number of a term id, when the process has met it.
fn number_of(id: u32) -> Option<u32> {
    vocabulary()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .numbers
        .get(&id)
        .copied()
}

/// A file's distinct terms with their counts (see the module documentation
/// for the encoding). Two lists of the same terms and counts are equal, byte
/// for byte, within a process.
#[derive(Clone, PartialEq, Eq)]
pub struct TermList(Arc<[u8]>);

impl Default for TermList {
    fn default() -> Self {
        Self(Arc::from(&[][..]))
    }
}

impl TermList {
    /// The list of `terms`: distinct ids, in any order; a count of 0 is kept
    /// as 0.
    pub fn new(terms: &[TermCount]) -> Self {
        let mut numbered = numbered(terms);
        numbered.sort_unstable_by_key(|&(number, _)| number);
        let mut bytes = Vec::with_capacity(numbered.len() * 3);
        let mut previous = 0_u32;
        for (index, (number, count)) in numbered.into_iter().enumerate() {
            // The first number is written whole, the others as the gap from
            // the one before (numbers are distinct, so a gap is at least 1).
            let gap = if index == 0 {
                number
            } else {
                number - previous
            };
            push_varint(&mut bytes, gap);
            push_varint(&mut bytes, u32::from(count));
            previous = number;
        }
        Self(bytes.into())
    }

    /// The number of distinct terms (read through the list).
    pub fn len(&self) -> usize {
        self.numbered().count()
    }

    /// Whether the file has no terms.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Bytes the encoded list takes (its allocation, header aside).
    pub fn encoded_bytes(&self) -> usize {
        self.0.len()
    }

    /// `(number, count)` of each term, by number.
    fn numbered(&self) -> Numbered<'_> {
        Numbered {
            bytes: &self.0,
            previous: None,
        }
    }

    /// The terms as [`TermCount`]s sorted by id: what the cache rows and the
    /// saved snapshot hold.
    pub fn to_term_counts(&self) -> Vec<TermCount> {
        let mut out: Vec<TermCount> = {
            let vocabulary = vocabulary().read().unwrap_or_else(PoisonError::into_inner);
            self.numbered()
                .map(|(number, count)| TermCount {
                    id: vocabulary.ids[number as usize],
                    count,
                })
                .collect()
        };
        out.sort_unstable_by_key(|term| term.id);
        out
    }

    /// Occurrences of the term with id `id` (0 when absent).
    pub fn frequency(&self, id: u32) -> u16 {
        let Some(wanted) = number_of(id) else {
            return 0;
        };
        for (number, count) in self.numbered() {
            if number >= wanted {
                return if number == wanted { count } else { 0 };
            }
        }
        0
    }

    /// Calls `hit(slot, count)` for each of `query`'s terms the file has,
    /// `slot` being the term's place in the ids the query was made from. The
    /// list is read only as far as the query's last term.
    pub fn for_each_hit(&self, query: &TermQuery, mut hit: impl FnMut(usize, u16)) {
        let mut wanted = query.terms.iter().peekable();
        let Some(&&(mut next, _)) = wanted.peek() else {
            return;
        };
        for (number, count) in self.numbered() {
            while number > next {
                wanted.next();
                match wanted.peek() {
                    Some(&&(number, _)) => next = number,
                    None => return,
                }
            }
            if number == next {
                hit(wanted.peek().map_or(0, |&&(_, slot)| slot), count);
            }
        }
    }
}

impl std::fmt::Debug for TermList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.to_term_counts()).finish()
    }
}

/// A list of term ids made ready for [`TermList::for_each_hit`]: each id's
/// number with its place in the given ids, sorted by number. Ids the process
/// has never met are in no file and are left out; an id given twice keeps its
/// first place.
#[derive(Clone, Debug, Default)]
pub struct TermQuery {
    /// `(number, slot)`, by number.
    terms: Vec<(u32, usize)>,
}

impl TermQuery {
    /// The query of `ids`, whose places (slots) are their positions.
    pub fn new(ids: &[u32]) -> Self {
        let mut terms: Vec<(u32, usize)> = {
            let vocabulary = vocabulary().read().unwrap_or_else(PoisonError::into_inner);
            ids.iter()
                .enumerate()
                .filter_map(|(slot, id)| vocabulary.numbers.get(id).map(|&number| (number, slot)))
                .collect()
        };
        terms.sort_unstable();
        terms.dedup_by_key(|(number, _)| *number);
        Self { terms }
    }

    /// Whether no file can have any of its terms.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

/// Reads a [`TermList`]'s `(number, count)` pairs.
struct Numbered<'a> {
    bytes: &'a [u8],
    previous: Option<u32>,
}

impl Iterator for Numbered<'_> {
    type Item = (u32, u16);

    fn next(&mut self) -> Option<(u32, u16)> {
        if self.bytes.is_empty() {
            return None;
        }
        let gap = take_varint(&mut self.bytes);
        let count = take_varint(&mut self.bytes);
        let number = self.previous.map_or(gap, |previous| previous + gap);
        self.previous = Some(number);
        Some((number, u16::try_from(count).unwrap_or(u16::MAX)))
    }
}

/// Appends `value` as LEB128: seven bits a byte, low first, the high bit set
/// on every byte but the last.
fn push_varint(out: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Takes one LEB128 value off the front of `bytes` (a list this module
/// wrote, so never longer than five bytes; a cut value ends at the end).
fn take_varint(bytes: &mut &[u8]) -> u32 {
    let mut value = 0_u32;
    let mut shift = 0;
    while let Some((&byte, rest)) = bytes.split_first() {
        *bytes = rest;
        value |= u32::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(pairs: &[(u32, u16)]) -> Vec<TermCount> {
        pairs.iter().copied().map(TermCount::from).collect()
    }

    #[test]
    fn a_list_reads_back_its_terms_sorted_by_id() {
        let given = terms(&[(0xffff_fff0, 3), (7, 1), (0x8000_0000, 300), (12, u16::MAX)]);
        let list = TermList::new(&given);
        let mut sorted = given.clone();
        sorted.sort_unstable_by_key(|term| term.id);
        assert_eq!(list.to_term_counts(), sorted);
        assert_eq!(list.frequency(0x8000_0000), 300);
        assert_eq!(list.frequency(12), u16::MAX);
        assert_eq!(list.frequency(8), 0);
        assert_eq!(
            TermList::new(&given.into_iter().rev().collect::<Vec<_>>()),
            list
        );
    }

    #[test]
    fn an_empty_list_has_no_terms() {
        let list = TermList::new(&[]);
        assert!(list.is_empty());
        assert_eq!(list, TermList::default());
        assert_eq!(list.to_term_counts(), Vec::new());
        assert_eq!(list.frequency(1), 0);
    }

    #[test]
    fn a_query_finds_each_term_the_file_has_at_its_place() {
        let list = TermList::new(&terms(&[(101, 2), (202, 5), (303, 1)]));
        let other = TermList::new(&terms(&[(404, 9)]));
        // 999 is in no list; 202 is asked twice and keeps its first place.
        let query = TermQuery::new(&[303, 999, 202, 404, 202]);
        let mut hits = Vec::new();
        list.for_each_hit(&query, |slot, count| hits.push((slot, count)));
        hits.sort_unstable();
        assert_eq!(hits, vec![(0, 1), (2, 5)]);
        let mut hits = Vec::new();
        other.for_each_hit(&query, |slot, count| hits.push((slot, count)));
        assert_eq!(hits, vec![(3, 9)]);
        assert!(TermQuery::new(&[0xdead_0001]).is_empty());
    }

    #[test]
    fn a_list_takes_a_few_bytes_per_term() {
        // Ids met in one order: their numbers are close, so their gaps are small.
        let many: Vec<TermCount> = (0..200_u32)
            .map(|i| TermCount::from((i.wrapping_mul(2_654_435_761), 1)))
            .collect();
        let list = TermList::new(&many);
        assert_eq!(list.to_term_counts().len(), 200);
        assert!(
            list.encoded_bytes() <= 2 * 200 + 4,
            "{} bytes",
            list.encoded_bytes()
        );
    }

    #[test]
    fn varints_round_trip_at_their_byte_boundaries() {
        for value in [0, 1, 127, 128, 16_383, 16_384, u32::MAX] {
            let mut bytes = Vec::new();
            push_varint(&mut bytes, value);
            let mut rest = &bytes[..];
            assert_eq!(take_varint(&mut rest), value);
            assert!(rest.is_empty());
        }
    }
}
