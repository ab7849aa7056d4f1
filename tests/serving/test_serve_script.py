"""serve.py on a free loopback port: the API, bad input, a load test, disconnects, overload,
SIGTERM, CTranslate2 exports."""

from __future__ import annotations

import asyncio
import concurrent.futures
import signal
import socket
import subprocess
import sys
import time

import httpx2
import tensorflow as tf

from serving.service import CLOSE_SECONDS
from tests.script_runner import REPO_ROOT, run_in_process


def test_row_columnar_status_metadata_and_every_bad_input_then_it_still_answers(
    server, bad_requests, tiny_served, translate_directly
):
    sentences = ["Ein Hund rennt.", "Zwei Frauen lachen."]
    expected = translate_directly(tiny_served, sentences)
    assert len(set(expected)) == len(expected), f"rows the test cannot tell apart: {expected}"
    with httpx2.Client(base_url=server, timeout=60) as client:
        predict = "/v1/models/de-en:predict"
        assert client.post(predict, json={"instances": sentences}).json() == {
            "predictions": expected
        }
        assert client.post(predict, json={"inputs": {"text": sentences}}).json() == {
            "outputs": expected
        }
        status = client.get("/v1/models/de-en").json()["model_version_status"]
        assert [(s["version"], s["state"]) for s in status] == [("7", "AVAILABLE")]
        assert client.get("/v1/models/de-en/versions/7/metadata").json() == tiny_served.metadata()
        for bad in bad_requests:
            answer = client.request(bad.method, bad.path, json=bad.json, content=bad.content)
            assert answer.status_code == bad.status, (bad.what, answer.text)
            assert bad.message in answer.json()["error"], (bad.what, answer.text)
        assert client.post(predict, json={"instances": sentences}).json() == {
            "predictions": expected
        }


async def _load(url: str, requests: list[list[tuple[str, str]]]) -> list[tuple[int, object]]:
    """Each client sends its (model, sentence) requests one after the other, all concurrently."""
    limits = httpx2.Limits(max_connections=len(requests))
    async with httpx2.AsyncClient(base_url=url, timeout=120, limits=limits) as client:

        async def one_client(own: list[tuple[str, str]]) -> list[tuple[int, object]]:
            answers = []
            for model, sentence in own:
                answer = await client.post(
                    f"/v1/models/{model}:predict", json={"instances": [sentence]}
                )
                answers.append((answer.status_code, answer.json()))
            return answers

        per_client = await asyncio.gather(*(one_client(own) for own in requests))
    return [answer for answers in per_client for answer in answers]


def test_32_concurrent_clients_each_get_their_own_translations(
    server, tiny_served, translate_directly, shout
):
    clients, per_client = 32, 20
    requests = [
        [
            ("shout" if (c + r) % 2 else "de-en", f"Satz {c}-{r}: ein Hund läuft {c * r} Meter.")
            for r in range(per_client)
        ]
        for c in range(clients)
    ]
    flat = [request for own in requests for request in own]
    german = [sentence for model, sentence in flat if model == "de-en"]
    translations = dict(zip(german, translate_directly(tiny_served, german), strict=True))
    expected = [
        {"predictions": [shout(s) if model == "shout" else translations[s]]} for model, s in flat
    ]
    started = time.perf_counter()
    answers = asyncio.run(_load(server, requests))
    seconds = time.perf_counter() - started
    assert len(answers) == clients * per_client == len(set(german)) * 2
    assert [status for status, _ in answers] == [200] * len(answers)
    assert [body for _, body in answers] == expected
    print(f"{len(answers)} requests from {clients} clients in {seconds:.1f} s")


def test_clients_that_disconnect_mid_request_harm_nothing(server, shout):
    host, port = server.removeprefix("http://").split(":")
    body = b'{"instances": ["' + b"Ein Hund. " * 10 + b'"]}'
    head = f"POST /v1/models/de-en:predict HTTP/1.1\r\nHost: {host}\r\n".encode()
    for sent in (
        head + b"Content-Length: 1000\r\n\r\n" + body[:20],  # body cut short
        head + f"Content-Length: {len(body)}\r\n\r\n".encode() + body,  # gone before the answer
        b"POST /v1/models/de-en:pre",  # request line cut short
    ):
        with socket.create_connection((host, int(port))) as connection:
            connection.sendall(sent)
    time.sleep(0.5)
    answer = httpx2.post(f"{server}/v1/models/shout:predict", json={"instances": ["ok"]})
    assert answer.json() == {"predictions": [shout("ok")]}


def test_busy_model_does_not_block_the_server_and_sigterm_finishes_requests_in_flight(
    start_server, tiny_saved_model, tiny_served, translate_directly
):
    process, url = start_server(f"--saved_model={tiny_saved_model}", "--noenable_batching")
    sentence = "Zwei junge Männer in roten Hemden spielen auf einer grünen Wiese Fußball."
    requests = [[f"{sentence} ({i}.{j})" for j in range(8)] for i in range(16)]
    done: list[int] = []

    def send(sentences: list[str]) -> httpx2.Response:
        answer = httpx2.post(
            f"{url}/v1/models/default:predict", json={"instances": sentences}, timeout=120
        )
        done.append(1)
        return answer

    with concurrent.futures.ThreadPoolExecutor(len(requests)) as pool:
        futures = [pool.submit(send, sentences) for sentences in requests]
        while not done:
            time.sleep(0.005)
        # The model works on its own thread: the server answers while translations wait.
        status = httpx2.get(f"{url}/v1/models/default", timeout=60)
        answered_meanwhile = len(done) < len(requests)
        process.send_signal(signal.SIGTERM)
        in_flight = len(requests) - len(done)
        answers = [future.result() for future in futures]
    _, stderr = process.communicate(timeout=60)
    assert status.status_code == 200 and answered_meanwhile and in_flight > 0
    assert process.returncode == 0, stderr[-2000:]
    assert "Traceback" not in stderr
    for sentences, answer in zip(requests, answers, strict=True):
        assert answer.status_code == 200
        assert answer.json() == {"predictions": translate_directly(tiny_served, sentences)}


def test_bad_command_lines_and_missing_models_are_one_line_errors(tmp_path, shout_saved_model):
    # (Bad model names and two models under one name: tests/serving/test_registry.py.)
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        cases = [
            ([], "nothing to serve: give --saved_model=DIR or --ctranslate2=DIR"),
            (
                [f"--saved_model={shout_saved_model}", "--request_timeout_seconds=0"],
                "--request_timeout_seconds must be positive",
            ),
            (
                [f"--ctranslate2={tmp_path}/none", "--port=0"],
                f"No CTranslate2 export in {tmp_path}",
            ),
            ([f"--saved_model={shout_saved_model}", "--port=abc"], "flag --port=abc"),
            (
                [f"--saved_model={shout_saved_model}", "--port=70000"],
                "not an integer in the range [0, 65535]",
            ),
            ([f"--saved_model={shout_saved_model}", "--max_sentences=0"], "not a positive integer"),
            ([f"--saved_model={shout_saved_model}", f"--port={port}"], "cannot listen on"),
            ([f"--saved_model={tmp_path}/none", "--port=0"], f"No SavedModel in {tmp_path}/none"),
        ]
        for args, message in cases:
            completed = run_in_process("serve.py", *args)
            last_line = completed.stderr.strip().splitlines()[-1]
            assert completed.returncode == 1, (args, completed.stderr)
            assert last_line.startswith("error: ") and message in last_line, (args, last_line)
            assert "Traceback" not in completed.stderr


def test_a_bad_command_line_fails_before_tensorflow_is_imported():
    script = (
        "import runpy, sys\n"
        "sys.argv = ['serve.py', '--saved_model=x', '--max_batch_size=0']\n"
        "try:\n"
        "    runpy.run_path('serve.py', run_name='__main__')\n"
        "except SystemExit as exit:\n"
        "    print(exit.code, 'tensorflow' in sys.modules)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO_ROOT
    )
    assert completed.stdout.startswith("error: bad command line: flag --max_batch_size=0")
    assert completed.stdout.endswith(" False\n"), completed.stdout


class _HangsOnRequest(tf.Module):
    """Echoes its text; the sentence "hang" makes the call loop forever (a model that hangs)."""

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def serve(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        hang = tf.reduce_any(tf.equal(text, "hang"))
        steps = tf.while_loop(lambda step: hang, lambda step: step + 1, [tf.constant(0)])
        return {"translation": tf.strings.join([text, tf.strings.as_string(steps)], "#")}


def _stalled_body(url: str, path: str) -> tuple[bytes, float]:
    """Sends a request whose body stops after 10 of its 100 bytes; returns all the server sent
    before closing the connection, and when that was."""
    host, port = url.removeprefix("http://").split(":")
    head = f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 100\r\n\r\n".encode()
    started = time.perf_counter()
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(head + b'{"instance')
        received = b""
        while chunk := connection.recv(4096):
            received += chunk
    return received, time.perf_counter() - started


def test_overload_gets_503s_with_retry_after_a_stalled_body_408_and_sigterm_beats_a_hung_model(
    start_server, tmp_path
):
    module = _HangsOnRequest()
    tf.saved_model.save(module, str(tmp_path / "m"), signatures={"serving_default": module.serve})
    graceful = 1.0
    process, url = start_server(
        f"--saved_model=hang={tmp_path / 'm'}",
        "--max_batch_size=1",
        "--max_enqueued_batches=1",
        "--batch_timeout_micros=0",
        "--request_timeout_seconds=2",
        "--body_timeout_seconds=0.5",
        f"--graceful_shutdown_seconds={graceful}",
    )
    predict = f"{url}/v1/models/hang:predict"
    assert httpx2.post(predict, json={"instances": ["a"]}).json() == {"predictions": ["a#0"]}

    received, seconds = _stalled_body(url, "/v1/models/hang:predict")
    assert received.startswith(b"HTTP/1.1 408 ") and 0.5 <= seconds < 3, (received, seconds)
    assert b"did not arrive within 0.5 s (--body_timeout_seconds)" in received

    def post(sentence: str) -> tuple[httpx2.Response, float]:
        started = time.perf_counter()
        answer = httpx2.post(predict, json={"instances": [sentence]}, timeout=30)
        return answer, time.perf_counter() - started

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        hung = pool.submit(post, "hang")  # holds the model's thread for good
        time.sleep(0.3)
        queued = pool.submit(post, "queued")  # the one batch the queue holds
        time.sleep(0.3)
        refused = [pool.submit(post, f"more {i}") for i in range(6)]
        answers = [future.result() for future in [hung, queued, *refused]]
    for answer, seconds in answers:  # nobody waits much past --request_timeout_seconds
        assert answer.status_code == 503 and seconds < 4, (answer.text, seconds)
        assert int(answer.headers["Retry-After"]) >= 1
    assert "--request_timeout_seconds" in answers[0][0].json()["error"]
    assert "--request_timeout_seconds" in answers[1][0].json()["error"]
    for answer, seconds in answers[2:]:  # refused at once: the queue was full
        assert "--max_enqueued_batches" in answer.json()["error"] and seconds < 1, answer.text

    started = time.perf_counter()
    process.send_signal(signal.SIGTERM)  # the "hang" call still runs on the model's thread
    _, stderr = process.communicate(timeout=60)
    assert time.perf_counter() - started < graceful + CLOSE_SECONDS + 3, stderr[-2000:]
    assert process.returncode == 0, stderr[-2000:]
    assert "a call still running after" in stderr and "Traceback" not in stderr


def test_a_ctranslate2_export_is_served_by_serve_py_without_tensorflow(
    start_server, tiny_ctranslate2, ctranslate2_served, translate_directly
):
    process, url = start_server(
        f"--ctranslate2=de-en={tiny_ctranslate2}", "--ctranslate2_threads=1"
    )
    sentences = ["Ein Hund rennt.", "Zwei Frauen lachen."]
    expected = translate_directly(ctranslate2_served, sentences)
    assert len(set(expected)) == len(expected), f"rows the test cannot tell apart: {expected}"
    answer = httpx2.post(f"{url}/v1/models/de-en:predict", json={"instances": sentences})
    assert answer.json() == {"predictions": expected}
    with open(f"/proc/{process.pid}/maps", encoding="utf-8") as maps:
        libraries = maps.read()
    process.terminate()
    _, stderr = process.communicate(timeout=60)
    assert "ctranslate2" in libraries and "libtensorflow" not in libraries
    assert process.returncode == 0, stderr[-2000:]
