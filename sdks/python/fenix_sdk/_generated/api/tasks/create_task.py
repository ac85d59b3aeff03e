from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.task import Task
from ...models.task_dry_run import TaskDryRun
from ...models.task_request import TaskRequest
from ...types import Response


def _get_kwargs(
    app: str,
    *,
    body: TaskRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": f"/v1/apps/{app}/tasks",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, Task, TaskDryRun]]:
    if response.status_code == 200:
        response_200 = TaskDryRun.from_dict(response.json())

        return response_200

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
) -> Response[Union[ErrorBody, Task, TaskDryRun]]:
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
    body: TaskRequest,
) -> Response[Union[ErrorBody, Task, TaskDryRun]]:
    """Replay, cancel or skip many deliveries, in the background (or count them: dry run)

     Selects the app's deliveries that match `filter` now, and acts on them in the background, in
    delivery id order, at most `FENIX_TASK_RATE` per second. `replay` re-queues `failed` and `skipped`
    deliveries (whose payload is kept) with their original event id and a fresh attempt budget; `cancel`
    and `skip` (the same) make deliveries not sent yet (`scheduled`, `pending`, or `in_flight` before
    their request starts) `skipped` with `skip_reason: cancelled`. A delivery whose status changed
    between the selection and its batch is left as it is and counted in `failed`. With `dry_run: true`
    nothing is created: the answer is the number of deliveries a task created instead would select.

    Args:
        app (str):
        body (TaskRequest): A task to create, or to count (`dry_run`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, Task, TaskDryRun]]
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
    body: TaskRequest,
) -> Optional[Union[ErrorBody, Task, TaskDryRun]]:
    """Replay, cancel or skip many deliveries, in the background (or count them: dry run)

     Selects the app's deliveries that match `filter` now, and acts on them in the background, in
    delivery id order, at most `FENIX_TASK_RATE` per second. `replay` re-queues `failed` and `skipped`
    deliveries (whose payload is kept) with their original event id and a fresh attempt budget; `cancel`
    and `skip` (the same) make deliveries not sent yet (`scheduled`, `pending`, or `in_flight` before
    their request starts) `skipped` with `skip_reason: cancelled`. A delivery whose status changed
    between the selection and its batch is left as it is and counted in `failed`. With `dry_run: true`
    nothing is created: the answer is the number of deliveries a task created instead would select.

    Args:
        app (str):
        body (TaskRequest): A task to create, or to count (`dry_run`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, Task, TaskDryRun]
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
    body: TaskRequest,
) -> Response[Union[ErrorBody, Task, TaskDryRun]]:
    """Replay, cancel or skip many deliveries, in the background (or count them: dry run)

     Selects the app's deliveries that match `filter` now, and acts on them in the background, in
    delivery id order, at most `FENIX_TASK_RATE` per second. `replay` re-queues `failed` and `skipped`
    deliveries (whose payload is kept) with their original event id and a fresh attempt budget; `cancel`
    and `skip` (the same) make deliveries not sent yet (`scheduled`, `pending`, or `in_flight` before
    their request starts) `skipped` with `skip_reason: cancelled`. A delivery whose status changed
    between the selection and its batch is left as it is and counted in `failed`. With `dry_run: true`
    nothing is created: the answer is the number of deliveries a task created instead would select.

    Args:
        app (str):
        body (TaskRequest): A task to create, or to count (`dry_run`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, Task, TaskDryRun]]
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
    body: TaskRequest,
) -> Optional[Union[ErrorBody, Task, TaskDryRun]]:
    """Replay, cancel or skip many deliveries, in the background (or count them: dry run)

     Selects the app's deliveries that match `filter` now, and acts on them in the background, in
    delivery id order, at most `FENIX_TASK_RATE` per second. `replay` re-queues `failed` and `skipped`
    deliveries (whose payload is kept) with their original event id and a fresh attempt budget; `cancel`
    and `skip` (the same) make deliveries not sent yet (`scheduled`, `pending`, or `in_flight` before
    their request starts) `skipped` with `skip_reason: cancelled`. A delivery whose status changed
    between the selection and its batch is left as it is and counted in `failed`. With `dry_run: true`
    nothing is created: the answer is the number of deliveries a task created instead would select.

    Args:
        app (str):
        body (TaskRequest): A task to create, or to count (`dry_run`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, Task, TaskDryRun]
    """

    return (
        await asyncio_detailed(
            app=app,
            client=client,
            body=body,
        )
    ).parsed
