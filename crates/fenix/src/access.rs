//! Who is calling, and what they may do: the caller of every authenticated
//! request is a [`Principal`], put into the request's extensions by the
//! authentication middleware (from a bearer token or a console session), and
//! every route declares the [`Scope`] it needs.
//!
//! An admin reaches everything. An app-scoped caller (an app token, or a
//! customer's portal session) reaches only its app: another app's resources
//! answer 404 exactly as if they did not exist, so ids do not leak.

use serde::{Deserialize, Serialize};

/// What an app-scoped caller may do within its app.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Read endpoints, events, deliveries and health; change nothing.
    Read,
    /// Everything within the app: endpoints, events, replays, secrets.
    Manage,
}

impl Access {
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Manage => "manage",
        }
    }

    pub fn parse(s: &str) -> Option<Access> {
        match s {
            "read" => Some(Access::Read),
            "manage" => Some(Access::Manage),
            _ => None,
        }
    }
}

/// The caller of an authenticated request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Principal {
    /// An admin token or an operator's console session: every app, every route.
    Admin,
    /// An app-scoped token or a portal session: one app (its id, never its uid).
    App { app_id: crate::ids::AppId, access: Access },
}

/// What a route needs, declared once per route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Admin only (apps' lifecycle, tokens, portal links, metrics, settings).
    Admin,
    /// Any caller that can see the app in the path (or, without one, lists only its app).
    AppRead,
    /// An admin, or an app-scoped caller with `manage` on the app in the path.
    AppManage,
}

impl Principal {
    /// Whether this caller may use a route of `scope` (the app in the path is checked apart).
    pub fn allows(&self, scope: Scope) -> bool {
        match (self, scope) {
            (Principal::Admin, _) => true,
            (Principal::App { .. }, Scope::Admin) => false,
            (Principal::App { .. }, Scope::AppRead) => true,
            (Principal::App { access, .. }, Scope::AppManage) => *access == Access::Manage,
        }
    }

    /// The one app this caller is confined to, if any.
    pub fn app_id(&self) -> Option<&crate::ids::AppId> {
        match self {
            Principal::Admin => None,
            Principal::App { app_id, .. } => Some(app_id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_admit_what_they_say() {
        let read = Principal::App { app_id: crate::ids::AppId::from_stored("app_1".into()), access: Access::Read };
        let manage = Principal::App { app_id: crate::ids::AppId::from_stored("app_1".into()), access: Access::Manage };
        for scope in [Scope::Admin, Scope::AppRead, Scope::AppManage] {
            assert!(Principal::Admin.allows(scope));
        }
        assert!(!read.allows(Scope::Admin) && !manage.allows(Scope::Admin));
        assert!(read.allows(Scope::AppRead) && manage.allows(Scope::AppRead));
        assert!(!read.allows(Scope::AppManage) && manage.allows(Scope::AppManage));
        assert_eq!(manage.app_id().map(|a| a.as_str()), Some("app_1"));
        assert_eq!(Principal::Admin.app_id(), None);
    }
}
