"""Speed tricks, each behind one named seam: process pools, pausing the garbage
collector, leaving the process without the interpreter's teardown. Feature code calls
these; nothing else in studykb touches ``gc``, ``multiprocessing`` or ``os._exit``."""
