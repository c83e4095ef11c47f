"""Shared by the bench scripts: print rtload's own count of what the live phase cost it
(the `rtload.resources` block of a result JSON)."""


def resources(rt):
    r = rt.get("resources") or {}
    if r.get("cpu_us_per_session_s") is not None:
        print(f"rtload's own count (live phase): cpu {r['cpu_s']:.2f} s over {r['live_session_s']:.0f} session-s"
              f" = {r['cpu_us_per_session_s']:.0f} µs CPU per live session-second, peak RSS {r['peak_rss_mib']:.1f} MiB")
    if r.get("rss_per_session_kib") is not None:
        print(f"RSS per session in flight: {r['rss_per_session_kib']:.1f} KiB (RSS {r['rss_at_start_mib']:.1f} MiB at the"
              f" live phase's start, prepared media included, {r['live_rss_peak_mib']:.1f} MiB at its sampled peak,"
              f" {r['peak_sessions_in_flight']} sessions in flight at most)")
