"""Every signature vector in sdks/vectors.json (made by fenix-signing) verifies or fails as it says."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fenix_sdk import Webhook, WebhookVerificationError

VECTORS_PATH = Path(os.environ.get("FENIX_VECTORS", Path(__file__).resolve().parents[2] / "vectors.json"))
DOCUMENT = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
# A vector's reason, as WebhookVerificationError.reason says it: a wrong key and an
# altered body look the same to a receiver (no signature matches).
REASONS = {"tampered_body": "no_match", "wrong_key": "no_match"}


def test_the_vectors_use_the_default_tolerance():
    assert DOCUMENT["tolerance_seconds"] == 300
    assert len(DOCUMENT["vectors"]) > 0


@pytest.mark.parametrize("vector", DOCUMENT["vectors"], ids=lambda vector: vector["name"])
def test_each_vector_verifies_or_fails_as_it_says(vector):
    webhook = Webhook(vector["key"], tolerance=DOCUMENT["tolerance_seconds"])
    if vector["valid"]:
        event = webhook.verify(vector["body"], vector["headers"], now=vector["now"])
        assert event == json.loads(vector["body"])
    else:
        with pytest.raises(WebhookVerificationError) as refused:
            webhook.verify(vector["body"], vector["headers"], now=vector["now"])
        assert refused.value.reason == REASONS.get(vector["error"], vector["error"])


@pytest.mark.parametrize("vector", [v for v in DOCUMENT["vectors"] if v["valid"]][:4], ids=lambda v: v["name"])
def test_headers_are_read_in_any_case_and_the_body_as_bytes(vector):
    headers = {name.title(): value for name, value in vector["headers"].items()}
    event = Webhook(vector["key"]).verify(vector["body"].encode(), headers, now=vector["now"])
    assert event == json.loads(vector["body"])


def test_a_receiver_holding_the_old_and_the_new_key_verifies_with_either():
    vector = next(v for v in DOCUMENT["vectors"] if v["name"] == "fenix-v1/hmac/valid")
    other = "whsec_ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoM="
    assert Webhook([other, vector["key"]]).verify(vector["body"], vector["headers"], now=vector["now"])
    with pytest.raises(WebhookVerificationError):
        Webhook([other]).verify(vector["body"], vector["headers"], now=vector["now"])


def test_a_key_that_is_neither_a_secret_nor_a_public_key_is_refused():
    with pytest.raises(ValueError):
        Webhook("not-a-key")
    with pytest.raises(ValueError):
        Webhook("whpk_AAAA")
