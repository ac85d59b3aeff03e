//! Start-up: database, master key, bootstrap token, destination policy and the
//! outbound HTTP clients. Errors here are `anyhow` with a message that says
//! what to change.

use std::path::PathBuf;

use anyhow::{bail, Context};

use crate::{
    ids,
    keycheck::{self, KeyUse},
    secrets::{generate_admin_token, hash_admin_token, Keyring, MasterKey},
    settings::Settings,
    state::AppState,
    store::Store,
    time,
};

/// Where the SQLite database file is, if the URL names one.
pub fn sqlite_path(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or(rest);
    (!path.is_empty() && !path.starts_with(':')).then(|| PathBuf::from(path))
}

/// The master key: `FENIX_MASTER_KEY`, or on SQLite a key file beside the database.
pub fn load_keyring(settings: &Settings) -> anyhow::Result<Keyring> {
    let previous = settings
        .previous_master_keys
        .iter()
        .map(|k| MasterKey::from_base64(&k.0).context("in FENIX_PREVIOUS_MASTER_KEYS"))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let current = match &settings.master_key {
        Some(k) => MasterKey::from_base64(&k.0).context("in FENIX_MASTER_KEY")?,
        None if settings.is_postgres() => bail!(
            "FENIX_MASTER_KEY is required with PostgreSQL: it encrypts endpoint secrets at rest. \
             Make one with `fenix keygen` (or `openssl rand -base64 32`), keep it safe, and give every instance the same key"
        ),
        None => {
            let path = key_file_path(settings).context("FENIX_MASTER_KEY is required for this DATABASE_URL")?;
            let (key, created) = MasterKey::load_or_create_file(&path)?;
            if created {
                eprintln!(
                    "fenix: created master key file {} (mode 0600). Back it up: without it, endpoint secrets cannot be read.",
                    path.display()
                );
            }
            key
        }
    };
    Ok(Keyring { current, previous })
}

/// Proves the keys against the database now, not at the first delivery
/// (see [`crate::keycheck`]); the error names the setting to change.
pub async fn check_master_key(
    store: &Store,
    keyring: &Keyring,
    settings: &Settings,
    using: KeyUse,
) -> anyhow::Result<()> {
    keycheck::prove_master_key(store, keyring, &current_key_setting(settings), using).await
}

/// Where the current master key comes from, as errors name it.
pub fn current_key_setting(settings: &Settings) -> String {
    match (&settings.master_key, key_file_path(settings)) {
        (None, Some(path)) => format!("the key file {} (FENIX_MASTER_KEY is unset)", path.display()),
        _ => "FENIX_MASTER_KEY".to_string(),
    }
}

/// The key file beside a SQLite database: `<db file>.key`.
pub fn key_file_path(settings: &Settings) -> Option<PathBuf> {
    let db = sqlite_path(&settings.database_url)?;
    let mut name = db.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".key");
    Some(db.with_file_name(name))
}

/// Ensures an admin token exists: `FENIX_ADMIN_TOKEN` if given, otherwise a
/// generated one on a fresh database. Returns a token to print once, if one was generated.
pub async fn bootstrap_token(store: &Store, settings: &Settings) -> anyhow::Result<Option<String>> {
    if let Some(t) = &settings.admin_token {
        if t.0.len() < 16 {
            bail!("FENIX_ADMIN_TOKEN must be at least 16 characters");
        }
        store.insert_admin_token(&ids::TokenId::new(), "bootstrap", &hash_admin_token(&t.0), time::now_ms()).await?;
        return Ok(None);
    }
    if store.count_admin_tokens().await? > 0 {
        return Ok(None);
    }
    let token = generate_admin_token();
    store.insert_admin_token(&ids::TokenId::new(), "bootstrap", &hash_admin_token(&token), time::now_ms()).await?;
    Ok(Some(token))
}

/// The destination policy from settings.
pub fn policy(settings: &Settings) -> fenix_destination::Policy {
    fenix_destination::Policy {
        allow_http: settings.unsafe_allow_http,
        allow_cidrs: settings.unsafe_allow_cidrs.clone(),
        deny_cidrs: settings.deny_cidrs.clone(),
    }
}

/// Connects to a database that already exists, and migrates it: for the
/// commands that only make sense on one (`token`, `rekey`). A SQLite file that
/// is not there is refused, not created: run in the wrong directory, they
/// would otherwise make an empty `fenix.db` and answer as if all were well.
pub async fn connect_existing(settings: &Settings) -> anyhow::Result<Store> {
    if let Some(file) = sqlite_path(&settings.database_url) {
        if !file.exists() {
            let shown = std::path::absolute(&file).unwrap_or(file);
            bail!(
                "no database at {} (DATABASE_URL={}). Run this where `fenix serve` runs, or set DATABASE_URL \
                 (or --config) to its database; `fenix serve` and `fenix migrate` create a new one",
                shown.display(),
                settings.database_url
            );
        }
    }
    let store = Store::connect(&settings.database_url, 2).await?;
    store.migrate().await?;
    Ok(store)
}

/// Connects, migrates, loads keys: everything `serve` needs before listening.
/// The bootstrap token is not made here: `serve` makes and prints it
/// ([`bootstrap_token`]) last, once nothing else can make the start fail.
pub async fn build_state(settings: Settings) -> anyhow::Result<AppState> {
    let keyring = load_keyring(&settings)?;
    let store = Store::connect(&settings.database_url, settings.max_db_connections).await?;
    store.migrate().await?;
    check_master_key(&store, &keyring, &settings, KeyUse::Serve).await?;
    let policy = policy(&settings);
    let destinations = fenix_destination::CheckingResolver::new(policy.clone(), settings.dns_servers.clone())
        .context("setting up the DNS resolver")?;
    let operator_app_id = crate::operator::provision(&store, &settings, &keyring, &policy).await?;
    warn_about_unsafe_settings(&settings);
    let wake = crate::wake::Wake::new(store.clone());
    let outbound = crate::outbound::Outbound::new(&settings, destinations.clone())?;
    let mut state = AppState::new(store, settings, keyring, policy, destinations, outbound, wake);
    state.operator_app_id = operator_app_id;
    state.traces = crate::traces::Traces::from_environment()?;
    Ok(state)
}

/// Development allowances weaken the SSRF defence: say so loudly, every start.
fn warn_about_unsafe_settings(settings: &Settings) {
    let mut on = Vec::new();
    if settings.unsafe_allow_http {
        on.push("FENIX_UNSAFE_ALLOW_HTTP=true (plain http and any port allowed)".to_string());
    }
    if !settings.unsafe_allow_cidrs.is_empty() {
        let ranges: Vec<String> = settings.unsafe_allow_cidrs.iter().map(|c| c.to_string()).collect();
        on.push(format!("FENIX_UNSAFE_ALLOW_CIDRS={} (these ranges bypass the destination policy)", ranges.join(",")));
    }
    if let Some(ca) = &settings.extra_ca_cert {
        on.push(format!("FENIX_EXTRA_CA_CERT={} (an extra CA is trusted)", ca.display()));
    }
    // Once, as a log line: logs go to standard error (the terminal) already,
    // and in the chosen format (`FENIX_LOG_FORMAT=json` stays one object a line).
    for what in &on {
        tracing::warn!("development setting in effect: {what}. Never use it in production.");
    }
}
