"""The list of pages. Page authors: append your PageSpec in :func:`page_specs` (in navigation order).

``capture_bytes_by_page[slug]`` holds the blobs (name -> bytes) the capture step produced for that page.
"""

from __future__ import annotations

from nilmbuild.site.build import PageSpec


def capture_for_site(checkpoint: str | None, source: str) -> tuple[dict[str, dict[str, bytes]], dict]:
    """Run the fixed example batch and return (blobs per page slug, meta for the footer).

    Placeholder until the capture step is wired in: no blobs, provenance from the arguments.
    """
    meta = {"checkpoint": checkpoint or "default (shipped)", "data_source": source}
    return {}, meta


def page_specs(capture_bytes_by_page: dict[str, dict[str, bytes]], meta: dict) -> list[PageSpec]:
    """All pages of the site, index first, in navigation order."""
    pages = [
        PageSpec(
            slug="index",
            title="Overview",
            template="index.html",
            vendor=(),
            summary="What NILMFormer does, and a map of the pages that show each of its stages.",
        ),
    ]
    return pages
