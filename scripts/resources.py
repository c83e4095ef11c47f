"""Shared by the bench scripts: print rtload's own count of what the live phase cost it
(the `rtload.resources` block of a result JSON), and its ratio to the floor client's."""


def resources(rt):
    r = rt.get("resources") or {}
    if r.get("cpu_us_per_session_s") is not None:
        print(f"rtload's own count (live phase): cpu {r['cpu_s']:.2f} s over {r['live_session_s']:.0f} session-s"
              f" = {r['cpu_us_per_session_s']:.0f} µs CPU per live session-second, peak RSS {r['peak_rss_mib']:.1f} MiB")
    if r.get("rss_per_session_kib") is not None:
        print(f"RSS per session in flight: {r['rss_per_session_kib']:.1f} KiB (RSS {r['rss_at_start_mib']:.1f} MiB at the"
              f" live phase's start, prepared media included, {r['live_rss_peak_mib']:.1f} MiB at its sampled peak,"
              f" {r['peak_sessions_in_flight']} sessions in flight at most)")


def floor_ratio(rt, f, n):
    """The floor client's line (its JSON summary `f`) and rtload's CPU as a ratio of it."""
    r = rt.get("resources") or {}
    print(f"floor (same bytes, raw socket): {f['cpu_us_per_session_s']:.0f} µs CPU per live session-second"
          f" over {f['live_session_s']:.0f} session-s, {f['failed']} failed, send lateness p99"
          f" {f['send_lateness_ms']['p99']:.3f} ms, peak RSS {f['peak_rss_mib']:.1f} MiB")
    if not f.get("cpu_us_per_session_s"):
        print("rtload / floor: not measured (the floor used less than one 10 ms CPU tick; run more sessions)")
    elif r.get("cpu_us_per_session_s") and r.get("cpu_s"):
        print(f"rtload / floor: {r['cpu_us_per_session_s'] / f['cpu_us_per_session_s']:.2f}x per live session-second,"
              f" {r['cpu_s'] / n * 1e6 / f['cpu_us_per_session']:.2f}x per session")
