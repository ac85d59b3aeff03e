from enum import Enum


class DeliveryStatus(str, Enum):
    FAILED = "failed"
    IN_FLIGHT = "in_flight"
    PENDING = "pending"
    SCHEDULED = "scheduled"
    SKIPPED = "skipped"
    SUCCEEDED = "succeeded"

    def __str__(self) -> str:
        return str(self.value)
