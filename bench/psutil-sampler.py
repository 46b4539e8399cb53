#!/usr/bin/python3
"""A memory sampler in the manner of psrecord, against Debian's python3-psutil.

    psutil-sampler.py [-i SECONDS] [-d SECONDS] [--children] [-o FILE] PID

Every interval it reads the process's memory_info() (psutil reads /proc/PID/statm),
with --children also that of every descendant (summed, as psrecord's
--include-children does), keeps the highest figure, and appends one line
"UNIX_NS RSS_BYTES" to FILE. It ends after -d SECONDS, or when the process is gone;
its last lines are "# peak BYTES" and "# end UNIX_NS REASON" (REASON: gone or
duration), where UNIX_NS is the moment it noticed. With -d it takes SECONDS/INTERVAL
samples and lasts SECONDS, as the other tools of bench/run.sh do. The sleep aims at absolute
deadlines, so that the count of samples matches the interval. For bench/run.sh.
"""
import argparse
import sys
import time

import psutil


def rss_of(proc, children):
    rss = proc.memory_info().rss
    if children:
        for child in proc.children(recursive=True):
            try:
                rss += child.memory_info().rss
            except psutil.Error:
                pass  # ended between the listing and the read
    return rss


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pid", type=int)
    ap.add_argument("-i", "--interval", type=float, default=1.0)
    ap.add_argument("-d", "--duration", type=float, default=0.0)
    ap.add_argument("--children", action="store_true")
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args()

    out = sys.stdout if args.output == "-" else open(args.output, "w")
    peak = 0
    reason = "duration"
    try:
        proc = psutil.Process(args.pid)
    except psutil.Error:
        proc = None
        reason = "gone"
    start = time.monotonic()
    deadline = start
    while proc is not None:
        try:
            rss = rss_of(proc, args.children)
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            reason = "gone"
            break
        peak = max(peak, rss)
        out.write("%d %d\n" % (time.time_ns(), rss))
        deadline += args.interval
        if args.duration and deadline - start >= args.duration - 1e-9:
            time.sleep(max(0.0, start + args.duration - time.monotonic()))
            break
        pause = deadline - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    out.write("# peak %d\n# end %d %s\n" % (peak, time.time_ns(), reason))
    out.close()


if __name__ == "__main__":
    main()
