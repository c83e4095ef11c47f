"""A WebSocket server rtload did not write, for scripts/bench-replay-timing.sh: stamps
each inbound message's arrival on its own monotonic clock, from the moment the
connection's handler starts (after the 101 is written), and answers nothing but a
`session.created`. On SIGTERM it writes the stamps as JSON: one list per connection, in
connection order, of [offset_s, json_type_or_null, bytes]. Prints its port first."""
import asyncio
import json
import signal
import sys
import time

import websockets

conns = []


async def handler(ws):
    t0 = time.monotonic()
    got = []
    conns.append(got)
    await ws.send(json.dumps({"type": "session.created"}))
    try:
        async for msg in ws:
            at = time.monotonic() - t0
            typ = None
            if isinstance(msg, str):
                try:
                    typ = json.loads(msg).get("type")
                except ValueError:
                    pass
            got.append([at, typ, len(msg)])
    except websockets.ConnectionClosed:
        pass


async def main():
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with websockets.serve(handler, "127.0.0.1", 0, compression=None, max_size=None) as srv:
        print(srv.sockets[0].getsockname()[1], flush=True)
        await stop.wait()
    with open(sys.argv[1], "w") as f:
        json.dump(conns, f)


asyncio.run(main())
