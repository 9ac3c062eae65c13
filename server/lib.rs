//! citizen-site: the public website of the Citizen Wallet platform, one
//! binary. axum serves React pages rendered inside embedded V8 isolates
//! (deno_core), caches them in moka, and ships the same bundle to the browser
//! for hydration and client-side routing. See README.md for the request flow.

pub mod app;
pub mod assets;
pub mod cli;
pub mod client_ip;
pub mod config;
pub mod content;
pub mod contract;
pub mod db;
pub mod dev;
pub mod edge;
pub mod integrations;
pub mod intro;
pub mod live;
pub mod messages;
pub mod metrics;
pub mod payments;
pub mod rate_limit;
pub mod routes;
pub mod security;
pub mod seo;
pub mod site;
pub mod ssr;
pub mod state;
pub mod telemetry;
