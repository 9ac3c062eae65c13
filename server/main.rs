use clap::{Parser, Subcommand};

use citizen_site::app::{shutdown_signal, Application};
use citizen_site::cli;
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
    #[command(flatten)]
    Operate(cli::Operate),
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
        Some(Command::Operate(command)) => {
            // Standard output is the command's (a table, JSON, an export):
            // only warnings and errors are logged, to standard error.
            telemetry::init_cli();
            if let Err(e) = command.run().await {
                // The message and its causes, for a person: no backtrace.
                eprintln!("error: {e:#}");
                std::process::exit(1);
            }
            return Ok(());
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
        None => {
            tracing::info!(addr = %addresses.main, "listening; rendering isolates are starting")
        }
        Some(http) => {
            tracing::info!(https = %addresses.main, %http, "listening (HTTPS, and HTTP redirecting to it); rendering isolates are starting")
        }
    }
    let mut server = tokio::spawn(app.run_until(shutdown_signal()));
    let ready = state.wait_ready();
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
