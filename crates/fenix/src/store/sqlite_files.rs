//! The SQLite database's files are private to the user Fenix runs as.
//!
//! They hold every payload, the delivery log, token hashes and the sealed
//! endpoint secrets. SQLite creates a new database with mode 0644 (less the
//! umask), readable by every local user, and gives the write-ahead log (`-wal`),
//! the shared-memory index (`-shm`) and a rollback journal the mode of the
//! database file when it creates them. So Fenix creates the database file
//! itself, empty and 0600, before SQLite opens it (an empty file is an empty
//! database to SQLite), and tightens any of the four files left wider by an
//! older version or a copy: from then on SQLite makes the others 0600 too.

use std::path::{Path, PathBuf};

use sqlx::sqlite::SqliteConnectOptions;

/// Suffixes of the files SQLite keeps beside the database.
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// The database file of `opts`, unless the URL names an in-memory database.
pub(super) fn database_file(url: &str, opts: &SqliteConnectOptions) -> Option<PathBuf> {
    let path = opts.get_filename();
    let name = path.to_str().unwrap_or_default();
    // `sqlite::memory:` becomes `file:sqlx-in-memory-N`; `?mode=memory` keeps the name.
    let in_memory = name == ":memory:" || name.starts_with("file:sqlx-in-memory-") || url.contains("mode=memory");
    (!in_memory && !name.is_empty()).then(|| path.to_path_buf())
}

/// Creates `db` empty with mode 0600 when missing, and makes it and its
/// companion files 0600 when group or others may read or write them. A file
/// Fenix may not change (another user's) is left as it is, with a warning.
#[cfg(unix)]
pub(super) fn make_private(db: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};

    use anyhow::Context;

    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(db) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).with_context(|| format!("creating the SQLite database {}", db.display())),
    }
    let files = std::iter::once(db.to_path_buf()).chain(COMPANIONS.iter().map(|suffix| {
        let mut name = db.as_os_str().to_os_string();
        name.push(suffix);
        PathBuf::from(name)
    }));
    for file in files {
        let mode = match std::fs::metadata(&file) {
            Ok(meta) => meta.permissions().mode() & 0o777,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("reading the mode of {}", file.display())),
        };
        if mode & 0o077 == 0 {
            continue;
        }
        match std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)) {
            Ok(()) => tracing::info!(
                file = %file.display(),
                was = format!("{mode:04o}"),
                "database file was open to group or others; made it owner-only (0600)"
            ),
            Err(e) => tracing::warn!(
                file = %file.display(),
                mode = format!("{mode:04o}"),
                error = %e,
                "database file is open to group or others and could not be made owner-only: run `chmod 600` on it"
            ),
        }
    }
    Ok(())
}

#[cfg(not(unix))]
pub(super) fn make_private(_db: &Path) -> anyhow::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::{os::unix::fs::PermissionsExt, str::FromStr};

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_missing_database_is_created_owner_only_and_wider_files_are_tightened() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("fenix.db");
        make_private(&db).unwrap();
        assert_eq!(mode(&db), 0o600);
        assert_eq!(std::fs::metadata(&db).unwrap().len(), 0, "an empty file: SQLite makes the schema");

        let wal = dir.path().join("fenix.db-wal");
        std::fs::write(&wal, b"").unwrap();
        for path in [&db, &wal] {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        make_private(&db).unwrap();
        assert_eq!((mode(&db), mode(&wal)), (0o600, 0o600));
        assert!(!dir.path().join("fenix.db-shm").exists(), "missing companions are not created");
    }

    #[test]
    fn in_memory_databases_have_no_file() {
        for url in ["sqlite::memory:", "sqlite://fenix.db?mode=memory"] {
            assert_eq!(database_file(url, &SqliteConnectOptions::from_str(url).unwrap()), None, "{url}");
        }
        let url = "sqlite:///var/lib/fenix/fenix.db";
        assert_eq!(
            database_file(url, &SqliteConnectOptions::from_str(url).unwrap()),
            Some(PathBuf::from("/var/lib/fenix/fenix.db"))
        );
    }
}
