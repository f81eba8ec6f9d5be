//! [`Store`]: the opened aic database.
//!
//! The model: one redb file, opened in [`redb::ConcurrencyMode::MultiWriter`] so that every aic
//! process on the machine (the MCP server, hook processes, the CLI) can read and write it at
//! once; write transactions are serialised across all of them. Opening brings the file to
//! [`SCHEMA_VERSION`](crate::SCHEMA_VERSION). Tables and their encodings live in later modules,
//! which reach redb through [`Store::database`].

use std::fs::{DirBuilder, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use redb::{ReadTransaction, ReadableDatabase, WriteTransaction};

use crate::StorageError;
use crate::schema::Schema;

/// Memory redb may use to cache pages of the database, read and written: 64 MiB.
///
/// redb's default is 1 GiB, which a long-lived process (the MCP server) fills
/// as the database grows — every compile logs a row and caches a prompt — so
/// its memory grew by about 0.15 MiB per distinct compile with no plateau.
/// The server keeps decoded rows in its own bounded memo, so a smaller page
/// cache costs a warm compile little.
pub const PAGE_CACHE_BYTES: usize = 64 * 1024 * 1024;

/// The one way this crate opens a database: shared by every aic process
/// ([`redb::ConcurrencyMode::MultiWriter`]), page cache bounded by
/// [`PAGE_CACHE_BYTES`].
fn builder() -> redb::Builder {
    let mut builder = redb::Builder::new();
    builder
        .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
        .set_cache_size(PAGE_CACHE_BYTES);
    builder
}

/// The opened aic database: a redb [`Database`](redb::Database) with its path and schema
/// version.
///
/// Several processes may each hold a `Store` on the same file, and so may several threads or
/// components of one process: redb's multi-process locks are per open file description, so two
/// handles in one process share the file as two processes would. A write transaction on one
/// handle makes [`Store::begin_write`] on any other wait until it ends. Still, a process should
/// normally open one `Store` and share it (`Store` is `Send + Sync`; wrap it in an `Arc`):
/// each handle has its own page cache and its own file descriptor.
pub struct Store {
    path: PathBuf,
    database: redb::Database,
    schema_version: u32,
}

impl Store {
    /// Opens the database file at `path`, creating it (and its missing parent directories) if
    /// needed, and brings it to [`SCHEMA_VERSION`](crate::SCHEMA_VERSION).
    ///
    /// Directories it creates get mode 0700 and a database file it creates gets mode 0600 on
    /// unix, since the cache holds source code. Existing directories and files keep their modes.
    /// An empty file is initialised as a new database. The file is opened in
    /// [`redb::ConcurrencyMode::MultiWriter`], so other aic processes may have it open, and be
    /// writing to it, at the same time.
    ///
    /// # Errors
    ///
    /// - [`StorageError::CreateDirectory`] when a parent directory cannot be created.
    /// - [`StorageError::Corrupt`] when the file is not a redb database, is damaged, or has a
    ///   `schema_version` table aic did not write.
    /// - [`StorageError::InUse`] when another program holds the file in a mode that excludes
    ///   sharing (a redb writer in exclusive mode, an aic with an incompatible redb).
    /// - [`StorageError::Open`] for any other failure to open or create the file.
    /// - [`StorageError::SchemaTooNew`] when a newer aic wrote the file. No transaction is
    ///   written to it; like every writable open, this one still lets redb rewrite its header and
    ///   allocator state, so the file's bytes change but its data does not.
    /// - [`StorageError::Transaction`], [`StorageError::Table`], [`StorageError::Storage`] or
    ///   [`StorageError::Commit`] when recording the version or migrating fails.
    ///
    /// # Panics
    ///
    /// Not by itself. But redb trusts a file it closed cleanly: a file whose pages were damaged
    /// outside redb (a disk fault, another program writing into it) can make redb panic here or
    /// on a later read instead of returning [`StorageError::Corrupt`]. A truncated file, a file
    /// that is not a redb database and a damaged header are reported as errors.
    ///
    /// # Examples
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let home = tempfile::tempdir()?;
    /// let store = aic_storage::Store::open(&home.path().join("aic.redb"))?;
    /// assert_eq!(store.schema_version(), aic_storage::SCHEMA_VERSION);
    /// # Ok(())
    /// # }
    /// ```
    pub fn open(path: &Path) -> Result<Self, StorageError> {
        Self::open_with_schema(path, Schema::CURRENT)
    }

    /// Like [`Store::open`], but a database written by a newer aic is opened
    /// anyway: the tables this build knows keep
    /// working, the newer ones are ignored, and the [`StorageError::SchemaTooNew`]
    /// comes back beside the store as a warning to show the user.
    ///
    /// # Errors
    ///
    /// Every error of [`Store::open`] except [`StorageError::SchemaTooNew`].
    pub fn open_compatible(path: &Path) -> Result<(Self, Option<StorageError>), StorageError> {
        match Self::open(path) {
            Ok(store) => Ok((store, None)),
            Err(StorageError::SchemaTooNew {
                path: error_path,
                found,
                supported,
            }) => {
                let database = builder()
                    .create(path)
                    .map_err(|error| StorageError::from_open(path, error))?;
                let store = Self {
                    path: path.to_path_buf(),
                    database,
                    schema_version: found,
                };
                Ok((
                    store,
                    Some(StorageError::SchemaTooNew {
                        path: error_path,
                        found,
                        supported,
                    }),
                ))
            }
            Err(error) => Err(error),
        }
    }

    pub(crate) fn open_with_schema(path: &Path, schema: Schema) -> Result<Self, StorageError> {
        if let Some(parent) = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            create_private_directories(parent).map_err(|source| StorageError::CreateDirectory {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        create_private_file(path).map_err(|error| StorageError::from_open(path, error.into()))?;
        let database = builder()
            .create(path)
            .map_err(|error| StorageError::from_open(path, error))?;
        let schema_version = schema.ensure(&database, path)?;
        Ok(Self {
            path: path.to_path_buf(),
            database,
            schema_version,
        })
    }

    /// Bytes of redb's page cache in use, at most about [`PAGE_CACHE_BYTES`].
    /// Counted only when redb's `cache_metrics` feature is on (the tests turn
    /// it on); 0 otherwise.
    pub fn page_cache_bytes(&self) -> usize {
        self.database.cache_stats().used_bytes()
    }

    /// The database file's path, as given to [`Store::open`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version the database is at: always
    /// [`SCHEMA_VERSION`](crate::SCHEMA_VERSION) once [`Store::open`] has succeeded.
    pub fn schema_version(&self) -> u32 {
        self.schema_version
    }

    /// The redb database, for table modules. Map its errors with the constructors on
    /// [`StorageError`] (or use [`Store::begin_read`] and [`Store::begin_write`]) so that they
    /// name [`Store::path`].
    pub fn database(&self) -> &redb::Database {
        &self.database
    }

    /// Begins a read transaction: a snapshot of the latest commit of any process.
    ///
    /// # Errors
    ///
    /// [`StorageError::Transaction`] when redb cannot begin it (I/O failure, too many readers).
    pub fn begin_read(&self) -> Result<ReadTransaction, StorageError> {
        self.database
            .begin_read()
            .map_err(|error| StorageError::transaction(&self.path, error))
    }

    /// Begins a write transaction, waiting while any process, this one included, has another
    /// open. Commit it with [`Store::commit`]; dropping it aborts.
    ///
    /// # Errors
    ///
    /// [`StorageError::Transaction`] when redb cannot begin it.
    pub fn begin_write(&self) -> Result<WriteTransaction, StorageError> {
        self.database
            .begin_write()
            .map_err(|error| StorageError::transaction(&self.path, error))
    }

    /// Commits a write transaction, durably (redb's default: fsync, about 4 ms).
    ///
    /// # Errors
    ///
    /// [`StorageError::Commit`] when the commit fails; nothing of the transaction is kept.
    pub fn commit(&self, transaction: WriteTransaction) -> Result<(), StorageError> {
        transaction
            .commit()
            .map_err(|error| StorageError::commit(&self.path, error))
    }

    /// Visits every page of every table (the tree of each, leaves included),
    /// without decoding rows: damage anywhere a table reaches — not only in
    /// the tables a command reads — shows here. Returns the pages visited.
    /// Costs one read of the file (about 0.1 s per 100 MB warm).
    ///
    /// redb trusts its pages, so a page damaged outside it can make this
    /// panic instead of returning an error; run it where such a panic is
    /// caught (aic's `home::guarded`).
    ///
    /// # Errors
    ///
    /// [`StorageError`] when a page cannot be read or does not add up
    /// ([`StorageError::is_damage`] says which).
    pub fn verify_pages(&self) -> Result<u64, StorageError> {
        use redb::ReadableTableMetadata;
        let read = self.begin_read()?;
        let storage = |error| StorageError::storage(&self.path, error);
        let mut pages = 0;
        let tables: Vec<_> = read.list_tables().map_err(storage)?.collect();
        for handle in tables {
            let name = redb::TableHandle::name(&handle).to_owned();
            let table = read
                .open_untyped_table(handle)
                .map_err(|error| StorageError::table(&self.path, &name, error))?;
            let stats = table.stats().map_err(storage)?;
            pages += stats.leaf_pages() + stats.branch_pages();
        }
        Ok(pages)
    }
}

/// Opens a table for reading; a table that does not exist yet reads as empty (`None`).
///
/// # Errors
///
/// [`StorageError::Table`] naming the table and the database.
pub(crate) fn open_read<K: redb::Key + 'static, V: redb::Value + 'static>(
    transaction: &ReadTransaction,
    definition: redb::TableDefinition<K, V>,
    path: &Path,
) -> Result<Option<redb::ReadOnlyTable<K, V>>, StorageError> {
    match transaction.open_table(definition) {
        Ok(table) => Ok(Some(table)),
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
        Err(error) => Err(StorageError::table(path, &definition.to_string(), error)),
    }
}

/// Opens a table for writing, creating it when needed.
///
/// # Errors
///
/// [`StorageError::Table`] naming the table and the database.
pub(crate) fn open_write<'txn, K: redb::Key + 'static, V: redb::Value + 'static>(
    transaction: &'txn WriteTransaction,
    definition: redb::TableDefinition<K, V>,
    path: &Path,
) -> Result<redb::Table<'txn, K, V>, StorageError> {
    transaction
        .open_table(definition)
        .map_err(|error| StorageError::table(path, &definition.to_string(), error))
}

/// Creates `directory` and its missing ancestors, each with mode 0700 on unix.
fn create_private_directories(directory: &Path) -> io::Result<()> {
    let mut builder = DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(directory)
}

/// Creates `path` empty with mode 0600 on unix if it does not exist; redb initialises an empty
/// file as a new database. An existing file is neither truncated nor re-moded.
fn create_private_file(path: &Path) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path).map(drop)
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use redb::{ReadableTableMetadata, TableDefinition, TableHandle};

    use super::*;
    use crate::SCHEMA_VERSION;
    use crate::schema::Migration;

    const NOTES: TableDefinition<&str, &str> = TableDefinition::new("notes-v1");
    const RAW_SCHEMA_VERSION: TableDefinition<&str, u32> = TableDefinition::new("schema_version");
    const MIGRATION_LOG: TableDefinition<&str, u64> = TableDefinition::new("migration_log-v1");

    fn read_bytes(path: &Path) -> Vec<u8> {
        let mut bytes = Vec::new();
        OpenOptions::new()
            .read(true)
            .open(path)
            .unwrap()
            .read_to_end(&mut bytes)
            .unwrap();
        bytes
    }

    fn write_bytes(path: &Path, bytes: &[u8]) {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .unwrap()
            .write_all(bytes)
            .unwrap();
    }

    /// The database's tables, read through a read-only open, which leaves the file as it is.
    fn table_names(path: &Path) -> Vec<String> {
        let database = redb::Builder::new()
            .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
            .open_read_only(path)
            .unwrap();
        let read = database.begin_read().unwrap();
        let mut names: Vec<String> = read
            .list_tables()
            .unwrap()
            .map(|handle| handle.name().to_owned())
            .collect();
        names.sort();
        names
    }

    fn insert_note(store: &Store, key: &str, value: &str) {
        let write = store.begin_write().unwrap();
        write.open_table(NOTES).unwrap().insert(key, value).unwrap();
        store.commit(write).unwrap();
    }

    fn note(store: &Store, key: &str) -> Option<String> {
        let read = store.begin_read().unwrap();
        let table = match read.open_table(NOTES) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return None,
            Err(error) => panic!("{error}"),
        };
        table
            .get(key)
            .unwrap()
            .map(|value| value.value().to_owned())
    }

    fn recorded_version(store: &Store) -> Option<u32> {
        let read = store.begin_read().unwrap();
        let table = read.open_table(RAW_SCHEMA_VERSION).unwrap();
        table.get("schema").unwrap().map(|value| value.value())
    }

    #[test]
    fn a_store_can_be_shared_between_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Store>();
    }

    #[test]
    fn creates_a_database_and_reopens_it_with_its_rows() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("aic.redb");
        let store = Store::open(&path).unwrap();
        assert_eq!(store.path(), path);
        insert_note(&store, "greeting", "hello");
        drop(store);

        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version(), SCHEMA_VERSION);
        assert_eq!(note(&store, "greeting").as_deref(), Some("hello"));
    }

    #[test]
    fn an_empty_file_becomes_a_new_database() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("aic.redb");
        write_bytes(&path, b"");
        let store = Store::open(&path).unwrap();
        assert_eq!(recorded_version(&store), Some(SCHEMA_VERSION));
    }

    #[test]
    fn a_new_database_records_the_schema_version() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(&home.path().join("aic.redb")).unwrap();
        assert_eq!(store.schema_version(), SCHEMA_VERSION);
        assert_eq!(recorded_version(&store), Some(SCHEMA_VERSION));
    }

    #[test]
    fn a_database_from_a_newer_aic_is_refused_and_left_untouched() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("aic.redb");
        let newer = Schema {
            version: SCHEMA_VERSION + 1,
            migrations: &[],
        };
        let store = Store::open_with_schema(&path, newer).unwrap();
        insert_note(&store, "written by", "a newer aic");
        drop(store);
        let before = table_names(&path);
        assert_eq!(before, ["notes-v1", "schema_version"]);

        let error = Store::open(&path).err().unwrap();
        match &error {
            StorageError::SchemaTooNew {
                path: error_path,
                found,
                supported,
            } => {
                assert_eq!(error_path, &path);
                assert_eq!(*found, SCHEMA_VERSION + 1);
                assert_eq!(*supported, SCHEMA_VERSION);
            }
            other => panic!("expected SchemaTooNew, got {other:?}"),
        }
        assert!(error.to_string().contains(&path.display().to_string()));
        assert!(error.hint().starts_with("upgrade aic"));

        // redb rewrites its header and allocator state on every writable open and close, so the
        // bytes change; what must not change is the data.
        assert_eq!(table_names(&path), before);
        let store = Store::open_with_schema(&path, newer).unwrap();
        assert_eq!(recorded_version(&store), Some(SCHEMA_VERSION + 1));
        assert_eq!(note(&store, "written by").as_deref(), Some("a newer aic"));
        drop(store);

        // The compatible open reads and writes what it knows, and warns.
        let (store, warning) = Store::open_compatible(&path).unwrap();
        assert!(matches!(warning, Some(StorageError::SchemaTooNew { .. })));
        assert_eq!(store.schema_version(), SCHEMA_VERSION + 1);
        assert_eq!(note(&store, "written by").as_deref(), Some("a newer aic"));
        insert_note(&store, "read by", "an older aic");
        assert_eq!(recorded_version(&store), Some(SCHEMA_VERSION + 1));
    }

    #[test]
    fn a_file_that_is_not_a_redb_database_is_reported_as_corrupt() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("aic.redb");
        let text = "this is not a redb database\n".repeat(1000);
        write_bytes(&path, text.as_bytes());

        let error = Store::open(&path).err().unwrap();
        assert!(matches!(error, StorageError::Corrupt { .. }), "{error:?}");
        assert_eq!(error.path(), path);
        assert!(error.to_string().contains(&path.display().to_string()));
        assert_eq!(
            error.hint(),
            format!(
                "run `aic cache clear`: it moves the damaged `{}` aside and creates an empty one (caches and logs start over)",
                path.display()
            )
        );
        assert_eq!(read_bytes(&path), text.as_bytes());
    }

    #[test]
    fn a_truncated_database_is_reported_as_corrupt() {
        let home = tempfile::tempdir().unwrap();
        for keep in [100, 8192] {
            let path = home.path().join(format!("truncated-{keep}.redb"));
            let store = Store::open(&path).unwrap();
            let write = store.begin_write().unwrap();
            {
                let mut table = write.open_table(NOTES).unwrap();
                for index in 0..2000 {
                    table
                        .insert(format!("key {index}").as_str(), "a value that fills pages")
                        .unwrap();
                }
            }
            store.commit(write).unwrap();
            drop(store);
            OpenOptions::new()
                .write(true)
                .open(&path)
                .unwrap()
                .set_len(keep)
                .unwrap();

            let error = Store::open(&path).err().unwrap();
            assert!(
                matches!(error, StorageError::Corrupt { .. }),
                "{keep}: {error:?}"
            );
            assert_eq!(error.path(), path);
        }
    }

    #[test]
    fn a_schema_version_table_aic_did_not_write_is_reported_as_corrupt() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("aic.redb");
        let foreign = redb::Database::create(&path).unwrap();
        let write = foreign.begin_write().unwrap();
        let table: TableDefinition<u64, u64> = TableDefinition::new("schema_version");
        write.open_table(table).unwrap().insert(1, 2).unwrap();
        write.commit().unwrap();
        drop(foreign);

        let error = Store::open(&path).err().unwrap();
        assert!(matches!(error, StorageError::Corrupt { .. }), "{error:?}");
        assert_eq!(error.path(), path);
    }

    #[test]
    fn a_parent_that_is_a_file_is_reported_with_the_directory() {
        let home = tempfile::tempdir().unwrap();
        let blocker = home.path().join("aic");
        write_bytes(&blocker, b"a file where the directory should be");
        let error = Store::open(&blocker.join("aic.redb")).err().unwrap();
        assert!(
            matches!(&error, StorageError::CreateDirectory { path, .. } if *path == blocker),
            "{error:?}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn created_directories_are_private_and_so_is_the_file() {
        use std::os::unix::fs::PermissionsExt;

        let home = tempfile::tempdir().unwrap();
        let outer = home.path().join("home");
        let inner = outer.join(".aic");
        let path = inner.join("aic.redb");
        drop(Store::open(&path).unwrap());

        let mode = |path: &Path| path.symlink_metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&outer), 0o700);
        assert_eq!(mode(&inner), 0o700);
        assert_eq!(mode(&path), 0o600);
    }

    #[test]
    fn two_handles_in_one_process_share_the_file() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("aic.redb");
        let first = Store::open(&path).unwrap();
        let second = Store::open(&path).unwrap();

        insert_note(&first, "from", "first");
        assert_eq!(note(&second, "from").as_deref(), Some("first"));
        insert_note(&second, "from", "second");
        assert_eq!(note(&first, "from").as_deref(), Some("second"));

        let write = first.begin_write().unwrap();
        assert!(matches!(
            second.database().try_begin_write(),
            Err(redb::TransactionError::WouldBlock)
        ));
        drop(write);
        let write = second.database().try_begin_write().unwrap();
        write.abort().unwrap();
    }

    #[test]
    fn a_write_on_one_handle_waits_for_the_other_handles_write() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("aic.redb");
        let first = Store::open(&path).unwrap();
        let second = Store::open(&path).unwrap();

        let write = first.begin_write().unwrap();
        write
            .open_table(NOTES)
            .unwrap()
            .insert("order", "first")
            .unwrap();
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                let write = second.begin_write().unwrap();
                let previous = write
                    .open_table(NOTES)
                    .unwrap()
                    .insert("order", "second")
                    .unwrap()
                    .map(|value| value.value().to_owned());
                second.commit(write).unwrap();
                previous
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            first.commit(write).unwrap();
            assert_eq!(waiter.join().unwrap().as_deref(), Some("first"));
        });
        assert_eq!(note(&first, "order").as_deref(), Some("second"));
    }

    fn log_migration(
        write: &WriteTransaction,
        path: &Path,
        name: &str,
    ) -> Result<(), StorageError> {
        let mut table = write
            .open_table(MIGRATION_LOG)
            .map_err(|error| StorageError::table(path, "migration_log-v1", error))?;
        let position = table
            .len()
            .map_err(|error| StorageError::storage(path, error))?;
        table
            .insert(name, position)
            .map_err(|error| StorageError::storage(path, error))?;
        Ok(())
    }

    fn never_runs(_: &WriteTransaction, _: &Path) -> Result<(), StorageError> {
        panic!("a migration to a version the database already has ran")
    }

    fn to_two(write: &WriteTransaction, path: &Path) -> Result<(), StorageError> {
        log_migration(write, path, "to 2")
    }

    fn to_three(write: &WriteTransaction, path: &Path) -> Result<(), StorageError> {
        log_migration(write, path, "to 3")
    }

    fn to_four(_: &WriteTransaction, _: &Path) -> Result<(), StorageError> {
        panic!("a migration beyond the target version ran")
    }

    fn fails(write: &WriteTransaction, path: &Path) -> Result<(), StorageError> {
        let wrong: TableDefinition<u64, u64> = TableDefinition::new("schema_version");
        write
            .open_table(wrong)
            .map(drop)
            .map_err(|error| StorageError::table(path, "schema_version", error))
    }

    const MIGRATIONS_TO_THREE: &[(u32, Migration)] =
        &[(1, never_runs), (2, to_two), (3, to_three), (4, to_four)];

    #[test]
    fn an_older_database_runs_the_pending_migrations_in_order() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("aic.redb");
        let version_one = Schema {
            version: 1,
            migrations: &[],
        };
        drop(Store::open_with_schema(&path, version_one).unwrap());

        let version_three = Schema {
            version: 3,
            migrations: MIGRATIONS_TO_THREE,
        };
        let store = Store::open_with_schema(&path, version_three).unwrap();
        assert_eq!(store.schema_version(), 3);
        assert_eq!(recorded_version(&store), Some(3));
        let read = store.begin_read().unwrap();
        let log = read.open_table(MIGRATION_LOG).unwrap();
        assert_eq!(log.get("to 2").unwrap().map(|value| value.value()), Some(0));
        assert_eq!(log.get("to 3").unwrap().map(|value| value.value()), Some(1));
        drop((log, read, store));

        // Up to date now: reopening runs nothing.
        let store = Store::open_with_schema(&path, version_three).unwrap();
        assert_eq!(
            store
                .begin_read()
                .unwrap()
                .open_table(MIGRATION_LOG)
                .unwrap()
                .len()
                .unwrap(),
            2
        );
    }

    #[test]
    fn a_failed_migration_leaves_the_database_at_its_old_version() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("aic.redb");
        let store = Store::open_with_schema(
            &path,
            Schema {
                version: 1,
                migrations: &[],
            },
        )
        .unwrap();
        insert_note(&store, "kept", "yes");
        drop(store);

        let failing = Schema {
            version: 3,
            migrations: &[(2, to_two), (3, fails)],
        };
        let error = Store::open_with_schema(&path, failing).err().unwrap();
        assert!(matches!(error, StorageError::Table { .. }), "{error:?}");

        let store = Store::open_with_schema(
            &path,
            Schema {
                version: 1,
                migrations: &[],
            },
        )
        .unwrap();
        assert_eq!(recorded_version(&store), Some(1));
        assert_eq!(note(&store, "kept").as_deref(), Some("yes"));
        let read = store.begin_read().unwrap();
        assert!(matches!(
            read.open_table(MIGRATION_LOG),
            Err(redb::TableError::TableDoesNotExist(_))
        ));
    }
}
