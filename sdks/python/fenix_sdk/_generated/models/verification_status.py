from enum import Enum


class VerificationStatus(str, Enum):
    EXPIRED = "expired"
    PENDING = "pending"

    def __str__(self) -> str:
        return str(self.value)
