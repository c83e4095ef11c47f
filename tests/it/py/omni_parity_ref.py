"""vLLM-Omni 0.30.0's own duplex metric functions over events rtload recorded.

    python omni_parity_ref.py < cases.json > reference.json

stdin: {"cases": [{"session_id": str, "stream_start_s": float, "events": [event, ...]}]}
where each event is one element of a case's `events.json` (rtload's artifact), carrying
its client receipt time in `_client_received_at_s` (seconds since the session's WebSocket
opened: the clock of `stream_start_s`).

stdout: {"report": build_duplex_metrics_report(...) over every case (what 0.30.0 writes
as duplex_metrics.json), "continuity": {"<session_id>\\t<response_id>": stats}}.

Nothing here computes a metric: each event goes into the reference's `EventCollector`
with `add(event, received_at_s=...)`, each case through `collect_duplex_session_metrics`
(stream_start = the recorded stream start), the run through `build_duplex_metrics_report`,
and each response's audio through `compute_continuity_stats` with the chunk arrivals the
reference's `timing_summary` itself selects (non-empty audio deltas of the response
received at or after the stream start, the collector's receipt times) and their decoded
sizes, at the collector's output sample rate.

One adaptation of the input, not of the reference: `events.json` stores an audio delta
without its base64 payload, as `audio_bytes` (its decoded length). Such a delta gets
`delta` back as the base64 of that many zero bytes, so the reference decodes the same
length (the metrics read lengths and receipt times, never sample values).

Imports follow scripts/pyref_omni.py: `vllm_omni/__init__.py` and
`vllm_omni/metrics/__init__.py` (server-side: vllm, prometheus) are not executed; bare
packages with the installed `__path__` stand in, and the client modules load unchanged.
Nothing from vllm is needed by these modules.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import sys
import types


def _bare_package(name: str, directory: str) -> None:
    module = types.ModuleType(name)
    module.__path__ = [directory]  # type: ignore[attr-defined]
    module.__package__ = name
    sys.modules[name] = module


def import_reference():
    spec = importlib.util.find_spec("vllm_omni")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("omni_parity_ref: vllm_omni is not installed in this interpreter (scripts/test installs it)")
    root = list(spec.submodule_search_locations)[0]
    _bare_package("vllm_omni", root)
    _bare_package("vllm_omni.metrics", os.path.join(root, "metrics"))
    from importlib.metadata import version

    if version("vllm-omni") != "0.30.0":
        raise SystemExit(f"omni_parity_ref: vllm-omni {version('vllm-omni')} installed, 0.30.0 expected")
    from vllm_omni.benchmarks import audio_continuity, duplex_session_metrics
    from vllm_omni.clients import duplex

    return duplex, duplex_session_metrics, audio_continuity


def main() -> None:
    duplex, dsm, continuity_mod = import_reference()
    audio_types = duplex._AUDIO_DELTA_TYPES
    cases = json.load(sys.stdin)["cases"]
    requests, sessions, continuity = [], [], {}
    for case in cases:
        collector = duplex.EventCollector()
        for event in case["events"]:
            event = dict(event)
            if (
                event.get("type") in audio_types
                and "delta" not in event
                and "audio" not in event
                and isinstance(event.get("audio_bytes"), int)
            ):
                event["delta"] = base64.b64encode(bytes(event["audio_bytes"])).decode()
            collector.add(event, received_at_s=event["_client_received_at_s"])
        start = case["stream_start_s"]
        bundle = dsm.collect_duplex_session_metrics(collector, stream_start=start, session_id=case["session_id"])
        requests.extend(bundle.request_metrics)
        sessions.append(bundle.session_metrics)
        for response_id in collector.response_ids:
            times, sizes = [], []
            for event, at in zip(collector.events, collector.event_received_at_s, strict=True):
                if at < start or event.get("type") not in audio_types:
                    continue
                if collector.response_id(event) != response_id:
                    continue
                delta = event.get("delta") or event.get("audio")
                if not isinstance(delta, str) or not delta:
                    continue
                times.append(at)
                sizes.append(len(base64.b64decode(delta)))
            if not times:
                continue
            stats = continuity_mod.compute_continuity_stats(times, sizes, sample_rate=collector.output_sample_rate_hz)
            continuity[f"{case['session_id']}\t{response_id}"] = {
                "audio_underrun_s": stats.max_underrun_s,
                "audio_underrun_event_count": stats.underrun_event_count,
                "audio_continuity_ok": stats.is_continuous,
            }
    report = dsm.build_duplex_metrics_report(request_metrics=requests, session_metrics=sessions)
    json.dump({"report": report, "continuity": continuity}, sys.stdout)


if __name__ == "__main__":
    main()
