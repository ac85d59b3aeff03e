from enum import Enum


class EndpointState(str, Enum):
    ACTIVE = "active"
    DISABLED = "disabled"
    PAUSED = "paused"
    PENDING_VERIFICATION = "pending_verification"

    def __str__(self) -> str:
        return str(self.value)
