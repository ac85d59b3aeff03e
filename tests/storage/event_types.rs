//! The event-type catalogue's rows: names unique, a change applied only over
//! the revision it read (so two concurrent changes cannot silently undo each
//! other), revisions that say what a cache must recompile.

use fenix::store::{event_types::EventTypeRow, Store};

use crate::support::{Backend, TestDb};

fn row(name: &str) -> EventTypeRow {
    EventTypeRow {
        id: fenix::ids::EventTypeId::new(),
        name: name.into(),
        description: "d".into(),
        schema: Some(r#"{"type":"object"}"#.into()),
        example: None,
        deprecated: false,
        revision: 1,
        created_at: 1,
        updated_at: 1,
    }
}

async fn a_change_applies_only_over_the_revision_it_read(backend: Backend) {
    let db = TestDb::new(backend).await;
    let store = Store::connect(&db.url, 4).await.expect("connect");
    store.migrate().await.expect("migrate");
    store.insert_event_type(&row("order.paid")).await.unwrap();
    let again = store.insert_event_type(&row("order.paid")).await.unwrap_err();
    assert!(again.is_unique_violation(), "{again}");

    let read_by_a = store.find_event_type("order.paid").await.unwrap().unwrap();
    let read_by_b = read_by_a.clone();
    let a = EventTypeRow { description: "by a".into(), deprecated: true, updated_at: 2, ..read_by_a };
    assert!(store.update_event_type(&a).await.unwrap());
    let b = EventTypeRow { description: "by b".into(), updated_at: 3, ..read_by_b };
    assert!(!store.update_event_type(&b).await.unwrap(), "b read revision 1, which a replaced");
    let now = store.find_event_type("order.paid").await.unwrap().unwrap();
    assert_eq!((now.description.as_str(), now.deprecated, now.revision), ("by a", true, 2));
    assert_eq!(now.schema.as_deref(), Some(r#"{"type":"object"}"#));

    let revisions = store.event_type_revisions().await.unwrap();
    assert_eq!(revisions.len(), 1);
    assert_eq!((revisions[0].name.as_str(), revisions[0].revision), ("order.paid", 2));
    assert!(store.delete_event_type("order.paid").await.unwrap());
    assert!(!store.delete_event_type("order.paid").await.unwrap());
    assert!(store.all_event_types().await.unwrap().is_empty());
}

crate::on_both_backends!(a_change_applies_only_over_the_revision_it_read);
