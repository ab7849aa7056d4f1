"""serve.py's throughput and latency on loopback, batching on and off, beside each model's own
in-process throughput; then an overload burst.

    .venv/bin/python benchmarks/serve_throughput.py --saved_model=runs/multi30k_de_en/saved_model \\
        --ctranslate2=runs/multi30k_de_en/ct2_int8
        [--clients=1,8,32,64 --requests=256 --data=multi30k/de-en --split=test2016 --sentences=256]

For each model given (a SavedModel and/or a CTranslate2 export, best of the same weights): first
the model alone, in this process: sentences/s at batch 64 and 32 (the largest batch 32
one-sentence clients can fill) over the ``--sentences`` source sentences of ``--data``
``--split`` (after one untimed pass). Then ``serve.py`` (a subprocess on a free loopback port)
with batching on (``--max_batch_size=64``, the given ``--batch_timeout_micros``), then off: for
each number of ``--clients``, that many concurrent clients (asyncio, one connection each, in this
process) send ``--requests`` single-sentence requests in all, each client its next request when
the previous one is answered; sentences/s and the p50 / p99 latency of a request. Before the
timed runs, each server gets untimed requests of every batch shape the workload can make (1, 2,
4, ... 64 sentences of each source length bucket: tracing and, for a SavedModel's XLA search,
compilation). The clients share the two cores with the server: what a client on the same machine
sees.

Last, the overload burst: ``--overload_clients`` clients each send one request at once to a
server whose queue holds ``--overload_queue`` batches of 8 sentences, with
``--request_timeout_seconds``: how many are answered, how many are refused (503) and how fast,
and the longest any client waited (it must stay within the timeout).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

import harness
import httpx2
from absl import flags

from cli.errors import run_main

_SAVED_MODEL = flags.DEFINE_string("saved_model", None, "An exported SavedModel.")
_CTRANSLATE2 = flags.DEFINE_string("ctranslate2", None, "A CTranslate2 export.")
_CTRANSLATE2_THREADS = flags.DEFINE_integer(
    "ctranslate2_threads",
    0,
    "CPU threads of the CTranslate2 model, in this process and served.",
    lower_bound=0,
)
_DATA = flags.DEFINE_string("data", "multi30k/de-en", "Data set the sentences come from.")
_SPLIT = flags.DEFINE_string("split", "test2016", "Its split.")
_SENTENCES = flags.DEFINE_integer("sentences", 256, "How many of its source sentences to send.")
_CLIENTS = flags.DEFINE_list("clients", ["1", "8", "32", "64"], "Numbers of concurrent clients.")
_REQUESTS = flags.DEFINE_integer("requests", 256, "Requests per number of clients.")
_BATCH_TIMEOUT_MICROS = flags.DEFINE_integer(
    "batch_timeout_micros", 2000, "serve.py's --batch_timeout_micros when batching."
)
_OVERLOAD_CLIENTS = flags.DEFINE_integer(
    "overload_clients", 64, "Clients of the overload burst (0: no burst).", lower_bound=0
)
_OVERLOAD_QUEUE = flags.DEFINE_integer(
    "overload_queue", 2, "--max_enqueued_batches of the burst's server.", lower_bound=1
)
_REQUEST_TIMEOUT_SECONDS = flags.DEFINE_float(
    "request_timeout_seconds", 10.0, "--request_timeout_seconds of the burst's server."
)
MODEL_URL = "/v1/models/default:predict"
TARGET_SHARE = {"SavedModel": 0.8, "CTranslate2": 0.7}  # served at 32 clients / in-process 64
TARGET_P50_SECONDS = {"SavedModel": 2.0}


def start_server(model_flag: str, *options: str) -> tuple[subprocess.Popen, str]:
    """serve.py on a free loopback port; returns the process and its URL once it serves."""
    process = subprocess.Popen(
        [sys.executable, str(harness.REPO_ROOT / "serve.py"), model_flag, "--port=0", *options],
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


async def burst(url: str, sentences: Sequence[str]) -> list[tuple[int, float]]:
    """One request per sentence, all at once; each answer's status and latency."""
    limits = httpx2.Limits(max_connections=len(sentences))
    async with httpx2.AsyncClient(base_url=url, timeout=600, limits=limits) as client:

        async def one(sentence: str) -> tuple[int, float]:
            started = time.perf_counter()
            answer = await client.post(MODEL_URL, json={"instances": [sentence]})
            return answer.status_code, time.perf_counter() - started

        return await asyncio.gather(*(one(sentence) for sentence in sentences))


def warm_up_requests(sentences: Sequence[str], token_counts: Sequence[int]) -> list[list[str]]:
    """A request of 1, 2, 4, ... 64 sentences for each group of sentences whose source fills
    the same multiple of 16 tokens (EOS included): every (batch, length) shape an XLA search
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


def saved_model_in_process(path: str) -> tuple[Callable[[list[str]], object], Callable]:
    """The SavedModel's translation of a batch, and its sources' token counts."""
    import tensorflow as tf

    from exports.contract import SERVING_DEFAULT, TEXT, TRANSLATION
    from exports.saved_model import SavedModelTranslator

    translator = SavedModelTranslator(path)
    serve = translator.loaded.signatures[SERVING_DEFAULT]

    def translate(batch: list[str]) -> object:
        return serve(**{TEXT: tf.constant(batch)})[TRANSLATION].numpy()

    return translate, translator.source_lengths


def ctranslate2_in_process(path: str) -> tuple[Callable[[list[str]], object], Callable]:
    """The export's translation of a batch, and its sources' token counts."""
    from exports.ctranslate2 import CTranslate2Translator

    translator = CTranslate2Translator(path, threads=_CTRANSLATE2_THREADS.value)
    return translator.translate_batch, translator.source_lengths


def measure(runtime: str, model_flag: str, path: str, sources: list[str]) -> None:
    """In-process batches, served clients with batching on and off, the overload burst."""
    loader = saved_model_in_process if runtime == "SavedModel" else ctranslate2_in_process
    model_flags = [f"--{model_flag}={path}"]
    if runtime == "CTranslate2":
        model_flags.append(f"--ctranslate2_threads={_CTRANSLATE2_THREADS.value}")
    translate, token_counts = loader(path)
    workload = [sources[i % len(sources)] for i in range(_REQUESTS.value)]
    clients = [int(count) for count in _CLIENTS.value]

    def batches_of(size: int) -> None:
        for start in range(0, len(sources), size):
            translate(sources[start : start + size])

    direct = {}
    for size in (64, 32):  # 32: the largest batch 32 single-sentence clients can make
        batches_of(size)  # warm-up: tracing, XLA compilation
        _, seconds = harness.timed(lambda size=size: batches_of(size))
        direct[size] = len(sources) / seconds
        print(f"RESULT {runtime} alone, batch {size}: {direct[size]:.1f} sentences/s", flush=True)

    warm_ups = warm_up_requests(sources, token_counts(sources))
    figures = {}
    for batching in (True, False):
        process, url = start_server(
            *model_flags,
            "--enable_batching" if batching else "--noenable_batching",
            "--max_batch_size=64",
            f"--batch_timeout_micros={_BATCH_TIMEOUT_MICROS.value}",
            "--max_enqueued_batches=64",  # the closed-loop clients never fill it
        )
        try:
            warm_up(url, warm_ups)
            for count in clients:
                seconds, latencies = asyncio.run(load(url, count, workload))
                rate, p50 = len(workload) / seconds, statistics.median(latencies)
                figures[batching, count] = rate, p50
                print(
                    f"RESULT {runtime} served, batching {'on' if batching else 'off'}, {count} "
                    f"clients: {rate:.1f} sentences/s, latency p50 {p50 * 1e3:.0f} ms, p99 "
                    f"{percentile(latencies, 0.99) * 1e3:.0f} ms",
                    flush=True,
                )
        finally:
            process.terminate()
            process.wait()
    judged = 32 if 32 in clients else max(clients)
    rate, p50 = figures[True, judged]
    target = f"target >= {TARGET_SHARE[runtime]}"
    if runtime in TARGET_P50_SECONDS:
        target += f", p50 < {TARGET_P50_SECONDS[runtime]:g} s"
    print(
        f"RESULT {runtime}, {judged} clients, batching on / alone at batch 64: "
        f"{rate / direct[64]:.2f} ({target}; p50 {p50:.2f} s); batching on / off: "
        f"{rate / figures[False, judged][0]:.2f}",
        flush=True,
    )
    if _OVERLOAD_CLIENTS.value:
        overload(runtime, model_flags, sources, warm_ups)


def overload(
    runtime: str, model_flags: list[str], sources: list[str], warm_ups: list[list[str]]
) -> None:
    timeout = _REQUEST_TIMEOUT_SECONDS.value
    process, url = start_server(
        *model_flags,
        "--max_batch_size=8",
        f"--max_enqueued_batches={_OVERLOAD_QUEUE.value}",
        f"--request_timeout_seconds={timeout}",
    )
    try:
        warm_up(url, [request for request in warm_ups if len(request) <= 8])
        sentences = [sources[i % len(sources)] for i in range(_OVERLOAD_CLIENTS.value)]
        answers = asyncio.run(burst(url, sentences))
    finally:
        process.terminate()
        process.wait()
    answered = [seconds for status, seconds in answers if status == 200]
    refused = [seconds for status, seconds in answers if status == 503]
    longest = max(seconds for _, seconds in answers)
    print(
        f"RESULT {runtime} overload, {len(answers)} clients at once, queue "
        f"{_OVERLOAD_QUEUE.value} x 8 sentences: {len(answered)} answered (slowest "
        f"{max(answered, default=0):.2f} s), {len(refused)} refused with 503 (median "
        f"{statistics.median(refused) * 1e3 if refused else 0:.0f} ms), other "
        f"{len(answers) - len(answered) - len(refused)}; longest wait {longest:.2f} s "
        f"(--request_timeout_seconds={timeout:g})",
        flush=True,
    )


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    if not _SAVED_MODEL.value and not _CTRANSLATE2.value:
        raise SystemExit("error: give --saved_model=DIR and/or --ctranslate2=DIR")
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # not a line per request
    from exports.contract import DecodingSettings
    from exports.saved_model import require_saved_model

    if _SAVED_MODEL.value:  # a path that holds no export: one line before the data is read
        require_saved_model(_SAVED_MODEL.value)
    if _CTRANSLATE2.value:
        DecodingSettings.read(_CTRANSLATE2.value)
    from data_pipeline import load_translation_splits, spec  # only to read the sentences

    pairs = load_translation_splits(spec.parse(_DATA.value), [_SPLIT.value])[_SPLIT.value]
    sources = [s.decode() for s, _ in pairs.take(_SENTENCES.value).as_numpy_iterator()]
    harness.print_config(
        "workload",
        {"sentences": len(sources), "requests": _REQUESTS.value, "clients": _CLIENTS.value},
    )
    if _SAVED_MODEL.value:
        measure("SavedModel", "saved_model", _SAVED_MODEL.value, sources)
    if _CTRANSLATE2.value:
        measure("CTranslate2", "ctranslate2", _CTRANSLATE2.value, sources)


if __name__ == "__main__":
    run_main(main)
