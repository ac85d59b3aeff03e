from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.key_set import KeySet
from ...types import Response


def _get_kwargs(
    app: str,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": f"/v1/apps/{app}/jwks.json",
    }

    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, KeySet]]:
    if response.status_code == 200:
        response_200 = KeySet.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())

        return response_400

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Response[Union[ErrorBody, KeySet]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    app: str,
    *,
    client: Union[AuthenticatedClient, Client],
) -> Response[Union[ErrorBody, KeySet]]:
    r"""The app's Ed25519 public keys (JWKS), for receivers

     No token: receivers fetch it to verify `v1a` signatures. Every live Ed25519 key of the app's
    endpoints (two for an endpoint in a rotation's overlap), as RFC 8037 JWKs with opaque key ids.
    `Cache-Control: public, max-age=300`; fetch again when a signature names an unknown `kid`. The app
    by its id only; an id that names no app answers `{\"keys\": []}`, as an app without Ed25519 keys
    does.

    Args:
        app (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, KeySet]]
    """

    kwargs = _get_kwargs(
        app=app,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    app: str,
    *,
    client: Union[AuthenticatedClient, Client],
) -> Optional[Union[ErrorBody, KeySet]]:
    r"""The app's Ed25519 public keys (JWKS), for receivers

     No token: receivers fetch it to verify `v1a` signatures. Every live Ed25519 key of the app's
    endpoints (two for an endpoint in a rotation's overlap), as RFC 8037 JWKs with opaque key ids.
    `Cache-Control: public, max-age=300`; fetch again when a signature names an unknown `kid`. The app
    by its id only; an id that names no app answers `{\"keys\": []}`, as an app without Ed25519 keys
    does.

    Args:
        app (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, KeySet]
    """

    return sync_detailed(
        app=app,
        client=client,
    ).parsed


async def asyncio_detailed(
    app: str,
    *,
    client: Union[AuthenticatedClient, Client],
) -> Response[Union[ErrorBody, KeySet]]:
    r"""The app's Ed25519 public keys (JWKS), for receivers

     No token: receivers fetch it to verify `v1a` signatures. Every live Ed25519 key of the app's
    endpoints (two for an endpoint in a rotation's overlap), as RFC 8037 JWKs with opaque key ids.
    `Cache-Control: public, max-age=300`; fetch again when a signature names an unknown `kid`. The app
    by its id only; an id that names no app answers `{\"keys\": []}`, as an app without Ed25519 keys
    does.

    Args:
        app (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, KeySet]]
    """

    kwargs = _get_kwargs(
        app=app,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    app: str,
    *,
    client: Union[AuthenticatedClient, Client],
) -> Optional[Union[ErrorBody, KeySet]]:
    r"""The app's Ed25519 public keys (JWKS), for receivers

     No token: receivers fetch it to verify `v1a` signatures. Every live Ed25519 key of the app's
    endpoints (two for an endpoint in a rotation's overlap), as RFC 8037 JWKs with opaque key ids.
    `Cache-Control: public, max-age=300`; fetch again when a signature names an unknown `kid`. The app
    by its id only; an id that names no app answers `{\"keys\": []}`, as an app without Ed25519 keys
    does.

    Args:
        app (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, KeySet]
    """

    return (
        await asyncio_detailed(
            app=app,
            client=client,
        )
    ).parsed
