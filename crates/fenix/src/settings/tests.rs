//! The settings table read through the environment, the file and validation.

use super::*;

#[test]
fn the_default_schedule_gives_five_attempts() {
    let s = Settings::default();
    assert_eq!(s.max_attempts(), 5);
    assert_eq!(s.retry_schedule[3], Duration::from_secs(7200));
}

#[test]
fn environment_overrides_defaults() {
    let mut s = Settings::default();
    s.apply_env(|k| match k {
        "FENIX_RETRY_SCHEDULE" => Some("100ms, 2s".into()),
        "FENIX_UNSAFE_ALLOW_CIDRS" => Some("127.0.0.0/8,::1/128".into()),
        "FENIX_UNSAFE_ALLOW_HTTP" => Some("true".into()),
        _ => None,
    })
    .unwrap();
    assert_eq!(s.retry_schedule, vec![Duration::from_millis(100), Duration::from_secs(2)]);
    assert_eq!(s.unsafe_allow_cidrs.len(), 2);
    assert!(s.unsafe_allow_http);
}

#[test]
fn a_bad_duration_names_the_variable() {
    let err = Settings::default().apply_env(|k| (k == "FENIX_ATTEMPT_TIMEOUT").then(|| "soon".into())).unwrap_err();
    assert!(format!("{err:#}").contains("FENIX_ATTEMPT_TIMEOUT"));
}

#[test]
fn out_of_range_durations_and_numbers_are_refused_naming_the_variable() {
    for (var, value) in [
        ("FENIX_PAYLOAD_RETENTION", "100000000d"),
        ("FENIX_LOG_RETENTION", "0s"),
        ("FENIX_DISABLE_AFTER_FAILING", "500000y"),
        ("FENIX_RETRY_SCHEDULE", "1m,400d"),
        ("FENIX_ATTEMPT_TIMEOUT", "2d"),
        ("FENIX_MAINTENANCE_INTERVAL", "0s"),
        ("FENIX_WORKER_CONCURRENCY", "10000000"),
        ("FENIX_MAX_ENDPOINTS_PER_APP", "0"),
        ("FENIX_MAX_FANOUT_PER_EVENT", "100000000"),
    ] {
        let mut s = Settings { lease_duration: Duration::from_secs(7200), ..Settings::default() };
        let err = s.apply_env(|k| (k == var).then(|| value.into())).and_then(|_| s.validate());
        let err = format!("{:#}", err.expect_err(var));
        assert!(err.contains(var), "{var}={value}: {err}");
    }
}

#[test]
fn a_retention_of_forever_is_accepted() {
    let mut s = Settings::default();
    s.apply_env(|k| k.ends_with("_RETENTION").then(|| "forever".into())).unwrap();
    s.validate().unwrap();
    assert_eq!((s.payload_retention, s.log_retention), (FOREVER, FOREVER));
}

#[test]
fn http_limits_out_of_range_name_their_variable() {
    let cases = [
        ("FENIX_HTTP_HEADER_TIMEOUT", "0s"),
        ("FENIX_HTTP_HEADER_TIMEOUT", "1h"),
        ("FENIX_HTTP_BODY_TIMEOUT", "10ms"),
        ("FENIX_HTTP_IDLE_TIMEOUT", "2h"),
        ("FENIX_HTTP_MAX_CONNECTIONS", "0"),
        ("FENIX_HTTP_MAX_IN_FLIGHT", "0"),
        ("FENIX_HTTP_MAX_IN_FLIGHT", "2000"),
    ];
    for (name, value) in cases {
        let mut s = Settings::default();
        s.apply_env(|k| (k == name).then(|| value.into())).unwrap();
        let err = s.validate().expect_err(&format!("{name}={value} must be refused"));
        assert!(format!("{err:#}").contains(name), "{name}={value}: {err:#}");
    }
    let mut s = Settings::default();
    s.apply_env(|k| match k {
        "FENIX_HTTP_HEADER_TIMEOUT" => Some("2s".into()),
        "FENIX_HTTP_MAX_CONNECTIONS" => Some("64".into()),
        "FENIX_HTTP_MAX_IN_FLIGHT" => Some("8".into()),
        _ => None,
    })
    .unwrap();
    s.validate().unwrap();
    assert_eq!((s.http_header_timeout, s.http_max_connections, s.http_max_in_flight), (Duration::from_secs(2), 64, 8));
}

#[test]
fn schema_budgets_are_read_and_checked_naming_the_variable() {
    let mut s = Settings::default();
    assert_eq!((s.schema_budget, s.schema_request_budget), (Duration::from_millis(50), Duration::from_secs(1)));
    let env =
        [("FENIX_SCHEMA_BUDGET", "20ms"), ("FENIX_SCHEMA_REQUEST_BUDGET", "200ms"), ("FENIX_SCHEMA_CONCURRENCY", "2")];
    s.apply_env(|k| env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())).unwrap();
    assert_eq!(
        (s.schema_budget, s.schema_request_budget, s.schema_concurrency),
        (Duration::from_millis(20), Duration::from_millis(200), 2)
    );
    s.validate().unwrap();
    for (name, value) in [
        ("FENIX_SCHEMA_BUDGET", "0s"),
        ("FENIX_SCHEMA_BUDGET", "2m"),
        ("FENIX_SCHEMA_REQUEST_BUDGET", "10ms"),
        ("FENIX_SCHEMA_CONCURRENCY", "0"),
    ] {
        let mut s = Settings::default();
        s.apply_env(|k| (k == name).then(|| value.to_string())).unwrap();
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains(name), "{name}={value}: {e}");
    }
}

#[test]
fn secrets_are_redacted_in_debug() {
    let s = Settings { admin_token: Some(Redacted("fxa_topsecret".into())), ..Settings::default() };
    assert!(!format!("{s:?}").contains("topsecret"));
}

#[test]
fn an_out_of_range_host_concurrency_names_the_variable() {
    for bad in ["0", "100001"] {
        let mut s = Settings::default();
        s.apply_env(|k| (k == "FENIX_HOST_CONCURRENCY").then(|| bad.into())).unwrap();
        let err = s.validate().unwrap_err();
        assert!(format!("{err:#}").contains("FENIX_HOST_CONCURRENCY"), "{err:#}");
    }
    let err = Settings::default().apply_env(|k| (k == "FENIX_HOST_CONCURRENCY").then(|| "-1".into())).unwrap_err();
    assert!(format!("{err:#}").contains("FENIX_HOST_CONCURRENCY"));
}

#[test]
fn an_out_of_range_stall_threshold_names_the_variable() {
    let mut s = Settings::default();
    s.apply_env(|k| (k == "FENIX_WORKER_STALL_AFTER").then(|| "10ms".into())).unwrap();
    assert!(format!("{:#}", s.validate().unwrap_err()).contains("FENIX_WORKER_STALL_AFTER"));
}

#[test]
fn deny_cidrs_are_read_as_a_list_and_a_bad_range_names_the_variable() {
    let mut s = Settings::default();
    s.apply_env(|k| (k == "FENIX_DENY_CIDRS").then(|| "2001:db8:64::/96, 203.0.113.0/24".into())).unwrap();
    assert_eq!(s.deny_cidrs, vec!["2001:db8:64::/96".parse().unwrap(), "203.0.113.0/24".parse().unwrap()]);
    let err = Settings::default().apply_env(|k| (k == "FENIX_DENY_CIDRS").then(|| "10.0.0.0/33".into())).unwrap_err();
    assert!(format!("{err:#}").contains("FENIX_DENY_CIDRS"), "{err:#}");
}
#[test]
fn console_settings_are_read_and_checked() {
    let mut s = Settings::default();
    assert_eq!((s.portal_max_ttl, s.console_session_ttl), (Duration::from_secs(86_400), Duration::from_secs(43_200)));
    assert!(!s.served_over_https());
    s.apply_env(|k| match k {
        "FENIX_PUBLIC_URL" => Some(" https://fenix.example.com/hooks/ ".into()),
        "FENIX_PORTAL_MAX_TTL" => Some("2h".into()),
        "FENIX_CONSOLE_SESSION_TTL" => Some("30m".into()),
        _ => None,
    })
    .unwrap();
    s.validate().unwrap();
    assert_eq!(s.public_url.as_deref(), Some("https://fenix.example.com/hooks"));
    assert!(s.served_over_https());
    assert_eq!((s.portal_max_ttl, s.console_session_ttl), (Duration::from_secs(7200), Duration::from_secs(1800)));
    for (name, value) in [
        ("FENIX_PUBLIC_URL", "fenix.example.com"),
        ("FENIX_PUBLIC_URL", "ftp://fenix.example.com"),
        ("FENIX_PUBLIC_URL", "https://user:pw@fenix.example.com"),
        ("FENIX_PUBLIC_URL", "https://fenix.example.com/?a=1"),
        ("FENIX_PORTAL_MAX_TTL", "0s"),
        ("FENIX_PORTAL_MAX_TTL", "31d"),
        ("FENIX_CONSOLE_SESSION_TTL", "500ms"),
    ] {
        let mut s = Settings::default();
        s.apply_env(|k| (k == name).then(|| value.into())).unwrap();
        let err = s.validate().expect_err(&format!("{name}={value} must be refused"));
        assert!(format!("{err:#}").contains(name), "{name}={value}: {err:#}");
    }
}

#[test]
fn console_frame_ancestors_take_origins_only() {
    let mut s = Settings::default();
    s.apply_env(|k| {
        (k == "FENIX_CONSOLE_FRAME_ANCESTORS")
            .then(|| "https://app.example.com, http://localhost:3000 https://b.example:443/".into())
    })
    .unwrap();
    assert_eq!(s.console_frame_ancestors, ["https://app.example.com", "http://localhost:3000", "https://b.example"]);
    for bad in [
        "app.example.com",
        "https://app.example.com/portal",
        "https://*.example.com",
        "https://app.example.com; script-src *",
        "ftp://app.example.com",
        "https://user@app.example.com",
        "https://app.example.com?x",
        "'self'",
        "https://app.example.com;",
    ] {
        let err =
            Settings::default().apply_env(|k| (k == "FENIX_CONSOLE_FRAME_ANCESTORS").then(|| bad.into())).unwrap_err();
        assert!(format!("{err:#}").contains("FENIX_CONSOLE_FRAME_ANCESTORS"), "{bad}: {err:#}");
    }
}

#[test]
fn the_endpoint_concurrency_minimum_must_lie_between_1_and_the_maximum() {
    let with = |min: &str, max: &str| {
        let mut s = Settings::default();
        s.apply_env(|k| match k {
            "FENIX_ENDPOINT_CONCURRENCY_MIN" => Some(min.into()),
            "FENIX_ENDPOINT_CONCURRENCY" => Some(max.into()),
            _ => None,
        })
        .unwrap();
        s.validate()
    };
    assert!(with("32", "32").is_ok(), "min = max: the fixed limit");
    for (min, max) in [("0", "32"), ("33", "32")] {
        let err = with(min, max).unwrap_err();
        assert!(format!("{err:#}").contains("FENIX_ENDPOINT_CONCURRENCY_MIN"), "{err:#}");
    }
}

/// The Rust field a row fills: its TOML key, or for an environment-only
/// setting its variable without `FENIX_`, in lower case.
fn field_of(row: &Setting) -> String {
    row.key.map_or_else(|| row.env.trim_start_matches("FENIX_").to_ascii_lowercase(), str::to_string)
}

#[test]
fn every_field_but_the_command_line_flags_has_one_row() {
    // `{:#?}` writes one field per line, indented four spaces.
    let debug = format!("{:#?}", Settings::default());
    let fields: Vec<&str> = debug
        .lines()
        .filter_map(|l| l.strip_prefix("    ").filter(|l| !l.starts_with(' ')))
        .filter_map(|l| l.split_once(':').map(|(name, _)| name))
        .filter(|name| !matches!(*name, "run_api" | "run_worker"))
        .collect();
    let rows: Vec<String> = SETTINGS.iter().map(field_of).collect();
    let mut sorted = rows.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), rows.len(), "a field has two rows: {rows:?}");
    let mut envs: Vec<&str> = SETTINGS.iter().map(|r| r.env).collect();
    envs.sort();
    envs.dedup();
    assert_eq!(envs.len(), rows.len(), "a variable has two rows");
    for field in &fields {
        assert!(rows.iter().any(|r| r == field), "the field {field} has no row in SETTINGS");
    }
    assert_eq!(fields.len(), rows.len(), "a row names no field: {rows:?} vs {fields:?}");
}

#[test]
fn the_defaults_are_valid_and_every_row_says_what_it_is() {
    Settings::default().validate().unwrap();
    for row in SETTINGS {
        assert!(!row.doc.is_empty(), "{} has no doc", row.env);
        assert!(row.env.starts_with("FENIX_") || row.env == "DATABASE_URL", "{}", row.env);
    }
}

/// The rows of docs/configuration.md's settings table: variable, TOML key, default.
fn documented() -> Vec<(&'static str, &'static str, &'static str)> {
    let doc = include_str!("../../../../docs/configuration.md");
    let table = doc.split("## Settings").nth(1).and_then(|t| t.split("\n#").next()).expect("a Settings section");
    table
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            assert!(cells.len() >= 4, "a settings row has four cells: {l}");
            (cells[0].trim_start_matches("| ").trim_matches('`'), cells[1], cells[2])
        })
        .collect()
}

#[test]
fn docs_configuration_md_documents_every_setting_in_the_table_order() {
    let documented = documented();
    let names: Vec<&str> = documented.iter().map(|(name, _, _)| *name).collect();
    let rows: Vec<&str> = SETTINGS.iter().map(|r| r.env).collect();
    for row in &rows {
        assert!(names.contains(row), "{row} is not documented in docs/configuration.md");
    }
    for name in &names {
        assert!(rows.contains(name), "docs/configuration.md documents {name}, which is no setting");
    }
    assert_eq!(
        names, rows,
        "docs/configuration.md lists the settings in the order of SETTINGS (and of GET /v1/settings)"
    );
    for (row, (name, key, default)) in SETTINGS.iter().zip(&documented) {
        match row.key {
            Some(k) => assert_eq!(*key, format!("`{k}`"), "{name}: TOML key"),
            None => assert!(key.contains("environment only"), "{name}: documented with a TOML key {key}"),
        }
        if !row.default.is_empty() {
            assert!(
                default.contains(&format!("`{}`", row.default)),
                "{name}: default {:?}, documented {default}",
                row.default
            );
        }
    }
}

#[test]
fn every_fenix_variable_docs_configuration_md_names_exists() {
    // Read outside the settings: the log filter and format, the file, `fenix listen`'s secret.
    let elsewhere = ["FENIX_LOG", "FENIX_LOG_FORMAT", "FENIX_CONFIG", "FENIX_LISTEN_SECRET"];
    let doc = include_str!("../../../../docs/configuration.md");
    let mut rest = doc;
    while let Some(at) = rest.find("FENIX_") {
        let tail = &rest[at..];
        let end =
            tail.find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')).unwrap_or(tail.len());
        let name = &tail[..end];
        // `FENIX_` alone (the prefix) and `FENIX_HTTP_*` (a family) name no one variable.
        if !name.ends_with('_') {
            assert!(
                SETTINGS.iter().any(|r| r.env == name) || elsewhere.contains(&name),
                "docs/configuration.md names {name}, which Fenix does not read"
            );
        }
        rest = &tail[end..];
    }
}

#[test]
fn the_documented_toml_example_loads() {
    let doc = include_str!("../../../../docs/configuration.md");
    let example = doc.split("```toml").nth(1).and_then(|t| t.split("```").next()).expect("a TOML example");
    let mut s = Settings::default();
    s.apply_file(example).unwrap();
    s.validate().unwrap();
    assert_eq!((s.worker_concurrency, s.listen.port()), (256, 8080));
    assert!(s.is_postgres());
}

#[test]
fn a_file_is_read_through_the_same_rows_and_its_errors_name_the_key() {
    let mut s = Settings::default();
    s.apply_file("attempt_timeout = \"3s\"\nunsafe_allow_http = true\nmax_db_connections = 4\nadmin_token = \"fxa_0123456789abcdef\"\n")
        .unwrap();
    assert_eq!((s.attempt_timeout, s.unsafe_allow_http, s.max_db_connections), (Duration::from_secs(3), true, 4));
    assert!(s.admin_token.is_some());
    for (text, needle) in [
        ("attempt_timeout = \"soon\"", "attempt_timeout"),
        ("attempt_timeout = 10", "attempt_timeout` must be a string"),
        ("worker_concurrency = \"10\"", "worker_concurrency` must be a whole number"),
        ("event_types_strict = \"yes\"", "event_types_strict` must be true or false"),
        ("worker_concurrency = -1", "worker_concurrency"),
        ("worker_concurency = 10", "unknown key `worker_concurency`"),
        ("FENIX_LISTEN = \"0.0.0.0:1\"", "without FENIX_"),
        ("previous_master_keys = \"a\"", "environment only"),
        ("listen = ", "TOML"),
    ] {
        let err = format!("{:#}", Settings::default().apply_file(text).unwrap_err());
        assert!(err.contains(needle), "{text}: {err}");
    }
}

#[test]
fn a_postgres_url_with_several_hosts_is_accepted_in_either_libpq_form_and_checked() {
    for url in [
        "postgres://fenix@db1:5432,db2:5432/fenix?target_session_attrs=read-write",
        "host=db1,db2 port=5432 dbname=fenix user=fenix target_session_attrs=read-write",
    ] {
        let mut s = Settings::default();
        s.apply_env(|k| (k == "DATABASE_URL").then(|| url.into())).unwrap();
        s.validate().unwrap_or_else(|e| panic!("{url}: {e:#}"));
        assert!(s.is_postgres(), "{url}");
    }
    let mut s = Settings::default();
    s.apply_env(|k| (k == "DATABASE_URL").then(|| "postgres://db1,db2/fenix?target_session_attrs=standby".into()))
        .unwrap();
    let err = format!("{:#}", s.validate().unwrap_err());
    assert!(err.contains("DATABASE_URL") && err.contains("Fenix writes"), "{err}");
}
