"""Speed tricks, each behind one named seam: process pools, pausing the garbage
collector, leaving the process without the interpreter's teardown. Feature code calls
these; nothing else in studykb touches ``gc``, ``multiprocessing`` or ``os._exit``.
And ``process``: the one home of what is truly per process (an import made on first
use, the searchers kept open, caches of pure functions); everywhere else module-level
state is frozen (``tests/test_module_state.py``)."""
