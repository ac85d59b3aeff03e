//! The `fenix` binary: `serve`, `migrate`, token and key management, the
//! OpenAPI document (`openapi`), a health probe for containers (`health`), and
//! a local verifying receiver for development.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use tokio_util::sync::CancellationToken;

use fenix::{
    access::{Access, Principal},
    keycheck::KeyUse,
    secrets::MasterKey,
    settings::Settings,
    startup,
    store::Store,
};

#[derive(Parser)]
#[command(
    name = "fenix",
    // The git revision comes from build.rs (`unknown` outside a git checkout).
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("FENIX_GIT_REVISION"), ")"),
    about = "Outbound webhook delivery: signed, retried, logged.",
    after_help = "The main settings: `fenix serve --help`; every setting: docs/configuration.md."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `--config`, on the commands that read settings only: `keygen` and `listen`
/// read none, so they refuse it rather than accept a file they would ignore.
#[derive(Args)]
struct ConfigFile {
    /// Optional TOML settings file (environment variables override it); see docs/configuration.md.
    // Global so that `fenix token --config F list` and `fenix token list --config F` both work.
    #[arg(long, global = true, env = "FENIX_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
}

/// What `fenix serve --help` adds: the settings a first start needs, and where the rest are.
const SERVE_HELP: &str = "\
Settings (environment variables; a --config TOML file takes the same names in lower case, without FENIX_):
  FENIX_LISTEN              address of the API [default: 127.0.0.1:8080]
  DATABASE_URL              sqlite://PATH (created if missing) or postgres://… [default: sqlite://fenix.db]
  FENIX_MASTER_KEY          encrypts endpoint secrets at rest (`fenix keygen`); required with PostgreSQL
                            [default on SQLite: a key file beside the database, <db file>.key]
  FENIX_ADMIN_TOKEN         an admin token registered at start; when unset, the first start prints one
  FENIX_RETRY_SCHEDULE      waits between attempts [default: 1m,5m,30m,2h]
  FENIX_LOG, FENIX_LOG_FORMAT  log filter (e.g. debug) and format (json)
  FENIX_UNSAFE_ALLOW_HTTP, FENIX_UNSAFE_ALLOW_CIDRS  development only: loopback and plain-http receivers

Every setting, its range and its default: docs/configuration.md.
Admin tokens are shown once; `fenix token create` makes another.";

#[derive(Subcommand)]
enum Command {
    /// Run the admin API and the delivery worker (migrates the database first).
    #[command(after_help = SERVE_HELP)]
    Serve {
        #[command(flatten)]
        config: ConfigFile,
        /// Serve the API only; deliveries are sent by other instances.
        #[arg(long, conflicts_with = "worker_only")]
        api_only: bool,
        /// Run the delivery worker only; FENIX_LISTEN then serves /healthz, /readyz and /metrics only.
        #[arg(long)]
        worker_only: bool,
    },
    /// Apply database migrations and exit (creates a SQLite database if missing).
    Migrate {
        #[command(flatten)]
        config: ConfigFile,
    },
    /// API tokens, admin or app-scoped (of an existing database).
    Token {
        #[command(flatten)]
        config: ConfigFile,
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Print a new random master key (base64 of 32 bytes) for FENIX_MASTER_KEY.
    Keygen {
        /// Print a whole `.env` file instead (a master key, an admin token and a
        /// PostgreSQL password): `fenix keygen --env > .env` for docker-compose.yml.
        #[arg(long)]
        env: bool,
    },
    /// Ask a running Fenix's /healthz and exit 0 if it answers 2xx (a container's
    /// HEALTHCHECK: the runtime image has no curl).
    Health {
        /// The URL to ask.
        #[arg(long, default_value = "http://127.0.0.1:8080/healthz")]
        url: String,
    },
    /// Print the OpenAPI 3.1 document the API serves at /openapi.json (no database needed);
    /// the SDKs in sdks/ are generated from it.
    Openapi,
    /// Re-encrypt every endpoint secret under FENIX_MASTER_KEY; the old key(s) go in FENIX_PREVIOUS_MASTER_KEYS.
    Rekey {
        #[command(flatten)]
        config: ConfigFile,
        /// Only record FENIX_MASTER_KEY as the database's key (instances may then start with it),
        /// re-encrypting nothing: the first step of a key change with instances running.
        #[arg(long)]
        prepare: bool,
        /// Finish even when some values open with none of the keys given: leave them as they are
        /// (listed), and exit 0.
        #[arg(long, conflicts_with = "prepare")]
        skip_unreadable: bool,
    },
    /// A local receiver for development (like `stripe listen`): verifies each
    /// request and prints one line per request; never the payload unless asked.
    #[command(alias = "receive")]
    Listen {
        /// Port to listen on (on 127.0.0.1 unless --host says otherwise).
        #[arg(long, default_value_t = 9000)]
        port: u16,
        /// Interface to listen on.
        #[arg(long, default_value = "127.0.0.1")]
        host: std::net::IpAddr,
        /// The endpoint's secret, or its Ed25519 public key (`whpk_…`); repeat it
        /// during a rotation (newest first).
        #[arg(long = "secret", env = "FENIX_LISTEN_SECRET", required = true)]
        secrets: Vec<String>,
        /// Also print each verified request's body.
        #[arg(long)]
        show_payload: bool,
    },
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Create a token and print it (once): an admin token, or with --app and --access an app token (`fxk_…`).
    Create {
        #[arg(long, default_value = "admin")]
        name: String,
        /// Confine the token to one app (its id or uid): it reaches nothing else.
        #[arg(long, requires = "access", value_name = "APP")]
        app: Option<String>,
        /// What the app token may do in its app: `read` (change nothing) or `manage`.
        #[arg(long, requires = "app", value_parser = ["read", "manage"])]
        access: Option<String>,
        /// Let the token expire after this long (e.g. 30d, 12h, 90m); without it, it never expires.
        #[arg(long, value_name = "DURATION", value_parser = parse_expires_in)]
        expires_in: Option<std::time::Duration>,
    },
    /// List tokens (id, name, scope, expiry; tokens themselves are not stored).
    List,
    /// Revoke a token by id (running instances stop accepting it within 10 s).
    Revoke {
        /// The token's id, as `fenix token list` shows it (`tok_…`).
        id: String,
    },
}

fn init_tracing() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("FENIX_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,hyper=warn,reqwest=warn"));
    use std::io::IsTerminal;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    if std::env::var("FENIX_LOG_FORMAT").as_deref() == Ok("json") {
        builder.json().init();
    } else {
        builder.init();
    }
}

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Keeps the process off transparent huge pages. mimalloc asks the kernel
/// for them (`MADV_HUGEPAGE`) on its arenas, and a huge page stays resident
/// whole until all of its 2 MiB is free: under batch ingestion a third of the
/// resident memory was huge pages, and the peak 125–141 MB against 84–93 MB
/// without them, at the same speed (docs/benchmarks.md). The flag covers the
/// whole process, mappings made before this call included.
fn without_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    if let Err(e) = nix::sys::prctl::set_thp_disable(true) {
        eprintln!("fenix: could not turn transparent huge pages off ({e}); memory use may be higher");
    }
}

/// Raises the soft limit of open files to the hard one: every request in
/// flight to a receiver is a connection (`FENIX_WORKER_CONCURRENCY`, 512) and
/// so is every API client (`FENIX_HTTP_MAX_CONNECTIONS`, 1024), more than the
/// soft limit of 1024 many systems start processes with.
fn with_open_files_up_to_the_hard_limit() {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::resource::{getrlimit, setrlimit, Resource};
        match getrlimit(Resource::RLIMIT_NOFILE) {
            Ok((soft, hard)) if soft < hard => {
                if let Err(e) = setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
                    eprintln!("fenix: could not raise the open-files limit from {soft} to {hard} ({e})");
                }
            }
            _ => {}
        }
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    without_transparent_huge_pages();
    with_open_files_up_to_the_hard_limit();
    init_tracing();
    match run(Cli::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fenix: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve { config, api_only, worker_only } => serve(config, api_only, worker_only).await,
        Command::Migrate { config } => {
            let settings = Settings::load(config.config.as_deref())?;
            let store = Store::connect(&settings.database_url, 2).await?;
            store.migrate().await?;
            store.close().await;
            println!("migrations applied");
            Ok(())
        }
        Command::Token { config, command } => {
            let settings = Settings::load(config.config.as_deref())?;
            let store = startup::connect_existing(&settings).await?;
            let done = token(&store, command).await;
            store.close().await;
            done
        }
        Command::Keygen { env: false } => {
            println!("{}", MasterKey::generate().to_base64());
            Ok(())
        }
        Command::Keygen { env: true } => {
            print!("{}", env_file());
            Ok(())
        }
        Command::Health { url } => health(&url).await,
        Command::Openapi => {
            println!("{}", fenix::api::document());
            Ok(())
        }
        Command::Rekey { config, prepare, skip_unreadable } => {
            let settings = Settings::load(config.config.as_deref())?;
            let store = startup::connect_existing(&settings).await?;
            let done = rekey(&store, &settings, prepare, skip_unreadable).await;
            store.close().await;
            done
        }
        Command::Listen { port, host, secrets, show_payload } => {
            fenix::receiver::run((host, port).into(), fenix::receiver::Listen { secrets, show_payload }).await
        }
    }
}

/// `fenix serve`: binds, builds the state, registers the bootstrap token,
/// says where it listens, then serves until a stop signal.
async fn serve(config: ConfigFile, api_only: bool, worker_only: bool) -> anyhow::Result<()> {
    let mut settings = Settings::load(config.config.as_deref())?;
    settings.run_api = !worker_only;
    settings.run_worker = !api_only;
    settings.validate()?;
    // The port first: a start that cannot listen must create nothing,
    // least of all a bootstrap token shown once and then lost.
    let (listener, portal) = bind_listeners(&settings).await?;
    let addr = listener.local_addr()?;
    let portal_addr = portal.as_ref().map(|l| l.local_addr()).transpose()?;
    let state = fenix::build_state(settings).await?;
    // Before the address is printed: a SIGTERM sent as soon as it
    // shows (a supervisor, a test) drains instead of killing.
    let signals = StopSignals::install()?;
    // Last before serving: nothing after this can fail and lose a printed token.
    match startup::bootstrap_token(&state.store, &state.settings).await? {
        Some(token) => println!("Admin token (shown once, store it now): {token}"),
        None if state.settings.admin_token.is_none() && state.settings.run_api => {
            println!("Admin tokens are shown only once; to make another: fenix token create --name NAME")
        }
        None => {}
    }
    announce(&state.settings, addr, portal_addr);
    let shutdown = CancellationToken::new();
    tokio::spawn(signals.stop(shutdown.clone()));
    fenix::serve(listener, portal, state, shutdown).await?;
    tracing::info!("fenix stopped");
    Ok(())
}

/// The main listener and, when the API runs and `FENIX_PORTAL_LISTEN` is set, the portal's.
async fn bind_listeners(
    settings: &Settings,
) -> anyhow::Result<(tokio::net::TcpListener, Option<tokio::net::TcpListener>)> {
    let listen = settings.listen;
    let listener = tokio::net::TcpListener::bind(listen).await.with_context(|| format!("listening on {listen}"))?;
    let portal = match settings.portal_listen.filter(|_| settings.run_api) {
        Some(at) => Some(
            tokio::net::TcpListener::bind(at)
                .await
                .with_context(|| format!("listening on {at} (FENIX_PORTAL_LISTEN)"))?,
        ),
        None => None,
    };
    Ok((listener, portal))
}

/// Says where this instance listens (supervisors and tests read the line).
fn announce(settings: &Settings, addr: std::net::SocketAddr, portal_addr: Option<std::net::SocketAddr>) {
    if settings.run_api {
        println!("Fenix listening on http://{addr}");
        if let Some(at) = portal_addr {
            println!("Fenix portal listening on http://{at}");
        }
    } else {
        println!("Fenix worker started (health and metrics on http://{addr})");
    }
    tracing::info!(%addr, api = settings.run_api, worker = settings.run_worker, "fenix started");
}

/// `fenix rekey [--prepare] [--skip-unreadable]`: records the current key as
/// the database's newest (after proving the previous ones), then re-seals
/// everything and says what is left under another key.
async fn rekey(store: &Store, settings: &Settings, prepare: bool, skip_unreadable: bool) -> anyhow::Result<()> {
    let keyring = startup::load_keyring(settings)?;
    startup::check_master_key(store, &keyring, settings, KeyUse::Rekey).await?;
    let setting = startup::current_key_setting(settings);
    if prepare {
        println!(
            "recorded the master key in {setting} (key id {}) as this database's key; nothing re-encrypted. \
             Restart every instance with it (the old key in FENIX_PREVIOUS_MASTER_KEYS), then run `fenix rekey`",
            keyring.current.id_hex()
        );
        return Ok(());
    }
    let done = fenix::rekey::rekey(store, &keyring).await?;
    println!(
        "re-encrypted {} secret(s) and the custom headers of {} endpoint(s) under the current master key",
        done.secrets, done.header_sets
    );
    if done.tls_sets > 0 {
        println!("re-encrypted the client certificate keys of {} endpoint(s)", done.tls_sets);
    }
    if done.auth_sets > 0 {
        println!("re-encrypted the OAuth2 client secrets or private keys of {} endpoint(s)", done.auth_sets);
    }
    if done.unreadable.is_empty() {
        println!("nothing is left under another key: the previous keys are no longer needed");
        return Ok(());
    }
    let (secrets, header_sets) = (done.unreadable_secrets(), done.unreadable.len() - done.unreadable_secrets());
    let mut endpoints: Vec<&str> = done.unreadable.iter().map(|u| u.endpoint_id.as_str()).collect();
    endpoints.sort_unstable();
    endpoints.dedup();
    eprintln!(
        "fenix: {secrets} secret(s) and the custom headers of {header_sets} endpoint(s), of {} endpoint(s), \
         open with none of the keys given and are left as they were:",
        endpoints.len()
    );
    for unreadable in &done.unreadable {
        eprintln!("  {unreadable}");
    }
    if !skip_unreadable {
        anyhow::bail!(
            "the key change is not finished: give the key that sealed them in FENIX_PREVIOUS_MASTER_KEYS and run \
             `fenix rekey` again, or run it with --skip-unreadable to leave them as they are"
        );
    }
    println!(
        "left {} value(s) of endpoint(s) {} as they were (--skip-unreadable); everything else is under the \
         current master key. Those endpoints cannot sign with those versions: rotate their secrets",
        done.unreadable.len(),
        endpoints.join(", ")
    );
    Ok(())
}

/// `fenix token …` on a database that exists (see [`startup::connect_existing`]).
async fn token(store: &Store, command: TokenCommand) -> anyhow::Result<()> {
    match command {
        TokenCommand::Create { name, app, access, expires_in } => {
            let principal = match (app, access.as_deref().and_then(Access::parse)) {
                (Some(app), Some(access)) => {
                    let Some(row) = store.find_app(&app).await? else {
                        anyhow::bail!("no app with id or uid {app:?}");
                    };
                    Principal::App { app_id: row.id, access }
                }
                _ => Principal::Admin,
            };
            let expires_at = expires_in.map(|d| fenix::time::add(fenix::time::now_ms(), d));
            let (_, token) = fenix::secrets::issue_token(store, &name, principal, expires_at).await?;
            println!("{token}");
        }
        TokenCommand::List => {
            let tokens = store.list_tokens(None, i64::MAX).await?;
            if tokens.is_empty() {
                eprintln!("fenix: no tokens (make one with `fenix token create`)");
            }
            let now = fenix::time::now_ms();
            for t in tokens {
                let scope = match &t.principal {
                    Principal::Admin => "admin".to_string(),
                    Principal::App { app_id, access } => format!("{} {app_id}", access.as_str()),
                };
                let expiry = match t.expires_at {
                    None => "never expires".to_string(),
                    Some(at) if at <= now => format!("expired {}", fenix::time::rfc3339(at)),
                    Some(at) => format!("expires {}", fenix::time::rfc3339(at)),
                };
                println!("{}  {}  {scope}  {expiry}  created {}", t.id, t.name, fenix::time::rfc3339(t.created_at));
            }
        }
        TokenCommand::Revoke { id } => {
            let known = match fenix::ids::TokenId::parse(&id) {
                Ok(token_id) => store.delete_token(&token_id).await?,
                Err(_) => false,
            };
            if !known {
                anyhow::bail!("no token with id {id} (see `fenix token list`)");
            }
            println!("revoked {id}");
        }
    }
    Ok(())
}

/// `fenix keygen --env`: the secrets docker-compose.yml reads from `.env`, made
/// once and kept (a second `up` must find the same master key). The admin token
/// is the first one: it is registered at start and printed nowhere else.
fn env_file() -> String {
    let postgres_password = fenix::secrets::generate_admin_token().trim_start_matches("fxa_").to_string();
    format!(
        "# Made by `fenix keygen --env`: keep this file (mode 0600) and back it up; a new\n\
         # FENIX_MASTER_KEY cannot read what the old one encrypted.\n\
         FENIX_MASTER_KEY={}\nFENIX_ADMIN_TOKEN={}\nPOSTGRES_PASSWORD={postgres_password}\n",
        MasterKey::generate().to_base64(),
        fenix::secrets::generate_admin_token(),
    )
}

/// `fenix health`: one GET, a 5 s limit, 2xx or an error naming what answered.
async fn health(url: &str) -> anyhow::Result<()> {
    let client = reqwest::Client::builder().timeout(std::time::Duration::from_secs(5)).build()?;
    let answer = client.get(url).send().await.with_context(|| format!("asking {url}"))?;
    anyhow::ensure!(answer.status().is_success(), "{url} answered {}", answer.status());
    Ok(())
}

/// `--expires-in`: a duration such as `30d`, `12h` or `90m`, more than zero.
fn parse_expires_in(text: &str) -> Result<std::time::Duration, String> {
    match humantime::parse_duration(text) {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => Err("must be more than zero".into()),
        Err(e) => Err(format!("{e} (e.g. 30d, 12h, 90m)")),
    }
}

/// The signals that stop `serve` gracefully (SIGTERM, Ctrl-C), registered
/// when made: from then on they no longer kill the process.
struct StopSignals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn install() -> anyhow::Result<StopSignals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
            let int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
            Ok(StopSignals { term, int })
        }
        #[cfg(not(unix))]
        Ok(StopSignals {})
    }

    /// Waits for one of them, then starts the drain.
    async fn stop(mut self, shutdown: CancellationToken) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.int.recv() => {}
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("stopping: draining in-flight deliveries");
        shutdown.cancel();
    }
}
