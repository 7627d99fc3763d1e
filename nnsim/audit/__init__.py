"""Many combinations of (model, board, Android SDK, delegate) at once: ``nnsim compare`` and
``nnsim audit``.

* :mod:`nnsim.audit.engine`: one combination into one plain record (placement, refusal
  reasons, simulated board time, optional check against the TFLite CPU path);
* :mod:`nnsim.audit.isolate`: one task in a process of its own, with a timeout and a memory
  cap, whose failures are records too;
* :mod:`nnsim.audit.scheduler`: many tasks on a local process pool or a Dask cluster, with a
  progress bar and a resumable result cache;
* :mod:`nnsim.audit.tables`, :mod:`nnsim.audit.html`: the table, CSV/JSON and HTML outputs.
"""
