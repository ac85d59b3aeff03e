from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.event_batch import EventBatch
from ...models.event_batch_result import EventBatchResult
from ...types import UNSET, Response, Unset


def _get_kwargs(
    app: str,
    *,
    body: EventBatch,
    traceparent: Union[None, Unset, str] = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(traceparent, Unset):
        headers["traceparent"] = traceparent

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": f"/v1/apps/{app}/events/batch",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, EventBatchResult]]:
    if response.status_code == 202:
        response_202 = EventBatchResult.from_dict(response.json())

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
) -> Response[Union[ErrorBody, EventBatchResult]]:
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
    body: EventBatch,
    traceparent: Union[None, Unset, str] = UNSET,
) -> Response[Union[ErrorBody, EventBatchResult]]:
    """Send many events at once

     Stores every event of the batch with its deliveries in one transaction, or none of them. Each event
    keeps its own idempotency key (its `id`): the answer lists, in the request's order, each event's id
    and whether this request created it or it repeats a key seen before. A bad event refuses the whole
    batch, its index in the error message (`events[3]: …`). At most `FENIX_MAX_BATCH_EVENTS` events
    (default 1000) and `FENIX_MAX_BATCH_BYTES` of body (default 16 MiB).

    Args:
        app (str):
        traceparent (Union[None, Unset, str]):
        body (EventBatch): Many events in one request.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, EventBatchResult]]
    """

    kwargs = _get_kwargs(
        app=app,
        body=body,
        traceparent=traceparent,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    app: str,
    *,
    client: AuthenticatedClient,
    body: EventBatch,
    traceparent: Union[None, Unset, str] = UNSET,
) -> Optional[Union[ErrorBody, EventBatchResult]]:
    """Send many events at once

     Stores every event of the batch with its deliveries in one transaction, or none of them. Each event
    keeps its own idempotency key (its `id`): the answer lists, in the request's order, each event's id
    and whether this request created it or it repeats a key seen before. A bad event refuses the whole
    batch, its index in the error message (`events[3]: …`). At most `FENIX_MAX_BATCH_EVENTS` events
    (default 1000) and `FENIX_MAX_BATCH_BYTES` of body (default 16 MiB).

    Args:
        app (str):
        traceparent (Union[None, Unset, str]):
        body (EventBatch): Many events in one request.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, EventBatchResult]
    """

    return sync_detailed(
        app=app,
        client=client,
        body=body,
        traceparent=traceparent,
    ).parsed


async def asyncio_detailed(
    app: str,
    *,
    client: AuthenticatedClient,
    body: EventBatch,
    traceparent: Union[None, Unset, str] = UNSET,
) -> Response[Union[ErrorBody, EventBatchResult]]:
    """Send many events at once

     Stores every event of the batch with its deliveries in one transaction, or none of them. Each event
    keeps its own idempotency key (its `id`): the answer lists, in the request's order, each event's id
    and whether this request created it or it repeats a key seen before. A bad event refuses the whole
    batch, its index in the error message (`events[3]: …`). At most `FENIX_MAX_BATCH_EVENTS` events
    (default 1000) and `FENIX_MAX_BATCH_BYTES` of body (default 16 MiB).

    Args:
        app (str):
        traceparent (Union[None, Unset, str]):
        body (EventBatch): Many events in one request.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, EventBatchResult]]
    """

    kwargs = _get_kwargs(
        app=app,
        body=body,
        traceparent=traceparent,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    app: str,
    *,
    client: AuthenticatedClient,
    body: EventBatch,
    traceparent: Union[None, Unset, str] = UNSET,
) -> Optional[Union[ErrorBody, EventBatchResult]]:
    """Send many events at once

     Stores every event of the batch with its deliveries in one transaction, or none of them. Each event
    keeps its own idempotency key (its `id`): the answer lists, in the request's order, each event's id
    and whether this request created it or it repeats a key seen before. A bad event refuses the whole
    batch, its index in the error message (`events[3]: …`). At most `FENIX_MAX_BATCH_EVENTS` events
    (default 1000) and `FENIX_MAX_BATCH_BYTES` of body (default 16 MiB).

    Args:
        app (str):
        traceparent (Union[None, Unset, str]):
        body (EventBatch): Many events in one request.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, EventBatchResult]
    """

    return (
        await asyncio_detailed(
            app=app,
            client=client,
            body=body,
            traceparent=traceparent,
        )
    ).parsed
