//! The database's schema version and the migrations that bring an older database up to it.
//!
//! The model: the table `schema_version` (`&str -> u32`) holds one row, key `"schema"`, the
//! version of the layout the database was last brought up to. A new database gets
//! [`SCHEMA_VERSION`]; an older one is migrated in one write transaction, so a failed migration
//! leaves it as it was; a newer one is refused without being written.
//!
//! What a migration is for: the database as a whole (a table renamed or dropped, a whole-file
//! change). Changing one table's *encoding* does not need one: the table's name carries a
//! version suffix (`file_facts-v1`), a new encoding gets a new name, and the old table is simply
//! no longer read.

use std::path::Path;

use redb::{ReadableDatabase, ReadableTable, TableDefinition, WriteTransaction};

use crate::StorageError;

/// The schema version this build of aic reads and writes.
///
/// Bump it, and append to the migration list, only for a change to the database as a whole.
pub const SCHEMA_VERSION: u32 = 1;

/// The name of the table holding the schema version. It has no version suffix and must never
/// change: it is how any aic, old or new, tells which layout a file has.
pub(crate) const SCHEMA_VERSION_TABLE_NAME: &str = "schema_version";

/// The table holding the schema version, under the key [`SCHEMA_KEY`].
const SCHEMA_VERSION_TABLE: TableDefinition<&str, u32> =
    TableDefinition::new(SCHEMA_VERSION_TABLE_NAME);

/// The key of the one row of [`SCHEMA_VERSION_TABLE`].
const SCHEMA_KEY: &str = "schema";

/// A migration: changes the database, inside the given write transaction, from the version
/// below its target to its target. The path is the database file, for errors.
pub(crate) type Migration = fn(&WriteTransaction, &Path) -> Result<(), StorageError>;

/// The migrations, as `(target version, migration)`, in ascending order of target. Version 1 is
/// the first schema, created empty, so there is nothing to migrate yet.
const MIGRATIONS: &[(u32, Migration)] = &[];

/// A schema version and the migrations that reach it: [`Schema::CURRENT`] in production, other
/// values in tests.
#[derive(Clone, Copy)]
pub(crate) struct Schema {
    /// The version a database is brought up to.
    pub(crate) version: u32,
    /// `(target version, migration)` pairs, ascending by target.
    pub(crate) migrations: &'static [(u32, Migration)],
}

impl Schema {
    /// This build's schema.
    pub(crate) const CURRENT: Self = Self {
        version: SCHEMA_VERSION,
        migrations: MIGRATIONS,
    };

    /// Brings the database at `path` to this schema and returns the version it is now at.
    ///
    /// A read transaction checks the recorded version first, so opening an up-to-date or newer
    /// database commits nothing. Only when the version is missing or older does a write
    /// transaction begin; it reads the version again, because another process may have written
    /// it in between, then records it (new database) or migrates (older database) and commits.
    ///
    /// # Errors
    ///
    /// [`StorageError::SchemaTooNew`] for a newer database, [`StorageError::Corrupt`] when the
    /// `schema_version` table has other types than aic's, and the transaction, table, storage and
    /// commit errors of the work itself, including any a migration returns (the database is
    /// then left at its old version).
    pub(crate) fn ensure(
        self,
        database: &redb::Database,
        path: &Path,
    ) -> Result<u32, StorageError> {
        let read = database
            .begin_read()
            .map_err(|error| StorageError::transaction(path, error))?;
        let found = match read.open_table(SCHEMA_VERSION_TABLE) {
            Ok(table) => read_version(&table, path)?,
            Err(redb::TableError::TableDoesNotExist(_)) => None,
            Err(error) => return Err(table_error(path, error)),
        };
        drop(read);
        if let Some(found) = found {
            if found == self.version {
                return Ok(found);
            }
            self.refuse_newer(found, path)?;
        }

        let write = database
            .begin_write()
            .map_err(|error| StorageError::transaction(path, error))?;
        let found = {
            let table = write
                .open_table(SCHEMA_VERSION_TABLE)
                .map_err(|error| table_error(path, error))?;
            read_version(&table, path)?
        };
        match found {
            Some(found) if found == self.version => {
                write
                    .abort()
                    .map_err(|error| StorageError::storage(path, error))?;
                return Ok(found);
            }
            Some(found) => {
                self.refuse_newer(found, path)?;
                for &(target, migrate) in self.migrations {
                    if target > found && target <= self.version {
                        migrate(&write, path)?;
                    }
                }
            }
            None => {}
        }
        write
            .open_table(SCHEMA_VERSION_TABLE)
            .map_err(|error| table_error(path, error))?
            .insert(SCHEMA_KEY, self.version)
            .map_err(|error| StorageError::storage(path, error))?;
        write
            .commit()
            .map_err(|error| StorageError::commit(path, error))?;
        Ok(self.version)
    }

    fn refuse_newer(self, found: u32, path: &Path) -> Result<(), StorageError> {
        if found > self.version {
            return Err(StorageError::SchemaTooNew {
                path: path.to_path_buf(),
                found,
                supported: self.version,
            });
        }
        Ok(())
    }
}

fn read_version(
    table: &impl ReadableTable<&'static str, u32>,
    path: &Path,
) -> Result<Option<u32>, StorageError> {
    let row = table
        .get(SCHEMA_KEY)
        .map_err(|error| StorageError::storage(path, error))?;
    Ok(row.map(|guard| guard.value()))
}

/// A `schema_version` table with other key or value types was not written by aic: the file is
/// someone else's redb database, or damaged.
fn table_error(path: &Path, error: redb::TableError) -> StorageError {
    match error {
        redb::TableError::TableTypeMismatch { .. }
        | redb::TableError::TableIsMultimap(_)
        | redb::TableError::TypeDefinitionChanged { .. } => StorageError::Corrupt {
            path: path.to_path_buf(),
            source: Box::new(error.into()),
        },
        error => StorageError::table(path, SCHEMA_VERSION_TABLE_NAME, error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether each migration's target is above 1 (the first schema needs none), at most
    /// `version`, and above the previous one's.
    fn well_formed(migrations: &[(u32, Migration)], version: u32) -> bool {
        let mut previous = 1;
        migrations.iter().all(|&(target, _)| {
            let ascends = target > previous && target <= version;
            previous = target;
            ascends
        })
    }

    #[expect(
        clippy::unnecessary_wraps,
        reason = "a migration's signature; this one has nothing to do"
    )]
    fn nothing(_: &WriteTransaction, _: &Path) -> Result<(), StorageError> {
        Ok(())
    }

    #[test]
    fn migrations_ascend_and_stop_at_the_current_version() {
        assert!(well_formed(MIGRATIONS, SCHEMA_VERSION));
        assert!(well_formed(&[(2, nothing), (3, nothing)], 3));
        assert!(!well_formed(&[(3, nothing), (2, nothing)], 3));
        assert!(!well_formed(&[(2, nothing), (4, nothing)], 3));
        assert!(!well_formed(&[(1, nothing)], 3));
    }
}
