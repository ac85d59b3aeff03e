from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.endpoint_auth_type import EndpointAuthType
from ..models.token_endpoint_auth_method import TokenEndpointAuthMethod
from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointAuth")


@_attrs_define
class EndpointAuth:
    """An endpoint's `auth` as reads answer it: never the secret or the key.

    Attributes:
        client_id (str):
        client_secret_set (bool): A client secret is stored (sealed); it is never answered.
        private_key_set (bool): A private key is stored (sealed); it is never answered.
        token_endpoint_auth_method (TokenEndpointAuthMethod): How Fenix authenticates to the token endpoint.
        token_url (str):
        type_ (EndpointAuthType): The grant: only client credentials.
        audience (Union[None, Unset, str]):
        scope (Union[None, Unset, str]):
    """

    client_id: str
    client_secret_set: bool
    private_key_set: bool
    token_endpoint_auth_method: TokenEndpointAuthMethod
    token_url: str
    type_: EndpointAuthType
    audience: Union[None, Unset, str] = UNSET
    scope: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        client_id = self.client_id

        client_secret_set = self.client_secret_set

        private_key_set = self.private_key_set

        token_endpoint_auth_method = self.token_endpoint_auth_method.value

        token_url = self.token_url

        type_ = self.type_.value

        audience: Union[None, Unset, str]
        if isinstance(self.audience, Unset):
            audience = UNSET
        else:
            audience = self.audience

        scope: Union[None, Unset, str]
        if isinstance(self.scope, Unset):
            scope = UNSET
        else:
            scope = self.scope

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "client_id": client_id,
                "client_secret_set": client_secret_set,
                "private_key_set": private_key_set,
                "token_endpoint_auth_method": token_endpoint_auth_method,
                "token_url": token_url,
                "type": type_,
            }
        )
        if audience is not UNSET:
            field_dict["audience"] = audience
        if scope is not UNSET:
            field_dict["scope"] = scope

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        client_id = d.pop("client_id")

        client_secret_set = d.pop("client_secret_set")

        private_key_set = d.pop("private_key_set")

        token_endpoint_auth_method = TokenEndpointAuthMethod(
            d.pop("token_endpoint_auth_method")
        )

        token_url = d.pop("token_url")

        type_ = EndpointAuthType(d.pop("type"))

        def _parse_audience(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        audience = _parse_audience(d.pop("audience", UNSET))

        def _parse_scope(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        scope = _parse_scope(d.pop("scope", UNSET))

        endpoint_auth = cls(
            client_id=client_id,
            client_secret_set=client_secret_set,
            private_key_set=private_key_set,
            token_endpoint_auth_method=token_endpoint_auth_method,
            token_url=token_url,
            type_=type_,
            audience=audience,
            scope=scope,
        )

        endpoint_auth.additional_properties = d
        return endpoint_auth

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
