"""An independent OpenAI Realtime (GA event names) test server, written against the
public API reference with the `websockets` package, sharing no code with rtload.

What it does, per connection (like the real API where a client can tell):
  on connect             session.created (the full session: server_vad on, create_response
                         true, 24 kHz audio/pcm in and out)
  session.update         deep-merged into the session (JSON null clears a field, so
                         turn_detection: null turns voice detection off); session.updated.
                         A session without `type` is refused like the real API does.
  input_audio_buffer.append
                         appended; with voice detection, 10 ms frames are classified by
                         energy (speech when the RMS exceeds threshold * 3000 of 32767):
                         input_audio_buffer.speech_started at the first speech frame,
                         then after silence_duration_ms of silence speech_stopped, the
                         buffer committed (input_audio_buffer.committed) and, with
                         create_response (the default), a response of its own
  input_audio_buffer.commit
                         committed (fewer than 100 ms buffered: the real API's
                         input_audio_buffer_commit_empty error)
  response.create        a response: response.created, response.output_item.added,
                         response.content_part.added, then after --first-audio-ms
                         --deltas pairs of response.output_audio.delta (base64 PCM16 24 kHz
                         tone) and response.output_audio_transcript.delta, --every-ms
                         apart, then the *.done events and response.done. One response at
                         a time, as in the real API: a response.create while one is active
                         gets the conversation_already_has_active_response error.

It stamps every client event's arrival (when its last frame is read off the socket, in the
event loop's read callback) and every event it sends (just before it is written) with
time.monotonic_ns(),
and each response's trigger (the client's response.create, stamped on arrival, or its own
voice detection) and first audio delta. Usage:

  python openai_ga_server.py LOG.json [--first-audio-ms 40] [--deltas 4] [--every-ms 100]

It prints `PORT <n>` once listening on 127.0.0.1 (port 0), and when its stdin closes
writes the log as JSON to LOG.json and exits.
"""

import argparse
import asyncio
import base64
import collections
import copy
import itertools
import json
import math
import operator
import struct
import sys
import time

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import DATA_OPCODES

RATE = 24000
FRAME = RATE // 100  # 10 ms of samples
IDS = itertools.count()


def new_id(prefix):
    return f"{prefix}_{next(IDS):06d}"


def default_session():
    return {
        "type": "realtime",
        "object": "realtime.session",
        "id": new_id("sess"),
        "model": "gpt-realtime",
        "output_modalities": ["audio"],
        "instructions": "",
        "audio": {
            "input": {
                "format": {"type": "audio/pcm", "rate": RATE},
                "transcription": None,
                "noise_reduction": None,
                "turn_detection": {
                    "type": "server_vad",
                    "threshold": 0.5,
                    "prefix_padding_ms": 300,
                    "silence_duration_ms": 500,
                    "create_response": True,
                    "interrupt_response": True,
                    "idle_timeout_ms": None,
                },
            },
            "output": {"format": {"type": "audio/pcm", "rate": RATE}, "voice": "alloy", "speed": 1.0},
        },
        "tools": [],
        "tool_choice": "auto",
        "max_output_tokens": "inf",
    }


def merge(dst, src):
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            merge(dst[k], v)
        else:
            dst[k] = copy.deepcopy(v)


def tone_b64(ms):
    n = RATE * ms // 1000
    pcm = b"".join(struct.pack("<h", int(6000 * math.sin(2 * math.pi * 440 * i / RATE))) for i in range(n))
    return base64.b64encode(pcm).decode()


# Every audio delta carries the same 100 ms, encoded once (no work in the event loop
# between a stamp and the send it stamps).
TONE_B64 = tone_b64(100)


class Stamped(ServerConnection):
    """A connection that stamps each message when its last frame comes off the socket
    (in the event loop's read callback, before the handler is scheduled)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.arrivals = collections.deque()
        self._read_ns = 0

    def data_received(self, data):
        self._read_ns = time.monotonic_ns()
        super().data_received(data)

    def process_event(self, event):
        if self.request is not None and event.opcode in DATA_OPCODES and event.fin:
            self.arrivals.append(self._read_ns)
        super().process_event(event)


class Conn:
    def __init__(self, ws, log, args):
        self.ws = ws
        self.args = args
        self.session = default_session()
        self.buffered = 0  # bytes of audio since the last commit
        self.audio_ms = 0  # ms of audio received in all
        self.pending = b""  # bytes not yet a whole 10 ms frame
        self.in_speech = False
        self.silence_ms = 0
        self.item_id = None
        self.prev_item = None
        self.active = None  # the response task
        self.log = {"path": ws.request.path, "events": [], "responses": [], "session": self.session}
        log.append(self.log)

    def vad(self):
        td = self.session["audio"]["input"].get("turn_detection")
        return td if isinstance(td, dict) and td.get("type") in ("server_vad", "semantic_vad") else None

    async def send(self, event, **extra):
        event = {"type": event, "event_id": new_id("event"), **extra}
        text = json.dumps(event)
        t = time.monotonic_ns()
        entry = {"dir": "out", "t_ns": t, "type": event["type"]}
        if "response_id" in event:
            entry["response_id"] = event["response_id"]
        self.log["events"].append(entry)
        await self.ws.send(text)
        return t

    async def error(self, code, message, client_event, kind="invalid_request_error"):
        await self.send(
            "error",
            error={"type": kind, "code": code, "message": message, "param": None, "event_id": client_event.get("event_id")},
        )

    async def run(self):
        await self.send("session.created", session=self.session)
        async for raw in self.ws:
            t = self.ws.arrivals.popleft()
            try:
                ev = json.loads(raw)
            except (TypeError, ValueError):
                self.log["events"].append({"dir": "in", "t_ns": t, "type": None})
                await self.error("invalid_json", "The server could not parse the event.", {})
                continue
            self.log["events"].append({"dir": "in", "t_ns": t, "type": ev.get("type"), "event_id": ev.get("event_id")})
            await self.handle(ev, t)

    async def handle(self, ev, t):
        kind = ev.get("type")
        if kind == "session.update":
            s = ev.get("session")
            if not isinstance(s, dict) or s.get("type") not in ("realtime", "transcription"):
                await self.error("missing_required_parameter", "Missing required parameter: 'session.type'.", ev)
                return
            merge(self.session, s)
            await self.send("session.updated", session=self.session)
        elif kind == "input_audio_buffer.append":
            try:
                pcm = base64.b64decode(ev.get("audio", ""), validate=True)
            except ValueError:
                await self.error("invalid_value", "Invalid 'audio'. Expected base64-encoded audio bytes.", ev)
                return
            self.buffered += len(pcm)
            await self.detect(pcm)
        elif kind == "input_audio_buffer.commit":
            ms = self.buffered * 1000 // (2 * RATE)
            if ms < 100:
                await self.error(
                    "input_audio_buffer_commit_empty",
                    f"Error committing input audio buffer: buffer too small. Expected at least 100ms of audio, but buffer only has {ms:.2f}ms of audio.",
                    ev,
                )
                return
            await self.commit()
        elif kind == "input_audio_buffer.clear":
            self.buffered = 0
            await self.send("input_audio_buffer.cleared")
        elif kind == "response.create":
            await self.respond("response.create", t, ev)
        elif kind == "response.cancel":
            if self.active is not None:
                self.active.cancel()
        else:
            await self.error("invalid_value", f"Invalid value: '{kind}'. Supported values are: 'session.update', 'input_audio_buffer.append', 'input_audio_buffer.commit', 'input_audio_buffer.clear', 'response.create', 'response.cancel'.", ev)

    async def commit(self):
        item = self.item_id or new_id("item")
        await self.send("input_audio_buffer.committed", previous_item_id=self.prev_item, item_id=item)
        await self.send(
            "conversation.item.added",
            previous_item_id=self.prev_item,
            item={"id": item, "type": "message", "role": "user", "status": "completed", "content": [{"type": "input_audio", "transcript": None}]},
        )
        self.prev_item, self.item_id, self.buffered = item, None, 0

    async def detect(self, pcm):
        vad = self.vad()
        data = self.pending + pcm
        whole = len(data) // (2 * FRAME) * (2 * FRAME)
        self.pending = data[whole:]
        for off in range(0, whole, 2 * FRAME):
            self.audio_ms += 10
            if vad is None:
                continue
            samples = memoryview(data[off : off + 2 * FRAME]).cast("h")
            rms = math.sqrt(sum(map(operator.mul, samples, samples)) / FRAME)
            speech = rms > float(vad.get("threshold", 0.5)) * 3000
            if speech and not self.in_speech:
                self.in_speech, self.silence_ms = True, 0
                self.item_id = new_id("item")
                start = max(0, self.audio_ms - 10 - int(vad.get("prefix_padding_ms", 300)))
                await self.send("input_audio_buffer.speech_started", audio_start_ms=start, item_id=self.item_id)
                if self.active is not None and vad.get("interrupt_response", True):
                    self.active.cancel()
            elif self.in_speech and not speech:
                self.silence_ms += 10
                if self.silence_ms >= int(vad.get("silence_duration_ms", 500)):
                    self.in_speech = False
                    await self.send("input_audio_buffer.speech_stopped", audio_end_ms=self.audio_ms, item_id=self.item_id)
                    await self.commit()
                    if vad.get("create_response", True):
                        await self.respond("server_vad", time.monotonic_ns(), {})
            elif speech:
                self.silence_ms = 0

    async def respond(self, trigger, t, ev):
        if self.active is not None and not self.active.done():
            if trigger != "response.create":
                return
            await self.error(
                "conversation_already_has_active_response",
                "Conversation already has an active response in progress. Wait until the response is finished before creating a new one.",
                ev,
            )
            return
        record = {"id": new_id("resp"), "trigger": trigger, "trigger_ns": t, "first_audio_ns": None, "done_ns": None}
        self.log["responses"].append(record)
        self.active = asyncio.ensure_future(self.response(record))

    async def response(self, r):
        try:
            await self.generate(r)
        except ConnectionClosed:
            pass

    async def generate(self, r):
        a = self.args
        rid, item = r["id"], new_id("item")
        at = {"response_id": rid, "item_id": item, "output_index": 0, "content_index": 0}
        status, words = "completed", []
        await self.send("response.created", response={"object": "realtime.response", "id": rid, "status": "in_progress", "output": []})
        msg = {"id": item, "object": "realtime.item", "type": "message", "status": "in_progress", "role": "assistant", "content": []}
        await self.send("response.output_item.added", response_id=rid, output_index=0, item=msg)
        await self.send("response.content_part.added", **at, part={"type": "output_audio", "transcript": ""})
        try:
            await asyncio.sleep(a.first_audio_ms / 1000)
            for i in range(a.deltas):
                t = await self.send("response.output_audio.delta", **at, delta=TONE_B64)
                if r["first_audio_ns"] is None:
                    r["first_audio_ns"] = t
                words.append(f"word{i}")
                await self.send("response.output_audio_transcript.delta", **at, delta=f"word{i} ")
                if i + 1 < a.deltas:
                    await asyncio.sleep(a.every_ms / 1000)
            transcript = " ".join(words)
            await self.send("response.output_audio.done", **at)
            await self.send("response.output_audio_transcript.done", **at, transcript=transcript)
            await self.send("response.content_part.done", **at, part={"type": "output_audio", "transcript": transcript})
            msg = {**msg, "status": "completed", "content": [{"type": "output_audio", "transcript": transcript}]}
            await self.send("response.output_item.done", response_id=rid, output_index=0, item=msg)
        except asyncio.CancelledError:
            status = "cancelled"
        usage = {"total_tokens": 10 + len(words), "input_tokens": 10, "output_tokens": len(words)}
        out = [msg] if status == "completed" else []
        r["done_ns"] = await self.send("response.done", response={"object": "realtime.response", "id": rid, "status": status, "output": out, "usage": usage})


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("log")
    p.add_argument("--first-audio-ms", type=int, default=40)
    p.add_argument("--deltas", type=int, default=4)
    p.add_argument("--every-ms", type=int, default=100)
    args = p.parse_args()
    log = []

    async def handler(ws):
        conn = Conn(ws, log, args)
        try:
            await conn.run()
        except ConnectionClosed:
            pass
        finally:
            if conn.active is not None:
                conn.active.cancel()

    async with serve(handler, "127.0.0.1", 0, max_size=None, create_connection=Stamped) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"PORT {port}", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        with open(args.log, "w") as f:
            json.dump({"connections": log}, f)


if __name__ == "__main__":
    asyncio.run(main())
