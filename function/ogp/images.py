"""Which image an article is shared with: ``ogpUrl``, the same in the read API, the feed and the outgoing
webhooks.

In order: the article's own ``thumbnail``; else a card made from the template ``OGP_IMAGE_URL_TEMPLATE``
(``{title}``, ``{slug}`` and ``{user}`` URL-encoded into it, e.g. an image service of the front end's own);
else a signed Cloudinary card with the title written on the base image (``CLOUDINARY_*``); else the
site-wide ``OGP_DEFAULT_IMAGE_URL``; else ``""``. Pure: no I/O, so a list of 500 summaries costs only
string work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol
from urllib.parse import quote

from function.ogp.cloudinary import CloudinaryCards


class OgpSettings(Protocol):
    """The settings the choice reads (``function.settings.Settings`` has them)."""

    @property
    def ogp_image_url_template(self) -> str | None: ...
    @property
    def ogp_default_image_url(self) -> str | None: ...
    @property
    def cloudinary_cloud_name(self) -> str | None: ...
    @property
    def cloudinary_ogp_public_id(self) -> str | None: ...
    @property
    def cloudinary_api_secret(self) -> str | None: ...


@dataclass(frozen=True)
class OgpImages:
    """The choice, configured: ``template`` (as ``shared.runtime_settings.ogp_template_problem``
    accepts it), ``cloudinary`` and ``default`` as the settings give them (None: not set)."""

    template: str | None = None
    cloudinary: CloudinaryCards | None = None
    default: str | None = None

    def url(self, *, user: str, slug: str, title: str, thumbnail: str | None) -> str:
        """The share image of the article ``slug`` of ``user``; ``""`` when nothing is configured and
        the article has no thumbnail."""
        if thumbnail:
            return thumbnail
        if self.template:
            return self.template.format(
                title=quote(title, safe=""), slug=quote(slug, safe=""), user=quote(user, safe="")
            )
        if self.cloudinary is not None:
            return self.cloudinary.url(title)
        return self.default or ""


def ogp_images(settings: OgpSettings) -> OgpImages:
    """The choice as ``settings`` configure it."""
    cloudinary = None
    if (
        settings.cloudinary_cloud_name
        and settings.cloudinary_ogp_public_id
        and settings.cloudinary_api_secret
    ):
        cloudinary = CloudinaryCards(
            settings.cloudinary_cloud_name, settings.cloudinary_ogp_public_id, settings.cloudinary_api_secret
        )
    return OgpImages(settings.ogp_image_url_template, cloudinary, settings.ogp_default_image_url)
