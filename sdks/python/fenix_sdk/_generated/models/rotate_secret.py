from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define

from ..models.signing_algorithm import SigningAlgorithm
from ..types import UNSET, Unset

T = TypeVar("T", bound="RotateSecret")


@_attrs_define
class RotateSecret:
    """
    Attributes:
        overlap_seconds (Union[None, Unset, int]):
        secret (Union[None, Unset, str]): Owner-supplied HMAC secret; `hmac` only.
        signing_algorithm (Union[None, SigningAlgorithm, Unset]):
    """

    overlap_seconds: Union[None, Unset, int] = UNSET
    secret: Union[None, Unset, str] = UNSET
    signing_algorithm: Union[None, SigningAlgorithm, Unset] = UNSET

    def to_dict(self) -> dict[str, Any]:
        overlap_seconds: Union[None, Unset, int]
        if isinstance(self.overlap_seconds, Unset):
            overlap_seconds = UNSET
        else:
            overlap_seconds = self.overlap_seconds

        secret: Union[None, Unset, str]
        if isinstance(self.secret, Unset):
            secret = UNSET
        else:
            secret = self.secret

        signing_algorithm: Union[None, Unset, str]
        if isinstance(self.signing_algorithm, Unset):
            signing_algorithm = UNSET
        elif isinstance(self.signing_algorithm, SigningAlgorithm):
            signing_algorithm = self.signing_algorithm.value
        else:
            signing_algorithm = self.signing_algorithm

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if overlap_seconds is not UNSET:
            field_dict["overlap_seconds"] = overlap_seconds
        if secret is not UNSET:
            field_dict["secret"] = secret
        if signing_algorithm is not UNSET:
            field_dict["signing_algorithm"] = signing_algorithm

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_overlap_seconds(data: object) -> Union[None, Unset, int]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int], data)

        overlap_seconds = _parse_overlap_seconds(d.pop("overlap_seconds", UNSET))

        def _parse_secret(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        secret = _parse_secret(d.pop("secret", UNSET))

        def _parse_signing_algorithm(
            data: object,
        ) -> Union[None, SigningAlgorithm, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                signing_algorithm_type_1 = SigningAlgorithm(data)

                return signing_algorithm_type_1
            except:  # noqa: E722
                pass
            return cast(Union[None, SigningAlgorithm, Unset], data)

        signing_algorithm = _parse_signing_algorithm(d.pop("signing_algorithm", UNSET))

        rotate_secret = cls(
            overlap_seconds=overlap_seconds,
            secret=secret,
            signing_algorithm=signing_algorithm,
        )

        return rotate_secret
