from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.operator_task_request import OperatorTaskRequest
from ...models.task import Task
from ...models.task_dry_run import TaskDryRun
from ...types import Response


def _get_kwargs(
    *,
    body: OperatorTaskRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/tasks",
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
    *,
    client: AuthenticatedClient,
    body: OperatorTaskRequest,
) -> Response[Union[ErrorBody, Task, TaskDryRun]]:
    """Replay, cancel or skip many deliveries of every app (or of some), in the background (or count them)

     An app's task (`POST /v1/apps/{app}/tasks`) across apps: the deliveries of every app, or of the apps
    named in `filter.app_ids` (at most 100), that match the filter now. The task belongs to no app
    (`app_id: null`); it is read and cancelled under `/v1/tasks`. A replay goes no faster than the
    worker takes what it re-queued.

    Args:
        body (OperatorTaskRequest): An operator's task to create across apps, or to count
            (`dry_run`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, Task, TaskDryRun]]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: OperatorTaskRequest,
) -> Optional[Union[ErrorBody, Task, TaskDryRun]]:
    """Replay, cancel or skip many deliveries of every app (or of some), in the background (or count them)

     An app's task (`POST /v1/apps/{app}/tasks`) across apps: the deliveries of every app, or of the apps
    named in `filter.app_ids` (at most 100), that match the filter now. The task belongs to no app
    (`app_id: null`); it is read and cancelled under `/v1/tasks`. A replay goes no faster than the
    worker takes what it re-queued.

    Args:
        body (OperatorTaskRequest): An operator's task to create across apps, or to count
            (`dry_run`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, Task, TaskDryRun]
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: OperatorTaskRequest,
) -> Response[Union[ErrorBody, Task, TaskDryRun]]:
    """Replay, cancel or skip many deliveries of every app (or of some), in the background (or count them)

     An app's task (`POST /v1/apps/{app}/tasks`) across apps: the deliveries of every app, or of the apps
    named in `filter.app_ids` (at most 100), that match the filter now. The task belongs to no app
    (`app_id: null`); it is read and cancelled under `/v1/tasks`. A replay goes no faster than the
    worker takes what it re-queued.

    Args:
        body (OperatorTaskRequest): An operator's task to create across apps, or to count
            (`dry_run`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, Task, TaskDryRun]]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: OperatorTaskRequest,
) -> Optional[Union[ErrorBody, Task, TaskDryRun]]:
    """Replay, cancel or skip many deliveries of every app (or of some), in the background (or count them)

     An app's task (`POST /v1/apps/{app}/tasks`) across apps: the deliveries of every app, or of the apps
    named in `filter.app_ids` (at most 100), that match the filter now. The task belongs to no app
    (`app_id: null`); it is read and cancelled under `/v1/tasks`. A replay goes no faster than the
    worker takes what it re-queued.

    Args:
        body (OperatorTaskRequest): An operator's task to create across apps, or to count
            (`dry_run`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, Task, TaskDryRun]
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
