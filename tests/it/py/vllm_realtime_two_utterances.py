"""vLLM 0.34's realtime client example (`examples/speech_to_text/realtime/
openai_realtime_client.py` in the vllm sdist on PyPI) run twice on one connection, checked
against vLLM's own connection handler (`vllm/entrypoints/speech_to_text/realtime/
connection.py`). The example's messages, byte for byte in shape: `session.update {model}`,
then per utterance `input_audio_buffer.commit` (no `final`: the handler reads it as
false), the PCM16 as base64 `input_audio_buffer.append`s of 4096 bytes sent as fast as the
socket takes them, `commit {final: true}`, and `transcription.delta`s until
`transcription.done`. (The example itself loads audio with vllm's `load_audio`, which
needs torch, and opens one connection per file; here the WAV is read with `wave` and the
second utterance follows the first on the same socket.) Also sends the events vLLM
answers with errors, to read the codes.

    python vllm_realtime_two_utterances.py WS_URL A.wav B.wav

Prints one JSON object: each utterance's done text and delta count, and the error
answers (`[code, message]`) to: audio before `session.update` (none expected: queued),
an empty append, a `session.update` without a model.
"""

import asyncio
import base64
import json
import sys
import wave

import websockets


async def until(ws, kind):
    while True:
        ev = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if ev.get("type") == kind:
            return ev


async def maybe_error(ws):
    try:
        ev = json.loads(await asyncio.wait_for(ws.recv(), 0.5))
    except asyncio.TimeoutError:
        return None
    return [ev.get("code"), ev.get("error")] if ev.get("type") == "error" else ev


async def main(url, wavs):
    out = {"utterances": [], "errors": {}}
    async with websockets.connect(url) as ws:
        await until(ws, "session.created")
        # vLLM queues audio sent before session.update: no answer.
        await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": base64.b64encode(b"\0\0").decode()}))
        out["errors"]["append_before_update"] = await maybe_error(ws)
        await ws.send(json.dumps({"type": "session.update"}))
        out["errors"]["update_without_model"] = await maybe_error(ws)
        await ws.send(json.dumps({"type": "session.update", "model": "any"}))
        await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": ""}))
        out["errors"]["empty_audio"] = await maybe_error(ws)
        for path in wavs:
            with wave.open(path, "rb") as w:
                rate, pcm = w.getframerate(), w.readframes(w.getnframes())
            assert rate == 16000, path  # the example resamples to 16 kHz; these WAVs already are
            step = 4096  # the example's chunk: 4 KiB of raw audio
            await ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
            for i in range(0, len(pcm), step):
                await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm[i : i + step]).decode()}))
            await ws.send(json.dumps({"type": "input_audio_buffer.commit", "final": True}))
            deltas = 0
            while True:
                ev = json.loads(await asyncio.wait_for(ws.recv(), 20))
                if ev.get("type") == "transcription.delta":
                    deltas += 1
                elif ev.get("type") == "transcription.done":
                    out["utterances"].append({"text": ev["text"], "deltas": deltas})
                    break
                elif ev.get("type") == "error":
                    out["utterances"].append({"error": ev})
                    break
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
