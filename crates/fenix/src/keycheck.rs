//! The master key proven at start (issue 27, finding 4).
//!
//! The database records every master key it was sealed with, each with a
//! canary (a known text sealed with that key), in the order they became
//! current (`master_key_canaries`). An instance starts only when its current
//! key is the newest recorded one and opens its canary, and each previous
//! key it is given opens its own canary if it has one. So a mistyped
//! `FENIX_MASTER_KEY` is refused even with the real key among the previous
//! ones: without the check it would start and seal new secrets with a key no
//! other instance has.
//!
//! A key becomes newest only through `fenix rekey` (or `rekey --prepare`,
//! which records it and re-seals nothing), given the newest key among its
//! previous ones: whoever changes the key proves they hold the one in use.
//! The first start of a new database records its key; a database from before
//! the canaries records the key that opens its old key check.

use anyhow::{bail, Context};

use crate::{
    secrets::{Keyring, MasterKey},
    store::{master_keys::MasterKeyCanary, Store},
    time,
};

/// The key check of databases from before the canaries (in `meta`).
const LEGACY_CHECK: &str = "master_key_check";
const LEGACY_CHECK_PLAINTEXT: &[u8] = b"fenix master key check";
const CANARY_PLAINTEXT: &[u8] = b"fenix master key canary";

/// Who asks for the proof.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyUse {
    /// `fenix serve`: the current key must be the database's newest.
    Serve,
    /// `fenix rekey`: the current key may become the newest, when the
    /// newest is among the previous keys.
    Rekey,
}

/// Proves the keyring against the database, or says which setting to change.
/// `setting` names where the current key came from (`FENIX_MASTER_KEY`, or
/// the key file beside the SQLite database).
pub async fn prove_master_key(store: &Store, keyring: &Keyring, setting: &str, using: KeyUse) -> anyhow::Result<()> {
    let mut known = store.master_key_canaries().await.context("reading the master key canaries")?;
    if known.is_empty() {
        let first = first_key(store, keyring, setting).await?;
        store.add_master_key_canary(&first.id_hex(), &canary(&first), time::now_ms()).await?;
        known = store.master_key_canaries().await?;
    }
    for key in &keyring.previous {
        if let Some(row) = find(&known, key) {
            opens(key, row).with_context(|| {
                format!("a key in FENIX_PREVIOUS_MASTER_KEYS (key id {}) does not open its canary", row.key_id)
            })?;
        }
    }
    let current = &keyring.current;
    let newest = known.last().context("no master key recorded")?.clone();
    if newest.key_id == current.id_hex() {
        return opens(current, &newest).with_context(|| format!("{setting} does not open its canary"));
    }
    if using == KeyUse::Serve {
        bail!(refusal(&known, &newest, keyring, setting));
    }
    if !keyring.previous.iter().any(|k| k.id_hex() == newest.key_id) {
        bail!(
            "FENIX_PREVIOUS_MASTER_KEYS must hold the database's newest master key (key id {}, recorded {}) \
             to move to the key in {setting} (key id {}): only the holder of the key in use may change it",
            newest.key_id,
            time::rfc3339(newest.created_at),
            current.id_hex()
        );
    }
    match find(&known, current) {
        Some(row) => {
            opens(current, row).with_context(|| format!("{setting} does not open its canary"))?;
            store.renew_master_key_canary(&row.key_id, time::now_ms()).await?;
        }
        None => store.add_master_key_canary(&current.id_hex(), &canary(current), time::now_ms()).await?,
    }
    let now_newest = store.master_key_canaries().await?.pop().map(|row| row.key_id);
    if now_newest.as_deref() != Some(current.id_hex().as_str()) {
        bail!("another master key was recorded at the same moment (key id {now_newest:?}): run `fenix rekey` again");
    }
    Ok(())
}

/// Why `serve` refuses a current key that is not the database's newest.
fn refusal(known: &[MasterKeyCanary], newest: &MasterKeyCanary, keyring: &Keyring, setting: &str) -> String {
    let current = keyring.current.id_hex();
    let since = time::rfc3339(newest.created_at);
    if known.iter().any(|row| row.key_id == current) {
        return format!(
            "{setting} is an older master key of this database (key id {current}): the newest is key id {} \
             (recorded {since}), and every instance must seal with it. Set {setting} to the newest key \
             (this one may go in FENIX_PREVIOUS_MASTER_KEYS until `fenix rekey` has run)",
            newest.key_id
        );
    }
    let previous_holds_it = keyring.previous.iter().any(|k| k.id_hex() == newest.key_id);
    format!(
        "{setting} is not a master key this database was sealed with (it has key id {current}; the database's \
         newest is key id {}, recorded {since}{}). Secrets sealed with it could be opened by no other instance. \
         If it is mistyped, set {setting} to the database's key. To change the master key, record the new one \
         first: FENIX_MASTER_KEY=<new> FENIX_PREVIOUS_MASTER_KEYS=<current> fenix rekey --prepare \
         (docs/security.md, \"Changing the master key\")",
        newest.key_id,
        if previous_holds_it { ", which FENIX_PREVIOUS_MASTER_KEYS holds" } else { "" }
    )
}

/// The key a database without canaries is recorded with: the one that opens
/// its old key check, or on a new database the current key.
async fn first_key(store: &Store, keyring: &Keyring, setting: &str) -> anyhow::Result<MasterKey> {
    let Some(check) = store.get_meta(LEGACY_CHECK).await? else {
        return Ok(keyring.current.clone());
    };
    let id = MasterKey::blob_key_id(&check);
    let key =
        std::iter::once(&keyring.current).chain(&keyring.previous).find(|k| Some(k.id_hex()) == id.map(hex::encode));
    match key.map(|k| (k, k.open(&check, LEGACY_CHECK))) {
        Some((k, Ok(clear))) if clear == LEGACY_CHECK_PLAINTEXT => Ok(k.clone()),
        _ => bail!(
            "the master key does not match the one this database was sealed with: endpoint secrets cannot be \
             decrypted. Set {setting} to the database's key (or list it in FENIX_PREVIOUS_MASTER_KEYS during \
             `fenix rekey`)"
        ),
    }
}

fn canary(key: &MasterKey) -> Vec<u8> {
    key.seal(CANARY_PLAINTEXT, &canary_context(&key.id_hex()))
}

fn canary_context(key_id: &str) -> String {
    format!("master_key_canary:{key_id}")
}

fn find<'a>(known: &'a [MasterKeyCanary], key: &MasterKey) -> Option<&'a MasterKeyCanary> {
    known.iter().find(|row| row.key_id == key.id_hex())
}

fn opens(key: &MasterKey, row: &MasterKeyCanary) -> anyhow::Result<()> {
    match key.open(&row.canary, &canary_context(&row.key_id)) {
        Ok(clear) if clear == CANARY_PLAINTEXT => Ok(()),
        _ => bail!("the canary of key id {} does not open (an altered row, or a key id collision)", row.key_id),
    }
}
