//! Links into the web console for one app's own users (`/v1/apps/{app}/portal-sessions`).

use futures::Stream;

use super::{list, list_all, ListOptions};
use crate::generated::{operations, Access, CreatePortalSession, PagePortalSession, PortalLink, PortalSession};
use crate::transport::{Call, Transport};
use crate::Error;

/// `fenix.portal_sessions()`.
#[derive(Debug, Clone, Copy)]
pub struct PortalSessions<'a> {
    transport: &'a Transport,
}

impl<'a> PortalSessions<'a> {
    pub(crate) fn new(transport: &'a Transport) -> PortalSessions<'a> {
        PortalSessions { transport }
    }

    /// A single-use link to the console for `app`, with `access`, expiring
    /// after `expires_in` seconds (Fenix's default: an hour). The `url` is
    /// shown only in this answer.
    pub async fn create(&self, app: &str, access: Access, expires_in: Option<i64>) -> Result<PortalLink, Error> {
        let body = CreatePortalSession { access, expires_in: expires_in.map(Into::into), label: None };
        self.create_with(app, &body).await
    }

    /// [`PortalSessions::create`] with every field of the API (`label`).
    pub async fn create_with(&self, app: &str, session: &CreatePortalSession) -> Result<PortalLink, Error> {
        self.transport.send(Call::new(operations::CREATE_PORTAL_SESSION, &[app]).json(session)).await
    }

    /// One page of the app's live sessions.
    pub async fn list(&self, app: &str, options: &ListOptions) -> Result<PagePortalSession, Error> {
        list(self.transport, operations::LIST_PORTAL_SESSIONS, &[app], options.pairs()).await
    }

    /// Every live session of the app.
    pub fn list_all(&self, app: &str) -> impl Stream<Item = Result<PortalSession, Error>> + 'a {
        let operation = operations::LIST_PORTAL_SESSIONS;
        list_all::<PagePortalSession>(self.transport, operation, vec![app.to_owned()], Vec::new())
    }

    /// Ends a session (and its link) at once.
    pub async fn revoke(&self, app: &str, session: &str) -> Result<(), Error> {
        self.transport.send_empty(Call::new(operations::REVOKE_PORTAL_SESSION, &[app, session])).await
    }
}
