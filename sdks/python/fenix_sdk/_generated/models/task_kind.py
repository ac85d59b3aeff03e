from enum import Enum


class TaskKind(str, Enum):
    CANCEL = "cancel"
    DELETE_APP = "delete_app"
    REPLAY = "replay"
    SKIP = "skip"

    def __str__(self) -> str:
        return str(self.value)
