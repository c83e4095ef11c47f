"""A server rtload did not write, for the permessage-deflate tests: Python `websockets`
(the library vLLM-Omni's duplex client and the openai SDK use) with its default
compression, which accepts `permessage-deflate` with 12-bit windows and context takeover
both ways.

    python deflate_server.py MODE LOG

MODE `duplex`: an OmniInteract duplex peer. `session.created` for `session.update`; for
every fifth append a response (`response.created`, a transcript delta 20 ms later, then
five 100 ms audio deltas of 24 kHz PCM16, then `response.done`); for the final commit
`input_audio_buffer.committed` and a listen decision; `session.closed` for
`session.close`.

MODE `flood:N`: as `duplex`, but the first connection also gets N tiny events
(`rate_limits.updated`, not logged) right after `session.created`.

MODE `barge:MS`: a duplex peer that hears speech (RMS per append, -40 dBFS, 400 ms of
quiet ends it). One reply once 2.2 s of input arrived: 20 audio deltas of 200 ms, 100 ms
apart. Speech that starts while it is still sending stops it MS ms later
(`output_audio_buffer.cleared`, `response.done` cancelled), answered by a short reply.

MODE `bomb`: `session.created`, then one text message of 8 MiB of JSON padding (a few
KB compressed), which no client with a smaller limit may inflate.

Prints the port on stdout, serves until stdin closes, then writes one JSON line per
connection to LOG: what it sent and received (types, times on its own monotonic clock,
decoded audio sizes) and how many data frames arrived and left compressed (RSV1).
"""

import asyncio
import base64
import json
import math
import sys
import time

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

MODE, LOG_PATH = sys.argv[1], sys.argv[2]
CONNS = []


def count_compressed(conn, log):
    """Wrap the agreed extension's frame hooks to count RSV1 data frames each way."""
    for ext in conn.protocol.extensions:
        log["extensions"].append(repr(ext))
        decode, encode = ext.decode, ext.encode

        def counted_decode(frame, *, max_size=None, _d=decode):
            if frame.opcode.value in (1, 2) and frame.rsv1:
                log["compressed_in"] += 1
            return _d(frame, max_size=max_size)

        def counted_encode(frame, _e=encode):
            out = _e(frame)
            if out.opcode.value in (1, 2) and out.rsv1:
                log["compressed_out"] += 1
            return out

        ext.decode, ext.encode = counted_decode, counted_encode


def pcm(ms, phase):
    n = 24 * ms
    return b"".join(
        int(8000 * math.sin((i + phase) / 9.0)).to_bytes(2, "little", signed=True)
        for i in range(n)
    )


async def handler(conn):
    log = {
        "path": conn.request.path,
        "offer": conn.request.headers.get("Sec-WebSocket-Extensions"),
        "extensions": [],
        "compressed_in": 0,
        "compressed_out": 0,
        "events": [],
    }
    CONNS.append(log)
    count_compressed(conn, log)

    async def send(ev):
        await conn.send(json.dumps(ev))
        kind = ev.get("type")
        entry = {"dir": "out", "type": kind, "at": time.monotonic()}
        if kind == "response.audio.delta":
            entry["audio_bytes"] = len(base64.b64decode(ev["delta"]))
        log["events"].append(entry)

    if MODE == "bomb":
        try:
            await send({"type": "session.created", "id": "py-bomb"})
            await send({"type": "transcription.delta", "delta": "x" * (8 << 20)})
            async for _ in conn:
                pass
        except ConnectionClosed:
            pass  # rtload refuses the message and closes: expected
        return
    if MODE.startswith("barge:"):
        await barge(conn, send, log, int(MODE.split(":")[1]) / 1000.0)
        return
    appends, responses = 0, 0
    async for raw in conn:
        at = time.monotonic()
        ev = json.loads(raw)
        kind = ev.get("type")
        entry = {"dir": "in", "type": kind, "at": at}
        if kind == "input_audio_buffer.append":
            entry["audio_bytes"] = len(base64.b64decode(ev["audio"], validate=True))
            entry["frames"] = len(ev.get("video_frames") or [])
        log["events"].append(entry)
        if kind == "session.update":
            caps = {"capabilities": {"chunk_period_ms": 1000}}
            await send({"type": "session.created", "session": caps})
            if MODE.startswith("flood:") and len(CONNS) == 1:
                tiny = json.dumps({"type": "rate_limits.updated"})
                try:
                    for _ in range(int(MODE.split(":")[1])):
                        await conn.send(tiny)
                except ConnectionClosed:
                    return  # rtload gave up on this session: expected
        elif kind == "input_audio_buffer.append":
            appends += 1
            if appends % 5 == 1:
                responses += 1
                asyncio.create_task(respond(send, f"resp_py_{responses}"))
        elif kind == "input_audio_buffer.commit" and ev.get("final"):
            await send({"type": "input_audio_buffer.committed"})
            await send(
                {
                    "type": "response.listen",
                    "response": {"metadata": {"model_listen": True, "buffering": False}},
                }
            )
        elif kind == "session.close":
            await send({"type": "session.closed"})


async def respond(send, rid):
    await send({"type": "response.created", "response": {"id": rid}})
    await asyncio.sleep(0.02)
    await send({"type": "response.audio_transcript.delta", "response_id": rid, "delta": "hello there"})
    for k in range(5):
        await send(
            {
                "type": "response.audio.delta",
                "response_id": rid,
                "format": "pcm16",
                "sample_rate_hz": 24000,
                "delta": base64.b64encode(pcm(100, 2400 * k)).decode(),
            }
        )
    await send({"type": "response.done", "response": {"id": rid, "status": "completed"}})


async def barge(conn, send, log, reaction_s):
    """MODE `barge:MS` (see the module doc)."""
    state = {"bytes": 0, "speaking": False, "quiet": 0, "reply": None, "n": 0}

    async def reply(rid, deltas, gap):
        await send({"type": "response.created", "response": {"id": rid}})
        for k in range(deltas):
            await asyncio.sleep(gap)
            await send({"type": "response.audio.delta", "response_id": rid, "format": "pcm16",
                        "sample_rate_hz": 24000, "delta": base64.b64encode(pcm(200, 4800 * k)).decode()})
        await send({"type": "response.done", "response": {"id": rid, "status": "completed"}})

    async def interrupt(task, rid):
        await asyncio.sleep(reaction_s)
        if task.done():
            return
        task.cancel()
        await send({"type": "output_audio_buffer.cleared", "response_id": rid})
        await send({"type": "response.done", "response": {"id": rid, "status": "cancelled"}})
        state["n"] += 1
        await reply(f"resp_py_answer_{state['n']}", 2, 0.0)

    async for raw in conn:
        at = time.monotonic()
        ev = json.loads(raw)
        kind = ev.get("type")
        entry = {"dir": "in", "type": kind, "at": at}
        log["events"].append(entry)
        if kind == "session.update":
            await send({"type": "session.created", "session": {"capabilities": {"chunk_period_ms": 1000}}})
        elif kind == "input_audio_buffer.append":
            audio = base64.b64decode(ev["audio"], validate=True)
            state["bytes"] += len(audio)
            n = len(audio) // 2
            samples = [int.from_bytes(audio[2 * i:2 * i + 2], "little", signed=True) for i in range(n)]
            rms = math.sqrt(sum(x * x for x in samples) / max(n, 1))
            if rms >= 327.68:
                started = not state["speaking"]
                state["speaking"], state["quiet"] = True, 0
                if started:
                    entry["speech_started"] = True
                    task = state["reply"]
                    if task is not None and not task.done():
                        asyncio.create_task(interrupt(task, state["rid"]))
            else:
                state["quiet"] += len(audio)
                if state["quiet"] >= 12800:
                    state["speaking"] = False
            if state["reply"] is None and state["bytes"] >= 70400:
                state["rid"] = "resp_py_1"
                state["reply"] = asyncio.create_task(reply("resp_py_1", 20, 0.1))
        elif kind == "input_audio_buffer.commit" and ev.get("final"):
            await send({"type": "input_audio_buffer.committed"})
            await send({"type": "response.listen",
                        "response": {"metadata": {"model_listen": True, "buffering": False}}})
        elif kind == "session.close":
            await send({"type": "session.closed"})


async def main():
    async with serve(handler, "127.0.0.1", 0) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)
    with open(LOG_PATH, "w") as f:
        for c in CONNS:
            f.write(json.dumps(c) + "\n")


asyncio.run(main())
