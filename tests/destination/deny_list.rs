//! The operator's deny list (`FENIX_DENY_CIDRS`): ranges the registries call
//! public but this network must never be reached through, e.g. its own NAT64
//! prefix. Refused like any non-public address; wins over the allow list.

use super::common::{register, PUBLIC_V4, PUBLIC_V6};
use crate::support::{dns::TestDns, error_code_or_empty, Backend, Fenix, TestDb};

/// A network-specific NAT64 prefix (RFC 6052 `/96`), public space as far as
/// the registries know.
const NSP: &str = "2a00:1450:64::/96";

async fn names_resolving_into_the_deny_list_are_refused_at_registration(backend: Backend) {
    let db = TestDb::new(backend).await;
    let dns = TestDns::with_zone(&[
        ("denied4.deny-test.com", &[PUBLIC_V4]),
        ("denied-mapped.deny-test.com", &["::ffff:93.184.215.14"]),
        ("denied-nat64.deny-test.com", &["64:ff9b::5db8:d70e"]),
        ("through-nsp.deny-test.com", &["2a00:1450:64::808:808"]),
        ("public6.deny-test.com", &[PUBLIC_V6]),
        ("next-door.deny-test.com", &["93.184.216.1", "2a00:1450:65::1"]),
    ])
    .await;
    let server = dns.server();
    let deny = format!("93.184.215.0/24, {NSP}, 127.0.0.53/32");
    let fenix = Fenix::start(
        &db,
        &[
            ("FENIX_UNSAFE_ALLOW_HTTP", "true"),
            ("FENIX_UNSAFE_ALLOW_CIDRS", "127.0.0.0/8"),
            ("FENIX_DNS_SERVERS", &server),
            ("FENIX_DENY_CIDRS", &deny),
        ],
    )
    .await;
    let app = fenix.create_app("acme").await;

    for name in ["denied4", "denied-mapped", "denied-nat64", "through-nsp"] {
        let (status, body) = register(&fenix, &app, &format!("https://{name}.deny-test.com/hook")).await;
        assert_eq!((status, error_code_or_empty(&body)), (422, "destination_not_public"), "{name}: {body}");
        assert!(!body.to_string().contains("operator"), "{name}: the tenant is not told about the deny list: {body}");
    }
    // Denied although the development allow list admits it.
    let (status, body) = register(&fenix, &app, "http://127.0.0.53:9000/hook").await;
    assert_eq!((status, error_code_or_empty(&body)), (422, "destination_not_public"), "{body}");
    // Everything outside the list is judged as before.
    for url in ["https://public6.deny-test.com/hook", "https://next-door.deny-test.com/hook", "http://127.0.0.1:9000/"]
    {
        let (status, body) = register(&fenix, &app, url).await;
        assert_eq!(status, 201, "{url}: {body}");
    }
}

#[tokio::test]
async fn a_bad_deny_range_stops_fenix_from_starting_with_the_variable_named() {
    let db = TestDb::new(Backend::Sqlite).await;
    let mut env = crate::support::fenix::base_env(&db);
    env.push(("FENIX_DENY_CIDRS".into(), "10.0.0.0/33".into()));
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_fenix"));
    cmd.arg("serve").env_clear().envs(env);
    let out = cmd.output().expect("run fenix");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("FENIX_DENY_CIDRS"), "{stderr}");
}

crate::on_both_backends!(names_resolving_into_the_deny_list_are_refused_at_registration);
