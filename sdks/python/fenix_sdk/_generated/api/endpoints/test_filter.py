from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.filter_test import FilterTest
from ...models.filter_test_result import FilterTestResult
from ...types import Response


def _get_kwargs(
    app: str,
    *,
    body: FilterTest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": f"/v1/apps/{app}/filters/test",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, FilterTestResult]]:
    if response.status_code == 200:
        response_200 = FilterTestResult.from_dict(response.json())

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
) -> Response[Union[ErrorBody, FilterTestResult]]:
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
    body: FilterTest,
) -> Response[Union[ErrorBody, FilterTestResult]]:
    """Evaluate a content filter on sample events

     Checks `filter` as saving it on an endpoint would (a refusal is `invalid_filter` with the line and
    column), then evaluates it on each event as the fan-out does: `matched`, or `matched: false` with
    the evaluation's `error` (a field the event lacks, a type mismatch, the budget spent). Stores
    nothing.

    Args:
        app (str):
        body (FilterTest): A filter to try on sample events.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, FilterTestResult]]
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
    body: FilterTest,
) -> Optional[Union[ErrorBody, FilterTestResult]]:
    """Evaluate a content filter on sample events

     Checks `filter` as saving it on an endpoint would (a refusal is `invalid_filter` with the line and
    column), then evaluates it on each event as the fan-out does: `matched`, or `matched: false` with
    the evaluation's `error` (a field the event lacks, a type mismatch, the budget spent). Stores
    nothing.

    Args:
        app (str):
        body (FilterTest): A filter to try on sample events.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, FilterTestResult]
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
    body: FilterTest,
) -> Response[Union[ErrorBody, FilterTestResult]]:
    """Evaluate a content filter on sample events

     Checks `filter` as saving it on an endpoint would (a refusal is `invalid_filter` with the line and
    column), then evaluates it on each event as the fan-out does: `matched`, or `matched: false` with
    the evaluation's `error` (a field the event lacks, a type mismatch, the budget spent). Stores
    nothing.

    Args:
        app (str):
        body (FilterTest): A filter to try on sample events.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, FilterTestResult]]
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
    body: FilterTest,
) -> Optional[Union[ErrorBody, FilterTestResult]]:
    """Evaluate a content filter on sample events

     Checks `filter` as saving it on an endpoint would (a refusal is `invalid_filter` with the line and
    column), then evaluates it on each event as the fan-out does: `matched`, or `matched: false` with
    the evaluation's `error` (a field the event lacks, a type mismatch, the budget spent). Stores
    nothing.

    Args:
        app (str):
        body (FilterTest): A filter to try on sample events.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, FilterTestResult]
    """

    return (
        await asyncio_detailed(
            app=app,
            client=client,
            body=body,
        )
    ).parsed
