//! `citizen-site team ...`: the people on /about, without SQL.

use std::path::PathBuf;

use anyhow::Context;
use clap::Subcommand;

use crate::db::Db;
use crate::team::{self, NewMember};

#[derive(Subcommand, Debug)]
pub enum TeamCommand {
    /// Print the team, ordered by name as /about shows it.
    List {
        /// JSON (the import file's format) instead of a table.
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Add or update members from a JSON file: an array of
    /// {"name", "role", "bio", "linkedin", "x_profile", "image_url"} (only
    /// name is required). Members are matched by name.
    Import {
        /// The JSON file.
        file: PathBuf,
        /// Remove every member not in the file.
        #[arg(long)]
        replace: bool,
    },
    /// Add or update one member.
    Add {
        /// Their name, as /about shows it (a member with this name is updated).
        #[arg(long)]
        name: String,
        /// Their role, under the name.
        #[arg(long)]
        role: Option<String>,
        /// A sentence or two about them.
        #[arg(long)]
        bio: Option<String>,
        /// Their LinkedIn profile URL.
        #[arg(long)]
        linkedin: Option<String>,
        /// Their X profile URL.
        #[arg(long)]
        x_profile: Option<String>,
        /// A photo URL (http...), or text / an emoji shown instead.
        #[arg(long)]
        image_url: Option<String>,
    },
    /// Remove a member by name.
    Remove {
        /// The member's name, as `team list` shows it.
        name: String,
    },
}

/// Runs a team command. Unlike the other commands, a change makes the
/// database when there is none yet: a team can be set up before the first
/// start. `team list` only reads: it neither makes nor migrates one.
pub async fn run(database_url: &str, cmd: TeamCommand) -> anyhow::Result<()> {
    let db = if let TeamCommand::List { .. } = cmd {
        super::open_read_only(database_url).await?
    } else {
        crate::db::sqlite_file::make_folder_and_file(database_url)?;
        let db = Db::connect_lazy(database_url)?;
        db.migrate().await.context("preparing the database")?;
        db
    };
    match cmd {
        TeamCommand::List { json: true } => {
            super::print_json(&serde_json::to_value(team::list(&db).await?)?)
        }
        TeamCommand::List { json: false } => {
            let members = team::list(&db).await?;
            if members.is_empty() {
                println!("(no team members)");
            } else {
                let rows: Vec<Vec<String>> = members
                    .iter()
                    .map(|m| {
                        vec![
                            super::printable(&m.name),
                            super::printable(&m.role),
                            super::clip(&super::printable(&m.image_url), 40),
                        ]
                    })
                    .collect();
                println!("{}", super::table(&["NAME", "ROLE", "IMAGE"], &rows));
            }
        }
        TeamCommand::Import { file, replace } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            let members: Vec<NewMember> = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a JSON array of members", file.display()))?;
            if let Some(blank) = members.iter().position(|m| m.name.trim().is_empty()) {
                anyhow::bail!("{}: member {} has no name", file.display(), blank + 1);
            }
            let n = team::import(&db, &members, replace).await?;
            println!("imported {n} member(s)");
        }
        TeamCommand::Add {
            name,
            role,
            bio,
            linkedin,
            x_profile,
            image_url,
        } => {
            anyhow::ensure!(!name.trim().is_empty(), "--name must not be empty");
            team::import(
                &db,
                &[NewMember {
                    name,
                    role,
                    bio,
                    linkedin,
                    x_profile,
                    image_url,
                }],
                false,
            )
            .await?;
            println!("saved");
        }
        TeamCommand::Remove { name } => {
            if team::remove(&db, &name).await? {
                println!("removed {name}");
            } else {
                anyhow::bail!("no team member named {name:?}");
            }
        }
    }
    Ok(())
}
