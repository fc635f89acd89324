"""The static site: Jinja templates + inlined JS/GLSL/blobs -> self-contained HTML pages (see docs/internals.md, "Site")."""

from nilmbuild.site.build import PageSpec, build_site

__all__ = ["PageSpec", "build_site"]
