use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

use citizen_site::app::inherited::Inherited;
use citizen_site::app::notify;
use citizen_site::app::{shutdown_signal, Application};
use citizen_site::cli;
use citizen_site::config::{Config, DevArgs, Given, Problems, ServeArgs};
use citizen_site::telemetry;

/// mimalloc, not glibc's malloc: a cached hit allocates a few small
/// buffers, and glibc now and then takes a slower path for them
/// (consolidating its free lists), so one page's instructions per hit moved
/// by up to 3 % from one callgrind window to the next (bench row 1).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The Citizen Wallet website: server-rendered React from one binary.
#[derive(Parser)]
#[command(
    version,
    about,
    args_conflicts_with_subcommands = true,
    after_help = citizen_site::config::HELP_AFTER
)]
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
    /// What `pack` runs on the binary it makes: starts as `serve` does,
    /// renders every page, prints which did not render (JSON) and exits.
    #[command(hide = true)]
    ProvePages(ServeArgs),
    #[command(flatten)]
    Operate(cli::Operate),
}

fn main() -> anyhow::Result<()> {
    let matches = Cli::command()
        .try_get_matches()
        .unwrap_or_else(|e| argument_error(e));
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    note_given(&mut cli, &matches);
    let json = wants_json(&matches);
    // The sockets systemd or the previous server passed: read (and their
    // variables cleared) before any thread starts.
    // SAFETY: no other thread runs yet; the runtime starts below.
    let inherited = unsafe { Inherited::from_env() }?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run(cli, inherited, json))
}

/// An argument clap refuses: under `--json`, for a command that takes it,
/// a JSON object on standard output (`{"error", "usage"}`), as the
/// command's own errors are; otherwise clap's text. Exit status 2 either
/// way (help and the version exit 0, as clap prints them).
fn argument_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let informational = matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if informational || !takes_json(&args) {
        e.exit();
    }
    let text = e.render().to_string();
    // The error and its details (clap's possible values, a tip), in one
    // line: not the usage, said apart, nor the pointer to --help.
    let message = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage: ") && !l.starts_with("For more information")
        })
        .collect::<Vec<_>>()
        .join(" ")
        .trim_start_matches("error: ")
        .to_owned();
    let usage = text
        .lines()
        .find_map(|l| l.strip_prefix("Usage: "))
        .map(str::to_owned);
    cli::output::print_json(&serde_json::json!({ "error": message, "usage": usage }));
    std::process::exit(2);
}

/// Whether `args` name `--json` and the (sub)command they name takes it:
/// the command is followed through the words that are subcommands' names.
fn takes_json(args: &[std::ffi::OsString]) -> bool {
    if !args.iter().any(|a| a == "--json") {
        return false;
    }
    let mut command = Cli::command();
    for word in args.iter().filter_map(|a| a.to_str()) {
        if let Some(sub) = command.find_subcommand(word) {
            command = sub.clone();
        }
    }
    let takes = command
        .get_arguments()
        .any(|a| a.get_long() == Some("json"));
    takes
}

/// Records which settings the command line gave (the rest came from the
/// environment): messages name each setting as the operator wrote it.
fn note_given(cli: &mut Cli, matches: &ArgMatches) {
    let sub = |name: &str| matches.subcommand_matches(name).map(Given::from_matches);
    match &mut cli.command {
        None => cli.serve.given = Given::from_matches(matches),
        Some(Command::Serve(args)) => args.given = sub("serve").unwrap_or_default(),
        Some(Command::Dev(args)) => args.serve.given = sub("dev").unwrap_or_default(),
        Some(Command::ProvePages(args)) => args.given = sub("prove-pages").unwrap_or_default(),
        Some(Command::Operate(cli::Operate::Check { serve, .. })) => {
            serve.given = sub("check").unwrap_or_default()
        }
        Some(Command::Operate(command)) => {
            if let Some((_, matches)) = matches.subcommand() {
                command.note_given(matches)
            }
        }
    }
}

/// Whether the command (or its subcommand) was given `--json`.
fn wants_json(matches: &ArgMatches) -> bool {
    let mut m = matches;
    loop {
        if let Ok(Some(true)) = m.try_get_one::<bool>("json") {
            return true;
        }
        match m.subcommand() {
            Some((_, sub)) => m = sub,
            None => return false,
        }
    }
}

/// The configuration, or every problem with it on standard error (one line
/// each, so the journal shows each) and exit status 1.
/// (The site this binary carries is checked there too, first.)
fn settled(config: Result<Config, Problems>) -> Config {
    match config {
        Ok(config) => config,
        Err(problems) => {
            for p in &problems.0 {
                eprintln!("error: {p}");
            }
            eprintln!(
                "the server did not start: `citizen-site check` lists the same, without starting"
            );
            std::process::exit(1);
        }
    }
}

async fn run(cli: Cli, inherited: Inherited, json: bool) -> anyhow::Result<()> {
    let config: Config = match cli.command {
        Some(Command::Serve(args)) => {
            telemetry::init(Config::log_format(&args));
            settled(Config::from_args(args))
        }
        Some(Command::ProvePages(args)) => {
            telemetry::init(Config::log_format(&args));
            let mut config = settled(Config::from_args(args));
            // A post published later is proven now: no pack runs at its hour.
            config.show_scheduled = true;
            return cli::pack::prove::run(config).await;
        }
        Some(Command::Dev(mut args)) => {
            telemetry::init(Config::log_format(&args.serve));
            args.root = citizen_site::dev::builder::checkout_root(
                &args.root,
                "run `dev` in one or pass --root",
            )?;
            settled(Config::from_dev_args(args))
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
                if e.downcast_ref::<cli::output::Reported>().is_none() {
                    let message = cli::output::said_once(&e);
                    if json {
                        // Under --json, the error is JSON too (on standard output).
                        cli::output::print_json(&serde_json::json!({ "error": message }));
                    } else {
                        eprintln!("error: {message}");
                    }
                }
                std::process::exit(1);
            }
            return Ok(());
        }
        None => {
            telemetry::init(Config::log_format(&cli.serve));
            settled(Config::from_args(cli.serve))
        }
    };
    let app = Application::build_on(config, inherited).await?;
    let addresses = app.addresses();
    let state = app.state();
    tracing::info!("{}; rendering isolates are starting", app.sockets_said());
    // SIGTERM or Ctrl-C; or SIGUSR2, once the successor it starts is ready.
    let handover = app.handover();
    let http3 = handover.quic.is_some();
    // Set when a successor refuses to take over: it stops as on SIGTERM.
    let refusing = std::sync::Arc::new(citizen_site::live::Flag::default());
    let refused = refusing.clone();
    let stop = async move {
        tokio::select! {
            () = shutdown_signal() => {}
            () = handover.on_signal() => {}
            () = refused.wait() => {}
        }
    };
    let mut server = tokio::spawn(app.run_until(stop));
    let ready = state.wait_ready();
    tokio::select! {
        // Stopped (a signal) before it was ready.
        stopped = &mut server => return stopped?,
        ready = ready => if let Err(why) = ready {
            anyhow::bail!("the SSR bundle cannot run: {why}");
        },
    }
    // A successor never replaces a server with one that renders fewer of
    // its pages: it accepted nothing (`run_until`), says why to the server
    // that started it, which serves on, and stops as on SIGTERM.
    let refuses_for = state.refuses_for();
    if !refuses_for.is_empty() {
        let why = citizen_site::render::unrendered_said(&refuses_for);
        notify::notify_refused(&why);
        refusing.set();
        server.await??;
        anyhow::bail!("not taking over from the running server: {why}");
    }
    let unrendered = state.unrendered();
    if !unrendered.is_empty() {
        // A first start serves what renders: nothing serves otherwise.
        let why = citizen_site::render::unrendered_said(&unrendered);
        tracing::error!(
            "serving, but {why}; `/readyz` and `/metrics` (site_page_unrendered) name them"
        );
    }
    match addresses.redirect {
        Some(_) => tracing::info!("ready: {}", state.config.site_url),
        None => tracing::info!(
            "ready: {}",
            citizen_site::config::plain_site_url(addresses.main)
        ),
    }
    // systemd (Type=notify), or the server handing over to this one.
    notify::notify_ready(http3);
    server.await??;
    Ok(())
}
