//! A resident snapshot kept on disk, so a restarted daemon (or MCP server)
//! answers its first compile on a large project without looking every file up
//! in the database.
//!
//! After each full walk of a project, the resident index writes what its
//! RepoMap knows of each file — path, size, modification time, content hash,
//! language and scan terms — to `$AIC_HOME/snapshots/<project>.snap`. The
//! next process that walks the project for the first time reads it back
//! ([`load`]) and hands it to the walk as its
//! [`PriorFiles`]: the walk still stats every file, and a file is taken from
//! it only when its size and modification time match, exactly as with the
//! database's path index, so a stale or foreign snapshot can cost look-ups
//! but never change a result.
//!
//! The file is private (0600), written whole to a temporary name and renamed,
//! and ends with an xxh3-64 checksum of everything before it; a file of
//! another format version, of other stage settings (the cache's stage
//! fingerprint), truncated or damaged is ignored with a log line and
//! replaced after the walk. Files modified within two seconds of the walk's
//! start are left out (their content may have changed within the file
//! system's timestamp resolution), as the path index does.
//!
//! A walk that finds the tree as saved (same file-tree hash: every path,
//! size and modification time) does not write it again.
//!
//! Layout: `AICSNAP1`, the version (u32 LE), the stage fingerprint (u128 LE),
//! the file-tree hash of the saved walk (16 bytes), the file count (u64 LE),
//! the count of numbered words (u64 LE) and each one's term id (u32 LE, the
//! words the lists use, in the writing process's order: a
//! [`SavedNumbering`]), then per file its length (u32 LE) and
//! its postcard encoding (path, language, size, modification time, content
//! hash, defined-name ids, name ids, the encoded term list, length), then the
//! checksum (u64 LE). The term lists are kept as the writing process encoded
//! them, so a new process reading the snapshot takes its numbering and the
//! lists as they are ([`Renumbering`]) instead of numbering every term of
//! every file again.

use std::io::Write;
use std::path::{Path, PathBuf};

use aic_stages::content_hash::ContentHash;
use aic_stages::language::Language;
use aic_stages::relative_path::RelativePath;
use aic_stages::repo_map::RepoMap;
use aic_stages::row_codec::EntryTerms;
use aic_stages::select::term_list::{Renumbering, SavedNumbering, TermList};
use aic_stages::select::terms::TermStats;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::Xxh3;

use crate::pipeline::scan::prior::{PriorFile, PriorFiles};

const MAGIC: &[u8; 8] = b"AICSNAP1";

/// The header's length: magic, version, stage fingerprint, file-tree hash,
/// file count and numbered-word count.
const HEADER: usize = MAGIC.len() + 4 + 16 + 16 + 8 + 8;

/// The format version; a file of another version is ignored.
const VERSION: u32 = 2;

/// Files modified this close to the walk's start are not saved (2 s).
const RACY_NS: i64 = 2_000_000_000;

/// One file as saved (borrowed on the way out, owned on the way in).
#[derive(Serialize, Deserialize)]
struct SavedFile<'a> {
    #[serde(borrow)]
    path: std::borrow::Cow<'a, str>,
    language: Language,
    size: u64,
    mtime_ns: i64,
    hash: [u8; 16],
    symbol_ids: std::borrow::Cow<'a, [u32]>,
    name_ids: std::borrow::Cow<'a, [u32]>,
    /// [`SavedNumbering::encode`] of its term list, in the numbering saved
    /// before the files.
    terms: &'a [u8],
    length: u32,
}

/// Where the snapshot of the project whose identity hashes to `key` lives
/// under `dir`.
pub fn path_for(dir: &Path, key: u128) -> PathBuf {
    dir.join(format!("{key:032x}.snap"))
}

/// Writes `repo`'s files to `path` for a cache of `fingerprint`, leaving out
/// files modified within two seconds of `walk_started_ns`, with `tree_hash`
/// (the walk's [`Snapshot::file_tree_hash`](crate::pipeline::scan::Snapshot)).
/// Returns the files written.
///
/// # Errors
///
/// The I/O error of the directory, the temporary file or the rename.
pub fn save(
    path: &Path,
    fingerprint: u128,
    (repo, tree_hash): (&RepoMap, ContentHash),
    walk_started_ns: i64,
) -> std::io::Result<usize> {
    let settled: Vec<_> = repo
        .files
        .iter()
        .filter(|file| walk_started_ns.saturating_sub(file.last_modified_ns) >= RACY_NS)
        .collect();
    let directory = path.parent().unwrap_or_else(|| Path::new("."));
    crate::home::create_private_dir(directory)?;
    let temporary = path.with_extension(format!("snap.{}.tmp", std::process::id()));
    let written = write_to(&temporary, (fingerprint, tree_hash), &settled)
        .and_then(|()| fs_err::rename(&temporary, path));
    if written.is_err() {
        let _ = fs_err::remove_file(&temporary);
    }
    written.map(|()| settled.len())
}

/// Writes the snapshot of `files` to `path` as it is encoded (a large
/// project's snapshot is never held whole in memory), checksum last.
fn write_to(
    path: &Path,
    (fingerprint, tree_hash): (u128, ContentHash),
    files: &[&aic_stages::repo_map::FileEntry],
) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(crate::home::open_private(path, false)?);
    let mut checksum = Xxh3::new();
    let mut put = |bytes: &[u8]| {
        checksum.update(bytes);
        out.write_all(bytes)
    };
    put(MAGIC)?;
    put(&VERSION.to_le_bytes())?;
    put(&fingerprint.to_le_bytes())?;
    put(&tree_hash.0)?;
    put(&(files.len() as u64).to_le_bytes())?;
    // The words the lists use, numbered after every list was made.
    let numbering = SavedNumbering::of(files.iter().map(|file| &file.term_stats.terms));
    put(&(numbering.ids().len() as u64).to_le_bytes())?;
    for id in numbering.ids() {
        put(&id.to_le_bytes())?;
    }
    for file in files {
        let terms = numbering.encode(&file.term_stats.terms);
        let saved = SavedFile {
            path: file.path.as_str().into(),
            language: file.language,
            size: file.size_bytes,
            mtime_ns: file.last_modified_ns,
            hash: file.content_hash.0,
            symbol_ids: (&file.symbol_ids[..]).into(),
            name_ids: (&file.name_ids[..]).into(),
            terms: &terms,
            length: file.term_stats.length,
        };
        let encoded = postcard::to_stdvec(&saved).map_err(std::io::Error::other)?;
        put(&(encoded.len() as u32).to_le_bytes())?;
        put(&encoded)?;
    }
    out.write_all(&checksum.digest().to_le_bytes())?;
    out.into_inner()
        .map_err(std::io::IntoInnerError::into_error)?
        .sync_all()
}

/// Why a saved snapshot was not used.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// There is none (the project was never walked by a long-lived process).
    #[error("no saved snapshot")]
    Missing,
    /// It could not be read.
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
    /// Another format version or other stage settings, as its header says
    /// (read before the records: a damaged header may read as foreign).
    #[error("it was made by another version of aic or under other settings")]
    Foreign,
    /// Truncated, or its checksum does not match.
    #[error("it is damaged (truncated, or its checksum does not match)")]
    Damaged,
}

/// The bytes of records read and decoded at a time (8 MiB): a snapshot is
/// read in slices this size, so a load holds the decoded files and one slice
/// (or one record, when a record is longer), never the whole file beside
/// them.
const LOAD_SLICE: usize = 8 << 20;

/// The fewest bytes a saved file's record takes: its 4-byte length, a path
/// of at least one byte with its length, the 16-byte hash, and one byte
/// each for the language, size, time, three list lengths and term count.
/// The decoded list is sized by the records the file can hold, not by the
/// count its header claims.
const MIN_RECORD: usize = 4 + 2 + 16 + 7;

/// Reads the snapshot at `path` made under `fingerprint`: the files a walk
/// may take from it unread ([`PriorFiles`]) and the saved walk's file-tree
/// hash. The file is read in slices of 8 MiB, each decoded
/// on every core as it arrives; the checksum is checked at the end, before
/// anything is handed out.
///
/// # Errors
///
/// [`LoadError`]: missing, unreadable, foreign or damaged; nothing of a
/// damaged file is handed out (its records were decoded as they arrived:
/// its words may have been numbered in the process's vocabulary, which no
/// result depends on).
pub fn load(path: &Path, fingerprint: u128) -> Result<(PriorFiles, ContentHash), LoadError> {
    load_sliced(path, fingerprint, LOAD_SLICE)
}

/// [`load`], reading `slice` bytes of records at a time (at least 1).
fn load_sliced(
    path: &Path,
    fingerprint: u128,
    slice: usize,
) -> Result<(PriorFiles, ContentHash), LoadError> {
    let mut file = match fs_err::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(LoadError::Missing);
        }
        Err(error) => return Err(error.into()),
    };
    let length = file.metadata()?.len();
    let Some(mut remaining) = length
        .checked_sub((HEADER + 8) as u64)
        .and_then(|records| usize::try_from(records).ok())
    else {
        return Err(LoadError::Damaged);
    };
    let mut header = [0_u8; HEADER];
    read_exact(&mut file, &mut header)?;
    if &header[..MAGIC.len()] != MAGIC {
        return Err(LoadError::Damaged);
    }
    let mut checksum = Xxh3::new();
    checksum.update(&header);
    let field = |range: std::ops::Range<usize>| &header[range];
    let version = u32::from_le_bytes(field(8..12).try_into().map_err(|_| LoadError::Damaged)?);
    let saved_fingerprint =
        u128::from_le_bytes(field(12..28).try_into().map_err(|_| LoadError::Damaged)?);
    let tree_hash = ContentHash(field(28..44).try_into().map_err(|_| LoadError::Damaged)?);
    let count = u64::from_le_bytes(field(44..52).try_into().map_err(|_| LoadError::Damaged)?);
    let words = u64::from_le_bytes(field(52..60).try_into().map_err(|_| LoadError::Damaged)?);
    if version != VERSION || saved_fingerprint != fingerprint {
        return Err(LoadError::Foreign);
    }
    let count = usize::try_from(count).map_err(|_| LoadError::Damaged)?;
    // The saved numbering, each word's id in 4 bytes, checked against the
    // file's length before it is read.
    let numbering_bytes = usize::try_from(words)
        .ok()
        .and_then(|words| words.checked_mul(4))
        .filter(|&bytes| bytes <= remaining)
        .ok_or(LoadError::Damaged)?;
    let mut saved_ids = vec![0_u8; numbering_bytes];
    read_exact(&mut file, &mut saved_ids)?;
    checksum.update(&saved_ids);
    remaining -= numbering_bytes;
    let renumbering = Renumbering::adopt(
        &saved_ids
            .chunks_exact(4)
            .map(|id| u32::from_le_bytes([id[0], id[1], id[2], id[3]]))
            .collect::<Vec<_>>(),
    );
    drop(saved_ids);
    // Every record takes at least its 4-byte length: a count the records
    // cannot hold is damage, found before anything is allocated for it.
    if count > remaining / 4 {
        return Err(LoadError::Damaged);
    }
    let mut files = Vec::with_capacity(count.min(remaining / MIN_RECORD));
    // Read and not yet decoded: the start of a record the last slice cut.
    let mut pending: Vec<u8> = Vec::new();
    while remaining > 0 {
        let start = pending.len();
        let take = slice.max(1).min(remaining);
        pending.resize(start + take, 0);
        read_exact(&mut file, &mut pending[start..])?;
        checksum.update(&pending[start..]);
        remaining -= take;
        // The complete records of what is read, found in one pass over
        // their lengths, then decoded in parallel, in order.
        let mut records: Vec<&[u8]> = Vec::new();
        let mut rest = pending.as_slice();
        while let Some((length, after)) = rest.split_first_chunk::<4>() {
            let length = u32::from_le_bytes(*length) as usize;
            if after.len() < length {
                // The rest of a record the next slices complete; one that
                // would end past the records is damage, found now.
                if length - after.len() > remaining {
                    return Err(LoadError::Damaged);
                }
                break;
            }
            let (encoded, after) = after.split_at(length);
            records.push(encoded);
            rest = after;
        }
        if files.len() + records.len() > count {
            return Err(LoadError::Damaged);
        }
        let decoded = records
            .par_iter()
            .map(|encoded| decode(encoded, &renumbering))
            .collect::<Option<Vec<_>>>()
            .ok_or(LoadError::Damaged)?;
        files.extend(decoded);
        let used = pending.len() - rest.len();
        pending.drain(..used);
    }
    let mut tail = [0_u8; 8];
    read_exact(&mut file, &mut tail)?;
    // The file ends with its checksum: bytes after it (a file that grew
    // while it was read) are damage too.
    if std::io::Read::read(&mut file, &mut [0_u8; 1])? != 0 {
        return Err(LoadError::Damaged);
    }
    if !pending.is_empty() || files.len() != count || checksum.digest().to_le_bytes() != tail {
        return Err(LoadError::Damaged);
    }
    Ok((PriorFiles::saved(files), tree_hash))
}

/// Fills `buffer` from `file`; a file that ends first is damaged (it was
/// truncated after its length was read).
fn read_exact(file: &mut fs_err::File, buffer: &mut [u8]) -> Result<(), LoadError> {
    use std::io::Read;
    file.read_exact(buffer).map_err(|error| {
        if error.kind() == std::io::ErrorKind::UnexpectedEof {
            LoadError::Damaged
        } else {
            LoadError::Io(error)
        }
    })
}

/// One saved file's record, decoded, its terms renumbered; `None` when it is
/// not one.
fn decode(encoded: &[u8], renumbering: &Renumbering) -> Option<PriorFile> {
    let saved: SavedFile<'_> = postcard::from_bytes(encoded).ok()?;
    let path = RelativePath::new(&saved.path)?;
    Some(PriorFile {
        path,
        language: saved.language,
        size: saved.size,
        mtime_ns: saved.mtime_ns,
        hash: ContentHash(saved.hash),
        terms: EntryTerms {
            symbol_ids: saved.symbol_ids.into_owned().into(),
            name_ids: saved.name_ids.into_owned().into(),
            term_stats: TermStats {
                terms: TermList::from_saved(saved.terms, renumbering)?,
                length: saved.length,
            },
        },
    })
}

#[cfg(test)]
mod tests;
