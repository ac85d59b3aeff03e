from enum import Enum


class AttemptErrorType3Type1(str, Enum):
    CHALLENGE_MISMATCH = "challenge_mismatch"
    CONNECT = "connect"
    DESTINATION_BLOCKED = "destination_blocked"
    DNS = "dns"
    HTTP_STATUS = "http_status"
    NO_SECRET = "no_secret"
    REDIRECT = "redirect"
    REQUEST = "request"
    RESPONSE_BODY = "response_body"
    SEALED_HEADER = "sealed_header"
    SIGNING = "signing"
    TIMEOUT = "timeout"
    TLS = "tls"

    def __str__(self) -> str:
        return str(self.value)
