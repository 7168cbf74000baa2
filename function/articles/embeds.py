"""Zenn's ``@[service](id or URL)`` embeds and bare-URL link cards, as HTML that never needs a fetch.

An embed becomes an ``<iframe>`` only when its argument has the exact form that service documents (ids
checked character by character); the iframe's ``src`` is then one of the forms in ``IFRAME_SOURCES``, the
same table the sanitizer uses to keep or drop an iframe's ``src``. Anything else becomes a plain link to the
URL the author gave (when it is an http(s) URL) or, for a bad id, the id as text: never a broken
"@" + link. Services that only embed through a script of theirs (GitHub files, Gists) are link cards.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qs, quote, urlsplit

from markdown_it.common.utils import escapeHtml

# host -> the whole iframe src allowed for it. Every generator below produces only these forms.
IFRAME_SOURCES: dict[str, re.Pattern[str]] = {
    "www.youtube-nocookie.com": re.compile(
        r"https://www\.youtube-nocookie\.com/embed/[A-Za-z0-9_-]{11}(?:\?start=\d{1,6})?"
    ),
    "platform.twitter.com": re.compile(r"https://platform\.twitter\.com/embed/Tweet\.html\?id=\d{1,25}"),
    "speakerdeck.com": re.compile(r"https://speakerdeck\.com/player/[A-Za-z0-9_-]{1,64}(?:\?slide=\d{1,4})?"),
    "www.slideshare.net": re.compile(
        r"https://www\.slideshare\.net/slideshow/embed_code/key/[A-Za-z0-9_-]{1,64}"
    ),
    "codepen.io": re.compile(
        r"https://codepen\.io/[A-Za-z0-9_-]{1,64}/embed/[A-Za-z0-9_-]{1,64}(?:\?default-tab=[a-z,]{1,32})?"
    ),
    "codesandbox.io": re.compile(
        r"https://codesandbox\.io/embed/[A-Za-z0-9_.-]{1,128}(?:\?[\w.=&%,+-]{0,256})?"
    ),
    "stackblitz.com": re.compile(
        r"https://stackblitz\.com/(?:edit|github)/[A-Za-z0-9_.@/-]{1,200}\?embed=1(?:&[\w./=%-]{0,200})*"
    ),
    "www.docswell.com": re.compile(
        r"https://www\.docswell\.com/slide/[A-Za-z0-9_-]{1,64}/embed(?:#p\d{1,4})?"
    ),
    "embed.figma.com": re.compile(
        r"https://embed\.figma\.com/(?:file|proto|design|board|slides|deck)/[0-9A-Za-z]{22,128}"
        r"(?:/[\w.-]{1,200})?\?embed-host=blog-api(?:&[\w.=%-]{0,200})*"
    ),
}

MAX_EMBED_ARG_CHARS = 2048


@dataclass(frozen=True)
class IframePolicy:
    """What an embed's iframe may do, fixed per host (the sanitizer drops the author's own values)."""

    allow: str
    sandbox: str
    referrerpolicy: str = "strict-origin-when-cross-origin"


_PLAYER = "allow-scripts allow-same-origin allow-popups allow-presentation"
_PLAYGROUND = "allow-scripts allow-same-origin allow-popups allow-forms allow-modals"
IFRAME_POLICIES: dict[str, IframePolicy] = {
    "www.youtube-nocookie.com": IframePolicy(
        "accelerometer; clipboard-write; encrypted-media; gyroscope; picture-in-picture; fullscreen", _PLAYER
    ),
    "platform.twitter.com": IframePolicy("", "allow-scripts allow-same-origin allow-popups"),
    "speakerdeck.com": IframePolicy("encrypted-media; fullscreen", _PLAYER),
    "www.slideshare.net": IframePolicy("fullscreen", _PLAYER),
    "www.docswell.com": IframePolicy("fullscreen", _PLAYER),
    # No camera, microphone, geolocation, payment or USB for code playgrounds, whatever the author asks.
    "codepen.io": IframePolicy("clipboard-write", _PLAYGROUND),
    "codesandbox.io": IframePolicy("clipboard-write", _PLAYGROUND),
    "stackblitz.com": IframePolicy("clipboard-write", _PLAYGROUND),
    "embed.figma.com": IframePolicy(
        "clipboard-write; fullscreen", "allow-scripts allow-same-origin allow-popups"
    ),
}
# An iframe whose src was dropped (not an embed form) is kept inert.
NO_EMBED_POLICY = IframePolicy("", "", "no-referrer")


def iframe_policy(src: str | None) -> IframePolicy:
    """The fixed policy for an iframe showing ``src`` (already checked by ``is_allowed_iframe_src``)."""
    if not src or not is_allowed_iframe_src(src):
        return NO_EMBED_POLICY
    return IFRAME_POLICIES[urlsplit(src).hostname or ""]


def is_allowed_iframe_src(src: str) -> bool:
    """True when ``src`` is https on an allowlisted host and has that host's embed form."""
    try:
        host = urlsplit(src).hostname
    except ValueError:
        return False
    pattern = IFRAME_SOURCES.get(host or "")
    return pattern is not None and pattern.fullmatch(src) is not None


def embed_html(service: str, arg: str) -> str | None:
    """HTML for ``@[service](arg)``; None when ``service`` is not an embed (the line stays Markdown)."""
    render = _EMBEDS.get(service)
    if render is None:
        return None
    arg = arg.strip()
    html = render(arg) if len(arg) <= MAX_EMBED_ARG_CHARS else None
    return html if html is not None else _fallback(arg)


def card_html(href: str, text: str) -> str:
    """A bare URL alone on its line: a YouTube or tweet URL embeds, anything else is a link card."""
    for render in (_youtube_from_url, _tweet):
        html = render(href)
        if html is not None:
            return html
    return link_card(href, text)


def link_card(href: str, text: str | None = None) -> str:
    """An anchor the front end styles as a card; its text is the URL (nothing is fetched)."""
    return f'<a class="link-card" href="{escapeHtml(href)}">{escapeHtml(text or href)}</a>'


# --- services ---------------------------------------------------------------------------------------

_YOUTUBE_ID = re.compile(r"[A-Za-z0-9_-]{11}")
_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}")
_TWEET = re.compile(
    r"https://(?:www\.)?(?:twitter|x)\.com/[A-Za-z0-9_]{1,15}/status/(\d{1,25})(?:\?[\w=&-]*)?"
)
# Zenn's form: any file name after ?file= (a card shows only the escaped URL, so any is safe).
_GIST = re.compile(
    r"https://gist\.github\.com/[A-Za-z0-9-]{1,39}/[A-Za-z0-9]{1,32}(?:/[A-Za-z0-9]{1,64})?"
    r"(?:\?file=[^\s\"'<>`]{1,200})?"
)
_GITHUB = re.compile(
    r"https://github\.com/[A-Za-z0-9-]{1,39}/[A-Za-z0-9._-]{1,100}/blob/[^\s?#]{1,1000}(?:#L\d+(?:-L\d+)?)?"
)
_CODEPEN = re.compile(
    r"https://codepen\.io/([A-Za-z0-9_-]{1,64})/(?:pen|embed)/([A-Za-z0-9_-]{1,64})/?(?:\?.*)?"
)
_DOCSWELL = re.compile(
    r"https://www\.docswell\.com/s/[A-Za-z0-9_-]{1,64}/(?P<id>[A-Za-z0-9_]{1,64})(?:-[A-Za-z0-9_-]{0,200})?"
    r"(?:/(?P<page>\d{1,4}))?(?P<hash>#p\d{1,4})?"
)
_DOCSWELL_EMBED = re.compile(
    r"https://www\.docswell\.com/slide/(?P<id>[A-Za-z0-9_-]{1,64})/embed(?P<hash>#p\d{1,4})?"
)
_CODESANDBOX = re.compile(r"https://codesandbox\.io/embed/[A-Za-z0-9_.-]{1,128}(?:\?[\w.=&%,+-]{0,256})?")
_STACKBLITZ = re.compile(
    r"https://stackblitz\.com/((?:edit|github)/[A-Za-z0-9_.@/-]{1,200})(?:\?([\w./=&%-]{0,200}))?"
)
_FIGMA = re.compile(
    r"https://(?:www\.|embed\.)?figma\.com/(file|proto|design|board|slides|deck)/([0-9A-Za-z]{22,128})"
    r"(/[\w.-]{1,200})?(?:\?([\w.=&%-]{0,200}))?"
)


def _iframe(service: str, src: str) -> str:
    # allow/sandbox/referrerpolicy are added by the sanitizer from IFRAME_POLICIES, for every iframe.
    assert is_allowed_iframe_src(src), src  # the generators and the allowlist must agree
    return (
        f'<span class="embed-block embed-{service}"><iframe src="{escapeHtml(src)}"'
        ' loading="lazy" allowfullscreen></iframe></span>'
    )


def _youtube(arg: str) -> str | None:
    if _YOUTUBE_ID.fullmatch(arg):
        return _iframe("youtube", f"https://www.youtube-nocookie.com/embed/{arg}")
    return _youtube_from_url(arg)


def _youtube_from_url(url: str) -> str | None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https"):
        return None
    query = parse_qs(parts.query)
    if parts.hostname == "youtu.be":
        video = parts.path.strip("/")
    elif parts.hostname in ("youtube.com", "www.youtube.com", "m.youtube.com") and parts.path == "/watch":
        video = (query.get("v") or [""])[0]
    else:
        return None
    if not _YOUTUBE_ID.fullmatch(video):
        return None
    start = _small_number((query.get("t") or [""])[0].removesuffix("s"), 6)
    suffix = f"?start={min(start, 48 * 3600)}" if start is not None else ""
    return _iframe("youtube", f"https://www.youtube-nocookie.com/embed/{video}{suffix}")


def _small_number(text: str, digits: int) -> int | None:
    """``text`` as a whole number when it is 1 to ``digits`` ASCII digits, else None. ``isdigit`` is not
    enough: it is true for "²" (which ``int`` refuses) and for Arabic-Indic digits (which the iframe
    allowlist refuses)."""
    if 0 < len(text) <= digits and text.isascii() and text.isdecimal():
        return int(text)
    return None


def _tweet(arg: str) -> str | None:
    match = _TWEET.fullmatch(arg)
    if not match:
        return None
    return _iframe("tweet", f"https://platform.twitter.com/embed/Tweet.html?id={match[1]}")


def _speakerdeck(arg: str) -> str | None:
    key, _, slide = arg.partition("?slide=")
    number = _small_number(slide, 4)
    if not _KEY.fullmatch(key) or (slide and number is None):
        return None
    suffix = f"?slide={slide}" if slide else ""
    return _iframe("speakerdeck", f"https://speakerdeck.com/player/{key}{suffix}")


def _slideshare(arg: str) -> str | None:
    if not _KEY.fullmatch(arg):
        return None
    return _iframe("slideshare", f"https://www.slideshare.net/slideshow/embed_code/key/{arg}")


def _docswell(arg: str) -> str | None:
    # Zenn's two forms: a slide's page (/s/USER/ID-title[/N][#pN]) or its embed URL (/slide/ID/embed[#pN]).
    match = _DOCSWELL.fullmatch(arg) or _DOCSWELL_EMBED.fullmatch(arg)
    if not match:
        return None
    page = match["hash"] or (f"#p{match['page']}" if match.groupdict().get("page") else "")
    return _iframe("docswell", f"https://www.docswell.com/slide/{match['id']}/embed{page}")


def _codepen(arg: str) -> str | None:
    match = _CODEPEN.fullmatch(arg)
    if not match:
        return None
    return _iframe("codepen", f"https://codepen.io/{match[1]}/embed/{match[2]}?default-tab=result")


def _codesandbox(arg: str) -> str | None:
    if not _CODESANDBOX.fullmatch(arg):
        return None
    return _iframe("codesandbox", arg)


def _stackblitz(arg: str) -> str | None:
    match = _STACKBLITZ.fullmatch(arg)
    if not match:
        return None
    # embed=1 shows the embed view; ctl=1 waits for a click before running anything (as Zenn forces).
    params = [p for p in (match[2] or "").split("&") if p and not p.startswith(("embed=", "ctl="))]
    return _iframe(
        "stackblitz", f"https://stackblitz.com/{match[1]}?" + "&".join(["embed=1", "ctl=1", *params])
    )


def _figma(arg: str) -> str | None:
    match = _FIGMA.fullmatch(arg)
    if not match:
        return None
    kind = "design" if match[1] == "file" else match[1]
    params = [
        p for p in (match[4] or "").split("&") if p and not p.startswith(("embed-host=", "embed_host="))
    ]
    src = f"https://embed.figma.com/{kind}/{match[2]}{match[3] or ''}?" + "&".join(
        ["embed-host=blog-api", *params]
    )
    return _iframe("figma", src)


def _card_if(pattern: re.Pattern[str]) -> Callable[[str], str | None]:
    def render(arg: str) -> str | None:
        return link_card(arg) if pattern.fullmatch(arg) else None

    return render


def _card(arg: str) -> str | None:
    return link_card(arg) if _is_http_url(arg) else None


_EMBEDS: dict[str, Callable[[str], str | None]] = {
    "youtube": _youtube,
    "tweet": _tweet,
    "x": _tweet,
    "gist": _card_if(_GIST),
    "github": _card_if(_GITHUB),
    "speakerdeck": _speakerdeck,
    "slideshare": _slideshare,
    "docswell": _docswell,
    "codepen": _codepen,
    "codesandbox": _codesandbox,
    "stackblitz": _stackblitz,
    "figma": _figma,
    "card": _card,
}

EMBED_SERVICES = tuple(_EMBEDS)


def _is_http_url(value: str) -> bool:
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc) and not re.search(r"[\s\"'<>`]", value)


def _fallback(arg: str) -> str:
    if _is_http_url(arg):
        href = escapeHtml(quote(arg, safe="/:?#[]@!$&'()*+,;=%~-._"))
        return f'<p><a href="{href}">{escapeHtml(arg)}</a></p>'
    return f'<p class="embed-invalid">{escapeHtml(arg)}</p>'
