"""Peak disk, host memory and GPU memory per op while `egg-gen bench` runs (issue 11's benchmark).

    python3 tools/resource_monitor.py --out peaks.json [--interval 0.5] [--tmp /tmp] -- <command...>

Runs the command, and every interval samples, per op (the kernel name egg-gen gives it):
  disk  bytes under its work folder <tmp>/egg-work-<name>-*  (spec, logs, candidates' builds);
  host  the summed resident memory of every process whose command line names that folder or the
        op's file (frontend, reference server, egg-harness, nvcc, the baselines);
  gpu   the summed GPU memory nvidia-smi reports for those processes.
Writes {"ops": {name: {"disk_peak_mb", "host_peak_mb", "gpu_peak_mb"}}, "samples": n} and exits
with the command's status. Measurement only: nothing here is part of EGG.
"""
import argparse
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time


def c_identifier(stem):
    out = re.sub(r"[^0-9A-Za-z]", "_", stem)
    return "t_" + out if not out or out[0].isdigit() else out


def disk_bytes(folder):
    total = 0
    for root, _, files in os.walk(folder):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def processes():
    """{pid: (cmdline, rss bytes)} of every process."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open("/proc/%s/statm" % d) as f:
                rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            out[int(d)] = (cmd, rss)
        except (OSError, ValueError, IndexError):
            pass
    return out


def gpu_memory():
    """{pid: bytes} from nvidia-smi (empty without one)."""
    try:
        text = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                               "--format=csv,noheader,nounits"], capture_output=True, text=True,
                              timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    out = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0].isdigit():
            out[int(parts[0])] = int(float(parts[1])) << 20
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--interval", type=float, default=0.5)
    p.add_argument("--tmp", default="/tmp")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    child = subprocess.Popen(cmd)
    peaks, samples = {}, 0
    # A deadline's SIGTERM goes on to the command (egg-gen ends its children); the peaks so far
    # are still written.
    signal.signal(signal.SIGTERM, lambda *_: child.terminate())

    def bump(name, key, value):
        entry = peaks.setdefault(name, {"disk_peak_mb": 0.0, "host_peak_mb": 0.0, "gpu_peak_mb": 0.0})
        entry[key] = max(entry[key], value / 2**20)

    while child.poll() is None:
        samples += 1
        folders = {}
        for folder in glob.glob(os.path.join(a.tmp, "egg-work-*")):
            name = os.path.basename(folder)[len("egg-work-"):].rsplit("-", 1)[0]
            folders[folder] = name
            bump(name, "disk_peak_mb", disk_bytes(folder))
        procs, gpu = processes(), gpu_memory()
        host, dev = {}, {}
        for pid, (line, rss) in procs.items():
            owner = next((n for f, n in folders.items() if f in line), None)
            if owner is None:
                m = re.search(r"--op (\S+\.py)", line)
                owner = c_identifier(os.path.splitext(os.path.basename(m.group(1)))[0]) if m else None
            if owner is None:
                continue
            host[owner] = host.get(owner, 0) + rss
            dev[owner] = dev.get(owner, 0) + gpu.get(pid, 0)
        for name, v in host.items():
            bump(name, "host_peak_mb", v)
        for name, v in dev.items():
            bump(name, "gpu_peak_mb", v)
        time.sleep(a.interval)
    with open(a.out, "w") as f:
        json.dump({"ops": peaks, "samples": samples}, f, indent=1)
    return child.returncode


if __name__ == "__main__":
    sys.exit(main())
