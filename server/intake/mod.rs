//! Intake: intro requests (the contact form, spec sections 3-5 and 7:
//! save-to-notion). This file parses a submission into an [`IntroRequest`]
//! (or says which rule it breaks); [`store`] holds the forwarder's SQL; [`forwarder`]
//! sends stored requests on through [`notion`], the Notion client;
//! [`records`] is what an operator reads and releases.
//!
//! Store first, forward second: a request that passes validation is written
//! to the database in one transaction before the visitor hears it worked;
//! the [`forwarder`] then creates its Notion page, exactly once.

pub mod forwarder;
pub mod notion;
pub mod records;
pub mod store;

use std::fmt;

use serde::{Deserialize, Serialize};

pub const MAX_NAME: usize = 200;
pub const MAX_EMAIL: usize = 254;
pub const MAX_WEBSITE: usize = 2_000;
pub const MAX_DESCRIPTION: usize = 5_000;

/// What the form sends, as sent (JSON from the script, or form fields).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct IntroForm {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub contact_person: String,
    #[serde(default)]
    pub email: String,
    #[serde(default)]
    pub website: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub tags: Vec<String>,
    /// A UUID the page makes for each submission, so a retry after a lost
    /// answer is stored once. Optional: a plain form post has none.
    #[serde(default)]
    pub submission_id: String,
    /// The honeypot: a field people never see or fill; bots do.
    #[serde(default, rename = "fax", skip_serializing)]
    pub honeypot: String,
}

impl IntroForm {
    /// A bot filled in the field no person sees.
    pub fn is_bot(&self) -> bool {
        !self.honeypot.trim().is_empty()
    }
}

/// An email address that parsed (parse, don't validate).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EmailAddress(String);

impl EmailAddress {
    pub fn parse(raw: &str) -> Result<EmailAddress, String> {
        let raw = raw.trim();
        if raw.len() > MAX_EMAIL {
            return Err(format!("email: at most {MAX_EMAIL} characters"));
        }
        // A deliverable address: local@domain with a dot in the domain.
        let ok = email_address::EmailAddress::parse_with_options(
            raw,
            email_address::Options::default().without_display_text(),
        )
        .is_ok_and(|e| e.domain().contains('.') && !e.domain().starts_with('['));
        if ok {
            Ok(EmailAddress(raw.to_owned()))
        } else {
            Err("email: not a valid email address".into())
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EmailAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A request that passed every rule; the only kind the store accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IntroRequest {
    pub name: String,
    pub contact_person: String,
    pub email: EmailAddress,
    /// Empty, or an http(s) URL.
    pub website: String,
    pub description: String,
    /// Distinct, each one of the tag options, in the form's order.
    pub tags: Vec<String>,
    /// The page's id for this submission, if it sent one.
    pub submission_id: Option<uuid::Uuid>,
}

/// Why a form was refused; the message names the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    /// The spec's message for an empty name or email.
    MissingRequired,
    Field(String),
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Invalid::MissingRequired => f.write_str(&crate::messages::messages().missing_fields),
            Invalid::Field(m) => f.write_str(m),
        }
    }
}

impl IntroRequest {
    /// The request a form makes, if it keeps every rule; its tags must be
    /// among `tag_options` (the site's, `content/site/intro-tags.json`).
    pub fn parse(form: IntroForm, tag_options: &[String]) -> Result<IntroRequest, Invalid> {
        let name = form.name.trim().to_owned();
        if name.is_empty() || form.email.trim().is_empty() {
            return Err(Invalid::MissingRequired);
        }
        let field = |m: String| Invalid::Field(m);
        limit("name", &name, MAX_NAME).map_err(field)?;
        let contact_person = form.contact_person.trim().to_owned();
        limit("contactPerson", &contact_person, MAX_NAME).map_err(field)?;
        let email = EmailAddress::parse(&form.email).map_err(field)?;
        let website = form.website.trim().to_owned();
        limit("website", &website, MAX_WEBSITE).map_err(field)?;
        if !website.is_empty() {
            let ok = ammonia::Url::parse(&website)
                .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
            if !ok {
                return Err(field("website: not a valid http(s) URL".into()));
            }
        }
        let description = form.description.trim().to_owned();
        limit("description", &description, MAX_DESCRIPTION).map_err(field)?;
        let mut tags: Vec<String> = Vec::new();
        for tag in form.tags {
            let Some(known) = tag_options.iter().find(|t| **t == tag) else {
                return Err(field(format!(
                    "tags: {tag:?} is not one of the tag options"
                )));
            };
            if !tags.iter().any(|t| t == known) {
                tags.push(known.clone());
            }
        }
        tags.sort_by_key(|t| tag_options.iter().position(|o| o == t));
        let submission_id = match form.submission_id.trim() {
            "" => None,
            raw => Some(
                uuid::Uuid::parse_str(raw)
                    .map_err(|_| field("submissionId: not a valid id".into()))?,
            ),
        };
        Ok(IntroRequest {
            name,
            contact_person,
            email,
            website,
            description,
            tags,
            submission_id,
        })
    }
}

fn limit(field: &str, value: &str, max: usize) -> Result<(), String> {
    if value.chars().count() > max {
        Err(format!("{field}: at most {max} characters"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> IntroForm {
        IntroForm {
            name: "Riverbend".into(),
            email: "ana@example.org".into(),
            ..Default::default()
        }
    }

    /// The site's tag options.
    pub(super) fn tag_options() -> Vec<String> {
        crate::content::parse_intro_tags(include_str!("../../content/site/intro-tags.json"))
            .unwrap()
    }

    #[test]
    fn name_and_email_are_required_with_the_spec_message() {
        for f in [
            IntroForm {
                name: "  ".into(),
                ..form()
            },
            IntroForm {
                email: "".into(),
                ..form()
            },
        ] {
            assert_eq!(
                IntroRequest::parse(f, &tag_options())
                    .unwrap_err()
                    .to_string(),
                "Missing required fields: Please fill in the name and email address."
            );
        }
    }

    #[test]
    fn each_field_rule_names_its_field() {
        let cases = [
            (
                IntroForm {
                    email: "not-an-email".into(),
                    ..form()
                },
                "email:",
            ),
            (
                IntroForm {
                    email: "a@localhost".into(),
                    ..form()
                },
                "email:",
            ),
            (
                IntroForm {
                    website: "javascript:alert(1)".into(),
                    ..form()
                },
                "website:",
            ),
            (
                IntroForm {
                    website: "example.org".into(),
                    ..form()
                },
                "website:",
            ),
            (
                IntroForm {
                    name: "x".repeat(201),
                    ..form()
                },
                "name:",
            ),
            (
                IntroForm {
                    description: "x".repeat(5001),
                    ..form()
                },
                "description:",
            ),
            (
                IntroForm {
                    tags: vec!["Gardening".into()],
                    ..form()
                },
                "tags:",
            ),
        ];
        for (f, prefix) in cases {
            let err = IntroRequest::parse(f, &tag_options())
                .unwrap_err()
                .to_string();
            assert!(err.starts_with(prefix), "{err}");
        }
    }

    #[test]
    fn the_seven_tag_options() {
        assert_eq!(tag_options().len(), 7);
        assert_eq!(tag_options()[0], "Cooperative participation");
    }

    #[test]
    fn a_valid_form_is_trimmed_and_tags_deduplicated_in_option_order() {
        let r = IntroRequest::parse(
            IntroForm {
                name: " Riverbend ".into(),
                website: "https://riverbend.example".into(),
                tags: vec!["Loyalty".into(), "Smart money".into(), "Loyalty".into()],
                ..form()
            },
            &tag_options(),
        )
        .unwrap();
        assert_eq!(r.name, "Riverbend");
        assert_eq!(r.tags, vec!["Smart money", "Loyalty"]);
        assert_eq!(r.email.as_str(), "ana@example.org");
    }

    mod properties {
        use super::super::*;
        use super::tag_options;
        use proptest::prelude::*;

        fn text() -> impl Strategy<Value = String> {
            prop_oneof![
                ".{0,40}",
                "[ \t]{0,3}[a-z0-9._%+-]{1,12}@[a-z0-9-]{1,10}\\.[a-z]{2,4}[ \t]{0,3}",
                "<script>[a-z]{0,5}</script>",
                Just("x".repeat(5_001)),
                Just("é".repeat(201)),
            ]
        }

        fn form() -> impl Strategy<Value = IntroForm> {
            let tag = prop_oneof![prop::sample::select(tag_options().to_vec()), ".{0,12}"];
            (
                text(),
                text(),
                text(),
                text(),
                text(),
                prop::collection::vec(tag, 0..10),
                prop_oneof![
                    Just(String::new()),
                    ".{0,40}",
                    Just(uuid::Uuid::new_v4().to_string())
                ],
            )
                .prop_map(
                    |(name, contact_person, email, website, description, tags, submission_id)| {
                        IntroForm {
                            name,
                            contact_person,
                            email,
                            website,
                            description,
                            tags,
                            submission_id,
                            honeypot: String::new(),
                        }
                    },
                )
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 2_000, failure_persistence: None, ..ProptestConfig::default() })]

            /// Any form either becomes a request that keeps every rule, or is
            /// refused with a message that names a field; nothing panics.
            #[test]
            fn validation_accepts_only_requests_that_keep_every_rule(f in form()) {
                match IntroRequest::parse(f, &tag_options()) {
                    Ok(r) => {
                        prop_assert!(!r.name.is_empty() && r.name == r.name.trim() && r.name.chars().count() <= MAX_NAME);
                        prop_assert!(r.contact_person.chars().count() <= MAX_NAME);
                        prop_assert!(r.description.chars().count() <= MAX_DESCRIPTION);
                        let email = r.email.as_str();
                        prop_assert!(email.contains('@') && email.len() <= MAX_EMAIL && email == email.trim());
                        prop_assert!(r.website.is_empty() || r.website.starts_with("http://") || r.website.starts_with("https://"));
                        prop_assert!(r.tags.iter().all(|t| tag_options().contains(t)));
                        let mut distinct = r.tags.clone();
                        distinct.dedup();
                        prop_assert_eq!(distinct.len(), r.tags.len());
                    }
                    Err(Invalid::MissingRequired) => {}
                    Err(Invalid::Field(m)) => {
                        let field = m.split(':').next().unwrap_or("");
                        prop_assert!(["name", "contactPerson", "email", "website", "description", "tags", "submissionId"].contains(&field), "{}", m);
                    }
                }
            }
        }
    }
}
