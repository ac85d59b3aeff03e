from enum import Enum


class SigningAlgorithm(str, Enum):
    ED25519 = "ed25519"
    HMAC = "hmac"

    def __str__(self) -> str:
        return str(self.value)
