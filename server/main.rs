use clap::{Parser, Subcommand};

use citizen_site::app::handover::{self, Inherited};
use citizen_site::app::{shutdown_signal, Application};
use citizen_site::cli;
use citizen_site::config::{Config, DevArgs, ServeArgs};
use citizen_site::telemetry;

/// mimalloc, not glibc's malloc: a cached hit allocates a few small
/// buffers, and glibc now and then takes a slower path for them
/// (consolidating its free lists), so one page's instructions per hit moved
/// by up to 3 % from one callgrind window to the next (bench row 1).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // The sockets systemd or the previous server passed: read (and their
    // variables cleared) before any thread starts.
    // SAFETY: no other thread runs yet; the runtime starts below.
    let inherited = unsafe { Inherited::from_env() }?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run(cli, inherited))
}

async fn run(cli: Cli, inherited: Inherited) -> anyhow::Result<()> {
    // The site this binary carries, read and checked before a server starts:
    // a missing, cut or altered payload stops it here, with the reason (so an
    // upgrade to it fails and the old server serves on). The operator's
    // commands do not read it.
    if !matches!(cli.command, Some(Command::Operate(_))) {
        if let Err(why) = citizen_site::payload::load() {
            eprintln!("error: {why}");
            std::process::exit(1);
        }
    }
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
            // A reader that has read enough (`| grep -q`, `| head`) ends the
            // command quietly, as it ends any Unix tool, not with a panic.
            // SAFETY: setting a signal's disposition to its default.
            unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
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
    let app = Application::build_on(config, inherited).await?;
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
    // SIGTERM or Ctrl-C; or SIGUSR2, once the successor it starts is ready.
    let handover = app.handover();
    let stop = async move {
        tokio::select! {
            () = shutdown_signal() => {}
            () = handover.on_signal() => {}
        }
    };
    let mut server = tokio::spawn(app.run_until(stop));
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
    // systemd (Type=notify), or the server handing over to this one.
    handover::notify_ready();
    server.await??;
    Ok(())
}
