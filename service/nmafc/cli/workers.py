"""``nmafc serve --workers N``: N server processes on one port, and their supervisor.

The supervisor alone listens, and hands each connection to the worker with the fewest
open ones (see :mod:`nmafc.cli.handoff`). With one socket shared by every worker
(uvicorn's ``--workers``), whichever worker wakes first accepts: measured here, a burst of
32 keep-alive connections all landed on one worker, which then did all the work; with a
``SO_REUSEPORT`` socket each, the kernel's hash split them 14 and 18.

Workers are spawned, not forked: a worker inherits no threads or native state, and builds
its app from the pickled settings. The supervisor opens the stores once before starting
any (migrations, table creation, replay of a lagging Hot tier), so workers do not race to;
it replaces a worker that dies, stops when one cannot start, and on SIGINT or SIGTERM
stops them all (each finishes its requests in flight).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
from ctypes import c_int64
from multiprocessing.process import BaseProcess
from pathlib import Path

from nmafc.cli.handoff import ConnectionDealer, HandedConnectionsServer, WorkerLink, link_pair
from nmafc.settings import Settings

log = logging.getLogger("nmafc.cli")

STARTUP_FAILURE = 3  # uvicorn's exit code when the app's lifespan fails to start
# After SIGTERM, workers get this long (uvicorn's graceful period, then requests stop at
# their next step) before they are killed: the whole service is gone within 30 s.
STOP_TIMEOUT_S = 25.0


def serve_workers(settings: Settings) -> int:
    """Run ``settings.server.workers`` workers until interrupted; 1 if a worker cannot start."""
    from nmafc.api.metrics import shared_metrics_dir
    from nmafc.engine.engine import MemoryEngine

    server = settings.server
    try:
        listener = listening_socket(server.host, server.port)
    except OSError as exc:
        log.error("cannot listen on %s:%s: %s. Fix: stop what uses the port, or pass "
                  "another --port (NMAFC_SERVER_PORT).", server.host, server.port, exc)  # fmt: skip
        return 1
    MemoryEngine.open(settings).close()
    settings = with_core_share(settings)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    spawn = multiprocessing.get_context("spawn")
    failed = False
    with listener, shared_metrics_dir() as shared:
        started = [_start(spawn, settings) for _ in range(settings.server.workers)]
        workers = [worker for worker, _ in started]
        dealer = ConnectionDealer(listener, [link for _, link in started])
        dealer.start()
        while not stop.wait(0.5):
            for index, worker in enumerate(workers):
                if worker.is_alive():
                    continue
                if worker.exitcode == STARTUP_FAILURE:
                    log.error("a worker could not start (see above); stopping")
                    failed = True
                    stop.set()
                    break
                log.warning("worker %s exited with %s; starting another", worker.pid,
                            worker.exitcode)  # fmt: skip
                _forget_metrics_of(worker, shared)
                workers[index], link = _start(spawn, settings)
                dealer.replace(index, link)
        dealer.stop()
        _stop_all(workers)
    return 1 if failed else 0


def with_core_share(settings: Settings) -> Settings:
    """Each worker's embedder runs batches on its share of the cores, unless threads are set.

    Left to itself every worker's model would use up to four threads: two workers on two
    cores then ran four threads of matrix products at once, and a query cost ≈ 6 % more CPU
    on two threads than on one.
    """
    embedding, workers = settings.embedding, settings.server.workers
    if embedding.threads or workers <= 1:
        return settings
    share = max(1, (os.cpu_count() or 1) // workers)
    return settings.model_copy(
        update={"embedding": embedding.model_copy(update={"threads": share})}
    )


def _start(
    spawn: multiprocessing.context.SpawnContext, settings: Settings
) -> tuple[BaseProcess, WorkerLink]:
    link, channel = link_pair(spawn.RawValue("q", 0))
    worker = spawn.Process(
        target=run_worker, args=(settings, channel, link.closed), name="nmafc-worker"
    )
    worker.start()
    channel.close()  # the worker has its own copy
    return worker, link


def _forget_metrics_of(worker: BaseProcess, shared: Path) -> None:
    """Drop a dead worker's live gauges (its counters still count in the totals)."""
    from prometheus_client import multiprocess

    if worker.pid is not None:
        multiprocess.mark_process_dead(worker.pid, str(shared))  # type: ignore[no-untyped-call]


def _stop_all(workers: list[BaseProcess]) -> None:
    for worker in workers:
        if worker.is_alive() and worker.pid is not None:
            worker.terminate()  # SIGTERM: uvicorn's graceful shutdown
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            worker.kill()
            worker.join()


def run_worker(settings: Settings, channel: socket.socket, closed: c_int64) -> None:
    """One worker: its own app, serving the connections handed over ``channel``, until SIGTERM."""
    import uvicorn

    from nmafc.api import create_app
    from nmafc.api.logs import configure_logging
    from nmafc.cli.service import uvicorn_options
    from nmafc.runtime import prepare_server_process

    settings = prepare_server_process(settings)
    configure_logging(settings.server.log_format, settings.server.log_level)
    config = uvicorn.Config(create_app(settings), **uvicorn_options(settings))
    worker = HandedConnectionsServer(config, channel, closed)
    worker.run()
    if not worker.started:  # the lifespan failed: restarting would fail the same way
        sys.exit(STARTUP_FAILURE)


def listening_socket(host: str, port: int) -> socket.socket:
    """The service's listening socket; binding fails if anything else holds the port."""
    listener = socket.socket(_family(host), socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host.strip("[]"), port))
    listener.listen(2048)
    listener.set_inheritable(False)
    return listener


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET
