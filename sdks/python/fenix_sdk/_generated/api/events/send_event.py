from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.event import Event
from ...models.new_event import NewEvent
from ...types import UNSET, Response, Unset


def _get_kwargs(
    app: str,
    *,
    body: NewEvent,
    idempotency_key: Union[None, Unset, str] = UNSET,
    traceparent: Union[None, Unset, str] = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    if not isinstance(traceparent, Unset):
        headers["traceparent"] = traceparent

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": f"/v1/apps/{app}/events",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, Event]]:
    if response.status_code == 200:
        response_200 = Event.from_dict(response.json())

        return response_200

    if response.status_code == 202:
        response_202 = Event.from_dict(response.json())

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
) -> Response[Union[ErrorBody, Event]]:
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
    body: NewEvent,
    idempotency_key: Union[None, Unset, str] = UNSET,
    traceparent: Union[None, Unset, str] = UNSET,
) -> Response[Union[ErrorBody, Event]]:
    """Send an event

     Stores the event and one delivery per subscribed endpoint in one transaction. With `deliver_at` or
    `delay`, the deliveries are stored now and sent at that time (they show `scheduled` until then;
    `POST …/events/{evt}/cancel` cancels them). With an idempotency key (the `Idempotency-Key` header,
    else the body's `id`), sending the same key again answers the original event with 200 and
    `idempotent-replayed: true` and stores nothing.

    Args:
        app (str):
        idempotency_key (Union[None, Unset, str]):
        traceparent (Union[None, Unset, str]):
        body (NewEvent):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, Event]]
    """

    kwargs = _get_kwargs(
        app=app,
        body=body,
        idempotency_key=idempotency_key,
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
    body: NewEvent,
    idempotency_key: Union[None, Unset, str] = UNSET,
    traceparent: Union[None, Unset, str] = UNSET,
) -> Optional[Union[ErrorBody, Event]]:
    """Send an event

     Stores the event and one delivery per subscribed endpoint in one transaction. With `deliver_at` or
    `delay`, the deliveries are stored now and sent at that time (they show `scheduled` until then;
    `POST …/events/{evt}/cancel` cancels them). With an idempotency key (the `Idempotency-Key` header,
    else the body's `id`), sending the same key again answers the original event with 200 and
    `idempotent-replayed: true` and stores nothing.

    Args:
        app (str):
        idempotency_key (Union[None, Unset, str]):
        traceparent (Union[None, Unset, str]):
        body (NewEvent):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, Event]
    """

    return sync_detailed(
        app=app,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
        traceparent=traceparent,
    ).parsed


async def asyncio_detailed(
    app: str,
    *,
    client: AuthenticatedClient,
    body: NewEvent,
    idempotency_key: Union[None, Unset, str] = UNSET,
    traceparent: Union[None, Unset, str] = UNSET,
) -> Response[Union[ErrorBody, Event]]:
    """Send an event

     Stores the event and one delivery per subscribed endpoint in one transaction. With `deliver_at` or
    `delay`, the deliveries are stored now and sent at that time (they show `scheduled` until then;
    `POST …/events/{evt}/cancel` cancels them). With an idempotency key (the `Idempotency-Key` header,
    else the body's `id`), sending the same key again answers the original event with 200 and
    `idempotent-replayed: true` and stores nothing.

    Args:
        app (str):
        idempotency_key (Union[None, Unset, str]):
        traceparent (Union[None, Unset, str]):
        body (NewEvent):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, Event]]
    """

    kwargs = _get_kwargs(
        app=app,
        body=body,
        idempotency_key=idempotency_key,
        traceparent=traceparent,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    app: str,
    *,
    client: AuthenticatedClient,
    body: NewEvent,
    idempotency_key: Union[None, Unset, str] = UNSET,
    traceparent: Union[None, Unset, str] = UNSET,
) -> Optional[Union[ErrorBody, Event]]:
    """Send an event

     Stores the event and one delivery per subscribed endpoint in one transaction. With `deliver_at` or
    `delay`, the deliveries are stored now and sent at that time (they show `scheduled` until then;
    `POST …/events/{evt}/cancel` cancels them). With an idempotency key (the `Idempotency-Key` header,
    else the body's `id`), sending the same key again answers the original event with 200 and
    `idempotent-replayed: true` and stores nothing.

    Args:
        app (str):
        idempotency_key (Union[None, Unset, str]):
        traceparent (Union[None, Unset, str]):
        body (NewEvent):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, Event]
    """

    return (
        await asyncio_detailed(
            app=app,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
            traceparent=traceparent,
        )
    ).parsed
