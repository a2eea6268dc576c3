"""`tagflow serve` over plain sockets: the endpoints of docs/serve.md, the token off loopback,
requests of other sites' pages refused, static files that cannot leave their folder, and a
bounded stream of garbage (malformed HTTP, broken WebSocket frames) that must neither crash nor
stall the run.

Run by ctest with TAGFLOW_CLI set to the `tagflow` binary.
"""

import base64
import http.client
import io
import json
import os
import pathlib
import random
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import h5py
import pytest

CLI = os.environ.get("TAGFLOW_CLI", "build/tools/tagflow")
CONFIG = pathlib.Path(__file__).parent / "serve_live.toml"


class Served:
    """A `tagflow serve` process and the URL it printed."""

    def __init__(self, tmp_path, *args, config=CONFIG):
        self.output = tmp_path / "results.h5"
        self.process = subprocess.Popen(
            [CLI, "serve", str(config), "--port", "0", "-o", str(self.output), "-q", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        assert line.startswith("serving "), f"unexpected first line {line!r}"
        self.url = line.split()[1]
        parsed = urllib.parse.urlsplit(self.url)
        self.host = parsed.hostname
        self.port = parsed.port
        self.token = urllib.parse.parse_qs(parsed.query).get("token", [""])[0]
        self.base = f"http://{self.host}:{self.port}"

    def get(self, path, token=None, data=None):
        """(status, body bytes) of a request; `token` None sends the server's own."""
        token = self.token if token is None else token
        url = self.base + path
        if token:
            url += ("&" if "?" in url else "?") + "token=" + token
        request = urllib.request.Request(url, data=data, method="POST" if data else "GET",
                                         headers={"Content-Type": "application/json"} if data
                                         else {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def snapshot(self):
        status, body = self.get("/api/snapshot")
        assert status == 200
        return json.loads(body)

    def control(self, **request):
        status, body = self.get("/api/control", data=json.dumps(request).encode())
        return status, json.loads(body)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def served(tmp_path):
    server = Served(tmp_path)
    yield server
    server.stop()


def measurement(snapshot, name):
    return next(m for m in snapshot["measurements"] if m["name"] == name)


def wait_for(condition, timeout_s=20, what="condition"):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def raw_exchange(server, payload, read_timeout_s=5):
    """Sends bytes on a fresh connection and returns what comes back until the server closes
    or goes quiet."""
    with socket.create_connection((server.host, server.port), timeout=read_timeout_s) as sock:
        try:
            sock.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):
            return b""
        received = b""
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += chunk
        except (socket.timeout, ConnectionResetError):
            pass
        return received


def websocket_connect(server, token=None, origin=None):
    """A WebSocket handshake by hand, from a page of `origin` if given; returns (socket, status
    line)."""
    token = server.token if token is None else token
    path = "/ws" + (f"?token={token}" if token else "")
    key = base64.b64encode(os.urandom(16)).decode()
    sock = socket.create_connection((server.host, server.port), timeout=10)
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {server.host}:{server.port}\r\n"
                  + (f"Origin: {origin}\r\n" if origin else "") +
                  "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        if not chunk:
            break
        head += chunk
    return sock, head.split(b"\r\n")[0].decode()


def receive_exactly(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def websocket_message(sock):
    """One server message, its fragments joined: (opcode, payload)."""
    opcode, payload = None, b""
    while True:
        first, second = receive_exactly(sock, 2)
        length = second & 0x7F
        if length == 126:
            length = struct.unpack(">H", receive_exactly(sock, 2))[0]
        elif length == 127:
            length = struct.unpack(">Q", receive_exactly(sock, 8))[0]
        opcode = first & 0x0F if opcode is None else opcode
        payload += receive_exactly(sock, length)
        if first & 0x80:
            return opcode, payload


def test_endpoints_answer_as_documented(served):
    status, page = served.get("/")
    assert status == 200 and b"<html" in page.lower()
    status, graph = served.get("/api/graph")
    assert status == 200
    names = [m["name"] for m in json.loads(graph)["measurements"]]
    assert names == ["counter", "rates", "g2", "g2_aligned", "g2_log", "stability", "phase_noise"]
    first = served.snapshot()
    assert first["type"] == "snapshot" and first["run"]["state"] == "running"
    second = wait_for(lambda: (s := served.snapshot())["profile"]["tags"] >
                      first["profile"]["tags"] and s, what="the run to go on")
    nodes = [node["name"] for node in second["profile"]["nodes"]]
    assert nodes[0] == "source" and set(names) <= set(nodes)
    counter = measurement(second, "counter")
    assert counter["arrays"]["data"]["shape"] == [3, 200]
    assert len(counter["arrays"]["data"]["data"]) == 600
    status, body = served.get("/api/nothing")
    assert status == 404
    status, body = served.get("/api/graph", data=b"{}")
    assert status == 405


def test_head_answers_with_the_headers_only_and_keeps_the_connection(served):
    connection = http.client.HTTPConnection(served.host, served.port, timeout=10)
    try:
        for path, made_per_request in [("/", False), ("/api/graph", False),
                                       ("/api/snapshot", True), ("/api/results.h5", True)]:
            connection.request("HEAD", path)
            head = connection.getresponse()
            assert head.status == 200 and head.read() == b"", path
            # The next answer on the same connection starts right after those headers.
            connection.request("GET", path)
            got = connection.getresponse()
            body = got.read()
            assert got.status == 200, path
            assert head.getheader("Content-Type") == got.getheader("Content-Type"), path
            if made_per_request:
                # Not made for a HEAD, so its length is not known.
                assert head.getheader("Content-Length") is None, path
            else:
                assert int(head.getheader("Content-Length")) == len(body) > 0, path
        assert head.getheader("Content-Disposition") == got.getheader("Content-Disposition")
        # A HEAD makes no snapshot: the numbers of two made around one go on by one.
        sequences = []
        for method in ["GET", "HEAD", "GET"]:
            connection.request(method, "/api/snapshot")
            answer = connection.getresponse().read()
            if method == "GET":
                sequences.append(json.loads(answer)["seq"])
        assert sequences[1] == sequences[0] + 1
    finally:
        connection.close()


def test_controls_act_on_one_measurement_and_refuse_bad_requests(served):
    wait_for(lambda: measurement(served.snapshot(), "counter")["capture_duration_ps"] > 0,
             what="the counter to capture")
    status, answer = served.control(action="stop", measurement="counter")
    assert status == 200 and answer == {"ok": True}
    stopped = wait_for(lambda: not (m := measurement(served.snapshot(), "counter"))["running"]
                       and m, what="the counter to stop")
    others = measurement(served.snapshot(), "rates")["capture_duration_ps"]
    time.sleep(0.5)
    later = served.snapshot()
    assert measurement(later, "counter")["capture_duration_ps"] == stopped["capture_duration_ps"]
    assert measurement(later, "rates")["capture_duration_ps"] > others

    status, answer = served.control(action="clear", measurement="counter")
    assert status == 200
    assert measurement(served.snapshot(), "counter")["capture_duration_ps"] == 0
    status, answer = served.control(action="start_for", measurement="counter",
                                    duration_ps=50_000_000_000)
    assert status == 200
    wait_for(lambda: measurement(served.snapshot(), "counter")["capture_duration_ps"] ==
             50_000_000_000, what="start_for to capture exactly 50 ms")

    for request, expected in [
            ({"action": "fly", "measurement": "counter"}, "unknown action 'fly'"),
            ({"action": "stop", "measurement": "nope"}, "unknown measurement 'nope' (valid: "),
            ({"action": "stop"}, '"measurement" is missing'),
            ({"action": "start_for", "measurement": "counter", "duration_ps": -5},
             "duration_ps -5 is invalid"),
            ({"action": "start_for", "measurement": "counter", "duration_ps": 1.5},
             "duration_ps 1.5 is invalid")]:
        status, answer = served.control(**request)
        assert status == 400 and expected in answer["error"], (request, answer)
    status, body = served.get("/api/control", data=b"{not json")
    assert status == 400 and b"not a JSON object" in body


def test_a_delay_set_while_running_moves_the_correlation_peak(served):
    """Alignment as on the page: channel 2 echoes channel 1 1 ns later, so the correlation of
    channel 2 with "aligned" (channel 1 behind a settable delay) peaks at 1 ns until the delay
    is set to 1 ns, then at 0 (the echo's jitter is 50 ps; bins are 10 ps)."""
    def peak_ps():
        arrays = measurement(served.snapshot(), "g2_aligned")["arrays"]
        data, index = arrays["data"]["data"], arrays["index"]["data"]
        if sum(data) < 500:
            return None
        return [index[max(range(len(data)), key=data.__getitem__)]]

    def settings():
        return {c["name"]: c["settings"] for c in served.snapshot()["channels"]}

    assert settings() == {"aligned": {"delay": 0}}
    [before] = wait_for(peak_ps, what="a correlation peak before the delay is set")
    assert abs(abs(before) - 1000) <= 150, before
    status, answer = served.control(action="set", channel="aligned", key="delay", value=1000)
    assert status == 200 and answer == {"ok": True}
    assert settings() == {"aligned": {"delay": 1000}}
    status, _ = served.control(action="clear", measurement="g2_aligned")
    assert status == 200
    [after] = wait_for(peak_ps, what="a correlation peak after the delay was set")
    assert abs(after) <= 150, (before, after)

    for request, expected in [
            ({"key": "delay", "value": 1}, '"channel" is missing'),
            ({"channel": "nope", "key": "delay", "value": 1},
             "unknown virtual channel 'nope' (valid: aligned)"),
            ({"channel": "aligned", "value": 1}, '"key" is missing'),
            ({"channel": "aligned", "key": "speed", "value": 1},
             "DelayedChannel 'aligned': 'speed' cannot be changed while the stream runs "
             "(valid: delay)"),
            ({"channel": "aligned", "key": "delay", "value": 1.5}, "value 1.5 is invalid"),
            ({"channel": "aligned", "key": "delay"}, "value (missing) is invalid"),
            ({"channel": "aligned", "key": "delay", "value": -3},
             "delay -3 ps is invalid (valid: 0..")]:
        status, answer = served.control(action="set", **request)
        assert status == 400 and expected in answer["error"], (request, answer)
    assert settings() == {"aligned": {"delay": 1000}}
    # The results keep the change, from the block that first used it.
    status, body = served.get("/api/results.h5")
    assert status == 200
    with h5py.File(io.BytesIO(body), "r") as results:
        aligned = results["virtual_channels/aligned"]
        assert aligned.attrs["kind"] == "DelayedChannel" and aligned.attrs["delay"] == 0
        assert list(aligned["delay_changes"]) == [1000]
        assert aligned["delay_changed_from"].shape == (1,) and aligned["delay_changed_from"][0] > 0


def status_of(server, method, path, headers, body=b""):
    """The status code of one request made of `headers` (lines) on a fresh connection."""
    head = [f"{method} {path} HTTP/1.1", *headers, f"Content-Length: {len(body)}",
            "Connection: close"]
    answer = raw_exchange(server, ("\r\n".join(head) + "\r\n\r\n").encode() + body)
    return int(answer.split(b" ", 2)[1])


def test_pages_of_other_sites_can_neither_read_nor_act(served):
    own_host = f"Host: 127.0.0.1:{served.port}"
    json_body = "Content-Type: application/json"
    stop = json.dumps({"action": "stop", "measurement": "counter"}).encode()
    # What any page may send without asking: a form's text/plain body, or a foreign Origin.
    assert status_of(served, "POST", "/api/control", [own_host, "Content-Type: text/plain"],
                     stop) == 415
    assert status_of(served, "POST", "/api/control", [own_host], stop) == 415
    assert status_of(served, "POST", "/api/control",
                     [own_host, json_body, "Origin: http://evil.example"], stop) == 403
    assert status_of(served, "GET", "/api/snapshot",
                     [own_host, "Origin: http://evil.example"]) == 403
    assert status_of(served, "GET", "/api/snapshot", [own_host, "Origin: null"]) == 403
    # DNS rebinding: another site's name that resolves to 127.0.0.1.
    assert status_of(served, "GET", "/api/snapshot", [f"Host: evil.example:{served.port}"]) == 403
    assert status_of(served, "GET", "/api/snapshot",
                     [f"Host: evil.example:{served.port}",
                      f"Origin: http://evil.example:{served.port}"]) == 403
    _, status = websocket_connect(served, origin="http://evil.example")
    assert status.startswith("HTTP/1.1 403")
    assert measurement(served.snapshot(), "counter")["running"]

    # The page itself, opened as 127.0.0.1 or as localhost.
    for host in [f"127.0.0.1:{served.port}", f"localhost:{served.port}"]:
        own = [f"Host: {host}", f"Origin: http://{host}"]
        assert status_of(served, "GET", "/api/snapshot", own) == 200
        assert status_of(served, "POST", "/api/control",
                         [*own, "Content-Type: application/json; charset=utf-8"],
                         json.dumps({"action": "start", "measurement": "counter"}).encode()) == 200
    sock, status = websocket_connect(served, origin=f"http://127.0.0.1:{served.port}")
    assert status == "HTTP/1.1 101 Switching Protocols"
    sock.close()


def test_static_files_cannot_leave_their_folder(tmp_path):
    web = tmp_path / "web"
    shutil.copytree(pathlib.Path(CLI).resolve().parent.parent / "share" / "tagflow" / "web", web)
    secret = tmp_path / "secret.txt"
    secret.write_text("outside")
    (web / "link.txt").symlink_to(secret)
    server = Served(tmp_path, "--web-root", str(web))
    try:
        assert server.get("/index.html")[0] == 200
        for path in ["/../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt",
                     "/vendor/../../secret.txt", "/link.txt", "/%00", "/%zz", "/.%2e/secret.txt",
                     "/..\\secret.txt", "//etc/passwd", "/vendor"]:
            request = f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
            answer = raw_exchange(server, request)
            assert answer.startswith(b"HTTP/1.1 404") or answer.startswith(b"HTTP/1.1 400"), \
                (path, answer[:80])
            assert b"outside" not in answer and b"root:" not in answer
    finally:
        server.stop()


def test_garbage_neither_crashes_nor_stalls_the_run(served):
    rng = random.Random(5)
    before = served.snapshot()["profile"]["tags"]
    malformed = [
        b"\x00\xff" * 100 + b"\r\n\r\n",
        b"GET\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
        b"POST /api/control HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n\r\n{",
        b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40000 + b"\r\n\r\n",
        b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\n\r\n",
    ]
    for payload in malformed:
        answer = raw_exchange(served, payload)
        assert answer == b"" or answer.startswith(b"HTTP/1.1 4"), (payload[:40], answer[:80])

    def flood(seed):
        local = random.Random(seed)
        for _ in range(25):
            raw_exchange(served, bytes(local.getrandbits(8) for _ in range(local.randint(1, 4096))),
                         read_timeout_s=2)

    threads = [threading.Thread(target=flood, args=(rng.random(),)) for _ in range(8)]
    for thread in threads:
        thread.start()

    # WebSocket frames that break the protocol: each ends its own connection only.
    bad_frames = [
        b"\x81\x05hello",                                   # unmasked client frame
        b"\x83\x80\x00\x00\x00\x00",                       # reserved opcode
        b"\x81\xff" + struct.pack(">Q", 1 << 40) + b"\x00" * 4,  # absurd length
        b"\x01\x80\x00\x00\x00\x00\x09\x80\x00\x00\x00\x00" * 3,  # fragments interleaved badly
        bytes(rng.getrandbits(8) for _ in range(2000)),
    ]
    for frame in bad_frames:
        sock, status = websocket_connect(served)
        assert status == "HTTP/1.1 101 Switching Protocols"
        opcode, payload = websocket_message(sock)
        assert opcode == 1 and json.loads(payload)["type"] == "snapshot"
        sock.sendall(frame)
        sock.settimeout(10)
        try:
            while sock.recv(65536):
                pass
        except (socket.timeout, ConnectionResetError):
            pass
        sock.close()

    for thread in threads:
        thread.join()
    assert served.process.poll() is None
    after = wait_for(lambda: (s := served.snapshot())["profile"]["tags"] > before and s,
                     what="the run to go on after the garbage")
    assert after["run"]["state"] == "running"
    # A well-behaved page still gets its updates.
    sock, status = websocket_connect(served)
    assert status == "HTTP/1.1 101 Switching Protocols"
    sequences = [json.loads(websocket_message(sock)[1])["seq"] for _ in range(3)]
    assert sequences == sorted(sequences) and len(set(sequences)) == 3
    sock.close()


def test_other_addresses_require_the_token(tmp_path):
    server = Served(tmp_path, "--address", "0.0.0.0")
    try:
        assert len(server.token) == 32, server.url
        server.host = "127.0.0.1"
        server.base = f"http://127.0.0.1:{server.port}"
        assert server.get("/")[0] == 200  # the page itself holds no data
        for path in ["/api/graph", "/api/snapshot", "/api/results.h5"]:
            assert server.get(path, token="")[0] == 403
            assert server.get(path, token="0" * 32)[0] == 403
        assert server.get("/api/graph")[0] == 200
        status, _ = server.get("/api/control", token="",
                               data=json.dumps({"action": "stop_run"}).encode())
        assert status == 403 and server.process.poll() is None
        _, status = websocket_connect(server, token="")
        assert status.startswith("HTTP/1.1 403")
        sock, status = websocket_connect(server)
        assert status == "HTTP/1.1 101 Switching Protocols"
        sock.close()
        status, body = server.get("/api/results.h5")
        assert status == 200 and body[:8] == b"\x89HDF\r\n\x1a\n"
    finally:
        server.stop()


def interrupted(path):
    with h5py.File(path, "r") as f:
        return int(f.attrs["interrupted"])


def test_stop_run_writes_the_results_and_exits_cleanly(served):
    wait_for(lambda: served.snapshot()["profile"]["tags"] > 0, what="tags")
    status, answer = served.control(action="stop_run")
    assert status == 200
    assert served.process.wait(timeout=30) == 0
    # The endless stream was cut short: the file says so, as the page's download does.
    assert interrupted(served.output) == 1


@pytest.mark.parametrize("how, when, exit_code, cut_short", [
    ("stop_run", "after the end", 0, 0),
    ("SIGINT", "after the end", 0, 0),
    ("SIGINT", "during the run", 130, 1),
    ("SIGTERM", "during the run", 143, 1),
])
def test_the_results_file_says_whether_the_stream_was_cut_short(tmp_path, how, when, exit_code,
                                                                cut_short):
    during = when == "during the run"
    config = tmp_path / "stream.toml"
    # During the run: a minute of stream paced to real time; else a short one at full speed.
    config.write_text('[source]\nkind = "synthetic"\n' +
                      ('duration_ps = 60_000_000_000_000\nspeed = 1.0\n' if during else
                       'duration_ps = 10_000_000_000\n') +
                      '\n[[source.channel]]\nchannel = 1\nkind = "poisson"\nrate = 1e4\n\n'
                      '[[measurement]]\nkind = "Countrate"\nname = "rates"\nchannels = [1]\n')
    server = Served(tmp_path, config=config)
    try:
        # Tags have flowed once the run has begun, and with it the handling of signals.
        wait_for(lambda: (s := server.snapshot())["profile"]["tags"] > 0 and
                 s["run"]["state"] == ("running" if during else "finished"), what=f"the run {when}")
        if how == "stop_run":
            assert server.control(action="stop_run")[0] == 200
        else:
            server.process.send_signal(getattr(signal, how))
        assert server.process.wait(timeout=30) == exit_code, server.process.stderr.read()
        assert interrupted(server.output) == cut_short
    finally:
        server.stop()


def test_a_setting_is_refused_once_the_stream_has_ended(tmp_path):
    config = tmp_path / "short.toml"
    config.write_text('[source]\nkind = "synthetic"\nduration_ps = 1_000_000_000\n\n'
                      '[[source.channel]]\nchannel = 1\nkind = "poisson"\nrate = 1e6\n\n'
                      '[[channel]]\nkind = "DelayedChannel"\nname = "late"\n'
                      'input_channel = 1\ndelay = 10\n\n'
                      '[[measurement]]\nkind = "Countrate"\nname = "rates"\n'
                      'channels = ["late"]\n')
    server = Served(tmp_path, config=config)
    try:
        wait_for(lambda: server.snapshot()["run"]["state"] == "finished", what="the stream's end")
        status, answer = server.control(action="set", channel="late", key="delay", value=20)
        assert status == 400, answer
        assert answer["error"] == ("the stream has ended: 'delay' of 'late' would hold from the "
                                   "next block, and none will come")
        assert server.snapshot()["channels"][0]["settings"] == {"delay": 10}
    finally:
        server.stop()


def test_stop_run_ends_a_run_whose_source_waits_for_data(tmp_path):
    config = tmp_path / "udp.toml"
    config.write_text('[source]\nkind = "udp"\naddress = "127.0.0.1"\nport = 0\n\n'
                      '[[measurement]]\nkind = "Countrate"\nname = "rates"\nchannels = [1]\n')
    server = Served(tmp_path, config=config)
    try:
        assert server.snapshot()["source"]["statistics"]["datagrams_received"] == 0
        status, _ = server.control(action="stop_run")
        assert status == 200
        assert server.process.wait(timeout=30) == 0
        assert interrupted(server.output) == 1
    finally:
        server.stop()
