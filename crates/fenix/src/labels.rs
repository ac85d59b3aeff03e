//! Channels and tags: the names an event carries (`channels`, `tags`) and an
//! endpoint subscribes with (`channels`). An endpoint that lists channels
//! receives only the events sharing at least one of them; one without
//! channels receives every event (its event-type filter still applies).
//! Tags do not route: the logs filter by them (and content filters read them).
//!
//! A name is written like an event type (`event_types`): 1-128 characters of
//! `A-Z a-z 0-9 _ - . :`, no leading or trailing dot (so no NUL, no space,
//! nothing a URL query or a log line would need to escape). A list holds at
//! most [`MAX_LABELS`]; a name given twice is kept once, where it first
//! appears (so `["a", "b", "a"]` is stored and shown as `["a", "b"]`).

/// Most channels (or tags) one event, or one endpoint, may carry.
pub const MAX_LABELS: usize = 10;

/// Longest name, in characters (all ASCII).
pub const MAX_LABEL_LEN: usize = 128;

/// The pattern of one name, as the OpenAPI document gives it.
pub const LABEL_PATTERN: &str = "^[A-Za-z0-9_:-][A-Za-z0-9_.:-]{0,126}[A-Za-z0-9_:-]$|^[A-Za-z0-9_:-]$";

/// Which list a name belongs to: the value of `event_labels.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Channel,
    Tag,
}

impl Kind {
    /// The stored text.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Channel => "channel",
            Kind::Tag => "tag",
        }
    }
}

/// A refused list: `field` names the place (`channels`, `channels[1]`), the
/// message says what a valid one looks like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidLabels {
    pub field: String,
    pub problem: String,
}

impl std::fmt::Display for InvalidLabels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.field, self.problem)
    }
}

/// True for a valid name.
pub fn valid(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_LABEL_LEN
        && !name.starts_with('.')
        && !name.ends_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
}

/// Checks the list `field` (`channels`, `tags`): at most [`MAX_LABELS`]
/// names, each valid; answers it without repeats, in the order given.
pub fn parse(field: &str, names: &[String]) -> Result<Vec<String>, InvalidLabels> {
    if names.len() > MAX_LABELS {
        return Err(InvalidLabels {
            field: field.to_string(),
            problem: format!("holds {} names, more than the {MAX_LABELS} allowed", names.len()),
        });
    }
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        if !valid(name) {
            let problem = if name.len() > MAX_LABEL_LEN {
                format!("is {} bytes long; a name is 1-{MAX_LABEL_LEN} characters", name.len())
            } else {
                "must be 1-128 characters of A-Z a-z 0-9 _ - . : without a leading or trailing dot, \
                 e.g. billing or eu-west.orders"
                    .to_string()
            };
            return Err(InvalidLabels { field: format!("{field}[{i}]"), problem });
        }
        if !out.contains(name) {
            out.push(name.clone());
        }
    }
    Ok(out)
}

/// The stored form of a list (a JSON array of names).
pub fn to_json(names: &[String]) -> String {
    serde_json::to_string(names).expect("strings serialize")
}

/// Reads a stored list; `None` for text that is not a JSON array of strings.
pub fn from_json(json: &str) -> Option<Vec<String>> {
    serde_json::from_str(json).ok()
}

/// True when an endpoint subscribed to `wanted` (empty: every event) receives
/// an event carrying `carried`.
pub fn routes(wanted: &[String], carried: &[String]) -> bool {
    wanted.is_empty() || wanted.iter().any(|w| carried.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn valid_names_pass_and_repeats_are_kept_once_in_first_order() {
        let parsed = parse("channels", &names(&["billing", "eu-west.orders", "a:b_c", "billing", "x"])).unwrap();
        assert_eq!(parsed, names(&["billing", "eu-west.orders", "a:b_c", "x"]));
        assert_eq!(parse("tags", &[]).unwrap(), Vec::<String>::new());
        assert!(parse("tags", &names(&[&"a".repeat(128)])).is_ok());
    }

    #[test]
    fn eleven_names_are_refused_naming_the_list() {
        let eleven: Vec<String> = (0..11).map(|i| format!("c{i}")).collect();
        let e = parse("channels", &eleven).unwrap_err();
        assert_eq!(e.field, "channels");
        assert!(e.to_string().contains("11 names, more than the 10"), "{e}");
        // Ten distinct names are fine; ten repeats of one are too.
        assert_eq!(parse("channels", &eleven[..10]).unwrap().len(), 10);
    }

    #[test]
    fn a_bad_name_is_refused_naming_its_place() {
        for bad in ["", "has space", "nul\0byte", ".lead", "trail.", "é", "a/b", "a,b", "*"] {
            let e = parse("tags", &names(&["ok", bad])).unwrap_err();
            assert_eq!(e.field, "tags[1]", "{bad:?}");
        }
        let e = parse("channels", &names(&[&"a".repeat(129)])).unwrap_err();
        assert_eq!(e.field, "channels[0]");
        assert!(e.problem.contains("129 bytes"), "{e}");
    }

    #[test]
    fn an_endpoint_without_channels_takes_every_event_one_with_them_only_shared_ones() {
        assert!(routes(&[], &[]));
        assert!(routes(&[], &names(&["a"])));
        assert!(routes(&names(&["a", "b"]), &names(&["c", "b"])));
        assert!(!routes(&names(&["a"]), &names(&["b"])));
        assert!(!routes(&names(&["a"]), &[]));
    }

    #[test]
    fn the_stored_form_reads_back() {
        let n = names(&["a", "b.c"]);
        assert_eq!(from_json(&to_json(&n)).unwrap(), n);
        assert_eq!(from_json("{}"), None);
    }
}
