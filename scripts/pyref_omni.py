"""Run the REAL vLLM-Omni OmniInteract reference client (PyPI `vllm-omni==0.30.0`,
`vllm_omni/benchmarks/omniinteract.py` + `vllm_omni/clients/duplex.py`) for N sessions
against a 127.0.0.1 server and print one JSON line with its CPU per live session-second,
defined as rtload's `resources` and the floor clients define it.

    python pyref_omni.py 127.0.0.1:PORT DATASET_DIR SESSIONS [--rate R] [--seed S]
                         [--out DIR] [--model M]

Run it with the interpreter of a venv that holds `vllm-omni==0.30.0` installed
`--no-deps` plus websockets, pybase64 and prettytable (scripts/bench-python-reference.sh
makes one). Nothing of the client is re-implemented: every session is one call of the
reference's per-case runner `run_omniinteract_case` (what vllm-omni's
`_async_request_omniinteract`, the `vllm bench serve --backend openai-realtime-duplex
--dataset-name omniinteract` request function, awaits), with media prepared before timing
by the reference's own `OmniInteractDataset.sample` + `prepare_media` +
`reference_audio_data_url` exactly as its `get_samples` does, and its artifacts published
after timing with `publish_deferred_case_artifacts` + `write_batch_artifacts` exactly as
its `_finalize_omniinteract_batch` does.

What is stubbed, and why none of it is on the measured path
-----------------------------------------------------------
* `vllm_omni/__init__.py` is not executed: `sys.modules['vllm_omni']` is first set to a
  bare module whose `__path__` is the installed package directory, so
  `vllm_omni.benchmarks.omniinteract`, `vllm_omni.clients.duplex`, ... load from the
  installed files without the package's `__init__` (which imports vllm, applies vllm
  patches and registers model configs: server-side, not used by the client).
* `vllm_omni/metrics/__init__.py` is skipped the same way (a bare `vllm_omni.metrics`
  with the installed `__path__`): it imports `prometheus_client` and `vllm.logger` for the
  server's stat loggers. The client path only uses `vllm_omni.metrics.definitions`
  (`compute_audio_rtf`) and `vllm_omni.metrics.utils`, which load unchanged.
* `vllm_omni/benchmarks/data_modules/omniinteract_dataset.py` imports three vllm names,
  stubbed with minimal stand-ins:
    - `vllm.benchmarks.datasets.SampleRequest`: a dataclass with vllm's fields (prompt,
      prompt_len, expected_output_len, multi_modal_data, lora_request, request_id), the
      base of the reference's `OmniInteractSampleRequest` (a plain record of the case).
    - `vllm.benchmarks.datasets.BenchmarkDataset`: `__init__` keeping dataset_path,
      random_seed, disable_shuffle (the fields `OmniInteractDataset` reads); the
      reference's own `sample`/discovery/shuffle code does the rest.
    - `vllm.tokenizers.TokenizerLike`: a type name only (`sample` discards the tokenizer).
    - `vllm.transformers_utils.repo_utils.hf_fs`: raises if called; the reference calls
      it only to download the dataset from the Hub when no local path is given, and
      this harness always gives a local path.
  All of this runs before timing (case selection) or is a type; the sessions never
  touch it.

The measured path is therefore the reference's own code: `_RealtimeSession`
(`DuplexClient` + `EventCollector` over `websockets`), `stream_inputs` (200 ms appends
with 1 fps frames, paced), `_Playback` acks, the final commit,
`wait_for_session_completion` (50 ms polling, 2 s settle), `close_session`, the post-close
checks, `collect_duplex_session_metrics` and `prepare_success_artifacts` (in a worker
thread, as the reference does). One asyncio loop (plain `asyncio.run`, no uvloop) runs
every session; they are released all at once or at Poisson times (`--rate`, seeded
exponential gaps).

Measurement (same definitions as rtload's `resources` and the floor): process CPU
(`getrusage(RUSAGE_SELF)` user + sys, all threads) from the first release to the last
session's end, over the sum of each session's connect-to-end span (the call of
`run_omniinteract_case`, which opens the socket at once since media are prepared) →
`cpu_us_per_session_s`; also per session (`cpu_us_per_session`). Peak RSS is
`ru_maxrss` (whole process life, prepared media included); RSS at the live start and
its 100 ms-sampled live peak give `rss_per_session_kib` over the most sessions in flight.
The deferred artifact publication after timing is reported apart (`post_cpu_s`).

The server must name its deltas as this client version reads them
(`response.output_audio.delta` / `response.output_audio_transcript.delta`): rtload's
embedded server does with `[duplex] upstream_event_names = true`, as
scripts/bench-python-reference.sh configures it. Under the seed's names this client
ignores the audio (no decode, no `playback.ack`, no transcript).

Only 127.0.0.1 is contacted: the address argument must be 127.0.0.1:PORT and every
WebSocket connect is checked against it.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib.util
import json
import logging
import math
import os
import random
import resource
import sys
import time
import types
from pathlib import Path
from urllib.parse import urlsplit

ALLOWED_HOST = "127.0.0.1"
MODEL = "openbmb/MiniCPM-o-4_5"


# ---------------------------------------------------------------------------
# Import the reference without vllm


def _bare_package(name: str, directory: str) -> None:
    module = types.ModuleType(name)
    module.__path__ = [directory]  # type: ignore[attr-defined]
    module.__package__ = name
    sys.modules[name] = module


def _stub_vllm() -> None:
    """The three vllm names `omniinteract_dataset.py` imports (see the docstring)."""

    @dataclasses.dataclass
    class SampleRequest:
        prompt: object
        prompt_len: int
        expected_output_len: int
        multi_modal_data: object | None = None
        lora_request: object | None = None
        request_id: str | None = None

    class BenchmarkDataset:
        def __init__(self, dataset_path=None, random_seed=0, disable_shuffle=False, **kwargs):
            self.dataset_path = dataset_path
            self.random_seed = random_seed
            self.disable_shuffle = disable_shuffle
            self.data = None

    class TokenizerLike:  # a type name only
        pass

    def hf_fs(*_args, **_kwargs):
        raise RuntimeError("pyref_omni: Hub access is stubbed out; give a local dataset path")

    def module(name: str, **attrs) -> None:
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        m.__path__ = []  # type: ignore[attr-defined]
        sys.modules[name] = m

    module("vllm")
    module("vllm.benchmarks")
    module("vllm.benchmarks.datasets", SampleRequest=SampleRequest, BenchmarkDataset=BenchmarkDataset)
    module("vllm.tokenizers", TokenizerLike=TokenizerLike)
    module("vllm.transformers_utils")
    module("vllm.transformers_utils.repo_utils", hf_fs=hf_fs)


def import_reference():
    if "vllm" in sys.modules or importlib.util.find_spec("vllm") is not None:
        raise SystemExit("pyref_omni: a real vllm is importable here; run this in the bench venv")
    spec = importlib.util.find_spec("vllm_omni")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pyref_omni: vllm_omni is not installed in this interpreter")
    root = list(spec.submodule_search_locations)[0]
    _bare_package("vllm_omni", root)
    _bare_package("vllm_omni.metrics", os.path.join(root, "metrics"))
    _stub_vllm()
    from vllm_omni.benchmarks import omniinteract
    from vllm_omni.benchmarks.data_modules import omniinteract_dataset
    from vllm_omni.clients import duplex

    return omniinteract, omniinteract_dataset, duplex


# ---------------------------------------------------------------------------
# The transport guard: 127.0.0.1 only


def guard_websockets(port: int) -> None:
    import websockets

    original = websockets.connect

    async def connect(url, *args, **kwargs):
        parts = urlsplit(url)
        if parts.scheme != "ws" or parts.hostname != ALLOWED_HOST or parts.port != port:
            raise ConnectionRefusedError(f"pyref_omni only talks to ws://{ALLOWED_HOST}:{port}, not {url!r}")
        return await original(url, *args, **kwargs)

    websockets.connect = connect


# ---------------------------------------------------------------------------
# Measurement helpers


def cpu_now() -> tuple[float, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s), max(1, math.ceil(p * len(s)))) - 1]


def release_offsets(n: int, rate: float | None, seed: int) -> list[float]:
    if not rate or rate <= 0:
        return [0.0] * n
    rng, t, out = random.Random(seed), 0.0, []
    for _ in range(n):
        out.append(t)
        t += rng.expovariate(rate)
    return out


# ---------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("addr", help="127.0.0.1:PORT")
    ap.add_argument("dataset", help="OmniInteract dataset dir (official layout, MP4 cases)")
    ap.add_argument("sessions", type=int)
    ap.add_argument("--rate", type=float, default=None, help="Poisson arrivals per second (default: all at once)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="artifact root (default: DATASET/../pyref-out)")
    ap.add_argument("--model", default=MODEL)
    ap.add_argument("--timeout-s", type=float, default=900.0, help="the reference's --omniinteract-timeout-s")
    args = ap.parse_args()

    host, _, port_text = args.addr.rpartition(":")
    if host != ALLOWED_HOST or not port_text.isdigit():
        raise SystemExit(f"pyref_omni only talks to {ALLOWED_HOST}:PORT, not {args.addr!r}")
    port = int(port_text)
    if args.sessions <= 0:
        raise SystemExit("SESSIONS must be positive")

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    omniinteract, dataset_mod, duplex = import_reference()
    guard_websockets(port)

    dataset_dir = Path(args.dataset).resolve()
    out_root = Path(args.out).resolve() if args.out else dataset_dir.parent / "pyref-out"
    ref_audio = dataset_dir / "ref_audio.wav"

    # --- before timing: what the reference's get_samples does -----------------
    prep_started = time.monotonic()
    options = dataset_mod.OmniInteractSessionOptions(
        output_root=out_root,
        timeout_s=args.timeout_s,
        media_timeout_s=600.0,
        ref_audio=str(ref_audio),
        require_response=False,
    )
    dataset = dataset_mod.OmniInteractDataset(
        data_root=str(dataset_dir),
        subsets=dataset_mod.OMNIINTERACT_SUBSETS,
        random_seed=args.seed,
    )
    requests = dataset.sample(None, args.sessions, request_id_prefix="pyref-", options=options)
    if len(requests) < args.sessions:
        raise SystemExit(f"pyref_omni: the dataset has {len(requests)} cases, fewer than {args.sessions} sessions")
    encoded_ref_audio = duplex.reference_audio_data_url(options.ref_audio)
    for request in requests:
        case = request.omniinteract_case
        duration, pcm, frames = omniinteract.prepare_media(
            case.video_path,
            omniinteract.VIDEO_FPS,
            timeout_s=options.media_timeout_s,
            max_duration_s=options.max_video_duration_s,
        )
        if not any(frames):
            raise SystemExit(f"No video frames were decoded from {case.video_path}")
        request.omniinteract_prepared_input = dataset_mod.OmniInteractPreparedInput(
            duration_s=duration, pcm16=pcm, video_frames=tuple(frames), ref_audio_data_url=encoded_ref_audio
        )
    # what vllm-omni's run setup does before the benchmark (_prepare_omniinteract_batch)
    for request in requests:
        omniinteract.clear_case_artifacts(options.output_root, request.omniinteract_case)
    omniinteract.clear_batch_artifacts(options.output_root)
    prep_s = time.monotonic() - prep_started
    config = omniinteract.OmniInteractBenchmarkConfig(
        model=args.model,
        base_url=f"http://{ALLOWED_HOST}:{port}",
        endpoint="/v1/realtime",
        output_root=options.output_root,
        timeout_s=options.timeout_s,
        media_timeout_s=options.media_timeout_s,
        max_video_duration_s=options.max_video_duration_s,
        ref_audio=options.ref_audio,
        require_response=options.require_response,
    )
    offsets = release_offsets(args.sessions, args.rate, args.seed)

    # --- the live phase ---------------------------------------------------------
    live = {"in_flight": 0, "peak_in_flight": 0, "rss_peak": 0, "done": False}

    async def sampler() -> None:
        while not live["done"]:
            live["rss_peak"] = max(live["rss_peak"], rss_bytes())
            await asyncio.sleep(0.1)

    async def one(request, offset: float, t0: float):
        await asyncio.sleep(max(0.0, t0 + offset - time.monotonic()))
        live["in_flight"] += 1
        live["peak_in_flight"] = max(live["peak_in_flight"], live["in_flight"])
        opened = time.monotonic()
        try:
            result = await omniinteract.run_omniinteract_case(
                request.omniinteract_case,
                config,
                request_index=request.request_id,
                capture_artifacts=request.request_id is not None,
                prepared_input=request.omniinteract_prepared_input,
            )
        finally:
            live["in_flight"] -= 1
        return result, time.monotonic() - opened

    async def run_all():
        rss_start = rss_bytes()
        live["rss_peak"] = rss_start
        u0, s0 = cpu_now()
        t0 = time.monotonic()
        sampling = asyncio.create_task(sampler())
        outcomes = await asyncio.gather(*(one(r, o, t0) for r, o in zip(requests, offsets)))
        u1, s1 = cpu_now()
        wall = time.monotonic() - t0
        live["done"] = True
        live["rss_peak"] = max(live["rss_peak"], rss_bytes())
        await sampling
        return outcomes, (u1 - u0, s1 - s0), wall, rss_start

    outcomes, (user_s, sys_s), wall_s, rss_start = asyncio.run(run_all())

    # --- after timing: what vllm-omni's _finalize_omniinteract_batch does ------
    pu0, ps0 = cpu_now()
    post_errors = []
    for request, (result, _) in zip(requests, outcomes):
        try:
            omniinteract.publish_deferred_case_artifacts(options.output_root, request.omniinteract_case, result)
        except Exception as exc:  # noqa: BLE001 - reported, as the reference does
            post_errors.append(str(exc))
    try:
        omniinteract.write_batch_artifacts(
            options.output_root, [r.omniinteract_case for r in requests], [res for res, _ in outcomes]
        )
    except Exception as exc:  # noqa: BLE001
        post_errors.append(str(exc))
    pu1, ps1 = cpu_now()

    results = [res for res, _ in outcomes]
    spans = [span for _, span in outcomes]
    failures = [res.error for res in results if not res.success]
    cpu_s = user_s + sys_s
    live_s = sum(spans)
    n = args.sessions
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    lags_ms = [res.pacing_max_lag_s * 1e3 for res in results if res.success]
    peak = live["peak_in_flight"]
    summary = {
        "client": "vllm-omni==0.30.0 run_omniinteract_case",
        "sessions": n,
        "completed": n - len(failures),
        "failed": len(failures),
        "first_failure": failures[0] if failures else None,
        "cpu_s": cpu_s,
        "user_s": user_s,
        "sys_s": sys_s,
        "wall_s": wall_s,
        "cpu_core_share": cpu_s / wall_s if wall_s > 0 else None,
        "live_session_s": live_s,
        "cpu_us_per_session_s": cpu_s * 1e6 / live_s if live_s > 0 else None,
        "cpu_us_per_session": cpu_s * 1e6 / n,
        "session_span_s": {"p50": pct(spans, 0.5), "max": pct(spans, 1.0)},
        "peak_rss_mib": peak_rss / 1048576,
        "rss_at_start_mib": rss_start / 1048576,
        "live_rss_peak_mib": live["rss_peak"] / 1048576,
        "peak_sessions_in_flight": peak,
        "rss_per_session_kib": (live["rss_peak"] - rss_start) / 1024 / peak if peak else None,
        "pacing_max_lag_ms": {"p50": pct(lags_ms, 0.5), "max": pct(lags_ms, 1.0)},
        "responses": sum(res.responses for res in results),
        "audio_bytes_kept": sum(res.audio_bytes for res in results),
        "input_audio_chunks": sum(res.input_audio_chunks for res in results),
        "input_video_frames": sum(res.input_video_frames for res in results),
        "artifact_warnings": sorted({w for res in results for w in res.artifact_warnings}),
        "prep_s": prep_s,
        "post_cpu_s": (pu1 - pu0) + (ps1 - ps0),
        "post_errors": post_errors[:3],
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
