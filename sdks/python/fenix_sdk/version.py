"""The SDK's version, sent in `User-Agent`; kept equal to pyproject.toml's."""

__version__ = "0.1.0"
