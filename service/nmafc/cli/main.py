"""``nmafc``: run, inspect and measure NMAFC from the shell."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from nmafc import errors

if TYPE_CHECKING:
    from nmafc.evaluation.judge import JudgeOptions
    from nmafc.settings import Settings


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

    serve = sub.add_parser("serve", help="run the HTTP + WebSocket service")
    serve.add_argument("--host", default=None, help="interface (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (default 8000)")
    serve.add_argument(
        "--workers", type=int, default=None, help="processes (default 1; NMAFC_SERVER_WORKERS)"
    )
    serve.set_defaults(run=lambda a: _service().serve(_settings_from(a), a.host, a.port, a.workers))

    worker = sub.add_parser("worker", help="run only the background maintenance services")
    worker.set_defaults(run=lambda a: _service().worker(_settings_from(a)))

    keys = sub.add_parser("keys", help="manage API keys stored (hashed) in the Cold ROM")
    keys_sub = keys.add_subparsers(title="actions")
    create = keys_sub.add_parser("create", help="create a key and print its secret once")
    bound = create.add_mutually_exclusive_group(required=True)
    bound.add_argument("--agent", help="bind the key to this agent")
    bound.add_argument("--admin", action="store_true", help="an admin key (any agent)")
    create.add_argument("--name", default="", help="a label for listings")
    create.set_defaults(
        run=lambda a: _service().keys_create(_settings_from(a), a.agent, a.admin, a.name)
    )
    listing = keys_sub.add_parser("list", help="list keys (prefixes, never secrets)")
    listing.add_argument("--agent", default=None, help="only this agent's keys")
    listing.add_argument("--revoked", action="store_true", help="include revoked keys")
    listing.set_defaults(run=lambda a: _service().keys_list(_settings_from(a), a.agent, a.revoked))
    revoke = keys_sub.add_parser("revoke", help="revoke a key by id or prefix")
    revoke.add_argument("ref", help="the key's id or prefix (see `nmafc keys list`)")
    revoke.add_argument("--agent", default=None, help="only among this agent's keys")
    revoke.set_defaults(run=lambda a: _service().keys_revoke(_settings_from(a), a.ref, a.agent))

    openapi = sub.add_parser("openapi", help="print the OpenAPI document of the service")
    openapi.set_defaults(run=lambda a: _service().openapi(_settings_from(a)))

    demo = sub.add_parser(
        "demo", help="load a sample conversation into a demo scope through the HTTP API"
    )
    demo.add_argument(
        "--url",
        default=None,
        help="the service (default http://127.0.0.1:8000; if nothing answers there, "
        "one is started in this process over the local stores)",
    )
    demo.add_argument("--api-key", default=None, help="API key (default: NMAFC_API_KEY)")
    demo.set_defaults(run=_demo)

    init = sub.add_parser(
        "init", help="set up the upstream LLM and storage; writes a TOML settings file"
    )
    init.add_argument(
        "--config",
        dest="init_config",
        type=Path,
        default=None,
        help="where to write (default: the per-user config file, read automatically)",
    )
    init.add_argument("--provider", choices=["openai", "anthropic", "bedrock", "ollama", "other"])
    init.add_argument("--base-url", default=None, help="the upstream's base URL")
    init.add_argument("--model", default=None, help="model name (or Bedrock model id)")
    init.add_argument(
        "--api-key", default=None, help="upstream key (prefer the prompt: it is not echoed)"
    )
    init.add_argument("--data-dir", type=Path, default=None, help="where memory is kept")
    init.add_argument(
        "--yes", action="store_true", help="ask nothing: flags, then defaults; overwrite"
    )
    init.set_defaults(run=_init)

    chat = sub.add_parser("chat", help="talk to the upstream LLM with memory, in the terminal")
    chat.add_argument("--agent", default="cli", help="agent id (default cli)")
    chat.add_argument("--conversation", default="default", help="conversation id")
    chat.set_defaults(run=_chat)

    mcp = sub.add_parser(
        "mcp",
        help="serve the memory tools over stdio to an MCP client (embedded, or --url)",
    )
    mcp.add_argument(
        "--url", default=None, help="a running service to proxy to (default: the local stores)"
    )
    mcp.add_argument("--api-key", default=None, help="key for --url (default: NMAFC_API_KEY)")
    mcp.add_argument(
        "--agent",
        default=None,
        help="the agent (embedded: default `default`; --url: only with an admin key)",
    )
    mcp.add_argument(
        "--conversation", default="default", help="conversation when a tool names none"
    )
    mcp.set_defaults(run=_mcp)

    migrate = sub.add_parser("migrate", help="apply Cold ROM migrations and exit")
    migrate.set_defaults(run=_migrate)

    erase = sub.add_parser(
        "erase",
        help="rewrite both stores so nothing purged survives in their files; run it with the "
        "service stopped (PostgreSQL: VACUUM FULL locks each table; LanceDB: also removes "
        "files of failed transactions)",
    )
    erase.set_defaults(run=_erase)

    show = sub.add_parser("settings", help="print the effective settings (secrets hidden)")
    show.set_defaults(run=_settings)

    catalogue = sub.add_parser("errors", help="list every error with its fix")
    catalogue.set_defaults(run=_errors)

    evaluate = sub.add_parser("eval", help="retrieval quality on long-conversation benchmarks")
    eval_sub = evaluate.add_subparsers(title="datasets")
    locomo = eval_sub.add_parser("locomo", help="LoCoMo: evidence recall, answer reachability")
    locomo.add_argument("--data", required=True, type=Path, help="locomo10.json-format file")
    locomo.add_argument("--arms", default="nmafc,rag,bm25,sessions", help="comma-separated")
    locomo.add_argument("--budget", default="1000", help="tokens; a comma list sweeps budgets")
    locomo.add_argument("--out", required=True, type=Path)
    locomo.add_argument("--conversations", default=None, help="sample ids, comma-separated")
    locomo.add_argument("--preset", default=None, help="retrieval preset (default: settings)")
    _judge_arguments(locomo)
    locomo.set_defaults(run=_eval_locomo)
    lme = eval_sub.add_parser("longmemeval", help="LongMemEval: session and turn recall")
    lme.add_argument("--data", required=True, type=Path, help="longmemeval_*.json(.gz)")
    lme.add_argument("--arms", default="nmafc,rag,bm25,sessions", help="comma-separated")
    lme.add_argument("--out", required=True, type=Path)
    lme.add_argument("--limit", type=int, default=None, help="first N questions only")
    lme.add_argument("--questions", default=None, help="question ids, comma-separated")
    lme.add_argument("--budget", type=int, default=1000)
    lme.add_argument("--preset", default=None)
    _judge_arguments(lme)
    lme.set_defaults(run=_eval_longmemeval)

    bench = sub.add_parser("bench", help="performance benchmarks")
    bench_sub = bench.add_subparsers(title="benchmarks")
    engine = bench_sub.add_parser("engine", help="maintenance pass, recall latency, memory")
    engine.add_argument("--sizes", default="100000,1000000", help="records per run")
    engine.add_argument("--queries", type=int, default=300)
    engine.add_argument("--out", type=Path, default=Path("bench-results"))
    engine.set_defaults(run=_bench_engine)
    http = bench_sub.add_parser("http", help="recall latency and throughput over HTTP")
    http.add_argument("--records", type=int, default=100_000, help="records in total")
    http.add_argument("--scopes", default="1,1000", help="scope counts to run, comma-separated")
    http.add_argument("--clients", type=int, default=32, help="concurrent clients")
    http.add_argument("--duration", type=float, default=30.0, help="seconds of load per run")
    http.add_argument(
        "--workers", default="1", help="server processes to run each with, comma-separated"
    )
    http.add_argument(
        "--settle", type=float, default=10.0, help="seconds of unmeasured load before each run"
    )
    http.add_argument("--url", default=None, help="an already running service (else: start one)")
    http.add_argument("--api-key", default=None, help="key for --url")
    http.add_argument("--reinforce", action="store_true", help="recalls reinforce (writes)")
    http.add_argument("--out", type=Path, default=Path("bench-results"))
    http.set_defaults(run=_bench_http)
    scale = bench_sub.add_parser(
        "scale", help="many scopes on one replica: RSS, cache hits, latency, cache off"
    )
    scale.add_argument("--scopes", type=int, default=10_000, help="small scopes")
    scale.add_argument("--records-per-scope", type=int, default=200)
    scale.add_argument(
        "--big-scope-records", type=int, default=100_000, help="one more scope this big (0: none)"
    )
    scale.add_argument("--searches", type=int, default=5_000, help="recalls per search window")
    scale.add_argument("--cache-mb", type=int, default=1024, help="hot.cache_max_mb")
    scale.add_argument("--zipf", type=float, default=1.1, help="exponent of the scope popularity")
    scale.add_argument(
        "--embed-pool", type=int, default=20_000,
        help="distinct sentences embedded, reused with noise (0: embed every record's text)",
    )  # fmt: skip
    scale.add_argument("--name", default="scale", help="report file names: <name>.json, .md")
    scale.add_argument("--out", type=Path, default=Path("bench-results"))
    scale.set_defaults(run=_bench_scale)
    first = bench_sub.add_parser(
        "first-recall",
        help="first search of an uncached scope: loaded before answering vs in the background",
    )
    first.add_argument("--records", type=int, default=20_000, help="records in the scope")
    first.add_argument("--repeats", type=int, default=5, help="cold first recalls per arm")
    first.add_argument("--embed-pool", type=int, default=5_000, help="distinct sentences embedded")
    first.add_argument("--name", default="first_recall", help="report file names")
    first.add_argument("--out", type=Path, default=Path("bench-results"))
    first.set_defaults(run=_bench_first_recall)
    ann = bench_sub.add_parser(
        "ann", help="the LanceDB vector index against the exact scan: top-k overlap, latency"
    )
    ann.add_argument("--rows", type=int, default=50_000, help="records in the Hot table")
    ann.add_argument("--queries", type=int, default=50, help="per class of scope")
    ann.add_argument("--limit", type=int, default=60, help="ids compared per search")
    ann.add_argument("--index-type", default="IVF_SQ", choices=["IVF_SQ", "IVF_HNSW_SQ", "IVF_PQ"])
    ann.add_argument("--nprobes", type=int, default=20)
    ann.add_argument("--refine-factor", type=int, default=4)
    ann.add_argument("--name", default="ann", help="report file names: <name>.json, .md")
    ann.add_argument("--out", type=Path, default=Path("bench-results"))
    ann.set_defaults(run=_bench_ann)
    load = bench_sub.add_parser(
        "load", help="concurrent writers and readers, then verify no acknowledged write is lost"
    )
    load.add_argument(
        "--duration", type=float, default=None,
        help="seconds of load (default 60; with --writes, a cap of 6 h)",
    )  # fmt: skip
    load.add_argument("--writers", type=int, default=4, help="writers, one conversation each")
    load.add_argument("--readers", type=int, default=4, help="concurrent searching clients")
    load.add_argument("--url", default=None, help="an already running service (else: start one)")
    load.add_argument("--api-key", default=None, help="key for --url (default: NMAFC_API_KEY)")
    load.add_argument("--agent", default="load", help="agent id the load writes under")
    load.add_argument(
        "--writes", type=int, default=None,
        help="stop after this many writes (--duration is then a cap, default 6 h)",
    )  # fmt: skip
    load.add_argument(
        "--new-share", type=float, default=None,
        help="share of writes to a new conversation each (default 0.5 with --writes, else 0)",
    )  # fmt: skip
    load.add_argument("--name", default="load", help="report file names: <name>.json, .md")
    load.add_argument("--out", type=Path, default=Path("bench-results"))
    load.set_defaults(run=_bench_load)
    return parser


def _judge_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "answer and judge (J)",
        "with --answer-model, each arm's context answers every question through the "
        "configured upstream (NMAFC_LLM_*) and a judge grades it CORRECT/WRONG; without it "
        "nothing calls an LLM",
    )
    group.add_argument("--answer-model", default=None, help="model that answers (enables J)")
    group.add_argument("--judge-model", default=None, help="model that grades (default: same)")
    for flag, what in (
        ("--price-in", "answer model prompt"),
        ("--price-out", "answer model completion"),
        ("--judge-price-in", "judge prompt (default: --price-in)"),
        ("--judge-price-out", "judge completion (default: --price-out)"),
    ):
        group.add_argument(flag, type=float, default=None, help=f"USD per 1M {what} tokens")
    group.add_argument(
        "--llm-concurrency", type=int, default=8, help="answer+judge pairs in flight (default 8)"
    )


def _judge_options(args: argparse.Namespace) -> JudgeOptions | None:
    from nmafc.evaluation import judge

    if args.answer_model is None:
        if args.judge_model is not None:
            raise errors.InvalidInput(
                "--judge-model needs --answer-model.", fix="Add --answer-model MODEL."
            )
        return None
    return judge.JudgeOptions(
        answer_model=args.answer_model,
        judge_model=args.judge_model,
        price_in=args.price_in,
        price_out=args.price_out,
        judge_price_in=args.judge_price_in,
        judge_price_out=args.judge_price_out,
        concurrency=args.llm_concurrency,
    )


def _service() -> ModuleType:
    from nmafc.cli import service

    return service


def _settings_from(args: argparse.Namespace) -> Settings:
    from nmafc.settings import load_settings

    return load_settings(args.config)


def _demo(args: argparse.Namespace) -> int:
    from nmafc.cli.demo import run_demo

    api_key = args.api_key or os.environ.get("NMAFC_API_KEY") or None
    return run_demo(_settings_from(args), args.url, api_key)


def _init(args: argparse.Namespace) -> int:
    from nmafc.cli.init import run_init

    return run_init(
        config=args.init_config or args.config,
        provider=args.provider,
        base_url=args.base_url,
        model=args.model,
        api_key=args.api_key,
        data_dir=args.data_dir,
        yes=args.yes,
    )


def _chat(args: argparse.Namespace) -> int:
    from nmafc.cli.chat import run_chat

    return run_chat(_settings_from(args), agent_id=args.agent, conversation_id=args.conversation)


def _mcp(args: argparse.Namespace) -> int:
    from nmafc.mcp_server.stdio import run_stdio

    return run_stdio(
        _settings_from(args),
        agent_id=args.agent,
        conversation_id=args.conversation,
        url=args.url,
        api_key=args.api_key or os.environ.get("NMAFC_API_KEY") or None,
    )


def _migrate(args: argparse.Namespace) -> int:
    from nmafc.storage.cold import ColdStore

    settings = _settings_from(args)
    ColdStore.open(settings.resolved_cold_uri()).close()
    print(f"Cold ROM at {settings.resolved_cold_uri()} is up to date.")
    return 0


def _erase(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from nmafc.engine.engine import MemoryEngine

    engine = MemoryEngine.open(_settings_from(args))
    try:
        report = engine.erase()
    finally:
        engine.close()
    print(json.dumps({store: asdict(e) for store, e in report.items()}, indent=2))
    return 0 if all(e.complete for e in report.values()) else 1


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
    from nmafc.runtime import prepare_server_process
    from nmafc.settings import Settings

    answer = _judge_options(args)  # a wrong flag combination is refused before any work
    prepare_server_process(Settings())  # scored as a server computes (one BLAS thread)

    run_locomo(
        args.data,
        out=args.out,
        arms=args.arms,
        budget=args.budget,
        conversations=args.conversations,
        preset=args.preset,
        answer=answer,
    )
    print((args.out / "summary.md").read_text())
    return 0


def _eval_longmemeval(args: argparse.Namespace) -> int:
    from nmafc.evaluation.runner import run_longmemeval
    from nmafc.runtime import prepare_server_process
    from nmafc.settings import Settings

    answer = _judge_options(args)  # a wrong flag combination is refused before any work
    prepare_server_process(Settings())  # scored as a server computes (one BLAS thread)

    run_longmemeval(
        args.data,
        out=args.out,
        arms=args.arms,
        limit=args.limit,
        questions=args.questions,
        budget=args.budget,
        preset=args.preset,
        answer=answer,
    )
    print((args.out / "summary.md").read_text())
    return 0


def _bench_engine(args: argparse.Namespace) -> int:
    from nmafc.bench.engine_bench import markdown, run

    sizes = [int(s) for s in args.sizes.split(",") if s]
    report = run(sizes, args.out, args.queries)
    print(markdown(report))
    return 0


def _bench_http(args: argparse.Namespace) -> int:
    from nmafc.bench.http_bench import HttpBenchOptions, markdown, run

    options = HttpBenchOptions(
        records=args.records,
        scopes=[int(s) for s in args.scopes.split(",") if s],
        clients=args.clients,
        duration_s=args.duration,
        url=args.url,
        api_key=args.api_key,
        reinforce=args.reinforce,
        workers=[int(w) for w in args.workers.split(",") if w],
        settle_s=args.settle,
    )
    report = run(options, args.out)
    print(markdown(report))
    return 0 if all(r["errors"] == 0 for r in report["results"]) else 1


def _bench_scale(args: argparse.Namespace) -> int:
    from nmafc.bench.scale_bench import ScaleOptions, markdown, run

    options = ScaleOptions(
        scopes=args.scopes,
        records_per_scope=args.records_per_scope,
        big_scope_records=args.big_scope_records,
        searches=args.searches,
        cache_mb=args.cache_mb,
        zipf=args.zipf,
        embed_pool=args.embed_pool,
    )
    report = run(options, args.out, args.name)
    print(markdown(report))
    return 0 if report["errors"] == 0 else 1


def _bench_first_recall(args: argparse.Namespace) -> int:
    from nmafc.bench.first_recall import FirstRecallOptions, markdown, run

    options = FirstRecallOptions(
        records=args.records, repeats=args.repeats, embed_pool=args.embed_pool
    )
    print(markdown(run(options, args.out, args.name)))
    return 0


def _bench_ann(args: argparse.Namespace) -> int:
    from nmafc.bench.ann_bench import AnnOptions, markdown, run

    options = AnnOptions(
        rows=args.rows,
        queries=args.queries,
        limit=args.limit,
        index_type=args.index_type,
        nprobes=args.nprobes,
        refine_factor=args.refine_factor,
    )
    report = run(options, args.out, args.name)
    print(markdown(report))
    return 0 if report["index_built"] else 1


def _bench_load(args: argparse.Namespace) -> int:
    from nmafc.bench.load_bench import LoadOptions, markdown, run

    fixed = args.writes is not None
    new_share = args.new_share if args.new_share is not None else (0.5 if fixed else 0.0)
    options = LoadOptions(
        duration_s=args.duration or (6 * 3600.0 if fixed else 60.0),
        writers=args.writers,
        readers=args.readers,
        url=args.url,
        api_key=args.api_key or os.environ.get("NMAFC_API_KEY") or None,
        agent=args.agent,
        writes=args.writes,
        new_share=new_share,
    )
    report = run(options, args.out, args.name)
    print(markdown(report))
    return 0 if report["lost"] == 0 and report["server_errors"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
