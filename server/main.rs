use clap::{Parser, Subcommand};

use citizen_site::app::{shutdown_signal, Application};
use citizen_site::config::{Config, ServeArgs};
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
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let args = match cli.command {
        Some(Command::Serve(args)) => args,
        None => cli.serve,
    };
    telemetry::init(args.log_format);
    let config = Config::from(args);
    let app = Application::build(config).await?;
    let addr = app.local_addr();
    let state = app.state();
    tracing::info!(%addr, "listening; rendering isolates are starting");
    let server = tokio::spawn(app.run_until(shutdown_signal()));
    if let Err(why) = state.pool.wait_ready().await {
        anyhow::bail!("the SSR bundle cannot run: {why}");
    }
    tracing::info!("ready: http://{addr}");
    server.await??;
    Ok(())
}
