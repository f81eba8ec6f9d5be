//! [`PathTable`]: values by path for every file of a monorepo, in about the
//! size of the values.
//!
//! A hash map of a million paths keeps twice as many buckets as entries
//! (its capacity is a power of two), each the size of a key and a value. A
//! `PathTable` keeps its rows in one vector of exactly their number, and
//! finds them through a table of 4-byte row numbers hashed by path text.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use crate::relative_path::RelativePath;
use crate::repo_map::RepoMap;

/// Values by [`RelativePath`], in the order they were given.
#[derive(Clone, Debug)]
pub struct PathTable<V> {
    rows: Vec<(RelativePath, V)>,
    /// Row numbers, by [`hash`] of the row's path.
    index: HashTable<u32>,
}

impl<V> Default for PathTable<V> {
    fn default() -> Self {
        Self {
            rows: Vec::new(),
            index: HashTable::new(),
        }
    }
}

/// The hash a path is found by.
fn hash(path: &str) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(path)
}

impl<V> PathTable<V> {
    /// The value of `path`.
    pub fn get(&self, path: &str) -> Option<&V> {
        self.row(path).map(|row| &self.rows[row].1)
    }

    /// `path` as the table holds it, and its value.
    pub fn get_key_value(&self, path: &str) -> Option<(&RelativePath, &V)> {
        self.row(path).map(|row| {
            let (path, value) = &self.rows[row];
            (path, value)
        })
    }

    /// The row number of `path`: its place among the paths in the order
    /// they were first given.
    pub fn row(&self, path: &str) -> Option<usize> {
        self.index
            .find(hash(path), |&row| {
                self.rows[row as usize].0.as_str() == path
            })
            .map(|&row| row as usize)
    }

    /// Sets `path`'s value (a path already in the table keeps its row and
    /// takes the new value).
    pub fn insert(&mut self, path: RelativePath, value: V) {
        let next = u32::try_from(self.rows.len()).unwrap_or(u32::MAX);
        let rows = &self.rows;
        match self.index.entry(
            hash(path.as_str()),
            |&row| rows[row as usize].0.as_str() == path.as_str(),
            |&row| hash(rows[row as usize].0.as_str()),
        ) {
            hashbrown::hash_table::Entry::Occupied(row) => self.rows[*row.get() as usize].1 = value,
            hashbrown::hash_table::Entry::Vacant(slot) => {
                slot.insert(next);
                self.rows.push((path, value));
            }
        }
    }

    /// The path of row `row`.
    ///
    /// # Panics
    ///
    /// When `row` is not below [`PathTable::len`].
    pub fn path(&self, row: usize) -> &RelativePath {
        &self.rows[row].0
    }

    /// Paths in the table.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Each path and its value, in the order they were first given.
    pub fn iter(&self) -> impl Iterator<Item = (&RelativePath, &V)> {
        self.rows.iter().map(|(path, value)| (path, value))
    }

    /// The values, in the order their paths were first given.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.rows.iter().map(|(_, value)| value)
    }

    /// Names each row whose path is a file of `repo` with that file's own
    /// path (the same text, reference-counted): a resident index then holds
    /// each path's text once, not once in its RepoMap and again here.
    pub fn share_paths(&mut self, repo: &RepoMap) {
        for file in &repo.files {
            if let Some(row) = self.row(file.path.as_str()) {
                self.rows[row].0 = file.path.clone();
            }
        }
    }
}

impl<V> FromIterator<(RelativePath, V)> for PathTable<V> {
    /// The table of `rows`; of two rows with one path, the later one's value
    /// is kept (at the earlier one's place), as a map's `collect` does.
    fn from_iter<I: IntoIterator<Item = (RelativePath, V)>>(rows: I) -> Self {
        let rows = rows.into_iter();
        let mut table = Self {
            rows: Vec::with_capacity(rows.size_hint().0),
            index: HashTable::with_capacity(rows.size_hint().0),
        };
        for (path, value) in rows {
            table.insert(path, value);
        }
        table.rows.shrink_to_fit();
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo_map::FileEntry;

    fn path(text: &str) -> RelativePath {
        RelativePath::new(text).unwrap()
    }

    #[test]
    fn a_table_finds_each_path_and_keeps_the_last_value_of_a_repeated_one() {
        let table: PathTable<i64> = [("src/a.rs", 1), ("src/b.rs", 2), ("src/a.rs", 3)]
            .into_iter()
            .map(|(p, v)| (path(p), v))
            .collect();
        assert_eq!(table.len(), 2);
        assert_eq!(table.get("src/a.rs"), Some(&3));
        assert_eq!(table.get("src/b.rs"), Some(&2));
        assert_eq!(table.get("src/c.rs"), None);
        assert_eq!(table.values().copied().collect::<Vec<_>>(), vec![3, 2]);
        assert!(PathTable::<i64>::default().is_empty());
    }

    #[test]
    fn shared_paths_are_the_repo_maps_own_and_find_the_same_values() {
        let mut table: PathTable<i64> = (0..1000)
            .map(|i| (path(&format!("pkg{}/file{i}.rs", i % 7)), i64::from(i)))
            .collect();
        let repo = RepoMap::new(
            (0..1000)
                .step_by(3)
                .map(|i| FileEntry::for_test(&format!("pkg{}/file{i}.rs", i % 7), 10, 0))
                .collect(),
        );
        table.share_paths(&repo);
        for file in &repo.files {
            let (shared, _) = table
                .iter()
                .find(|(p, _)| p.as_str() == file.path.as_str())
                .unwrap();
            assert!(shared.shares_text_with(&file.path));
        }
        for i in 0..1000 {
            assert_eq!(
                table.get(&format!("pkg{}/file{i}.rs", i % 7)),
                Some(&i64::from(i))
            );
        }
    }
}
