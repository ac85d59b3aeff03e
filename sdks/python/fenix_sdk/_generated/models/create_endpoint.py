from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define

from ..models.create_endpoint_signature_scheme import CreateEndpointSignatureScheme
from ..models.on_dead_letter import OnDeadLetter
from ..models.signing_algorithm import SigningAlgorithm
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.create_endpoint_headers_type_0 import CreateEndpointHeadersType0
    from ..models.endpoint_auth_request import EndpointAuthRequest
    from ..models.endpoint_tls_in import EndpointTlsIn


T = TypeVar("T", bound="CreateEndpoint")


@_attrs_define
class CreateEndpoint:
    """
    Attributes:
        url (str):  Example: https://hooks.example.com/fenix.
        attempt_timeout (Union[None, Unset, str]): Own attempt timeout, at most `FENIX_ATTEMPT_TIMEOUT`; absent or null:
            that one. Example: 5s.
        auth (Union['EndpointAuthRequest', None, Unset]):
        channels (Union[Unset, list[str]]):
        description (Union[None, Unset, str]):
        event_types (Union[Unset, list[str]]):
        filter_ (Union[None, Unset, str]): A content filter in CEL over the event (`type`, `data`, `channels`,
            `tags`): only events it is true for are sent (docs/api.md, Content
            filters); at most 2,000 bytes, checked when saved. Absent, null or `""`: none. Example: data.amount > 100 &&
            data.currency == "EUR".
        final_status_codes (Union[None, Unset, list[int]]): 4xx answers (not 408, 410 or 429) that fail a delivery at
            once. Example: [400, 401, 404].
        headers (Union['CreateEndpointHeadersType0', None, Unset]): Custom request headers sent with every attempt (at
            most 20, 8 KiB in all). Example: {'Authorization': 'Bearer abc', 'X-Tenant': 'acme'}.
        on_dead_letter (Union[Unset, OnDeadLetter]):
        ordered (Union[Unset, bool]): Ordered delivery (default `false`): one delivery at a time per lane, in event
            order.
        rate_limit_per_sec (Union[None, Unset, int]):
        retry_schedule (Union[None, Unset, list[str]]): Own waits between attempts (at most 20, each at most 30d);
            absent or
            null: `FENIX_RETRY_SCHEDULE`. Example: ['30s', '5m', '1h'].
        secret (Union[None, Unset, str]): Owner-supplied HMAC secret (migrating from another platform); `hmac` only.
        sensitive_headers (Union[None, Unset, list[str]]): Names in `headers` whose values are sealed and redacted like
            `Authorization` and `Cookie` (which always are). Example: ['X-Api-Key'].
        signature_scheme (Union[Unset, CreateEndpointSignatureScheme]):
        signing_algorithm (Union[Unset, SigningAlgorithm]):
        tls (Union['EndpointTlsIn', None, Unset]):
        transformation (Union[None, Unset, str]): JavaScript `function handler(webhook) { … return webhook; }` that
            reshapes each delivery's request before it is signed (docs/api.md,
            Transformations); at most 64 KiB, compiled when saved. Example: function handler(webhook) { webhook.payload =
            {text: webhook.payload.type}; return webhook; }.
    """

    url: str
    attempt_timeout: Union[None, Unset, str] = UNSET
    auth: Union["EndpointAuthRequest", None, Unset] = UNSET
    channels: Union[Unset, list[str]] = UNSET
    description: Union[None, Unset, str] = UNSET
    event_types: Union[Unset, list[str]] = UNSET
    filter_: Union[None, Unset, str] = UNSET
    final_status_codes: Union[None, Unset, list[int]] = UNSET
    headers: Union["CreateEndpointHeadersType0", None, Unset] = UNSET
    on_dead_letter: Union[Unset, OnDeadLetter] = UNSET
    ordered: Union[Unset, bool] = UNSET
    rate_limit_per_sec: Union[None, Unset, int] = UNSET
    retry_schedule: Union[None, Unset, list[str]] = UNSET
    secret: Union[None, Unset, str] = UNSET
    sensitive_headers: Union[None, Unset, list[str]] = UNSET
    signature_scheme: Union[Unset, CreateEndpointSignatureScheme] = UNSET
    signing_algorithm: Union[Unset, SigningAlgorithm] = UNSET
    tls: Union["EndpointTlsIn", None, Unset] = UNSET
    transformation: Union[None, Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.create_endpoint_headers_type_0 import CreateEndpointHeadersType0
        from ..models.endpoint_auth_request import EndpointAuthRequest
        from ..models.endpoint_tls_in import EndpointTlsIn

        url = self.url

        attempt_timeout: Union[None, Unset, str]
        if isinstance(self.attempt_timeout, Unset):
            attempt_timeout = UNSET
        else:
            attempt_timeout = self.attempt_timeout

        auth: Union[None, Unset, dict[str, Any]]
        if isinstance(self.auth, Unset):
            auth = UNSET
        elif isinstance(self.auth, EndpointAuthRequest):
            auth = self.auth.to_dict()
        else:
            auth = self.auth

        channels: Union[Unset, list[str]] = UNSET
        if not isinstance(self.channels, Unset):
            channels = self.channels

        description: Union[None, Unset, str]
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        event_types: Union[Unset, list[str]] = UNSET
        if not isinstance(self.event_types, Unset):
            event_types = self.event_types

        filter_: Union[None, Unset, str]
        if isinstance(self.filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = self.filter_

        final_status_codes: Union[None, Unset, list[int]]
        if isinstance(self.final_status_codes, Unset):
            final_status_codes = UNSET
        elif isinstance(self.final_status_codes, list):
            final_status_codes = self.final_status_codes

        else:
            final_status_codes = self.final_status_codes

        headers: Union[None, Unset, dict[str, Any]]
        if isinstance(self.headers, Unset):
            headers = UNSET
        elif isinstance(self.headers, CreateEndpointHeadersType0):
            headers = self.headers.to_dict()
        else:
            headers = self.headers

        on_dead_letter: Union[Unset, str] = UNSET
        if not isinstance(self.on_dead_letter, Unset):
            on_dead_letter = self.on_dead_letter.value

        ordered = self.ordered

        rate_limit_per_sec: Union[None, Unset, int]
        if isinstance(self.rate_limit_per_sec, Unset):
            rate_limit_per_sec = UNSET
        else:
            rate_limit_per_sec = self.rate_limit_per_sec

        retry_schedule: Union[None, Unset, list[str]]
        if isinstance(self.retry_schedule, Unset):
            retry_schedule = UNSET
        elif isinstance(self.retry_schedule, list):
            retry_schedule = self.retry_schedule

        else:
            retry_schedule = self.retry_schedule

        secret: Union[None, Unset, str]
        if isinstance(self.secret, Unset):
            secret = UNSET
        else:
            secret = self.secret

        sensitive_headers: Union[None, Unset, list[str]]
        if isinstance(self.sensitive_headers, Unset):
            sensitive_headers = UNSET
        elif isinstance(self.sensitive_headers, list):
            sensitive_headers = self.sensitive_headers

        else:
            sensitive_headers = self.sensitive_headers

        signature_scheme: Union[Unset, str] = UNSET
        if not isinstance(self.signature_scheme, Unset):
            signature_scheme = self.signature_scheme.value

        signing_algorithm: Union[Unset, str] = UNSET
        if not isinstance(self.signing_algorithm, Unset):
            signing_algorithm = self.signing_algorithm.value

        tls: Union[None, Unset, dict[str, Any]]
        if isinstance(self.tls, Unset):
            tls = UNSET
        elif isinstance(self.tls, EndpointTlsIn):
            tls = self.tls.to_dict()
        else:
            tls = self.tls

        transformation: Union[None, Unset, str]
        if isinstance(self.transformation, Unset):
            transformation = UNSET
        else:
            transformation = self.transformation

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "url": url,
            }
        )
        if attempt_timeout is not UNSET:
            field_dict["attempt_timeout"] = attempt_timeout
        if auth is not UNSET:
            field_dict["auth"] = auth
        if channels is not UNSET:
            field_dict["channels"] = channels
        if description is not UNSET:
            field_dict["description"] = description
        if event_types is not UNSET:
            field_dict["event_types"] = event_types
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if final_status_codes is not UNSET:
            field_dict["final_status_codes"] = final_status_codes
        if headers is not UNSET:
            field_dict["headers"] = headers
        if on_dead_letter is not UNSET:
            field_dict["on_dead_letter"] = on_dead_letter
        if ordered is not UNSET:
            field_dict["ordered"] = ordered
        if rate_limit_per_sec is not UNSET:
            field_dict["rate_limit_per_sec"] = rate_limit_per_sec
        if retry_schedule is not UNSET:
            field_dict["retry_schedule"] = retry_schedule
        if secret is not UNSET:
            field_dict["secret"] = secret
        if sensitive_headers is not UNSET:
            field_dict["sensitive_headers"] = sensitive_headers
        if signature_scheme is not UNSET:
            field_dict["signature_scheme"] = signature_scheme
        if signing_algorithm is not UNSET:
            field_dict["signing_algorithm"] = signing_algorithm
        if tls is not UNSET:
            field_dict["tls"] = tls
        if transformation is not UNSET:
            field_dict["transformation"] = transformation

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.create_endpoint_headers_type_0 import CreateEndpointHeadersType0
        from ..models.endpoint_auth_request import EndpointAuthRequest
        from ..models.endpoint_tls_in import EndpointTlsIn

        d = dict(src_dict)
        url = d.pop("url")

        def _parse_attempt_timeout(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        attempt_timeout = _parse_attempt_timeout(d.pop("attempt_timeout", UNSET))

        def _parse_auth(data: object) -> Union["EndpointAuthRequest", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                auth_type_1 = EndpointAuthRequest.from_dict(data)

                return auth_type_1
            except:  # noqa: E722
                pass
            return cast(Union["EndpointAuthRequest", None, Unset], data)

        auth = _parse_auth(d.pop("auth", UNSET))

        channels = cast(list[str], d.pop("channels", UNSET))

        def _parse_description(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        description = _parse_description(d.pop("description", UNSET))

        event_types = cast(list[str], d.pop("event_types", UNSET))

        def _parse_filter_(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        filter_ = _parse_filter_(d.pop("filter", UNSET))

        def _parse_final_status_codes(data: object) -> Union[None, Unset, list[int]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                final_status_codes_type_0 = cast(list[int], data)

                return final_status_codes_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list[int]], data)

        final_status_codes = _parse_final_status_codes(
            d.pop("final_status_codes", UNSET)
        )

        def _parse_headers(
            data: object,
        ) -> Union["CreateEndpointHeadersType0", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                headers_type_0 = CreateEndpointHeadersType0.from_dict(data)

                return headers_type_0
            except:  # noqa: E722
                pass
            return cast(Union["CreateEndpointHeadersType0", None, Unset], data)

        headers = _parse_headers(d.pop("headers", UNSET))

        _on_dead_letter = d.pop("on_dead_letter", UNSET)
        on_dead_letter: Union[Unset, OnDeadLetter]
        if isinstance(_on_dead_letter, Unset):
            on_dead_letter = UNSET
        else:
            on_dead_letter = OnDeadLetter(_on_dead_letter)

        ordered = d.pop("ordered", UNSET)

        def _parse_rate_limit_per_sec(data: object) -> Union[None, Unset, int]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int], data)

        rate_limit_per_sec = _parse_rate_limit_per_sec(
            d.pop("rate_limit_per_sec", UNSET)
        )

        def _parse_retry_schedule(data: object) -> Union[None, Unset, list[str]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                retry_schedule_type_0 = cast(list[str], data)

                return retry_schedule_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list[str]], data)

        retry_schedule = _parse_retry_schedule(d.pop("retry_schedule", UNSET))

        def _parse_secret(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        secret = _parse_secret(d.pop("secret", UNSET))

        def _parse_sensitive_headers(data: object) -> Union[None, Unset, list[str]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                sensitive_headers_type_0 = cast(list[str], data)

                return sensitive_headers_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list[str]], data)

        sensitive_headers = _parse_sensitive_headers(d.pop("sensitive_headers", UNSET))

        _signature_scheme = d.pop("signature_scheme", UNSET)
        signature_scheme: Union[Unset, CreateEndpointSignatureScheme]
        if isinstance(_signature_scheme, Unset):
            signature_scheme = UNSET
        else:
            signature_scheme = CreateEndpointSignatureScheme(_signature_scheme)

        _signing_algorithm = d.pop("signing_algorithm", UNSET)
        signing_algorithm: Union[Unset, SigningAlgorithm]
        if isinstance(_signing_algorithm, Unset):
            signing_algorithm = UNSET
        else:
            signing_algorithm = SigningAlgorithm(_signing_algorithm)

        def _parse_tls(data: object) -> Union["EndpointTlsIn", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                tls_type_1 = EndpointTlsIn.from_dict(data)

                return tls_type_1
            except:  # noqa: E722
                pass
            return cast(Union["EndpointTlsIn", None, Unset], data)

        tls = _parse_tls(d.pop("tls", UNSET))

        def _parse_transformation(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        transformation = _parse_transformation(d.pop("transformation", UNSET))

        create_endpoint = cls(
            url=url,
            attempt_timeout=attempt_timeout,
            auth=auth,
            channels=channels,
            description=description,
            event_types=event_types,
            filter_=filter_,
            final_status_codes=final_status_codes,
            headers=headers,
            on_dead_letter=on_dead_letter,
            ordered=ordered,
            rate_limit_per_sec=rate_limit_per_sec,
            retry_schedule=retry_schedule,
            secret=secret,
            sensitive_headers=sensitive_headers,
            signature_scheme=signature_scheme,
            signing_algorithm=signing_algorithm,
            tls=tls,
            transformation=transformation,
        )

        return create_endpoint
