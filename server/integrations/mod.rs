//! Clients for the services the site calls: Stripe (async-stripe) and
//! Notion (reqwest). Each has connect and request timeouts.

pub mod notion;
pub mod stripe;
