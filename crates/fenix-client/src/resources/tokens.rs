//! API tokens (`/v1/tokens`, admin only).

use futures::Stream;

use super::{list, list_all, ListOptions};
use crate::generated::{operations, CreateToken, CreatedToken, PageToken, Token};
use crate::transport::{Call, Transport};
use crate::Error;

/// `fenix.tokens()`.
#[derive(Debug, Clone, Copy)]
pub struct Tokens<'a> {
    transport: &'a Transport,
}

impl<'a> Tokens<'a> {
    pub(crate) fn new(transport: &'a Transport) -> Tokens<'a> {
        Tokens { transport }
    }

    /// A new token; its secret is in the answer only.
    pub async fn create(&self, token: &CreateToken) -> Result<CreatedToken, Error> {
        self.transport.send(Call::new(operations::CREATE_TOKEN, &[]).json(token)).await
    }

    /// One page of tokens (never their secrets).
    pub async fn list(&self, options: &ListOptions) -> Result<PageToken, Error> {
        list(self.transport, operations::LIST_TOKENS, &[], options.pairs()).await
    }

    /// Every token, page after page.
    pub fn list_all(&self) -> impl Stream<Item = Result<Token, Error>> + 'a {
        list_all::<PageToken>(self.transport, operations::LIST_TOKENS, Vec::new(), Vec::new())
    }

    /// Revokes a token at once.
    pub async fn revoke(&self, token: &str) -> Result<(), Error> {
        self.transport.send_empty(Call::new(operations::DELETE_TOKEN, &[token])).await
    }
}
