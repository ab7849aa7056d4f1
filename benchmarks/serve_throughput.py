"""serve.py's throughput and latency on loopback, batching on and off, beside the SavedModel's own.

    .venv/bin/python benchmarks/serve_throughput.py --saved_model=runs/multi30k_de_en/saved_model
        [--clients=1,8,32 --requests=256 --data=multi30k/de-en --split=test2016 --sentences=256]

First the SavedModel alone, in this process: sentences/s at batch 64 (and 32, the largest batch
32 one-sentence clients can fill) over the ``--sentences`` source sentences of ``--data``
``--split`` (after one untimed pass). Then ``serve.py`` (a
subprocess on a free loopback port) with batching on (``--max_batch_size=64``, the given
``--batch_timeout_micros``), then off: for each number of ``--clients``, that many concurrent
clients (asyncio, one connection each, in this process) send ``--requests`` single-sentence
requests in all, each client its next request when the previous one is answered; sentences/s
and the p50 / p99 latency of a request. Before the timed runs, each server gets untimed requests
of every batch shape the workload can make (1, 2, 4, ... 64 sentences of each source length
bucket: tracing and, for an export with XLA, compilation). The clients share the two cores with
the server: what a client on the same machine sees.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

import harness
import httpx2
import tensorflow as tf
import tensorflow_text  # noqa: F401  (the SentencePiece ops of the graph)
from absl import app, flags

_SAVED_MODEL = flags.DEFINE_string("saved_model", None, "Exported SavedModel.", required=True)
_DATA = flags.DEFINE_string("data", "multi30k/de-en", "Data set the sentences come from.")
_SPLIT = flags.DEFINE_string("split", "test2016", "Its split.")
_SENTENCES = flags.DEFINE_integer("sentences", 256, "How many of its source sentences to send.")
_CLIENTS = flags.DEFINE_list("clients", ["1", "8", "32"], "Numbers of concurrent clients.")
_REQUESTS = flags.DEFINE_integer("requests", 256, "Requests per number of clients.")
_BATCH_TIMEOUT_MICROS = flags.DEFINE_integer(
    "batch_timeout_micros", 2000, "serve.py's --batch_timeout_micros when batching."
)
MODEL_URL = "/v1/models/default:predict"


def start_server(batching: bool) -> tuple[subprocess.Popen, str]:
    """serve.py on a free loopback port; returns the process and its URL once it serves."""
    process = subprocess.Popen(
        [
            sys.executable,
            str(harness.REPO_ROOT / "serve.py"),
            f"--saved_model={_SAVED_MODEL.value}",
            "--port=0",
            "--enable_batching" if batching else "--noenable_batching",
            "--max_batch_size=64",
            f"--batch_timeout_micros={_BATCH_TIMEOUT_MICROS.value}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    for line in process.stdout:
        if line.startswith("Serving on "):
            return process, line.split()[2].rstrip("/")
    raise SystemExit(f"serve.py exited ({process.wait()}) before serving")


async def load(url: str, clients: int, sentences: Sequence[str]) -> tuple[float, list[float]]:
    """``clients`` closed-loop clients send one request per sentence between them; returns the
    seconds it took and each request's latency."""
    queue = list(reversed(sentences))
    latencies: list[float] = []
    limits = httpx2.Limits(max_connections=clients)
    async with httpx2.AsyncClient(base_url=url, timeout=600, limits=limits) as client:

        async def one_client() -> None:
            while queue:
                sentence = queue.pop()
                started = time.perf_counter()
                answer = await client.post(MODEL_URL, json={"instances": [sentence]})
                answer.raise_for_status()
                latencies.append(time.perf_counter() - started)

        started = time.perf_counter()
        await asyncio.gather(*(one_client() for _ in range(clients)))
    return time.perf_counter() - started, latencies


def warm_up_requests(sentences: Sequence[str], token_counts: Sequence[int]) -> list[list[str]]:
    """A request of 1, 2, 4, ... 64 sentences for each group of sentences whose source fills
    the same multiple of 16 tokens (EOS included): every (batch, length) shape an XLA export
    pads the workload's batches to."""
    groups: dict[int, list[str]] = collections.defaultdict(list)
    for sentence, count in zip(sentences, token_counts, strict=True):
        groups[count // 16].append(sentence)  # count + 1 (EOS) tokens fill ceil(/16) blocks
    return [
        [group[index % len(group)] for index in range(size)]
        for group in groups.values()
        for size in (1, 2, 4, 8, 16, 32, 64)
    ]


def warm_up(url: str, requests: Sequence[list[str]]) -> None:
    with httpx2.Client(base_url=url, timeout=600) as client:
        for sentences in requests:
            client.post(MODEL_URL, json={"instances": sentences}).raise_for_status()


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # not a line per request
    from data_pipeline import load_translation_splits  # only to read the sentences

    pairs = load_translation_splits(_DATA.value, [_SPLIT.value])[_SPLIT.value]
    sources = [s.decode() for s, _ in pairs.take(_SENTENCES.value).as_numpy_iterator()]
    workload = [sources[i % len(sources)] for i in range(_REQUESTS.value)]
    clients = [int(count) for count in _CLIENTS.value]
    harness.print_config(
        "workload",
        {"sentences": len(sources), "requests": len(workload), "clients": _CLIENTS.value},
    )

    loaded = tf.saved_model.load(_SAVED_MODEL.value)
    serve = loaded.signatures["serving_default"]
    token_counts = loaded.source_lengths(tf.constant(sources)).numpy().tolist()

    def batches_of(size: int) -> None:
        for start in range(0, len(sources), size):
            serve(text=tf.constant(sources[start : start + size]))["translation"].numpy()

    direct = {}
    for size in (64, 32):  # 32: the largest batch 32 single-sentence clients can make
        batches_of(size)  # warm-up: tracing, XLA compilation of a --jit_compile export
        _, seconds = harness.timed(lambda size=size: batches_of(size))
        direct[size] = len(sources) / seconds
        print(f"RESULT SavedModel alone, batch {size}: {direct[size]:.1f} sentences/s", flush=True)

    figures = {}
    for batching in (True, False):
        process, url = start_server(batching)
        try:
            warm_up(url, warm_up_requests(sources, token_counts))
            for count in clients:
                seconds, latencies = asyncio.run(load(url, count, workload))
                rate = len(workload) / seconds
                figures[batching, count] = rate
                print(
                    f"RESULT serve.py batching {'on' if batching else 'off'}, {count} clients: "
                    f"{rate:.1f} sentences/s, latency p50 "
                    f"{statistics.median(latencies) * 1e3:.0f} ms, p99 "
                    f"{percentile(latencies, 0.99) * 1e3:.0f} ms",
                    flush=True,
                )
        finally:
            process.terminate()
            process.wait()
    most = max(clients)
    print(
        f"RESULT {most} clients, batching on / SavedModel batch 64: "
        f"{figures[True, most] / direct[64]:.2f} (target >= 0.8); batching on / off: "
        f"{figures[True, most] / figures[False, most]:.2f}"
    )


if __name__ == "__main__":
    app.run(main)
