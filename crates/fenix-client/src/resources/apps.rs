//! Apps: the tenants whose events Fenix delivers (`/v1/apps`).

use futures::Stream;

use super::{list, list_all, ListOptions};
use crate::generated::{operations, App, CreateApp, PageApp, PatchApp, Task};
use crate::transport::{Call, Transport};
use crate::Error;

/// `fenix.apps()`.
#[derive(Debug, Clone, Copy)]
pub struct Apps<'a> {
    transport: &'a Transport,
}

impl<'a> Apps<'a> {
    pub(crate) fn new(transport: &'a Transport) -> Apps<'a> {
        Apps { transport }
    }

    /// Creates an app named `name`; `uid` is your own id for it, usable
    /// wherever the API takes an app (`/v1/apps/{uid}`).
    pub async fn create(&self, name: &str, uid: Option<&str>) -> Result<App, Error> {
        let body = CreateApp {
            name: name.to_owned(),
            uid: uid.map(str::to_owned),
            require_endpoint_verification: None,
            payload_retention: None,
            log_retention: None,
        };
        self.create_with(&body).await
    }

    /// Creates an app with every option of the API.
    pub async fn create_with(&self, app: &CreateApp) -> Result<App, Error> {
        self.transport.send(Call::new(operations::CREATE_APP, &[]).json(app)).await
    }

    /// The app `app` (its id `app_…` or its uid).
    pub async fn get(&self, app: &str) -> Result<App, Error> {
        self.transport.send(Call::new(operations::GET_APP, &[app])).await
    }

    /// One page of apps, newest first.
    pub async fn list(&self, options: &ListOptions) -> Result<PageApp, Error> {
        list(self.transport, operations::LIST_APPS, &[], options.pairs()).await
    }

    /// Every app, page after page.
    pub fn list_all(&self) -> impl Stream<Item = Result<App, Error>> + 'a {
        list_all::<PageApp>(self.transport, operations::LIST_APPS, Vec::new(), Vec::new())
    }

    /// Changes the fields `patch` holds.
    pub async fn update(&self, app: &str, patch: &PatchApp) -> Result<App, Error> {
        self.transport.send(Call::new(operations::UPDATE_APP, &[app]).json(patch)).await
    }

    /// Deletes the app with its endpoints, events and deliveries: the app
    /// is not found from now on, and the `delete_app` task answered here
    /// erases its rows in the background (`GET /v1/tasks/{task}`).
    pub async fn delete(&self, app: &str) -> Result<Task, Error> {
        self.transport.send(Call::new(operations::DELETE_APP, &[app])).await
    }
}
