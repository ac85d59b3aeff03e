from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.endpoint_stats import EndpointStats
from ...models.error_body import ErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    app: str,
    ep: str,
    *,
    window: Union[Unset, str] = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["window"] = window

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": f"/v1/apps/{app}/endpoints/{ep}/stats",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[EndpointStats, ErrorBody]]:
    if response.status_code == 200:
        response_200 = EndpointStats.from_dict(response.json())

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
) -> Response[Union[EndpointStats, ErrorBody]]:
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
    window: Union[Unset, str] = UNSET,
) -> Response[Union[EndpointStats, ErrorBody]]:
    """An endpoint's health over a window

    Args:
        app (str):
        ep (str):
        window (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[EndpointStats, ErrorBody]]
    """

    kwargs = _get_kwargs(
        app=app,
        ep=ep,
        window=window,
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
    window: Union[Unset, str] = UNSET,
) -> Optional[Union[EndpointStats, ErrorBody]]:
    """An endpoint's health over a window

    Args:
        app (str):
        ep (str):
        window (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[EndpointStats, ErrorBody]
    """

    return sync_detailed(
        app=app,
        ep=ep,
        client=client,
        window=window,
    ).parsed


async def asyncio_detailed(
    app: str,
    ep: str,
    *,
    client: AuthenticatedClient,
    window: Union[Unset, str] = UNSET,
) -> Response[Union[EndpointStats, ErrorBody]]:
    """An endpoint's health over a window

    Args:
        app (str):
        ep (str):
        window (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[EndpointStats, ErrorBody]]
    """

    kwargs = _get_kwargs(
        app=app,
        ep=ep,
        window=window,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    app: str,
    ep: str,
    *,
    client: AuthenticatedClient,
    window: Union[Unset, str] = UNSET,
) -> Optional[Union[EndpointStats, ErrorBody]]:
    """An endpoint's health over a window

    Args:
        app (str):
        ep (str):
        window (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[EndpointStats, ErrorBody]
    """

    return (
        await asyncio_detailed(
            app=app,
            ep=ep,
            client=client,
            window=window,
        )
    ).parsed
