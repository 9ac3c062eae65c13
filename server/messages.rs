//! Every message that the server and the pages both show, read from
//! `content/site/messages.json` (the pages import the same file). The file
//! is in the binary's payload and checked at start (and by `pack`): a
//! missing or unknown key is an error.

use std::sync::LazyLock;

use serde::Deserialize;

pub const MESSAGES_FILE: &str = "content/site/messages.json";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Messages {
    #[serde(rename = "$comment")]
    _comment: String,
    /// The intro form without a name or an email (spec section 8).
    pub missing_fields: String,
    /// The intro request could not be stored.
    pub submit_failed: String,
    /// The form's answer did not say it was stored.
    pub submit_no_success: String,
    pub prices_failed: String,
    pub checkout_unavailable: String,
    pub verify_failed: String,
    pub no_session_id: String,
    /// A delayed payment (SEPA Direct Debit) that the bank refused.
    pub payment_failed: String,
    /// `{seconds}` is the wait.
    pub too_many_requests: String,
    /// The error screen's heading, and the title and description of its page.
    pub error_heading: String,
    pub error_title: String,
    pub error_description: String,
    /// The reasons the error screen shows after its status.
    pub internal_error: String,
    pub unavailable: String,
    /// What the contact form shows at each field in error.
    pub field_errors: FieldErrors,
}

/// The contact form's per-field advice (the spec's alert names no field; a
/// screen-reader user hears these at the field itself).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FieldErrors {
    pub name_missing: String,
    pub email_missing: String,
    pub email_invalid: String,
    pub website_invalid: String,
    /// `{max}` is the limit in characters.
    pub too_long: String,
}

static MESSAGES: LazyLock<Messages> = LazyLock::new(|| {
    crate::payload::get()
        .text(MESSAGES_FILE)
        .and_then(parse)
        .unwrap_or_else(|e| panic!("{e}"))
});

/// The catalogue in `text`; Err names the file and what is wrong.
pub fn parse(text: &str) -> Result<Messages, String> {
    serde_json::from_str(text).map_err(|e| format!("{MESSAGES_FILE}: {e}"))
}

/// The catalogue (parsed once: `Application::build` asks for it at start).
pub fn messages() -> &'static Messages {
    &MESSAGES
}

impl Messages {
    pub fn too_many_requests(&self, seconds: u64) -> String {
        self.too_many_requests
            .replace("{seconds}", &seconds.to_string())
    }
}

impl FieldErrors {
    pub fn too_long(&self, max: usize) -> String {
        self.too_long.replace("{max}", &max.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_has_every_message() {
        let m = messages();
        assert_eq!(
            m.missing_fields,
            "Missing required fields: Please fill in the name and email address."
        );
        assert_eq!(
            m.too_many_requests(7),
            "Too many requests. Please wait 7 seconds and try again."
        );
        assert_eq!(m.field_errors.too_long(200), "Use at most 200 characters");
    }
}
