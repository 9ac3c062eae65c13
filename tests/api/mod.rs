//! Integration tests: the real server (real V8 isolates, real router) on a
//! random loopback port, driven over HTTP.

mod abuse;
mod caching;
mod content;
pub mod fake_notion;
mod first_flight;
pub mod helpers;
mod hostile;
mod intro;
mod operate;
mod operations;
mod pages;
mod resilience;
mod scheduled;
mod screens;
mod security_headers;
mod seo;
mod serve_mode;
mod shutdown;
mod ssr_faults;
mod stripe;
pub mod stripe_fixtures;
mod team;
mod tls_fleet;
