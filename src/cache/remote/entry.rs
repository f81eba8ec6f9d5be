//! The bytes of one remote entry, and the checks a reader makes before it
//! uses one.
//!
//! An entry wraps the local tier's envelope (codec byte, then the payload or
//! its zstd frame; see `aic_storage::seal`) with what a reader needs to trust
//! it:
//!
//! ```text
//! "AICR" | format version (u8) | flags (u8) | key (32 bytes) | envelope length (u32 LE) | envelope | [HMAC-SHA256 tag (32 bytes)]
//! ```
//!
//! Flag bit 0 says a tag follows. The tag is HMAC-SHA256, under the team's
//! key, over every byte before it, so it covers the key the entry claims and
//! its value. A reader with a key refuses an entry without a tag or with a
//! tag that does not verify; a reader without a key accepts an entry whose
//! format and claimed key check out (the store is then trusted as is).

use aic_storage::FactsKey;
use hmac::{KeyInit, Mac};

/// The first bytes of every entry.
const MAGIC: &[u8; 4] = b"AICR";
/// The entry format this aic writes and reads.
pub const ENTRY_FORMAT_VERSION: u8 = 1;
/// Flag: an HMAC tag ends the entry.
const SIGNED: u8 = 1;
/// Bytes before the envelope.
const HEADER: usize = 4 + 1 + 1 + 32 + 4;
/// Bytes of an HMAC-SHA256 tag.
const TAG: usize = 32;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The team's HMAC key. Its bytes never reach `Debug`, `Display` or a log.
#[derive(Clone)]
pub struct HmacKey(Vec<u8>);

impl std::fmt::Debug for HmacKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HmacKey(****)")
    }
}

impl HmacKey {
    /// A key from the bytes of an environment variable's value; `None` when
    /// it is empty.
    pub fn new(bytes: &[u8]) -> Option<Self> {
        (!bytes.is_empty()).then(|| Self(bytes.to_vec()))
    }

    fn mac(&self) -> HmacSha256 {
        // HMAC takes a key of any length.
        <HmacSha256 as KeyInit>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of every length"))
    }
}

/// Why an entry was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// Too short, not starting with `AICR`, or a length that does not match.
    #[error("not an aic remote entry")]
    Malformed,
    /// Another entry format version.
    #[error("entry format version {0}, this aic reads version {ENTRY_FORMAT_VERSION}")]
    Version(u8),
    /// The entry claims another key than the one it was stored under.
    #[error("the entry claims another key")]
    WrongKey,
    /// A key is configured and the entry carries no tag.
    #[error("the entry is not signed")]
    Unsigned,
    /// The tag does not verify under the configured key.
    #[error("the entry's signature does not verify")]
    BadSignature,
}

/// Wraps the local tier's `envelope` of the row under `key` as a remote
/// entry, signed when `hmac` is given.
pub fn seal_entry(key: &FactsKey, envelope: &[u8], hmac: Option<&HmacKey>) -> Vec<u8> {
    let length = u32::try_from(envelope.len()).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(HEADER + envelope.len() + TAG);
    out.extend_from_slice(MAGIC);
    out.push(ENTRY_FORMAT_VERSION);
    out.push(if hmac.is_some() { SIGNED } else { 0 });
    out.extend_from_slice(&key.0);
    out.extend_from_slice(&length.to_le_bytes());
    out.extend_from_slice(envelope);
    if let Some(hmac) = hmac {
        let mut mac = hmac.mac();
        mac.update(&out);
        out.extend_from_slice(&mac.finalize().into_bytes());
    }
    out
}

/// The envelope inside an entry read under `key`, once its format, its
/// claimed key and (with `hmac`) its tag check out.
///
/// # Errors
///
/// The [`EntryError`] saying which check failed.
pub fn open_entry<'a>(
    key: &FactsKey,
    entry: &'a [u8],
    hmac: Option<&HmacKey>,
) -> Result<&'a [u8], EntryError> {
    if entry.len() < HEADER || &entry[..4] != MAGIC {
        return Err(EntryError::Malformed);
    }
    if entry[4] != ENTRY_FORMAT_VERSION {
        return Err(EntryError::Version(entry[4]));
    }
    let flags = entry[5];
    if entry[6..38] != key.0 {
        return Err(EntryError::WrongKey);
    }
    let length = u32::from_le_bytes([entry[38], entry[39], entry[40], entry[41]]) as usize;
    let signed = flags & SIGNED != 0;
    let expected = HEADER + length + if signed { TAG } else { 0 };
    if entry.len() != expected {
        return Err(EntryError::Malformed);
    }
    let body = &entry[..HEADER + length];
    if let Some(hmac) = hmac {
        if !signed {
            return Err(EntryError::Unsigned);
        }
        let mut mac = hmac.mac();
        mac.update(body);
        mac.verify_slice(&entry[HEADER + length..])
            .map_err(|_| EntryError::BadSignature)?;
    }
    Ok(&body[HEADER..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> FactsKey {
        FactsKey([byte; 32])
    }

    #[test]
    fn an_entry_opens_under_its_key_with_or_without_a_signature() {
        let team = HmacKey::new(b"team secret").unwrap();
        let plain = seal_entry(&key(1), b"\0payload", None);
        assert_eq!(open_entry(&key(1), &plain, None), Ok(&b"\0payload"[..]));
        let signed = seal_entry(&key(1), b"\0payload", Some(&team));
        assert_eq!(
            open_entry(&key(1), &signed, Some(&team)),
            Ok(&b"\0payload"[..])
        );
        assert_eq!(open_entry(&key(1), &signed, None), Ok(&b"\0payload"[..]));
    }

    #[test]
    fn tampered_misplaced_unsigned_and_foreign_entries_are_refused() {
        let team = HmacKey::new(b"team secret").unwrap();
        let other = HmacKey::new(b"another secret").unwrap();
        let signed = seal_entry(&key(1), b"\0payload", Some(&team));
        assert_eq!(
            open_entry(&key(2), &signed, Some(&team)),
            Err(EntryError::WrongKey)
        );
        assert_eq!(
            open_entry(&key(1), &signed, Some(&other)),
            Err(EntryError::BadSignature)
        );
        let mut tampered = signed.clone();
        let at = HEADER + 2;
        tampered[at] ^= 1;
        assert_eq!(
            open_entry(&key(1), &tampered, Some(&team)),
            Err(EntryError::BadSignature)
        );
        let plain = seal_entry(&key(1), b"\0payload", None);
        assert_eq!(
            open_entry(&key(1), &plain, Some(&team)),
            Err(EntryError::Unsigned)
        );
        let mut future = plain.clone();
        future[4] = 9;
        assert_eq!(
            open_entry(&key(1), &future, None),
            Err(EntryError::Version(9))
        );
        assert_eq!(
            open_entry(&key(1), &plain[..plain.len() - 1], None),
            Err(EntryError::Malformed)
        );
        assert_eq!(
            open_entry(&key(1), b"junk", None),
            Err(EntryError::Malformed)
        );
    }

    #[test]
    fn the_key_never_shows_in_debug() {
        let team = HmacKey::new(b"team secret").unwrap();
        assert!(!format!("{team:?}").contains("team secret"));
    }
}
