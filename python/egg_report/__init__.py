"""EGG's report: ``egg-gen report <folder> --html <file>`` runs ``python3 -m egg_report``.

It reads a kernel's output folder (manifest.json), a folder of them, or an ``egg-gen bench`` output
folder (bench.json, or a rows .jsonl file, beside one folder per op) and writes one self-contained
HTML page: plots drawn with matplotlib and inlined as SVG, no scripts, no network.
"""
