"""A cap on the retry-after a model server may ask for: an answer asking for a longer wait is
not retried (the SDKs would sleep that long: Anthropic's up to 49 days), so the call fails at
once as rate limited or unavailable, saying why."""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

NO_RETRY_HEADER = "x-should-retry"
"""Both SDKs obey this header of an answer before their own retry rules."""


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """The wait an answer's headers ask for, in seconds (`retry-after-ms`, else `retry-after`
    as seconds or as an HTTP date); None when they ask for none or it cannot be read."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except ValueError:
            continue
        return seconds if not math.isnan(seconds) else None
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        parsed = email.utils.parsedate_tz(value)
        return None if parsed is None else float(email.utils.mktime_tz(parsed) - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def over_cap(headers: Mapping[str, str], cap: float) -> float | None:
    """The retry-after `headers` ask for when it is over `cap` seconds, else None."""
    seconds = retry_after_seconds(headers)
    return seconds if seconds is not None and seconds > cap else None


def refuse_long_waits(cap: float) -> Callable[[Any], Awaitable[None]]:
    """An httpx response hook marking an answer whose retry-after is over `cap` seconds as not
    to be retried, so the SDK raises its error at once instead of sleeping."""

    async def hook(response: Any) -> None:
        if over_cap(response.headers, cap) is not None:
            response.headers[NO_RETRY_HEADER] = "false"

    return hook


def cap_note(headers: Mapping[str, str], cap: float) -> str:
    """What to add to an error's message when its answer asked for a wait over `cap` ("" when
    it did not)."""
    seconds = over_cap(headers, cap)
    if seconds is None:
        return ""
    return (
        f" (retry-after {seconds:g} s is over llm_max_retry_after, {cap:g} s:"
        " not waited for; raise it to wait longer)"
    )
