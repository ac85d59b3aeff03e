//! The `fenix` binary: `serve`, `migrate`, token and key management, and a
//! local verifying receiver for development.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use tokio_util::sync::CancellationToken;

use fenix::{secrets::MasterKey, settings::Settings, startup, store::Store};

#[derive(Parser)]
#[command(name = "fenix", version, about = "Outbound webhook delivery: signed, retried, logged.")]
struct Cli {
    /// Optional TOML settings file (environment variables override it).
    #[arg(long, global = true, env = "FENIX_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the admin API and the delivery worker (migrates the database first).
    Serve {
        /// Serve the API only; deliveries are sent by other instances.
        #[arg(long, conflicts_with = "worker_only")]
        api_only: bool,
        /// Run the delivery worker only; FENIX_LISTEN then serves /healthz, /readyz and /metrics only.
        #[arg(long)]
        worker_only: bool,
    },
    /// Apply database migrations and exit.
    Migrate,
    /// Admin tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Print a new random master key (base64 of 32 bytes) for FENIX_MASTER_KEY.
    Keygen,
    /// Re-encrypt every endpoint secret under FENIX_MASTER_KEY; the old key(s) go in FENIX_PREVIOUS_MASTER_KEYS.
    Rekey,
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
        /// The endpoint's secret; repeat it during a rotation (newest first).
        #[arg(long = "secret", env = "FENIX_LISTEN_SECRET", required = true)]
        secrets: Vec<String>,
        /// Also print each verified request's body.
        #[arg(long)]
        show_payload: bool,
    },
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Create an admin token and print it (once).
    Create {
        #[arg(long, default_value = "admin")]
        name: String,
    },
    /// List admin tokens (ids and names; tokens themselves are not stored).
    List,
    /// Revoke an admin token by id (running instances stop accepting it within 10 s).
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

#[tokio::main]
async fn main() -> std::process::ExitCode {
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
        Command::Serve { api_only, worker_only } => {
            let mut settings = Settings::load(cli.config.as_deref())?;
            settings.run_api = !worker_only;
            settings.run_worker = !api_only;
            settings.validate()?;
            let listen = settings.listen;
            let state = fenix::build_state(settings).await?;
            let listener =
                tokio::net::TcpListener::bind(listen).await.with_context(|| format!("listening on {listen}"))?;
            let addr = listener.local_addr()?;
            if state.settings.run_api {
                println!("Fenix listening on http://{addr}");
            } else {
                println!("Fenix worker started (health and metrics on http://{addr})");
            }
            tracing::info!(%addr, api = state.settings.run_api, worker = state.settings.run_worker, "fenix started");
            let shutdown = CancellationToken::new();
            tokio::spawn(stop_on_signal(shutdown.clone()));
            fenix::serve(listener, state, shutdown).await?;
            tracing::info!("fenix stopped");
            Ok(())
        }
        Command::Migrate => {
            let settings = Settings::load(cli.config.as_deref())?;
            let store = Store::connect(&settings.database_url, 2).await?;
            store.migrate().await?;
            store.close().await;
            println!("migrations applied");
            Ok(())
        }
        Command::Token { command: TokenCommand::Create { name } } => {
            let settings = Settings::load(cli.config.as_deref())?;
            let store = Store::connect(&settings.database_url, 2).await?;
            store.migrate().await?;
            let token = fenix::secrets::generate_admin_token();
            store
                .insert_admin_token(
                    &fenix::ids::new_id("tok"),
                    &name,
                    &fenix::secrets::hash_admin_token(&token),
                    fenix::time::now_ms(),
                )
                .await?;
            store.close().await;
            println!("{token}");
            Ok(())
        }
        Command::Token { command: TokenCommand::List } => {
            let settings = Settings::load(cli.config.as_deref())?;
            let store = Store::connect(&settings.database_url, 2).await?;
            store.migrate().await?;
            for (id, name, created_at) in store.list_admin_tokens().await? {
                println!("{id}  {name}  created {}", fenix::time::rfc3339(created_at));
            }
            store.close().await;
            Ok(())
        }
        Command::Token { command: TokenCommand::Revoke { id } } => {
            let settings = Settings::load(cli.config.as_deref())?;
            let store = Store::connect(&settings.database_url, 2).await?;
            store.migrate().await?;
            let existed = store.delete_admin_token(&id).await?;
            store.close().await;
            if !existed {
                anyhow::bail!("no admin token with id {id} (see `fenix token list`)");
            }
            println!("revoked {id}");
            Ok(())
        }
        Command::Keygen => {
            println!("{}", MasterKey::generate().to_base64());
            Ok(())
        }
        Command::Rekey => {
            let settings = Settings::load(cli.config.as_deref())?;
            let keyring = startup::load_keyring(&settings)?;
            let store = Store::connect(&settings.database_url, 2).await?;
            store.migrate().await?;
            startup::check_master_key(&store, &keyring).await?;
            let n = fenix::secrets::rekey(&store, &keyring).await?;
            store.close().await;
            println!("re-encrypted {n} secret(s) under the current master key");
            Ok(())
        }
        Command::Listen { port, host, secrets, show_payload } => {
            fenix::receiver::run((host, port).into(), fenix::receiver::Listen { secrets, show_payload }).await
        }
    }
}

async fn stop_on_signal(shutdown: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
    tracing::info!("stopping: draining in-flight deliveries");
    shutdown.cancel();
}
