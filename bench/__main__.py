"""``python -m bench``: run the benchmark and print the table (``make bench``)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from bench import performance_page, report, runner


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--sizes", default="112,1000", help="article counts, comma-separated")
    parser.add_argument("--github-ms", type=float, default=50.0, help="added latency per GitHub request")
    parser.add_argument("--db-ms", type=float, default=35.0, help="added latency per database round trip")
    parser.add_argument("--accept-calls", type=int, default=200, help="timed accept-path calls per N")
    parser.add_argument(
        "--cold-runs",
        type=int,
        default=5,
        help="fresh interpreters per cold accept (median; 0 skips it: building the Lambda zip needs PyPI)",
    )
    parser.add_argument(
        "--real-sizes",
        default="500,2000",
        help="real-shaped first syncs, comma-separated (the first also sequentially; '' skips them)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of ours per case (median)")
    parser.add_argument("--read-calls", type=int, default=50, help="timed calls per read-path case per N")
    parser.add_argument(
        "--front-end-size",
        type=int,
        default=5000,
        help="articles of the blog the front end's pages by number and tag facets are read from (0 skips)",
    )
    parser.add_argument(
        "--bytes-size",
        type=int,
        default=5000,
        help="real-shaped articles synced for the bytes each statement reads (0 skips; slow at 5,000)",
    )
    parser.add_argument(
        "--search-sizes",
        default="500,5000",
        help="search blogs, comma-separated: the first synced (its index's cost measured), the others "
        "written straight into the database ('' skips them)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a small run that keeps the script working (CI): N=20, 20 calls, no cold accept",
    )
    parser.add_argument("--write", type=Path, metavar="FILE", help="also write the README fragment here")
    parser.add_argument(
        "--performance", type=Path, metavar="FILE", help="also write the performance notes page here"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.accept_calls, args.repeats, args.read_calls, args.cold_runs = "20", 20, 1, 5, 0
        args.real_sizes, args.front_end_size, args.bytes_size, args.search_sizes = "12", 50, 12, "12,30"
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        sizes = tuple(int(s) for s in args.sizes.split(",") if s.strip())
        real_sizes = tuple(int(s) for s in args.real_sizes.split(",") if s.strip())
        search_sizes = tuple(int(s) for s in args.search_sizes.split(",") if s.strip())
    except ValueError:
        print("--sizes takes whole numbers separated by commas", file=sys.stderr)
        return 2
    if (
        not sizes
        or min(sizes) < 1
        or min(real_sizes, default=1) < 1
        or min(search_sizes, default=1) < 1
        or min(args.accept_calls, args.repeats, args.read_calls) < 1
        or min(args.cold_runs, args.front_end_size, args.bytes_size) < 0
    ):
        print(
            "--sizes, --accept-calls, --repeats and --read-calls must be at least 1, --cold-runs, "
            "--front-end-size and --bytes-size at least 0",
            file=sys.stderr,
        )
        return 2
    options = runner.Options(
        sizes=sizes,
        github_ms=args.github_ms,
        db_ms=args.db_ms,
        accept_calls=args.accept_calls,
        repeats=args.repeats,
        read_calls=args.read_calls,
        cold_runs=args.cold_runs,
        real_sizes=real_sizes,
        front_end_size=args.front_end_size,
        bytes_size=args.bytes_size,
        search_sizes=search_sizes,
    )
    load_before = performance_page.load_average()
    results = runner.run(options)
    load = (load_before, performance_page.load_average())
    print(report.table(results))
    print()
    print(report.targets_text(report.targets(results)))
    command = "python -m bench " + shlex.join(a for a in (argv if argv is not None else sys.argv[1:]) if a)
    if args.write:
        args.write.write_text(report.markdown(results, command.strip()))
        print(f"\nwrote {args.write}", file=sys.stderr)
    if args.performance:
        args.performance.write_text(performance_page.page(results, command.strip(), load))
        print(f"wrote {args.performance}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
