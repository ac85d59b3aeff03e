//! An endpoint's client certificate and private CA on its console page
//! (issue 31, item 6): shown by subject and expiry, an expiry within 14 days
//! marked and warned of in the health section, the key nowhere on the page.

use serde_json::json;

use super::{
    browser::{self, Script},
    common::app_with_endpoint,
};
use crate::support::{
    certs::{distinctive, TestCa},
    Backend, Fenix, TestDb,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoints_page_shows_its_client_certificate_and_ca_never_the_key() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let (clients, private) = (TestCa::new("Acme client CA"), TestCa::new("Acme private CA"));
    let soon = clients.client("fenix.acme-client", 5);
    let tls = json!({"client_certificate": soon.cert, "client_key": soon.key, "ca_certificates": private.pem()});
    let body = json!({"url": "https://127.0.0.1:9/hook", "tls": tls});
    let (_, ep) = app_with_endpoint(&fenix, "acme", "Acme Travel", body).await;
    let ep_id = ep["id"].as_str().unwrap().to_string();

    let vars = [
        ("FENIX_URL", fenix.base.as_str()),
        ("FENIX_ADMIN_TOKEN", fenix.token.as_str()),
        ("APP_NAME", "Acme Travel"),
        ("ENDPOINT_ID", ep_id.as_str()),
    ];
    let out = Script::start("endpoint_tls", &vars).await.finish().await;
    let shown = out.text("client_certificate");
    assert!(shown.contains("CN=fenix.acme-client") && shown.contains("expires within 14 days"), "{shown:?}");
    let ca = out.text("ca_certificates");
    assert!(ca.contains("public roots") && ca.contains("CN=Acme private CA"), "{ca:?}");
    assert!(out.text("health_warning").contains("client certificate expires"), "{:?}", out.text("health_warning"));
    let page = out.text("page_text");
    assert!(!page.contains(&distinctive(&soon.key)) && !page.contains("PRIVATE KEY"), "a key on the page");
}
