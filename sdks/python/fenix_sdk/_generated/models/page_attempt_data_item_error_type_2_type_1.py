from enum import Enum


class PageAttemptDataItemErrorType2Type1(str, Enum):
    AUTH_TOKEN = "auth_token"
    CHALLENGE_MISMATCH = "challenge_mismatch"
    CLIENT_CERTIFICATE = "client_certificate"
    CONNECT = "connect"
    DESTINATION_BLOCKED = "destination_blocked"
    DNS = "dns"
    HTTP_STATUS = "http_status"
    NO_SECRET = "no_secret"
    PROXY = "proxy"
    REDIRECT = "redirect"
    REQUEST = "request"
    RESPONSE_BODY = "response_body"
    SEALED_HEADER = "sealed_header"
    SIGNING = "signing"
    TIMEOUT = "timeout"
    TLS = "tls"
    TRANSFORMATION_FAILED = "transformation_failed"

    def __str__(self) -> str:
        return str(self.value)
