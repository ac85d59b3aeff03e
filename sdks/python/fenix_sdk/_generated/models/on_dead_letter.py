from enum import Enum


class OnDeadLetter(str, Enum):
    BLOCK = "block"
    CONTINUE = "continue"

    def __str__(self) -> str:
        return str(self.value)
