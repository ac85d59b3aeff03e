from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define

from ..models.endpoint_auth_type import EndpointAuthType
from ..models.token_endpoint_auth_method import TokenEndpointAuthMethod
from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointAuthRequest")


@_attrs_define
class EndpointAuthRequest:
    """An endpoint's `auth` as a request gives it.

    Attributes:
        client_id (str): At most 256 characters.
        token_url (str): The token endpoint: the destination policy of endpoint URLs applies
            (HTTPS, a public address), here and before every fetch. Example: https://auth.example.com/oauth/token.
        type_ (EndpointAuthType): The grant: only client credentials.
        audience (Union[None, Unset, str]): Sent as `audience` when set (at most 1024 characters).
        client_secret (Union[None, Unset, str]): `client_secret_basic` and `client_secret_post` only; never answered.
            Left out of a `PATCH`, the stored one is kept (same method kind,
            `token_url` and `client_id`).
        private_key (Union[None, Unset, str]): `private_key_jwt` only: an RSA (RS256) or EC P-256 (ES256) private key,
            PEM; never answered. Kept by a `PATCH` like `client_secret`.
        scope (Union[None, Unset, str]): Sent as `scope` when set (at most 1024 characters).
        token_endpoint_auth_method (Union[Unset, TokenEndpointAuthMethod]): How Fenix authenticates to the token
            endpoint.
    """

    client_id: str
    token_url: str
    type_: EndpointAuthType
    audience: Union[None, Unset, str] = UNSET
    client_secret: Union[None, Unset, str] = UNSET
    private_key: Union[None, Unset, str] = UNSET
    scope: Union[None, Unset, str] = UNSET
    token_endpoint_auth_method: Union[Unset, TokenEndpointAuthMethod] = UNSET

    def to_dict(self) -> dict[str, Any]:
        client_id = self.client_id

        token_url = self.token_url

        type_ = self.type_.value

        audience: Union[None, Unset, str]
        if isinstance(self.audience, Unset):
            audience = UNSET
        else:
            audience = self.audience

        client_secret: Union[None, Unset, str]
        if isinstance(self.client_secret, Unset):
            client_secret = UNSET
        else:
            client_secret = self.client_secret

        private_key: Union[None, Unset, str]
        if isinstance(self.private_key, Unset):
            private_key = UNSET
        else:
            private_key = self.private_key

        scope: Union[None, Unset, str]
        if isinstance(self.scope, Unset):
            scope = UNSET
        else:
            scope = self.scope

        token_endpoint_auth_method: Union[Unset, str] = UNSET
        if not isinstance(self.token_endpoint_auth_method, Unset):
            token_endpoint_auth_method = self.token_endpoint_auth_method.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "client_id": client_id,
                "token_url": token_url,
                "type": type_,
            }
        )
        if audience is not UNSET:
            field_dict["audience"] = audience
        if client_secret is not UNSET:
            field_dict["client_secret"] = client_secret
        if private_key is not UNSET:
            field_dict["private_key"] = private_key
        if scope is not UNSET:
            field_dict["scope"] = scope
        if token_endpoint_auth_method is not UNSET:
            field_dict["token_endpoint_auth_method"] = token_endpoint_auth_method

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        client_id = d.pop("client_id")

        token_url = d.pop("token_url")

        type_ = EndpointAuthType(d.pop("type"))

        def _parse_audience(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        audience = _parse_audience(d.pop("audience", UNSET))

        def _parse_client_secret(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        client_secret = _parse_client_secret(d.pop("client_secret", UNSET))

        def _parse_private_key(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        private_key = _parse_private_key(d.pop("private_key", UNSET))

        def _parse_scope(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        scope = _parse_scope(d.pop("scope", UNSET))

        _token_endpoint_auth_method = d.pop("token_endpoint_auth_method", UNSET)
        token_endpoint_auth_method: Union[Unset, TokenEndpointAuthMethod]
        if isinstance(_token_endpoint_auth_method, Unset):
            token_endpoint_auth_method = UNSET
        else:
            token_endpoint_auth_method = TokenEndpointAuthMethod(
                _token_endpoint_auth_method
            )

        endpoint_auth_request = cls(
            client_id=client_id,
            token_url=token_url,
            type_=type_,
            audience=audience,
            client_secret=client_secret,
            private_key=private_key,
            scope=scope,
            token_endpoint_auth_method=token_endpoint_auth_method,
        )

        return endpoint_auth_request
