#!/usr/bin/env python3
"""The README's two commands and .ci/run agree: the quickstart's main job is the first ```sh block
under the heading that names the quickstart and starts with tools/setup.sh, and .ci/run runs
exactly the README's test command.

    readme_commands.py <source dir>
"""
import os
import re
import shlex
import sys


def blocks_under(text, heading_pattern):
    """The ```sh blocks of the first section whose heading matches."""
    sections = re.split(r"^(#+ .*)$", text, flags=re.M)
    for i in range(1, len(sections), 2):
        if re.search(heading_pattern, sections[i], re.I):
            return re.findall(r"^```sh\n(.*?)^```", sections[i + 1], re.S | re.M)
    return []


def main(root):
    failed = []
    readme = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    main_job = blocks_under(readme, r"^#+ .*quickstart")
    test = blocks_under(readme, r"^#+ Test\b")
    if not main_job or not main_job[0].startswith("tools/setup.sh "):
        failed.append("the first sh block under the quickstart heading must start with "
                      "tools/setup.sh (it sets the machine up)")
    if len(test) != 1 or len(test[0].strip().splitlines()) != 1:
        failed.append("the Test section must have one sh block of one line")
    else:
        command = test[0].strip()
        ci = open(os.path.join(root, ".ci", "run"), encoding="utf-8").read()
        runs = [shlex.split(line)[1:] for line in ci.splitlines() if line.startswith("exec ")]
        if runs != [shlex.split(command)]:
            failed.append(".ci/run must `exec %s` (the README's test command); it runs %s"
                          % (command, runs))
        if not command.startswith("tools/setup.sh "):
            failed.append("the test command must start with tools/setup.sh")
    for f in failed:
        print("FAIL " + f)
    if not failed:
        print("ok   README main job: %s" % main_job[0].splitlines()[0])
        print("ok   README test command = .ci/run: %s" % test[0].strip())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
