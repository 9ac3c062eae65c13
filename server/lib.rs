//! citizen-site: the public website of the Citizen Wallet platform, one
//! binary. axum serves React pages rendered inside embedded V8 isolates
//! (deno_core), caches them in moka, and ships the same bundle to the browser
//! for hydration and client-side routing. ARCHITECTURE.md is the map of these
//! modules: their layers, the one way a request takes through them, and the
//! rules the layout keeps (a test checks them, `tests/architecture.rs`).

// Assembly: configuration -> state -> listeners.
pub mod app;
pub mod cli;
pub mod config;
pub mod state;

// The HTTP layer: connections, then requests translated into calls below.
pub mod edge;
pub mod http;

// What a URL shows: resolve, load, make (render and cache).
pub mod pages;

// Rendering and what is being served.
pub mod dev;
pub mod render;
pub mod seo;
pub mod site;

// The domains: each owns its logic and its SQL.
pub mod content;
pub mod contract;
pub mod intake;
pub mod payments;
pub mod team;

// Shared parts every layer may use.
pub mod assets;
pub mod client_ip;
pub mod db;
pub mod html;
pub mod live;
pub mod messages;
pub mod metrics;
pub mod rate_limit;
pub mod security;
pub mod telemetry;
