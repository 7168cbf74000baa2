"""Read rendered HTML as a browser would (html.parser) and list everything in it that could run script."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

# Elements that run script, load active content, or change how the page or its links behave.
DANGEROUS_ELEMENTS = {
    "script",
    "style",
    "meta",
    "object",
    "embed",
    "form",
    "base",
    "link",
    "svg",
    "frame",
    "frameset",
    "applet",
    "template",
    "noscript",
    "textarea",
    "button",
    "select",
    "option",
    "portal",
    "param",
}
URL_ATTRIBUTES = {
    "href",
    "src",
    "action",
    "formaction",
    "xlink:href",
    "data",
    "poster",
    "srcset",
    "background",
}
IFRAME_HOSTS = {
    "www.youtube-nocookie.com",
    "platform.twitter.com",
    "speakerdeck.com",
    "www.slideshare.net",
    "codepen.io",
    "codesandbox.io",
    "stackblitz.com",
    "embed.figma.com",
    "www.docswell.com",
}


_ALIGN = re.compile(r"(text-align:\s*(left|right|center)\s*;?)?")


def script_hazards(html: str) -> list[str]:
    """Each element, attribute or URL in ``html`` that runs script (empty: the HTML is inert)."""
    finder = _HazardFinder()
    finder.feed(html)
    finder.close()
    return finder.hazards


def text_outside_code(html: str) -> str:
    """The text a reader sees, without the contents of <code> (where raw syntax is expected)."""
    finder = _HazardFinder()
    finder.feed(html)
    finder.close()
    return "".join(finder.text)


def _dangerous_url(element: str, attribute: str, value: str) -> bool:
    url = re.sub(r"[\x00-\x20]", "", value).lower()
    scheme = url.split(":", 1)[0] if re.match(r"^[a-z][a-z0-9+.-]*:", url) else ""
    if scheme in ("javascript", "vbscript", "file", "blob", "filesystem"):
        return True
    if scheme == "data":
        return not (
            element == "img" and attribute == "src" and re.match(r"data:image/(png|gif|jpeg|webp)[;,]", url)
        )
    return False


class _HazardFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hazards: list[str] = []
        self.text: list[str] = []
        self._code_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in DANGEROUS_ELEMENTS:
            self.hazards.append(f"<{tag}>")
        if tag == "code":
            self._code_depth += 1
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                self.hazards.append(f"<{tag} {name}>")
            elif name in ("srcdoc", "formaction", "action"):
                self.hazards.append(f"<{tag} {name}>")
            elif name == "style" and not re.fullmatch(
                r"(text-align:\s*(left|right|center)\s*;?)?", value.strip()
            ):
                # The one other style: a hidden <br> next to a link card (Zenn's own markup).
                if tag == "br" and re.fullmatch(r"display:\s*none;?", value.strip()):
                    continue
                self.hazards.append(f"<{tag} style={value!r}>")
            elif name in URL_ATTRIBUTES and _dangerous_url(tag, name, value):
                self.hazards.append(f"<{tag} {name}={value!r}>")
            elif (
                tag == "iframe"
                and name == "src"
                and (urlsplit(value).scheme != "https" or urlsplit(value).hostname not in IFRAME_HOSTS)
            ):
                self.hazards.append(f"<iframe src={value!r}>")
            elif name == "http-equiv":
                self.hazards.append(f"<{tag} http-equiv>")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag == "code":
            self._code_depth -= 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "code" and self._code_depth:
            self._code_depth -= 1

    def handle_data(self, data: str) -> None:
        if not self._code_depth:
            self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.hazards.append("<!-- comment -->")
