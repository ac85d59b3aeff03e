from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define

from ..models.on_dead_letter import OnDeadLetter
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.endpoint_auth_request import EndpointAuthRequest
    from ..models.endpoint_tls_in import EndpointTlsIn
    from ..models.patch_endpoint_headers import PatchEndpointHeaders


T = TypeVar("T", bound="PatchEndpoint")


@_attrs_define
class PatchEndpoint:
    """
    Attributes:
        attempt_timeout (Union[None, Unset, str]): Left out: unchanged; null: back to `FENIX_ATTEMPT_TIMEOUT`.
        auth (Union['EndpointAuthRequest', None, Unset]):
        channels (Union[Unset, list[str]]):
        description (Union[Unset, str]): Left out: unchanged; cannot be null (`""` empties it).
        event_types (Union[Unset, list[str]]): Left out: unchanged; cannot be null (`[]` is every type).
        filter_ (Union[None, Unset, str]): Left out: unchanged; null or `""`: none. Applies to events sent from then on.
        final_status_codes (Union[Unset, list[int]]): Left out: unchanged; cannot be null (`[]`: none).
        headers (Union[Unset, PatchEndpointHeaders]): Left out: unchanged; cannot be null (`{}` removes them all).
            Replaces
            the whole set; a sensitive header given as `"[redacted]"` keeps its stored value.
        on_dead_letter (Union[Unset, OnDeadLetter]):
        ordered (Union[Unset, bool]): Left out: unchanged; cannot be null. Applies to deliveries created from then on.
        rate_limit_per_sec (Union[None, Unset, int]):
        retry_schedule (Union[None, Unset, list[str]]): Left out: unchanged; null: back to `FENIX_RETRY_SCHEDULE`.
        sensitive_headers (Union[Unset, list[str]]): Only together with `headers`; left out, the names sensitive so far
            stay sensitive.
        tls (Union['EndpointTlsIn', None, Unset]):
        transformation (Union[None, Unset, str]): Left out: unchanged; null: none (the envelope is sent as it is).
        url (Union[Unset, str]): Left out: unchanged; cannot be null. Example: https://hooks.example.com/fenix.
    """

    attempt_timeout: Union[None, Unset, str] = UNSET
    auth: Union["EndpointAuthRequest", None, Unset] = UNSET
    channels: Union[Unset, list[str]] = UNSET
    description: Union[Unset, str] = UNSET
    event_types: Union[Unset, list[str]] = UNSET
    filter_: Union[None, Unset, str] = UNSET
    final_status_codes: Union[Unset, list[int]] = UNSET
    headers: Union[Unset, "PatchEndpointHeaders"] = UNSET
    on_dead_letter: Union[Unset, OnDeadLetter] = UNSET
    ordered: Union[Unset, bool] = UNSET
    rate_limit_per_sec: Union[None, Unset, int] = UNSET
    retry_schedule: Union[None, Unset, list[str]] = UNSET
    sensitive_headers: Union[Unset, list[str]] = UNSET
    tls: Union["EndpointTlsIn", None, Unset] = UNSET
    transformation: Union[None, Unset, str] = UNSET
    url: Union[Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.endpoint_auth_request import EndpointAuthRequest
        from ..models.endpoint_tls_in import EndpointTlsIn

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

        description = self.description

        event_types: Union[Unset, list[str]] = UNSET
        if not isinstance(self.event_types, Unset):
            event_types = self.event_types

        filter_: Union[None, Unset, str]
        if isinstance(self.filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = self.filter_

        final_status_codes: Union[Unset, list[int]] = UNSET
        if not isinstance(self.final_status_codes, Unset):
            final_status_codes = self.final_status_codes

        headers: Union[Unset, dict[str, Any]] = UNSET
        if not isinstance(self.headers, Unset):
            headers = self.headers.to_dict()

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

        sensitive_headers: Union[Unset, list[str]] = UNSET
        if not isinstance(self.sensitive_headers, Unset):
            sensitive_headers = self.sensitive_headers

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

        url = self.url

        field_dict: dict[str, Any] = {}

        field_dict.update({})
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
        if sensitive_headers is not UNSET:
            field_dict["sensitive_headers"] = sensitive_headers
        if tls is not UNSET:
            field_dict["tls"] = tls
        if transformation is not UNSET:
            field_dict["transformation"] = transformation
        if url is not UNSET:
            field_dict["url"] = url

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint_auth_request import EndpointAuthRequest
        from ..models.endpoint_tls_in import EndpointTlsIn
        from ..models.patch_endpoint_headers import PatchEndpointHeaders

        d = dict(src_dict)

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

        description = d.pop("description", UNSET)

        event_types = cast(list[str], d.pop("event_types", UNSET))

        def _parse_filter_(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        filter_ = _parse_filter_(d.pop("filter", UNSET))

        final_status_codes = cast(list[int], d.pop("final_status_codes", UNSET))

        _headers = d.pop("headers", UNSET)
        headers: Union[Unset, PatchEndpointHeaders]
        if isinstance(_headers, Unset):
            headers = UNSET
        else:
            headers = PatchEndpointHeaders.from_dict(_headers)

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

        sensitive_headers = cast(list[str], d.pop("sensitive_headers", UNSET))

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

        url = d.pop("url", UNSET)

        patch_endpoint = cls(
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
            sensitive_headers=sensitive_headers,
            tls=tls,
            transformation=transformation,
            url=url,
        )

        return patch_endpoint
