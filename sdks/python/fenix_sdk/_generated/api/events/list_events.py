import datetime
from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.sized_page_event import SizedPageEvent
from ...types import UNSET, Response, Unset


def _get_kwargs(
    app: str,
    *,
    limit: Union[Unset, int] = UNSET,
    cursor: Union[Unset, str] = UNSET,
    event_type: Union[Unset, str] = UNSET,
    type_: Union[Unset, str] = UNSET,
    since: Union[Unset, datetime.datetime] = UNSET,
    until: Union[Unset, datetime.datetime] = UNSET,
    include: Union[Unset, str] = UNSET,
    channel: Union[Unset, str] = UNSET,
    tag: Union[Unset, str] = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor

    params["event_type"] = event_type

    params["type"] = type_

    json_since: Union[Unset, str] = UNSET
    if not isinstance(since, Unset):
        json_since = since.isoformat()
    params["since"] = json_since

    json_until: Union[Unset, str] = UNSET
    if not isinstance(until, Unset):
        json_until = until.isoformat()
    params["until"] = json_until

    params["include"] = include

    params["channel"] = channel

    params["tag"] = tag

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": f"/v1/apps/{app}/events",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, SizedPageEvent]]:
    if response.status_code == 200:
        response_200 = SizedPageEvent.from_dict(response.json())

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
) -> Response[Union[ErrorBody, SizedPageEvent]]:
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
    limit: Union[Unset, int] = UNSET,
    cursor: Union[Unset, str] = UNSET,
    event_type: Union[Unset, str] = UNSET,
    type_: Union[Unset, str] = UNSET,
    since: Union[Unset, datetime.datetime] = UNSET,
    until: Union[Unset, datetime.datetime] = UNSET,
    include: Union[Unset, str] = UNSET,
    channel: Union[Unset, str] = UNSET,
    tag: Union[Unset, str] = UNSET,
) -> Response[Union[ErrorBody, SizedPageEvent]]:
    """List an app's events

     Newest first, `limit` (1-250, default 50) per page. Filter by `event_type` (or `type`), creation
    time (`since`, `until`: RFC 3339), `channel` and `tag` (events carrying that name);
    `include=payload` adds each event's `data`. A page also stops before `FENIX_MAX_PAGE_BYTES` (default
    4 MiB) of items: then `cut_by_size` is `true` and `next_cursor` continues after its last item; a
    page holds at least one item, however large. Answers with payloads share the instance's
    `FENIX_ANSWER_BYTES`: when it stays full for 5 s, `503 overloaded` with `Retry-After`.

    Args:
        app (str):
        limit (Union[Unset, int]):
        cursor (Union[Unset, str]):
        event_type (Union[Unset, str]):
        type_ (Union[Unset, str]):
        since (Union[Unset, datetime.datetime]):
        until (Union[Unset, datetime.datetime]):
        include (Union[Unset, str]):
        channel (Union[Unset, str]):
        tag (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, SizedPageEvent]]
    """

    kwargs = _get_kwargs(
        app=app,
        limit=limit,
        cursor=cursor,
        event_type=event_type,
        type_=type_,
        since=since,
        until=until,
        include=include,
        channel=channel,
        tag=tag,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    app: str,
    *,
    client: AuthenticatedClient,
    limit: Union[Unset, int] = UNSET,
    cursor: Union[Unset, str] = UNSET,
    event_type: Union[Unset, str] = UNSET,
    type_: Union[Unset, str] = UNSET,
    since: Union[Unset, datetime.datetime] = UNSET,
    until: Union[Unset, datetime.datetime] = UNSET,
    include: Union[Unset, str] = UNSET,
    channel: Union[Unset, str] = UNSET,
    tag: Union[Unset, str] = UNSET,
) -> Optional[Union[ErrorBody, SizedPageEvent]]:
    """List an app's events

     Newest first, `limit` (1-250, default 50) per page. Filter by `event_type` (or `type`), creation
    time (`since`, `until`: RFC 3339), `channel` and `tag` (events carrying that name);
    `include=payload` adds each event's `data`. A page also stops before `FENIX_MAX_PAGE_BYTES` (default
    4 MiB) of items: then `cut_by_size` is `true` and `next_cursor` continues after its last item; a
    page holds at least one item, however large. Answers with payloads share the instance's
    `FENIX_ANSWER_BYTES`: when it stays full for 5 s, `503 overloaded` with `Retry-After`.

    Args:
        app (str):
        limit (Union[Unset, int]):
        cursor (Union[Unset, str]):
        event_type (Union[Unset, str]):
        type_ (Union[Unset, str]):
        since (Union[Unset, datetime.datetime]):
        until (Union[Unset, datetime.datetime]):
        include (Union[Unset, str]):
        channel (Union[Unset, str]):
        tag (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, SizedPageEvent]
    """

    return sync_detailed(
        app=app,
        client=client,
        limit=limit,
        cursor=cursor,
        event_type=event_type,
        type_=type_,
        since=since,
        until=until,
        include=include,
        channel=channel,
        tag=tag,
    ).parsed


async def asyncio_detailed(
    app: str,
    *,
    client: AuthenticatedClient,
    limit: Union[Unset, int] = UNSET,
    cursor: Union[Unset, str] = UNSET,
    event_type: Union[Unset, str] = UNSET,
    type_: Union[Unset, str] = UNSET,
    since: Union[Unset, datetime.datetime] = UNSET,
    until: Union[Unset, datetime.datetime] = UNSET,
    include: Union[Unset, str] = UNSET,
    channel: Union[Unset, str] = UNSET,
    tag: Union[Unset, str] = UNSET,
) -> Response[Union[ErrorBody, SizedPageEvent]]:
    """List an app's events

     Newest first, `limit` (1-250, default 50) per page. Filter by `event_type` (or `type`), creation
    time (`since`, `until`: RFC 3339), `channel` and `tag` (events carrying that name);
    `include=payload` adds each event's `data`. A page also stops before `FENIX_MAX_PAGE_BYTES` (default
    4 MiB) of items: then `cut_by_size` is `true` and `next_cursor` continues after its last item; a
    page holds at least one item, however large. Answers with payloads share the instance's
    `FENIX_ANSWER_BYTES`: when it stays full for 5 s, `503 overloaded` with `Retry-After`.

    Args:
        app (str):
        limit (Union[Unset, int]):
        cursor (Union[Unset, str]):
        event_type (Union[Unset, str]):
        type_ (Union[Unset, str]):
        since (Union[Unset, datetime.datetime]):
        until (Union[Unset, datetime.datetime]):
        include (Union[Unset, str]):
        channel (Union[Unset, str]):
        tag (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, SizedPageEvent]]
    """

    kwargs = _get_kwargs(
        app=app,
        limit=limit,
        cursor=cursor,
        event_type=event_type,
        type_=type_,
        since=since,
        until=until,
        include=include,
        channel=channel,
        tag=tag,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    app: str,
    *,
    client: AuthenticatedClient,
    limit: Union[Unset, int] = UNSET,
    cursor: Union[Unset, str] = UNSET,
    event_type: Union[Unset, str] = UNSET,
    type_: Union[Unset, str] = UNSET,
    since: Union[Unset, datetime.datetime] = UNSET,
    until: Union[Unset, datetime.datetime] = UNSET,
    include: Union[Unset, str] = UNSET,
    channel: Union[Unset, str] = UNSET,
    tag: Union[Unset, str] = UNSET,
) -> Optional[Union[ErrorBody, SizedPageEvent]]:
    """List an app's events

     Newest first, `limit` (1-250, default 50) per page. Filter by `event_type` (or `type`), creation
    time (`since`, `until`: RFC 3339), `channel` and `tag` (events carrying that name);
    `include=payload` adds each event's `data`. A page also stops before `FENIX_MAX_PAGE_BYTES` (default
    4 MiB) of items: then `cut_by_size` is `true` and `next_cursor` continues after its last item; a
    page holds at least one item, however large. Answers with payloads share the instance's
    `FENIX_ANSWER_BYTES`: when it stays full for 5 s, `503 overloaded` with `Retry-After`.

    Args:
        app (str):
        limit (Union[Unset, int]):
        cursor (Union[Unset, str]):
        event_type (Union[Unset, str]):
        type_ (Union[Unset, str]):
        since (Union[Unset, datetime.datetime]):
        until (Union[Unset, datetime.datetime]):
        include (Union[Unset, str]):
        channel (Union[Unset, str]):
        tag (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, SizedPageEvent]
    """

    return (
        await asyncio_detailed(
            app=app,
            client=client,
            limit=limit,
            cursor=cursor,
            event_type=event_type,
            type_=type_,
            since=since,
            until=until,
            include=include,
            channel=channel,
            tag=tag,
        )
    ).parsed
