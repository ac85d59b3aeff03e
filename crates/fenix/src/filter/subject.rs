//! The event as a filter sees it: `type` (a string), `data` (the event's
//! JSON as CEL values: objects are maps, arrays lists, integers `int` or,
//! above `i64`, `uint`, other numbers `double`), `channels` and `tags`
//! (lists of strings). Built once per event, whatever the number of
//! filters evaluated on it.

use std::collections::HashMap;

use cel::common::types::{CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, CelUInt};
use cel::common::value::Val;
use cel::Context;

/// The variables of one event, bound in the context filters run in.
pub struct Subject {
    context: Context<'static, 'static>,
    /// Entries of the widest list or map in `data` (for the step budget).
    widest: usize,
}

impl Subject {
    /// The event of type `event_type` with `data` (`None`: `null`).
    pub fn new(event_type: &str, data: Option<serde_json::Value>, channels: &[String], tags: &[String]) -> Subject {
        let mut widest = 0;
        let data = data.map_or_else(|| Box::new(CelNull) as Box<dyn Val>, |d| value(d, &mut widest));
        let mut context = Context::with_env(super::ENV.clone());
        context.add_variable_as_val("type", Box::new(CelString::from(event_type.to_string())));
        context.add_variable_as_val("data", data);
        context.add_variable_as_val("channels", strings(channels));
        context.add_variable_as_val("tags", strings(tags));
        Subject { context, widest }
    }

    /// The event of a stored envelope (`envelope::build_envelope`): its
    /// `data` read back from the bytes receivers get.
    pub fn of_envelope(envelope: &[u8], event_type: &str, channels: &[String], tags: &[String]) -> Subject {
        #[derive(serde::Deserialize)]
        struct Envelope {
            data: serde_json::Value,
        }
        let data = serde_json::from_slice::<Envelope>(envelope).ok().map(|e| e.data);
        Subject::new(event_type, data, channels, tags)
    }

    pub(super) fn context(&self) -> &Context<'static, 'static> {
        &self.context
    }

    pub(super) fn widest(&self) -> usize {
        self.widest
    }
}

fn strings(items: &[String]) -> Box<dyn Val> {
    Box::new(CelList::from(
        items.iter().map(|s| Box::new(CelString::from(s.clone())) as Box<dyn Val>).collect::<Vec<_>>(),
    ))
}

/// `json` as CEL values; `widest` grows to the widest list or map met. The
/// recursion is as deep as the JSON, which `serde_json` bounds (128 levels).
fn value(json: serde_json::Value, widest: &mut usize) -> Box<dyn Val> {
    use serde_json::Value as J;
    match json {
        J::Null => Box::new(CelNull),
        J::Bool(b) => Box::new(CelBool::from(b)),
        J::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Box::new(CelInt::from(i)),
            (None, Some(u)) => Box::new(CelUInt::from(u)),
            _ => Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN))),
        },
        J::String(s) => Box::new(CelString::from(s)),
        J::Array(items) => {
            *widest = (*widest).max(items.len());
            Box::new(CelList::from(items.into_iter().map(|i| value(i, widest)).collect::<Vec<_>>()))
        }
        J::Object(map) => {
            *widest = (*widest).max(map.len());
            let entries: HashMap<CelMapKey<'static>, Box<dyn Val>> =
                map.into_iter().map(|(k, v)| (CelMapKey::from(k), value(v, widest))).collect();
            Box::new(CelMap::from(entries))
        }
    }
}
