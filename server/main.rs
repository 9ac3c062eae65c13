use clap::{Parser, Subcommand};

use citizen_site::app::{shutdown_signal, Application};
use citizen_site::cli::{self, TeamCommand};
use citizen_site::config::{Config, DevArgs, ServeArgs};
use citizen_site::telemetry;

/// The Citizen Wallet website: server-rendered React from one binary.
#[derive(Parser)]
#[command(version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the site (the default).
    Serve(ServeArgs),
    /// Serve a checkout's sources for editing: every change to a page,
    /// style, post or community is rebuilt and the open pages reload
    /// (needs Node.js and the checkout's npm packages).
    Dev(DevArgs),
    /// Manage the team shown on /about.
    Team {
        /// The database to change (same default as the server's).
        #[arg(long, env = "DATABASE_URL", default_value = "sqlite://data/citizen-site.db", global = true)]
        database_url: String,
        #[command(subcommand)]
        command: TeamCommand,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let config: Config = match cli.command {
        Some(Command::Serve(args)) => {
            telemetry::init(args.log_format);
            Config::from_args(args)?
        }
        Some(Command::Dev(args)) => {
            telemetry::init(args.serve.log_format);
            Config::from_dev_args(args)?
        }
        Some(Command::Team { database_url, command }) => {
            telemetry::init(citizen_site::config::LogFormat::Text);
            if let Some(dir) = std::path::Path::new(database_url.trim_start_matches("sqlite://")).parent() {
                if database_url.starts_with("sqlite://") && !dir.as_os_str().is_empty() {
                    std::fs::create_dir_all(dir)?;
                }
            }
            return cli::team(&database_url, command).await;
        }
        None => {
            telemetry::init(cli.serve.log_format);
            Config::from_args(cli.serve)?
        }
    };
    let app = Application::build(config).await?;
    let addresses = app.addresses();
    let state = app.state();
    match addresses.redirect {
        None => tracing::info!(addr = %addresses.main, "listening; rendering isolates are starting"),
        Some(http) => {
            tracing::info!(https = %addresses.main, %http, "listening (HTTPS, and HTTP redirecting to it); rendering isolates are starting")
        }
    }
    let mut server = tokio::spawn(app.run_until(shutdown_signal()));
    let ready = async {
        state.site().front.pool.wait_ready().await?;
        while !state.ready.load(std::sync::atomic::Ordering::Acquire) {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        Ok::<(), String>(())
    };
    tokio::select! {
        // Stopped (a signal) before it was ready.
        stopped = &mut server => return stopped?,
        ready = ready => match ready {
            Ok(()) if addresses.redirect.is_some() => tracing::info!("ready: {}", state.config.site_url),
            Ok(()) => tracing::info!("ready: http://{}", addresses.main),
            Err(why) => anyhow::bail!("the SSR bundle cannot run: {why}"),
        },
    }
    server.await??;
    Ok(())
}
