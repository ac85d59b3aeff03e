from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.no_options import NoOptions
from ...models.task import Task
from ...types import Response


def _get_kwargs(
    task: str,
    *,
    body: Union["NoOptions", None],
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": f"/v1/tasks/{task}/cancel",
    }

    _kwargs["json"]: Union[None, dict[str, Any]]
    if isinstance(body, NoOptions):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = body

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, Task]]:
    if response.status_code == 200:
        response_200 = Task.from_dict(response.json())

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

    if response.status_code == 409:
        response_409 = ErrorBody.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = ErrorBody.from_dict(response.json())

        return response_413

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
    task: str,
    *,
    client: AuthenticatedClient,
    body: Union["NoOptions", None],
) -> Response[Union[ErrorBody, Task]]:
    """Stop any task, an app's or an operator's

     As `POST /v1/apps/{app}/tasks/{task}/cancel`, for any task.

    Args:
        task (str):
        body (Union['NoOptions', None]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, Task]]
    """

    kwargs = _get_kwargs(
        task=task,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    task: str,
    *,
    client: AuthenticatedClient,
    body: Union["NoOptions", None],
) -> Optional[Union[ErrorBody, Task]]:
    """Stop any task, an app's or an operator's

     As `POST /v1/apps/{app}/tasks/{task}/cancel`, for any task.

    Args:
        task (str):
        body (Union['NoOptions', None]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, Task]
    """

    return sync_detailed(
        task=task,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    task: str,
    *,
    client: AuthenticatedClient,
    body: Union["NoOptions", None],
) -> Response[Union[ErrorBody, Task]]:
    """Stop any task, an app's or an operator's

     As `POST /v1/apps/{app}/tasks/{task}/cancel`, for any task.

    Args:
        task (str):
        body (Union['NoOptions', None]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, Task]]
    """

    kwargs = _get_kwargs(
        task=task,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    task: str,
    *,
    client: AuthenticatedClient,
    body: Union["NoOptions", None],
) -> Optional[Union[ErrorBody, Task]]:
    """Stop any task, an app's or an operator's

     As `POST /v1/apps/{app}/tasks/{task}/cancel`, for any task.

    Args:
        task (str):
        body (Union['NoOptions', None]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, Task]
    """

    return (
        await asyncio_detailed(
            task=task,
            client=client,
            body=body,
        )
    ).parsed
