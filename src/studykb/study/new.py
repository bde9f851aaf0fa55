"""Creating a document from a template: ``studykb new TYPE TITLE``.

A template is a Markdown file with ``{{name}}`` placeholders: ``id``, ``title``, ``type``,
``date``, ``tags``, ``requires``, ``url``. In the front matter a placeholder becomes a
YAML (or TOML) value, quoted where needed; in the body it becomes plain text. Any other
``{{name}}`` is left as written, with a warning naming the template's line (a typo such
as ``{{titel}}`` gets a "did you mean"). The built-in templates are package data
(``studykb/templates/TYPE.md``); a vault overrides one by putting ``TYPE.md`` in the
folder named by ``templates`` in studykb.toml (default ``.studykb-templates/``).

Daily notes (``new note --today``, or ``--date`` for another day) go to
``journal/DATE.md`` from the ``journal`` template; asking for one that exists gives the
existing file, as zk and Obsidian do.

The file is written atomically and never over an existing one, with the mode the
user's umask gives, and never through a folder that is a link out of the vault
(:func:`studykb.vault.files.create`).
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from studykb.config import Config
from studykb.errors import StudyError, UsageError
from studykb.model import JOURNAL  # where daily notes live; also their template's name
from studykb.parse import zola_keys
from studykb.parse.frontmatter import split
from studykb.parse.site_keys import owns_keys
from studykb.vault import files
from studykb.vault.flavour import detect
from studykb.vault.resolve import ID, fold

if TYPE_CHECKING:
    from studykb.vault import Vault

#: Where each type of document lives, relative to the vault.
FOLDERS = MappingProxyType(
    {
        "note": "notes",
        "entry": "notes/entries",
        "topic": "notes/topics",
        "list": "notes/lists",
        "course": "courses",
    }
)
#: The placeholders a template may use.
PLACEHOLDERS = ("id", "title", "type", "date", "tags", "requires", "url")
#: Types whose front matter has a ``url`` (see the vault format).
URL_TYPES = ("entry", "course")
PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_PLAIN_YAML = re.compile(r"^[A-Za-z_][\w.\-/ ]*$")
_YAML_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "none", "~", "y", "n"})
MAX_SLUG = 64


@dataclass(frozen=True)
class NewDoc:
    """What to create; filled by the CLI in one place."""

    type: str
    """One of :data:`FOLDERS`."""
    title: str
    """The title as the user wrote it."""
    id: str | None = None
    """The id (and file name); derived from the title when None."""
    tags: tuple[str, ...] = ()
    """Tags (for an entry: the topics it covers)."""
    requires: tuple[str, ...] = ()
    """Prerequisites, as references."""
    url: str | None = None
    """The resource's address (entries and courses)."""
    date: dt.date = field(default_factory=dt.date.today)
    """The document's date (today)."""
    daily: bool = False
    """A daily note: ``journal/DATE.md``, kept when it exists already."""


@dataclass(frozen=True)
class Created:
    """A file ``new`` wrote."""

    path: str
    """Vault-relative path."""
    file: Path
    """Absolute path."""
    id: str
    template: str
    """Where the template came from: a vault path, or ``built-in``."""
    existed: bool = False
    """The daily note was there already (nothing was written)."""
    warnings: tuple[str, ...] = ()
    """What the user should know (an unknown placeholder in the template)."""


def slugify(title: str) -> str:
    """A file-name-safe id: lower-case ASCII words joined by ``-``; Chinese becomes pinyin."""
    text = title
    if re.search(r"[\u3400-\u9fff\uf900-\ufaff]", text):
        # deferred: pypinyin loads only to spell Chinese names
        from pypinyin import lazy_pinyin

        text = " ".join(lazy_pinyin(text))
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if len(slug) > MAX_SLUG:
        slug = slug[:MAX_SLUG].rsplit("-", 1)[0] or slug[:MAX_SLUG]
    return slug


#: File names longer than this many bytes (with ``.md``) are refused by most file systems.
MAX_NAME_BYTES = 255


def check_id(doc_id: str) -> str:
    """An id given with ``--id`` must be usable as a file name."""
    doc_id = doc_id.strip()
    if len(doc_id.encode("utf-8", "surrogatepass")) + 3 > MAX_NAME_BYTES:
        raise UsageError(
            f"--id is {len(doc_id.encode('utf-8', 'surrogatepass'))} bytes long; "
            f"a file name may have at most {MAX_NAME_BYTES - 3} (with .md).",
            hint="Use a shorter id, e.g. --id tensor-parallelism.",
        )
    if not doc_id or doc_id in (".", "..") or re.search(r'[/\\:*?"<>|\x00-\x1f]', doc_id):
        raise UsageError(
            f"--id {doc_id!r} cannot be a file name.",
            hint="Use letters, digits and '-', e.g. --id tensor-parallelism.",
        )
    if doc_id.startswith("."):
        raise UsageError(f"--id {doc_id!r} would be a hidden file, which studykb does not read.")
    return doc_id


def template_text(config: Config, doc_type: str) -> tuple[str, str]:
    """(text, origin) of the template for ``doc_type``: the vault's override, else built-in."""
    override = config.root / config.templates / f"{doc_type}.md"
    if override.is_file():
        shown = override.relative_to(config.root).as_posix()  # templates is inside
        real = Path(os.path.realpath(override))
        if not any(real.is_relative_to(base) for base in _readable(config)):
            raise StudyError(
                f"the template {shown} leads to {real}, outside the vault; not read.",
                hint="Put the template itself in the vault (or name its folder in allow_outside).",
            )
        try:
            return override.read_text(encoding="utf-8-sig"), shown
        except (OSError, UnicodeDecodeError) as exc:
            raise StudyError(f"cannot read template {shown}: {exc}") from None
    text = (resources.files("studykb") / "templates" / f"{doc_type}.md").read_text(encoding="utf-8")
    return text, "built-in"


def _readable(config: Config) -> list[Path]:
    """The folders a template may be read from: the vault's, and those the user allowed
    links to lead to (as for notes: a link out of the vault is not followed)."""
    return [Path(os.path.realpath(config.root)), *config.allow_outside]


def render(
    template: str,
    values: dict[str, str | list[str] | None],
    site_owned: bool = False,
    zola_path: str | None = None,
) -> str:
    """Fill ``{{name}}`` placeholders; front-matter values are written as YAML/TOML values.

    A value given on the command line whose placeholder the template lacks is added to
    the front matter, so nothing the user typed is silently dropped. ``site_owned``: the
    site generator owns ``url`` and ``aliases`` (Hugo, Zola), so the template's keys are
    written as studykb's own ``link`` and ``names``. ``zola_path``: the note goes to that
    path of a Zola site, so studykb's keys are written under ``extra`` and tags under
    ``taxonomies`` (:func:`studykb.parse.zola_keys.shaped`; ShapeError when they cannot be).
    """
    if site_owned:
        template = _own_keys(template)
    fm, body, fmt = _split(template)
    if fm is None:
        return PLACEHOLDER.sub(lambda m: _plain(values.get(m.group(1), m.group(0))), template)
    used = set(PLACEHOLDER.findall(fm))
    fm_out = "".join(_fill_line(line, values, fmt) for line in fm.splitlines(keepends=True))
    extra = []
    for key in ("id", "title", "tags", "requires", "url", "date"):
        value = values.get(key)
        if key not in used and value and not _has_key(fm, key):
            sep = " =" if fmt == "toml" else ":"
            name = "link" if key == "url" and site_owned else key
            if not (name != key and _has_key(fm, name)):
                extra.append(f"{name}{sep} {_value(value, fmt)}\n")
    fence = "+++" if fmt == "toml" else "---"
    body_out = PLACEHOLDER.sub(lambda m: _plain(values.get(m.group(1), m.group(0))), body)
    fm_all = fm_out + "".join(extra)
    if zola_path is not None:
        fm_all = zola_keys.shaped(fm_all, fmt, zola_path)
    return f"{fence}\n{fm_all}{fence}\n{body_out}"


def create_in(vault: Vault, spec: NewDoc) -> Created:
    """:func:`create` in ``vault``, which names the file already holding the new id."""

    def owner(doc_id: str) -> str | None:
        try:
            for level, key in vault.names().table.get(fold(doc_id)) or ():
                doc = vault.document(key) if level == ID else None
                if doc is not None and doc.type != "unit":
                    return str(doc.path)
        except (StudyError, OSError):
            return None
        return None

    return create(vault.config, spec, id_owner=owner)


def create(
    config: Config, spec: NewDoc, id_owner: Callable[[str], str | None] | None = None
) -> Created:
    """Write the new document; StudyError when its file exists already.

    ``id_owner(id)`` names the file of another document that has this id, if any (the
    CLI asks the vault); a new document with that id would be a ``duplicate-id``.
    """
    title, doc_id, rel = _where(spec)
    site = detect(config.root, config.generator)
    if site.generator in ("hugo", "zola") and site.content_dirs[0] != ".":
        rel = f"{site.content_dirs[0]}/{rel}"  # the generator reads only its content
    target = config.root / rel
    template_type = JOURNAL if spec.daily else spec.type
    if target.exists():
        if spec.daily:
            return Created(rel, target, doc_id, "", existed=True)
        raise StudyError(
            f"{rel} exists already; not overwriting it.",
            hint="Open it, or choose another name with --id.",
        )
    owner = id_owner(doc_id) if id_owner else None
    if owner and owner != rel:
        raise StudyError(
            f"the id {doc_id!r} is taken by {owner}.", hint="Choose another with --id."
        )
    text, origin = template_text(config, template_type)
    values: dict[str, str | list[str] | None] = {
        "id": doc_id,
        "title": title,
        "type": spec.type,
        "date": spec.date.isoformat(),
        "tags": list(spec.tags),
        "requires": list(spec.requires),
        "url": spec.url,
    }
    zola_path = rel if site.generator == "zola" else None
    try:
        rendered = render(text, values, owns_keys(site.generator), zola_path)
    except zola_keys.ShapeError as exc:
        where = f"template {origin}" if origin != "built-in" else "the built-in template"
        raise StudyError(
            f"{where}: {exc}; nothing was written.",
            hint="Write the template's own keys under [extra] (Zola's front matter).",
        ) from None
    check_front_matter(rendered, origin)
    files.create(config.root, target, rendered.encode("utf-8"))
    return Created(rel, target, doc_id, origin, warnings=tuple(unknown_placeholders(text, origin)))


_OWNED_KEY = re.compile(r"^(url|aliases)(\s*[:=])", re.M)


def _own_keys(template: str) -> str:
    """The template with its front matter's ``url``/``aliases`` keys as ``link``/``names``."""
    fm, _body, _fmt = _split(template)
    if fm is None:
        return template
    renamed = _OWNED_KEY.sub(
        lambda m: ("link" if m.group(1) == "url" else "names") + m.group(2), fm
    )
    return template.replace(fm, renamed, 1)


def _where(spec: NewDoc) -> tuple[str, str, str]:
    """(title, id, vault path) of the document to create; UsageError for bad input."""
    if spec.type not in FOLDERS:
        raise UsageError(f"unknown type {spec.type!r}; use one of {', '.join(FOLDERS)}.")
    if spec.daily and spec.type != "note":
        raise UsageError(f"--today and --date make a daily note, not a {spec.type}.")
    day = spec.date.isoformat()
    title = " ".join(spec.title.split()) or (day if spec.daily else "")
    if not title:
        raise UsageError("the title is empty.")
    if spec.url and spec.type not in URL_TYPES:
        raise UsageError(
            f"--url is for entries and courses, not a {spec.type}.",
            hint=f"Make it an entry: studykb new entry {json.dumps(title)} --url {spec.url}",
        )
    if spec.daily:
        doc_id = check_id(spec.id) if spec.id is not None else day
        return title, doc_id, f"{JOURNAL}/{doc_id}.md"
    doc_id = check_id(spec.id) if spec.id is not None else slugify(title)
    if not doc_id:
        raise UsageError(
            f"cannot make a file name from the title {title!r}.",
            hint="Give one with --id, e.g. --id my-note.",
        )
    return title, doc_id, f"{FOLDERS[spec.type]}/{doc_id}.md"


def unknown_placeholders(template: str, origin: str) -> list[str]:
    """A warning for each ``{{name}}`` of ``template`` that is not a placeholder studykb
    fills (they are left as written)."""
    out = []
    for n, line in enumerate(template.replace("\r\n", "\n").split("\n"), 1):
        for name in PLACEHOLDER.findall(line):
            if name in PLACEHOLDERS:
                continue
            close = difflib.get_close_matches(name, PLACEHOLDERS, n=1)
            hint = f" (did you mean {{{{{close[0]}}}}}?)" if close else ""
            where = f"template {origin}" if origin != "built-in" else "the built-in template"
            out.append(
                f"{where}:{n}: unknown placeholder {{{{{name}}}}}{hint}, left as "
                f"written; known: {', '.join(PLACEHOLDERS)}"
            )
    return out


def _split(template: str) -> tuple[str | None, str, str]:
    """(front matter text ending in a newline, body, ``yaml``/``toml``) of a template."""
    text = template.replace("\r\n", "\n")
    for fence, fmt in (("---", "yaml"), ("+++", "toml")):
        if text.startswith(fence + "\n"):
            end = text.find(f"\n{fence}\n", len(fence))
            if end == -1 and text.endswith(f"\n{fence}"):
                end = len(text) - len(fence) - 1
            if end != -1:
                return text[len(fence) + 1 : end + 1], text[end + len(fence) + 2 :], fmt
    return None, text, ""


def _fill_line(line: str, values: dict[str, str | list[str] | None], fmt: str) -> str:
    """One front-matter line with its placeholders filled. One studykb does not know
    is kept as written, quoted where it stands bare as a value (``mood: {{mood}}``,
    ``- {{mood}}``, ``[{{mood}}]``): YAML reads a bare ``{{mood}}`` as a mapping inside a
    mapping (an error), TOML as a bad table. Inside a quoted string it is left alone."""

    def fill(m: re.Match[str]) -> str:
        if m.group(1) in values:
            return _value(values[m.group(1)], fmt)
        before, after = line[: m.start()], line[m.end() :].strip()
        bare = before.rstrip()[-1:] in ("", ":", "=", "-", "[", ",") and after[:1] in (
            "",
            ",",
            "]",
            "#",
        )
        return json.dumps(m.group(0)) if bare else m.group(0)

    return PLACEHOLDER.sub(fill, line)


def check_front_matter(text: str, origin: str) -> None:
    """StudyError when the note made from template ``origin`` would have front matter
    that cannot be read (a template's own mistake), naming the template's line."""
    error = split(text).error
    if error is not None:
        where = f"template {origin}" if origin != "built-in" else "the built-in template"
        raise StudyError(
            f"{where}:{error[0]}: the note would have front matter that cannot be read "
            f"({error[1]}); nothing was written.",
            hint="Fix the template's front matter (quote values that hold {{ }}, : or #).",
        )


def _has_key(fm: str, key: str) -> bool:
    return re.search(rf"^{re.escape(key)}\s*[:=]", fm, re.M) is not None


def _plain(value: str | list[str] | None) -> str:
    if value is None:
        return ""
    return ", ".join(value) if isinstance(value, list) else value


def _value(value: str | list[str] | None, fmt: str) -> str:
    """A value as YAML (plain where safe) or TOML (always quoted)."""
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(v, fmt) for v in value) + "]"
    if value is None or value == "":
        return '""' if fmt == "toml" else ""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return value  # a date in both YAML and TOML
    return _scalar(value, fmt)


def _scalar(value: str, fmt: str) -> str:
    if (
        fmt == "yaml"
        and _PLAIN_YAML.match(value)
        and value.lower() not in _YAML_WORDS
        and not value.endswith(" ")
        and ": " not in value
        and " #" not in value
    ):
        return value
    return json.dumps(value, ensure_ascii=False)
