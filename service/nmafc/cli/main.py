"""``nmafc``: run, inspect and measure NMAFC from the shell."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from nmafc import errors
from nmafc.settings import Settings, load_settings


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except errors.NmafcError as exc:
        print(f"error [{exc.code}]: {exc.detail}\nfix: {exc.fix}", file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nmafc", description=__doc__)
    parser.add_argument("--config", type=Path, help="TOML settings file (or NMAFC_CONFIG)")
    sub = parser.add_subparsers(title="commands")

    demo = sub.add_parser("demo", help="remember a short conversation and recall from it")
    demo.set_defaults(run=_demo)

    migrate = sub.add_parser("migrate", help="apply Cold ROM migrations and exit")
    migrate.set_defaults(run=_migrate)

    show = sub.add_parser("settings", help="print the effective settings (secrets hidden)")
    show.set_defaults(run=_settings)

    catalogue = sub.add_parser("errors", help="list every error with its fix")
    catalogue.set_defaults(run=_errors)

    evaluate = sub.add_parser("eval", help="retrieval quality on long-conversation benchmarks")
    eval_sub = evaluate.add_subparsers(title="datasets")
    locomo = eval_sub.add_parser("locomo", help="LoCoMo: evidence recall, answer reachability")
    locomo.add_argument("--data", required=True, type=Path, help="locomo10.json-format file")
    locomo.add_argument("--arms", default="nmafc,rag,bm25")
    locomo.add_argument("--budget", default="1000", help="tokens; a comma list sweeps budgets")
    locomo.add_argument("--out", required=True, type=Path)
    locomo.add_argument("--conversations", default=None, help="sample ids, comma-separated")
    locomo.add_argument("--preset", default=None, help="retrieval preset (default: settings)")
    locomo.set_defaults(run=_eval_locomo)
    lme = eval_sub.add_parser("longmemeval", help="LongMemEval: session and turn recall")
    lme.add_argument("--data", required=True, type=Path, help="longmemeval_*.json(.gz)")
    lme.add_argument("--arms", default="nmafc,rag,bm25")
    lme.add_argument("--out", required=True, type=Path)
    lme.add_argument("--limit", type=int, default=None, help="first N questions only")
    lme.add_argument("--budget", type=int, default=1000)
    lme.add_argument("--preset", default=None)
    lme.set_defaults(run=_eval_longmemeval)

    bench = sub.add_parser("bench", help="performance benchmarks")
    bench_sub = bench.add_subparsers(title="benchmarks")
    engine = bench_sub.add_parser("engine", help="maintenance pass, recall latency, memory")
    engine.add_argument("--sizes", default="100000,1000000", help="records per run")
    engine.add_argument("--queries", type=int, default=300)
    engine.add_argument("--out", type=Path, default=Path("bench-results"))
    engine.set_defaults(run=_bench_engine)
    return parser


def _settings_from(args: argparse.Namespace) -> Settings:
    return load_settings(args.config)


def _demo(args: argparse.Namespace) -> int:
    from nmafc.cli.demo import run_demo

    run_demo(_settings_from(args))
    return 0


def _migrate(args: argparse.Namespace) -> int:
    from nmafc.storage.cold import ColdStore

    settings = _settings_from(args)
    ColdStore.open(settings.resolved_cold_uri()).close()
    print(f"Cold ROM at {settings.resolved_cold_uri()} is up to date.")
    return 0


def _settings(args: argparse.Namespace) -> int:
    settings = _settings_from(args)
    # SecretStr fields serialise as '**********' in JSON mode.
    print(json.dumps(settings.model_dump(mode="json"), indent=2, default=str))
    return 0


def _errors(_: argparse.Namespace) -> int:
    print(error_catalogue())
    return 0


def error_catalogue() -> str:
    """The catalogue as a markdown table, generated from the error classes."""
    lines = ["| code | status | title | fix |", "|---|---:|---|---|"]
    for cls in errors.catalogue():
        lines.append(f"| `{cls.code}` | {cls.status} | {cls.title} | {cls.default_fix} |")
    return "\n".join(lines)


def _eval_locomo(args: argparse.Namespace) -> int:
    from nmafc.evaluation.runner import run_locomo

    run_locomo(
        args.data,
        out=args.out,
        arms=args.arms,
        budget=args.budget,
        conversations=args.conversations,
        preset=args.preset,
    )
    print((args.out / "summary.md").read_text())
    return 0


def _eval_longmemeval(args: argparse.Namespace) -> int:
    from nmafc.evaluation.runner import run_longmemeval

    run_longmemeval(
        args.data,
        out=args.out,
        arms=args.arms,
        limit=args.limit,
        budget=args.budget,
        preset=args.preset,
    )
    print((args.out / "summary.md").read_text())
    return 0


def _bench_engine(args: argparse.Namespace) -> int:
    from nmafc.bench.engine_bench import markdown, run

    sizes = [int(s) for s in args.sizes.split(",") if s]
    report = run(sizes, args.out, args.queries)
    print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
