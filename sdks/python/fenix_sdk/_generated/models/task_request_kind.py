from enum import Enum


class TaskRequestKind(str, Enum):
    CANCEL = "cancel"
    REPLAY = "replay"
    SKIP = "skip"

    def __str__(self) -> str:
        return str(self.value)
