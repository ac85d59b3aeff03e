from enum import Enum


class ReadyStatus(str, Enum):
    READY = "ready"
    UNAVAILABLE = "unavailable"

    def __str__(self) -> str:
        return str(self.value)
