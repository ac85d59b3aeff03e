//! The envelope receivers get: `{"id","type","created_at","data"}`, built once
//! per event (by the API's intake and by the operator events) and stored as
//! bytes, so every attempt sends, and signs, exactly the same body.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::{event_types::EventType, time};

/// The envelope, serialized once; `data` keeps the producer's bytes.
pub fn build_envelope(id: &str, event_type: &EventType, created_at: time::Millis, data: &RawValue) -> Vec<u8> {
    let q = |s: &str| serde_json::to_string(s).expect("strings serialize");
    format!(
        r#"{{"id":{},"type":{},"created_at":{},"data":{}}}"#,
        q(id),
        q(event_type.as_str()),
        q(&time::rfc3339_ms(created_at)),
        data.get()
    )
    .into_bytes()
}

/// The `data` member of a stored envelope.
pub fn envelope_data(envelope: &[u8]) -> Option<Box<RawValue>> {
    #[derive(Deserialize)]
    struct Env {
        data: Box<RawValue>,
    }
    serde_json::from_slice::<Env>(envelope).ok().map(|e| e.data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_keeps_the_producer_bytes_and_orders_its_fields() {
        let data: Box<RawValue> = serde_json::from_str(r#"{"b":1, "a":"x"}"#).unwrap();
        let t = EventType::parse("booking.confirmed").unwrap();
        let env = build_envelope("evt_1", &t, 1_795_986_259_000, &data);
        assert_eq!(
            String::from_utf8(env.clone()).unwrap(),
            r#"{"id":"evt_1","type":"booking.confirmed","created_at":"2026-11-29T21:04:19.000Z","data":{"b":1, "a":"x"}}"#
        );
        assert_eq!(envelope_data(&env).unwrap().get(), r#"{"b":1, "a":"x"}"#);
    }
}
