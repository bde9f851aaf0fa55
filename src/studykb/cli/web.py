"""The web view: ``studykb serve`` (a local app) and ``studykb site`` (static pages)."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import click

from studykb.cli.app import Context, cli, emit_json, json_option, safe
from studykb.errors import StudyError, UsageError


@cli.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    help="Port on 127.0.0.1 (default: a free one).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the start page in a browser.")
@click.pass_obj
def serve(obj: Context, port: int, open_browser: bool) -> None:
    """Browse the vault in a web browser: documents, plans, topics, search, the graph.

    Listens on 127.0.0.1 only. Pages update themselves when a note is saved (the
    server watches the vault as `studykb watch` does). Mark buttons write the note as
    `studykb mark` does. Ctrl-C stops.

    \b
    Example:
      studykb serve --open
      studykb --vault ~/notes serve --port 8765
    """
    # deferred: loads frontmatter, jinja2, markdown_it, mdit_py_plugins, msgpack, starlette, yaml
    from studykb.web.app import create_app

    # deferred: loads asyncio (not for a site: about 30 ms of its start)
    from studykb.web.live import Hub, watch_owned, watch_source

    # deferred: loads uvicorn, watchfiles
    from studykb.web.server import HOST, Server, bind

    kb = obj.kb()
    owned = watch_owned(kb)
    if not owned:
        kb.sync_search(quiet=True)
    lock, hub = threading.Lock(), Hub()
    app = create_app(kb, source=watch_source(kb, lock, index=not owned), lock=lock, hub=hub)
    try:
        sock = bind(port)
    except OSError as exc:
        raise StudyError(
            f"cannot listen on {HOST}:{port}: {exc.strerror or exc}",
            hint="Choose another --port, or leave it out for a free one.",
        ) from None
    url = f"http://{HOST}:{sock.getsockname()[1]}/"
    click.echo(safe(f"studykb: serving {kb.root} at {url} (Ctrl-C stops)"))
    if open_browser:
        # deferred: only `--open` starts a browser
        import webbrowser

        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    with contextlib.suppress(KeyboardInterrupt):
        Server(app, hub).run(sockets=[sock])
    click.echo("studykb: stopped serving")


@cli.command()
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("public"),
    show_default=True,
    help="Folder to write the site to.",
)
@click.option(
    "--base-url",
    help="The address the site will be published at (canonical "
    "links and sitemap.xml; links stay relative).",
)
@json_option
@click.pass_obj
def site(obj: Context, output: Path, base_url: str | None, as_json: bool) -> None:
    """Write the web view as a static site, for GitHub Pages or any web host.

    Every document, topic, list and course page, a reading plan for every topic, the
    graph, and search that runs in the browser. A second run rewrites only the files
    whose content changed.

    \b
    Example:
      studykb site -o public/
      studykb site -o public/ --base-url https://me.github.io/notes/
    """
    # deferred: loads Stemmer, frontmatter, jinja2, msgpack, yaml
    from studykb.web.site import build_site

    if base_url and not base_url.lower().startswith(("http://", "https://")):
        raise UsageError(f"--base-url must start with http:// or https:// (got {base_url!r})")
    # deferred: loaded with the site's code, for a site only
    from studykb.web.site_warm import steps

    kb = obj.kb(meanwhile=lambda kb: steps(kb, output))
    built = build_site(kb, output, base_url=base_url)
    if as_json:
        emit_json(
            {
                "output": str(output),
                "pages": built.pages,
                "files": built.files,
                "written": len(built.written),
                "removed": len(built.removed),
                "seconds": round(built.seconds, 3),
            }
        )
        return
    click.echo(
        safe(
            f"studykb: {built.pages} pages in {output}: {len(built.written)} files "
            f"written, {built.files - len(built.written)} unchanged, "
            f"{len(built.removed)} removed ({built.seconds:.1f} s)"
        )
    )
