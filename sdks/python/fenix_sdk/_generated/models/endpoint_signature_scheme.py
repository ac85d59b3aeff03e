from enum import Enum


class EndpointSignatureScheme(str, Enum):
    FENIX_V1 = "fenix-v1"
    STANDARD_WEBHOOKS = "standard-webhooks"

    def __str__(self) -> str:
        return str(self.value)
