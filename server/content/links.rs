//! Where the server itself sends a visitor: back to the contact page after a
//! form post, to pricing after a checkout that could not start, and from
//! Stripe's Checkout to the success or cancel page. Each is read from the
//! route table, so `content/routes.json` stays the one source of a page's
//! path and query parameters; a table that lacks one does not load.

use super::error::{ContentError, ROUTES_FILE};
use super::routes::{PageId, ParamValues, RouteTable};

/// The addresses the server sends visitors to, as paths of this site.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    /// The contact page: a refused form post is answered with it.
    pub contact: String,
    /// The contact page saying the request was sent (its query parameter
    /// at its first value): a stored form post is redirected there.
    pub contact_sent: String,
    /// The pricing page: a plain checkout post that fails goes back there.
    pub pricing: String,
    /// The success page up to the session id's value (`/success?session_id=`).
    pub checkout_success: String,
    /// The page a visitor who leaves Checkout comes back to.
    pub checkout_cancel: String,
}

impl Links {
    /// The links of `table`, or an error naming the page that lacks what
    /// the server needs of it.
    pub fn read(table: &RouteTable) -> Result<Links, ContentError> {
        let need = |page: PageId, why: &str| {
            table.fixed(page).ok_or_else(|| {
                ContentError::new(
                    ROUTES_FILE,
                    format!(
                        "the {} page needs a route without path parameters: {why}",
                        page.name()
                    ),
                )
            })
        };
        let (contact, contact_query) = need(PageId::Contact, "a form post is answered with it")?;
        let sent = contact_query
            .iter()
            .find_map(|q| match &q.values {
                ParamValues::OneOf(values) => {
                    values.first().map(|v| format!("{contact}?{}={v}", q.name))
                }
                _ => None,
            })
            .ok_or_else(|| {
                ContentError::new(
                    ROUTES_FILE,
                    "the Contact page needs a query parameter with a list of values: \
                     a form post that was stored is sent to its first value",
                )
            })?;
        let (success, success_query) = need(PageId::Success, "Stripe's Checkout returns there")?;
        let session = success_query.first().ok_or_else(|| {
            ContentError::new(
                ROUTES_FILE,
                "the Success page needs a query parameter: Stripe's Checkout puts the session's id in it",
            )
        })?;
        Ok(Links {
            checkout_success: format!("{success}?{}=", session.name),
            contact_sent: sent,
            contact,
            pricing: need(
                PageId::Pricing,
                "a checkout that cannot start goes back there",
            )?
            .0,
            checkout_cancel: need(PageId::Cancel, "Stripe's Checkout returns there")?.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(json: &str) -> Result<Links, ContentError> {
        Links::read(&RouteTable::parse(json).unwrap())
    }

    /// The pages the server sends visitors to, with `contact` as the
    /// contact page's route.
    fn table_with(contact: &str) -> String {
        format!(
            r#"{{"routes": [{contact},
                {{"path": "/pricing", "page": "Pricing", "data": "PricingData"}},
                {{"path": "/success", "page": "Success", "data": "SuccessData", "query": [{{"name": "session_id"}}]}},
                {{"path": "/cancel", "page": "Cancel"}}]}}"#
        )
    }

    #[test]
    fn the_pages_the_server_sends_visitors_to_are_read_from_the_table() {
        let table = RouteTable::parse(include_str!("../../content/routes.json")).unwrap();
        assert_eq!(
            Links::read(&table).unwrap(),
            Links {
                contact: "/contact".into(),
                contact_sent: "/contact?submitted=1".into(),
                pricing: "/pricing".into(),
                checkout_success: "/success?session_id=".into(),
                checkout_cancel: "/cancel".into(),
            }
        );
        // Moved in the table, followed by the server.
        let moved = links(&table_with(
            r#"{"path": "/talk", "page": "Contact", "data": "ContactData", "query": [{"name": "sent", "values": ["yes"]}]}"#,
        ))
        .unwrap();
        assert_eq!(
            (moved.contact.as_str(), moved.contact_sent.as_str()),
            ("/talk", "/talk?sent=yes")
        );
    }

    #[test]
    fn a_table_without_what_the_server_needs_does_not_load() {
        let e = links(&table_with(
            r#"{"path": "/contact", "page": "Contact", "data": "ContactData", "query": [{"name": "submitted"}]}"#,
        ))
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("the Contact page needs a query parameter with a list of values"),
            "{e}"
        );
        let e = links(r#"{"routes": [{"path": "/", "page": "Home"}]}"#).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "content/routes.json: the Contact page needs a route without path parameters"
            ),
            "{e}"
        );
    }
}
