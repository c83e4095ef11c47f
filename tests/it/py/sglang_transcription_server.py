"""An independent sglang-omni realtime transcription test server (the
`/v1/realtime?intent=transcription` session), written from sglang-omni's source
(sglang_omni/serve/realtime/transcription_session.py and events.py, commit 0c940be) with
the `websockets` package, sharing no code with rtload. No model: a decode takes
--decode-ms and yields the words `w<n>` for the audio so far.

What it does, per connection, as sglang-omni does without server VAD:
  on connect             session.created {session: {id, object, model, intent,
                         input_audio_format, language, decode_interval_ms, turn_detection}}
  session.update         only language / turn_detection / input_audio_format (extra keys
                         are an invalid_event error); session.updated
  input_audio_buffer.append
                         base64 PCM16 16 kHz (odd length: invalid_audio); audio with no
                         open segment opens one (ids from 0); a segment reaching
                         --max-segment-ms is cut there: input_audio_buffer.committed and a
                         final queued, the rest opens the next segment
  partials               once --decode-interval-ms of new audio arrived in the open
                         segment, the one decode worker decodes it (--decode-ms) and sends
                         transcription.segment {segment_id, audio_start_ms, audio_end_ms
                         (the audio end it decoded up to), text, is_final: false} if the
                         text changed; queued finals go first
  finals                 transcription.segment {..., is_final: true}, one per committed
                         segment, in order
  input_audio_buffer.commit  the open segment is committed
  transcription.done     the open segment is committed; after every final,
                         transcription.completed {text: the finals joined}
Every event carries event_id and event_index. Errors: {type: "error", error: {type, code,
message}}.

Broken servers, for the invariant tests: --break double-final sends every final twice,
--break partial-after-final follows every final with a partial of the same segment,
--break event-index gives every segment event the event_index of the event before it.

For every partial it logs audio_end_ms and the audio it had received when it sent it
(ms), so the client's streaming lag can be compared with the server's own. Usage:

  python sglang_transcription_server.py LOG.json [--decode-ms 250]
      [--decode-interval-ms 300] [--max-segment-ms 1500] [--break double-final]

It prints `PORT <n>` once listening on 127.0.0.1 (port 0), and when its stdin closes
writes the log as JSON to LOG.json and exits.
"""

import argparse
import asyncio
import base64
import binascii
import json
import sys
import uuid

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

RATE = 16000


def ms(samples):
    return samples * 1000 // RATE


class Session:
    def __init__(self, ws, args, log):
        self.ws = ws
        self.args = args
        self.index = 0
        self.language = None
        self.end = 0  # samples received
        self.next_id = 0
        self.active = None  # {"id", "start", "next_refresh", "last_text"}
        self.finals = []  # queued (segment, end)
        self.committed = []  # (id, text)
        self.wake = asyncio.Event()
        self.idle = asyncio.Event()
        self.idle.set()
        self.log = {"path": ws.request.path, "partials": [], "finals": []}
        log.append(self.log)

    async def send(self, event):
        if not (self.args.break_ == "event-index" and event["type"] == "transcription.segment"):
            self.index += 1
        event.setdefault("event_id", f"evt_{uuid.uuid4().hex}")
        event.setdefault("event_index", self.index)
        await self.ws.send(json.dumps(event))

    async def error(self, code, message):
        await self.send(
            {"type": "error", "error": {"type": "invalid_request_error", "code": code, "message": message}}
        )

    def session_object(self):
        return {
            "id": "sess_" + uuid.uuid4().hex,
            "object": "realtime.session",
            "model": "Qwen/Qwen3-ASR-1.7B",
            "intent": "transcription",
            "input_audio_format": "pcm16",
            "language": self.language,
            "decode_interval_ms": self.args.decode_interval_ms,
            "turn_detection": None,
        }

    def interval(self):
        return self.args.decode_interval_ms * RATE // 1000

    def start_segment(self, start):
        self.active = {
            "id": self.next_id,
            "start": start,
            "next_refresh": start + self.interval(),
            "last_text": "",
        }
        self.next_id += 1

    async def queue_final(self, end):
        seg = self.active
        if seg is None or end <= seg["start"]:
            return
        self.finals.append((seg, end))
        self.active = None
        self.idle.clear()
        self.wake.set()
        await self.send({"type": "input_audio_buffer.committed", "segment_id": seg["id"]})

    async def append(self, event):
        try:
            pcm = base64.b64decode(event.get("audio", ""), validate=False)
        except (ValueError, binascii.Error):
            return await self.error("invalid_audio", "Audio must be base64 PCM16.")
        if len(pcm) % 2:
            return await self.error("invalid_audio", "PCM16 audio must contain complete 16-bit samples.")
        start = self.end
        self.end += len(pcm) // 2
        if self.active is None and pcm:
            self.start_segment(start)
        limit = self.args.max_segment_ms * RATE // 1000
        while self.active is not None and self.end - self.active["start"] >= limit:
            cut = self.active["start"] + limit
            await self.queue_final(cut)
            if self.end > cut:
                self.start_segment(cut)
        if self.active is not None and self.end >= self.active["next_refresh"]:
            self.wake.set()

    async def emit(self, seg, end, final):
        text = " ".join(f"w{i}" for i in range(1, ms(end - seg["start"]) // 200 + 2))
        if not final and text == seg["last_text"]:
            return
        seg["last_text"] = text
        event = {
            "type": "transcription.segment",
            "segment_id": seg["id"],
            "audio_start_ms": ms(seg["start"]),
            "audio_end_ms": ms(end),
            "text": text,
            "is_final": final,
        }
        if final:
            self.committed.append((seg["id"], text))
            self.log["finals"].append(seg["id"])
            for _ in range(2 if self.args.break_ == "double-final" else 1):
                await self.send(dict(event))
            if self.args.break_ == "partial-after-final":
                await self.send(dict(event, is_final=False))
        else:
            self.log["partials"].append({"audio_end_ms": ms(end), "received_ms": ms(self.end)})
            await self.send(event)

    async def worker(self):
        while True:
            await self.wake.wait()
            self.wake.clear()
            while self.finals:
                seg, end = self.finals.pop(0)
                await asyncio.sleep(self.args.decode_ms / 1000)
                await self.emit(seg, end, True)
            self.idle.set()
            seg = self.active
            if seg is None or self.end < seg["next_refresh"]:
                continue
            end = self.end
            seg["next_refresh"] = end + self.interval()
            await asyncio.sleep(self.args.decode_ms / 1000)
            if self.active is seg:
                await self.emit(seg, end, False)

    async def done(self):
        if self.active is not None:
            await self.queue_final(self.end)
        await self.idle.wait()
        text = " ".join(t for _, t in sorted(self.committed) if t)
        await self.send({"type": "transcription.completed", "text": text})

    async def run(self):
        await self.send({"type": "session.created", "session": self.session_object()})
        async for raw in self.ws:
            try:
                event = json.loads(raw)
            except (TypeError, json.JSONDecodeError):
                await self.error("invalid_json", "Invalid JSON event.")
                continue
            kind = event.get("type")
            if kind == "session.update":
                session = event.get("session", {})
                extra = set(session) - {"language", "turn_detection", "input_audio_format"}
                if extra:
                    await self.error("invalid_event", f"extra keys: {sorted(extra)}")
                    continue
                if "language" in session:
                    self.language = session["language"]
                await self.send({"type": "session.updated", "session": self.session_object()})
            elif kind == "input_audio_buffer.append":
                await self.append(event)
            elif kind == "input_audio_buffer.commit":
                if self.active is not None:
                    await self.queue_final(self.end)
            elif kind == "transcription.done":
                await self.done()
            else:
                await self.error("unsupported_event", f"Unsupported event type: {kind!r}")


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("log")
    p.add_argument("--decode-ms", type=int, default=250)
    p.add_argument("--decode-interval-ms", type=int, default=300)
    p.add_argument("--max-segment-ms", type=int, default=1500)
    p.add_argument(
        "--break", dest="break_", choices=["double-final", "partial-after-final", "event-index"]
    )
    args = p.parse_args()
    log = []

    async def handler(ws):
        s = Session(ws, args, log)
        worker = asyncio.create_task(s.worker())
        try:
            await s.run()
        except ConnectionClosed:
            pass
        finally:
            worker.cancel()

    async with serve(handler, "127.0.0.1", 0, max_size=None) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"PORT {port}", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        with open(args.log, "w") as f:
            json.dump({"connections": log}, f)


if __name__ == "__main__":
    asyncio.run(main())
