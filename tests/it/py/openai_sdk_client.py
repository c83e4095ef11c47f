"""The official `openai` Python SDK's realtime client (GA events), as an independent
client of `rtload serve`: two push-to-talk voice turns on one connection, then one client
event the server does not handle. Every server event is validated strictly against the
SDK's own event models (pydantic over `RealtimeServerEvent`), as a client that trusts
the types would.

    python openai_sdk_client.py WS_BASE      (e.g. ws://127.0.0.1:PORT/v1)

Prints one JSON object: the event types in order, the turns that ended with a completed
`response.done`, the audio deltas per turn, the error event answering the unhandled one,
and every event that failed validation (type and reason).
"""

import asyncio
import base64
import json
import sys

from typing import Union, get_args, get_origin

from openai import AsyncOpenAI
from openai.types.realtime import RealtimeServerEvent


def event_models() -> dict:
    """Each server event type's model, from the SDK's own union of server events."""
    union = get_args(RealtimeServerEvent)[0] if get_origin(RealtimeServerEvent) is not Union else RealtimeServerEvent
    models = {}
    for model in get_args(union):
        for kind in get_args(model.model_fields["type"].annotation):
            models[kind] = model
    return models


async def main(base: str) -> None:
    client = AsyncOpenAI(api_key="sk-test-not-a-secret", websocket_base_url=base)
    models = event_models()
    out = {"types": [], "completed_turns": 0, "audio_deltas": [], "invalid": [], "error": None}

    async with client.realtime.connect(model="gpt-realtime") as conn:

        async def until(kind: str) -> dict:
            while True:
                raw = await asyncio.wait_for(conn.recv_bytes(), 10)
                ev = json.loads(raw)
                out["types"].append(ev.get("type"))
                model = models.get(ev.get("type"))
                if model is None:
                    out["invalid"].append(f"{ev.get('type')}: not a server event type")
                else:
                    try:
                        model.model_validate_json(raw, strict=True)
                    except Exception as e:  # noqa: BLE001 - every reason is reported
                        out["invalid"].append(f"{ev.get('type')}: {e}")
                if ev.get("type") == "response.output_audio.delta":
                    out["audio_deltas"][-1] += 1
                if ev.get("type") == kind:
                    return ev

        await until("session.created")
        await conn.session.update(
            session={
                "type": "realtime",
                "output_modalities": ["audio"],
                "audio": {"input": {"format": {"type": "audio/pcm", "rate": 24000}, "turn_detection": None}},
            }
        )
        await until("session.updated")
        chunk = base64.b64encode(b"\0\0" * 2400).decode()
        for _ in range(2):
            for _ in range(3):
                await conn.input_audio_buffer.append(audio=chunk)
            await conn.input_audio_buffer.commit()
            await until("input_audio_buffer.committed")
            out["audio_deltas"].append(0)
            await conn.response.create()
            done = await until("response.done")
            if done.get("response", {}).get("status") == "completed":
                out["completed_turns"] += 1
        await conn.send({"type": "conversation.item.retrieve", "item_id": "item_unknown", "event_id": "client_evt_1"})
        try:
            out["error"] = await until("error")
        except asyncio.TimeoutError:
            out["error"] = None  # no answer at all within 10 s
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
