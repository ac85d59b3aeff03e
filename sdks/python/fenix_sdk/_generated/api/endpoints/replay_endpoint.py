from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.endpoint_replay import EndpointReplay
from ...models.endpoint_replay_request import EndpointReplayRequest
from ...models.error_body import ErrorBody
from ...types import Response


def _get_kwargs(
    app: str,
    ep: str,
    *,
    body: Union["EndpointReplayRequest", None],
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": f"/v1/apps/{app}/endpoints/{ep}/replay",
    }

    _kwargs["json"]: Union[None, dict[str, Any]]
    if isinstance(body, EndpointReplayRequest):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = body

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[EndpointReplay, ErrorBody]]:
    if response.status_code == 200:
        response_200 = EndpointReplay.from_dict(response.json())

        return response_200

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

    if response.status_code == 422:
        response_422 = ErrorBody.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = ErrorBody.from_dict(response.json())

        return response_429

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
) -> Response[Union[EndpointReplay, ErrorBody]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    app: str,
    ep: str,
    *,
    client: AuthenticatedClient,
    body: Union["EndpointReplayRequest", None],
) -> Response[Union[EndpointReplay, ErrorBody]]:
    """Send an endpoint's failed or skipped deliveries again

     Re-queues deliveries in `statuses` (default both `failed` and `skipped`) created between `since` and
    `until` (RFC 3339), with their original event id and envelope. Endpoint replays are limited per
    endpoint and per app (docs/security.md): over the limit, 429 with `Retry-After`.

    Args:
        app (str):
        ep (str):
        body (Union['EndpointReplayRequest', None]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[EndpointReplay, ErrorBody]]
    """

    kwargs = _get_kwargs(
        app=app,
        ep=ep,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    app: str,
    ep: str,
    *,
    client: AuthenticatedClient,
    body: Union["EndpointReplayRequest", None],
) -> Optional[Union[EndpointReplay, ErrorBody]]:
    """Send an endpoint's failed or skipped deliveries again

     Re-queues deliveries in `statuses` (default both `failed` and `skipped`) created between `since` and
    `until` (RFC 3339), with their original event id and envelope. Endpoint replays are limited per
    endpoint and per app (docs/security.md): over the limit, 429 with `Retry-After`.

    Args:
        app (str):
        ep (str):
        body (Union['EndpointReplayRequest', None]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[EndpointReplay, ErrorBody]
    """

    return sync_detailed(
        app=app,
        ep=ep,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    app: str,
    ep: str,
    *,
    client: AuthenticatedClient,
    body: Union["EndpointReplayRequest", None],
) -> Response[Union[EndpointReplay, ErrorBody]]:
    """Send an endpoint's failed or skipped deliveries again

     Re-queues deliveries in `statuses` (default both `failed` and `skipped`) created between `since` and
    `until` (RFC 3339), with their original event id and envelope. Endpoint replays are limited per
    endpoint and per app (docs/security.md): over the limit, 429 with `Retry-After`.

    Args:
        app (str):
        ep (str):
        body (Union['EndpointReplayRequest', None]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[EndpointReplay, ErrorBody]]
    """

    kwargs = _get_kwargs(
        app=app,
        ep=ep,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    app: str,
    ep: str,
    *,
    client: AuthenticatedClient,
    body: Union["EndpointReplayRequest", None],
) -> Optional[Union[EndpointReplay, ErrorBody]]:
    """Send an endpoint's failed or skipped deliveries again

     Re-queues deliveries in `statuses` (default both `failed` and `skipped`) created between `since` and
    `until` (RFC 3339), with their original event id and envelope. Endpoint replays are limited per
    endpoint and per app (docs/security.md): over the limit, 429 with `Retry-After`.

    Args:
        app (str):
        ep (str):
        body (Union['EndpointReplayRequest', None]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[EndpointReplay, ErrorBody]
    """

    return (
        await asyncio_detailed(
            app=app,
            ep=ep,
            client=client,
            body=body,
        )
    ).parsed
