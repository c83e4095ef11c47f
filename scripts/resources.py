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


def server_line(rt, server_cpu_s, label="reference, its own core"):
    """The reference server's CPU while rtload ran (`server_cpu_s`, from /proc), per live
    session-second and as a share of one core over the live phase: at >= 90 % the server,
    not the client, bounds the lateness and latency figures."""
    r = rt.get("resources") or {}
    spans = [(s.get("opened_s"), s.get("ended_s")) for s in rt.get("samples", [])]
    spans = [(a, b) for a, b in spans if a is not None and b is not None]
    try:
        cpu = float(server_cpu_s)
    except ValueError:
        return
    if not r.get("live_session_s"):
        return
    per = f"server ({label}): cpu {cpu:.2f} s = {cpu / r['live_session_s'] * 1e6:.0f} µs per live session-second"
    if not spans:  # results without per-session rows (transcription's `files`): no share
        print(per)
        return
    wall = max(b for _, b in spans) - min(a for a, _ in spans)
    share = cpu / wall * 100 if wall > 0 else float("nan")
    print(per + f", {share:.0f}% of one core over the {wall:.1f} s live phase"
          + (" (saturated: the server, not the client, may bound these results)" if share >= 90 else ""))


def phases(rt):
    """rtload's own count of its CPU per phase (`rtload.phase_cpu` of a result JSON): before
    the live phase, opening the sessions (within it), publication after it, and the whole
    process through publication per live session-second."""
    p = rt.get("phase_cpu")
    if not p:
        return
    f = lambda v, spec: "?" if v is None else format(v, spec)
    b, s, u, t = p["before_live"], p["setup"], p["publication"], p["through_publication"]
    print(f"rtload's own count per phase: before live {f(b['cpu_s'], '.2f')} s ({f(b['cpu_us_per_session'], '.0f')} µs per session);"
          f" setup {f(s['cpu_s'], '.3f')} s over {s['sessions']} sessions ({f(s['cpu_us_per_session'], '.0f')} µs per session:"
          f" connect, handshake, opening messages); publication {f(u['cpu_s'], '.2f')} s"
          f" ({f(u['cpu_us_per_session'], '.0f')} µs per session)")
    print(f"rtload's own count through publication: cpu {f(t['cpu_s'], '.2f')} s"
          f" = {f(t['cpu_us_per_session_s'], '.0f')} µs per live session-second (the result's own writing not included)")
