from enum import Enum


class Access(str, Enum):
    MANAGE = "manage"
    READ = "read"

    def __str__(self) -> str:
        return str(self.value)
