from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.endpoint_state import EndpointState
from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointStats")


@_attrs_define
class EndpointStats:
    """An endpoint's health over a window. Fields in the order docs/api.md shows
    them, like every answer: the endpoint and its state, the window, then counts.

        Attributes:
            attempts (int):
            client_certificate_expires_soon (bool): Whether that certificate expires within 14 days (rotate it:
                `…/tls/rotate`).
            dead_letter (int): Deliveries that failed for good (`failed`).
            endpoint_id (str):
            failures (int):
            since (str): Start of the window (RFC 3339).
            skipped (int): Deliveries skipped while the endpoint was paused or disabled.
            state (EndpointState):
            successes (int):
            window_seconds (int):
            client_certificate_expires_at (Union[None, Unset, str]): When the endpoint's client certificate (mTLS) expires;
                `null`: it has none.
            state_reason (Union[None, Unset, str]):
            success_rate (Union[None, Unset, float]): successes / attempts; null without attempts.
    """

    attempts: int
    client_certificate_expires_soon: bool
    dead_letter: int
    endpoint_id: str
    failures: int
    since: str
    skipped: int
    state: EndpointState
    successes: int
    window_seconds: int
    client_certificate_expires_at: Union[None, Unset, str] = UNSET
    state_reason: Union[None, Unset, str] = UNSET
    success_rate: Union[None, Unset, float] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        client_certificate_expires_soon = self.client_certificate_expires_soon

        dead_letter = self.dead_letter

        endpoint_id = self.endpoint_id

        failures = self.failures

        since = self.since

        skipped = self.skipped

        state = self.state.value

        successes = self.successes

        window_seconds = self.window_seconds

        client_certificate_expires_at: Union[None, Unset, str]
        if isinstance(self.client_certificate_expires_at, Unset):
            client_certificate_expires_at = UNSET
        else:
            client_certificate_expires_at = self.client_certificate_expires_at

        state_reason: Union[None, Unset, str]
        if isinstance(self.state_reason, Unset):
            state_reason = UNSET
        else:
            state_reason = self.state_reason

        success_rate: Union[None, Unset, float]
        if isinstance(self.success_rate, Unset):
            success_rate = UNSET
        else:
            success_rate = self.success_rate

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "client_certificate_expires_soon": client_certificate_expires_soon,
                "dead_letter": dead_letter,
                "endpoint_id": endpoint_id,
                "failures": failures,
                "since": since,
                "skipped": skipped,
                "state": state,
                "successes": successes,
                "window_seconds": window_seconds,
            }
        )
        if client_certificate_expires_at is not UNSET:
            field_dict["client_certificate_expires_at"] = client_certificate_expires_at
        if state_reason is not UNSET:
            field_dict["state_reason"] = state_reason
        if success_rate is not UNSET:
            field_dict["success_rate"] = success_rate

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempts = d.pop("attempts")

        client_certificate_expires_soon = d.pop("client_certificate_expires_soon")

        dead_letter = d.pop("dead_letter")

        endpoint_id = d.pop("endpoint_id")

        failures = d.pop("failures")

        since = d.pop("since")

        skipped = d.pop("skipped")

        state = EndpointState(d.pop("state"))

        successes = d.pop("successes")

        window_seconds = d.pop("window_seconds")

        def _parse_client_certificate_expires_at(
            data: object,
        ) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        client_certificate_expires_at = _parse_client_certificate_expires_at(
            d.pop("client_certificate_expires_at", UNSET)
        )

        def _parse_state_reason(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        state_reason = _parse_state_reason(d.pop("state_reason", UNSET))

        def _parse_success_rate(data: object) -> Union[None, Unset, float]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, float], data)

        success_rate = _parse_success_rate(d.pop("success_rate", UNSET))

        endpoint_stats = cls(
            attempts=attempts,
            client_certificate_expires_soon=client_certificate_expires_soon,
            dead_letter=dead_letter,
            endpoint_id=endpoint_id,
            failures=failures,
            since=since,
            skipped=skipped,
            state=state,
            successes=successes,
            window_seconds=window_seconds,
            client_certificate_expires_at=client_certificate_expires_at,
            state_reason=state_reason,
            success_rate=success_rate,
        )

        endpoint_stats.additional_properties = d
        return endpoint_stats

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
