"""Reading a model server's retry-after: seconds, milliseconds, an HTTP date, or nothing."""

from __future__ import annotations

import email.utils
import time

from cairn.adapters.llm.retry_after import cap_note, over_cap, retry_after_seconds


def test_retry_after_is_read_as_seconds_milliseconds_or_a_date() -> None:
    assert retry_after_seconds({"retry-after": "100000"}) == 100000
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    in_an_hour = email.utils.formatdate(time.time() + 3600, usegmt=True)
    seconds = retry_after_seconds({"retry-after": in_an_hour})
    assert seconds is not None and 3000 < seconds <= 3601
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({"retry-after": "nan"}) is None
    assert retry_after_seconds({}) is None


def test_only_a_wait_over_the_cap_is_noted() -> None:
    assert over_cap({"retry-after": "61"}, 60) == 61
    assert over_cap({"retry-after": "60"}, 60) is None
    assert over_cap({"retry-after": "inf"}, 60) == float("inf")
    assert "retry-after 100000 s is over llm_max_retry_after, 60 s" in cap_note(
        {"retry-after": "100000"}, 60
    )
    assert cap_note({}, 60) == ""
