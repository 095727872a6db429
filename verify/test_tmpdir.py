#!/usr/bin/env python3
"""ctest's temporary folder: every test runs with TMPDIR=BUILD/test-tmp (CMakeLists.txt), which the
first test makes and the last checks.

    test_tmpdir.py make LINK    LINK -> a fresh, empty folder
    test_tmpdir.py check LINK   fails, naming them, if the tests left anything there; removes it

The folder is in /dev/shm (memory) where that is writable and has room for the largest exchange
a candidate audit makes (attention.score-cells sends n = 4096 weights: 64 MiB, two audits at
once), else beside LINK in the build folder. Creating and removing the ~10^5 small files of
ctest's candidate audits is most of their system time on a disk (a candidate audit in /tmp on
ext4: 20-25 s; in /dev/shm: 13 s); no verdict depends on where the files live.
The check is the whole suite's promise to clean up after itself: a test's scratch folder, a
candidate's exchange folder or a browser's profile left behind shows here (by its name, which
says whose it is), not, run after run, as litter in the user's /tmp.
"""
import os
import shutil
import sys
import tempfile

ROOM = 1 << 30  # bytes /dev/shm must have free


def memory_folder():
    try:
        if os.access("/dev/shm", os.W_OK | os.X_OK) and shutil.disk_usage("/dev/shm").free >= ROOM:
            return "/dev/shm"
    except OSError:
        pass
    return None


def remove(link):
    """LINK and the folder it names (a run stopped part way leaves both)."""
    if os.path.islink(link):
        target = os.path.realpath(link)
        os.unlink(link)
        shutil.rmtree(target, ignore_errors=True)
    elif os.path.isdir(link):
        shutil.rmtree(link, ignore_errors=True)


def make(link):
    remove(link)
    base = memory_folder() or os.path.dirname(os.path.abspath(link))
    folder = tempfile.mkdtemp(prefix="vl-ctest-tmp-", dir=base)
    os.symlink(folder, link)
    print(f"TMPDIR {link} -> {folder}")
    return 0


def check(link):
    if not os.path.isdir(link):
        print(f"{link}: not there: the test that makes it (ctest_tmpdir_make) did not run", file=sys.stderr)
        return 1
    left = sorted(os.listdir(link))
    remove(link)
    if left:
        print(f"the tests left {len(left)} thing(s) in their TMPDIR ({link}): {', '.join(left)}", file=sys.stderr)
        return 1
    print(f"TMPDIR {link}: empty")
    return 0


def main(argv):
    if len(argv) != 3 or argv[1] not in ("make", "check"):
        print(__doc__, file=sys.stderr)
        return 2
    return make(argv[2]) if argv[1] == "make" else check(argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
