//! The deployment files, read for the rules no tool checks (scripts/check_deploy.sh
//! runs nginx -t, systemd-analyze verify and the compose schema on them), the
//! commands they rely on (`fenix keygen --env`, `fenix health`, `--version`),
//! and the shipped nginx layout in front of two instances on PostgreSQL.

use std::{process::Command, time::Duration};

use serde_json::{json, Value};

use crate::support::{db::postgres_available, free_port, Backend, Fenix, TestDb};

const COMPOSE: &str = include_str!("../../docker-compose.yml");
const DOCKERFILE: &str = include_str!("../../Dockerfile");
const DOCKERIGNORE: &str = include_str!("../../.dockerignore");
const UNIT: &str = include_str!("../../deploy/fenix@.service");
const PROXY: &str = include_str!("../../deploy/nginx/fenix-proxy.conf");
const TLS: &str = include_str!("../../deploy/nginx/fenix-tls.conf");
const NGINX_COMPOSE: &str = include_str!("../../deploy/nginx/fenix-compose.conf");
const NGINX_LOCAL: &str = include_str!("../../deploy/nginx/fenix-local.conf");
const RELEASE: &str = include_str!("../../scripts/release.sh");
const DEPLOYMENT_MD: &str = include_str!("../../docs/deployment.md");
const BIN: &str = env!("CARGO_BIN_EXE_fenix");

/// The lines of a config file without comments and blank lines, trimmed.
fn directives(text: &str) -> Vec<&str> {
    text.lines().map(|l| l.split('#').next().unwrap_or("").trim()).filter(|l| !l.is_empty()).collect()
}

/// docker-compose.yml: no secret is a literal or typed on a command line (they
/// come from `.env`), PostgreSQL's password is generated, FENIX_PUBLIC_URL is
/// set, and only the proxy is published, on a chosen interface.
#[test]
fn compose_takes_its_secrets_from_env_and_publishes_only_the_proxy() {
    for secret in ["FENIX_MASTER_KEY", "FENIX_ADMIN_TOKEN", "POSTGRES_PASSWORD"] {
        assert!(!COMPOSE.contains(&format!("{secret}=$(")), "a command line makes {secret}");
        for line in COMPOSE.lines().filter(|l| l.trim_start().starts_with(&format!("{secret}:"))) {
            assert!(line.contains(&format!("${{{secret}:?")), "{secret} is not read from .env: {line}");
        }
    }
    assert!(COMPOSE.contains("postgres://fenix:${POSTGRES_PASSWORD:?"), "DATABASE_URL has a fixed password");
    assert!(COMPOSE.contains("fenix keygen --env > .env"), "the comment does not say how .env is made");
    assert!(COMPOSE.contains("FENIX_PUBLIC_URL: ${FENIX_PUBLIC_URL:-https://"), "FENIX_PUBLIC_URL is not set");

    let services = compose_services(COMPOSE);
    let published: Vec<&str> =
        services.iter().filter(|(_, lines)| lines.iter().any(|l| l.trim() == "ports:")).map(|(n, _)| *n).collect();
    assert_eq!(published, ["lb"], "only the proxy is published");
    let ports: Vec<&str> = services["lb"].iter().filter_map(|l| l.trim().strip_prefix("- \"")).collect();
    assert!(ports.iter().any(|p| p.contains(":443:443")), "no TLS port: {ports:?}");
    for port in &ports {
        assert!(port.starts_with("${PROXY_BIND:-127.0.0.1}:"), "published on every interface: {port}");
    }
    let anchor = &COMPOSE[..COMPOSE.find("\nservices:").expect("services")];
    assert!(!anchor.contains("ports:"), "the shared Fenix service publishes a port");
    for image in COMPOSE.lines().filter_map(|l| l.trim().strip_prefix("image: ")) {
        assert!(image == "fenix:local" || image.contains("@sha256:"), "an image not pinned: {image}");
    }
}

/// The lines of each service under `services:`, by name (the file's own
/// two-space layout; anchors and aliases count as written).
fn compose_services(text: &str) -> std::collections::BTreeMap<&str, Vec<&str>> {
    let mut services = std::collections::BTreeMap::new();
    let body = text.split_once("\nservices:\n").expect("a services: section").1;
    let mut current = None;
    for line in body.lines() {
        if !line.starts_with(' ') && !line.is_empty() {
            break; // the next top-level key (volumes:)
        }
        if let Some(name) = line.strip_prefix("  ").filter(|l| !l.starts_with(' ')).and_then(|l| l.split(':').next()) {
            current = Some(name);
            services.insert(name, Vec::new());
        } else if let Some(name) = current {
            services.get_mut(name).unwrap().push(line);
        }
    }
    services
}

/// nginx passes the client's Host and the X-Forwarded-* headers, keeps
/// connections to Fenix alive for less than Fenix's own idle timeout, and
/// terminates TLS, in both layouts; the local one points at the addresses
/// docs/deployment.md gives the instances.
#[test]
fn nginx_passes_host_and_closes_idle_connections_before_fenix_does() {
    let proxy = directives(PROXY);
    for header in ["Host", "X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host"] {
        assert!(
            proxy.iter().any(|l| l.starts_with(&format!("proxy_set_header {header} $"))),
            "fenix-proxy.conf does not pass {header}"
        );
    }
    assert!(proxy.contains(&"proxy_http_version 1.1;") && proxy.contains(&"proxy_set_header Connection \"\";"));
    assert!(directives(TLS).iter().any(|l| l.starts_with("ssl_certificate ")), "no certificate in fenix-tls.conf");

    let idle = fenix::settings::Settings::default().http_idle_timeout;
    for (name, layout) in [("fenix-compose.conf", NGINX_COMPOSE), ("fenix-local.conf", NGINX_LOCAL)] {
        let lines = directives(layout);
        let keepalive = lines
            .iter()
            .find_map(|l| l.strip_prefix("keepalive_timeout "))
            .unwrap_or_else(|| panic!("{name}: no keepalive_timeout in its upstream"));
        let seconds: u64 = keepalive.trim_end_matches(';').trim_end_matches('s').parse().expect("seconds");
        assert!(Duration::from_secs(seconds) < idle, "{name}: keepalive_timeout {seconds}s is not below {idle:?}");
        for include in ["include snippets/fenix-proxy.conf;", "include snippets/fenix-tls.conf;"] {
            assert!(lines.contains(&include), "{name} lacks `{include}`");
        }
        assert!(lines.contains(&"listen 443 ssl;"), "{name} does not terminate TLS");
    }
    for upstream in ["server 127.0.0.1:8081", "server 127.0.0.1:8082"] {
        assert!(NGINX_LOCAL.contains(upstream), "fenix-local.conf lacks {upstream}");
    }
    assert!(DEPLOYMENT_MD.contains("deploy/nginx/fenix-local.conf") && DEPLOYMENT_MD.contains("127.0.0.1:8081"));
}

/// The Dockerfile builds exactly Cargo.lock from pinned images, checks its
/// health without curl and keeps its data in a volume; .dockerignore keeps the
/// build output, the history and secrets out of the context.
#[test]
fn the_image_is_pinned_locked_and_checks_its_health() {
    let lines = directives(DOCKERFILE);
    let froms: Vec<&&str> = lines.iter().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(froms.len(), 2, "{froms:?}");
    for from in froms {
        let digest = from.split("@sha256:").nth(1).map(|d| d.split_whitespace().next().unwrap());
        assert!(
            digest.is_some_and(|d| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit())),
            "not pinned by digest: {from}"
        );
    }
    assert!(lines.iter().any(|l| l.starts_with("RUN cargo build") && l.contains("--locked")), "no --locked build");
    assert!(lines.iter().any(|l| l.starts_with("HEALTHCHECK")), "no HEALTHCHECK");
    assert!(DOCKERFILE.contains(r#"CMD ["fenix", "health""#), "the HEALTHCHECK does not use fenix health");
    assert!(lines.contains(&"VOLUME /var/lib/fenix"), "no VOLUME for the SQLite database");
    let ignored = directives(DOCKERIGNORE);
    for entry in ["target/", ".git/", ".env", "**/node_modules/", "*.key"] {
        assert!(ignored.contains(&entry), ".dockerignore lacks {entry}");
    }
}

/// The systemd template reads the shared file first and the instance's own
/// file last, so the instance's FENIX_LISTEN wins, and sets no Environment=
/// default a shared file would override.
#[test]
fn the_systemd_unit_lets_each_instance_settings_win() {
    let files: Vec<&str> = directives(UNIT).into_iter().filter(|l| l.starts_with("EnvironmentFile=")).collect();
    assert_eq!(files, ["EnvironmentFile=/etc/fenix/fenix.env", "EnvironmentFile=/etc/fenix/fenix-%i.env"], "{files:?}");
    assert!(!directives(UNIT).iter().any(|l| l.starts_with("Environment=")), "an Environment= the files override");
    assert!(directives(UNIT).contains(&"ExecStart=/usr/local/bin/fenix serve"));
}

/// The release script builds the static musl binary from Cargo.lock and
/// writes its checksum.
#[test]
fn the_release_script_builds_a_static_binary_and_its_checksum() {
    for needle in ["x86_64-unknown-linux-musl", "--locked", "sha256sum", "set -euo pipefail"] {
        assert!(RELEASE.contains(needle), "scripts/release.sh lacks {needle}");
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/release.sh");
    let syntax = Command::new("bash").args(["-n", script]).status().unwrap();
    assert!(syntax.success(), "bash -n scripts/release.sh");
}

/// `fenix keygen --env` prints the three secrets `.env` needs, new each time,
/// each in a form its reader takes.
#[test]
fn keygen_env_prints_a_master_key_an_admin_token_and_a_database_password() {
    let run = || {
        let out = Command::new(BIN).args(["keygen", "--env"]).output().expect("run fenix");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let (first, second) = (run(), run());
    let value = |text: &str, name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("no {name}"))
            .to_string()
    };
    assert!(fenix::secrets::MasterKey::from_base64(&value(&first, "FENIX_MASTER_KEY")).is_ok(), "{first}");
    assert!(value(&first, "FENIX_ADMIN_TOKEN").starts_with("fxa_"), "{first}");
    let password = value(&first, "POSTGRES_PASSWORD");
    assert!(password.len() >= 32 && password.bytes().all(|b| b.is_ascii_alphanumeric()), "{password}");
    for name in ["FENIX_MASTER_KEY", "FENIX_ADMIN_TOKEN", "POSTGRES_PASSWORD"] {
        assert_ne!(value(&first, name), value(&second, name), "{name} is the same twice");
    }
    assert!(first.lines().all(|l| l.starts_with('#') || l.contains('=')), "{first}");
}

/// `fenix --version` names the version and the git revision it was built from.
#[test]
fn version_shows_the_git_revision() {
    let out = Command::new(BIN).arg("--version").output().expect("run fenix");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with(&format!("fenix {} (", env!("CARGO_PKG_VERSION"))), "{text}");
    let revision = text.trim().rsplit_once('(').unwrap().1.trim_end_matches(')');
    assert!(revision == "unknown" || revision.bytes().all(|b| b.is_ascii_hexdigit()), "{text}");
}

/// `fenix health` (the image's HEALTHCHECK) succeeds against a running Fenix
/// and fails, saying why, where nothing answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_succeeds_against_a_running_fenix_and_fails_where_none_runs() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let ok = Command::new(BIN).args(["health", "--url", &format!("{}/healthz", fenix.base)]).output().unwrap();
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let closed = format!("http://127.0.0.1:{}/healthz", free_port());
    let down = Command::new(BIN).args(["health", "--url", &closed]).output().unwrap();
    assert!(!down.status.success());
    assert!(String::from_utf8_lossy(&down.stderr).contains(&closed), "{}", String::from_utf8_lossy(&down.stderr));
}

/// The shipped local nginx layout, run as written (only its ports and
/// certificate paths moved) in front of two instances on one PostgreSQL: a
/// portal link minted through it names the host the client asked for, port
/// 80 redirects to HTTPS, and with one instance gone requests still succeed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_portal_link_minted_through_the_shipped_nginx_names_the_public_host() {
    let Some(nginx) = ["/usr/sbin/nginx", "/usr/bin/nginx"].into_iter().find(|p| std::path::Path::new(p).exists())
    else {
        eprintln!("note: nginx is not installed; the nginx layout test did not run");
        return;
    };
    if !postgres_available() {
        return;
    }
    let db = TestDb::new(Backend::Postgres).await;
    let (one, two) = (format!("127.0.0.1:{}", free_port()), format!("127.0.0.1:{}", free_port()));
    let mut first = Fenix::start(&db, &[("FENIX_LISTEN", &one)]).await;
    let _second = Fenix::start(&db, &[("FENIX_LISTEN", &two)]).await;
    let (tls, plain) = (free_port(), free_port());
    let _proxy = Nginx::start(nginx, &db, &[("127.0.0.1:8081", &one), ("127.0.0.1:8082", &two)], tls, plain).await;

    let public = "hooks.example.test";
    let client = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .resolve(public, ([127, 0, 0, 1], 0).into()) // the URL's port is used
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let base = format!("https://{public}:{tls}");
    let app = first.create_app("acme").await;
    let minted = client
        .post(format!("{base}/v1/apps/{app}/portal-sessions"))
        .bearer_auth(&first.token)
        .json(&json!({"access": "read"}))
        .send()
        .await
        .unwrap();
    let status = minted.status();
    let link: Value = minted.json().await.unwrap();
    assert_eq!(status, 201, "{link}");
    let url = link["url"].as_str().unwrap();
    assert!(url.starts_with(&format!("http://{public}:{tls}/console/portal#")), "the link names another host: {url}");

    let redirect = client.get(format!("http://{public}:{plain}/v1/apps")).send().await.unwrap();
    assert_eq!(redirect.status(), 301);
    let location = redirect.headers()["location"].to_str().unwrap();
    assert!(location.starts_with(&format!("https://{public}")), "{location}");

    first.kill9();
    for _ in 0..4 {
        let listed = client.get(format!("{base}/v1/apps")).bearer_auth(&first.token).send().await.unwrap();
        assert_eq!(listed.status(), 200, "with one instance gone");
    }
}

/// nginx under a throwaway prefix, in the foreground, stopped on drop.
struct Nginx(std::process::Child);

impl Nginx {
    /// Writes deploy/nginx/fenix-local.conf with its upstreams moved
    /// (`upstreams`: shipped address → test address) and its listeners on
    /// `tls` and `plain`, the two snippets and a self-signed certificate, and
    /// waits until it accepts connections.
    async fn start(nginx: &str, db: &TestDb, upstreams: &[(&str, &str)], tls: u16, plain: u16) -> Nginx {
        let prefix = db.path("nginx");
        for dir in ["conf.d", "snippets", "certs", "temp"] {
            std::fs::create_dir_all(prefix.join(dir)).unwrap();
        }
        let mut site = NGINX_LOCAL.to_string();
        let moves = [
            ("listen 443 ssl;", format!("listen 127.0.0.1:{tls} ssl;")),
            ("listen 80;", format!("listen 127.0.0.1:{plain};")),
        ];
        for (from, to) in
            upstreams.iter().map(|(f, t)| (f.to_string(), t.to_string())).chain(moves.map(|(f, t)| (f.to_string(), t)))
        {
            assert!(site.contains(&from), "fenix-local.conf no longer has `{from}`");
            site = site.replace(&from, &to);
        }
        std::fs::write(prefix.join("conf.d/fenix.conf"), site).unwrap();
        std::fs::write(prefix.join("snippets/fenix-proxy.conf"), PROXY).unwrap();
        let certs = prefix.join("certs");
        std::fs::write(
            prefix.join("snippets/fenix-tls.conf"),
            TLS.replace("/etc/nginx/certs", &certs.display().to_string()),
        )
        .unwrap();
        let cert = rcgen::generate_simple_self_signed(vec!["hooks.example.test".into()]).unwrap();
        std::fs::write(certs.join("fullchain.pem"), cert.cert.pem()).unwrap();
        std::fs::write(certs.join("privkey.pem"), cert.key_pair.serialize_pem()).unwrap();
        let temp = prefix.join("temp").display().to_string();
        let main = format!(
            "daemon off;\nmaster_process off;\npid {p}/nginx.pid;\nerror_log {p}/error.log;\nevents {{}}\nhttp {{\n\
             access_log off;\nclient_body_temp_path {temp}/body;\nproxy_temp_path {temp}/proxy;\n\
             fastcgi_temp_path {temp}/fastcgi;\nuwsgi_temp_path {temp}/uwsgi;\nscgi_temp_path {temp}/scgi;\n\
             include conf.d/*.conf;\n}}\n",
            p = prefix.display()
        );
        std::fs::write(prefix.join("nginx.conf"), main).unwrap();
        let child = Command::new(nginx)
            .args(["-e", &prefix.join("error.log").display().to_string(), "-p", &format!("{}/", prefix.display())])
            .args(["-c", &prefix.join("nginx.conf").display().to_string()])
            .stderr(std::fs::File::create(prefix.join("stderr.log")).unwrap())
            .spawn()
            .expect("start nginx");
        let proxy = Nginx(child);
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", tls)).await.is_ok() {
                return proxy;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("nginx did not start: {}", std::fs::read_to_string(prefix.join("stderr.log")).unwrap_or_default());
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
