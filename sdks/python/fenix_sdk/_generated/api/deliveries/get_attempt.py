from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.attempt_with_delivery import AttemptWithDelivery
from ...models.error_body import ErrorBody
from ...types import Response


def _get_kwargs(
    app: str,
    att: str,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": f"/v1/apps/{app}/attempts/{att}",
    }

    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[AttemptWithDelivery, ErrorBody]]:
    if response.status_code == 200:
        response_200 = AttemptWithDelivery.from_dict(response.json())

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
) -> Response[Union[AttemptWithDelivery, ErrorBody]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    app: str,
    att: str,
    *,
    client: AuthenticatedClient,
) -> Response[Union[AttemptWithDelivery, ErrorBody]]:
    """Read an attempt and its delivery

     `att` is the `X-Fenix-Delivery-Id` a receiver logged (each attempt sends its own); the answer is
    that attempt with its `delivery`, whose `event_id` is the `X-Fenix-Event-Id` it got.

    Args:
        app (str):
        att (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[AttemptWithDelivery, ErrorBody]]
    """

    kwargs = _get_kwargs(
        app=app,
        att=att,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    app: str,
    att: str,
    *,
    client: AuthenticatedClient,
) -> Optional[Union[AttemptWithDelivery, ErrorBody]]:
    """Read an attempt and its delivery

     `att` is the `X-Fenix-Delivery-Id` a receiver logged (each attempt sends its own); the answer is
    that attempt with its `delivery`, whose `event_id` is the `X-Fenix-Event-Id` it got.

    Args:
        app (str):
        att (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[AttemptWithDelivery, ErrorBody]
    """

    return sync_detailed(
        app=app,
        att=att,
        client=client,
    ).parsed


async def asyncio_detailed(
    app: str,
    att: str,
    *,
    client: AuthenticatedClient,
) -> Response[Union[AttemptWithDelivery, ErrorBody]]:
    """Read an attempt and its delivery

     `att` is the `X-Fenix-Delivery-Id` a receiver logged (each attempt sends its own); the answer is
    that attempt with its `delivery`, whose `event_id` is the `X-Fenix-Event-Id` it got.

    Args:
        app (str):
        att (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[AttemptWithDelivery, ErrorBody]]
    """

    kwargs = _get_kwargs(
        app=app,
        att=att,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    app: str,
    att: str,
    *,
    client: AuthenticatedClient,
) -> Optional[Union[AttemptWithDelivery, ErrorBody]]:
    """Read an attempt and its delivery

     `att` is the `X-Fenix-Delivery-Id` a receiver logged (each attempt sends its own); the answer is
    that attempt with its `delivery`, whose `event_id` is the `X-Fenix-Event-Id` it got.

    Args:
        app (str):
        att (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[AttemptWithDelivery, ErrorBody]
    """

    return (
        await asyncio_detailed(
            app=app,
            att=att,
            client=client,
        )
    ).parsed
