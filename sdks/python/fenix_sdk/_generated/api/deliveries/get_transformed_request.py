from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.transformed_request import TransformedRequest
from ...types import Response


def _get_kwargs(
    app: str,
    dlv: str,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": f"/v1/apps/{app}/deliveries/{dlv}/request",
    }

    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, TransformedRequest]]:
    if response.status_code == 200:
        response_200 = TransformedRequest.from_dict(response.json())

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
) -> Response[Union[ErrorBody, TransformedRequest]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    app: str,
    dlv: str,
    *,
    client: AuthenticatedClient,
) -> Response[Union[ErrorBody, TransformedRequest]]:
    """Read the request a transformation made for a delivery

     For a delivery to an endpoint with a `transformation`: the request stored before its first request
    was sent, which every attempt sends (signed anew). It carries the payload in its new shape, and is
    purged with the event's payload (`FENIX_PAYLOAD_RETENTION`).

    Args:
        app (str):
        dlv (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, TransformedRequest]]
    """

    kwargs = _get_kwargs(
        app=app,
        dlv=dlv,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    app: str,
    dlv: str,
    *,
    client: AuthenticatedClient,
) -> Optional[Union[ErrorBody, TransformedRequest]]:
    """Read the request a transformation made for a delivery

     For a delivery to an endpoint with a `transformation`: the request stored before its first request
    was sent, which every attempt sends (signed anew). It carries the payload in its new shape, and is
    purged with the event's payload (`FENIX_PAYLOAD_RETENTION`).

    Args:
        app (str):
        dlv (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, TransformedRequest]
    """

    return sync_detailed(
        app=app,
        dlv=dlv,
        client=client,
    ).parsed


async def asyncio_detailed(
    app: str,
    dlv: str,
    *,
    client: AuthenticatedClient,
) -> Response[Union[ErrorBody, TransformedRequest]]:
    """Read the request a transformation made for a delivery

     For a delivery to an endpoint with a `transformation`: the request stored before its first request
    was sent, which every attempt sends (signed anew). It carries the payload in its new shape, and is
    purged with the event's payload (`FENIX_PAYLOAD_RETENTION`).

    Args:
        app (str):
        dlv (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, TransformedRequest]]
    """

    kwargs = _get_kwargs(
        app=app,
        dlv=dlv,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    app: str,
    dlv: str,
    *,
    client: AuthenticatedClient,
) -> Optional[Union[ErrorBody, TransformedRequest]]:
    """Read the request a transformation made for a delivery

     For a delivery to an endpoint with a `transformation`: the request stored before its first request
    was sent, which every attempt sends (signed anew). It carries the payload in its new shape, and is
    purged with the event's payload (`FENIX_PAYLOAD_RETENTION`).

    Args:
        app (str):
        dlv (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, TransformedRequest]
    """

    return (
        await asyncio_detailed(
            app=app,
            dlv=dlv,
            client=client,
        )
    ).parsed
