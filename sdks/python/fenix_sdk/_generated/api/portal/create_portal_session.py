from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.create_portal_session import CreatePortalSession
from ...models.error_body import ErrorBody
from ...models.portal_link import PortalLink
from ...types import Response


def _get_kwargs(
    app: str,
    *,
    body: CreatePortalSession,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": f"/v1/apps/{app}/portal-sessions",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, PortalLink]]:
    if response.status_code == 201:
        response_201 = PortalLink.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorBody.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

    if response.status_code == 413:
        response_413 = ErrorBody.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = ErrorBody.from_dict(response.json())

        return response_415

    if response.status_code == 422:
        response_422 = ErrorBody.from_dict(response.json())

        return response_422

    if response.status_code == 500:
        response_500 = ErrorBody.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Response[Union[ErrorBody, PortalLink]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    app: str,
    *,
    client: AuthenticatedClient,
    body: CreatePortalSession,
) -> Response[Union[ErrorBody, PortalLink]]:
    """Mint a portal link: the console for one app, for its customer

     The answer's `url` opens the web console for this app only, once: its fragment is a single-use
    secret exchanged for a session cookie on first load. The link and the session made from it expire
    after `expires_in` (a duration such as `1h` or `30d`, or whole seconds; default 1h, at most
    `FENIX_PORTAL_MAX_TTL`). The URL is shown only in this answer.

    Args:
        app (str):
        body (CreatePortalSession):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, PortalLink]]
    """

    kwargs = _get_kwargs(
        app=app,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    app: str,
    *,
    client: AuthenticatedClient,
    body: CreatePortalSession,
) -> Optional[Union[ErrorBody, PortalLink]]:
    """Mint a portal link: the console for one app, for its customer

     The answer's `url` opens the web console for this app only, once: its fragment is a single-use
    secret exchanged for a session cookie on first load. The link and the session made from it expire
    after `expires_in` (a duration such as `1h` or `30d`, or whole seconds; default 1h, at most
    `FENIX_PORTAL_MAX_TTL`). The URL is shown only in this answer.

    Args:
        app (str):
        body (CreatePortalSession):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, PortalLink]
    """

    return sync_detailed(
        app=app,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    app: str,
    *,
    client: AuthenticatedClient,
    body: CreatePortalSession,
) -> Response[Union[ErrorBody, PortalLink]]:
    """Mint a portal link: the console for one app, for its customer

     The answer's `url` opens the web console for this app only, once: its fragment is a single-use
    secret exchanged for a session cookie on first load. The link and the session made from it expire
    after `expires_in` (a duration such as `1h` or `30d`, or whole seconds; default 1h, at most
    `FENIX_PORTAL_MAX_TTL`). The URL is shown only in this answer.

    Args:
        app (str):
        body (CreatePortalSession):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, PortalLink]]
    """

    kwargs = _get_kwargs(
        app=app,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    app: str,
    *,
    client: AuthenticatedClient,
    body: CreatePortalSession,
) -> Optional[Union[ErrorBody, PortalLink]]:
    """Mint a portal link: the console for one app, for its customer

     The answer's `url` opens the web console for this app only, once: its fragment is a single-use
    secret exchanged for a session cookie on first load. The link and the session made from it expire
    after `expires_in` (a duration such as `1h` or `30d`, or whole seconds; default 1h, at most
    `FENIX_PORTAL_MAX_TTL`). The URL is shown only in this answer.

    Args:
        app (str):
        body (CreatePortalSession):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, PortalLink]
    """

    return (
        await asyncio_detailed(
            app=app,
            client=client,
            body=body,
        )
    ).parsed
