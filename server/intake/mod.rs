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

/// A form field the visitor must fix: its name (IntroForm's, which the
/// form's inputs carry) and what to do, shown at the field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// Why a form was refused: the message the API answers with (the spec's,
/// or one that names the field) and each field the visitor must fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub message: String,
    /// The text fields in error, in the form's order; empty for a rule no
    /// text field breaks (an unknown tag, a bad submission id).
    pub fields: Vec<FieldError>,
}

impl Invalid {
    /// The spec's message for an empty name or email, and which is empty.
    fn missing(name: bool, email: bool) -> Invalid {
        let m = crate::messages::messages();
        let advice = &m.field_errors;
        let fields = [
            (name, "name", &advice.name_missing),
            (email, "email", &advice.email_missing),
        ]
        .into_iter()
        .filter(|(empty, _, _)| *empty)
        .map(|(_, field, message)| FieldError {
            field: field.into(),
            message: message.clone(),
        })
        .collect();
        Invalid {
            message: m.missing_fields.clone(),
            fields,
        }
    }

    /// `message` names the field; `advice` is what the form shows at a
    /// text field (None for the others).
    fn field(message: String, field: &str, advice: Option<String>) -> Invalid {
        Invalid {
            message,
            fields: advice
                .map(|message| FieldError {
                    field: field.into(),
                    message,
                })
                .into_iter()
                .collect(),
        }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl IntroRequest {
    /// The request a form makes, if it keeps every rule; its tags must be
    /// among `tag_options` (the site's, `content/site/intro-tags.json`).
    pub fn parse(form: IntroForm, tag_options: &[String]) -> Result<IntroRequest, Invalid> {
        let name = form.name.trim().to_owned();
        let (no_name, no_email) = (name.is_empty(), form.email.trim().is_empty());
        if no_name || no_email {
            return Err(Invalid::missing(no_name, no_email));
        }
        let advice = &crate::messages::messages().field_errors;
        limit("name", &name, MAX_NAME)?;
        let contact_person = form.contact_person.trim().to_owned();
        limit("contactPerson", &contact_person, MAX_NAME)?;
        let email = EmailAddress::parse(&form.email).map_err(|message| {
            let too_long = form.email.trim().len() > MAX_EMAIL;
            let at_field = if too_long {
                advice.too_long(MAX_EMAIL)
            } else {
                advice.email_invalid.clone()
            };
            Invalid::field(message, "email", Some(at_field))
        })?;
        let website = form.website.trim().to_owned();
        limit("website", &website, MAX_WEBSITE)?;
        if !website.is_empty() {
            let ok = ammonia::Url::parse(&website)
                .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
            if !ok {
                return Err(Invalid::field(
                    "website: not a valid http(s) URL".into(),
                    "website",
                    Some(advice.website_invalid.clone()),
                ));
            }
        }
        let description = form.description.trim().to_owned();
        limit("description", &description, MAX_DESCRIPTION)?;
        let mut tags: Vec<String> = Vec::new();
        for tag in form.tags {
            let Some(known) = tag_options.iter().find(|t| **t == tag) else {
                return Err(Invalid::field(
                    format!("tags: {tag:?} is not one of the tag options"),
                    "tags",
                    None,
                ));
            };
            if !tags.iter().any(|t| t == known) {
                tags.push(known.clone());
            }
        }
        tags.sort_by_key(|t| tag_options.iter().position(|o| o == t));
        let submission_id = match form.submission_id.trim() {
            "" => None,
            raw => Some(uuid::Uuid::parse_str(raw).map_err(|_| {
                Invalid::field("submissionId: not a valid id".into(), "submissionId", None)
            })?),
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

/// A text field's length rule.
fn limit(field: &str, value: &str, max: usize) -> Result<(), Invalid> {
    if value.chars().count() > max {
        let advice = crate::messages::messages().field_errors.too_long(max);
        Err(Invalid::field(
            format!("{field}: at most {max} characters"),
            field,
            Some(advice),
        ))
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
        let blank = IntroForm {
            name: "  ".into(),
            email: "".into(),
            ..form()
        };
        for (f, marked) in [
            (
                IntroForm {
                    name: "  ".into(),
                    ..form()
                },
                vec![("name", "Enter your community's name")],
            ),
            (
                IntroForm {
                    email: "".into(),
                    ..form()
                },
                vec![("email", "Enter an email address")],
            ),
            (
                blank,
                vec![
                    ("name", "Enter your community's name"),
                    ("email", "Enter an email address"),
                ],
            ),
        ] {
            let err = IntroRequest::parse(f, &tag_options()).unwrap_err();
            assert_eq!(
                err.to_string(),
                "Missing required fields: Please fill in the name and email address."
            );
            let fields: Vec<(&str, &str)> = err
                .fields
                .iter()
                .map(|f| (f.field.as_str(), f.message.as_str()))
                .collect();
            assert_eq!(fields, marked);
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
            let err = IntroRequest::parse(f, &tag_options()).unwrap_err();
            assert!(err.to_string().starts_with(prefix), "{err}");
            // A text field is marked with what to do; a tag is no text field.
            let field = prefix.trim_end_matches(':');
            let marked: Vec<&str> = err.fields.iter().map(|f| f.field.as_str()).collect();
            if field == "tags" {
                assert!(marked.is_empty(), "{marked:?}");
            } else {
                assert_eq!(marked, [field], "{err}");
            }
        }
        let advice = |f: IntroForm| {
            IntroRequest::parse(f, &tag_options()).unwrap_err().fields[0]
                .message
                .clone()
        };
        assert_eq!(
            advice(IntroForm {
                email: "a@localhost".into(),
                ..form()
            }),
            "Enter an email address like name@example.org"
        );
        assert_eq!(
            advice(IntroForm {
                website: "ftp://example.org".into(),
                ..form()
            }),
            "Enter the website's full address, starting with https:// or http://"
        );
        assert_eq!(
            advice(IntroForm {
                name: "x".repeat(201),
                ..form()
            }),
            "Use at most 200 characters"
        );
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
                    Err(e) if e.message == crate::messages::messages().missing_fields => {
                        let marked: Vec<&str> = e.fields.iter().map(|f| f.field.as_str()).collect();
                        prop_assert!(!marked.is_empty() && marked.iter().all(|f| ["name", "email"].contains(f)), "{:?}", marked);
                    }
                    Err(e) => {
                        let field = e.message.split(':').next().unwrap_or("");
                        prop_assert!(["name", "contactPerson", "email", "website", "description", "tags", "submissionId"].contains(&field), "{}", e.message);
                        // A text field's rule marks that field, and only it.
                        let marked: Vec<&str> = e.fields.iter().map(|f| f.field.as_str()).collect();
                        let expected: Vec<&str> = if ["tags", "submissionId"].contains(&field) { vec![] } else { vec![field] };
                        prop_assert_eq!(marked, expected);
                    }
                }
            }
        }
    }
}
