//! The embedded SQLite database as a file: a consistent copy taken while the
//! server runs and writes ([`backup()`], SQLite's `VACUUM INTO`), a copy put
//! back for a stopped server ([`restore()`]), and the lock that tells the two
//! apart ([`ServerLock`]).
//!
//! Every server process holds a shared lock on `<database>.lock` for as long
//! as it runs; a restore takes it exclusively, so it refuses while a server
//! runs (the server would go on writing to the file being replaced, and
//! what visitors sent next would be lost), and a server does not start in
//! the middle of a restore.
//!
//! Each job is a file of its own: the files beside the database
//! (`files.rs`), the lock (`lock.rs`), who may open the database
//! (`access.rs`), its write-ahead log folded in after a stop (`fold.rs`),
//! a copy checked (`inspect.rs`), the backup (`backup.rs`) and the
//! restore (`restore.rs`).

mod access;
mod backup;
mod files;
mod fold;
mod inspect;
mod lock;
mod restore;

pub use access::{access_problem, may};
pub use backup::{backup, Backup};
pub use files::make_folder_and_file;
pub use fold::fold_after_close;
pub use inspect::Counts;
pub use lock::ServerLock;
pub use restore::{restore, Restored};
