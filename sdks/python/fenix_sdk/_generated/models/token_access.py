from enum import Enum


class TokenAccess(str, Enum):
    ADMIN = "admin"
    MANAGE = "manage"
    READ = "read"

    def __str__(self) -> str:
        return str(self.value)
