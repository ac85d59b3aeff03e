//! The web console's pages: a few static files (`crates/fenix/console/`)
//! embedded in the binary, so `fenix serve` needs nothing else installed, no
//! front-end build runs, and no page ever loads anything from another host.
//!
//! The page's data comes from the `/v1` API and `/console/api/*` (sessions);
//! this file only serves the files, each with headers that make them safe to
//! embed: a Content-Security-Policy without inline script or style (the page
//! sets text with DOM calls, styles with classes), framing allowed only for
//! the origins in `FENIX_CONSOLE_FRAME_ANCESTORS`, no MIME sniffing, no
//! Referer (a portal URL must not travel anywhere), and no caching of the HTML.
//! These routes are outside the OpenAPI document: they are pages, not API.

use crate::api::code::Code;
use axum::{
    extract::Path,
    http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    routing::get,
    Router,
};

use super::ApiError;
use crate::state::SharedState;

/// One embedded file: its name under `/console/assets/`, content type and bytes.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const INDEX_HTML: &str = include_str!("../../console/index.html");

/// The page's files. A new file goes here and in `index.html` or an `import`.
const ASSETS: &[Asset] = &[
    js("app.js", include_str!("../../console/app.js")),
    js("api.js", include_str!("../../console/api.js")),
    js("dom.js", include_str!("../../console/dom.js")),
    js("login.js", include_str!("../../console/login.js")),
    js("endpoints.js", include_str!("../../console/endpoints.js")),
    js("deliveries.js", include_str!("../../console/deliveries.js")),
    js("health.js", include_str!("../../console/health.js")),
    js("operator.js", include_str!("../../console/operator.js")),
    js("event_types.js", include_str!("../../console/event_types.js")),
    js("routing.js", include_str!("../../console/routing.js")),
    js("tasks.js", include_str!("../../console/tasks.js")),
    Asset { name: "style.css", content_type: "text/css; charset=utf-8", body: include_str!("../../console/style.css") },
];

const fn js(name: &'static str, body: &'static str) -> Asset {
    Asset { name, content_type: "text/javascript; charset=utf-8", body }
}

/// The console's routes; `frame_ancestors` are the validated origins of
/// `FENIX_CONSOLE_FRAME_ANCESTORS`, read once here.
pub fn router(frame_ancestors: &[String]) -> Router<SharedState> {
    let headers = SecurityHeaders::new(frame_ancestors);
    let page = {
        let headers = headers.clone();
        move || {
            let headers = headers.clone();
            async move { headers.answer("text/html; charset=utf-8", INDEX_HTML, true) }
        }
    };
    let asset = move |Path(name): Path<String>| {
        let headers = headers.clone();
        async move {
            match ASSETS.iter().find(|a| a.name == name) {
                Some(a) => headers.answer(a.content_type, a.body, false),
                None => {
                    let mut resp = ApiError::new(Code::NotFound, "no such console asset").into_response();
                    headers.apply(resp.headers_mut());
                    resp
                }
            }
        }
    };
    Router::new()
        .route("/console", get(page.clone()))
        .route("/console/", get(page.clone()))
        .route("/console/portal", get(page))
        .route("/console/assets/{name}", get(asset))
}

/// Every embedded file by name, `index.html` first: for tests that scan them.
pub fn embedded_files() -> Vec<(&'static str, &'static str)> {
    std::iter::once(("index.html", INDEX_HTML)).chain(ASSETS.iter().map(|a| (a.name, a.body))).collect()
}

/// The headers every console answer carries, built once.
#[derive(Clone)]
struct SecurityHeaders {
    list: Vec<(HeaderName, HeaderValue)>,
}

impl SecurityHeaders {
    fn new(frame_ancestors: &[String]) -> SecurityHeaders {
        let ancestors = if frame_ancestors.is_empty() { "'none'".to_string() } else { frame_ancestors.join(" ") };
        let csp = format!(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
             base-uri 'none'; form-action 'self'; frame-ancestors {ancestors}"
        );
        let mut list = vec![
            // The origins were validated at start (settings): nothing but `scheme://host[:port]`.
            (header::CONTENT_SECURITY_POLICY, HeaderValue::from_str(&csp).expect("validated origins are header-safe")),
            (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
            (header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
        ];
        if frame_ancestors.is_empty() {
            // For browsers that predate `frame-ancestors`.
            list.push((header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")));
        }
        SecurityHeaders { list }
    }

    fn apply(&self, headers: &mut HeaderMap) {
        for (k, v) in &self.list {
            headers.insert(k.clone(), v.clone());
        }
    }

    fn answer(&self, content_type: &'static str, body: &'static str, html: bool) -> Response {
        let mut resp = (StatusCode::OK, body).into_response();
        let h = resp.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        // The HTML is tiny and names the session's page: never from a cache. The
        // assets change only with the binary; `no-cache` makes the browser check.
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static(if html { "no-store" } else { "no-cache" }));
        self.apply(h);
        resp
    }
}
