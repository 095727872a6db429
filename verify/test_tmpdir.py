#!/usr/bin/env python3
"""ctest's temporary folder: every test runs with TMPDIR=BUILD/test-tmp (CMakeLists.txt), which the
first test makes and the last checks.

    test_tmpdir.py make LINK    LINK -> a fresh, empty folder
    test_tmpdir.py check LINK   fails, naming them, if the tests left anything there; removes it

The folder (vl-ctest-tmp-*) is in /dev/shm (memory) where that is writable and has 1 GiB free, room
for more than a dozen of the largest exchange a candidate audit makes at once (attention.score-cells
sends n = 4096 weights: ~70 MiB), else beside LINK in the build folder. Creating and removing the
~10^5 small files of ctest's candidate audits is most of their system time on a disk (the NumPy
adapter's audit in /tmp on ext4: 20-25 s; in /dev/shm: 13 s); no verdict depends on where the
files live.
The check is the whole suite's promise to clean up after itself: a test's scratch folder, a
candidate's exchange folder or a browser's profile left behind shows here (by its name, which
says whose it is), not, run after run, as litter in the user's /tmp.
One ctest run at a time per build folder: a second run's `make` replaces the first's folder.
Only what `make` made is ever removed: a vl-ctest-tmp-* folder in /dev/shm or beside LINK, and
LINK itself when it is a link; anything else at LINK is refused, named, and left as it is.
"""
import os
import shutil
import stat
import sys
import tempfile

ROOM = 1 << 30  # bytes /dev/shm must have free
PREFIX = "vl-ctest-tmp-"


def memory_folder():
    try:
        if os.access("/dev/shm", os.W_OK | os.X_OK) and shutil.disk_usage("/dev/shm").free >= ROOM:
            return "/dev/shm"
    except OSError:
        pass
    return None


def ours(link, target):
    """Whether TARGET is a folder `make` would have made for LINK."""
    parent, name = os.path.split(target)
    return name.startswith(PREFIX) and parent in ("/dev/shm", os.path.dirname(os.path.abspath(link)))


def rmtree(folder):
    """FOLDER and everything in it; what a test made read-only is made writable first. Raises
    OSError when something stays."""
    def writable_then_again(func, path, _):
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, stat.S_IRWXU)
        func(path)
    shutil.rmtree(folder, onerror=writable_then_again)


def remove(link):
    """LINK and the folder it names (a run stopped part way leaves both); None, or why not."""
    if not os.path.lexists(link):
        return None
    if not os.path.islink(link):
        return f"{link} is not a link made by this script: remove it yourself"
    target = os.path.realpath(link)
    if not ours(link, target):
        return f"{link} points to {target}, not a folder this script made: remove the link yourself"
    if os.path.isdir(target):
        try:
            rmtree(target)
        except OSError as e:
            return f"cannot remove {target}: {e}"
    os.unlink(link)
    return None


def make(link):
    why = remove(link)
    if why:
        print(why, file=sys.stderr)
        return 1
    base = memory_folder() or os.path.dirname(os.path.abspath(link))
    folder = tempfile.mkdtemp(prefix=PREFIX, dir=base)
    os.symlink(folder, link)
    print(f"TMPDIR {link} -> {folder}")
    return 0


def check(link):
    if not os.path.lexists(link):
        print(f"{link}: not there: the test that makes it (ctest_tmpdir_make) did not run", file=sys.stderr)
        return 1
    if not os.path.isdir(link):
        print(f"{link}: it names no folder (a test removed its TMPDIR?)", file=sys.stderr)
        why = remove(link)
        if why:
            print(why, file=sys.stderr)
        return 1
    left = sorted(os.listdir(link))
    why = remove(link)
    if why:
        print(why, file=sys.stderr)
    if left:
        print(f"the tests left {len(left)} thing(s) in their TMPDIR ({link}): {', '.join(left)}", file=sys.stderr)
    if left or why:
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
