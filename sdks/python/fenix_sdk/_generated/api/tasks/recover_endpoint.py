from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.recover_request import RecoverRequest
from ...models.task import Task
from ...types import Response


def _get_kwargs(
    app: str,
    ep: str,
    *,
    body: RecoverRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": f"/v1/apps/{app}/endpoints/{ep}/recover",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, Task]]:
    if response.status_code == 202:
        response_202 = Task.from_dict(response.json())

        return response_202

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
) -> Response[Union[ErrorBody, Task]]:
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
    body: RecoverRequest,
) -> Response[Union[ErrorBody, Task]]:
    r"""Replay what an endpoint did not receive during an outage, as one task

     A `replay` task of the endpoint's `failed` and `skipped` deliveries created between `since` and
    `until`: the same as `POST /v1/apps/{app}/tasks` with `{\"kind\": \"replay\", \"filter\":
    {\"endpoint_id\", \"since\", \"until\"}}`. Deliveries still retrying are not selected: they are sent
    anyway.

    Args:
        app (str):
        ep (str):
        body (RecoverRequest): The outage window of an endpoint's recovery.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, Task]]
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
    body: RecoverRequest,
) -> Optional[Union[ErrorBody, Task]]:
    r"""Replay what an endpoint did not receive during an outage, as one task

     A `replay` task of the endpoint's `failed` and `skipped` deliveries created between `since` and
    `until`: the same as `POST /v1/apps/{app}/tasks` with `{\"kind\": \"replay\", \"filter\":
    {\"endpoint_id\", \"since\", \"until\"}}`. Deliveries still retrying are not selected: they are sent
    anyway.

    Args:
        app (str):
        ep (str):
        body (RecoverRequest): The outage window of an endpoint's recovery.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, Task]
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
    body: RecoverRequest,
) -> Response[Union[ErrorBody, Task]]:
    r"""Replay what an endpoint did not receive during an outage, as one task

     A `replay` task of the endpoint's `failed` and `skipped` deliveries created between `since` and
    `until`: the same as `POST /v1/apps/{app}/tasks` with `{\"kind\": \"replay\", \"filter\":
    {\"endpoint_id\", \"since\", \"until\"}}`. Deliveries still retrying are not selected: they are sent
    anyway.

    Args:
        app (str):
        ep (str):
        body (RecoverRequest): The outage window of an endpoint's recovery.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, Task]]
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
    body: RecoverRequest,
) -> Optional[Union[ErrorBody, Task]]:
    r"""Replay what an endpoint did not receive during an outage, as one task

     A `replay` task of the endpoint's `failed` and `skipped` deliveries created between `since` and
    `until`: the same as `POST /v1/apps/{app}/tasks` with `{\"kind\": \"replay\", \"filter\":
    {\"endpoint_id\", \"since\", \"until\"}}`. Deliveries still retrying are not selected: they are sent
    anyway.

    Args:
        app (str):
        ep (str):
        body (RecoverRequest): The outage window of an endpoint's recovery.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, Task]
    """

    return (
        await asyncio_detailed(
            app=app,
            ep=ep,
            client=client,
            body=body,
        )
    ).parsed
