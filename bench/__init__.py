"""The benchmark behind ``make bench``: the performance targets of docs/performance.md, measured.

It runs the worker and a rendering of the previous design against the same local GitHub stand-in and the
same MariaDB, both behind injected round-trip latency, and prints one table. Modules, one job each:

- ``latency_relay``: the TCP relay in front of MariaDB that charges and counts database round trips;
- ``corpus``: the generated article repository;
- ``rig``: starting and stopping the stand-in, MariaDB and the relay, and making databases;
- ``measure``: what one run costs (wall time, GitHub requests, database round trips, memory);
- ``ours`` / ``baseline``: one sync each way, measured;
- ``accept``: the accept path (Lambda mode, a real invoke to a Lambda API on loopback);
- ``coldstart`` (and ``cold_child``): importing ``function.handler`` in a fresh interpreter, and the cold
  accept from the Lambda zip;
- ``runner``: the cases in order; ``report``: the table and ``docs/benchmark.md``.
"""
