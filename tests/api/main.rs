#![recursion_limit = "256"]
//! Integration tests: the real server (real V8 isolates, real router) on a
//! random loopback port, driven over HTTP.

mod helpers;
mod caching;
mod abuse;
mod hostile;
mod operations;
mod resilience;
mod security_headers;
mod shutdown;
mod content;
mod intro;
mod pages;
mod screens;
mod seo;
mod stripe;
mod stripe_fixtures;
mod team;
mod ssr_faults;
mod serve_mode;
