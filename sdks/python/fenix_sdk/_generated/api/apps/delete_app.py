from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.task import Task
from ...types import Response


def _get_kwargs(
    app: str,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": f"/v1/apps/{app}",
    }

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
    *,
    client: AuthenticatedClient,
) -> Response[Union[ErrorBody, Task]]:
    """Delete an app with its endpoints, events and deliveries

     At once, the app is no longer found (its id and uid answer 404), its tokens and console sessions
    stop working, its endpoints are disabled and its tasks still going are cancelled. Its deliveries,
    attempts, events and endpoints are then erased in the background in bounded batches, by the
    `delete_app` task answered here (read it at `GET /v1/tasks/{task}`); the app's row goes last. A
    deletion cannot be cancelled.

    Args:
        app (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, Task]]
    """

    kwargs = _get_kwargs(
        app=app,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    app: str,
    *,
    client: AuthenticatedClient,
) -> Optional[Union[ErrorBody, Task]]:
    """Delete an app with its endpoints, events and deliveries

     At once, the app is no longer found (its id and uid answer 404), its tokens and console sessions
    stop working, its endpoints are disabled and its tasks still going are cancelled. Its deliveries,
    attempts, events and endpoints are then erased in the background in bounded batches, by the
    `delete_app` task answered here (read it at `GET /v1/tasks/{task}`); the app's row goes last. A
    deletion cannot be cancelled.

    Args:
        app (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, Task]
    """

    return sync_detailed(
        app=app,
        client=client,
    ).parsed


async def asyncio_detailed(
    app: str,
    *,
    client: AuthenticatedClient,
) -> Response[Union[ErrorBody, Task]]:
    """Delete an app with its endpoints, events and deliveries

     At once, the app is no longer found (its id and uid answer 404), its tokens and console sessions
    stop working, its endpoints are disabled and its tasks still going are cancelled. Its deliveries,
    attempts, events and endpoints are then erased in the background in bounded batches, by the
    `delete_app` task answered here (read it at `GET /v1/tasks/{task}`); the app's row goes last. A
    deletion cannot be cancelled.

    Args:
        app (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, Task]]
    """

    kwargs = _get_kwargs(
        app=app,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    app: str,
    *,
    client: AuthenticatedClient,
) -> Optional[Union[ErrorBody, Task]]:
    """Delete an app with its endpoints, events and deliveries

     At once, the app is no longer found (its id and uid answer 404), its tokens and console sessions
    stop working, its endpoints are disabled and its tasks still going are cancelled. Its deliveries,
    attempts, events and endpoints are then erased in the background in bounded batches, by the
    `delete_app` task answered here (read it at `GET /v1/tasks/{task}`); the app's row goes last. A
    deletion cannot be cancelled.

    Args:
        app (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, Task]
    """

    return (
        await asyncio_detailed(
            app=app,
            client=client,
        )
    ).parsed
