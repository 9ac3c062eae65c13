//! What is found of the site's folders and files that other users may
//! reach, and how each finding is said to the operator.

use std::fmt;
use std::path::PathBuf;

use super::make::OTHERS;

/// One of the site's folders or files that other users may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// Made its owner's alone (by [`tighten`](super::tighten)).
    Tightened { path: PathBuf, was: u32, now: u32 },
    /// This user may make it its owner's alone, as the server does at its
    /// start (found by [`survey`](super::survey)).
    Loose { path: PathBuf, mode: u32 },
    /// Left as it is: `why` says who cannot or will not change it, and why
    /// (`nobody (uid 65534) cannot change that (its owner is root (uid
    /// 0))`).
    Kept {
        path: PathBuf,
        mode: u32,
        why: String,
    },
    /// Named as one of the site's files, but maybe not one: the database's
    /// name holding no SQLite database (a mistyped `DATABASE_URL`, a link
    /// to another file), or a file with other names (a hard link, maybe
    /// from outside the site's folders). Left as it is: `why` says which.
    Unlike {
        path: PathBuf,
        mode: u32,
        why: String,
    },
    /// A folder the site's files are in that is not the site's alone: left
    /// as it is.
    Shared {
        path: PathBuf,
        mode: u32,
        why: Sharing,
    },
}

/// Why a folder the site's files are in is not the site's to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sharing {
    /// It holds `0`, which is not the site's.
    Holds(String),
    /// Its sticky bit is set: a folder shared by users, as /tmp.
    Sticky,
    /// Every user may write in it, and its sticky bit is not set: any user
    /// may rename or replace what is in it.
    EveryoneWrites,
    /// A folder of the system's (`/`, `/tmp`, `/srv`, `/home`...).
    System,
}

impl Finding {
    /// Whether the operator has something to do: a folder or file the
    /// server cannot or will not make private, or a folder where any user
    /// may replace the site's files.
    pub fn is_warning(&self) -> bool {
        // Sticky and every user's to write in: any user may plant the
        // site's `-wal`, `-shm` or `.lock` there before it makes them.
        match self {
            Finding::Kept { .. } | Finding::Unlike { .. } => true,
            Finding::Shared { why, mode, .. } => match why {
                Sharing::EveryoneWrites => true,
                Sharing::Sticky => mode & 0o002 != 0,
                _ => false,
            },
            _ => false,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const LEFT: &str =
            "it is left as it is; the site's files in it are made their owner's alone";
        match self {
            Finding::Tightened { path, was, now } => write!(
                f,
                "{} was {} by other users (mode {was:04o}): now {now:04o}, its owner's alone",
                path.display(),
                reach(*was)
            ),
            Finding::Loose { path, mode } => write!(
                f,
                "{} is {} by other users (mode {mode:04o}): the server makes it {:04o} (its owner's alone) at its start",
                path.display(),
                reach(*mode),
                mode & !OTHERS
            ),
            Finding::Kept { path, mode, why } => write!(
                f,
                "{} is {} by other users (mode {mode:04o}), and {why}: run chmod {:o} {} as its owner",
                path.display(),
                reach(*mode),
                mode & !OTHERS & 0o777,
                path.display()
            ),
            Finding::Unlike { path, mode, why } => write!(
                f,
                "{} is {} by other users (mode {mode:04o}), but {why}: it is left as it is",
                path.display(),
                reach(*mode)
            ),
            Finding::Shared { path, mode, why } => match why {
                Sharing::Holds(other) => write!(
                    f,
                    "{} is {} by other users (mode {mode:04o}) but holds files that are not the site's ({other}): {LEFT}",
                    path.display(),
                    reach(*mode)
                ),
                Sharing::Sticky => write!(
                    f,
                    "{} is a {} (mode {mode:04o}, the sticky bit set): {LEFT}",
                    path.display(),
                    match mode & 0o002 != 0 {
                        true => "folder every user may write in",
                        false => "shared folder",
                    }
                ),
                Sharing::EveryoneWrites => write!(
                    f,
                    "{} is a folder every user may write in (mode {mode:04o}) without the sticky bit: any user may rename or replace the site's files in it; it is left as it is: give the site's files a folder of their own",
                    path.display()
                ),
                Sharing::System => write!(
                    f,
                    "{} is a system folder, {} by other users (mode {mode:04o}): {LEFT}",
                    path.display(),
                    reach(*mode)
                ),
            },
        }
    }
}

/// What other users may do with a folder or file of mode `mode`.
fn reach(mode: u32) -> &'static str {
    match (mode & 0o044 != 0, mode & 0o022 != 0) {
        (true, true) => "readable and writable",
        (true, false) => "readable",
        (false, true) => "writable",
        (false, false) => "reachable",
    }
}
