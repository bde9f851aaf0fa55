"""A full build of a large index in worker interpreters, a segment per slice of files.

Two fresh interpreters at a time (:func:`studykb.runtime.pools.python_workers`) each
write one segment; the caller, which holds the index lock, commits them in one new
generation (see :func:`studykb.search.sync.sync`). One of the two places studykb
touches whoosh's private internals (whoosh3 is pinned to 3.54.0): the segment writer.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whoosh.codec.whoosh3 import W3Codec, W3Segment
from whoosh.writing import SegmentWriter

from studykb.runtime import pools
from studykb.search.records import records
from studykb.search.schema import bind
from studykb.search.state import INDEX_NAME, index_dir
from studykb.search.store import POOL_MB, open_dir
from studykb.text import segment
from studykb.vault.state import reader
from studykb.vault.topics import TopicTable

if TYPE_CHECKING:
    from studykb.vault import Vault

#: Files per segment in a parallel full build (a worker's memory grows with it: ~150 MB
#: for 2,500 files, ~110 MB for 1,700).
SLICE_FILES = 1700


def build_parallel(
    vault: Vault, wanted: dict[str, str], topics: TopicTable, written: dict[str, list[str]]
) -> list[Any]:
    """Index every file in worker processes, two at a time, a segment per slice of files.

    Slices of about :data:`SLICE_FILES` files keep each worker's postings in memory
    (no spilling to disk, which doubled the time) while bounding its size; the caller,
    which holds the lock, commits the segments in one new generation. Each worker is a
    fresh interpreter (:func:`studykb.runtime.pools.python_workers`); its job and its
    answer are JSON files in whoosh's temporary folder.
    """
    jobs = _write_jobs(vault, wanted, topics)
    try:
        pools.python_workers(f"{__name__}:_segment_main", jobs, workers=2)
        return [seg for _job, out in jobs if (seg := _read_answer(out, written)) is not None]
    finally:
        for job, out in jobs:
            for temp in (job, out):
                with contextlib.suppress(OSError):
                    os.unlink(temp)


def _write_jobs(vault: Vault, wanted: dict[str, str], topics: TopicTable) -> list[tuple[str, str]]:
    """(job file, answer file) of every slice of the files, each job written."""
    paths = sorted(wanted)
    count = max(2, round(len(paths) / SLICE_FILES))
    size = -(-len(paths) // count)
    folder = index_dir(vault)
    work = folder / f"{INDEX_NAME}.tmp"  # whoosh's temporary folder for this index's writers
    work.mkdir(exist_ok=True)
    jobs: list[tuple[str, str]] = []
    for n in range(-(-len(paths) // size)):
        job_file = work / f"job-{os.getpid()}-{n}.json"
        out_file = work / f"out-{os.getpid()}-{n}.json"
        part = paths[n * size : (n + 1) * size]
        job = {
            "folder": str(folder),
            "state": str(vault.store.path),
            "paths": part,
            "wanted": {p: wanted[p] for p in part},
            "topics": topics.to_data(),
        }
        job_file.write_text(json.dumps(job), encoding="utf-8")
        jobs.append((str(job_file), str(out_file)))
    return jobs


def _read_answer(out: str, written: dict[str, list[str]]) -> Any:
    """The segment a worker wrote (None when its slice made none); what it indexed is
    added to ``written``."""
    result = json.loads(Path(out).read_text(encoding="utf-8"))
    written.update(result["done"])
    made = result["segment"]
    if made is None:
        return None
    seg = W3Segment(W3Codec(), INDEX_NAME, int(made["doccount"]), str(made["segid"]))
    seg.compound = bool(made["compound"])
    # the field lengths BM25 averages over travel on the segment object (whoosh3 3.54,
    # pinned; what pickling the segment used to carry)
    seg._fieldlengths = defaultdict(int, made["fieldlengths"])  # noqa: SLF001
    return seg


def _segment_main() -> None:
    """Entry point of an index worker: ``python -c ... JOB OUT`` (see build_parallel).

    The job and the answer are JSON files: the segment the worker wrote travels back as
    its id, document count and whether it is compound.
    """
    job, out = sys.argv[1], sys.argv[2]
    segment.segments().keep = False  # a worker's cuts are never saved: do not hold them (memory)
    with open(job, encoding="utf-8") as fh:
        seg, done = _segment_job(json.load(fh))
    made = (
        None
        if seg is None
        else {
            "segid": seg.segid,
            "doccount": seg.doc_count_all(),
            "compound": bool(seg.compound),
            "fieldlengths": dict(seg._fieldlengths),
        }
    )  # noqa: SLF001 - see build_parallel
    with open(out, "w", encoding="utf-8") as fh:
        json.dump({"segment": made, "done": done}, fh)


def _segment_job(job: dict[str, Any]) -> tuple[Any, dict[str, list[str]]]:
    """In a worker: write one segment holding the files of ``job``; return it unlisted."""
    topics = TopicTable.from_data(job["topics"])
    store = reader(Path(job["state"]))
    try:
        writer = SegmentWriter(open_dir(Path(job["folder"])), _lk=False, limitmb=POOL_MB)
        bind(writer.schema, topics.analyser())
        done: dict[str, list[str]] = {}
        for record in records(store, job["paths"], job["wanted"], topics, done):
            writer.add_document(**record)
        if not writer._added:  # noqa: SLF001 - whoosh's own multi-process writer does this
            writer._close_segment()
            return None, done
        return writer._finalize_segment(), done
    finally:
        store.close()
