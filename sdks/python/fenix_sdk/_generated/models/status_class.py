from enum import Enum


class StatusClass(str, Enum):
    NETWORK = "network"
    VALUE_0 = "4xx"
    VALUE_1 = "5xx"

    def __str__(self) -> str:
        return str(self.value)
