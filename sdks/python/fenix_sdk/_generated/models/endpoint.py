from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.endpoint_signature_scheme import EndpointSignatureScheme
from ..models.endpoint_state import EndpointState
from ..models.on_dead_letter import OnDeadLetter
from ..models.signing_algorithm import SigningAlgorithm
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.endpoint_auth import EndpointAuth
    from ..models.endpoint_headers import EndpointHeaders
    from ..models.endpoint_tls import EndpointTls
    from ..models.verification_out import VerificationOut


T = TypeVar("T", bound="Endpoint")


@_attrs_define
class Endpoint:
    """An endpoint as the API shows it. `secret` only in create and rotate answers.

    Attributes:
        app_id (str):
        channels (list[str]):
        created_at (str):
        description (str):
        event_types (list[str]):
        final_status_codes (list[int]): Answers that fail a delivery at once, without retry (`[]`: none).
        headers (EndpointHeaders): Custom request headers sent with every attempt. The values of
            sensitive headers (`Authorization`, `Cookie`, and `sensitive_headers`)
            always read `"[redacted]"`. Example: {'Authorization': '[redacted]', 'X-Tenant': 'acme'}.
        id (str):
        on_dead_letter (OnDeadLetter):
        ordered (bool): Ordered delivery: one delivery at a time per lane (`ordering_key`), in event order.
        sensitive_headers (list[str]): Header names marked sensitive besides `Authorization` and `Cookie`,
            which always are.
        signature_scheme (EndpointSignatureScheme):
        signing_algorithm (SigningAlgorithm):
        state (EndpointState):
        updated_at (str):
        url (str):
        attempt_timeout (Union[None, Unset, str]): The endpoint's own attempt timeout; `null`: `FENIX_ATTEMPT_TIMEOUT`.
            Example: 5s.
        auth (Union['EndpointAuth', None, Unset]):
        filter_ (Union[None, Unset, str]): The content filter (CEL) events must pass to be sent here
            (docs/api.md, Content filters); `null`: none.
        public_key (Union[None, Unset, str]): The Ed25519 public key (`whpk_…`): in the create answer of an
            `ed25519` endpoint (and readable at any time at `…/public-keys`).
        rate_limit_per_sec (Union[None, Unset, int]):
        retry_schedule (Union[None, Unset, list[str]]): The endpoint's own waits between attempts; `null`:
            `FENIX_RETRY_SCHEDULE`. Example: ['30s', '5m', '1h'].
        secret (Union[None, Unset, str]): The HMAC secret: in the create answer of an `hmac` endpoint only.
        state_changed_at (Union[None, Unset, str]):
        state_reason (Union[None, Unset, str]):
        tls (Union['EndpointTls', None, Unset]):
        transformation (Union[None, Unset, str]): The JavaScript that reshapes each delivery's request (docs/api.md,
            Transformations); `null`: none.
        verification (Union['VerificationOut', None, Unset]):
    """

    app_id: str
    channels: list[str]
    created_at: str
    description: str
    event_types: list[str]
    final_status_codes: list[int]
    headers: "EndpointHeaders"
    id: str
    on_dead_letter: OnDeadLetter
    ordered: bool
    sensitive_headers: list[str]
    signature_scheme: EndpointSignatureScheme
    signing_algorithm: SigningAlgorithm
    state: EndpointState
    updated_at: str
    url: str
    attempt_timeout: Union[None, Unset, str] = UNSET
    auth: Union["EndpointAuth", None, Unset] = UNSET
    filter_: Union[None, Unset, str] = UNSET
    public_key: Union[None, Unset, str] = UNSET
    rate_limit_per_sec: Union[None, Unset, int] = UNSET
    retry_schedule: Union[None, Unset, list[str]] = UNSET
    secret: Union[None, Unset, str] = UNSET
    state_changed_at: Union[None, Unset, str] = UNSET
    state_reason: Union[None, Unset, str] = UNSET
    tls: Union["EndpointTls", None, Unset] = UNSET
    transformation: Union[None, Unset, str] = UNSET
    verification: Union["VerificationOut", None, Unset] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.endpoint_auth import EndpointAuth
        from ..models.endpoint_tls import EndpointTls
        from ..models.verification_out import VerificationOut

        app_id = self.app_id

        channels = self.channels

        created_at = self.created_at

        description = self.description

        event_types = self.event_types

        final_status_codes = self.final_status_codes

        headers = self.headers.to_dict()

        id = self.id

        on_dead_letter = self.on_dead_letter.value

        ordered = self.ordered

        sensitive_headers = self.sensitive_headers

        signature_scheme = self.signature_scheme.value

        signing_algorithm = self.signing_algorithm.value

        state = self.state.value

        updated_at = self.updated_at

        url = self.url

        attempt_timeout: Union[None, Unset, str]
        if isinstance(self.attempt_timeout, Unset):
            attempt_timeout = UNSET
        else:
            attempt_timeout = self.attempt_timeout

        auth: Union[None, Unset, dict[str, Any]]
        if isinstance(self.auth, Unset):
            auth = UNSET
        elif isinstance(self.auth, EndpointAuth):
            auth = self.auth.to_dict()
        else:
            auth = self.auth

        filter_: Union[None, Unset, str]
        if isinstance(self.filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = self.filter_

        public_key: Union[None, Unset, str]
        if isinstance(self.public_key, Unset):
            public_key = UNSET
        else:
            public_key = self.public_key

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

        state_changed_at: Union[None, Unset, str]
        if isinstance(self.state_changed_at, Unset):
            state_changed_at = UNSET
        else:
            state_changed_at = self.state_changed_at

        state_reason: Union[None, Unset, str]
        if isinstance(self.state_reason, Unset):
            state_reason = UNSET
        else:
            state_reason = self.state_reason

        tls: Union[None, Unset, dict[str, Any]]
        if isinstance(self.tls, Unset):
            tls = UNSET
        elif isinstance(self.tls, EndpointTls):
            tls = self.tls.to_dict()
        else:
            tls = self.tls

        transformation: Union[None, Unset, str]
        if isinstance(self.transformation, Unset):
            transformation = UNSET
        else:
            transformation = self.transformation

        verification: Union[None, Unset, dict[str, Any]]
        if isinstance(self.verification, Unset):
            verification = UNSET
        elif isinstance(self.verification, VerificationOut):
            verification = self.verification.to_dict()
        else:
            verification = self.verification

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "app_id": app_id,
                "channels": channels,
                "created_at": created_at,
                "description": description,
                "event_types": event_types,
                "final_status_codes": final_status_codes,
                "headers": headers,
                "id": id,
                "on_dead_letter": on_dead_letter,
                "ordered": ordered,
                "sensitive_headers": sensitive_headers,
                "signature_scheme": signature_scheme,
                "signing_algorithm": signing_algorithm,
                "state": state,
                "updated_at": updated_at,
                "url": url,
            }
        )
        if attempt_timeout is not UNSET:
            field_dict["attempt_timeout"] = attempt_timeout
        if auth is not UNSET:
            field_dict["auth"] = auth
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if public_key is not UNSET:
            field_dict["public_key"] = public_key
        if rate_limit_per_sec is not UNSET:
            field_dict["rate_limit_per_sec"] = rate_limit_per_sec
        if retry_schedule is not UNSET:
            field_dict["retry_schedule"] = retry_schedule
        if secret is not UNSET:
            field_dict["secret"] = secret
        if state_changed_at is not UNSET:
            field_dict["state_changed_at"] = state_changed_at
        if state_reason is not UNSET:
            field_dict["state_reason"] = state_reason
        if tls is not UNSET:
            field_dict["tls"] = tls
        if transformation is not UNSET:
            field_dict["transformation"] = transformation
        if verification is not UNSET:
            field_dict["verification"] = verification

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint_auth import EndpointAuth
        from ..models.endpoint_headers import EndpointHeaders
        from ..models.endpoint_tls import EndpointTls
        from ..models.verification_out import VerificationOut

        d = dict(src_dict)
        app_id = d.pop("app_id")

        channels = cast(list[str], d.pop("channels"))

        created_at = d.pop("created_at")

        description = d.pop("description")

        event_types = cast(list[str], d.pop("event_types"))

        final_status_codes = cast(list[int], d.pop("final_status_codes"))

        headers = EndpointHeaders.from_dict(d.pop("headers"))

        id = d.pop("id")

        on_dead_letter = OnDeadLetter(d.pop("on_dead_letter"))

        ordered = d.pop("ordered")

        sensitive_headers = cast(list[str], d.pop("sensitive_headers"))

        signature_scheme = EndpointSignatureScheme(d.pop("signature_scheme"))

        signing_algorithm = SigningAlgorithm(d.pop("signing_algorithm"))

        state = EndpointState(d.pop("state"))

        updated_at = d.pop("updated_at")

        url = d.pop("url")

        def _parse_attempt_timeout(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        attempt_timeout = _parse_attempt_timeout(d.pop("attempt_timeout", UNSET))

        def _parse_auth(data: object) -> Union["EndpointAuth", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                auth_type_1 = EndpointAuth.from_dict(data)

                return auth_type_1
            except:  # noqa: E722
                pass
            return cast(Union["EndpointAuth", None, Unset], data)

        auth = _parse_auth(d.pop("auth", UNSET))

        def _parse_filter_(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        filter_ = _parse_filter_(d.pop("filter", UNSET))

        def _parse_public_key(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        public_key = _parse_public_key(d.pop("public_key", UNSET))

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

        def _parse_state_changed_at(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        state_changed_at = _parse_state_changed_at(d.pop("state_changed_at", UNSET))

        def _parse_state_reason(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        state_reason = _parse_state_reason(d.pop("state_reason", UNSET))

        def _parse_tls(data: object) -> Union["EndpointTls", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                tls_type_1 = EndpointTls.from_dict(data)

                return tls_type_1
            except:  # noqa: E722
                pass
            return cast(Union["EndpointTls", None, Unset], data)

        tls = _parse_tls(d.pop("tls", UNSET))

        def _parse_transformation(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        transformation = _parse_transformation(d.pop("transformation", UNSET))

        def _parse_verification(data: object) -> Union["VerificationOut", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                verification_type_1 = VerificationOut.from_dict(data)

                return verification_type_1
            except:  # noqa: E722
                pass
            return cast(Union["VerificationOut", None, Unset], data)

        verification = _parse_verification(d.pop("verification", UNSET))

        endpoint = cls(
            app_id=app_id,
            channels=channels,
            created_at=created_at,
            description=description,
            event_types=event_types,
            final_status_codes=final_status_codes,
            headers=headers,
            id=id,
            on_dead_letter=on_dead_letter,
            ordered=ordered,
            sensitive_headers=sensitive_headers,
            signature_scheme=signature_scheme,
            signing_algorithm=signing_algorithm,
            state=state,
            updated_at=updated_at,
            url=url,
            attempt_timeout=attempt_timeout,
            auth=auth,
            filter_=filter_,
            public_key=public_key,
            rate_limit_per_sec=rate_limit_per_sec,
            retry_schedule=retry_schedule,
            secret=secret,
            state_changed_at=state_changed_at,
            state_reason=state_reason,
            tls=tls,
            transformation=transformation,
            verification=verification,
        )

        endpoint.additional_properties = d
        return endpoint

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
