//! `citizen-site team ...`: the people on /about, without SQL.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Subcommand, ValueEnum};

use super::database::{self, Database};
use super::output::{clip, print_json, printable, table};
use crate::team::{self, Change, NewMember};

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
    /// name is required). Members are matched by name; a member already
    /// there keeps each field the file leaves out, and a field given as ""
    /// or null is emptied. A file naming a member twice is refused. Says
    /// how many were added, updated and unchanged.
    Import {
        /// The JSON file.
        file: PathBuf,
        /// Remove every member not in the file (a file with no member is
        /// refused: `team remove` empties the team one by one).
        #[arg(long)]
        replace: bool,
        /// Make the database if there is none yet (by default the server's
        /// first start makes it, and this refuses a missing one).
        #[arg(long)]
        create: bool,
    },
    /// Add a member, or update one: a member already there keeps every
    /// field not given (--clear empties one). Says `added NAME`, `updated
    /// NAME (the fields that changed)` or `unchanged NAME`.
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
        /// Empty this field of a member already there (repeat for more);
        /// a field cannot be given and cleared at once.
        #[arg(long, value_name = "FIELD", value_enum)]
        clear: Vec<Field>,
        /// Make the database if there is none yet (by default the server's
        /// first start makes it, and this refuses a missing one).
        #[arg(long)]
        create: bool,
    },
    /// Remove a member by name.
    Remove {
        /// The member's name, as `team list` shows it.
        name: String,
    },
}

/// A member's field, for `--clear`: as the table and the import file name
/// it, or as its flag is spelled (`x-profile`, `image-url`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Field {
    Role,
    Bio,
    Linkedin,
    #[value(name = "x_profile", alias = "x-profile")]
    XProfile,
    #[value(name = "image_url", alias = "image-url")]
    ImageUrl,
}

impl Field {
    /// Its name in the table (one of [`team::FIELDS`]).
    fn name(self) -> &'static str {
        match self {
            Field::Role => "role",
            Field::Bio => "bio",
            Field::Linkedin => "linkedin",
            Field::XProfile => "x_profile",
            Field::ImageUrl => "image_url",
        }
    }
}

/// Runs a team command. A command that changes the team needs the site's
/// database, as every command does: with `--create` (add, import), one
/// that is not there yet is made, so that a team can be set up before the
/// first start. `team list` only reads: it neither makes nor migrates one.
pub async fn run(database: &Database, cmd: TeamCommand) -> anyhow::Result<()> {
    match cmd {
        TeamCommand::List { json } => {
            let db = database::open_read_only(database).await?;
            let members = team::list(&db).await?;
            if json {
                print_json(&serde_json::to_value(members)?);
            } else if members.is_empty() {
                println!("(no team members)");
            } else {
                let rows: Vec<Vec<String>> = members
                    .iter()
                    .map(|m| {
                        vec![
                            printable(&m.name),
                            printable(&m.role),
                            clip(&printable(&m.image_url), 40),
                        ]
                    })
                    .collect();
                println!("{}", table(&["NAME", "ROLE", "IMAGE"], &rows));
            }
        }
        TeamCommand::Import {
            file,
            replace,
            create,
        } => {
            // The file first: a bad one changes nothing, and makes no database.
            let text = std::fs::read_to_string(&file).map_err(|e| {
                anyhow::anyhow!(
                    "{}; nothing was changed",
                    crate::config::io_problem(&file, false, &e)
                )
            })?;
            let members: Vec<NewMember> = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a JSON array of members", file.display()))?;
            if let Some(blank) = members.iter().position(|m| m.name.trim().is_empty()) {
                anyhow::bail!(
                    "{}: member {} has no name; nothing was changed",
                    file.display(),
                    blank + 1
                );
            }
            // Each name once: a second entry would overwrite the first
            // within the same import, and the counts would say neither.
            for (i, m) in members.iter().enumerate() {
                if let Some(again) = members[i + 1..].iter().position(|o| o.name == m.name) {
                    anyhow::bail!(
                        "{}: members {} and {} are both named {:?}: name each member once (merge the two); nothing was changed",
                        file.display(),
                        i + 1,
                        i + 2 + again,
                        printable(&m.name)
                    );
                }
            }
            if replace && members.is_empty() {
                anyhow::bail!(
                    "{} holds no member, and --replace would remove the whole team: to empty it on purpose, remove each member (citizen-site team remove NAME); nothing was changed",
                    file.display()
                );
            }
            let db = database::open_or_create(database, create).await?;
            let done = team::import(&db, &members, replace).await?;
            let mut line = format!(
                "imported {} member(s): {} added, {} updated, {} unchanged",
                done.members.len(),
                done.count(|c| matches!(c, Change::Added)),
                done.count(|c| matches!(c, Change::Updated(_))),
                done.count(|c| matches!(c, Change::Unchanged)),
            );
            if replace {
                line.push_str(&format!("; {} removed", done.removed));
            }
            println!("{line}");
        }
        TeamCommand::Add {
            name,
            role,
            bio,
            linkedin,
            x_profile,
            image_url,
            clear,
            create,
        } => {
            anyhow::ensure!(!name.trim().is_empty(), "--name must not be empty");
            let mut member = NewMember {
                name,
                role,
                bio,
                linkedin,
                x_profile,
                image_url,
            };
            let mut cleared = Vec::with_capacity(clear.len());
            for field in clear {
                // Given twice (as `image-url` and `image_url`, say), cleared once.
                if cleared.contains(&field) {
                    continue;
                }
                cleared.push(field);
                let slot = match field {
                    Field::Role => &mut member.role,
                    Field::Bio => &mut member.bio,
                    Field::Linkedin => &mut member.linkedin,
                    Field::XProfile => &mut member.x_profile,
                    Field::ImageUrl => &mut member.image_url,
                };
                if slot.is_some() {
                    anyhow::bail!(
                        "--{} and --clear {}: give the field a value or clear it, not both; nothing was changed",
                        field.name().replace('_', "-"),
                        field.name()
                    );
                }
                *slot = Some(String::new());
            }
            let db = database::open_or_create(database, create).await?;
            let done = team::import(&db, std::slice::from_ref(&member), false).await?;
            let name = printable(&member.name);
            match done.members.first().map(|(_, c)| c) {
                Some(Change::Added) => println!("added {name}"),
                Some(Change::Updated(fields)) => {
                    println!("updated {name} ({})", fields.join(", "))
                }
                Some(Change::Unchanged) | None => println!("unchanged {name}"),
            }
        }
        TeamCommand::Remove { name } => {
            let db = database::open(database).await?;
            if team::remove(&db, &name).await? {
                println!("removed {name}");
            } else {
                anyhow::bail!("no team member named {name:?}");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum;

    use super::Field;

    /// `--clear` takes the fields by the names the table and the import
    /// file give them, and says them so.
    #[test]
    fn clear_names_the_fields_as_the_table_does() {
        let names: Vec<String> = Field::value_variants()
            .iter()
            .map(|f| f.to_possible_value().unwrap().get_name().to_owned())
            .collect();
        assert_eq!(names, crate::team::FIELDS);
        for f in Field::value_variants() {
            assert_eq!(f.name(), f.to_possible_value().unwrap().get_name(), "{f:?}");
        }
        assert_eq!(Field::from_str("image-url", false), Ok(Field::ImageUrl));
        assert_eq!(Field::from_str("x-profile", false), Ok(Field::XProfile));
    }
}
