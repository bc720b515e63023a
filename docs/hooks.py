"""MkDocs hook: the package READMEs become pages, and links to repository files resolve.

Docs pages and READMEs link to each other by their real relative paths in the repository
(`../../packages/lamina-core/README.md` from `docs/layers/core.md`), so the links also work when
reading the files in a checkout. MkDocs only knows files under `docs/`, so this hook

- adds each `packages/<dist>/README.md` to the site as the page `packages/<dist>/README.md`;
- rewrites every relative `.md` link whose target lies outside `docs/`: to that page for a
  package README, to the home page for the repository's root README.

Any other link out of `docs/` is left alone, and `mkdocs build --strict` reports it.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Final

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

_LINK: Final = re.compile(r"(?P<head>\]\()(?P<target>[^)\s#:]+\.md)(?P<tail>#[^)\s]*)?\)")
"""An inline Markdown link to a relative `.md` path: `](path.md)` or `](path.md#anchor)`."""


def _mounts(config: MkDocsConfig) -> dict[Path, str]:
    """Repository files outside docs/ that the site shows, and the page that shows each."""
    root = Path(config.config_file_path).resolve().parent
    mounts = {root / "README.md": "index.md"}
    for readme in sorted(root.glob("packages/*/README.md")):
        mounts[readme] = f"packages/{readme.parent.name}/README.md"
    return mounts


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for path, uri in _mounts(config).items():
        if path.parent.parent.name == "packages":
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    source = page.file.abs_src_path
    if source is None:
        return markdown
    folder = Path(source).resolve().parent
    mounts = _mounts(config)
    page_dir = posixpath.dirname(page.file.src_uri)

    def rewrite(link: re.Match[str]) -> str:
        uri = mounts.get((folder / link["target"]).resolve())
        if uri is None:
            return link[0]
        return f"{link['head']}{posixpath.relpath(uri, page_dir or '.')}{link['tail'] or ''})"

    return _LINK.sub(rewrite, markdown)
