//! The URL policy on arbitrary input: never panics, and whatever it accepts
//! is https, has no credentials, query or fragment, and checks again to itself.

#![no_main]

use fenix_destination::Policy;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|raw: &str| {
    let development = Policy {
        allow_http: true,
        allow_cidrs: vec!["127.0.0.0/8".parse().unwrap(), "::1/128".parse().unwrap()],
        ..Policy::default()
    };
    for policy in [Policy::default(), development] {
        if let Ok(url) = policy.check_url(raw) {
            assert!(url.username().is_empty() && url.password().is_none(), "{raw:?}");
            assert!(url.query().is_none() && url.fragment().is_none(), "{raw:?}");
            assert!(url.scheme() == "https" || policy.allow_http, "{raw:?}");
            assert_eq!(policy.check_url(url.as_str()).as_ref(), Ok(&url), "{raw:?}");
        }
    }
});
