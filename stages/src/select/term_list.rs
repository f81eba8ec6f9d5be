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
//! the order the files were read in, which parallel walks do not fix. No
//! score sees them: a list is built from and read back as [`TermCount`]s (the
//! cache rows hold those, sorted by id), and look-ups are by term id, so every
//! score is the same from run to run. A saved snapshot keeps the lists as
//! they are encoded beside the numbering of the words they use (a
//! [`SavedNumbering`]); the process that reads it back takes them through a
//! [`Renumbering`], byte for byte when it had met no word before (a new
//! process's first load).

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

/// The process's numbering: the term id of each number, from 0 (about 4
/// bytes per distinct word met).
fn numbering() -> Vec<u32> {
    vocabulary()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .ids
        .clone()
}

/// How the numbers of lists saved by another process (in its
/// [`SavedNumbering`]) become this process's: each saved number's id numbered
/// here, the ids not yet met numbered in the saved order. A process that
/// has met no word takes the saved numbering as its own, and then its lists
/// are taken as saved, byte for byte.
#[derive(Clone, Debug)]
pub struct Renumbering {
    /// Saved number → this process's number.
    numbers: Vec<u32>,
    /// Whether every saved number is this process's number too.
    identity: bool,
}

impl Renumbering {
    /// The renumbering of lists saved under `saved_ids` (the term id of each
    /// saved number, [`SavedNumbering::ids`]),
    /// numbering here the ids this process has not met. The vocabulary is
    /// locked for 64 Ki ids at a time, so other compiles of a
    /// daemon wait for one chunk, not the whole numbering.
    pub fn adopt(saved_ids: &[u32]) -> Self {
        let mut adopted = Self::for_ids(saved_ids);
        for chunk in saved_ids.chunks(ADOPT_CHUNK) {
            let mut vocabulary = vocabulary().write().unwrap_or_else(PoisonError::into_inner);
            adopted.extend(&mut vocabulary, chunk);
        }
        adopted
    }

    #[cfg(test)]
    fn adopt_into(vocabulary: &mut Vocabulary, saved_ids: &[u32]) -> Self {
        let mut adopted = Self::for_ids(saved_ids);
        adopted.extend(vocabulary, saved_ids);
        adopted
    }

    /// An empty renumbering with room for `saved_ids`.
    fn for_ids(saved_ids: &[u32]) -> Self {
        Self {
            numbers: Vec::with_capacity(saved_ids.len()),
            identity: true,
        }
    }

    /// Numbers the next saved ids, `saved_ids`, in `vocabulary`.
    fn extend(&mut self, vocabulary: &mut Vocabulary, saved_ids: &[u32]) {
        vocabulary.numbers.reserve(saved_ids.len());
        for &id in saved_ids {
            let next = u32::try_from(vocabulary.ids.len()).unwrap_or(u32::MAX);
            let number = *vocabulary.numbers.entry(id).or_insert(next);
            if number == next {
                vocabulary.ids.push(id);
            }
            self.identity &= number as usize == self.numbers.len();
            self.numbers.push(number);
        }
    }
}

/// Saved ids numbered per hold of the vocabulary's lock in
/// [`Renumbering::adopt`] (64 Ki).
const ADOPT_CHUNK: usize = 1 << 16;

/// The numbering a saved snapshot writes beside its lists: only the words
/// the lists use. A process's vocabulary holds every word it met (a daemon's:
/// every project's, and words of files since deleted), so saving it whole
/// would carry them from one snapshot to the next forever. When the lists
/// use exactly the numbers from 0 up (a process that loaded the snapshot and
/// met nothing else), the lists are saved as they are; otherwise the words
/// used are numbered again from 0, in the process's order, and each list
/// re-encoded with them.
#[derive(Debug)]
pub struct SavedNumbering {
    /// Saved number → term id.
    ids: Vec<u32>,
    /// Process number → saved number (`u32::MAX`: not used), when the
    /// lists are re-encoded.
    saved: Option<Vec<u32>>,
}

impl SavedNumbering {
    /// The numbering of the words `lists` use (read once through).
    pub fn of<'a>(lists: impl IntoIterator<Item = &'a TermList>) -> Self {
        let ids = numbering();
        let mut used = vec![false; ids.len()];
        for list in lists {
            for (number, _) in list.numbered() {
                // Every number a list holds was given before `ids` was
                // copied; one past it would be a list of another process.
                if let Some(slot) = used.get_mut(number as usize) {
                    *slot = true;
                }
            }
        }
        let prefix = used.iter().take_while(|&&used| used).count();
        if !used[prefix..].contains(&true) {
            return Self {
                ids: ids[..prefix].to_vec(),
                saved: None,
            };
        }
        let mut saved = vec![u32::MAX; ids.len()];
        let mut kept = Vec::new();
        for (number, _) in used.iter().enumerate().filter(|(_, used)| **used) {
            saved[number] = u32::try_from(kept.len()).unwrap_or(u32::MAX);
            kept.push(ids[number]);
        }
        Self {
            ids: kept,
            saved: Some(saved),
        }
    }

    /// The term id of each saved number, from 0.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// `list` encoded in this numbering (one of the lists it was made of):
    /// its own bytes, or the list re-encoded. The saved numbers keep the
    /// process's order, so the list stays sorted.
    pub fn encode<'a>(&self, list: &'a TermList) -> std::borrow::Cow<'a, [u8]> {
        match &self.saved {
            None => std::borrow::Cow::Borrowed(list.encoded()),
            Some(saved) => {
                std::borrow::Cow::Owned(encode_bytes(list.numbered().map(|(number, count)| {
                    (
                        saved.get(number as usize).copied().unwrap_or(u32::MAX),
                        count,
                    )
                })))
            }
        }
    }
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
        Self::encode(numbered)
    }

    /// The list of `numbered` pairs, distinct and sorted by number.
    fn encode(numbered: Vec<(u32, u16)>) -> Self {
        Self(encode_bytes(numbered).into())
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

    /// The encoded list: numbers of this process's numbering, so only
    /// meaningful beside it ([`SavedNumbering::encode`] writes a list, and
    /// [`TermList::from_saved`] reads it back).
    fn encoded(&self) -> &[u8] {
        &self.0
    }

    /// The list a process whose numbering `renumbering` adopted encoded as
    /// `bytes` ([`SavedNumbering::encode`]); `None` when `bytes` are not such a
    /// list (a cut or overlong value, a number the saved numbering does not
    /// have, a count over `u16::MAX`, a number given twice). The bytes are
    /// taken as they are when the numbering is this process's own.
    pub fn from_saved(bytes: &[u8], renumbering: &Renumbering) -> Option<Self> {
        let mut rest = bytes;
        let mut previous: Option<u32> = None;
        let mut numbered = Vec::new();
        while !rest.is_empty() {
            let gap = checked_varint(&mut rest)?;
            let count = u16::try_from(checked_varint(&mut rest)?).ok()?;
            let saved = match previous {
                None => gap,
                Some(previous) if gap > 0 => previous.checked_add(gap)?,
                Some(_) => return None,
            };
            previous = Some(saved);
            let number = *renumbering.numbers.get(saved as usize)?;
            if !renumbering.identity {
                numbered.push((number, count));
            }
        }
        if renumbering.identity {
            return Some(Self(Arc::from(bytes)));
        }
        numbered.sort_unstable_by_key(|&(number, _)| number);
        if numbered.windows(2).any(|pair| pair[0].0 == pair[1].0) {
            return None;
        }
        Some(Self::encode(numbered))
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

/// The bytes of a list of `numbered` pairs, distinct and sorted by number.
fn encode_bytes(numbered: impl IntoIterator<Item = (u32, u16)>) -> Vec<u8> {
    let numbered = numbered.into_iter();
    let mut bytes = Vec::with_capacity(numbered.size_hint().0 * 3);
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
    bytes
}

/// [`take_varint`] for bytes another process wrote: `None` for a value cut
/// by the end or longer than a `u32` takes.
fn checked_varint(bytes: &mut &[u8]) -> Option<u32> {
    let mut value = 0_u32;
    for shift in (0..35).step_by(7) {
        let (&byte, rest) = bytes.split_first()?;
        *bytes = rest;
        let bits = u32::from(byte & 0x7f);
        if shift == 28 && bits > 0x0f {
            return None;
        }
        value |= bits << shift;
        if byte & 0x80 == 0 {
            // A last byte of 0 after others is a value written long: no
            // list this module writes has one.
            return (byte != 0 || shift == 0).then_some(value);
        }
    }
    None
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

    /// Reads `list`, made in a process whose numbering is `vocabulary`.
    fn read_back(list: &TermList, vocabulary: &Vocabulary) -> Vec<TermCount> {
        let mut out: Vec<TermCount> = list
            .numbered()
            .map(|(number, count)| TermCount::from((vocabulary.ids[number as usize], count)))
            .collect();
        out.sort_unstable_by_key(|term| term.id);
        out
    }

    #[test]
    fn a_process_that_met_no_word_takes_saved_lists_as_they_are() {
        let list = TermList::new(&terms(&[(0xaaaa_0001, 4), (0xaaaa_0002, 1), (17, 9)]));
        let saved = numbering();
        let mut fresh = Vocabulary::default();
        let renumbering = Renumbering::adopt_into(&mut fresh, &saved);
        assert!(renumbering.identity);
        assert_eq!(fresh.ids, saved);
        let back = TermList::from_saved(list.encoded(), &renumbering).unwrap();
        assert_eq!(back.encoded(), list.encoded());
        assert_eq!(read_back(&back, &fresh), list.to_term_counts());
        // This process adopting its own numbering changes nothing either.
        let own = Renumbering::adopt(&saved);
        assert!(own.identity);
        assert_eq!(TermList::from_saved(list.encoded(), &own).unwrap(), list);
    }

    #[test]
    fn a_saved_list_reads_back_in_a_process_that_numbered_other_words_first() {
        let list = TermList::new(&terms(&[(0xbbbb_0001, 2), (0xbbbb_0002, 300), (5, 1)]));
        let saved = numbering();
        let mut other = Vocabulary::default();
        // Words of the list met in another order, and words it lacks.
        Renumbering::adopt_into(&mut other, &[0xbbbb_0002, 0xcccc_0001, 5]);
        let renumbering = Renumbering::adopt_into(&mut other, &saved);
        assert!(!renumbering.identity);
        let back = TermList::from_saved(list.encoded(), &renumbering).unwrap();
        assert_eq!(read_back(&back, &other), list.to_term_counts());
        // Adopted words keep their numbers.
        assert_eq!(other.numbers[&0xbbbb_0002], 0);
        assert_eq!(other.numbers[&5], 2);
    }

    #[test]
    fn a_saved_numbering_keeps_only_the_words_its_lists_use() {
        // Words numbered before and between the lists', used by no list.
        let unused = TermList::new(&terms(&[(0xdddd_0001, 1)]));
        let first = TermList::new(&terms(&[(0xdddd_0002, 2), (0xdddd_0003, 1)]));
        let _ = TermList::new(&terms(&[(0xdddd_0004, 1)]));
        let second = TermList::new(&terms(&[(0xdddd_0005, 7), (0xdddd_0002, 1)]));
        let saved = SavedNumbering::of([&first, &second]);
        assert_eq!(saved.ids(), &[0xdddd_0002, 0xdddd_0003, 0xdddd_0005]);
        let mut fresh = Vocabulary::default();
        let renumbering = Renumbering::adopt_into(&mut fresh, saved.ids());
        assert!(renumbering.identity);
        for list in [&first, &second] {
            let bytes = saved.encode(list);
            assert!(matches!(bytes, std::borrow::Cow::Owned(_)));
            let back = TermList::from_saved(&bytes, &renumbering).unwrap();
            assert_eq!(read_back(&back, &fresh), list.to_term_counts());
        }
        assert!(!saved.ids().contains(&0xdddd_0001));
        assert!(!unused.is_empty());
    }

    #[test]
    fn bytes_that_are_no_saved_list_are_refused() {
        let mut fresh = Vocabulary::default();
        let renumbering = Renumbering::adopt_into(&mut fresh, &[10, 20, 30]);
        let refused = |bytes: &[u8]| TermList::from_saved(bytes, &renumbering).is_none();
        assert!(!refused(&[0, 1, 2, 5]));
        assert!(!refused(&[]));
        assert!(refused(&[0]), "a count cut off");
        assert!(refused(&[0, 0x80]), "a value cut off");
        assert!(refused(&[3, 1]), "a number past the saved numbering");
        assert!(refused(&[0, 1, 0, 1]), "a number given twice");
        assert!(refused(&[0, 0x80, 0x80, 0x04]), "a count over u16::MAX");
        assert!(refused(&[0, 0x81, 0x00]), "a value written long");
        assert!(
            refused(&[0xff, 0xff, 0xff, 0xff, 0x7f, 1]),
            "a value over u32::MAX"
        );
        let mut other = Vocabulary::default();
        Renumbering::adopt_into(&mut other, &[30, 20]);
        let renumbering = Renumbering::adopt_into(&mut other, &[10, 20, 30, 20]);
        assert!(
            TermList::from_saved(&[1, 1, 2, 1], &renumbering).is_none(),
            "two saved numbers of one id"
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
            let mut rest = &bytes[..];
            assert_eq!(checked_varint(&mut rest), Some(value));
            assert!(rest.is_empty());
        }
    }
}
