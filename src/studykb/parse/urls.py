"""URL normalisation used to match a link against an entry's or course's ``url``."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit


def normalize_url(url: str) -> str:
    """Lower-case scheme and host, drop the fragment, ``utm_*`` parameters and a trailing ``/``."""
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme or not parts.netloc:
        return url.rstrip("/")
    query = parts.query
    if query:
        kept = [
            (k, v)
            for k, v in parse_qsl(query, keep_blank_values=True)
            if not k.lower().startswith("utm_")
        ]
        query = urlencode(kept)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, query, ""))
